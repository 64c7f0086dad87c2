//! What befalls one NPC: a social event (its needs and mood, its temper, a reactive goal, and
//! the witnesses in its room), a schedule override, and a player's `say`: answered by the NPC
//! addressed (see `zone::reply`) and handed to perception (live only: a replay finds what was
//! perceived in the log).

use std::collections::BTreeMap;

use geppetto_core::affect::AffectEvent;
use geppetto_core::life::schedule::{ScheduleBlock, ScheduleOverride};
use geppetto_core::life::simulator::SimEvent;
use geppetto_core::vocabulary::Symbol;
use geppetto_llm::LlmRequest;

use crate::bus::StreamKind;
use crate::bus::envelope::{NpcEvent, WorldEvent, WorldMessage};
use crate::zone::game::Refused;
use crate::zone::reply::Said;
use crate::zone::{TickInputs, Zone, ZoneOutput, unknown_npc};

impl Zone {
    /// Applies an event that befalls one NPC (`message`).
    pub(super) fn apply_to_npc(
        &mut self,
        message: &WorldMessage,
        inputs: &TickInputs<'_>,
        out: &mut ZoneOutput,
    ) {
        match &message.event {
            WorldEvent::SocialEvent {
                kind,
                source,
                target,
                deltas,
                mood,
                about: _,
            } => {
                if let Some(index) = self.social_target(message, target, deltas, out) {
                    self.meta[index].game.felt = Some(kind.as_str().into());
                    let now_hours = self.now_hours();
                    self.feel(index, kind, deltas, *mood, now_hours);
                    self.react_to_social(index, kind, source, now_hours, out);
                }
            }
            WorldEvent::ScheduleOverride {
                npc,
                activity,
                location,
                tags,
                hours,
            } => {
                let result = self.override_schedule(npc, activity, location, tags, *hours);
                out.refuse_on(message, result);
            }
            WorldEvent::Say {
                speaker,
                room,
                text,
                addressee,
            } => {
                let said = Said {
                    speaker,
                    room: room.as_deref(),
                    text,
                    addressee: addressee.as_deref(),
                };
                self.reply(message, &said, out);
                // A replay finds what was perceived in the log.
                if inputs.replay.is_none() {
                    let request = self.perception_request(message, speaker, room, text, addressee);
                    out.llm.push(LlmRequest::Perception(request));
                }
            }
            // Another family's event (see `Zone::apply_once`).
            _ => {}
        }
    }

    /// The NPC a social event (`message`) befalls, `target`, if the event is to be applied: a
    /// target the zone does not hold and names in `deltas` no consideration has are refused,
    /// each with its field.
    fn social_target(
        &self,
        message: &WorldMessage,
        target: &str,
        deltas: &BTreeMap<String, f64>,
        out: &mut ZoneOutput,
    ) -> Option<usize> {
        let index = self.npc_index(target);
        if index.is_none() {
            out.refuse(message, "target", unknown_npc(&self.name, target));
        }
        let unknown: Vec<&str> = deltas
            .keys()
            .map(String::as_str)
            .filter(|name| self.vocabulary.lookup(name).is_none())
            .collect();
        if !unknown.is_empty() {
            let shown: Vec<&str> = unknown.iter().take(5).copied().collect();
            let reason = format!(
                "{} name(s) no consideration of this zone has: {}",
                unknown.len(),
                shown.join(", ")
            );
            out.refuse(message, "deltas", reason);
            return None;
        }
        index
    }

