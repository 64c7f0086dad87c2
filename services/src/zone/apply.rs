//! Applying one world message to the zone, once: the check for an envelope id applied lately,
//! then the event's family applied by a file of its own under `apply/` — time (ticks, through
//! `tick`) in `time`, players and NPCs coming and going (through `travel`) in `roster`, the
//! world's providers, weather, contexts and settings in `world`, what befalls one NPC (social
//! events, schedule overrides, a player's `say` to perception) in `npc`, and the game's reports
//! (through `game`) in `reports`, a consumer's claim on a story signal in `story`, what the
//! game does for and about quests (facts, a goal withdrawn, a quest's outcome) in `quests`. A
//! message naming what the zone does not hold is refused with
//! the field at fault. Turning the core's events into messages is `emit`'s.

use geppetto_core::life::simulator::SimEvent;
use geppetto_core::vocabulary::{Symbol, Vocabulary};

use super::game::Refused;
use super::{Refusal, TickInputs, Zone, ZoneConfig, ZoneOutput};
use crate::bus::envelope::{WorldEvent, WorldMessage};

mod npc;
mod quests;
mod reports;
mod roster;
mod story;
mod time;
mod world;

impl Zone {
    /// Applies one world message, once: one naming what this zone does not hold is refused
    /// into `out.refused`, and so is one whose envelope id the zone applied lately (a game's
    /// retried send, a duplicated delivery) — with reason `duplicate`, or silently when
    /// geppetto wrote it (a hand-over replayed by the other zone's recovery). The zone's own
    /// records (`zone_settings`, `governor_decision`) state what holds and apply alike twice.
    pub fn apply(&mut self, message: &WorldMessage, inputs: &TickInputs<'_>, out: &mut ZoneOutput) {
        let once = !matches!(
            message.event,
            WorldEvent::ZoneSettings { .. } | WorldEvent::GovernorDecision(_)
        );
        let id = &message.header.id;
        if once && self.recent_ids.contains(id) {
            if !message.header.is_from_geppetto() {
                let reason = format!("duplicate: an event with id `{id}` was applied already");
                out.refuse(message, "id", reason);
            }
            out.duplicates += 1;
            return;
        }
        let refused_before = out.refused.len();
        self.apply_once(message, inputs, out);
        if out.refused.len() > refused_before {
            return;
        }
        out.applied += 1;
        if once {
            let tick = &self.config.tick;
            let (capacity, max_age) = (tick.event_ids_remembered, tick.event_ids_max_age_ticks);
            self.recent_ids
                .remember(id, self.game_time, capacity, max_age);
        }
    }

    /// Applies one world message (see [`Zone::apply`]): each family of events is applied by
    /// its own file under `apply/`.
    fn apply_once(
        &mut self,
        message: &WorldMessage,
        inputs: &TickInputs<'_>,
        out: &mut ZoneOutput,
    ) {
        use WorldEvent as E;
        match &message.event {
            E::TimeAdvanced => self.advance_time(message, inputs, out),
            E::PlayerEntered { .. }
            | E::PlayerLeft { .. }
            | E::NpcSpawned { .. }
            | E::NpcDespawned { .. }
            | E::NpcTransfer { .. }
            | E::NpcArrived(_) => self.apply_roster(message, out),
            E::ProviderUpdated { .. }
            | E::WeatherChanged { .. }
            | E::ContextSet { .. }
            | E::ContextCleared { .. }
            | E::ZoneSettings { .. }
            | E::GovernorDecision(_) => self.apply_world_change(message, out),
            E::SocialEvent { .. } | E::ScheduleOverride { .. } | E::Say { .. } => {
                self.apply_to_npc(message, inputs, out);
            }
            E::ActionCompleted { .. }
            | E::ActionFailed { .. }
            | E::ResourcesChanged { .. }
            | E::NpcMoved { .. }
            | E::Order { .. }
            | E::OrderCancelled { .. }
            | E::NpcEngaged { .. }
            | E::NpcReleased { .. }
            | E::GoalAssigned { .. }
            | E::NpcReinstated { .. }
            | E::BreakerReset { .. } => self.apply_report(message, out),
            E::StorySignalTaken { .. } | E::StorySignalResolved { .. } => {
                self.apply_story(message, out);
            }
            E::FactsGranted { .. }
            | E::FactsRevoked { .. }
            | E::GoalWithdrawn { .. }
            | E::QuestOutcome { .. } => self.apply_quest(message, out),
        }
    }

    /// The symbol of `name`, a name a world event brings (see [`event_symbol`]).
    pub(super) fn event_name(&mut self, name: &str) -> Result<Symbol, String> {
        event_symbol(&mut self.vocabulary, self.content_names, &self.config, name)
    }

    /// Ends NPC `index`'s running action without completing it, freeing its slot.
    pub(super) fn release_running(&mut self, index: usize) {
        if let Some(running) = self.agents[index].running.take() {
            geppetto_core::apply_occupancy(
                &mut self.world,
                &[SimEvent::ActionCompleted {
                    provider: running.provider,
                    action: running.action.id.clone(),
                }],
            );
        }
    }
}

