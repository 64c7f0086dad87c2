//! Crash recovery end to end: `geppetto serve` over a private `redis-server` folds a scripted
//! world (the village with a few hundred residents, a couple of thousand world events) once
//! without interruption and once killed with SIGKILL at 20 seeded points and restarted each
//! time. The de-duplicated intent stream of the second run equals the first's exactly, every
//! world event is processed, and the final snapshot equals the uninterrupted run's state.

// Shared test support: this test uses the server, its URL and XADD.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use geppetto_storage::{SnapshotStore, StorageConfig, ZoneName};
use serde_json::{Value, json};
use support::redis_server::RedisServer;
use support::serve::Serve;
use support::world_script;

const ZONE: &str = "village";
const EXTRA_RESIDENTS: usize = 200;
const TICKS: u64 = 800;
const KILLS: usize = 20;

/// The village plus `EXTRA_RESIDENTS` more, cloned from its residents' patterns.
fn world_dir(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/worlds/village");
    let world = dir.join("village");
    std::fs::create_dir_all(&world).expect("world dir");
    for entry in std::fs::read_dir(&root).expect("village") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), world.join(entry.file_name())).expect("copy");
    }
    let residents = world_script::more_residents(EXTRA_RESIDENTS);
    std::fs::write(
        world.join("residents_more.yaml"),
        serde_json::to_string(&json!({ "residents": residents })).expect("yaml is json"),
    )
    .expect("residents");
    world
}

/// The script: a tick at a time, players wandering, thefts, insults and gifts.
fn script() -> Vec<String> {
    world_script::script(ZONE, 1, TICKS, &world_script::CROWDED_VILLAGE)
}

fn config_file(dir: &Path, world: &Path, url: &str) -> PathBuf {
    let path = dir.join("serve.toml");
    std::fs::write(
        &path,
        format!(
            "worlds = ['{}']\n\
             [bus]\nkind = 'redis'\n[bus.redis]\nurl = '{url}'\nread_block_ms = 100\n\
             [clock]\nkind = 'external'\n\
             [consumer]\nbatch_max_messages = 16\nblock_ms = 100\n\
             [governor]\ntick_budget_ms_soft = 600000.0\ntick_budget_ms_hard = 600000.0\n\
             [tick]\nnpc_budget_ms = 600000.0\n\
             [storage]\nsnapshot_every_ticks = 10\n\
             [admin]\naddress = ''\n",
            world.display()
        ),
    )
    .expect("config");
    path
}

struct Redis {
    connection: redis::Connection,
}

impl Redis {
    fn new(url: &str) -> Self {
        let client = redis::Client::open(url).expect("url");
        Self {
            connection: client.get_connection().expect("connection"),
        }
    }

    fn last_world_id(&mut self) -> String {
        let reply: redis::streams::StreamRangeReply = redis::cmd("XREVRANGE")
            .arg(format!("geppetto:{{{ZONE}}}:world"))
            .arg("+")
            .arg("-")
            .arg("COUNT")
            .arg(1)
            .query(&mut self.connection)
            .expect("xrevrange");
        reply.ids.first().map(|e| e.id.clone()).unwrap_or_default()
    }

    /// The group's last delivered id and pending count (None before the group exists).
    fn group(&mut self) -> Option<(String, u64)> {
        let groups: Vec<BTreeMap<String, redis::Value>> = redis::cmd("XINFO")
            .arg("GROUPS")
            .arg(format!("geppetto:{{{ZONE}}}:world"))
            .query(&mut self.connection)
            .unwrap_or_default();
        let group = groups.into_iter().next()?;
        let text =
            |v: &redis::Value| -> String { redis::from_redis_value(v.clone()).unwrap_or_default() };
        let last = group.get("last-delivered-id").map(text)?;
        let pending = group
            .get("pending")
            .and_then(|v| redis::from_redis_value::<u64>(v.clone()).ok())
            .unwrap_or(0);
        Some((last, pending))
    }

