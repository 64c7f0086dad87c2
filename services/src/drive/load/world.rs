//! The load generator's synthetic zones: a world of N NPCs written straight into JSON (20 to a
//! room, three providers a room, four needs an NPC), players placed in all its rooms or in a
//! few spread along it, and the zone built over it with the governor out of the way.

use std::fmt::Write as _;

use serde_json::Value;

use crate::bus::envelope::{WorldEvent, WorldMessage, header};
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::content::world_file::{NpcSpec, WorldFile, parse_world_json};
use crate::drive::error::DriveError;
use crate::zone::isolation::IsolationState;
use crate::zone::{IntegrationConfig, TickConfig, TickInputs, Zone, ZoneConfig, ZoneError};

/// NPCs per synthetic room.
pub const LOAD_NPCS_PER_ROOM: usize = 20;
/// The synthetic zone's name (with several, each is named `load-0`, `load-1`, …).
pub const LOAD_ZONE: &str = "load";

/// What a synthetic world is called in errors.
const SYNTHETIC: &str = "synthetic";

/// The synthetic world of zone `zone` as JSON, written straight into one string: a
/// 100,000-NPC world is 25 MB of text, and building it as a `serde_json::Value` tree first
/// would hold twenty times that. [`build_zone`] does not read it: it builds the zone from the
/// world without its NPCs ([`synthetic_frame`]) and then one NPC at a time ([`synthetic_npc`]).
pub fn synthetic_world(zone: &str, npcs: usize) -> String {
    let mut out = synthetic_frame(zone, npcs);
    // The frame ends with its empty NPC list, `[]}`.
    out.truncate(out.len() - 2);
    for n in 0..npcs {
        let comma = if n == 0 { "" } else { "," };
        let _ = write!(out, "{comma}{}", synthetic_npc(n));
    }
    out.push_str("]}");
    out
}

