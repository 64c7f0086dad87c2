//! A scripted world of village zones for the cluster tests and the cluster benchmark: world
//! directories, per-zone scripts, instance configs over a Redis Cluster, and reading the
//! streams and `geppetto cluster status` back.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use redis::cluster::ClusterConnection;
use serde_json::Value;

use crate::redis_cluster::RedisCluster;
use crate::world_script::{self, Cast};

/// Lease TTL of the scripted instances, milliseconds.
pub const LEASE_TTL_MS: u64 = 3_000;
/// Their renewal period, milliseconds.
pub const RENEW_EVERY_MS: u64 = 500;

pub fn zone_name(n: usize) -> String {
    format!("zone{n:02}")
}

pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("geppetto-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

/// `count` copies of the village, each its own zone (and seed).
pub fn worlds(dir: &Path, count: usize) -> Vec<PathBuf> {
    let root = crate::workspace_root().join("config/worlds/village");
    (0..count)
        .map(|n| {
            let world = dir.join(zone_name(n));
            std::fs::create_dir_all(&world).expect("world dir");
            for entry in std::fs::read_dir(&root).expect("village") {
                let entry = entry.expect("entry");
                let text = std::fs::read_to_string(entry.path()).expect("read");
                let text = text
                    .replace("zone: village", &format!("zone: {}", zone_name(n)))
                    .replace("seed: 2024", &format!("seed: {}", 2024 + n));
                std::fs::write(world.join(entry.file_name()), text).expect("write");
            }
            world
        })
        .collect()
}

/// Zone `zone`'s world events of ticks `from..=to`: time, players wandering, thefts, insults.
pub fn script(zone: &str, from: u64, to: u64) -> Vec<String> {
    let cast = Cast {
        rooms: &["square", "market", "forge", "tavern", "farm", "chapel"],
        kinds: &["theft", "insult", "gift", "threat"],
        targets: &["piet", "bjorn", "ulla", "aldo"],
    };
    world_script::script(zone, from, to, &cast)
}

/// How an instance's config differs.
pub struct Setup<'a> {
    /// `cluster.enabled`.
    pub clustered: bool,
    /// `cluster.zones` as TOML.
    pub zones: &'a str,
    /// The `[clock]` section's body.
    pub clock: &'a str,
    /// `admin.address`.
    pub admin: String,
}

pub fn config_file(
    dir: &Path,
    name: &str,
    worlds: &[PathBuf],
    cluster: &RedisCluster,
    setup: &Setup,
) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let worlds: Vec<String> = worlds
        .iter()
        .map(|w| format!("'{}'", w.display()))
        .collect();
    let nodes: Vec<String> = cluster.urls.iter().map(|u| format!("'{u}'")).collect();
    std::fs::write(
        &path,
        format!(
            "worlds = [{}]\n\
             [bus]\nkind = 'redis'\n[bus.redis]\ncluster_nodes = [{}]\nread_block_ms = 100\n\
             [clock]\n{}\n\
             [consumer]\nbatch_max_messages = 16\nblock_ms = 100\n\
             [governor]\ntick_budget_ms_soft = 600000.0\ntick_budget_ms_hard = 600000.0\n\
             [tick]\nnpc_budget_ms = 600000.0\n\
             [storage]\nsnapshot_every_ticks = 10\n\
             [admin]\naddress = '{}'\n\
             [cluster]\nenabled = {}\nzones = {}\n\
             [cluster.lease]\nttl_ms = {LEASE_TTL_MS}\nrenew_every_ms = {RENEW_EVERY_MS}\nread_margin_ms = 500\n",
            worlds.join(", "),
            nodes.join(", "),
            setup.clock,
            setup.admin,
            setup.clustered,
            setup.zones,
        ),
    )
    .expect("config");
    path
}

pub fn world_key(zone: &str) -> String {
    format!("geppetto:{{{zone}}}:world")
}

/// Every entry of a stream: id, body and the instance that wrote it.
pub fn entries(
    connection: &mut ClusterConnection,
    key: &str,
) -> Vec<(String, String, Option<String>)> {
    let reply: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
        .arg(key)
        .arg("-")
        .arg("+")
        .query(connection)
        .expect("xrange");
    reply
        .ids
        .into_iter()
        .map(|entry| {
            let body = entry.get::<String>("m").unwrap_or_default();
            let writer = entry.get::<String>("i");
            (entry.id, body, writer)
        })
        .collect()
}

pub fn load(connection: &mut ClusterConnection, zone: &str, lines: &[String]) {
    // One pipeline per zone: every key in it shares the zone's slot.
    for chunk in lines.chunks(500) {
        let mut pipe = redis::cluster::cluster_pipe();
        for line in chunk {
            pipe.cmd("XADD")
                .arg(world_key(zone))
                .arg("*")
                .arg("m")
                .arg(line)
                .ignore();
        }
        pipe.query::<()>(connection).expect("xadd");
    }
}

/// Whether the service's consumer group has been given, and acknowledged, all of `zone`'s
/// world stream.
pub fn processed(connection: &mut ClusterConnection, zone: &str) -> bool {
    let last = entries(connection, &world_key(zone))
        .last()
        .map(|(id, ..)| id.clone());
    let groups: Vec<BTreeMap<String, redis::Value>> = redis::cmd("XINFO")
        .arg("GROUPS")
        .arg(world_key(zone))
        .query(connection)
        .unwrap_or_default();
    let Some(group) = groups.into_iter().find(|g| {
        g.get("name")
            .and_then(|v| redis::from_redis_value::<String>(v.clone()).ok())
            .as_deref()
            == Some("geppetto")
    }) else {
        return false;
    };
    let delivered = group
        .get("last-delivered-id")
        .and_then(|v| redis::from_redis_value::<String>(v.clone()).ok());
    let pending = group
        .get("pending")
        .and_then(|v| redis::from_redis_value::<u64>(v.clone()).ok());
    delivered == last && pending == Some(0)
}

pub fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("timed out waiting until {what}");
}

/// `zone`'s intents with duplicates (same id) dropped, first occurrence kept; a duplicate must
/// repeat its first occurrence exactly.
pub fn deduplicated_intents(connection: &mut ClusterConnection, zone: &str) -> Vec<String> {
    let stream = entries(connection, &format!("geppetto:{{{zone}}}:intents"));
    world_script::deduplicated(stream.into_iter().map(|(_, body, _)| body))
}

/// `geppetto cluster status --json`, `geppetto` being the binary under test.
pub fn status(geppetto: impl AsRef<OsStr>, config: &Path) -> Value {
    let output = Command::new(geppetto)
        .args(["cluster", "status", "--json", "--config"])
        .arg(config)
        .output()
        .expect("cluster status runs");
    assert!(
        output.status.success(),
        "cluster status: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("status json")
}

/// Zone → owner, from a status.
pub fn owners(status: &Value) -> BTreeMap<String, Option<String>> {
    status["zones"]
        .as_array()
        .expect("zones")
        .iter()
        .map(|z| {
            (
                z["zone"].as_str().expect("zone").to_owned(),
                z["owner"].as_str().map(str::to_owned),
            )
        })
        .collect()
}
