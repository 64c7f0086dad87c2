//! Scripted world events for the end-to-end tests and benchmarks: a tick at a time, players
//! wandering from room to room, and thefts, insults, gifts and threats by Vex; and the intent
//! stream they yield, read back with duplicates dropped.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// Who and where a script's events involve.
pub struct Cast<'a> {
    /// Rooms the players wander through, in turn.
    pub rooms: &'a [&'a str],
    /// Social event kinds, in turn.
    pub kinds: &'a [&'a str],
    /// NPCs the social events are aimed at, in turn.
    pub targets: &'a [&'a str],
}

/// Zone `zone`'s world events of ticks `from..=to` (game time 420 + tick): a player entering a
/// room every 9 ticks, a social event every 7, and a `time_advanced` each tick.
pub fn script(zone: &str, from: u64, to: u64, cast: &Cast) -> Vec<String> {
    let envelope = |kind: &str, id: String, time: u64, fields: Value| {
        let mut message = json!({"v": 1, "type": kind, "id": id, "zone": zone, "game_time": time});
        if let (Value::Object(m), Value::Object(f)) = (&mut message, fields) {
            m.extend(f);
        }
        message.to_string()
    };
    let mut lines = Vec::new();
    for tick in from..=to {
        let now = 420 + tick;
        if tick % 9 == 1 {
            let room = cast.rooms[(tick as usize / 9) % cast.rooms.len()];
            lines.push(envelope(
                "player_entered",
                format!("p{tick}"),
                now,
                json!({"player": format!("player{}", tick % 3), "room": room}),
            ));
        }
        if tick % 7 == 3 {
            let i = tick as usize / 7;
            lines.push(envelope(
                "social_event",
                format!("s{tick}"),
                now,
                json!({"kind": cast.kinds[i % cast.kinds.len()], "source": "vex",
                       "target": cast.targets[i % cast.targets.len()], "deltas": {}}),
            ));
        }
        lines.push(envelope(
            "time_advanced",
            format!("t{tick}"),
            now,
            json!({}),
        ));
    }
    lines
}

/// An intent stream's `bodies` with duplicates (same id) dropped, first occurrence kept; a
/// duplicate must repeat its first occurrence exactly (a re-emitted intent is identical).
pub fn deduplicated(bodies: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut order = Vec::new();
    for body in bodies {
        let id = serde_json::from_str::<Value>(&body).expect("json")["id"]
            .as_str()
            .expect("intent id")
            .to_owned();
        match seen.get(&id) {
            Some(first) => assert_eq!(first, &body, "a re-emitted intent is identical"),
            None => {
                seen.insert(id, body.clone());
                order.push(body);
            }
        }
    }
    order
}
