//! Scripted world events for the end-to-end tests and benchmarks: a tick at a time, players
//! wandering from room to room, thefts, insults, gifts and threats by Vex, and the game's side
//! of the contract (completions, NPCs moved, a player's orders, an NPC engaged and released);
//! and the intent stream they yield, read back with duplicates dropped.

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

/// The crowded village's cast: players through seven rooms; thefts, insults, gifts and threats
/// by Vex at villagers and at residents of [`more_residents`].
pub const CROWDED_VILLAGE: Cast<'static> = Cast {
    rooms: &[
        "square", "market", "forge", "tavern", "farm", "chapel", "lane",
    ],
    kinds: &["theft", "insult", "gift", "threat"],
    targets: &["piet", "bjorn", "ulla", "x010", "x042", "aldo", "x117"],
};

/// `count` residents `x000`… to add to the village (a `residents:` list of its world file),
/// cloned from its residents' patterns: a smith at the forge, a guard in the lane, a merchant
/// and a thief at the market, an innkeeper, a farmer, a priest, a child, each at home in the
/// hearths.
pub fn more_residents(count: usize) -> Vec<Value> {
    let patterns = [
        ("blacksmith", "forge", "anvil"),
        ("guard", "lane", "gatehouse"),
        ("merchant", "market", "market"),
        ("innkeeper", "tavern", "taproom"),
        ("farmer", "farm", "barley"),
        ("priest", "chapel", ""),
        ("child", "square", ""),
        ("thief", "market", ""),
    ];
    (0..count)
        .map(|n| {
            let (archetype, room, work) = patterns[n % patterns.len()];
            let mut places = json!({"home": "hearths"});
            if !work.is_empty() {
                places["workplace"] = json!(work);
            }
            json!({"id": format!("x{n:03}"), "archetype": archetype, "room": room,
                   "position": [(n % 17) as f64 - 8.0, (n % 11) as f64 - 5.0], "places": places})
        })
        .collect()
}

/// Zone `zone`'s world events of ticks `from..=to` (game time 420 + tick): a player entering a
/// room every 9 ticks, a social event every 7, the game's reports (a completion of the
/// target's current intent every 5 ticks, an NPC moved every 11, an order every 13, an NPC
/// engaged and released every 17), and a `time_advanced` each tick. A report that does not fit
/// (no intent in progress, an NPC not engaged) is dead-lettered, the same way every run.
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
        let target = cast.targets[tick as usize % cast.targets.len()];
        let game = match tick {
            t if t % 5 == 2 => Some(("action_completed", json!({"npc": target}))),
            t if t % 11 == 4 => Some((
                "npc_moved",
                json!({"npc": target, "room": cast.rooms[t as usize % cast.rooms.len()]}),
            )),
            t if t % 13 == 6 => Some((
                "order",
                json!({"npc": target, "provider": "tavern", "action": "eat_stew", "by": "player0"}),
            )),
            t if t % 17 == 8 => Some(("npc_engaged", json!({"npc": target, "reason": "combat"}))),
            t if t % 17 == 12 => Some(("npc_released", json!({"npc": target}))),
            _ => None,
        };
        if let Some((kind, fields)) = game {
            lines.push(envelope(kind, format!("g{tick}"), now, fields));
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
