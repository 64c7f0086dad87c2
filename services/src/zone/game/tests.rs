//! The game's side of the contract against the village: walks and completions the game
//! reports, deadlines, orders, engagement, assigned goals, contexts, moods, relocation and
//! isolation's cancels.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::bus::StreamKind;
use crate::bus::envelope::{AssignedGoal, WorldEvent};
use crate::zone::testing::*;
use crate::zone::{Zone, ZoneOutput};

/// The messages of `stream` with `type`, parsed.
fn typed(messages: &[(StreamKind, String)], stream: StreamKind, kind: &str) -> Vec<Value> {
    messages
        .iter()
        .filter(|(s, _)| *s == stream)
        .map(|(_, m)| serde_json::from_str::<Value>(m).expect("json"))
        .filter(|m| m["type"] == kind)
        .collect()
}

fn of<'a>(messages: &'a [Value], npc: &str) -> Vec<&'a Value> {
    messages.iter().filter(|m| m["npc"] == npc).collect()
}

/// Runs the zone until some NPC sets out for another room; its `navigate`.
fn first_walk(zone: &mut Zone) -> Value {
    for _ in 0..240 {
        let messages = advance(zone, 1);
        if let Some(walk) = typed(&messages, StreamKind::Intents, "navigate").first() {
            return walk.clone();
        }
    }
    panic!("nobody walked in four hours");
}

fn moved(npc: &str, room: &str) -> WorldEvent {
    WorldEvent::NpcMoved {
        npc: npc.into(),
        room: room.into(),
    }
}

fn completed(npc: &str, intent: Option<&str>, outcome: Option<&str>) -> WorldEvent {
    WorldEvent::ActionCompleted {
        npc: npc.into(),
        intent: intent.map(str::to_owned),
        outcome: outcome.map(str::to_owned),
        resources: Default::default(),
    }
}

#[test]
fn a_walk_waits_for_the_games_arrival_and_an_action_for_its_report() {
    let mut zone = village_in_game();
    enter(&mut zone, "square");
    let walk = first_walk(&mut zone);
    let npc = walk["npc"].as_str().expect("npc").to_owned();
    let to = walk["to_room"].as_str().expect("room").to_owned();
    let walk_id = walk["id"].as_str().expect("id").to_owned();
    let index = zone.npc_index(&npc).expect("npc");
    let before = zone.meta[index].room;
    let waiting = advance(&mut zone, 5);
    assert!(
        of(&typed(&waiting, StreamKind::Intents, "use"), &npc).is_empty(),
        "no use before the game says it arrived"
    );
    assert_eq!(
        zone.meta[index].room, before,
        "geppetto never moves it itself"
    );

    let arrived = apply_as(&mut zone, "m1", moved(&npc, &to));
    assert!(arrived.refused.is_empty(), "{:?}", arrived.refused);
    let uses = typed(&arrived.messages, StreamKind::Intents, "use");
    let use_id = uses[0]["id"].as_str().expect("id").to_owned();
    assert_eq!(uses[0]["npc"], npc.as_str());

    let stale = apply_as(&mut zone, "c1", completed(&npc, Some(&walk_id), None));
    assert_eq!(stale.refused.len(), 1, "a stale intent is refused");
    assert!(
        stale.refused[0].reason.contains("stale intent"),
        "{:?}",
        stale.refused
    );
    let done = apply_as(
        &mut zone,
        "c2",
        completed(&npc, Some(&use_id), Some("well done")),
    );
    assert!(done.refused.is_empty(), "{:?}", done.refused);
    let ended = typed(&done.messages, StreamKind::NpcEvents, "action_completed");
    assert_eq!(ended.len(), 1, "{:?}", done.messages);
    assert_eq!(ended[0]["intent"], use_id.as_str());
    assert_eq!(ended[0]["outcome"], "well done");
    assert!(zone.agents[index].running.is_none());
    let again = apply_as(&mut zone, "c3", completed(&npc, Some(&use_id), None));
    assert!(
        again.refused[0].reason.contains("no intent in progress"),
        "{:?}",
        again.refused
    );
}