    fn wait_for_progress_past(&mut self, id: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if self.group().is_some_and(|(last, _)| newer(&last, id)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the service made no progress past {id}");
    }

    /// Waits until the group has read and acknowledged the whole world stream (whose end
    /// moves once more as the zone logs its settings when it starts).
    fn wait_until_done(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            let end = self.last_world_id();
            if self.group() == Some((end, 0)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "the world stream was not processed to {}: {:?}",
            self.last_world_id(),
            self.group()
        );
    }
}

fn stream_id(id: &str) -> (u64, u64) {
    let (ms, seq) = id.split_once('-').unwrap_or((id, "0"));
    (ms.parse().unwrap_or(0), seq.parse().unwrap_or(0))
}

fn newer(a: &str, b: &str) -> bool {
    stream_id(a) > stream_id(b)
}

/// The intents stream with duplicates (same id) dropped, first occurrence kept; a duplicate
/// must repeat its first occurrence exactly.
fn deduplicated_intents(server: &RedisServer) -> Vec<String> {
    world_script::deduplicated(server.bodies(&format!("geppetto:{{{ZONE}}}:intents")))
}

/// The zone state of the newest snapshot (its anchor checked and set aside).
fn final_state(url: &str) -> Value {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let store = geppetto_storage::RedisSnapshotStore::connect(url, &StorageConfig::default())
            .await
            .expect("store");
        let zone = ZoneName::new(ZONE).expect("zone");
        let latest = store.latest_valid(&zone, 1).await.expect("latest");
        let snapshot = latest.snapshot.expect("a shutdown snapshot");
        let mut state: Value = serde_json::from_slice(&snapshot.payload).expect("state json");
        // Where the log stood (stream ids differ from run to run), not the zone's state.
        let anchor = state
            .as_object_mut()
            .and_then(|fields| fields.remove("anchor"));
        assert_eq!(
            anchor.as_ref().map(|anchor| &anchor["last"]["log_id"]),
            Some(&Value::String(snapshot.last_event_id.clone())),
            "the snapshot is anchored at the entry it covers"
        );
        state
    })
}

fn load_script(server: &RedisServer, lines: &[String]) {
    for line in lines {
        server.xadd(&format!("geppetto:{{{ZONE}}}:world"), line);
    }
}

#[test]
fn a_service_killed_twenty_times_emits_the_uninterrupted_intent_stream() {
    let server = RedisServer::start();
    let dir = std::env::temp_dir().join(format!("geppetto-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let world = world_dir(&dir);
    let config = config_file(&dir, &world, &server.url);
    let lines = script();
    assert!(lines.len() > 1000, "a few thousand events: {}", lines.len());
    let mut redis = Redis::new(&server.url);

    // The reference: one uninterrupted run.
    load_script(&server, &lines);
    let serve = Serve::start(
        env!("CARGO_BIN_EXE_geppetto"),
        &config,
        &[("RUST_LOG", "warn")],
    );
    redis.wait_until_done(Duration::from_secs(600));
    serve.stop();
    let expected = deduplicated_intents(&server);
    let expected_state = final_state(&server.url);
    assert!(
        expected.len() > 500,
        "a busy village: {} intents",
        expected.len()
    );

    // The same world, killed with SIGKILL at seeded points and restarted each time.
    redis::cmd("FLUSHALL")
        .query::<()>(&mut redis.connection)
        .expect("flush");
    load_script(&server, &lines);
    let mut random = 0x9e37_79b9_7f4a_7c15_u64;
    let mut kills = 0;
    let mut serve = Serve::start(
        env!("CARGO_BIN_EXE_geppetto"),
        &config,
        &[("RUST_LOG", "warn")],
    );
    let mut progress = String::from("0-0");
    while kills < KILLS {
        redis.wait_for_progress_past(&progress, Duration::from_secs(120));
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        std::thread::sleep(Duration::from_millis(random % 600));
        if redis
            .group()
            .is_some_and(|(last, pending)| last == redis.last_world_id() && pending == 0)
        {
            break;
        }
        serve.kill_hard();
        kills += 1;
        progress = redis.group().map(|(last, _)| last).unwrap_or_default();
        serve = Serve::start(
            env!("CARGO_BIN_EXE_geppetto"),
            &config,
            &[("RUST_LOG", "warn")],
        );
    }
    assert_eq!(kills, KILLS, "every kill landed before the script ran out");
    redis.wait_until_done(Duration::from_secs(600));
    serve.stop();
    let got = deduplicated_intents(&server);
    assert_eq!(got.len(), expected.len(), "as many distinct intents");
    for (index, (got, want)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(got, want, "first difference at intent {index}");
    }
    assert_eq!(
        final_state(&server.url),
        expected_state,
        "the final snapshot equals the uninterrupted run's state"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