impl ZoneOutput {
    /// Refuses `message`: the field at fault and why.
    fn refuse(&mut self, message: &WorldMessage, path: &str, reason: String) {
        self.refused.push(Refusal {
            id: message.header.id.clone(),
            kind: message.event.kind(),
            path: path.to_owned(),
            reason,
            position: 0,
        });
    }

    /// Refuses `message` when `result` says why.
    fn refuse_on(&mut self, message: &WorldMessage, result: Result<(), Refused>) {
        if let Err((path, reason)) = result {
            self.refuse(message, path, reason);
        }
    }
}

/// The symbol of `name`, brought by a world event: the content's own, or a new one while world
/// events have added fewer than `tick.max_event_names` names to the zone's `content_names`.
pub(super) fn event_symbol(
    vocabulary: &mut Vocabulary,
    content_names: usize,
    config: &ZoneConfig,
    name: &str,
) -> Result<Symbol, String> {
    if let Some(symbol) = vocabulary.lookup(name) {
        return Ok(symbol);
    }
    let limit = config.tick.max_event_names;
    if vocabulary.len().saturating_sub(content_names) >= limit {
        return Err(format!(
            "`{name}` would be a new name, and world events have added the most a zone takes \
             (tick.max_event_names = {limit})"
        ));
    }
    Ok(vocabulary.intern(name))
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod bounds {
    //! Accepted input never grows or stalls the zone: names, time and transfers.

    use super::*;
    use crate::zone::testing::*;
    use std::collections::BTreeMap;

    #[test]
    fn time_that_goes_backwards_or_jumps_too_far_is_refused_and_the_clock_goes_on() {
        let mut zone = village();
        advance(&mut zone, 5);
        let now = zone.game_time;
        let back = apply_at(&mut zone, now - 3, WorldEvent::TimeAdvanced);
        assert!(
            back.refused[0].reason.contains("backwards"),
            "{:?}",
            back.refused
        );
        let far = apply_at(&mut zone, now + 1_000_000_000_000, WorldEvent::TimeAdvanced);
        assert!(
            far.refused[0].reason.contains("max_time_jump_ticks"),
            "{:?}",
            far.refused
        );
        assert_eq!(zone.game_time, now, "neither was applied");
        advance(&mut zone, 2);
        assert_eq!(
            zone.game_time,
            now + 2,
            "the game's clock still drives the zone"
        );
    }

    #[test]
    fn made_up_names_are_refused_and_the_vocabulary_stays_bounded() {
        let mut zone = village();
        let before = zone.vocabulary.len();
        let deltas: BTreeMap<String, f64> = (0..1000).map(|i| (format!("NEED_{i}"), 1.0)).collect();
        let refused = apply_as(
            &mut zone,
            "s",
            WorldEvent::SocialEvent {
                kind: "gift".into(),
                source: "ann".into(),
                target: "piet".into(),
                deltas,
                mood: None,
                about: None,
            },
        );
        assert!(
            refused.refused[0]
                .reason
                .starts_with("1000 name(s) no consideration"),
            "{:?}",
            refused.refused
        );
        assert_eq!(zone.vocabulary.len(), before);
        zone.config.tick.max_event_names = 3;
        for i in 0..10 {
            apply_as(
                &mut zone,
                &format!("p{i}"),
                WorldEvent::ProviderUpdated {
                    provider: "well".into(),
                    state: Some(format!("state_{i}")),
                    capacity: None,
                },
            );
        }
        assert_eq!(zone.vocabulary.len(), before + 3, "at most three new names");
        let refused = apply_as(
            &mut zone,
            "p99",
            WorldEvent::ProviderUpdated {
                provider: "well".into(),
                state: Some("state_99".into()),
                capacity: None,
            },
        );
        assert!(refused.refused[0].reason.contains("max_event_names"));
        let known = apply_as(
            &mut zone,
            "p",
            WorldEvent::ProviderUpdated {
                provider: "well".into(),
                state: Some("state_1".into()),
                capacity: None,
            },
        );
        assert!(known.refused.is_empty(), "a name it knows is still taken");
    }

    #[test]
    fn an_npc_bound_for_a_zone_that_does_not_exist_stays() {
        let mut zone = village();
        zone.config.zones = Some(["village".to_owned(), "town".to_owned()].into());
        let refused = apply_as(
            &mut zone,
            "x",
            WorldEvent::NpcTransfer {
                npc: "piet".into(),
                to_zone: "atlantis".into(),
                room: "gate".into(),
            },
        );
        assert_eq!(refused.refused[0].path, "to_zone");
        assert!(refused.handovers.is_empty());
        assert!(zone.npc_index("piet").is_some(), "piet stays");
        let gone = apply_as(
            &mut zone,
            "y",
            WorldEvent::NpcTransfer {
                npc: "piet".into(),
                to_zone: "town".into(),
                room: "gate".into(),
            },
        );
        assert!(gone.refused.is_empty(), "{:?}", gone.refused);
        assert_eq!(gone.handovers.len(), 1);
    }
}
