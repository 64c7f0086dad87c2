//! The soak: the reference game (`examples/mud_world.py`, `game` completion mode, the game's
//! clock) drives the village over a private `redis-server` (append-only, fsync always) while a
//! scheduler injects faults, one every `GEPPETTO_SOAK_FAULT_EVERY_S` seconds for
//! `GEPPETTO_SOAK_SECONDS` (`scripts/soak --minutes M` sets both; the suite runs a short form):
//!
//! - Redis shut down and started again on its data;
//! - the instance holding the zone killed with SIGKILL, and started again;
//! - the holder paused with SIGSTOP past its lease while the second instance takes over, then
//!   resumed;
//! - a world event the game sent delivered a second time (a copy of its entry);
//! - and all along, the game sends one event in twenty twice under the same id, as a game does
//!   that retries a send whose reply it did not get.
//!
//! At the end: zero world events lost (the game's checks: every report accepted, every order
//! and quest carried through), zero applied twice (every copy dead-lettered as a duplicate,
//! counted), zero drift between the game's rooms and geppetto's, no zone without an owner,
//! and the figures — faults, events, duplicates, the longest time the zone had no owner, the
//! instances' RSS slope — printed on one line (BENCHMARKS.md records a 30-minute run).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::python;
use support::redis_server::RedisServer;
use support::serve::{self, Serve};

const ZONE: &str = "village";
const LEASE_TTL_MS: u64 = 3_000;
/// RSS growth an instance may show per hour, MiB, in a run of ten minutes or more (a shorter
/// run is mostly its allocator's warm-up, so its slope is printed, not held to this).
const RSS_SLOPE_BOUND_MIB_PER_HOUR: f64 = 64.0;

/// A redis-server that keeps its data on disk, so it can be shut down and started again.
struct DurableRedis {
    port: u16,
    dir: PathBuf,
    server: Option<RedisServer>,
}

impl DurableRedis {
    fn start(dir: &Path) -> Self {
        let mut redis = Self {
            port: support::free_port(),
            dir: dir.join("redis"),
            server: None,
        };
        std::fs::create_dir_all(&redis.dir).expect("redis dir");
        redis.spawn();
        redis
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    fn spawn(&mut self) {
        let args = [
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--port",
            &self.port.to_string(),
            "--dir",
            &self.dir.display().to_string(),
        ]
        .map(str::to_owned);
        let url = self.url();
        self.server = Some(RedisServer::start_with(&args, url.clone(), || {
            redis::Client::open(url.as_str())
                .and_then(|client| client.get_connection_with_timeout(Duration::from_millis(500)))
                .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c))
                .is_ok()
        }));
    }

    /// Shuts the server down (its append-only file complete) and starts it again.
    fn restart(&mut self) {
        if let Some(server) = self.server.take() {
            server.shutdown();
        }
        self.spawn();
    }

    fn connection(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .expect("url")
            .get_connection()
            .expect("connection")
    }
}

/// The config of instance `name` of the two sharing the zone by lease.
fn instance_config(dir: &Path, name: &str, redis_url: &str, admin_port: u16) -> PathBuf {
    let cluster = format!(
        "[cluster]\nenabled = true\nzones = 'auto'\n\
         [cluster.lease]\nttl_ms = {LEASE_TTL_MS}\nrenew_every_ms = 500\nread_margin_ms = 500\n\
         [storage]\nsnapshot_every_ticks = 30\n"
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        serve::game_driven_village(redis_url, admin_port, &cluster),
    )
    .expect("config");
    path
}

/// `geppetto cluster status --json`: the zone's owner, if any (`None` when Redis is away too).
fn owner(config: &Path) -> Option<Option<String>> {
    let output = Command::new(env!("CARGO_BIN_EXE_geppetto"))
        .args(["cluster", "status", "--json", "--config"])
        .arg(config)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let status: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    Some(status["zones"][0]["owner"].as_str().map(str::to_owned))
}

/// Resident memory of process `pid`, MiB.
fn rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}

/// The least-squares slope of `(seconds, MiB)` samples, MiB an hour.
fn slope_per_hour(samples: &[(f64, f64)]) -> f64 {
    let n = samples.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (sx, sy) = samples
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let (num, den) = samples.iter().fold((0.0, 0.0), |(num, den), (x, y)| {
        (num + (x - mx) * (y - my), den + (x - mx) * (x - mx))
    });
    if den == 0.0 { 0.0 } else { num / den * 3600.0 }
}

