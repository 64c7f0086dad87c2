//! The world-event parser and writer against fixed texts: what they wrote and answered before the
//! event was one serde enum, byte for byte, and the events added since.

use super::*;
use crate::bus::envelope::{DeadLetter, dead_letter_envelope, header};

fn check_refused(text: &str, kind: &str, path: &str) {
    let error = parse_world(text).expect_err("refused");
    assert_eq!(
        (error.kind.as_str(), error.path.as_str()),
        (kind, path),
        "{error}"
    );
}

#[test]
fn world_events_parse_and_round_trip() {
    let text = r#"{"v":1,"type":"player_entered","id":"e1","zone":"village","game_time":420,"player":"ann","room":"square","extra":true}"#;
    let message = parse_world(text).expect("parses");
    assert_eq!(message.header.game_time, 420);
    assert_eq!(
        message.event,
        WorldEvent::PlayerEntered {
            player: "ann".into(),
            room: "square".into()
        }
    );
    let again = parse_world(&message.to_json()).expect("round trip");
    assert_eq!(again, message);
    let tick = parse_world(r#"{"v":1,"type":"time_advanced","id":"t","zone":"z","game_time":5}"#)
        .expect("parses");
    assert_eq!(tick.event, WorldEvent::TimeAdvanced);
}

#[test]
fn bad_world_events_name_type_and_path() {
    check_refused("not json", "unknown", ".");
    check_refused("[1]", "unknown", ".");
    check_refused(
        r#"{"v":1,"id":"a","zone":"z","game_time":1}"#,
        "unknown",
        "type",
    );
    check_refused(
        r#"{"v":1,"type":"player_entered","id":"a","zone":"z","game_time":1,"player":"p"}"#,
        "player_entered",
        ".",
    );
    check_refused(
        r#"{"v":1,"type":"player_entered","id":"a","zone":"z","game_time":1,"player":"p","room":3}"#,
        "player_entered",
        "room",
    );
    check_refused(
        r#"{"v":1,"type":"time_advanced","id":"a","zone":"z","game_time":-1}"#,
        "time_advanced",
        "game_time",
    );
    check_refused(
        r#"{"v":2,"type":"time_advanced","id":"a","zone":"z","game_time":1}"#,
        "time_advanced",
        "v",
    );
    check_refused(
        r#"{"v":1,"type":"dance","id":"a","zone":"z","game_time":1}"#,
        "dance",
        "type",
    );
    check_refused(
        r#"{"v":1,"type":"social_event","id":"a","zone":"z","game_time":1,"kind":"theft","source":"p","target":"n","deltas":{"THREAT":"lots"}}"#,
        "social_event",
        "deltas.THREAT",
    );
}

/// One message of every event type (and both sides of their options), under an awkward zone.
fn samples() -> Vec<WorldMessage> {
    let h = |id: &str| header(id, "vill\"age", 42);
    let events = vec![
        WorldEvent::TimeAdvanced,
        WorldEvent::PlayerEntered {
            player: "ann".into(),
            room: "square".into(),
        },
        WorldEvent::PlayerLeft {
            player: "ann".into(),
            room: None,
        },
        WorldEvent::NpcSpawned {
            npc: serde_json::json!({"id": "kit", "room": "forge", "position": [0.5, 1], "zeta": null, "alpha": {"b": 1, "a": 2.0}}),
        },
        WorldEvent::NpcDespawned { npc: "kit".into() },
        WorldEvent::NpcTransfer {
            npc: "kit".into(),
            to_zone: "town".into(),
            room: "gate".into(),
        },
        WorldEvent::NpcArrived(Box::new(Arrival {
            from_zone: "town".into(),
            npc: serde_json::json!({"resident": {"id": "kit"}}),
            needs: BTreeMap::from([("hunger".into(), 0.25), ("EN".into(), 1.0)]),
            rumours: vec![],
        })),
        WorldEvent::ProviderUpdated {
            provider: "tavern".into(),
            state: Some("open".into()),
            capacity: None,
        },
        WorldEvent::ProviderUpdated {
            provider: "tavern".into(),
            state: None,
            capacity: Some(3),
        },
        WorldEvent::SocialEvent {
            kind: "theft".into(),
            source: "p".into(),
            target: "n".into(),
            deltas: BTreeMap::from([("THREAT".into(), 2.0), ("A".into(), -0.125)]),
            mood: Some(-0.5),
            about: None,
        },
        WorldEvent::SocialEvent {
            kind: "gift".into(),
            source: "p".into(),
            target: "n".into(),
            deltas: BTreeMap::new(),
            mood: None,
            about: Some("x".into()),
        },
        WorldEvent::ScheduleOverride {
            npc: "n".into(),
            activity: "worship".into(),
            location: Some("{home}".into()),
            tags: vec!["holy".into()],
            hours: 2.0,
        },
        WorldEvent::ScheduleOverride {
            npc: "n".into(),
            activity: "guard".into(),
            location: None,
            tags: vec![],
            hours: 0.1,
        },
        WorldEvent::ActionCompleted {
            npc: "n".into(),
            intent: None,
            outcome: None,
            resources: Default::default(),
        },
        WorldEvent::ActionCompleted {
            npc: "n".into(),
            intent: Some("i".into()),
            outcome: None,
            resources: Default::default(),
        },
        WorldEvent::ActionFailed {
            npc: "n".into(),
            intent: Some("i".into()),
            reason: "door \u{e9} locked\n".into(),
        },
        WorldEvent::WeatherChanged {
            weather: "rain".into(),
        },
        WorldEvent::Say {
            speaker: "p".into(),
            room: None,
            text: "hi".into(),
            addressee: Some("n".into()),
        },
        WorldEvent::GovernorDecision(GovernorDecision {
            tick: 7,
            demote: vec!["a".into()],
            restore: vec![],
            skipped: vec!["b".into(), "c".into()],
            over_budget: vec![],
        }),
        WorldEvent::ActionCompleted {
            npc: "n".into(),
            intent: Some("i".into()),
            outcome: Some("two horseshoes".into()),
            resources: BTreeMap::from([("gold".into(), 3.0)]),
        },
        WorldEvent::ResourcesChanged {
            npc: "n".into(),
            changes: BTreeMap::from([("gold".into(), -5.0), ("bread".into(), 1.0)]),
            reason: Some("a purse stolen".into()),
        },
    ];
    events
        .into_iter()
        .enumerate()
        .map(|(i, event)| {
            let header = h(&format!("e{i}"));
            WorldMessage {
                header: if GEPPETTO_ONLY.contains(&event.kind()) {
                    header.from_geppetto()
                } else {
                    header
                },
                event,
            }
        })
        .collect()
}

/// What `to_json` wrote for [`samples`] before the event was one serde enum: byte for byte.
const WRITTEN: &[&str] = &[
    r#"{"game_time":42,"id":"e0","type":"time_advanced","v":1,"zone":"vill\"age"}"#,
    r#"{"game_time":42,"id":"e1","player":"ann","room":"square","type":"player_entered","v":1,"zone":"vill\"age"}"#,
    r#"{"game_time":42,"id":"e2","player":"ann","type":"player_left","v":1,"zone":"vill\"age"}"#,
    r#"{"game_time":42,"id":"e3","npc":{"alpha":{"a":2.0,"b":1},"id":"kit","position":[0.5,1],"room":"forge","zeta":null},"type":"npc_spawned","v":1,"zone":"vill\"age"}"#,
    r#"{"game_time":42,"id":"e4","npc":"kit","type":"npc_despawned","v":1,"zone":"vill\"age"}"#,
    r#"{"game_time":42,"id":"e5","npc":"kit","room":"gate","to_zone":"town","type":"npc_transfer","v":1,"zone":"vill\"age"}"#,
    r#"{"from_zone":"town","game_time":42,"id":"e6","needs":{"EN":1.0,"hunger":0.25},"npc":{"resident":{"id":"kit"}},"origin":"geppetto","rumours":[],"type":"npc_arrived","v":1,"zone":"vill\"age"}"#,
    r#"{"game_time":42,"id":"e7","provider":"tavern","state":"open","type":"provider_updated","v":1,"zone":"vill\"age"}"#,
    r#"{"capacity":3,"game_time":42,"id":"e8","provider":"tavern","type":"provider_updated","v":1,"zone":"vill\"age"}"#,
    r#"{"deltas":{"A":-0.125,"THREAT":2.0},"game_time":42,"id":"e9","kind":"theft","mood":-0.5,"source":"p","target":"n","type":"social_event","v":1,"zone":"vill\"age"}"#,
    r#"{"about":"x","deltas":{},"game_time":42,"id":"e10","kind":"gift","source":"p","target":"n","type":"social_event","v":1,"zone":"vill\"age"}"#,
    r#"{"activity":"worship","game_time":42,"hours":2.0,"id":"e11","location":"{home}","npc":"n","tags":["holy"],"type":"schedule_override","v":1,"zone":"vill\"age"}"#,
    r#"{"activity":"guard","game_time":42,"hours":0.1,"id":"e12","npc":"n","tags":[],"type":"schedule_override","v":1,"zone":"vill\"age"}"#,
    r#"{"game_time":42,"id":"e13","npc":"n","type":"action_completed","v":1,"zone":"vill\"age"}"#,
    r#"{"game_time":42,"id":"e14","intent":"i","npc":"n","type":"action_completed","v":1,"zone":"vill\"age"}"#,
    r#"{"game_time":42,"id":"e15","intent":"i","npc":"n","reason":"door é locked\n","type":"action_failed","v":1,"zone":"vill\"age"}"#,
    r#"{"game_time":42,"id":"e16","type":"weather_changed","v":1,"weather":"rain","zone":"vill\"age"}"#,
    r#"{"addressee":"n","game_time":42,"id":"e17","speaker":"p","text":"hi","type":"say","v":1,"zone":"vill\"age"}"#,
    r#"{"demote":["a"],"game_time":42,"id":"e18","origin":"geppetto","restore":[],"skipped":["b","c"],"tick":7,"type":"governor_decision","v":1,"zone":"vill\"age"}"#,
    r#"{"game_time":42,"id":"e19","intent":"i","npc":"n","outcome":"two horseshoes","resources":{"gold":3.0},"type":"action_completed","v":1,"zone":"vill\"age"}"#,
    r#"{"changes":{"bread":1.0,"gold":-5.0},"game_time":42,"id":"e20","npc":"n","reason":"a purse stolen","type":"resources_changed","v":1,"zone":"vill\"age"}"#,
];

#[test]
fn world_messages_are_written_as_they_always_were() {
    let written: Vec<String> = samples().iter().map(WorldMessage::to_json).collect();
    assert_eq!(written, WRITTEN);
    for (message, text) in samples().iter().zip(WRITTEN) {
        if message.event.check().is_err() {
            continue; // a sample spec the content layer would refuse
        }
        assert_eq!(&parse_world(text).expect(text), message, "{text}");
    }
    let letter = DeadLetter {
        source_id: "1-0".into(),
        event_type: "say".into(),
        path: "text".into(),
        reason: "r".into(),
        original: "{\"x\":1}".into(),
    };
    assert_eq!(
        dead_letter_envelope(&header("d", "z", 3), &letter),
        r#"{"event_type":"say","game_time":3,"id":"d","original":"{\"x\":1}","path":"text","reason":"r","source_id":"1-0","type":"dead_letter","v":1,"zone":"z"}"#
    );
}

fn bad_inputs() -> Vec<&'static str> {
    vec![
        "not json",
        "[1]",
        "{\"type\":3}",
        r#"{"v":1,"id":"a","zone":"z","game_time":1}"#,
        r#"{"v":1,"type":"player_entered","id":"a","zone":"z","game_time":1,"player":"p"}"#,
        r#"{"v":1,"type":"player_entered","id":"a","zone":"z","game_time":1,"player":"p","room":3}"#,
        r#"{"v":1,"type":"time_advanced","id":"a","zone":"z","game_time":-1}"#,
        r#"{"v":1,"type":"time_advanced","id":"a","zone":"z","game_time":"noon"}"#,
        r#"{"v":1,"type":"time_advanced","zone":"z","game_time":1}"#,
        r#"{"v":2,"type":"time_advanced","id":"a","zone":"z","game_time":1}"#,
        r#"{"v":1,"type":"dance","id":"a","zone":"z","game_time":1}"#,
        r#"{"v":1,"type":"social_event","id":"a","zone":"z","game_time":1,"kind":"theft","source":"p","target":"n","deltas":{"THREAT":"lots"}}"#,
        r#"{"v":1,"type":"social_event","id":"a","zone":"z","game_time":1,"kind":"theft","source":"p","target":"n","mood":1.5}"#,
        r#"{"v":1,"type":"social_event","id":"a","zone":"z","game_time":1,"kind":"theft","source":"p","target":"n","deltas":null}"#,
        r#"{"v":1,"type":"provider_updated","id":"a","zone":"z","game_time":1,"provider":"t","capacity":-1}"#,
        r#"{"v":1,"type":"provider_updated","id":"a","zone":"z","game_time":1,"provider":"t","capacity":1099511627776,"state":null}"#,
        r#"{"v":1,"type":"schedule_override","id":"a","zone":"z","game_time":1,"npc":"n","activity":"x","hours":0}"#,
        r#"{"v":1,"type":"schedule_override","id":"a","zone":"z","game_time":1,"npc":"n","activity":"x","hours":3,"tags":["a",1]}"#,
        r#"{"v":1,"type":"schedule_override","id":"a","zone":"z","game_time":1,"npc":"n","activity":"x"}"#,
        r#"{"v":1,"type":"action_failed","id":"a","zone":"z","game_time":1,"npc":"n"}"#,
        r#"{"v":1,"type":"action_failed","id":"a","zone":"z","game_time":1,"npc":"n","reason":null,"intent":"q"}"#,
        r#"{"v":1,"type":"action_failed","id":"a","zone":"z","game_time":1,"npc":"n","reason":4}"#,
        r#"{"v":1,"type":"action_completed","id":"a","zone":"z","game_time":1,"npc":"n","intent":7}"#,
        r#"{"v":1,"type":"npc_spawned","id":"a","zone":"z","game_time":1}"#,
        r#"{"v":1,"type":"npc_spawned","id":"a","zone":"z","game_time":1,"npc":{"id":"kit","room":"forge","position":["NaN",0]}}"#,
        r#"{"v":1,"type":"npc_spawned","id":"a","zone":"z","game_time":1,"npc":{"id":"kit","room":"forge","position":[0,0]}}"#,
        r#"{"v":1,"type":"npc_arrived","id":"a","zone":"z","game_time":1,"from_zone":"t","npc":{"id":"kit","room":"forge","position":[0,0]},"needs":{"h":0.5}}"#,
        r#"{"v":1,"type":"npc_arrived","id":"a","zone":"z","game_time":1,"from_zone":"t","npc":{"id":"kit","room":"forge","position":[0,0]},"needs":{"h":"x"}}"#,
        r#"{"v":1,"type":"npc_arrived","id":"a","zone":"z","game_time":1,"from_zone":"t","npc":{"resident":{"id":3}}}"#,
        r#"{"v":1,"type":"npc_arrived","id":"a","zone":"z","game_time":1,"npc":{}}"#,
        r#"{"v":1,"type":"governor_decision","id":"a","zone":"z","game_time":1,"tick":2,"demote":["a"]}"#,
        r#"{"v":1,"type":"governor_decision","id":"a","zone":"z","game_time":1,"demote":["a"]}"#,
        r#"{"v":1,"type":"governor_decision","id":"a","zone":"z","game_time":1,"tick":1,"skipped":[1]}"#,
        r#"{"v":1,"type":"say","id":"a","zone":"z","game_time":1,"speaker":"p","text":"hi","room":false}"#,
        r#"{"v":1,"type":"weather_changed","id":"a","zone":"z","game_time":1}"#,
        r#"{"v":1,"type":"npc_transfer","id":"a","zone":"z","game_time":1,"npc":"n","to_zone":"b","room":"r"}"#,
        r#"{"v":1,"type":"player_left","id":"a","zone":"z","game_time":1,"player":null}"#,
        r#"{"v":1,"type":"npc_despawned","id":"a","zone":"z","game_time":1.5,"npc":"n"}"#,
        r#"{"v":1,"type":"player_entered","id":"a","zone":"z","game_time":1,"player":"p","room":"r","type2":1}"#,
    ]
}