#[test]
fn an_unreported_walk_times_out_and_the_npc_decides_again() {
    let mut zone = village_in_game();
    enter(&mut zone, "square");
    let walk = first_walk(&mut zone);
    let npc = walk["npc"].as_str().expect("npc");
    let later = advance(&mut zone, 61);
    let failed = typed(&later, StreamKind::NpcEvents, "action_failed");
    let failed = of(&failed, npc);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["reason"], "timeout");
    assert_eq!(failed[0]["intent"], walk["id"]);
    let cancels = typed(&later, StreamKind::Intents, "cancel");
    assert!(
        of(&cancels, npc)
            .iter()
            .any(|c| c["cancelled"] == walk["id"] && c["reason"] == "timeout"),
        "{cancels:?}"
    );
}

#[test]
fn an_order_is_accepted_obeyed_and_reported_done() {
    let mut zone = village_in_game();
    enter(&mut zone, "square");
    advance(&mut zone, 2);
    let order = |provider: &str, action: &str| WorldEvent::Order {
        npc: "bram".into(),
        provider: provider.into(),
        action: action.into(),
        by: "ann".into(),
    };
    let refused = apply_as(&mut zone, "o0", order("moon", "eat_stew"));
    let refusals = typed(&refused.messages, StreamKind::NpcEvents, "order_refused");
    assert_eq!(refusals[0]["reason"], "unknown_provider");
    let given = apply_as(&mut zone, "o1", order("tavern", "eat_stew"));
    let accepted = typed(&given.messages, StreamKind::NpcEvents, "order_accepted");
    assert_eq!(accepted[0]["order"], "o1");
    assert_eq!(accepted[0]["by"], "ann");
    let twice = apply_as(&mut zone, "o1", order("tavern", "eat_stew"));
    assert_eq!(twice.refused[0].path, "id", "an order id is given once");

    let next = advance(&mut zone, 1);
    let walks = typed(&next, StreamKind::Intents, "navigate");
    let walk = of(&walks, "bram");
    assert_eq!(walk.len(), 1, "{next:?}");
    assert_eq!(walk[0]["to_room"], "tavern");
    let arrived = apply_as(&mut zone, "m", moved("bram", "tavern"));
    let uses = typed(&arrived.messages, StreamKind::Intents, "use");
    assert_eq!(uses[0]["action"], "eat_stew");
    assert_eq!(uses[0]["player_queued"], true);
    let done = apply_as(&mut zone, "c", completed("bram", None, None));
    let reported = typed(&done.messages, StreamKind::NpcEvents, "order_done");
    assert_eq!(reported.len(), 1, "{:?}", done.messages);
    assert_eq!(reported[0]["order"], "o1");
    assert_eq!(reported[0]["outcome"], "completed");

    // A withdrawn order: out of the queue, reported cancelled.
    apply_as(&mut zone, "o2", order("tavern", "play_dice"));
    apply_as(&mut zone, "o3", order("chapel", "pray"));
    let withdrawn = apply_as(
        &mut zone,
        "x",
        WorldEvent::OrderCancelled {
            npc: "bram".into(),
            order: "o3".into(),
        },
    );
    let reported = typed(&withdrawn.messages, StreamKind::NpcEvents, "order_done");
    assert_eq!(reported[0]["outcome"], "cancelled");
    let bram = zone.npc_index("bram").expect("bram");
    let queued: Vec<_> = zone.agents[bram]
        .queue
        .iter()
        .filter_map(|e| e.order.clone())
        .collect();
    assert_eq!(queued, ["o2"]);
}

