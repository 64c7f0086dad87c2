//! The embedded mode survives restarts and replays too: `geppetto serve` on the in-process bus
//! with a redb file logs every world event there before applying it, writes snapshots
//! (periodically, on `POST /zones/{zone}/snapshot`, at shutdown), resumes from them on restart,
//! and its log exports and replays offline. `geppetto demo --data FILE` keeps its village the
//! same way: a second run resumes where the first stopped, and a replay from the first run's
//! snapshot is exactly the tail of the full replay; a what-if over it shows where a changed NPC
//! parts from its recorded timeline and leaves the record as it was.

// Shared test support: this test stops serve gracefully, never kills it.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::free_port;
use support::http::{self, request_with};
use support::serve::Serve;

const TOKEN: &str = "embedded-test-token";

/// Asks for a snapshot until the zone has applied something; returns the report.
fn snapshot(port: u16) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match request_with(port, "POST", "/zones/village/snapshot", Some(TOKEN), "") {
            Some((200, body)) => return serde_json::from_str(&body).expect("report"),
            _ if Instant::now() > deadline => panic!("no snapshot was written"),
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

fn geppetto(args: &[&str]) -> (String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_geppetto"))
        .args(args)
        .output()
        .expect("geppetto runs");
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    );
    assert!(output.status.success(), "geppetto {args:?}: {err}");
    (out, err)
}

