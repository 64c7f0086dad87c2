//! The core's events of one NPC as wire messages: intents (`use`, `navigate`, `social`,
//! `reactive`, `bark`, `cancel`) and NPC events. [`message_for`] is the pure part — a core
//! event and the names of its symbols in, a message out — and [`Zone::emit`] adds the zone's
//! bookkeeping the starts and ends carry (the intent being carried out, the decision trace, the
//! NPC's room and position, the story detector's goal changes, and — given by `game` when the
//! game reported the action carried out — the intent and outcome an `action_completed` names). Which events happen is the
//! core's; publishing with ids is the zone's (`mod.rs`).

use std::collections::BTreeMap;

use geppetto_core::decision::world::Position;
use geppetto_core::life::action::GameCarried;
use geppetto_core::life::goals::GoalNote;
use geppetto_core::life::simulator::{SimEvent, SimulatedAgent};
use geppetto_core::story::GoalChange;
use geppetto_core::vocabulary::Vocabulary;
use geppetto_llm::LlmRequest;

use super::decision_trace::Choice;
use super::{IntentKind, Zone, ZoneOutput, room_key};
use crate::bus::StreamKind;
use crate::bus::envelope::{Intent, NpcEvent};

/// One wire message: an intent for the game, or an event about an NPC.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Wire {
    /// On the intents stream.
    Intent(Intent),
    /// On the NPC events stream.
    Event(NpcEvent),
}

/// What core event `event` of NPC `npc` says on the wire, when that needs nothing of the zone
/// but the names of its symbols; `None` for a start (an action's or a reactive set's), whose
/// messages carry the zone's rooms, providers and intent ids, for a timeout (the zone's
/// report) and for goal events (their predicates written by the zone's registry): see
/// [`Zone::emit`]. Pure.
pub(super) fn message_for(npc: &str, event: &SimEvent, vocabulary: &Vocabulary) -> Option<Wire> {
    Some(match event {
        SimEvent::ActionStarted { .. }
        | SimEvent::ReactiveStarted { .. }
        | SimEvent::ActionTimedOut { .. }
        | SimEvent::GoalCreated { .. }
        | SimEvent::GoalCompleted { .. }
        | SimEvent::GoalFailed { .. }
        | SimEvent::GoalBlocked { .. } => return None,
        SimEvent::Bark { text, .. } => Wire::Intent(Intent::Bark {
            npc: npc.to_owned(),
            text: text.clone(),
        }),
        _ => {
            Wire::Event(action_end(npc, event).unwrap_or_else(|| npc_event(npc, event, vocabulary)))
        }
    })
}

/// How an action of NPC `npc` ended, when `event` ends one (completed, preempted, interrupted,
/// a reactive one ended, a queued one dropped).
fn action_end(npc: &str, event: &SimEvent) -> Option<NpcEvent> {
    let npc = npc.to_owned();
    Some(match event {
        SimEvent::ActionCompleted { provider, action } => NpcEvent::ActionCompleted {
            npc,
            provider: provider.clone(),
            action: action.clone(),
            intent: None,
            outcome: None,
        },
        SimEvent::ActionPreempted {
            provider,
            action,
            by_provider,
            by_action,
        } => NpcEvent::ActionPreempted {
            npc,
            provider: provider.clone(),
            action: action.clone(),
            by_provider: by_provider.clone(),
            by_action: by_action.clone(),
        },
        SimEvent::ActionInterrupted {
            provider,
            action,
            by_set,
            by_action,
        } => NpcEvent::ActionInterrupted {
            npc,
            provider: provider.clone(),
            action: action.clone(),
            by_set: by_set.clone(),
            by_action: by_action.clone(),
        },
        SimEvent::ReactiveEnded { set, action } => NpcEvent::ReactiveEnded {
            npc,
            set: set.clone(),
            action: action.clone(),
        },
        SimEvent::QueueEntryDropped {
            provider,
            action,
            reason,
            ..
        } => NpcEvent::QueueEntryDropped {
            npc,
            provider: provider.clone(),
            action: action.clone(),
            reason: (*reason).to_owned(),
        },
        _ => return None,
    })
}

