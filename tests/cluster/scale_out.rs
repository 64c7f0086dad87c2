//! Scale-out end to end: zones shared by `geppetto serve` instances over a real Redis Cluster
//! (three masters on loopback), taken by lease, failed over after `kill -9`, and fenced so a
//! paused instance cannot publish once its lease has lapsed.
//!
//! - Seven zones (the village, renamed seven times) spread over three instances three, two and
//!   two (the fair share, balanced to within one zone); one is killed; its zones are taken over
//!   only after its leases expired and within one lease TTL of that; every world event is
//!   processed; the de-duplicated intent stream of every zone equals a single instance's run
//!   exactly.
//! - An instance paused with SIGSTOP past its lease resumes to find its zones held by another
//!   and never writes to them again: no stream entry and no snapshot. The new owner's
//!   snapshots in Redis are intact — every one decodes, sequences only grow, the newest is the
//!   one it wrote at shutdown, and each is anchored to the entry its world stream holds there.
//! - Leases heal: six zones over three instances (`zones = 'auto'`) while a game feeds every
//!   zone. Three rounds of SIGSTOP past the lease, one instance after another: the others take
//!   its zones, and the resumed instance stops the zones it lost and rejoins with its fair
//!   share. A lease overwritten by a foreign value is given up, and taken again once that
//!   value expires. Every zone keeps an owner that reads it, every world stream drains, and
//!   SIGINT stops every instance cleanly with its leases released.
//!
//! A resident crossing a border and the fence checked deterministically are `borders`'.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use redis::cluster::ClusterConnection;
use support::cluster_world::*;
use support::redis_cluster::RedisCluster;
use support::serve::Serve;

const ZONES: usize = 7;
const TICKS: u64 = 160;

/// Redis time (ms) and the lease value of `zone`.
fn lease(connection: &mut ClusterConnection, zone: &str) -> (u64, Option<String>, i64) {
    let key = format!("geppetto:{{{zone}}}:lease");
    let value: Option<String> = redis::cmd("GET").arg(&key).query(connection).expect("get");
    let pttl: i64 = redis::cmd("PTTL")
        .arg(&key)
        .query(connection)
        .expect("pttl");
    let (seconds, micros): (u64, u64) = redis::cmd("TIME").query(connection).expect("time");
    (seconds * 1000 + micros / 1000, value, pttl)
}

fn acquired_ms(value: &str) -> u64 {
    value
        .rsplit('#')
        .next()
        .and_then(|ms| ms.parse().ok())
        .expect("lease value ends with its acquisition time")
}

