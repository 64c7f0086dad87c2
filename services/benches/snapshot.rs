//! Snapshot and replay figures (issue #10), printed as a table:
//!
//! ```text
//! cargo bench -p geppetto-service --bench snapshot            # 10,000 and 100,000 NPCs
//! cargo bench -p geppetto-service --bench snapshot -- 10000   # one size
//! ```
//!
//! For each size: a synthetic zone (the load generator's world, a player in every room, 30 ticks
//! run first) is captured, serialised and written to a fresh redb file (fsync included), then
//! loaded, decoded and laid over a freshly built zone; best of three runs each. Then replay
//! throughput: a 1,000-NPC zone folds 20,000 logged world events (ticks, player moves, social
//! events) as `geppetto replay` does.

use std::time::Instant;

use geppetto_service::bus::envelope::{WorldEvent, WorldMessage, header};
use geppetto_service::content::profiles::ProfileLibrary;
use geppetto_service::content::sets::SetLibrary;
use geppetto_service::content::world_file::{WorldFile, parse_world_json};
use geppetto_service::drive::load::{LOAD_ZONE, synthetic_world};
use geppetto_service::runtime::recovery::replay_messages;
use geppetto_service::zone::isolation::IsolationState;
use geppetto_service::zone::{TickInputs, ZONE_STATE_SCHEMA_VERSION, Zone, ZoneConfig, ZoneState};
use geppetto_storage::{RedbFile, Snapshot, SnapshotStore, StorageConfig, ZoneName};

const RUNS: usize = 3;

fn world(npcs: usize) -> WorldFile {
    parse_world_json("synthetic", &synthetic_world(LOAD_ZONE, npcs)).expect("synthetic world")
}

fn zone(world: &WorldFile) -> Zone {
    let mut config = ZoneConfig::default();
    config.governor.tick_budget_ms_soft = f64::MAX;
    config.governor.tick_budget_ms_hard = f64::MAX;
    Zone::new(
        world,
        &ProfileLibrary::embedded().expect("profiles"),
        &SetLibrary::embedded().expect("sets"),
        config,
        IsolationState::default(),
    )
    .expect("zone")
}

fn message(id: String, time: u64, event: WorldEvent) -> WorldMessage {
    WorldMessage {
        header: header(id, LOAD_ZONE, time),
        event,
    }
}

/// Players in every room, then `ticks` ticks, one message each.
fn busy_log(world: &WorldFile, ticks: u64, social_per_tick: usize) -> Vec<WorldMessage> {
    let mut log: Vec<WorldMessage> = world
        .rooms
        .iter()
        .enumerate()
        .map(|(i, room)| {
            message(
                format!("p{i}"),
                0,
                WorldEvent::PlayerEntered {
                    player: format!("p{i}"),
                    room: room.id.clone(),
                },
            )
        })
        .collect();
    let npcs = &world.npcs;
    for tick in 1..=ticks {
        for k in 0..social_per_tick {
            let i = (tick as usize * 31 + k * 7) % npcs.len();
            let j = (i + 1 + k) % npcs.len();
            log.push(message(
                format!("s{tick}-{k}"),
                tick,
                WorldEvent::SocialEvent {
                    kind: ["insult", "gift", "praise"][k % 3].into(),
                    source: npcs[i].agent.id.clone(),
                    target: npcs[j].agent.id.clone(),
                    deltas: Default::default(),
                    mood: None,
                    about: None,
                },
            ));
        }
        log.push(message(format!("t{tick}"), tick, WorldEvent::TimeAdvanced));
    }
    log
}

fn best(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times[0]
}

fn snapshot_figures(npcs: usize, runtime: &tokio::runtime::Runtime) {
    let world = world(npcs);
    let mut live = zone(&world);
    let clock = geppetto_service::runtime::wall_clock();
    replay_messages(
        &mut live,
        &busy_log(&world, 30, 0),
        &TickInputs::live(&clock),
    );
    let dir = std::env::temp_dir().join(format!("geppetto-bench-snapshot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let (mut capture, mut encode, mut write, mut load, mut decode, mut restore) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut bytes = 0;
    for run in 0..RUNS {
        let path = dir.join(format!("run{run}.redb"));
        let _ = std::fs::remove_file(&path);
        let store = RedbFile::open(&path, &StorageConfig::default())
            .expect("redb")
            .snapshot_store();
        let key = ZoneName::new(LOAD_ZONE).expect("zone");
        let t = Instant::now();
        let state = live.capture();
        capture.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let payload = serde_json::to_vec(&state).expect("json");
        encode.push(t.elapsed().as_secs_f64());
        drop(state);
        let t = Instant::now();
        let put = runtime
            .block_on(store.put(Snapshot {
                zone: key.clone(),
                sequence: 1,
                last_event_id: "30".into(),
                game_time_ticks: live.game_time,
                schema_version: ZONE_STATE_SCHEMA_VERSION,
                payload,
            }))
            .expect("put");
        write.push(t.elapsed().as_secs_f64());
        bytes = put.encoded_bytes;
        let t = Instant::now();
        let loaded = runtime
            .block_on(store.latest_valid(&key, ZONE_STATE_SCHEMA_VERSION))
            .expect("load")
            .snapshot
            .expect("snapshot");
        load.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let state: ZoneState = serde_json::from_slice(&loaded.payload).expect("decode");
        decode.push(t.elapsed().as_secs_f64());
        let fresh = zone(&world);
        let t = Instant::now();
        let restored = Zone::restored(fresh, state).expect("restore");
        restore.push(t.elapsed().as_secs_f64());
        assert_eq!(restored.game_time, live.game_time);
        let _ = std::fs::remove_file(&path);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let ms = |s: f64| s * 1000.0;
    println!(
        "| {npcs} | {:.1} MB | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} |",
        bytes as f64 / 1e6,
        ms(best(&mut capture)),
        ms(best(&mut encode)),
        ms(best(&mut write)),
        ms(best(&mut load)),
        ms(best(&mut decode)),
        ms(best(&mut restore)),
    );
}

fn replay_figures() {
    let world = world(1000);
    let log = busy_log(&world, 2000, 9);
    let mut rates = Vec::new();
    for _ in 0..RUNS {
        let mut replayed = zone(&world);
        let clock = geppetto_service::runtime::wall_clock();
        let t = Instant::now();
        for chunk in log.chunks(1024) {
            replay_messages(&mut replayed, chunk, &TickInputs::live(&clock));
        }
        rates.push(log.len() as f64 / t.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "replay: {} events (2,000 ticks, 1,000 NPCs, players everywhere): best {:.0} events/s, worst {:.0} events/s",
        log.len(),
        rates[RUNS - 1],
        rates[0]
    );
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000, 100_000]
    } else {
        sizes
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "| NPCs | size | capture ms | encode ms | redb write ms | redb load ms | decode ms | restore ms |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for npcs in sizes {
        snapshot_figures(npcs, &runtime);
    }
    replay_figures();
}
