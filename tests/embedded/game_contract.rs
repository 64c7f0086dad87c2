//! The integration contract's messages against their schemas: the village in `game` mode is
//! driven through every world event the game may send (walks reported, completions, orders,
//! engagement, an assigned goal, contexts) and the admin's reinstatement, for a day; every
//! world message sent and every intent and NPC event emitted is checked against `schema/`,
//! and each kind of message the contract adds is seen at least once.

use std::collections::{BTreeMap, BTreeSet};

use geppetto_service::bus::envelope::{AssignedGoal, WorldEvent, WorldMessage, header};
use geppetto_service::zone::isolation::IsolationState;
use geppetto_service::zone::{TickInputs, Zone, ZoneConfig, ZoneOutput};
use serde_json::{Value, json};
use support::schema;
use support::village;

struct Game {
    zone: Zone,
    seq: u64,
    seen: BTreeMap<String, Value>,
    /// NPC → (intent id, its kind, target room of a walk).
    carrying: BTreeMap<String, (String, String, Option<String>)>,
}

impl Game {
    fn send(&mut self, event: WorldEvent, from_geppetto: bool) -> ZoneOutput {
        self.seq += 1;
        let header = header(format!("g{}", self.seq), "village", self.zone.game_time);
        let message = WorldMessage {
            header: if from_geppetto {
                header.from_geppetto()
            } else {
                header
            },
            event,
        };
        let sent: Value = serde_json::from_str(&message.to_json()).expect("json");
        schema::check_schema("world", &sent);
        self.seen
            .entry(format!("world:{}", sent["type"].as_str().expect("type")))
            .or_insert(sent);
        let clock = geppetto_service::runtime::wall_clock();
        let mut out = ZoneOutput::default();
        self.zone
            .apply(&message, &TickInputs::live(&clock), &mut out);
        self.read(&out);
        out
    }

    /// Advances the zone one game minute and reads what it wrote.
    fn tick(&mut self) {
        let next = self.zone.game_time + 1;
        self.seq += 1;
        let tick = WorldMessage {
            header: header(format!("t{}", self.seq), "village", next),
            event: WorldEvent::TimeAdvanced,
        };
        let clock = geppetto_service::runtime::wall_clock();
        let mut out = ZoneOutput::default();
        self.zone.apply(&tick, &TickInputs::live(&clock), &mut out);
        self.read(&out);
    }

    /// Checks and notes every message; keeps what each NPC carries out.
    fn read(&mut self, out: &ZoneOutput) {
        for (stream, body) in &out.messages {
            let message: Value = serde_json::from_str(body).expect("json");
            let stream = stream.as_str();
            schema::check_schema(stream, &message);
            let kind = message["type"].as_str().expect("type").to_owned();
            let npc = message["npc"].as_str().unwrap_or_default().to_owned();
            let id = message["id"].as_str().expect("id").to_owned();
            match (stream, kind.as_str()) {
                ("intents", "navigate") => {
                    let to = message["to_room"].as_str().map(str::to_owned);
                    self.carrying.insert(npc, (id, kind.clone(), to));
                }
                ("intents", "use") => {
                    self.carrying.insert(npc, (id, kind.clone(), None));
                }
                ("intents", "cancel")
                    if self
                        .carrying
                        .get(&npc)
                        .is_some_and(|c| c.0 == message["cancelled"]) =>
                {
                    self.carrying.remove(&npc);
                }
                _ => {}
            }
            self.seen
                .entry(format!("{stream}:{kind}"))
                .or_insert(message);
        }
    }
}