fn env_seconds(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What the watcher thread measures while the game plays.
#[derive(Default)]
struct Watch {
    /// The longest stretch the zone had no owner, seconds.
    longest_ownerless_s: f64,
    /// Per instance: RSS samples `(seconds since its start, MiB)` of its current process.
    rss: [Vec<(f64, f64)>; 2],
}

#[test]
fn the_village_lives_through_restarts_kills_pauses_and_duplicates() {
    let seconds = env_seconds("GEPPETTO_SOAK_SECONDS", 90);
    let fault_every = env_seconds("GEPPETTO_SOAK_FAULT_EVERY_S", 12);
    let python = python::python_with_redis();
    let dir = std::env::temp_dir().join(format!("geppetto-soak-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let mut redis = DurableRedis::start(&dir);
    let url = redis.url();
    let names = ["a", "b"];
    let ports = [support::free_port(), support::free_port()];
    let configs: Vec<PathBuf> = names
        .iter()
        .zip(ports)
        .map(|(name, port)| instance_config(&dir, name, &url, port))
        .collect();
    let start = |i: usize| {
        let log = dir.join(format!("{}.log", names[i]));
        Serve::start_as(
            env!("CARGO_BIN_EXE_geppetto"),
            &configs[i],
            Some(names[i]),
            &[("RUST_LOG", "info")],
            Some(&log),
        )
    };
    let instances: Arc<Mutex<Vec<(Serve, Instant)>>> = Arc::new(Mutex::new(
        (0..2).map(|i| (start(i), Instant::now())).collect(),
    ));
    let wait_for_owner = |what: &str| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !matches!(owner(&configs[0]), Some(Some(_))) {
            assert!(Instant::now() < deadline, "no owner of the zone: {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait_for_owner("at the start");
    let holder = |configs: &[PathBuf]| -> Option<usize> {
        let owner = owner(&configs[0])??;
        names.iter().position(|n| *n == owner)
    };

    // The game.
    let root = format!("{}/..", env!("CARGO_MANIFEST_DIR"));
    let admins = ports.map(|p| format!("http://127.0.0.1:{p}")).join(",");
    // The game's output goes to a file: a pipe nobody reads while the faults run would fill
    // and stop the game.
    let game_log = dir.join("game.log");
    let game = Command::new(&python)
        .arg(format!("{root}/examples/mud_world.py"))
        .args(["--redis", &url, "--admin", &admins])
        .args(["--world", &format!("{root}/config/worlds/village")])
        .args(["--seconds", &seconds.to_string(), "--patience", "60"])
        .args(["--resend-rate", "0.05"])
        .stdout(std::fs::File::create(&game_log).expect("game log"))
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python runs");

    // The watcher: ownership and memory, twice a second.
    let playing = Arc::new(AtomicBool::new(true));
    let watch = Arc::new(Mutex::new(Watch::default()));
    let watcher = {
        let (playing, watch, instances, config) = (
            Arc::clone(&playing),
            Arc::clone(&watch),
            Arc::clone(&instances),
            configs[0].clone(),
        );
        std::thread::spawn(move || {
            let mut ownerless_since: Option<Instant> = None;
            while playing.load(Ordering::Relaxed) {
                let owned = matches!(owner(&config), Some(Some(_)));
                let mut watch = watch.lock().expect("watch");
                match (owned, ownerless_since) {
                    (false, None) => ownerless_since = Some(Instant::now()),
                    (true, Some(since)) => {
                        let gap = since.elapsed().as_secs_f64();
                        watch.longest_ownerless_s = watch.longest_ownerless_s.max(gap);
                        ownerless_since = None;
                    }
                    _ => {}
                }
                if let Ok(instances) = instances.lock() {
                    for (i, (serve, started)) in instances.iter().enumerate() {
                        if let Some(mib) = rss_mib(serve.id()) {
                            watch.rss[i].push((started.elapsed().as_secs_f64(), mib));
                        }
                    }
                }
                drop(watch);
                std::thread::sleep(Duration::from_millis(500));
            }
        })
    };

    // The faults, in turn, until the game's time is up.
    let mut faults = std::collections::BTreeMap::<&str, u64>::new();
    let mut injected = 0u64;
    let began = Instant::now();
    let mut turn = 0usize;
    while began.elapsed() < Duration::from_secs(seconds.saturating_sub(fault_every)) {
        std::thread::sleep(Duration::from_secs(fault_every));
        let Some(held_by) = holder(&configs) else {
            continue;
        };
        match turn % 4 {
            0 => {
                redis.restart();
                *faults.entry("redis restarted").or_default() += 1;
            }
            1 => {
                // One lock at a time: the watcher takes `watch`, then `instances`.
                watch.lock().expect("watch").rss[held_by].clear();
                let victim = {
                    let mut instances = instances.lock().expect("instances");
                    std::mem::replace(&mut instances[held_by], (start(held_by), Instant::now())).0
                };
                victim.kill_hard();
                *faults.entry("holder killed").or_default() += 1;
            }
            2 => {
                let paused = instances.lock().expect("instances")[held_by].0.id();
                let signal = |name: &str| {
                    let _ = Command::new("kill")
                        .args([&format!("-{name}"), &paused.to_string()])
                        .status();
                };
                signal("STOP");
                std::thread::sleep(Duration::from_millis(2 * LEASE_TTL_MS));
                signal("CONT");
                *faults.entry("holder paused past its lease").or_default() += 1;
            }
            _ => {
                let mut connection = redis.connection();
                let newest: redis::streams::StreamRangeReply = redis::cmd("XREVRANGE")
                    .arg(format!("geppetto:{{{ZONE}}}:world"))
                    .arg("+")
                    .arg("-")
                    .arg("COUNT")
                    .arg(200)
                    .query(&mut connection)
                    .expect("xrevrange");
                let copy = newest.ids.iter().find_map(|entry| {
                    let body: String = entry.get("m")?;
                    let message: serde_json::Value = serde_json::from_str(&body).ok()?;
                    let ours = message["id"].as_str()?.starts_with("mud-");
                    let always_applied = matches!(
                        message["type"].as_str(),
                        Some("player_entered" | "player_left")
                    );
                    (ours && always_applied).then_some(body)
                });
                if let Some(body) = copy {
                    let _: String = redis::cmd("XADD")
                        .arg(format!("geppetto:{{{ZONE}}}:world"))
                        .arg("*")
                        .arg("m")
                        .arg(body)
                        .query(&mut connection)
                        .expect("xadd");
                    injected += 1;
                    *faults.entry("delivery duplicated").or_default() += 1;
                }
            }
        }
        turn += 1;
    }

    let status = game.wait_with_output().expect("the game ends").status;
    let stdout = std::fs::read_to_string(&game_log).unwrap_or_default();
    println!("{stdout}");
    playing.store(false, Ordering::Relaxed);
    watcher.join().expect("watcher");
    assert!(
        status.success(),
        "the reference game found geppetto out of step:\n{stdout}"
    );
    let figures = stdout
        .lines()
        .find_map(|l| l.strip_prefix("figures: "))
        .expect("the figures line")
        .to_owned();
    let figure = |name: &str| -> u64 {
        figures
            .split_whitespace()
            .find_map(|f| f.strip_prefix(&format!("{name}=")))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("figure {name} in {figures}"))
    };
    assert_eq!(figure("drift"), 0, "{figures}");
    assert_eq!(figure("failures"), 0, "{figures}");
    // Every copy comes back as a duplicate, none is applied (its letter would then be missing);
    // the letters of the last tick's copies may still be on their way when the game stops.
    let duplicates = figure("duplicates");
    let resent = figure("resent");
    let copies = resent + injected;
    assert!(
        duplicates <= copies && duplicates + 3 >= copies,
        "every copy of an event is refused as a duplicate: {duplicates} refused, {resent} sent \
         twice by the game, {injected} deliveries duplicated"
    );
    wait_for_owner("at the end");
    let total_faults: u64 = faults.values().sum();
    assert!(total_faults > 0, "faults were injected: {faults:?}");
    let watch = watch.lock().expect("watch");
    let slopes: Vec<f64> = watch
        .rss
        .iter()
        .map(|samples| {
            let settled: Vec<(f64, f64)> =
                samples.iter().copied().filter(|(t, _)| *t > 30.0).collect();
            slope_per_hour(&settled)
        })
        .collect();
    let rss_slope = slopes.iter().copied().fold(f64::MIN, f64::max);
    println!(
        "soak: seconds={seconds} faults={total_faults} {faults:?} events_resent={resent} \
         deliveries_duplicated={injected} duplicates_refused={duplicates} \
         longest_ownerless_s={:.1} rss_slope_mib_per_hour={rss_slope:.1} ticks={} drift={}",
        watch.longest_ownerless_s,
        figure("ticks"),
        figure("drift"),
    );
    if seconds >= 600 {
        assert!(
            rss_slope <= RSS_SLOPE_BOUND_MIB_PER_HOUR,
            "RSS grows {rss_slope:.1} MiB an hour (bound {RSS_SLOPE_BOUND_MIB_PER_HOUR})"
        );
    }
    for (serve, _) in std::mem::take(&mut *instances.lock().expect("instances")) {
        serve.stop();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