/// Any other core event of NPC `npc` as an NPC event: commitments, detail levels, aggregated
/// events and activities with their payloads; the rest under their snake_case names.
fn npc_event(npc: &str, event: &SimEvent, vocabulary: &Vocabulary) -> NpcEvent {
    let npc = npc.to_owned();
    match event {
        SimEvent::CommitmentExpired { forbid_tags, .. } => NpcEvent::CommitmentExpired {
            npc,
            forbid_tags: forbid_tags
                .iter()
                .map(|t| vocabulary.name(*t).to_owned())
                .collect(),
        },
        SimEvent::LevelChanged { from, to } => NpcEvent::LevelChanged {
            npc,
            from: from.as_str().into(),
            to: to.as_str().into(),
        },
        SimEvent::AggregatedEventsApplied { count } => {
            NpcEvent::AggregatedEventsApplied { npc, count: *count }
        }
        SimEvent::ActivityChanged { from, to } => {
            let name =
                |activity: &Option<_>| activity.map(|symbol| vocabulary.name(symbol).to_owned());
            NpcEvent::ActivityChanged {
                npc,
                from: name(from),
                to: name(to),
            }
        }
        // Events the core adds over time (affect bursts, reactive layers…) go out under their
        // own snake_case name until they get a dedicated payload.
        other => NpcEvent::CoreEvent {
            npc,
            event: other.name().to_owned(),
        },
    }
}

/// A goal event of the core as the change and description the story detector reads.
pub(super) fn goal_change(event: &SimEvent) -> Option<(GoalChange, &GoalNote)> {
    Some(match event {
        SimEvent::GoalCreated { goal } => (GoalChange::Created, goal),
        SimEvent::GoalCompleted { goal } => (GoalChange::Completed, goal),
        SimEvent::GoalFailed { goal, .. } => (GoalChange::Failed, goal),
        SimEvent::GoalBlocked { goal, .. } => (GoalChange::Blocked, goal),
        _ => return None,
    })
}

impl Zone {
    /// A goal event of NPC `npc` with the goal's fields.
    fn goal_event(&self, npc: &str, event: &SimEvent, goal: &GoalNote) -> NpcEvent {
        let (npc, description, fields) = (
            npc.to_owned(),
            goal.description.clone(),
            self.goal_fields(goal),
        );
        match event {
            SimEvent::GoalCompleted { .. } => NpcEvent::GoalCompleted {
                npc,
                description,
                goal: fields,
            },
            SimEvent::GoalFailed { reason, .. } => NpcEvent::GoalFailed {
                npc,
                description,
                reason: (*reason).to_owned(),
                goal: fields,
            },
            SimEvent::GoalBlocked { reason, .. } => NpcEvent::GoalBlocked {
                npc,
                description,
                reason: (*reason).to_owned(),
                goal: fields,
            },
            _ => NpcEvent::GoalCreated {
                npc,
                description,
                goal: fields,
            },
        }
    }

    /// What core event `event` of NPC `index` means for a player's order: the running one
    /// ends (completed, or interrupted by a collapse or an emergency), or a queued one could
    /// not start.
    fn order_event(&mut self, index: usize, event: &SimEvent, out: &mut ZoneOutput) {
        match event {
            SimEvent::ActionCompleted { .. } => self.order_ended(index, "completed", None, out),
            SimEvent::ActionPreempted { .. } | SimEvent::ActionInterrupted { .. } => {
                self.order_ended(index, "interrupted", Some(event.name()), out);
            }
            SimEvent::QueueEntryDropped {
                order: Some(order),
                reason,
                ..
            } => {
                let done = NpcEvent::OrderDone {
                    npc: self.agents[index].agent.id.clone(),
                    order: order.clone(),
                    outcome: "dropped".into(),
                    reason: Some((*reason).to_owned()),
                };
                self.publish(index, StreamKind::NpcEvents, &done, out);
            }
            _ => {}
        }
    }

    /// The NPCs running an action of `provider`, by index. Built once per emit pass (a social
    /// start asks it; scanning every NPC each time made a tick of many starts quadratic).
    pub(super) fn running_at(&mut self, provider: &str) -> Vec<usize> {
        let agents = &self.agents;
        let by_provider = self.running_by_provider.get_or_insert_with(|| {
            let mut map: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for (index, agent) in agents.iter().enumerate() {
                if let Some(running) = &agent.running {
                    map.entry(running.provider.clone()).or_default().push(index);
                }
            }
            map
        });
        by_provider.get(provider).cloned().unwrap_or_default()
    }

