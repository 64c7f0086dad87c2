//! Aggregate throughput of 1, 2 and 3 `geppetto serve` instances sharing twelve zones over a
//! Redis Cluster of three masters on this machine (issue #11), printed as a table:
//!
//! ```text
//! cargo bench -p geppetto-service --bench cluster            # 1, 2 and 3 instances
//! cargo bench -p geppetto-service --bench cluster -- 2       # one count
//! ```
//!
//! For each instance count: a fresh cluster; the instances start and spread the twelve zones
//! (the village, renamed) among themselves; then every zone's script (ticks, players moving,
//! thefts and insults — the cluster test's world) is written to the world streams at once, and
//! the clock runs until every zone's consumer group has processed and acknowledged all of it.
//! World events per second and intents per second are over that span.

use std::time::{Duration, Instant};

use support::cluster_world::*;
use support::redis_cluster::RedisCluster;
use support::serve::Serve;

const ZONES: usize = 12;
const TICKS: u64 = 1_500;

fn run(instances: usize) -> (usize, u64, f64) {
    let dir = scratch(&format!("cluster-bench-{instances}"));
    let cluster = RedisCluster::start(3, &dir);
    let mut redis = cluster.connection();
    let worlds = worlds(&dir, ZONES);
    let zones: Vec<String> = (0..ZONES).map(zone_name).collect();
    let config = config_file(
        &dir,
        "bench",
        &worlds,
        &cluster,
        &Setup {
            clustered: true,
            zones: "'auto'",
            clock: "kind = 'external'",
            admin: String::new(),
        },
    );
    let names: Vec<String> = (0..instances).map(|i| format!("i{i}")).collect();
    let running: Vec<Serve> = names
        .iter()
        .map(|name| {
            Serve::start_as(
                env!("CARGO_BIN_EXE_geppetto"),
                &config,
                Some(name),
                &[("RUST_LOG", "warn")],
                None,
            )
        })
        .collect();
    wait_until("the zones are spread", Duration::from_secs(120), || {
        let owners = owners(&status(env!("CARGO_BIN_EXE_geppetto"), &config));
        let share = ZONES.div_ceil(instances);
        owners.values().all(Option::is_some)
            && names.iter().all(|name| {
                owners
                    .values()
                    .filter(|o| o.as_deref() == Some(name.as_str()))
                    .count()
                    <= share
            })
    });
    let scripts: Vec<Vec<String>> = zones.iter().map(|zone| script(zone, 1, TICKS)).collect();
    let events: usize = scripts.iter().map(Vec::len).sum();
    let started = Instant::now();
    for (zone, lines) in zones.iter().zip(&scripts) {
        load(&mut redis, zone, lines);
    }
    wait_until("every zone is processed", Duration::from_secs(1200), || {
        zones.iter().all(|zone| processed(&mut redis, zone))
    });
    let seconds = started.elapsed().as_secs_f64();
    let intents: u64 = zones
        .iter()
        .map(|zone| {
            redis::cmd("XLEN")
                .arg(format!("geppetto:{{{zone}}}:intents"))
                .query::<u64>(&mut redis)
                .expect("xlen")
        })
        .sum();
    for instance in running {
        instance.stop();
    }
    let _ = std::fs::remove_dir_all(&dir);
    (events, intents, seconds)
}

fn main() {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let counts = if counts.is_empty() {
        vec![1, 2, 3]
    } else {
        counts
    };
    println!("| instances | world events | intents | seconds | world events/s | intents/s |");
    println!("|---|---|---|---|---|---|");
    for instances in counts {
        let (events, intents, seconds) = run(instances);
        println!(
            "| {instances} | {events} | {intents} | {seconds:.2} | {:.0} | {:.0} |",
            events as f64 / seconds,
            intents as f64 / seconds
        );
    }
}