#[test]
fn the_embedded_service_snapshots_recovers_and_replays_from_its_redb_file() {
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("geppetto-embedded-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let world = format!("{}/../config/worlds/village", env!("CARGO_MANIFEST_DIR"));
    let redb = dir.join("geppetto.redb");
    let config = dir.join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "worlds = ['{world}']\n[clock]\nspeed_minutes_per_second = 300.0\n\
             [storage]\nredb_path = '{}'\nsnapshot_every_ticks = 120\n\
             [storage.stores]\nsnapshots_kept_per_zone = 1000\n\
             [governor]\ntick_budget_ms_soft = 600000.0\ntick_budget_ms_hard = 600000.0\n\
             [tick]\nnpc_budget_ms = 600000.0\n\
             [admin]\naddress = '127.0.0.1:{port}'\ntoken_env = 'GEPPETTO_TEST_TOKEN'\n",
            redb.display()
        ),
    )
    .expect("config");

    let serve = Serve::start(
        env!("CARGO_BIN_EXE_geppetto"),
        &config,
        &[("GEPPETTO_TEST_TOKEN", TOKEN)],
    );
    let first = snapshot(port);
    assert_eq!(first["zone"], "village");
    let unauthorised = request_with(port, "POST", "/zones/village/snapshot", None, "");
    assert_eq!(unauthorised.map(|(s, _)| s), Some(401));
    let unknown = request_with(port, "POST", "/zones/nowhere/snapshot", Some(TOKEN), "");
    assert_eq!(unknown.map(|(s, _)| s), Some(404));
    // The brain view of a live NPC, from the terminal, twice.
    let admin = format!("http://127.0.0.1:{port}");
    let (brain, _) = geppetto(&[
        "brain", "--admin", &admin, "--npc", "bjorn", "--follow", "--count", "2",
    ]);
    assert_eq!(
        brain.matches("Bjorn the smith (bjorn)").count(),
        2,
        "{brain}"
    );
    // A what-if over the service's own log answers both timelines and writes nothing to it.
    let body = r#"{"zone": "village", "npc": "bjorn", "changes": ["need.COMFORT=0.02"]}"#;
    let (status, report) =
        request_with(port, "POST", "/whatif", Some(TOKEN), body).expect("the what-if answers");
    assert_eq!(status, 200, "{report}");
    let report: Value = serde_json::from_str(&report).expect("report");
    assert!(
        report["baseline"].is_array() && report["changed"].is_array(),
        "{report}"
    );
    let refused = request_with(
        port,
        "POST",
        "/whatif",
        Some(TOKEN),
        r#"{"zone": "village", "npc": "bjorn", "changes": ["mood=1"]}"#,
    );
    assert_eq!(refused.map(|(s, _)| s), Some(400));
    // It replays the log: not without the token, and not from a form a web page posts.
    let anonymous = request_with(port, "POST", "/whatif", None, body);
    assert_eq!(anonymous.map(|(s, _)| s), Some(401));
    let form = http::request_typed(
        port,
        "POST",
        "/whatif",
        Some(TOKEN),
        "application/x-www-form-urlencoded",
        body,
    );
    assert_eq!(form.map(|(s, _)| s), Some(415));
    std::thread::sleep(Duration::from_millis(1500));
    serve.stop();

    // Restarted, the zone carries on from its shutdown snapshot rather than from the start.
    let serve = Serve::start(
        env!("CARGO_BIN_EXE_geppetto"),
        &config,
        &[("GEPPETTO_TEST_TOKEN", TOKEN)],
    );
    let resumed = snapshot(port);
    serve.stop();
    assert!(
        resumed["sequence"].as_u64() > first["sequence"].as_u64().map(|s| s + 1),
        "periodic and shutdown snapshots came between: {first} then {resumed}"
    );
    assert!(
        resumed["game_time"].as_u64() > first["game_time"].as_u64(),
        "time went on: {first} then {resumed}"
    );

    let redb_path = redb.to_str().expect("utf-8");
    let (exported, _) = geppetto(&["log", "export", "--redb", redb_path, "--zone", "village"]);
    let lines: Vec<Value> = exported
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert!(lines.len() > 20, "the log holds the run: {}", lines.len());
    assert!(lines.iter().all(|l| l["log_id"].is_string()));
    assert!(
        lines.iter().any(|l| l["type"] == "zone_settings"),
        "the zone logs its mode as it starts"
    );
    assert!(
        lines
            .iter()
            .all(|l| l["type"] == "time_advanced" || l["type"] == "zone_settings"),
        "only the clock and the zone's starts wrote to the log: the what-if changed nothing"
    );

    // The redb log replays offline (its intents are the same from the export).
    let (all, _) = geppetto(&["replay", "--redb", redb_path, "--world", &world]);
    let export = dir.join("world.jsonl");
    std::fs::write(&export, &exported).expect("export");
    let (from_export, _) = geppetto(&[
        "replay",
        "--log",
        export.to_str().expect("utf-8"),
        "--world",
        &world,
    ]);
    assert_eq!(from_export, all);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_demo_keeps_its_village_between_runs_and_replays_it_from_a_snapshot() {
    let dir = std::env::temp_dir().join(format!("geppetto-demo-data-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let data = dir.join("village.redb");
    let data = data.to_str().expect("utf-8");
    let demo =
        |hours: &str| geppetto(&["demo", "--hours", hours, "--speed", "600", "--data", data]).0;
    let morning = demo("2");
    assert!(
        morning.starts_with("07:"),
        "the first run starts at dawn: {morning:.80}"
    );
    let later = demo("1");
    assert!(
        later.starts_with("09:"),
        "the second run resumes where the first stopped: {later:.80}"
    );
    let (all, _) = geppetto(&["replay", "--redb", data]);
    let (after_first, _) = geppetto(&["replay", "--redb", data, "--from-snapshot", "1"]);
    assert!(
        !after_first.is_empty(),
        "the second run's intents follow snapshot 1"
    );
    assert!(
        all.ends_with(&after_first) && all.len() > after_first.len(),
        "a replay from the first run's snapshot is the tail of the full replay"
    );
    let (after_last, summary) = geppetto(&["replay", "--redb", data, "--from-snapshot", "latest"]);
    assert!(
        after_last.is_empty(),
        "nothing follows the last shutdown snapshot: {summary}"
    );
    // What if Bjorn had been exhausted at dawn? His timeline parts from the recorded one; the
    // recorded village is untouched (the same log replays to the same intents).
    let (columns, _) = geppetto(&[
        "whatif",
        "--redb",
        data,
        "--npc",
        "bjorn",
        "--set",
        "need.COMFORT=0.02",
    ]);
    assert!(columns.contains("first divergence at step"), "{columns}");
    assert!(
        columns.starts_with("window: from the world file"),
        "the report says which window it replayed: {columns}"
    );
    assert_eq!(columns.matches(">> ").count(), 1, "{columns}");
    // From the shutdown snapshot nothing follows: the report says so rather than "no divergence".
    let (empty, _) = geppetto(&[
        "whatif",
        "--redb",
        data,
        "--from-snapshot",
        "latest",
        "--npc",
        "bjorn",
        "--set",
        "need.COMFORT=0.02",
    ]);
    assert!(empty.starts_with("window: from snapshot "), "{empty}");
    assert!(
        empty.contains("nothing to compare: bjorn emitted no intent in this window"),
        "{empty}"
    );
    let (json, _) = geppetto(&[
        "whatif",
        "--redb",
        data,
        "--npc",
        "bjorn",
        "--set",
        "tuning.temperature=1.0",
        "--json",
    ]);
    let report: Value = serde_json::from_str(&json).expect("report");
    assert!(report["baseline"].as_array().is_some_and(|b| !b.is_empty()));
    let (again, _) = geppetto(&["replay", "--redb", data]);
    assert_eq!(again, all, "a what-if leaves the recorded world as it was");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs geppetto expecting it to fail; returns its stderr.
fn geppetto_refuses(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_geppetto"))
        .args(args)
        .output()
        .expect("geppetto runs");
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        !output.status.success(),
        "geppetto {args:?} should refuse: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    err
}

/// A snapshot belongs to the log and world file it was taken over: replayed against its own
/// log (exported, with or without `log_id`s) it starts the replay, against another log whose
/// lines are numbered alike, or another world file, it is refused with what differs.
#[test]
fn a_snapshot_replays_only_over_the_log_and_world_it_was_taken_of() {
    let dir = std::env::temp_dir().join(format!("geppetto-anchor-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let data = dir.join("village.redb");
    let data = data.to_str().expect("utf-8");
    for hours in ["2", "1"] {
        geppetto(&["demo", "--hours", hours, "--speed", "600", "--data", data]);
    }
    let (exported, _) = geppetto(&["log", "export", "--redb", data, "--zone", "village"]);
    let path = |name: &str| dir.join(name).to_str().expect("utf-8").to_owned();
    let with_ids = path("with-ids.jsonl");
    std::fs::write(&with_ids, &exported).expect("write");
    // The same log as plain envelopes, numbered by line as the embedded log numbers them.
    let plain: Vec<String> = exported
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).expect("json");
            value.as_object_mut().expect("object").remove("log_id");
            value.to_string()
        })
        .collect();
    let numbered = path("numbered.jsonl");
    std::fs::write(&numbered, plain.join("\n")).expect("write");
    // Another log of the village, as long, numbered alike.
    let other: Vec<String> = (0..plain.len())
        .map(|n| {
            serde_json::json!({"v": 1, "type": "time_advanced", "id": format!("other-{n}"),
                               "zone": "village", "game_time": 420 + 5 * n})
            .to_string()
        })
        .collect();
    let unrelated = path("unrelated.jsonl");
    std::fs::write(&unrelated, other.join("\n")).expect("write");

    let from_snapshot = ["--from-snapshot", "1", "--store", data];
    let (own, _) = geppetto(&["replay", "--redb", data, "--from-snapshot", "1"]);
    assert!(
        !own.is_empty(),
        "the second run's intents follow snapshot 1"
    );
    for log in [&with_ids, &numbered] {
        let mut args = vec!["replay", "--log", log.as_str()];
        args.extend(from_snapshot);
        let (out, summary) = geppetto(&args);
        assert_eq!(out, own, "{log}: the same replay from the same snapshot");
        assert!(summary.contains("as this log holds it"), "{summary}");
    }

    let mut args = vec!["replay", "--log", unrelated.as_str()];
    args.extend(from_snapshot);
    let refused = geppetto_refuses(&args);
    assert!(
        refused.contains("snapshot 1 of zone `village` does not belong here")
            && refused.contains("but this log holds event `other-"),
        "{refused}"
    );
    // From the start, the same log replays as ever.
    geppetto(&["replay", "--log", &unrelated]);

    // The village with one resident moved is another world file.
    let world = dir.join("village-world");
    std::fs::create_dir_all(&world).expect("dir");
    let source = format!("{}/../config/worlds/village", env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(&source).expect("village") {
        let entry = entry.expect("entry");
        let text = std::fs::read_to_string(entry.path()).expect("read");
        std::fs::write(world.join(entry.file_name()), text + "\n# edited\n").expect("write");
    }
    let world = world.to_str().expect("utf-8");
    let mut args = vec!["replay", "--log", with_ids.as_str(), "--world", world];
    args.extend(from_snapshot);
    let refused = geppetto_refuses(&args);
    assert!(refused.contains("another world file"), "{refused}");
    let _ = std::fs::remove_dir_all(&dir);
}