    /// Where provider `id` stands: through the zone's provider index once a tick has built it
    /// (a tick of many starts would otherwise scan every provider for each), else by a scan.
    pub(super) fn provider_position(&self, id: &str) -> Option<Position> {
        let at = match &self.derived.providers {
            Some(index) => index.find(&self.world, id),
            None => self.world.providers.iter().position(|p| p.id == id),
        };
        at.map(|p| self.world.providers[p].position)
    }

    /// Turns NPC `index`'s core events into messages, in order, with the zone's bookkeeping
    /// they carry: a start moves the NPC and records the intent it carries out; an end, a
    /// preemption or an interruption closes it (a preempted or interrupted one is cancelled
    /// first); a goal change is told to the story detector. The rest are [`message_for`]'s.
    pub(super) fn emit(&mut self, index: usize, events: &[SimEvent], out: &mut ZoneOutput) {
        self.emit_reported(index, events, None, out);
    }

    /// [`Zone::emit`], where the action that ends is one the game reported carried out:
    /// `report` (its intent id and outcome) goes on its `action_completed`.
    pub(super) fn emit_reported(
        &mut self,
        index: usize,
        events: &[SimEvent],
        mut report: Option<(String, Option<String>)>,
        out: &mut ZoneOutput,
    ) {
        let npc = self.agents[index].agent.id.clone();
        for event in events {
            match event {
                SimEvent::ActionStarted { .. } => {
                    self.derived.started.mark(index);
                    self.start_action(index, &npc, event, out);
                }
                SimEvent::ReactiveStarted { set, action, .. } => {
                    self.start_reactive(index, &npc, set, action, out);
                }
                SimEvent::ActionTimedOut { .. } => self.timed_out(index, out),
                _ => {
                    match event {
                        SimEvent::ActionCompleted { .. } | SimEvent::ReactiveEnded { .. } => {
                            self.meta[index].current_intent = None;
                        }
                        SimEvent::ActionPreempted { .. } => self.cancel(index, "preempted", out),
                        SimEvent::ActionInterrupted { .. } => {
                            self.cancel(index, "interrupted", out);
                        }
                        _ => {}
                    }
                    let message = match goal_change(event) {
                        Some((change, goal)) => {
                            // The detector hears of it too (a blocked goal is a story).
                            let place = self.social_place(index);
                            let now_hours = self.now_hours();
                            self.social.goal_changed(
                                &npc,
                                &goal.description,
                                change,
                                &place,
                                now_hours,
                            );
                            Some(Wire::Event(self.goal_event(&npc, event, goal)))
                        }
                        None => message_for(&npc, event, &self.vocabulary),
                    };
                    match message {
                        Some(Wire::Intent(body)) => {
                            self.publish(index, StreamKind::Intents, &body, out);
                        }
                        Some(Wire::Event(mut body)) => {
                            if let NpcEvent::ActionCompleted {
                                intent, outcome, ..
                            } = &mut body
                            {
                                (*intent, *outcome) =
                                    report.take().map_or((None, None), |(i, o)| (Some(i), o));
                            }
                            self.publish(index, StreamKind::NpcEvents, &body, out);
                        }
                        None => {}
                    }
                    self.order_event(index, event, out);
                }
            }
        }
    }

    /// NPC `index` (`npc`) starts `action` of reactive set `set`: the `reactive` intent it
    /// carries out from now, and the bark that goes with it.
    fn start_reactive(
        &mut self,
        index: usize,
        npc: &str,
        set: &str,
        action: &str,
        out: &mut ZoneOutput,
    ) {
        let intent = Intent::Reactive {
            npc: npc.to_owned(),
            set: set.to_owned(),
            action: action.to_owned(),
        };
        let h = self.publish(index, StreamKind::Intents, &intent, out);
        self.meta[index].current_intent = Some(Box::new((h.id.clone(), IntentKind::Reactive)));
        let bark = Intent::Bark {
            npc: npc.to_owned(),
            text: bark_for(action),
        };
        self.publish(index, StreamKind::Intents, &bark, out);
    }