/// What [`parse_world`] answered for [`bad_inputs`] before the event was one serde enum.
const ANSWERED: &[&str] = &[
    r#"REFUSED unknown event: .: not JSON: expected ident at line 1 column 2"#,
    r#"REFUSED unknown event: .: expected a JSON object"#,
    r#"REFUSED unknown event: type: expected a string"#,
    r#"REFUSED unknown event: type: missing field"#,
    r#"REFUSED player_entered event: .: missing field `room`"#,
    r#"REFUSED player_entered event: room: invalid type: integer `3`, expected a string"#,
    r#"REFUSED time_advanced event: game_time: invalid value: integer `-1`, expected u64"#,
    r#"REFUSED time_advanced event: game_time: invalid type: string "noon", expected u64"#,
    r#"REFUSED time_advanced event: .: missing field `id`"#,
    r#"REFUSED time_advanced event: v: unsupported version 2 (this build reads 1)"#,
    r#"REFUSED dance event: type: unknown world event type `dance`"#,
    r#"REFUSED social_event event: deltas.THREAT: invalid type: string "lots", expected f64"#,
    r#"REFUSED social_event event: mood: must be between -1 and 1"#,
    r#"REFUSED social_event event: deltas: invalid type: null, expected a map"#,
    r#"REFUSED provider_updated event: capacity: invalid value: integer `-1`, expected u32"#,
    r#"REFUSED provider_updated event: capacity: invalid value: integer `1099511627776`, expected u32"#,
    r#"REFUSED schedule_override event: hours: must be a positive number of game hours"#,
    r#"REFUSED schedule_override event: tags[1]: invalid type: integer `1`, expected a string"#,
    r#"REFUSED schedule_override event: .: missing field `hours`"#,
    r#"PARSED {"game_time":1,"id":"a","npc":"n","reason":"unspecified","type":"action_failed","v":1,"zone":"z"}"#,
    r#"PARSED {"game_time":1,"id":"a","intent":"q","npc":"n","reason":"unspecified","type":"action_failed","v":1,"zone":"z"}"#,
    r#"REFUSED action_failed event: reason: invalid type: integer `4`, expected a string"#,
    r#"REFUSED action_completed event: intent: invalid type: integer `7`, expected a string"#,
    r#"REFUSED npc_spawned event: npc: invalid type: null, expected struct NpcSpec"#,
    r#"REFUSED npc_spawned event: npc: invalid type: string "NaN", expected f64"#,
    r#"PARSED {"game_time":1,"id":"a","npc":{"id":"kit","position":[0,0],"room":"forge"},"type":"npc_spawned","v":1,"zone":"z"}"#,
    r#"REFUSED npc_arrived event: type: `npc_arrived` is written by geppetto only, never by the game"#,
    r#"REFUSED npc_arrived event: needs.h: invalid type: string "x", expected f64"#,
    r#"REFUSED npc_arrived event: npc.resident.id: invalid type: integer `3`, expected a string"#,
    r#"REFUSED npc_arrived event: .: missing field `from_zone`"#,
    r#"REFUSED governor_decision event: type: `governor_decision` is written by geppetto only, never by the game"#,
    r#"REFUSED governor_decision event: .: missing field `tick`"#,
    r#"REFUSED governor_decision event: skipped[0]: invalid type: integer `1`, expected a string"#,
    r#"REFUSED say event: room: invalid type: boolean `false`, expected a string"#,
    r#"REFUSED weather_changed event: .: missing field `weather`"#,
    r#"PARSED {"game_time":1,"id":"a","npc":"n","room":"r","to_zone":"b","type":"npc_transfer","v":1,"zone":"z"}"#,
    r#"REFUSED player_left event: player: invalid type: null, expected a string"#,
    r#"REFUSED npc_despawned event: game_time: invalid type: floating point `1.5`, expected u64"#,
    r#"PARSED {"game_time":1,"id":"a","player":"p","room":"r","type":"player_entered","v":1,"zone":"z"}"#,
];