    /// NPC `index`'s needs change by `deltas` (names the zone knows), damped when it has a
    /// wellbeing layer, which remembers how event `kind` felt (`mood`, else the kind's).
    pub(super) fn feel(
        &mut self,
        index: usize,
        kind: &str,
        deltas: &BTreeMap<String, f64>,
        mood: Option<f64>,
        now_hours: f64,
    ) {
        let npc = &mut self.agents[index];
        for (name, delta) in deltas {
            let Some(symbol) = self.vocabulary.lookup(name) else {
                continue;
            };
            match npc
                .layers
                .get_mut()
                .and_then(|layers| layers.wellbeing.as_deref_mut())
            {
                // An NPC with a wellbeing layer takes external changes damped
                // (`max_need_delta_per_tick`) and remembers how the event felt.
                Some((config, _)) => {
                    config.nudge(&mut npc.agent, symbol, *delta);
                }
                None => {
                    if let Some(c) = npc
                        .agent
                        .considerations
                        .iter_mut()
                        .find(|c| c.name == symbol)
                    {
                        c.value = (c.value + delta).clamp(c.min(), c.max().max(c.min()));
                    }
                }
            }
        }
        if let Some((config, wellbeing)) = npc
            .layers
            .get_mut()
            .and_then(|layers| layers.wellbeing.as_deref_mut())
        {
            let felt = mood.unwrap_or_else(|| config.event_mood(kind));
            if felt != 0.0 {
                config.remember(wellbeing, felt, now_hours);
            }
        }
    }

    /// NPC `index` reacts to social event `kind` by `source`: the event is told
    /// (`social_interaction`), its temper feels it, it may take on a reactive goal about it, and
    /// whoever else is in its room sees it first-hand.
    fn react_to_social(
        &mut self,
        index: usize,
        kind: &str,
        source: &str,
        now_hours: f64,
        out: &mut ZoneOutput,
    ) {
        let body = NpcEvent::SocialInteraction {
            npc: self.agents[index].agent.id.clone(),
            kind: kind.to_owned(),
            source: source.to_owned(),
        };
        self.publish(index, StreamKind::NpcEvents, &body, out);
        // An NPC with a temper feels it too: the event joins its affect layer's queue under
        // the same kind (its persona's channels decide what it moves).
        if let Some(affect) = self.agents[index]
            .layers
            .get_mut()
            .and_then(|layers| layers.affect.as_mut())
        {
            affect
                .pending
                .push(AffectEvent::new(kind.to_owned()).from_source(source.to_owned()));
        }
        // …and an archetype NPC may take on a reactive goal about it.
        if let Some(book) = self.agents[index]
            .layers
            .get_mut()
            .and_then(|layers| layers.goals.as_mut())
        {
            let created: Vec<SimEvent> = book
                .react(kind, source, now_hours)
                .into_iter()
                .map(|goal| SimEvent::GoalCreated { goal })
                .collect();
            self.emit(index, &created, out);
        }
        // Whoever is in the room sees a hostile act first-hand (and will talk).
        let room = self.meta[index].room;
        let by = self.npc_index(source);
        let mut witnesses = self.npcs_in(room).to_vec();
        witnesses.retain(|&i| Some(i) != by);
        let place = self.social_place(index);
        let seen = self.social.witness(
            &mut self.agents,
            &witnesses,
            source,
            kind,
            &place,
            now_hours,
        );
        self.publish_social(seen, out);
    }

    /// NPC `npc` does `activity` (with `tags`, at `location`) for the next `hours`, before its
    /// schedule.
    fn override_schedule(
        &mut self,
        npc: &str,
        activity: &str,
        location: &Option<String>,
        tags: &[String],
        hours: f64,
    ) -> Result<(), Refused> {
        let index = self
            .npc_index(npc)
            .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))?;
        let now_hours = self.now_hours();
        let named = self.event_name(activity).and_then(|activity| {
            let tags: Result<Vec<Symbol>, String> =
                tags.iter().map(|tag| self.event_name(tag)).collect();
            Ok((activity, tags?))
        });
        let (activity, tags) = named.map_err(|reason| ("activity", reason))?;
        let block = ScheduleBlock {
            start_hour: 0.0,
            end_hour: 24.0,
            activity,
            tags,
            location: location.clone(),
            priority: 0.0,
            conditions: Vec::new(),
            coarse_event: None,
            binding: false,
        };
        let Some(layer) = self.agents[index]
            .layers
            .get_mut()
            .and_then(|layers| layers.schedule.as_mut())
        else {
            return Err(("npc", format!("NPC `{npc}` has no schedule")));
        };
        layer.overrides.push(ScheduleOverride {
            block,
            expires_at_hours: now_hours + hours,
        });
        Ok(())
    }
}