    /// NPC `index` starts an action (`event`, an [`SimEvent::ActionStarted`]): its decision is
    /// traced; when the provider is in another room it walks there (`navigate`) — at once in
    /// `simulated` mode, as the game reports it in `game` mode — and then uses it
    /// ([`Zone::begin_use`]); `action_started` reports the decision.
    fn start_action(&mut self, index: usize, npc: &str, event: &SimEvent, out: &mut ZoneOutput) {
        let SimEvent::ActionStarted {
            provider,
            action,
            utility,
            player_queued,
        } = event
        else {
            return;
        };
        self.choice_names.record(
            &mut self.meta[index].decisions,
            self.config.tick.decision_trace_len,
            &Choice {
                tick: self.tick,
                game_time: self.game_time,
                provider,
                action,
                utility: (utility * 10_000.0).round() / 10_000.0,
                player_queued: *player_queued,
            },
        );
        self.meta[index].game.order = self.agents[index]
            .running
            .as_ref()
            .and_then(|r| r.order.as_deref().map(Box::from));
        let provider_room = self
            .providers
            .get(provider)
            .map_or(self.meta[index].room, |p| p.room);
        let game = self.game_completes();
        if provider_room != self.meta[index].room {
            let h = self.header_for(index);
            let from_room = room_key(&self.room_names, self.meta[index].room).to_owned();
            let to_room = room_key(&self.room_names, provider_room).to_owned();
            out.push(
                StreamKind::Intents,
                &h,
                &Intent::Navigate {
                    npc: npc.to_owned(),
                    from_room,
                    to_room,
                    provider: provider.clone(),
                },
            );
            if game {
                let deadline_hours = self.arrival_deadline();
                if let Some(running) = self.agents[index].running.as_mut() {
                    running.carried_by_game = Some(GameCarried {
                        walking: true,
                        deadline_hours,
                    });
                }
                self.meta[index].current_intent =
                    Some(Box::new((h.id.clone(), IntentKind::Navigate)));
            } else {
                self.move_npc(index, provider_room);
                self.begin_use(index, out);
            }
        } else if game {
            self.arrive(index, out);
        } else {
            self.begin_use(index, out);
        }
        let h = self.header_for(index);
        let room = room_key(&self.room_names, provider_room).to_owned();
        out.push(
            StreamKind::NpcEvents,
            &h,
            &NpcEvent::ActionStarted {
                npc: npc.to_owned(),
                provider: provider.clone(),
                action: action.clone(),
                utility: (utility * 10_000.0).round() / 10_000.0,
                room,
            },
        );
    }

    /// NPC `index`, in its provider's room, begins its running action: it stands at the
    /// provider, the `use` intent becomes the one it carries out, and a social action names
    /// who it joins there (narrated when a player sees it).
    pub(super) fn begin_use(&mut self, index: usize, out: &mut ZoneOutput) {
        let Some(running) = self.agents[index].running.as_ref() else {
            return;
        };
        let npc = self.agents[index].agent.id.clone();
        let (provider, action) = (running.provider.clone(), running.action.id.clone());
        // A name no content uses tags nothing.
        let social = self.vocabulary.lookup("social");
        let (duration_hours, is_social, player_queued) = (
            running.action.duration_hours,
            social.is_some_and(|social| running.action.tags.contains(&social)),
            running.player_queued,
        );
        let provider_room = self
            .providers
            .get(&provider)
            .map_or(self.meta[index].room, |p| p.room);
        if let Some(position) = self.provider_position(&provider) {
            self.agents[index].agent.position = position;
        }
        let h = self.header_for(index);
        let duration_ticks = (duration_hours / self.full_tick_hours).round().max(0.0) as u64;
        let intent = Intent::Use {
            npc,
            provider,
            action,
            duration_ticks,
            player_queued,
        };
        out.push(StreamKind::Intents, &h, &intent);
        self.meta[index].current_intent = Some(Box::new((h.id, IntentKind::Use)));
        // The names go on to a social intent, if any, without copying them again.
        let Intent::Use {
            npc,
            provider,
            action,
            ..
        } = intent
        else {
            return;
        };
        if is_social {
            let arrived = |other: &SimulatedAgent| {
                other
                    .running
                    .as_ref()
                    .and_then(|r| r.carried_by_game)
                    .is_none_or(|c| !c.walking)
            };
            let with: Vec<String> = self
                .running_at(&provider)
                .into_iter()
                .filter(|&other| other != index && arrived(&self.agents[other]))
                .map(|other| self.agents[other].agent.id.clone())
                .collect();
            if !with.is_empty() {
                let h = self.header_for(index);
                let witnessed = self.presence.player_in(provider_room);
                let narration = witnessed.then(|| {
                    let request =
                        self.narration_request(&h.id, index, &with[0], provider_room, &action);
                    let placeholder = self.content.narrator.narrate_now(&request);
                    out.llm.push(LlmRequest::Narration(request));
                    placeholder
                });
                out.push(
                    StreamKind::Intents,
                    &h,
                    &Intent::Social {
                        npc,
                        with,
                        action,
                        provider,
                        witnessed,
                        narration,
                    },
                );
            }
        }
    }

