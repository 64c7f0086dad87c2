//! Scripted world events for the end-to-end tests and benchmarks: a tick at a time, players
//! wandering from room to room, and thefts, insults, gifts and threats by Vex.

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