#[test]
fn refusals_name_the_type_the_path_and_the_reason_as_they_always_did() {
    let answered: Vec<String> = bad_inputs()
        .into_iter()
        .map(|text| match parse_world(text) {
            Ok(message) => format!("PARSED {}", message.to_json()),
            Err(error) => format!("REFUSED {error}"),
        })
        .collect();
    assert_eq!(answered, ANSWERED);
}

#[test]
fn the_games_newer_events_parse_and_geppettos_own_need_their_origin() {
    let answer = |text: &str| match parse_world(text) {
        Ok(message) => format!("PARSED {}", message.to_json()),
        Err(error) => format!("REFUSED {error}"),
    };
    let cases = [
        (
            r#"{"v":1,"type":"npc_moved","id":"a","zone":"z","game_time":1,"npc":"n","room":"forge"}"#,
            r#"PARSED {"game_time":1,"id":"a","npc":"n","room":"forge","type":"npc_moved","v":1,"zone":"z"}"#,
        ),
        (
            r#"{"v":1,"type":"action_completed","id":"a","zone":"z","game_time":1,"npc":"n","intent":"i","outcome":"two horseshoes"}"#,
            r#"PARSED {"game_time":1,"id":"a","intent":"i","npc":"n","outcome":"two horseshoes","type":"action_completed","v":1,"zone":"z"}"#,
        ),
        (
            r#"{"v":1,"type":"order","id":"o1","zone":"z","game_time":1,"npc":"n","provider":"anvil","action":"work","by":"ann"}"#,
            r#"PARSED {"action":"work","by":"ann","game_time":1,"id":"o1","npc":"n","provider":"anvil","type":"order","v":1,"zone":"z"}"#,
        ),
        (
            r#"{"v":1,"type":"order","id":"o1","zone":"z","game_time":1,"npc":"n","provider":"anvil","action":"work"}"#,
            "REFUSED order event: .: missing field `by`",
        ),
        (
            r#"{"v":1,"type":"order_cancelled","id":"a","zone":"z","game_time":1,"npc":"n","order":"o1"}"#,
            r#"PARSED {"game_time":1,"id":"a","npc":"n","order":"o1","type":"order_cancelled","v":1,"zone":"z"}"#,
        ),
        (
            r#"{"v":1,"type":"npc_engaged","id":"a","zone":"z","game_time":1,"npc":"n","reason":"combat"}"#,
            r#"PARSED {"game_time":1,"id":"a","npc":"n","reason":"combat","type":"npc_engaged","v":1,"zone":"z"}"#,
        ),
        (
            r#"{"v":1,"type":"npc_released","id":"a","zone":"z","game_time":1,"npc":"n"}"#,
            r#"PARSED {"game_time":1,"id":"a","npc":"n","type":"npc_released","v":1,"zone":"z"}"#,
        ),
        (
            r#"{"v":1,"type":"goal_assigned","id":"a","zone":"z","game_time":1,"npc":"n","goal":{"id":"q1","description":"pray","predicate":{"predicate_type":"has_fact","fact":"prayed"},"deadline_hours":0}}"#,
            "REFUSED goal_assigned event: goal.deadline_hours: must be a positive number of game hours",
        ),
        (
            r#"{"v":1,"type":"goal_assigned","id":"a","zone":"z","game_time":1,"npc":"n","goal":{"id":"q1","description":"pray","predicate":{},"reward":3}}"#,
            "REFUSED goal_assigned event: goal.reward: unknown field `reward`, expected one of `id`, `description`, `predicate`, `deadline_hours`, `priority`",
        ),
        (
            r#"{"v":1,"type":"context_set","id":"a","zone":"z","game_time":1,"name":"winter","tag_multipliers":{"outdoor":0.5},"until":900}"#,
            r#"PARSED {"game_time":1,"id":"a","name":"winter","tag_multipliers":{"outdoor":0.5},"type":"context_set","until":900,"v":1,"zone":"z"}"#,
        ),
        (
            r#"{"v":1,"type":"context_set","id":"a","zone":"z","game_time":1,"name":"winter","tag_multipliers":{"outdoor":1e300}}"#,
            "REFUSED context_set event: tag_multipliers.outdoor: must be a number from 0 to 100",
        ),
        (
            r#"{"v":1,"type":"context_cleared","id":"a","zone":"z","game_time":1,"name":"winter"}"#,
            r#"PARSED {"game_time":1,"id":"a","name":"winter","type":"context_cleared","v":1,"zone":"z"}"#,
        ),
        (
            r#"{"v":1,"type":"npc_reinstated","id":"a","zone":"z","game_time":1,"npc":"n"}"#,
            "REFUSED npc_reinstated event: type: `npc_reinstated` is written by geppetto only, never by the game",
        ),
        (
            r#"{"v":1,"type":"breaker_reset","id":"a","zone":"z","game_time":1,"archetype":"smith","origin":"geppetto"}"#,
            r#"PARSED {"archetype":"smith","game_time":1,"id":"a","origin":"geppetto","type":"breaker_reset","v":1,"zone":"z"}"#,
        ),
        (
            r#"{"v":1,"type":"governor_decision","id":"a","zone":"z","game_time":1,"tick":2,"demote":["a"],"origin":"the game"}"#,
            "REFUSED governor_decision event: type: `governor_decision` is written by geppetto only, never by the game",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(answer(text), expected, "{text}");
    }
}

/// The texts above, and each of [`WRITTEN`] changed one field at a time: the field dropped,
/// given twice, or given a value of every JSON kind.
fn texts_and_their_variations() -> Vec<String> {
    let values = [
        "null",
        "0",
        "-1",
        "-0",
        "1.5",
        "1e2",
        "\"s\"",
        "true",
        "[]",
        "{}",
        "[1]",
        "{\"a\":1}",
    ];
    let mut texts: Vec<String> = samples().iter().map(WorldMessage::to_json).collect();
    texts.extend(bad_inputs().into_iter().map(str::to_owned));
    for text in WRITTEN {
        texts.push(text.to_string());
        texts.push(format!(" \n{text}\t"));
        texts.push(format!("{text} x"));
        texts.push(format!("[{text}]"));
        let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(text) else {
            panic!("{text} is an object");
        };
        let fields: Vec<(String, String)> = fields
            .into_iter()
            .map(|(key, value)| (serde_json::to_string(&key).expect("key"), value.to_string()))
            .collect();
        let object = |fields: &[(String, String)]| {
            let inner: Vec<String> = fields.iter().map(|(k, v)| format!("{k}:{v}")).collect();
            format!("{{{}}}", inner.join(","))
        };
        for at in 0..fields.len() {
            let mut dropped = fields.clone();
            dropped.remove(at);
            texts.push(object(&dropped));
            let mut twice = fields.clone();
            twice.push(fields[at].clone());
            texts.push(object(&twice));
            for value in values {
                let mut changed = fields.clone();
                changed[at].1 = value.to_owned();
                texts.push(object(&changed));
                let mut again = fields.clone();
                again.push((fields[at].0.clone(), value.to_owned()));
                texts.push(object(&again));
            }
        }
    }
    texts
}

#[test]
fn the_direct_read_answers_as_the_tree_read_wherever_it_answers() {
    let texts = texts_and_their_variations();
    let mut direct = 0;
    for text in &texts {
        if let Some(read) = direct::read_direct(text) {
            assert_eq!(Ok(read), read_tree(text), "{text}");
            direct += 1;
        }
    }
    // Every well-formed message takes the direct read.
    for text in WRITTEN {
        assert!(direct::read_direct(text).is_some(), "{text}");
    }
    // The variations reach both reads: some answered directly, some only through the tree.
    assert!(
        direct > WRITTEN.len() && direct < texts.len(),
        "{direct} of {}",
        texts.len()
    );
}

#[test]
fn the_direct_write_gives_the_trees_bytes() {
    let mut messages = samples();
    // Every message the variations parse to, with and without geppetto's origin.
    for text in texts_and_their_variations() {
        if let Ok(message) = parse_world(&text) {
            messages.push(message);
        }
    }
    let parsed = messages.len();
    for message in messages.clone().into_iter().take(parsed) {
        let mut marked = message;
        marked.header = marked.header.from_geppetto();
        messages.push(marked);
    }
    let mut direct = 0;
    for message in &messages {
        let tree = message.to_json_through_tree();
        assert_eq!(message.to_json(), tree, "{message:?}");
        if write::write_direct(&message.header, message.event.kind(), &message.event).is_some() {
            direct += 1;
        }
    }
    // Every event takes the direct write.
    assert_eq!(direct, messages.len());
}