    /// Cancels the current intent first (a `cancel` naming its id, and `intent_cancelled`).
    pub(super) fn cancel(&mut self, index: usize, reason: &str, out: &mut ZoneOutput) {
        let Some((cancelled, kind)) = self.meta[index].current_intent.take().map(|intent| *intent)
        else {
            return;
        };
        let npc = self.agents[index].agent.id.clone();
        self.publish(
            index,
            StreamKind::Intents,
            &Intent::Cancel {
                npc: npc.clone(),
                cancelled,
                reason: reason.to_owned(),
            },
            out,
        );
        self.publish(
            index,
            StreamKind::NpcEvents,
            &NpcEvent::IntentCancelled {
                npc,
                cancelled_intent_type: kind.as_str().to_owned(),
                reason: reason.to_owned(),
            },
            out,
        );
    }
}

/// A line for a reactive action (the deterministic fallback of the narration seam).
pub fn bark_for(action: &str) -> String {
    match action {
        "flee" => "Run! Run for your lives!".into(),
        "call_the_guard" => "Guards! Guards!".into(),
        "gawk" => "What's going on over there?".into(),
        other => format!("*{}*", other.replace('_', " ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zone::testing::*;

    #[test]
    fn a_core_event_becomes_its_message_without_the_zone() {
        let vocabulary = Vocabulary::default();
        let completed = SimEvent::ActionCompleted {
            provider: "stalls".into(),
            action: "trade".into(),
        };
        assert_eq!(
            message_for("piet", &completed, &vocabulary),
            Some(Wire::Event(NpcEvent::ActionCompleted {
                npc: "piet".into(),
                provider: "stalls".into(),
                action: "trade".into(),
                intent: None,
                outcome: None,
            }))
        );
        let bark = SimEvent::Bark {
            id: "greet".into(),
            text: "Fresh bread!".into(),
        };
        assert_eq!(
            message_for("piet", &bark, &vocabulary),
            Some(Wire::Intent(Intent::Bark {
                npc: "piet".into(),
                text: "Fresh bread!".into(),
            }))
        );
        let started = SimEvent::ActionStarted {
            provider: "stalls".into(),
            action: "trade".into(),
            utility: 0.5,
            player_queued: false,
        };
        assert_eq!(
            message_for("piet", &started, &vocabulary),
            None,
            "the zone's"
        );
        let lash = SimEvent::LashOut {
            target: "ann".into(),
            intensity: 0.5,
        };
        assert_eq!(
            message_for("piet", &lash, &vocabulary),
            Some(Wire::Event(NpcEvent::CoreEvent {
                npc: "piet".into(),
                event: "lash_out".into(),
            })),
            "another core event goes out under its own name"
        );
    }

    #[test]
    fn each_npc_keeps_its_recent_decisions_bounded_and_in_order() {
        let mut zone = village();
        enter(&mut zone, "square");
        let day = advance(&mut zone, 24 * 60);
        let bram = zone.npc_index("bram").expect("bram");
        let trace = zone.decisions(bram);
        let started = day
            .iter()
            .filter(|(_, m)| {
                m.contains("\"type\":\"action_started\"") && m.contains("\"npc\":\"bram\"")
            })
            .count();
        assert_eq!(trace.len(), started.min(32), "a full day keeps the last 32");
        assert!(
            trace
                .iter()
                .zip(trace.iter().skip(1))
                .all(|(a, b)| a.tick <= b.tick)
        );
        let last = day
            .iter()
            .rev()
            .find(|(_, m)| {
                m.contains("\"type\":\"action_started\"") && m.contains("\"npc\":\"bram\"")
            })
            .map(|(_, m)| serde_json::from_str::<serde_json::Value>(m).expect("json"))
            .expect("bram did something");
        let newest = trace.back().expect("a decision");
        assert_eq!(last["action"], newest.action.as_str());
        assert_eq!(last["provider"], newest.provider.as_str());
    }
}
