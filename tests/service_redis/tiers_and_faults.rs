//! End-to-end over a real Redis: tiers change with hysteresis over the bus; with the
//! `fault-injection` feature, a panicking NPC is demoted while the others tick on and the
//! governor demotes and skips under a slow one; the demo runs over Redis in a zone of its own.

#[cfg(feature = "fault-injection")]
use std::sync::Arc;

use geppetto_service::bus::StreamKind;
#[cfg(feature = "fault-injection")]
use geppetto_service::runtime::actor::ZoneHooks;
#[cfg(feature = "fault-injection")]
use geppetto_service::zone::Zone;
use geppetto_service::zone::isolation::IsolationState;
#[cfg(feature = "fault-injection")]
use geppetto_storage::SnapshotStore;
#[cfg(feature = "fault-injection")]
use serde_json::Value;
use support::redis_server::RedisServer;
use support::village::{calm, village};

use crate::zone_loop::{Running, advance, ann_enters, drain, event, key};
#[cfg(feature = "fault-injection")]
use crate::zone_loop::{ZONE, parsed};

/// The ticks of `range` at which Kit was Active, from its `tier_changed` events.
#[cfg(feature = "fault-injection")]
fn kit_active_ticks(events: &[Value], range: std::ops::RangeInclusive<u64>) -> Vec<u64> {
    let changes: Vec<(u64, &str)> = events
        .iter()
        .filter(|m| m["type"] == "tier_changed" && m["npc"] == "kit")
        .filter_map(|m| Some((m["game_time"].as_u64()?, m["to"].as_str()?)))
        .collect();
    range
        .filter(|&t| {
            changes
                .iter()
                .rev()
                .find(|(at, _)| *at <= t)
                .is_some_and(|(_, to)| *to == "active")
        })
        .collect()
}