#[test]
fn an_engaged_npc_decides_nothing_until_released() {
    let mut zone = village_in_game();
    enter(&mut zone, "square");
    let walk = first_walk(&mut zone);
    let npc = walk["npc"].as_str().expect("npc").to_owned();
    let engaged = apply_as(
        &mut zone,
        "f",
        WorldEvent::NpcEngaged {
            npc: npc.clone(),
            reason: "combat".into(),
        },
    );
    let cancels = typed(&engaged.messages, StreamKind::Intents, "cancel");
    assert_eq!(cancels[0]["reason"], "combat");
    assert_eq!(cancels[0]["cancelled"], walk["id"]);
    let meanwhile = advance(&mut zone, 90);
    let started = typed(&meanwhile, StreamKind::NpcEvents, "action_started");
    assert!(of(&started, &npc).is_empty(), "{started:?}");
    let released = apply_as(&mut zone, "r", WorldEvent::NpcReleased { npc: npc.clone() });
    assert_eq!(
        typed(&released.messages, StreamKind::NpcEvents, "npc_released").len(),
        1
    );
    let after = advance(&mut zone, 2);
    let started = typed(&after, StreamKind::NpcEvents, "action_started");
    assert_eq!(of(&started, &npc).len(), 1, "it decides afresh");
    let twice = apply_as(&mut zone, "r2", WorldEvent::NpcReleased { npc });
    assert_eq!(twice.refused.len(), 1);
}

#[test]
fn an_assigned_goal_is_reported_under_the_games_id_as_it_ends() {
    let mut zone = village();
    enter(&mut zone, "square");
    advance(&mut zone, 2);
    let assign =
        |id: &str, predicate: Value, deadline_hours: Option<f64>| WorldEvent::GoalAssigned {
            npc: "bjorn".into(),
            goal: AssignedGoal {
                id: id.into(),
                description: format!("quest {id}"),
                predicate,
                deadline_hours,
                priority: None,
            },
        };
    let easy = serde_json::json!({"predicate_type": "need_above", "need": "SURVIVAL", "min": 0.1});
    let given = apply_as(&mut zone, "g1", assign("q1", easy, None));
    let created = typed(&given.messages, StreamKind::NpcEvents, "goal_created");
    assert_eq!(created[0]["goal_id"], "q1");
    assert_eq!(created[0]["category"], "assigned");
    assert_eq!(created[0]["source"], "game");
    assert_eq!(created[0]["predicate"]["predicate_type"], "need_above");
    let hard = serde_json::json!({"predicate_type": "has_fact", "fact": "dragon_slain"});
    apply_as(&mut zone, "g2", assign("q2", hard, Some(1.0)));
    let bad = apply_as(
        &mut zone,
        "g3",
        assign("q3", serde_json::json!({"predicate_type": "wish"}), None),
    );
    assert_eq!(bad.refused[0].path, "goal.predicate");
    let hours = advance(&mut zone, 70);
    let completed = typed(&hours, StreamKind::NpcEvents, "goal_completed");
    assert!(
        of(&completed, "bjorn").iter().any(|g| g["goal_id"] == "q1"),
        "{completed:?}"
    );
    let failed = typed(&hours, StreamKind::NpcEvents, "goal_failed");
    let failed = of(&failed, "bjorn");
    assert!(failed.iter().any(|g| g["goal_id"] == "q2"), "{failed:?}");
}

#[test]
fn a_context_the_game_sets_stands_beside_the_weather_until_its_time() {
    let mut zone = village();
    let names = |zone: &Zone| {
        let mut names: Vec<String> = zone
            .world
            .contexts
            .iter()
            .map(|c| zone.vocabulary.name(c.name).to_owned())
            .collect();
        names.sort();
        names
    };
    let until = zone.game_time + 10;
    apply_as(
        &mut zone,
        "s",
        WorldEvent::ContextSet {
            name: "festival".into(),
            tag_multipliers: BTreeMap::from([("social".into(), 1.5)]),
            until: Some(until),
        },
    );
    apply_as(
        &mut zone,
        "w",
        WorldEvent::WeatherChanged {
            weather: "storm".into(),
        },
    );
    assert_eq!(names(&zone), ["festival", "storm"]);
    advance(&mut zone, 10);
    assert_eq!(names(&zone), ["storm"], "the festival is over");
    let cleared = apply_as(
        &mut zone,
        "c",
        WorldEvent::ContextCleared {
            name: "festival".into(),
        },
    );
    assert_eq!(cleared.refused[0].path, "name");
}