#[test]
fn every_message_of_the_integration_contract_matches_its_schema() {
    let mut config = ZoneConfig::default();
    config.governor.tick_budget_ms_soft = 60_000.0;
    config.governor.tick_budget_ms_hard = 60_000.0;
    config.tick.npc_budget_ms = 60_000.0;
    let mut game = Game {
        zone: village::village(config, IsolationState::default()),
        seq: 0,
        seen: BTreeMap::new(),
        carrying: BTreeMap::new(),
    };
    let npc = |id: &str| id.to_owned();
    game.send(
        WorldEvent::PlayerEntered {
            player: "ann".into(),
            room: "square".into(),
        },
        false,
    );
    game.send(
        WorldEvent::ContextSet {
            name: "harvest_festival".into(),
            tag_multipliers: BTreeMap::from([("social".into(), 1.4)]),
            until: Some(game.zone.game_time + 600),
        },
        false,
    );
    game.send(
        WorldEvent::GoalAssigned {
            npc: npc("bjorn"),
            goal: AssignedGoal {
                id: "quest-1".into(),
                description: "be well fed".into(),
                predicate: json!({"predicate_type": "need_above", "need": "SURVIVAL", "min": 0.1}),
                deadline_hours: Some(12.0),
                priority: None,
            },
        },
        false,
    );
    game.send(
        WorldEvent::Order {
            npc: npc("piet"),
            provider: "tavern".into(),
            action: "eat_stew".into(),
            by: "ann".into(),
        },
        false,
    );
    game.send(
        WorldEvent::Order {
            npc: npc("piet"),
            provider: "moon".into(),
            action: "land".into(),
            by: "ann".into(),
        },
        false,
    );
    for minute in 0..(16 * 60u64) {
        // The game carries out what it was told: a walk takes two minutes, an action its
        // ticks (here: reported done at once when the walk ends, or a minute after a use).
        let carrying: Vec<_> = game.carrying.clone().into_iter().collect();
        for (who, (intent, kind, to)) in carrying {
            match kind.as_str() {
                "navigate" if minute % 2 == 0 => {
                    game.send(
                        WorldEvent::NpcMoved {
                            npc: who,
                            room: to.expect("a walk has a room"),
                        },
                        false,
                    );
                }
                "use" if minute % 3 == 0 => {
                    game.carrying.remove(&who);
                    let event = if minute % 30 == 0 {
                        WorldEvent::ActionFailed {
                            npc: who,
                            intent: Some(intent),
                            reason: "the door is locked".into(),
                        }
                    } else {
                        WorldEvent::ActionCompleted {
                            npc: who,
                            intent: Some(intent),
                            outcome: Some("done".into()),
                            resources: Default::default(),
                        }
                    };
                    game.send(event, false);
                }
                _ => {}
            }
        }
        if minute == 60 {
            game.send(
                WorldEvent::NpcEngaged {
                    npc: npc("roderick"),
                    reason: "combat".into(),
                },
                false,
            );
            game.send(
                WorldEvent::SocialEvent {
                    kind: "insult".into(),
                    source: "ann".into(),
                    target: npc("marla"),
                    deltas: BTreeMap::new(),
                    mood: Some(-1.0),
                    about: None,
                },
                false,
            );
        }
        if minute == 90 {
            game.send(
                WorldEvent::NpcReleased {
                    npc: npc("roderick"),
                },
                false,
            );
        }
        game.tick();
    }
    game.send(
        WorldEvent::ContextCleared {
            name: "harvest_festival".into(),
        },
        false,
    );
    quests(&mut game);
    game.send(
        WorldEvent::ZoneSettings {
            completion: geppetto_service::zone::Completion::Game,
        },
        true,
    );
    let expected = [
        "world:npc_moved",
        "world:action_completed",
        "world:action_failed",
        "world:order",
        "world:npc_engaged",
        "world:npc_released",
        "world:goal_assigned",
        "world:context_set",
        "world:context_cleared",
        "world:zone_settings",
        "intents:navigate",
        "intents:use",
        "intents:cancel",
        "npc_events:order_accepted",
        "npc_events:order_refused",
        "npc_events:order_done",
        "npc_events:npc_engaged",
        "npc_events:npc_released",
        "npc_events:goal_created",
        "npc_events:goal_completed",
        "npc_events:action_completed",
        "npc_events:action_failed",
        "npc_events:mood_changed",
        "world:facts_granted",
        "world:facts_revoked",
        "world:goal_withdrawn",
        "world:quest_outcome",
        "world:story_signal_taken",
        "world:story_signal_resolved",
        "npc_events:goal_refused",
        "npc_events:goal_failed",
        "npc_events:deed_remembered",
        "story:story_signal",
        "story:story_signal_updated",
        "story:story_signal_resolved",
    ];
    let seen: BTreeSet<&str> = game.seen.keys().map(String::as_str).collect();
    let missing: Vec<_> = expected.iter().filter(|k| !seen.contains(*k)).collect();
    assert!(
        missing.is_empty(),
        "never seen: {missing:?} (seen {seen:?})"
    );
    let completed = &game.seen["npc_events:action_completed"];
    assert!(completed["intent"].is_string(), "{completed}");
    eprintln!(
        "checked against schema/: {} kinds of message, {} world events sent",
        seen.len(),
        game.seq
    );
}

/// What a quest board and the game do about quests: a story signal taken and resolved, facts
/// granted and revoked, a refused and a withdrawn assignment, a quest's outcome remembered.
fn quests(game: &mut Game) {
    let signal = game.seen["story:story_signal"]["signal"]
        .as_str()
        .expect("a signal in a day")
        .to_owned();
    game.send(
        WorldEvent::StorySignalTaken {
            signal: signal.clone(),
            by: "board".into(),
        },
        false,
    );
    game.tick();
    game.send(
        WorldEvent::QuestOutcome {
            by: "ann".into(),
            outcome: geppetto_core::social::Deed::Helped,
            quest: Some("the stolen purse".into()),
            npcs: Some(vec!["marla".into()]),
            signal: None,
            goal: None,
        },
        false,
    );
    game.send(
        WorldEvent::StorySignalResolved {
            signal,
            by: "board".into(),
            outcome: "completed".into(),
        },
        false,
    );
    game.send(
        WorldEvent::FactsGranted {
            npc: "bjorn".into(),
            facts: vec!["has:medal".into()],
        },
        false,
    );
    game.send(
        WorldEvent::FactsRevoked {
            npc: "bjorn".into(),
            facts: vec!["has:medal".into()],
        },
        false,
    );
    let goal = |id: &str, predicate: Value| WorldEvent::GoalAssigned {
        npc: "bjorn".into(),
        goal: AssignedGoal {
            id: id.into(),
            description: "find the medal".into(),
            predicate,
            deadline_hours: None,
            priority: None,
        },
    };
    let refused = game.send(
        goal("quest-x", json!({"predicate_type": "no_such_thing"})),
        false,
    );
    assert_eq!(refused.refused.len(), 1, "also dead-lettered");
    game.send(
        goal(
            "quest-2",
            json!({"predicate_type": "has_fact", "fact": "has:medal"}),
        ),
        false,
    );
    game.send(
        WorldEvent::GoalWithdrawn {
            npc: "bjorn".into(),
            goal: "quest-2".into(),
        },
        false,
    );
}
