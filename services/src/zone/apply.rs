//! Applying one world message to the zone: players' moves, spawns and hand-overs (through
//! `travel`), provider updates, social events (needs, mood, temper, reactive goals, witnesses),
//! schedule overrides, a player's `say` (to perception), failed actions, weather, and time
//! (ticks, through `tick`). A message naming what the zone does not hold is refused with the
//! field at fault. Turning the core's events into messages is `emit`'s.

use geppetto_core::affect::AffectEvent;
use geppetto_core::life::schedule::{ScheduleBlock, ScheduleOverride};
use geppetto_core::life::simulator::SimEvent;
use geppetto_core::vocabulary::{Symbol, Vocabulary};
use geppetto_llm::LlmRequest;

use super::game::Refused;
use super::{Refusal, TickInputs, Zone, ZoneConfig, ZoneOutput, room_key, unknown_npc};
use crate::bus::StreamKind;
use crate::bus::envelope::{NpcEvent, WorldEvent, WorldMessage};
use crate::content::world_file::SpawnRecord;

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
                out.refused.push(Refusal {
                    id: id.clone(),
                    kind: message.event.kind(),
                    path: "id".to_owned(),
                    reason: format!("duplicate: an event with id `{id}` was applied already"),
                    position: 0,
                });
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

    /// Applies one world message (see [`Zone::apply`]).
    fn apply_once(
        &mut self,
        message: &WorldMessage,
        inputs: &TickInputs<'_>,
        out: &mut ZoneOutput,
    ) {
        let refuse = |out: &mut ZoneOutput, path: &str, reason: String| {
            out.refused.push(Refusal {
                id: message.header.id.clone(),
                kind: message.event.kind(),
                path: path.to_owned(),
                reason,
                position: 0,
            });
        };
        let refused = |out: &mut ZoneOutput, result: Result<(), Refused>| {
            if let Err((path, reason)) = result {
                refuse(out, path, reason);
            }
        };
        match &message.event {
            WorldEvent::TimeAdvanced => {
                let target = message.header.game_time;
                if target < self.game_time {
                    let now = self.game_time;
                    refuse(
                        out,
                        "game_time",
                        format!("game time went backwards: the zone is at {now}, not {target}"),
                    );
                    return;
                }
                let bound = self.config.tick.max_time_jump_ticks;
                if target - self.game_time > bound {
                    let now = self.game_time;
                    refuse(
                        out,
                        "game_time",
                        format!(
                            "a jump of {} ticks from {now} is beyond tick.max_time_jump_ticks ({bound})",
                            target - now
                        ),
                    );
                    return;
                }
                let max = self.config.tick.max_catch_up_ticks_per_event.max(1);
                if target - self.game_time > max {
                    self.catch_up_all(target - max, out);
                }
                while self.game_time < target {
                    self.game_time += 1;
                    self.run_tick(inputs, out);
                }
            }
            WorldEvent::PlayerEntered { player, room } => match self.rooms.room(room) {
                Some(room) => {
                    self.presence.player_entered(&self.rooms, player, room);
                    self.players_moved();
                }
                None => refuse(out, "room", format!("unknown room `{room}`")),
            },
            WorldEvent::PlayerLeft { player } => {
                self.presence.player_left(&self.rooms, player);
                self.players_moved();
            }
            WorldEvent::NpcSpawned { npc } => match self.spawn_from_record("npc", npc) {
                Ok(index) => {
                    let event = NpcEvent::NpcSpawned {
                        npc: self.agents[index].agent.id.clone(),
                        room: room_key(&self.room_names, self.meta[index].room).to_owned(),
                    };
                    self.publish(index, StreamKind::NpcEvents, &event, out);
                }
                Err(error) => refuse(out, "npc", error.to_string()),
            },
            WorldEvent::NpcDespawned { npc } => {
                if self.npc_index(npc).is_none() {
                    refuse(out, "npc", unknown_npc(&self.name, npc));
                }
                self.despawn(npc, "despawned", out);
            }
            WorldEvent::NpcTransfer { npc, to_zone, room } => {
                if let Err((path, reason)) = self.hand_over(npc, to_zone, room, out) {
                    refuse(out, path, reason);
                }
            }
            WorldEvent::NpcArrived(arrival) => {
                let id = match SpawnRecord::parse(&arrival.npc) {
                    Ok(record) => record.id().to_owned(),
                    Err((path, reason)) => {
                        refuse(
                            out,
                            &crate::content::world_file::field_path("npc", &path),
                            reason,
                        );
                        return;
                    }
                };
                if self.npc_index(&id).is_some() {
                    refuse(
                        out,
                        "npc",
                        format!("an NPC `{id}` already lives in zone `{}`", self.name),
                    );
                    return;
                }
                match self.spawn_from_record("npc", &arrival.npc) {
                    Ok(index) => {
                        self.settle_traveller(index, arrival, out);
                    }
                    Err(error) => refuse(out, "npc", error.to_string()),
                }
            }
            WorldEvent::ProviderUpdated {
                provider,
                state,
                capacity,
            } => {
                let Some(p) = self.world.providers.iter_mut().find(|p| &p.id == provider) else {
                    refuse(out, "provider", format!("unknown provider `{provider}`"));
                    return;
                };
                if let Some(state) = state {
                    match event_symbol(
                        &mut self.vocabulary,
                        self.content_names,
                        &self.config,
                        state,
                    ) {
                        Ok(symbol) => p.state = Some(symbol),
                        Err(reason) => {
                            refuse(out, "state", reason);
                            return;
                        }
                    }
                }
                if let Some(capacity) = capacity {
                    p.capacity = *capacity;
                }
            }
            WorldEvent::SocialEvent {
                kind,
                source,
                target,
                deltas,
                mood,
                about: _,
            } => {
                if self.npc_index(target).is_none() {
                    refuse(out, "target", unknown_npc(&self.name, target));
                }
                let unknown: Vec<&str> = deltas
                    .keys()
                    .map(String::as_str)
                    .filter(|name| self.vocabulary.lookup(name).is_none())
                    .collect();
                if !unknown.is_empty() {
                    let shown: Vec<&str> = unknown.iter().take(5).copied().collect();
                    refuse(
                        out,
                        "deltas",
                        format!(
                            "{} name(s) no consideration of this zone has: {}",
                            unknown.len(),
                            shown.join(", ")
                        ),
                    );
                    return;
                }
                if let Some(index) = self.npc_index(target) {
                    self.meta[index].game.felt = Some(kind.clone());
                    let now_hours = self.now_hours();
                    let npc = &mut self.agents[index];
                    for (name, delta) in deltas {
                        let Some(symbol) = self.vocabulary.lookup(name) else {
                            continue;
                        };
                        match &mut npc.wellbeing {
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
                                    c.value = (c.value + delta).clamp(c.min, c.max.max(c.min));
                                }
                            }
                        }
                    }
                    if let Some((config, wellbeing)) = &mut npc.wellbeing {
                        let felt = mood.unwrap_or_else(|| config.event_mood(kind));
                        if felt != 0.0 {
                            config.remember(wellbeing, felt, now_hours);
                        }
                    }
                    self.publish(
                        index,
                        StreamKind::NpcEvents,
                        &NpcEvent::SocialInteraction {
                            npc: target.clone(),
                            kind: kind.clone(),
                            source: source.clone(),
                        },
                        out,
                    );
                    // An NPC with a temper feels it too: the event joins its affect layer's
                    // queue under the same kind (its persona's channels decide what it moves).
                    if let Some(affect) = &mut self.agents[index].affect {
                        affect
                            .pending
                            .push(AffectEvent::new(kind.clone()).from_source(source.clone()));
                    }
                    // …and an archetype NPC may take on a reactive goal about it.
                    if let Some(book) = &mut self.agents[index].goals {
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
            }
            WorldEvent::ScheduleOverride {
                npc,
                activity,
                location,
                tags,
                hours,
            } => {
                let Some(index) = self.npc_index(npc) else {
                    refuse(out, "npc", unknown_npc(&self.name, npc));
                    return;
                };
                let now_hours = self.now_hours();
                let named = self.event_name(activity).and_then(|activity| {
                    let tags: Result<Vec<Symbol>, String> =
                        tags.iter().map(|tag| self.event_name(tag)).collect();
                    Ok((activity, tags?))
                });
                let (activity, tags) = match named {
                    Ok(named) => named,
                    Err(reason) => {
                        refuse(out, "activity", reason);
                        return;
                    }
                };
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
                match &mut self.agents[index].schedule {
                    Some(layer) => layer.overrides.push(ScheduleOverride {
                        block,
                        expires_at_hours: now_hours + hours,
                    }),
                    None => refuse(out, "npc", format!("NPC `{npc}` has no schedule")),
                }
            }
            WorldEvent::Say {
                speaker,
                room,
                text,
                addressee,
            } => {
                if inputs.replay.is_none() {
                    let request = self.perception_request(message, speaker, room, text, addressee);
                    out.llm.push(LlmRequest::Perception(request));
                }
            }
            WorldEvent::ActionCompleted {
                npc,
                intent,
                outcome,
                resources,
            } => {
                let result = self.reported(
                    npc,
                    intent.as_deref(),
                    Ok((outcome.clone(), resources)),
                    out,
                );
                refused(out, result);
            }
            WorldEvent::ResourcesChanged { npc, changes, .. } => {
                let result = self
                    .npc_index(npc)
                    .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))
                    .map(|index| self.change_resources(index, changes));
                refused(out, result);
            }
            WorldEvent::ActionFailed {
                npc,
                intent,
                reason,
            } => {
                let result = self.reported(npc, intent.as_deref(), Err(reason.clone()), out);
                refused(out, result);
            }
            WorldEvent::NpcMoved { npc, room } => {
                let result = self.npc_moved(npc, room, out);
                refused(out, result);
            }
            WorldEvent::Order {
                npc,
                provider,
                action,
                by,
            } => {
                let id = &message.header.id;
                let result = self.order(id, npc, provider, action, by, out);
                refused(out, result);
            }
            WorldEvent::OrderCancelled { npc, order } => {
                let result = self.order_cancelled(npc, order, out);
                refused(out, result);
            }
            WorldEvent::NpcEngaged { npc, reason } => {
                let result = self.engage(npc, reason, out);
                refused(out, result);
            }
            WorldEvent::NpcReleased { npc } => {
                let result = self.release(npc, out);
                refused(out, result);
            }
            WorldEvent::GoalAssigned { npc, goal } => {
                let result = self.assign_goal(npc, goal, out);
                refused(out, result);
            }
            WorldEvent::ContextSet {
                name,
                tag_multipliers,
                until,
            } => {
                let result = self.set_context(name, tag_multipliers, *until);
                refused(out, result);
            }
            WorldEvent::ContextCleared { name } => {
                let result = self.clear_context(name);
                refused(out, result);
            }
            WorldEvent::NpcReinstated { npc } => {
                let result = self.reinstate(npc, out);
                refused(out, result);
            }
            WorldEvent::BreakerReset { archetype } => {
                let result = self.reset_breaker(&message.header.id, archetype, out);
                refused(out, result);
            }
            WorldEvent::WeatherChanged { weather } => self.set_weather(weather),
            WorldEvent::ZoneSettings { completion } => self.set_completion(*completion),
            // Recorded by this zone when it decided; a replay applies it by tick.
            WorldEvent::GovernorDecision(_) => {}
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
                    action: running.action.id,
                }],
            );
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