#[test]
fn tiers_change_with_hysteresis_over_the_bus() {
    let server = RedisServer::start();
    let running = Running::start(&server, village(calm(), IsolationState::default()), None);
    let world = key(StreamKind::World);
    ann_enters(&server, "p1", "woods");
    advance(&server, 421..=425);
    server.xadd(
        &world,
        &event("player_left", "p2", 425, r#""player":"ann""#),
    );
    advance(&server, 426..=435);
    let events = drain(&server, 435);
    running.finish();
    let wren: Vec<(u64, String)> = events
        .iter()
        .filter(|m| m["type"] == "tier_changed" && m["npc"] == "wren")
        .map(|m| {
            (
                m["game_time"].as_u64().unwrap_or_default(),
                m["to"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    // Promoted on the first tick; demoted only on the third tick after the player left.
    assert_eq!(
        wren,
        [(421, "active".to_owned()), (428, "background".to_owned())]
    );
}

#[cfg(feature = "fault-injection")]
#[test]
fn a_panicking_npc_is_demoted_after_three_failures_while_the_others_tick() {
    use geppetto_service::zone::Fault;
    let server = RedisServer::start();
    let zone = village(calm(), IsolationState::default());
    let hooks = ZoneHooks::default().with_fault("bram", Fault::Panic);
    let store: Arc<dyn SnapshotStore> = Arc::new(
        geppetto_storage::MemorySnapshotStore::new(&geppetto_storage::StorageConfig::default())
            .expect("store"),
    );
    let running = Running::start_with(&server, zone, hooks, Some(Arc::clone(&store)));
    ann_enters(&server, "p1", "forge");
    advance(&server, 421..=440);
    let events = drain(&server, 440);
    running.finish();
    let bram: Vec<&str> = events
        .iter()
        .filter(|m| m["npc"] == "bram" && m["type"] != "tier_changed")
        .filter_map(|m| m["type"].as_str())
        .collect();
    assert_eq!(
        bram,
        [
            "npc_update_failed",
            "npc_update_failed",
            "npc_update_failed",
            "npc_demoted"
        ]
    );
    let others = events
        .iter()
        .filter(|m| m["type"] == "action_started" && m["npc"] != "bram")
        .count();
    assert!(others >= 5, "the others keep ticking ({others})");
    let restored = geppetto_service::runtime::block_on(1, async move {
        geppetto_service::runtime::zone_loop::load_isolation(&*store, ZONE).await
    })
    .expect("runtime");
    assert!(
        restored.0.demoted_npcs.contains("bram"),
        "the demotion persists"
    );
    assert_eq!(restored.0.failure_counts.get("bram"), Some(&3));
}

#[cfg(feature = "fault-injection")]
#[test]
fn the_governor_demotes_and_skips_under_a_slow_npc() {
    use geppetto_service::content::profiles::ProfileLibrary;
    use geppetto_service::content::sets::SetLibrary;
    use geppetto_service::content::world_file::embedded_village;
    use geppetto_service::zone::{Fault, ZoneConfig};
    let server = RedisServer::start();
    // The ten villagers given inline only: the archetype residents' first ticks (everyone
    // planning at once) would blur what this measures in an unoptimised build.
    let mut world = embedded_village().expect("village");
    world.residents.clear();
    // Ceilings fifty times the documented 4/5 ms, so that only Kit's injected slowness can
    // reach them: on a loaded machine an unoptimised build's work before Kit's turn can pass
    // 4 ms and demote Kit itself. Without the per-NPC budget (its own test is the zone's): a
    // slow Kit stays in the tick instead of being held after three slow updates.
    let mut config = ZoneConfig::default();
    config.governor.tick_budget_ms_soft = 200.0;
    config.governor.tick_budget_ms_hard = 250.0;
    config.tick.npc_budget_ms = 60_000.0;
    let zone = Zone::new(
        &world,
        &ProfileLibrary::embedded().expect("profiles"),
        &SetLibrary::embedded().expect("sets"),
        config,
        IsolationState::default(),
    )
    .expect("zone");
    // Kit stands with the player, so while Active it is processed first; every update takes
    // 300 ms > the 250 ms hard ceiling. The catch-up budget (5 promotions a tick, those bound
    // for Active first, by id) makes it Active within the first two ticks.
    let hooks = ZoneHooks::default().with_fault("kit", Fault::SlowMs(300));
    let running = Running::start_with(&server, zone, hooks, None);
    let world = key(StreamKind::World);
    ann_enters(&server, "p1", "square");
    // The game holds Kit in a conversation, so it stays in the square (free, it may walk off
    // to an action elsewhere and leave the Active tier).
    server.xadd(
        &world,
        &event(
            "npc_engaged",
            "e1",
            420,
            r#""npc":"kit","reason":"dialogue""#,
        ),
    );
    advance(&server, 421..=426);
    let events = drain(&server, 426);
    running.finish();
    let exceeded: Vec<u64> = events
        .iter()
        .filter(|m| m["type"] == "tick_budget_exceeded")
        .filter_map(|m| m["game_time"].as_u64())
        .collect();
    // The rule is checked on the ticks Kit was Active, read from its tier changes (made at a
    // tick's start, before any update): all but the first two at the latest.
    let kit_active = kit_active_ticks(&events, 421..=426);
    assert!(
        kit_active.len() >= 4,
        "kit was Active from its promotion on: {kit_active:?}"
    );
    assert!(
        kit_active.iter().all(|t| exceeded.contains(t)),
        "every tick with kit Active hit the hard ceiling: Active {kit_active:?}, exceeded {exceeded:?}"
    );
    // Each of those ticks logged its decision in the world stream, before its outputs: the
    // NPCs after Kit skipped, never Kit itself.
    let decisions: Vec<Value> = parsed(&server.bodies(&world))
        .into_iter()
        .filter(|m| m["type"] == "governor_decision")
        .filter(|m| {
            m["game_time"]
                .as_u64()
                .is_some_and(|t| kit_active.contains(&t))
        })
        .collect();
    assert_eq!(decisions.len(), kit_active.len(), "{decisions:?}");
    for decision in &decisions {
        let skipped = decision["skipped"].as_array().map_or(0, Vec::len);
        assert!(skipped >= 1, "{decision}");
        assert!(
            !decision["skipped"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|n| n == "kit"),
            "{decision}"
        );
    }
    // Held in its conversation, Kit starts nothing of its own.
    let kit_actions = events
        .iter()
        .filter(|m| m["npc"] == "kit" && m["type"] == "action_started")
        .count();
    assert_eq!(kit_actions, 0);
}

#[test]
fn the_demo_runs_over_redis_in_a_zone_of_its_own_and_never_deletes_one_in_use() {
    let server = RedisServer::start();
    let demo = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_geppetto"))
            .args([
                "demo",
                "--hours",
                "1",
                "--speed",
                "3000",
                "--redis",
                &server.url,
            ])
            .args(extra)
            .output()
            .expect("run")
    };
    let output = demo(&[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Bram the smith starts"), "{stdout}");
    let intents = server.bodies(&key(StreamKind::Intents)).len();
    assert!(intents > 0);
    let world = server.bodies(&key(StreamKind::World)).len();
    // Its feed's own group acknowledged what it read.
    let pending: Vec<redis::Value> = redis::cmd("XPENDING")
        .arg(key(StreamKind::Intents))
        .arg("demo-feed")
        .query(
            &mut redis::Client::open(server.url.as_str())
                .and_then(|c| c.get_connection())
                .expect("connection"),
        )
        .expect("xpending");
    assert_eq!(
        redis::from_redis_value::<u64>(pending[0].clone()).ok(),
        Some(0)
    );

    // Again on the same zone: refused, and nothing deleted.
    let again = demo(&[]);
    assert!(!again.status.success());
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(
        said.contains("--zone") && said.contains("--reset"),
        "{said}"
    );
    assert_eq!(server.bodies(&key(StreamKind::World)).len(), world);
    // A zone of its own runs beside it; --reset starts the village afresh.
    assert!(demo(&["--zone", "demo2"]).status.success());
    assert_eq!(server.bodies(&key(StreamKind::World)).len(), world);
    assert!(demo(&["--reset"]).status.success());
    assert!(server.bodies(&key(StreamKind::World)).len() < world * 2);
}
