//! The game's reports (the `game` side of the contract): an intent carried out or failed,
//! resources changed, an NPC moved, a player's order and its cancellation, an NPC engaged and
//! released, a goal assigned (refused: `goal_refused` on `npc_events`, beside the dead
//! letter); and geppetto's own records of an NPC reinstated and an
//! archetype's breaker reset. Each is applied by `game`, which says why when it refuses one.

use crate::bus::StreamKind;
use crate::bus::envelope::{NpcEvent, WorldEvent, WorldMessage, header};
use crate::zone::{Zone, ZoneOutput, unknown_npc};

impl Zone {
    /// Tells the game its assignment (world message `id`) of goal `goal_id` to `npc` was
    /// refused, and why.
    fn goal_refused(
        &self,
        id: &str,
        npc: &str,
        goal_id: &str,
        reason: String,
        out: &mut ZoneOutput,
    ) {
        let h = header(
            format!("{}:goal_refused:{id}", self.name),
            &self.name,
            self.game_time,
        );
        let refused = NpcEvent::GoalRefused {
            npc: npc.to_owned(),
            goal_id: goal_id.to_owned(),
            reason,
        };
        out.push(StreamKind::NpcEvents, &h, &refused);
    }

    /// Applies one of the game's reports (`message`).
    pub(super) fn apply_report(&mut self, message: &WorldMessage, out: &mut ZoneOutput) {
        let id = &message.header.id;
        let result = match &message.event {
            WorldEvent::ActionCompleted {
                npc,
                intent,
                outcome,
                resources,
            } => {
                let result = Ok((outcome.clone(), resources));
                self.reported(npc, intent.as_deref(), result, out)
            }
            WorldEvent::ActionFailed {
                npc,
                intent,
                reason,
            } => self.reported(npc, intent.as_deref(), Err(reason.clone()), out),
            WorldEvent::ResourcesChanged { npc, changes, .. } => self
                .npc_index(npc)
                .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))
                .map(|index| self.change_resources(index, changes)),
            WorldEvent::NpcMoved { npc, room } => self.npc_moved(npc, room, out),
            WorldEvent::Order {
                npc,
                provider,
                action,
                by,
            } => self.order(id, npc, provider, action, by, out),
            WorldEvent::OrderCancelled { npc, order } => self.order_cancelled(npc, order, out),
            WorldEvent::NpcEngaged { npc, reason } => self.engage(npc, reason, out),
            WorldEvent::NpcReleased { npc } => self.release(npc, out),
            WorldEvent::GoalAssigned { npc, goal } => {
                let result = self.assign_goal(npc, goal, out);
                if let Err((path, reason)) = &result {
                    self.goal_refused(id, npc, &goal.id, format!("{path}: {reason}"), out);
                }
                result
            }
            WorldEvent::NpcReinstated { npc } => self.reinstate(npc, out),
            WorldEvent::BreakerReset { archetype } => self.reset_breaker(id, archetype, out),
            // Another family's (see `Zone::apply_once`).
            _ => Ok(()),
        };
        out.refuse_on(message, result);
    }
}