/// The synthetic world of zone `zone` for `npcs` NPCs as JSON, without the NPCs: its rooms
/// (20 NPCs' worth each) and providers.
pub fn synthetic_frame(zone: &str, npcs: usize) -> String {
    let rooms = npcs.div_ceil(LOAD_NPCS_PER_ROOM).max(1);
    let mut out = String::with_capacity(256 * npcs + 700 * rooms + 256);
    let zone = Value::String(zone.to_owned());
    // Writing into a `String` cannot fail.
    let _ = write!(
        out,
        r#"{{"zone":{zone},"seed":1,"start_game_time":0,"rooms":["#
    );
    for r in 0..rooms {
        let comma = if r == 0 { "" } else { "," };
        let next = if r + 1 < rooms {
            format!(r#""r{}""#, r + 1)
        } else {
            String::new()
        };
        let _ = write!(out, r#"{comma}{{"id":"r{r}","neighbours":[{next}]}}"#);
    }
    out.push_str(r#"],"providers":["#);
    for r in 0..rooms {
        let comma = if r == 0 { "" } else { "," };
        let _ = write!(out, "{comma}{}", room_providers(r));
    }
    out.push_str(r#"],"npcs":[]}"#);
    out
}

/// Room `r`'s three providers (work, food, rest) as JSON, on a grid of rooms 30 m apart.
fn room_providers(r: usize) -> String {
    let (x, z) = ((r % 100) as f64 * 30.0, (r / 100) as f64 * 30.0);
    let provider = |id: &str, position: (f64, f64), capacity: u32, action: &str| {
        let (px, pz) = position;
        format!(
            r#"{{"id":"{id}{r}","room":"r{r}","position":[{px:?},{pz:?}],"capacity":{capacity},"actions":[{action}]}}"#
        )
    };
    let action = |id: &str, tag: &str, hours: f64, deltas: &str| {
        format!(
            r#"{{"id":"{id}","tags":["{tag}"],"duration_hours":{hours:?},"deltas":{{{deltas}}},"radius":20}}"#
        )
    };
    format!(
        "{},{},{}",
        provider(
            "work",
            (x, z),
            12,
            &action("work", "work", 1.0, r#""DUTY":40,"ENERGY":-5"#)
        ),
        provider(
            "food",
            (x + 5.0, z),
            8,
            &action("eat", "food", 0.5, r#""HUNGER":40"#)
        ),
        provider(
            "rest",
            (x, z + 5.0),
            8,
            &action("nap", "rest", 0.75, r#""ENERGY":30"#)
        ),
    )
}

/// NPC `n` of a synthetic world as JSON: a worker in room `n / 20` with needs started at
/// values spread by `n`.
pub fn synthetic_npc(n: usize) -> String {
    let r = n / LOAD_NPCS_PER_ROOM;
    let x = (r % 100) as f64 * 30.0 + (n % 5) as f64;
    let z = (r / 100) as f64 * 30.0 + ((n / 5) % 4) as f64;
    let need = |name: &str, value: usize, rate: f64| {
        format!(
            r#"{{"name":"{name}","value":{value},"min":0,"max":100,"updater":{{"kind":"linear_decay","rate":{rate:?}}}}}"#
        )
    };
    format!(
        r#"{{"id":"n{n:06}","room":"r{r}","archetype":"worker","position":[{x:?},{z:?}],"considerations":[{},{},{},{}]}}"#,
        need("HUNGER", 30 + (n * 37) % 60, 6.0),
        need("ENERGY", 30 + (n * 53) % 60, 4.0),
        need("DUTY", 20 + (n * 71) % 70, 8.0),
        need("FUN", 50, 0.0),
    )
}

/// The rooms that get a player: all of them, or `count` spread evenly along the list.
pub(crate) fn rooms_with_players(rooms: &[String], count: Option<usize>) -> Vec<String> {
    match count {
        None => rooms.to_vec(),
        Some(count) => {
            let count = count.clamp(1, rooms.len().max(1));
            let step = rooms.len() / count;
            (0..count)
                .filter_map(|i| rooms.get(i * step.max(1)).cloned())
                .collect()
        }
    }
}

/// The zones' names: `load` alone, else `load-0`, `load-1`, ….
pub(crate) fn zone_names(zones: usize) -> Vec<String> {
    match zones {
        0 | 1 => vec![LOAD_ZONE.to_owned()],
        n => (0..n).map(|i| format!("{LOAD_ZONE}-{i}")).collect(),
    }
}

/// One synthetic zone of a run, built.
pub struct LoadZone {
    /// The zone, its players in and its NPCs built.
    pub zone: Zone,
    /// Rooms with a player.
    pub player_rooms: usize,
    /// Rooms in all.
    pub rooms: usize,
    /// The NPCs a player can see, whose replies are immediate: where social events and lines
    /// said are aimed.
    pub targets: Vec<String>,
}

/// The load generator's zone settings. Measure, do not shed: the generator reports raw tick
/// times. No game carries the intents out: geppetto's timer ends actions.
fn load_zone_config() -> ZoneConfig {
    ZoneConfig {
        governor: crate::zone::governor::GovernorConfig {
            tick_budget_ms_soft: f64::MAX,
            tick_budget_ms_hard: f64::MAX,
            ..Default::default()
        },
        tick: TickConfig {
            npc_budget_ms: f64::MAX,
            ..TickConfig::default()
        },
        integration: IntegrationConfig::simulated(),
        ..ZoneConfig::default()
    }
}

/// Builds zone `name`: its synthetic world, players in its rooms, then its NPCs (joining after
/// the players, so they start in their tiers instead of waiting for catch-up). `npcs` and
/// `player_rooms` are `--npcs` and `--player-rooms`.
pub fn build_zone(
    name: &str,
    (npcs, player_rooms): (usize, Option<usize>),
    profiles: &ProfileLibrary,
    sets: &SetLibrary,
) -> Result<LoadZone, DriveError> {
    let refused = |source: ZoneError| DriveError::Zone {
        world: SYNTHETIC.to_owned(),
        source,
    };
    // The zone is built from the world without its NPCs, then one NPC at a time, each spec
    // parsed, built and dropped: the build never holds the world's text or its specs whole.
    let text = synthetic_frame(name, npcs);
    let world: WorldFile = parse_world_json(SYNTHETIC, &text)?;
    drop(text);
    let mut zone = Zone::new(
        &world,
        profiles,
        sets,
        load_zone_config(),
        IsolationState::default(),
    )
    .map_err(refused)?;
    zone.reserve_npcs(npcs);
    let clock = crate::runtime::wall_clock();
    let all_rooms: Vec<String> = world.rooms.iter().map(|r| r.id.clone()).collect();
    // The zone holds what it needs of the world's specs: they are not kept through the NPCs.
    drop(world);
    let rooms = rooms_with_players(&all_rooms, player_rooms);
    let mut setup = crate::zone::ZoneOutput::default();
    for (i, room) in rooms.iter().enumerate() {
        zone.apply(
            &WorldMessage {
                header: header(format!("setup{i}"), name, 0),
                event: WorldEvent::PlayerEntered {
                    player: format!("p{i}"),
                    room: room.clone(),
                },
            },
            &TickInputs::live(&clock),
            &mut setup,
        );
    }
    let mut targets = Vec::new();
    for n in 0..npcs {
        let path = format!("npcs[{n}]");
        let npc: NpcSpec =
            geppetto_core::wire::parse(&synthetic_npc(n)).map_err(|e| DriveError::Zone {
                world: SYNTHETIC.to_owned(),
                source: ZoneError::Spec(format!("{path}: {e}")),
            })?;
        zone.add_npc(&path, &npc).map_err(refused)?;
        if rooms.contains(&npc.room) {
            targets.push(npc.agent.id);
        }
    }
    Ok(LoadZone {
        zone,
        player_rooms: rooms.len(),
        rooms: all_rooms.len(),
        targets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn players_stand_in_every_room_or_in_a_few_spread_along_the_zone() {
        let rooms: Vec<String> = (0..10).map(|r| format!("r{r}")).collect();
        assert_eq!(rooms_with_players(&rooms, None), rooms);
        assert_eq!(rooms_with_players(&rooms, Some(2)), ["r0", "r5"]);
        assert_eq!(rooms_with_players(&rooms, Some(0)), ["r0"]);
        assert_eq!(rooms_with_players(&rooms, Some(99)).len(), 10);
    }

    #[test]
    fn one_zone_is_named_load_and_several_are_numbered() {
        assert_eq!(zone_names(1), ["load"]);
        assert_eq!(zone_names(3), ["load-0", "load-1", "load-2"]);
    }
}
