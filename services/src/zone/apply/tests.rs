//! Applying world events to the village: social events (temper, reactive goals, memories,
//! damped needs) and schedule overrides.

use super::*;
use crate::bus::StreamKind;
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
                header: header(fresh_id("s"), "village", zone.game_time),
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
            .layers
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
            header: header(fresh_id("s"), "village", zone.game_time),
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
            .layers
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
        let (_, wellbeing) = zone.agents[index]
            .layers
            .wellbeing
            .as_deref()
            .expect("wellbeing");
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
            .layers
            .wellbeing
            .as_deref()
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
            .layers
            .wellbeing
            .as_deref()
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

    // A blow to comfort is damped to 0.15 of the range in one event.
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
        (drop - 0.15f64.min(before)).abs() < 1e-9,
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

/// Applies `events` (type and payload) to a village the game drives, each twice under the same
/// id: the second time changes nothing — no state, no output — and is refused as a duplicate.
#[test]
fn every_world_event_family_is_applied_once_under_its_id() {
    use crate::bus::envelope::parse_world;
    use serde_json::json;

    let mut zone = crate::zone::testing::village_in_game();
    enter(&mut zone, "square");
    advance(&mut zone, 2);
    // Two NPCs with an intent in progress, for the game's reports of their ends.
    let mut busy = zone
        .agents
        .iter()
        .zip(&zone.meta)
        .filter_map(|(agent, meta)| {
            let (intent, _) = meta.current_intent.as_deref()?;
            Some((agent.agent.id.clone(), intent.clone()))
        });
    let (done_npc, done_intent) = busy.next().expect("an NPC with an intent");
    let (failed_npc, failed_intent) = busy.next().expect("another NPC with an intent");
    drop(busy);
    let events = [
        ("time_advanced", json!({})),
        ("player_entered", json!({"player": "ann", "room": "market"})),
        ("player_left", json!({"player": "ann"})),
        (
            "provider_updated",
            json!({"provider": "tavern", "state": "closed", "capacity": 2}),
        ),
        (
            "social_event",
            json!({"kind": "gift", "source": "ann", "target": "piet", "deltas": {}, "mood": 0.3}),
        ),
        (
            "schedule_override",
            json!({"npc": "bjorn", "activity": "idle", "hours": 2.0}),
        ),
        (
            "action_completed",
            json!({"npc": done_npc, "intent": done_intent}),
        ),
        (
            "action_failed",
            json!({"npc": failed_npc, "intent": failed_intent, "reason": "blocked"}),
        ),
        ("npc_moved", json!({"npc": "bjorn", "room": "tavern"})),
        (
            "order",
            json!({"npc": "bram", "provider": "tavern", "action": "eat_stew", "by": "ann"}),
        ),
        ("npc_engaged", json!({"npc": "aldo", "reason": "dialogue"})),
        ("npc_released", json!({"npc": "aldo"})),
        (
            "goal_assigned",
            json!({"npc": "bjorn", "goal": {"id": "q1", "description": "a quest",
            "predicate": {"predicate_type": "need_above", "need": "SURVIVAL", "min": 0.99}}}),
        ),
        (
            "context_set",
            json!({"name": "harvest", "tag_multipliers": {"food": 1.5}}),
        ),
        ("context_cleared", json!({"name": "harvest"})),
        ("weather_changed", json!({"weather": "rain"})),
        (
            "say",
            json!({"speaker": "ann", "text": "hello Piet", "room": "market", "addressee": "piet"}),
        ),
        ("npc_despawned", json!({"npc": "vex"})),
    ];
    let state_of = |zone: &Zone| {
        let mut state = serde_json::to_value(zone.capture()).expect("state");
        for kept in ["recent_ids", "recent_id_times"] {
            state.as_object_mut().expect("object").remove(kept);
        }
        state
    };
    for (kind, payload) in events {
        let time = zone.game_time + u64::from(kind == "time_advanced");
        let mut envelope = json!({"v": 1, "type": kind, "id": format!("once-{kind}"),
                                  "zone": "village", "game_time": time});
        if let (Some(fields), serde_json::Value::Object(extra)) =
            (envelope.as_object_mut(), payload)
        {
            fields.extend(extra);
        }
        let message =
            parse_world(&envelope.to_string()).unwrap_or_else(|error| panic!("{kind}: {error:?}"));
        let mut first = ZoneOutput::default();
        zone.apply(&message, &live(), &mut first);
        assert!(
            first.refused.is_empty(),
            "{kind} applies: {:?}",
            first.refused
        );
        assert_eq!(first.applied, 1, "{kind}");
        let after_first = state_of(&zone);
        let mut again = ZoneOutput::default();
        zone.apply(&message, &live(), &mut again);
        assert_eq!(
            state_of(&zone),
            after_first,
            "{kind}: the second time changes no state"
        );
        assert!(
            again.messages.is_empty() && again.llm.is_empty() && again.handovers.is_empty(),
            "{kind}: the second time writes nothing: {:?}",
            again.messages
        );
        assert_eq!((again.applied, again.duplicates), (0, 1), "{kind}");
        assert_eq!(again.refused.len(), 1, "{kind}");
        assert_eq!(again.refused[0].path, "id");
        assert!(again.refused[0].reason.starts_with("duplicate"), "{kind}");
    }
}

#[test]
fn the_zones_own_settings_record_applies_every_time() {
    let mut zone = village();
    let settings = zone.settings_message();
    for _ in 0..2 {
        let mut out = ZoneOutput::default();
        zone.apply(&settings, &live(), &mut out);
        assert_eq!(
            (out.applied, out.duplicates),
            (1, 0),
            "zone_settings is exempt"
        );
    }
}

#[test]
fn a_window_restored_from_a_snapshot_still_knows_its_ids() {
    let mut zone = village();
    let out = apply_as(&mut zone, "gift-1", social("gift", "piet", &[], None));
    assert_eq!(out.applied, 1);
    let saved = zone.capture();
    let text = serde_json::to_string(&saved).expect("json");
    let restored =
        Zone::restored(village(), serde_json::from_str(&text).expect("state")).expect("restored");
    let mut restored = restored;
    let again = apply_as(&mut restored, "gift-1", social("gift", "piet", &[], None));
    assert_eq!(
        again.duplicates, 1,
        "a recovered zone drops what the live one applied"
    );
}

#[test]
fn a_player_leaves_the_room_it_names_only_while_it_is_still_there() {
    let mut zone = village();
    let left = |room: Option<&str>| WorldEvent::PlayerLeft {
        player: "ann".into(),
        room: room.map(str::to_owned),
    };
    let market = zone.rooms.room("market").expect("market");
    enter(&mut zone, "square");
    // The game reports the next room before it reports leaving the last.
    enter(&mut zone, "market");
    send(&mut zone, left(Some("square")));
    assert_eq!(
        zone.presence.room_of("ann"),
        Some(market),
        "still in the market"
    );
    let mut out = ZoneOutput::default();
    let unknown = WorldMessage {
        header: header(fresh_id("l"), "village", zone.game_time),
        event: left(Some("atlantis")),
    };
    zone.apply(&unknown, &live(), &mut out);
    assert_eq!(out.refused[0].path, "room");
    send(&mut zone, left(Some("market")));
    assert_eq!(zone.presence.room_of("ann"), None);
    enter(&mut zone, "square");
    send(&mut zone, left(None));
    assert_eq!(
        zone.presence.room_of("ann"),
        None,
        "without a room: wherever it is"
    );
}
