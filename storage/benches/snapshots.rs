//! Snapshot write and load time (and size) for 10,000 and 100,000 NPCs on the memory, redb and
//! Redis stores, and world-event-log append throughput on memory and redb.
//!
//! Run: `cargo bench -p geppetto-storage`. The Redis store is measured against a private
//! `redis-server` on a loopback port (or `REDIS_URL`, which must be loopback). Encoded sizes
//! are printed once per NPC count.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use geppetto_storage::{
    EventLog, MemoryEventLog, MemorySnapshotStore, RedbFile, RedisSnapshotStore, Snapshot,
    SnapshotStore, StorageConfig, ZoneName,
};
use serde_json::json;
use support::redis_server::RedisServer;

const NPC_COUNTS: [usize; 2] = [10_000, 100_000];
const NEEDS: [&str; 6] = ["hunger", "energy", "social", "safety", "wealth", "comfort"];
const GOALS: [(&str, &str); 3] = [
    ("acquire", "iron_ore"),
    ("visit", "tavern"),
    ("befriend", "npc-000007"),
];
const RELATIONSHIPS_PER_NPC: usize = 10;

/// A deterministic stand-in for the service's zone state: per NPC 6 needs, 3 goals and 10
/// relationships, serialised as JSON.
fn zone_state_json(npcs: usize) -> Vec<u8> {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        seed >> 33
    };
    let npc_states: Vec<serde_json::Value> = (0..npcs)
        .map(|index| {
            let needs: serde_json::Map<String, serde_json::Value> = NEEDS
                .iter()
                .map(|need| {
                    (
                        (*need).to_owned(),
                        json!({"value": (next() % 1000) as f64 / 10.0, "decay_per_hour": (next() % 50) as f64 / 10.0}),
                    )
                })
                .collect();
            let goals: Vec<serde_json::Value> = GOALS
                .iter()
                .map(|(kind, target)| {
                    json!({"kind": kind, "target": target, "priority": next() % 5, "deadline_ticks": next() % 100_000})
                })
                .collect();
            let relationships: Vec<serde_json::Value> = (0..RELATIONSHIPS_PER_NPC)
                .map(|_| {
                    json!({
                        "other": format!("npc-{:06}", next() as usize % npcs),
                        "trust": (next() % 200) as f64 / 100.0 - 1.0,
                        "respect": (next() % 200) as f64 / 100.0 - 1.0,
                        "loyalty": (next() % 100) as f64 / 100.0,
                    })
                })
                .collect();
            json!({
                "id": format!("npc-{index:06}"),
                "archetype": "villager",
                "position": [next() % 512, next() % 512],
                "tier": "background",
                "needs": needs,
                "goals": goals,
                "relationships": relationships,
                "demoted": false,
                "failure_count": 0,
            })
        })
        .collect();
    serde_json::to_vec(&json!({"schema": 1, "npcs": npc_states})).unwrap_or_default()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|error| panic!("tokio runtime: {error}"))
}

fn bench_store(
    criterion: &mut Criterion,
    runtime: &tokio::runtime::Runtime,
    name: &str,
    store: &dyn SnapshotStore,
    payloads: &[(usize, Vec<u8>)],
) {
    let zone = ZoneName::new(format!("bench-{name}")).unwrap_or_else(|error| panic!("{error}"));
    let sequence = AtomicU64::new(1);
    let mut group = criterion.benchmark_group(format!("snapshot/{name}"));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for (npcs, payload) in payloads {
        let snapshot_for = |sequence: u64| Snapshot {
            zone: zone.clone(),
            sequence,
            last_event_id: format!("1700000000000-{sequence}"),
            game_time_ticks: sequence * 60,
            schema_version: 1,
            payload: payload.clone(),
        };
        let outcome = runtime
            .block_on(store.put(snapshot_for(sequence.fetch_add(1, Ordering::Relaxed))))
            .unwrap_or_else(|error| panic!("{error}"));
        println!(
            "snapshot/{name}/{npcs} NPCs: payload {} bytes, encoded {} bytes",
            payload.len(),
            outcome.encoded_bytes
        );
        group.throughput(Throughput::Bytes(payload.len() as u64));
        group.bench_function(format!("write/{npcs}"), |bencher| {
            bencher.iter_batched(
                || snapshot_for(sequence.fetch_add(1, Ordering::Relaxed)),
                |snapshot| {
                    runtime
                        .block_on(store.put(snapshot))
                        .unwrap_or_else(|error| panic!("{error}"))
                },
                BatchSize::PerIteration,
            );
        });
        group.bench_function(format!("load/{npcs}"), |bencher| {
            bencher.iter(|| {
                let latest = runtime
                    .block_on(store.latest_valid(&zone, 1))
                    .unwrap_or_else(|error| panic!("{error}"));
                black_box(latest.snapshot.map(|snapshot| snapshot.payload.len()))
            });
        });
    }
    group.finish();
}

fn snapshots(criterion: &mut Criterion) {
    let runtime = runtime();
    let payloads: Vec<(usize, Vec<u8>)> = NPC_COUNTS
        .iter()
        .map(|&npcs| (npcs, zone_state_json(npcs)))
        .collect();
    let config = StorageConfig::default();

    let memory = MemorySnapshotStore::new(&config).unwrap_or_else(|error| panic!("{error}"));
    bench_store(criterion, &runtime, "memory", &memory, &payloads);

    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let file = RedbFile::open(dir.path().join("bench.redb"), &config)
        .unwrap_or_else(|error| panic!("{error}"));
    bench_store(
        criterion,
        &runtime,
        "redb",
        &file.snapshot_store(),
        &payloads,
    );

    let server = RedisServer::start();
    let redis = runtime
        .block_on(RedisSnapshotStore::connect(&server.url, &config))
        .unwrap_or_else(|error| panic!("{error}"));
    bench_store(criterion, &runtime, "redis", &redis, &payloads);
}

fn event_log(criterion: &mut Criterion) {
    let event = br#"{"v":1,"type":"social_event","id":"evt-000001","zone":"village","game_time":1440,"kind":"insult","source":"npc-000001","target":"npc-000002"}"#;
    let batch: Vec<Vec<u8>> = (0..100).map(|_| event.to_vec()).collect();
    let zone = ZoneName::new("bench").unwrap_or_else(|error| panic!("{error}"));
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let file = RedbFile::open(dir.path().join("log.redb"), &StorageConfig::default())
        .unwrap_or_else(|error| panic!("{error}"));
    let memory = MemoryEventLog::new();
    let redb = file.event_log();
    let logs: [(&str, &dyn EventLog); 2] = [("memory", &memory), ("redb", &redb)];

    let mut group = criterion.benchmark_group("event_log");
    for (name, log) in logs {
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("{name}/append_one"), |bencher| {
            bencher.iter(|| {
                log.append(&zone, event)
                    .unwrap_or_else(|error| panic!("{error}"))
            });
        });
        group.throughput(Throughput::Elements(batch.len() as u64));
        group.bench_function(format!("{name}/append_batch_100"), |bencher| {
            bencher.iter(|| {
                log.append_batch(&zone, &batch)
                    .unwrap_or_else(|error| panic!("{error}"))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, snapshots, event_log);
criterion_main!(benches);