#[test]
fn insults_move_a_mood_into_a_lower_band_and_say_why() {
    let mut zone = village();
    enter(&mut zone, "market");
    advance(&mut zone, 60);
    let mut seen = Vec::new();
    for _ in 0..6 {
        send(&mut zone, social("insult", "marla", &[], Some(-1.0)));
        seen.extend(advance(&mut zone, 31));
    }
    let changes = typed(&seen, StreamKind::NpcEvents, "mood_changed");
    let marla = of(&changes, "marla");
    assert!(!marla.is_empty(), "{changes:?}");
    assert_eq!(marla[0]["cause"], "insult");
    assert_ne!(marla[0]["mood"], marla[0]["from"]);
    let ticks: Vec<u64> = marla
        .iter()
        .map(|m| m["game_time"].as_u64().expect("time"))
        .collect();
    assert!(
        ticks.windows(2).all(|w| w[1] - w[0] >= 30),
        "at most one per 30 ticks: {ticks:?}"
    );
}

#[test]
fn an_npc_promoted_out_of_background_is_placed_on_its_schedule_and_announced() {
    let mut zone = village_in_game();
    advance(&mut zone, 15 * 60 + 30);
    let mut out = ZoneOutput::default();
    let message = crate::bus::envelope::WorldMessage {
        header: crate::bus::envelope::header("p", "village", zone.game_time),
        event: WorldEvent::PlayerEntered {
            player: "ann".into(),
            room: "square".into(),
        },
    };
    zone.apply(&message, &live(), &mut out);
    let promoted = advance(&mut zone, 3);
    let relocated = typed(&promoted, StreamKind::NpcEvents, "npc_relocated");
    assert!(!relocated.is_empty(), "someone's schedule moved them");
    for event in &relocated {
        let index = zone
            .npc_index(event["npc"].as_str().expect("npc"))
            .expect("npc");
        let (room, _) = zone.room_name(zone.meta[index].room);
        assert_ne!(event["from"], event["to"]);
        assert!(
            event["to"] == room || zone.agents[index].running.is_some(),
            "{event}: now in {room}"
        );
    }
}

#[cfg(feature = "fault-injection")]
#[test]
fn a_failing_npc_is_held_with_its_intent_cancelled_and_an_admin_reinstates_it() {
    use crate::bus::envelope::header;
    use crate::zone::TickInputs;
    use crate::zone::tick::Fault;

    let mut zone = village_in_game();
    enter(&mut zone, "square");
    let walk = first_walk(&mut zone);
    let npc = walk["npc"].as_str().expect("npc").to_owned();
    let faults = BTreeMap::from([(npc.clone(), Fault::SlowMs(5))]);
    zone.config.tick.npc_budget_ms = 2.0;
    let clock = crate::runtime::wall_clock();
    let mut messages = Vec::new();
    for _ in 0..3 {
        let mut out = ZoneOutput::default();
        let inputs = TickInputs {
            faults: Some(&faults),
            ..TickInputs::live(&clock)
        };
        let message = crate::bus::envelope::WorldMessage {
            header: header(fresh_id("t"), "village", zone.game_time + 1),
            event: WorldEvent::TimeAdvanced,
        };
        zone.apply(&message, &inputs, &mut out);
        messages.extend(out.messages);
    }
    let failed = typed(&messages, StreamKind::NpcEvents, "npc_update_failed");
    assert_eq!(of(&failed, &npc).len(), 3, "slow counts as failing");
    let records = typed(&messages, StreamKind::World, "governor_decision");
    assert!(records.iter().all(|r| r["over_budget"][0] == npc.as_str()));
    let cancels = typed(&messages, StreamKind::Intents, "cancel");
    assert!(
        of(&cancels, &npc)
            .iter()
            .any(|c| c["reason"] == "demoted" && c["cancelled"] == walk["id"]),
        "{cancels:?}"
    );
    assert!(zone.isolation.is_held(&npc, None));
    let mut out = ZoneOutput::default();
    let reinstated = crate::bus::envelope::WorldMessage {
        header: header("a", "village", zone.game_time).from_geppetto(),
        event: WorldEvent::NpcReinstated { npc: npc.clone() },
    };
    zone.apply(&reinstated, &live(), &mut out);
    assert!(out.refused.is_empty(), "{:?}", out.refused);
    assert!(!zone.isolation.is_held(&npc, None));
    assert!(out.isolation_changed.is_some());
}