#[test]
fn seven_zones_split_three_two_two_over_three_instances_fail_over_without_losing_an_event() {
    let dir = scratch("cluster");
    let cluster = RedisCluster::start(3, &dir);
    let mut redis = cluster.connection();
    let worlds = worlds(&dir, ZONES);
    let zones: Vec<String> = (0..ZONES).map(zone_name).collect();
    let env = [("RUST_LOG", "info")];
    let external = "kind = 'external'";
    let single = config_file(
        &dir,
        "single",
        &worlds,
        &cluster,
        &Setup {
            clustered: false,
            zones: "'auto'",
            clock: external,
            admin: String::new(),
        },
    );
    let clustered = config_file(
        &dir,
        "clustered",
        &worlds,
        &cluster,
        &Setup {
            clustered: true,
            zones: "'auto'",
            clock: external,
            admin: String::new(),
        },
    );

    // The reference: one instance, not clustered, runs all seven zones.
    for zone in &zones {
        load(&mut redis, zone, &script(zone, 1, TICKS));
    }
    let reference_run = Serve::start_as(
        env!("CARGO_BIN_EXE_geppetto"),
        &single,
        None,
        &env,
        Some(&dir.join("single.log")),
    );
    wait_until(
        "the single instance processed every zone",
        Duration::from_secs(600),
        || zones.iter().all(|zone| processed(&mut redis, zone)),
    );
    reference_run.stop();
    let expected: BTreeMap<&String, Vec<String>> = zones
        .iter()
        .map(|zone| (zone, deduplicated_intents(&mut redis, zone)))
        .collect();
    assert!(
        expected.values().all(|intents| intents.len() > 20),
        "every zone is busy: {:?}",
        expected.values().map(Vec::len).collect::<Vec<_>>()
    );
    assert_eq!(
        cluster.masters_holding("geppetto:*:world"),
        cluster.masters(),
        "the zones' streams spread over every master"
    );
    cluster.flush_all();

    // Three instances share the same seven zones.
    for zone in &zones {
        load(&mut redis, zone, &script(zone, 1, TICKS / 2));
    }
    let names = ["a", "b", "c"];
    let mut instances: BTreeMap<&str, Serve> = names
        .iter()
        .map(|name| {
            let log = dir.join(format!("{name}.log"));
            (
                *name,
                Serve::start_as(
                    env!("CARGO_BIN_EXE_geppetto"),
                    &clustered,
                    Some(name),
                    &env,
                    Some(&log),
                ),
            )
        })
        .collect();
    // The fair share in name order: a 3, b 2, c 2.
    let shares = [3, 2, 2];
    wait_until(
        "the zones are spread three, two and two",
        Duration::from_secs(120),
        || {
            let owners = owners(&status(env!("CARGO_BIN_EXE_geppetto"), &clustered));
            let per_instance = |name: &str| {
                owners
                    .values()
                    .filter(|o| o.as_deref() == Some(name))
                    .count()
            };
            names
                .iter()
                .zip(shares)
                .all(|(name, share)| per_instance(name) == share)
        },
    );
    let victim = "b";
    let victim_zones: Vec<String> = owners(&status(env!("CARGO_BIN_EXE_geppetto"), &clustered))
        .into_iter()
        .filter(|(_, owner)| owner.as_deref() == Some(victim))
        .map(|(zone, _)| zone)
        .collect();
    assert_eq!(victim_zones.len(), shares[1]);

    // kill -9 one instance; its leases run out on their own.
    instances.remove(victim).expect("victim").kill_hard();
    let expiry: BTreeMap<&String, u64> = victim_zones
        .iter()
        .map(|zone| {
            let (now, value, pttl) = lease(&mut redis, zone);
            assert!(
                value.is_some_and(|v| v.starts_with("b#")),
                "{zone} still leased to b"
            );
            (zone, now + u64::try_from(pttl.max(0)).unwrap_or(0))
        })
        .collect();
    for zone in &zones {
        load(&mut redis, zone, &script(zone, TICKS / 2 + 1, TICKS));
    }
    wait_until(
        "the victim's zones are taken over",
        Duration::from_secs(60),
        || {
            let owners = owners(&status(env!("CARGO_BIN_EXE_geppetto"), &clustered));
            victim_zones
                .iter()
                .all(|zone| matches!(owners.get(zone), Some(Some(owner)) if owner != victim))
        },
    );
    let mut gaps = Vec::new();
    for zone in &victim_zones {
        let (_, value, _) = lease(&mut redis, zone);
        let acquired = acquired_ms(&value.expect("held"));
        let expired = expiry[zone];
        assert!(
            acquired >= expired,
            "{zone} was taken at {acquired} before b's lease expired at {expired}"
        );
        gaps.push(acquired - expired);
    }
    eprintln!(
        "takeover after lease expiry, ms: {gaps:?} (ttl {LEASE_TTL_MS}, renew every {RENEW_EVERY_MS})"
    );
    assert!(
        gaps.iter().all(|gap| *gap <= LEASE_TTL_MS),
        "taken over within a lease TTL of the old lease's expiry: {gaps:?}"
    );

    wait_until(
        "the survivors processed every zone",
        Duration::from_secs(600),
        || zones.iter().all(|zone| processed(&mut redis, zone)),
    );
    let owners_at_end = owners(&status(env!("CARGO_BIN_EXE_geppetto"), &clustered));
    assert!(
        owners_at_end
            .values()
            .all(|o| matches!(o.as_deref(), Some("a" | "c"))),
        "the survivors hold every zone: {owners_at_end:?}"
    );
    for (_, instance) in instances {
        instance.stop();
    }
    for zone in &zones {
        let got = deduplicated_intents(&mut redis, zone);
        let want = &expected[zone];
        assert_eq!(got.len(), want.len(), "{zone}: as many distinct intents");
        for (index, (got, want)) in got.iter().zip(want).enumerate() {
            assert_eq!(got, want, "{zone}: first difference at intent {index}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_instance_paused_past_its_lease_never_writes_for_its_zones_again() {
    let dir = scratch("cluster-pause");
    let cluster = RedisCluster::start(3, &dir);
    let mut redis = cluster.connection();
    let worlds = worlds(&dir, 2);
    let zones = [zone_name(0), zone_name(1)];
    let clock = "kind = 'internal'\nspeed_minutes_per_second = 60.0";
    let paused_config = config_file(
        &dir,
        "a",
        &worlds,
        &cluster,
        &Setup {
            clustered: true,
            zones: "'auto'",
            clock,
            admin: String::new(),
        },
    );
    let taker_config = config_file(
        &dir,
        "b",
        &worlds,
        &cluster,
        &Setup {
            clustered: true,
            zones: &format!("['{}', '{}']", zones[0], zones[1]),
            clock,
            admin: String::new(),
        },
    );
    let env = [("RUST_LOG", "info")];
    let a_log = dir.join("a.log");
    let paused = Serve::start_as(
        env!("CARGO_BIN_EXE_geppetto"),
        &paused_config,
        Some("a"),
        &env,
        Some(&a_log),
    );
    let writes_by = |redis: &mut ClusterConnection, zone: &str, who: &str| {
        entries(redis, &world_key(zone))
            .iter()
            .filter(|(.., writer)| writer.as_deref() == Some(who))
            .count()
    };
    let log_of = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
    wait_until(
        "a holds both zones, its clock runs and it has written snapshots",
        Duration::from_secs(60),
        || {
            owners(&status(env!("CARGO_BIN_EXE_geppetto"), &paused_config))
                .values()
                .all(|o| o.as_deref() == Some("a"))
                && zones.iter().all(|zone| {
                    writes_by(&mut redis, zone, "a") > 5
                        && !logged_snapshots(&log_of(&a_log), zone).is_empty()
                })
        },
    );

    paused.signal("STOP");
    let taker = Serve::start_as(
        env!("CARGO_BIN_EXE_geppetto"),
        &taker_config,
        Some("b"),
        &env,
        Some(&dir.join("b.log")),
    );
    wait_until(
        "b holds both zones and its clock runs",
        Duration::from_secs(60),
        || {
            owners(&status(env!("CARGO_BIN_EXE_geppetto"), &taker_config))
                .values()
                .all(|o| o.as_deref() == Some("b"))
                && zones
                    .iter()
                    .all(|zone| writes_by(&mut redis, zone, "b") > 5)
        },
    );
    // What a logged up to here; it is stopped, so nothing more comes until it resumes.
    let before_resume = log_of(&a_log).len();
    paused.signal("CONT");
    wait_until(
        "a notices it lost its leases",
        Duration::from_secs(30),
        || {
            std::fs::read_to_string(&a_log).is_ok_and(|log| {
                zones.iter().all(|zone| {
                    log.lines().any(|line| {
                        line.contains(zone.as_str())
                            && (line.contains("lease lost")
                                || line.contains("can no longer be trusted")
                                || line.contains("lapsed"))
                    })
                })
            })
        },
    );
    // Give a resumed instance every chance to misbehave: several renewal rounds.
    std::thread::sleep(Duration::from_millis(4 * RENEW_EVERY_MS));

    let kinds = [
        "world",
        "intents",
        "story",
        "narrative",
        "npc_events",
        "deadletter",
    ];
    for zone in &zones {
        for kind in kinds {
            let stream = entries(&mut redis, &format!("geppetto:{{{zone}}}:{kind}"));
            let Some(first_b) = stream.iter().position(|(.., w)| w.as_deref() == Some("b")) else {
                continue;
            };
            let late: Vec<_> = stream[first_b..]
                .iter()
                .filter(|(.., w)| w.as_deref() == Some("a"))
                .map(|(id, ..)| id.clone())
                .collect();
            assert!(
                late.is_empty(),
                "{zone} {kind}: a wrote {late:?} after b took over"
            );
        }
    }
    let status = status(env!("CARGO_BIN_EXE_geppetto"), &taker_config);
    assert!(
        owners(&status).values().all(|o| o.as_deref() == Some("b")),
        "b still holds both zones: {status}"
    );
    // a stops first: stopped after b, it would take the zones b releases on its way out (it
    // runs with `zones = 'auto'`), recover them from b's snapshots and write its own shutdown
    // snapshot after them, rightly, as their new owner.
    paused.stop();
    taker.stop();

    // Not one snapshot from a once b took over; b's snapshots are whole and the newest its last.
    // The stop can land between a snapshot's write and its log line, so a line a logged after
    // it resumed may report a write made before the pause. Its sequence tells them apart: b
    // numbers its first snapshot after the newest it found in the store, and the store takes
    // only growing sequences, so a write of a's after b's first would carry a higher one.
    let resumed = log_of(&a_log).split_off(before_resume);
    let b_log = log_of(&dir.join("b.log"));
    for zone in &zones {
        let by_b = logged_snapshots(&b_log, zone);
        let first_by_b = *by_b
            .first()
            .unwrap_or_else(|| panic!("{zone}: b wrote no snapshot"));
        let late: Vec<u64> = logged_snapshots(&resumed, zone)
            .into_iter()
            .filter(|&sequence| sequence >= first_by_b)
            .collect();
        assert!(
            late.is_empty(),
            "{zone}: a wrote snapshots {late:?} after b's first ({first_by_b})"
        );
        let stored = stored_snapshots(&mut redis, zone);
        assert!(!stored.is_empty(), "{zone}: snapshots are kept");
        assert!(
            stored.windows(2).all(|pair| pair[0] < pair[1]),
            "{zone}: sequences only grow: {stored:?}"
        );
        assert_eq!(
            stored.last(),
            by_b.last(),
            "{zone}: the newest snapshot is the last one b wrote (b wrote {by_b:?})"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Zone → (owner, world-stream lag), from a status.
fn owners_and_lag(status: &serde_json::Value) -> BTreeMap<String, (Option<String>, u64)> {
    status["zones"]
        .as_array()
        .expect("zones")
        .iter()
        .map(|z| {
            (
                z["zone"].as_str().expect("zone").to_owned(),
                (
                    z["owner"].as_str().map(str::to_owned),
                    z["lag"].as_u64().unwrap_or(u64::MAX),
                ),
            )
        })
        .collect()
}

/// Every zone owned by one of `live`, each of them holding `share` zones, every zone read up
/// to at most `max_lag` entries behind its world stream.
fn healthy(status: &serde_json::Value, live: &[&str], share: usize, max_lag: u64) -> bool {
    let zones = owners_and_lag(status);
    let held = |name: &str| {
        zones
            .values()
            .filter(|(owner, _)| owner.as_deref() == Some(name))
            .count()
    };
    zones
        .values()
        .all(|(owner, lag)| owner.as_deref().is_some_and(|o| live.contains(&o)) && *lag <= max_lag)
        && live.iter().all(|name| held(name) == share)
}

#[test]
fn paused_and_overwritten_leases_heal_and_sigint_stops_every_instance() {
    const HEAL_ZONES: usize = 6;
    let dir = scratch("cluster-heal");
    let cluster = RedisCluster::start(3, &dir);
    let mut redis = cluster.connection();
    let worlds = worlds(&dir, HEAL_ZONES);
    let zones: Vec<String> = (0..HEAL_ZONES).map(zone_name).collect();
    let config = config_file(
        &dir,
        "heal",
        &worlds,
        &cluster,
        &Setup {
            clustered: true,
            zones: "'auto'",
            clock: "kind = 'external'",
            admin: String::new(),
        },
    );
    // The game: a tick of every zone every 100 ms until told to stop.
    let feeding = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let feeder = {
        let (feeding, zones, mut connection) = (
            std::sync::Arc::clone(&feeding),
            zones.clone(),
            cluster.connection(),
        );
        std::thread::spawn(move || {
            let mut tick = 1;
            while feeding.load(std::sync::atomic::Ordering::Relaxed) {
                for zone in &zones {
                    load(&mut connection, zone, &script(zone, tick, tick));
                }
                tick += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let env = [("RUST_LOG", "info")];
    let names = ["a", "b", "c"];
    let log_path = |name: &str| dir.join(format!("heal-{name}.log"));
    let instances: BTreeMap<&str, Serve> = names
        .iter()
        .map(|name| {
            let serve = Serve::start_as(
                env!("CARGO_BIN_EXE_geppetto"),
                &config,
                Some(name),
                &env,
                Some(&log_path(name)),
            );
            (*name, serve)
        })
        .collect();
    let max_lag = 20;
    wait_until(
        "two zones each, every zone read",
        Duration::from_secs(120),
        || {
            healthy(
                &status(env!("CARGO_BIN_EXE_geppetto"), &config),
                &names,
                2,
                max_lag,
            )
        },
    );

    for paused_name in names {
        let paused = &instances[paused_name];
        let others: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| *n != paused_name)
            .collect();
        paused.signal("STOP");
        wait_until(
            &format!("the others hold {paused_name}'s zones, three each"),
            Duration::from_secs(30),
            || {
                healthy(
                    &status(env!("CARGO_BIN_EXE_geppetto"), &config),
                    &others,
                    3,
                    max_lag,
                )
            },
        );
        paused.signal("CONT");
        wait_until(
            &format!("{paused_name} resumes, gives up what it lost and rejoins with two zones"),
            Duration::from_secs(40),
            || {
                healthy(
                    &status(env!("CARGO_BIN_EXE_geppetto"), &config),
                    &names,
                    2,
                    max_lag,
                )
            },
        );
    }

    // A foreign value over one lease for five seconds: its holder gives the zone up, and once
    // the value expires a live instance takes the zone again.
    let overwritten = zones[0].clone();
    let holder = owners(&status(env!("CARGO_BIN_EXE_geppetto"), &config))[&overwritten]
        .clone()
        .expect("an owner");
    let _: () = redis::cmd("SET")
        .arg(format!("geppetto:{{{overwritten}}}:lease"))
        .arg("intruder#999999#0")
        .arg("PX")
        .arg(5_000)
        .query(&mut redis)
        .expect("set");
    wait_until(
        &format!("{holder} notices it lost {overwritten}"),
        Duration::from_secs(10),
        || {
            std::fs::read_to_string(log_path(&holder)).is_ok_and(|log| {
                log.lines().any(|line| {
                    line.contains(overwritten.as_str()) && line.contains("zone no longer held")
                })
            })
        },
    );
    wait_until(
        &format!("{overwritten} is taken again once the foreign value expired"),
        Duration::from_secs(5 + 2 * LEASE_TTL_MS / 1000 + 30),
        || {
            healthy(
                &status(env!("CARGO_BIN_EXE_geppetto"), &config),
                &names,
                2,
                max_lag,
            )
        },
    );

    // The game stops; every zone's world stream drains.
    feeding.store(false, std::sync::atomic::Ordering::Relaxed);
    feeder.join().expect("the feeder");
    wait_until(
        "every world stream is drained",
        Duration::from_secs(120),
        || zones.iter().all(|zone| processed(&mut redis, zone)),
    );
    let status_at_end = status(env!("CARGO_BIN_EXE_geppetto"), &config);
    assert!(
        healthy(&status_at_end, &names, 2, 0),
        "every zone owned, two each: {status_at_end}"
    );

    // SIGINT to all at once: every instance exits cleanly and releases its leases.
    for serve in instances.values() {
        serve.signal("INT");
    }
    for (_, serve) in instances {
        serve.wait_clean_exit();
    }
    for zone in &zones {
        let (_, value, _) = lease(&mut redis, zone);
        assert_eq!(value, None, "{zone}: the lease is released at shutdown");
    }
    for name in names {
        let log = std::fs::read_to_string(log_path(name)).unwrap_or_default();
        assert!(
            !log.contains("did not stop"),
            "{name}: every zone loop stopped when told: {}",
            log.lines()
                .filter(|line| line.contains("did not stop"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The sequences of the snapshots of `zone` an instance's `log` says it wrote, in order.
fn logged_snapshots(log: &str, zone: &str) -> Vec<u64> {
    let zone_field = format!("zone={zone}");
    log.lines()
        .filter(|line| {
            line.contains("snapshot written")
                && line.split_whitespace().any(|field| field == zone_field)
        })
        .filter_map(|line| {
            line.split_whitespace()
                .find_map(|field| field.strip_prefix("sequence="))
                .and_then(|sequence| sequence.parse().ok())
        })
        .collect()
}

/// The sequences of `zone`'s snapshots in Redis, oldest first, each checked whole: it decodes
/// (checksums, zone, sequence), holds a zone state, and is anchored to the entry the zone's
/// world stream holds at its position.
fn stored_snapshots(redis: &mut ClusterConnection, zone: &str) -> Vec<u64> {
    use geppetto_service::zone::{ZONE_STATE_SCHEMA_VERSION, ZoneState};
    use geppetto_storage::snapshot::{Expected, Snapshot};

    let base = format!("geppetto:{{{zone}}}:snapshot:");
    let members: Vec<String> = redis::cmd("ZRANGE")
        .arg(format!("{base}index"))
        .arg(0)
        .arg(-1)
        .query(redis)
        .expect("zrange");
    let world = entries(redis, &world_key(zone));
    let key = geppetto_storage::ZoneName::new(zone).expect("zone name");
    members
        .iter()
        .map(|member| {
            let sequence: u64 = member.parse().expect("a sequence");
            let bytes: Vec<u8> = redis::cmd("GET")
                .arg(format!("{base}{member}"))
                .query(redis)
                .expect("get");
            let expected = Expected {
                zone: &key,
                sequence,
                supported_schema_version: ZONE_STATE_SCHEMA_VERSION,
            };
            let snapshot = Snapshot::decode(&bytes, expected)
                .unwrap_or_else(|defect| panic!("{zone} snapshot {sequence}: {defect}"));
            let state: ZoneState = serde_json::from_slice(&snapshot.payload).expect("a zone state");
            let anchor = state.anchor.expect("an anchor");
            let (_, body, _) = world
                .iter()
                .find(|(id, ..)| *id == snapshot.last_event_id)
                .expect("the world stream holds the snapshot's last entry");
            assert_eq!(
                anchor.check_entry(body),
                Ok(()),
                "{zone} snapshot {sequence} is anchored to its stream"
            );
            sequence
        })
        .collect()
}
