//! Applying one world message to the zone: players' moves, spawns and hand-overs (through
//! `travel`), provider updates, social events (needs, mood, temper, reactive goals, witnesses),
//! schedule overrides, a player's `say` (to perception), failed actions, weather, and time
//! (ticks, through `tick`). A message naming what the zone does not hold is refused with the
//! field at fault. Turning the core's events into messages is `emit`'s.

use geppetto_core::affect::AffectEvent;
use geppetto_core::life::schedule::{ScheduleBlock, ScheduleOverride};
use geppetto_core::life::simulator::SimEvent;
use geppetto_llm::LlmRequest;

use super::game::Refused;
use super::{Refusal, TickInputs, Zone, ZoneOutput, room_key, unknown_npc};
use crate::bus::StreamKind;
use crate::bus::envelope::{NpcEvent, WorldEvent, WorldMessage};
use crate::content::world_file::SpawnRecord;

impl Zone {
    /// Applies one world message; one naming what this zone does not hold is refused into
    /// `out.refused`.
    pub fn apply(&mut self, message: &WorldMessage, inputs: &TickInputs<'_>, out: &mut ZoneOutput) {
        let refuse = |out: &mut ZoneOutput, path: &str, reason: String| {
            out.refused.push(Refusal {
                id: message.header.id.clone(),
                kind: message.event.kind(),
                path: path.to_owned(),
                reason,
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
                if target <= self.game_time {
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
                // A zone recovering from its log hands its travellers over again: the first
                // arrival stands.
                if self.arrivals.contains(&message.header.id) {
                    return;
                }
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
                        self.arrivals.push_back(message.header.id.clone());
                        while self.arrivals.len() > self.config.tick.arrivals_remembered {
                            self.arrivals.pop_front();
                        }
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
                    p.state = Some(self.vocabulary.intern(state));
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
                if let Some(index) = self.npc_index(target) {
                    self.meta[index].game.felt = Some(kind.clone());
                    let now_hours = self.now_hours();
                    let npc = &mut self.agents[index];
                    for (name, delta) in deltas {
                        let symbol = self.vocabulary.intern(name);
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
                    let mut witnesses = self.npcs_in(room).to_vec();
                    witnesses.retain(|&i| self.agents[i].agent.id != *source);
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
                let block = ScheduleBlock {
                    start_hour: 0.0,
                    end_hour: 24.0,
                    activity: self.vocabulary.intern(activity),
                    tags: tags.iter().map(|t| self.vocabulary.intern(t)).collect(),
                    location: location.clone(),
                    priority: 0.0,
                    conditions: Vec::new(),
                    coarse_event: None,
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
            } => {
                let result = self.reported(npc, intent.as_deref(), Ok(outcome.clone()), out);
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
            } => self.set_context(name, tag_multipliers, *until),
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
            WorldEvent::ZoneSettings { completion } => self.completion = *completion,
            // Recorded by this zone when it decided; a replay applies it by tick.
            WorldEvent::GovernorDecision(_) => {}
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::envelope::header;
    use crate::zone::testing::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_social_event_stirs_the_targets_temper() {
        let anger_after = |insulted: bool| {
            let mut zone = village();
            enter(&mut zone, "lane");
            if insulted {
                let message = WorldMessage {
                    header: header("s", "village", zone.game_time),
                    event: WorldEvent::SocialEvent {
                        kind: "insult".into(),
                        source: "stranger".into(),
                        target: "roderick".into(),
                        deltas: BTreeMap::new(),
                        mood: None,
                        about: None,
                    },
                };
                zone.apply(&message, &live(), &mut ZoneOutput::default());
            }
            advance(&mut zone, 2);
            let index = zone.npc_index("roderick").expect("roderick");
            let affect = zone.agents[index]
                .affect
                .as_ref()
                .expect("a guard has a temper");
            let anger = affect.model.state_index("anger").expect("anger");
            affect.state.values[anger]
        };
        let calm = anger_after(false);
        let insulted = anger_after(true);
        assert!(
            insulted > calm,
            "anger {insulted} after an insult, {calm} without"
        );
    }

    #[test]
    fn a_theft_gives_a_trader_a_reactive_goal_that_sends_them_to_the_watch() {
        let mut zone = village();
        enter(&mut zone, "market");
        advance(&mut zone, 60);
        let theft = |zone: &mut Zone| {
            let message = WorldMessage {
                header: header("s", "village", zone.game_time),
                event: WorldEvent::SocialEvent {
                    kind: "theft".into(),
                    source: "vex".into(),
                    target: "piet".into(),
                    deltas: BTreeMap::new(),
                    mood: None,
                    about: None,
                },
            };
            let mut out = ZoneOutput::default();
            zone.apply(&message, &live(), &mut out);
            out.messages
        };
        let first = theft(&mut zone);
        assert!(
            first
                .iter()
                .any(|(_, m)| m.contains("\"type\":\"goal_created\"")
                    && m.contains("\"description\":\"report the theft by vex\"")),
            "{first:?}"
        );
        let piet = zone.npc_index("piet").expect("piet");
        let goals = |zone: &Zone| {
            zone.agents[piet]
                .goals
                .as_ref()
                .expect("an archetype NPC has goals")
                .goals
                .iter()
                .filter(|g| g.category == geppetto_core::life::goals::GoalCategory::Reactive)
                .map(|g| (g.description.clone(), g.target.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            goals(&zone),
            vec![("report the theft by vex".to_owned(), Some("vex".to_owned()))]
        );
        let brain = crate::zone::brain::Brain::of(&zone, "piet", 3).expect("piet");
        let brain = serde_json::to_value(&brain).expect("json");
        let shown = brain["goals"].as_array().expect("goals");
        let goal = shown
            .iter()
            .find(|g| g["description"] == "report the theft by vex")
            .expect("the reactive goal is shown");
        assert_eq!(goal["category"], "reactive");
        assert_eq!(
            goal["predicate"],
            serde_json::json!({"predicate_type": "has_fact", "fact": "theft_reported"}),
            "goals are shown as records: {goal}"
        );
        let again = theft(&mut zone);
        assert!(!again.iter().any(|(_, m)| m.contains("goal_created")));
        assert_eq!(goals(&zone).len(), 1, "the same theft is one goal");
        let day = advance(&mut zone, 6 * 60);
        let reported = day
            .iter()
            .any(|(_, m)| m.contains("\"npc\":\"piet\"") && m.contains("report_a_theft"));
        assert!(reported, "piet goes to the watch");
        assert!(goals(&zone).is_empty(), "and the goal is met");
    }

    #[test]
    fn social_events_are_remembered_by_archetype_and_external_need_changes_are_damped() {
        let mut zone = village();
        advance(&mut zone, 60);
        let last_memory = |zone: &Zone, npc: &str| {
            let index = zone.npc_index(npc).expect("npc");
            let (_, wellbeing) = zone.agents[index].wellbeing.as_ref().expect("wellbeing");
            wellbeing.memories.last().map(|m| m.mood_delta)
        };
        send(&mut zone, social("insult", "piet", &[], None));
        assert_eq!(last_memory(&zone, "piet"), Some(-0.3), "villager default");
        send(&mut zone, social("insult", "roderick", &[], None));
        assert_eq!(
            last_memory(&zone, "roderick"),
            Some(-0.1),
            "the guard's own"
        );
        send(&mut zone, social("theft", "roderick", &[], None));
        assert_eq!(
            last_memory(&zone, "roderick"),
            Some(-0.6),
            "guard overrides theft too"
        );
        send(&mut zone, social("gift", "sela", &[], Some(0.7)));
        assert_eq!(
            last_memory(&zone, "sela"),
            Some(0.7),
            "the event's own mood wins"
        );
        let memories = |zone: &Zone, npc: &str| {
            let index = zone.npc_index(npc).expect("npc");
            zone.agents[index]
                .wellbeing
                .as_ref()
                .expect("wellbeing")
                .1
                .memories
                .len()
        };
        let before = memories(&zone, "hilda");
        send(&mut zone, social("wave", "hilda", &[], None));
        assert_eq!(
            memories(&zone, "hilda"),
            before,
            "kinds not named leave mood alone"
        );

        // The remembered insult lowers mood against an identical village without it.
        let mut calm = village();
        enter(&mut calm, "market");
        advance(&mut calm, 60);
        let mut insulted = village();
        enter(&mut insulted, "market");
        advance(&mut insulted, 60);
        send(&mut insulted, social("insult", "marla", &[], None));
        advance(&mut calm, 1);
        advance(&mut insulted, 1);
        let mood = |zone: &Zone| {
            let index = zone.npc_index("marla").expect("marla");
            zone.agents[index]
                .wellbeing
                .as_ref()
                .expect("wellbeing")
                .1
                .mood
        };
        assert!(
            mood(&insulted) < mood(&calm),
            "{} vs {}",
            mood(&insulted),
            mood(&calm)
        );

        // A blow to comfort is damped to a quarter of the range in one event.
        let ulla = zone.npc_index("ulla").expect("ulla");
        let comfort = zone.vocabulary.intern("COMFORT");
        let value = |zone: &Zone| {
            zone.agents[ulla]
                .agent
                .consideration(comfort)
                .expect("comfort")
                .value
        };
        let before = value(&zone);
        send(
            &mut zone,
            social("insult", "ulla", &[("COMFORT", -1.0)], None),
        );
        let drop = before - value(&zone);
        assert!(
            (drop - 0.25f64.min(before)).abs() < 1e-9,
            "damped: {before} -> {}",
            value(&zone)
        );
    }

    #[test]
    fn a_schedule_override_holds_until_it_expires_and_activity_changes_are_events() {
        let mut zone = village();
        enter(&mut zone, "market");
        advance(&mut zone, 10 * 60);
        let activities = |messages: &[(StreamKind, String)]| {
            messages
                .iter()
                .filter(|(_, m)| {
                    m.contains("\"type\":\"activity_changed\"") && m.contains("\"npc\":\"piet\"")
                })
                .map(|(_, m)| {
                    let value: serde_json::Value = serde_json::from_str(m).expect("json");
                    value["to"].as_str().unwrap_or("none").to_owned()
                })
                .collect::<Vec<_>>()
        };
        let summons = WorldEvent::ScheduleOverride {
            npc: "piet".into(),
            activity: "worship".into(),
            location: Some("chapel".into()),
            tags: vec!["rest".into()],
            hours: 2.0,
        };
        send(&mut zone, summons);
        let first_hour = advance(&mut zone, 60);
        assert_eq!(activities(&first_hour), vec!["worship"]);
        let later = advance(&mut zone, 2 * 60);
        let after = activities(&later);
        assert_eq!(after.len(), 1, "back to the schedule once: {after:?}");
        assert_ne!(after[0], "worship");
    }
}
