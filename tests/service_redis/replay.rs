//! Exact replay: a 100,000-event world log of the village (`scripts/world-log`: a few days of
//! ticks; players coming and going; thefts, insults, gifts and praise; weather; stalls opening
//! and closing; lines said; a few malformed entries) is folded once as the service does,
//! message by message, and its intents recorded. `geppetto replay` then re-runs the log at 1
//! thread and at 2 (the next page read while the zone folds): both print the recorded intent stream byte for byte, and
//! `--compare` finds a changed intent at the first difference.

use std::path::Path;
use std::process::Command;

use geppetto_service::bus::StreamKind;
use geppetto_service::bus::envelope::parse_world;
use geppetto_service::zone::isolation::IsolationState;
use geppetto_service::zone::{TickInputs, ZoneOutput};
use support::redis_server;
use support::village::{calm, village};
use support::world_log;

const EVENTS: usize = 100_000;

/// The first `events` lines of the generated log, written to `path` and read back.
fn world_log(events: usize, path: &Path) -> Vec<String> {
    world_log::write_world_log(events, path);
    std::fs::read_to_string(path)
        .expect("log")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The intents the zone emits folding `lines` one message at a time, as the service loop does.
fn recorded_intents(lines: &[String]) -> Vec<String> {
    let mut zone = village(calm(), IsolationState::default());
    let mut intents = Vec::new();
    let clock = geppetto_service::runtime::wall_clock();
    for line in lines {
        let Ok(message) = parse_world(line) else {
            continue;
        };
        let mut out = ZoneOutput::default();
        zone.apply(&message, &TickInputs::live(&clock), &mut out);
        intents.extend(
            out.messages
                .into_iter()
                .filter(|(stream, _)| *stream == StreamKind::Intents)
                .map(|(_, body)| body),
        );
    }
    intents
}

fn replay(log: &Path, threads: usize, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_geppetto"))
        .args(["replay", "--log"])
        .arg(log)
        .args(["--threads", &threads.to_string()])
        .args(extra)
        .output()
        .expect("geppetto replay runs")
}

#[test]
fn a_hundred_thousand_event_log_replays_to_the_same_intents_at_one_and_two_threads() {
    let dir = std::env::temp_dir().join(format!("geppetto-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let log = dir.join("world.jsonl");
    let lines = world_log(EVENTS, &log);
    assert_eq!(lines.len(), EVENTS);
    let expected = recorded_intents(&lines);
    assert!(
        expected.len() > 500,
        "a busy log: {} intents",
        expected.len()
    );
    let mut expected_text = expected.join("\n");
    expected_text.push('\n');
    for threads in [1, 2] {
        let output = replay(&log, threads, &[]);
        assert!(
            output.status.success(),
            "replay at {threads} threads: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            String::from_utf8_lossy(&output.stdout) == expected_text,
            "the replay at {threads} threads prints the recorded intents byte for byte"
        );
    }
    // `--compare` finds a recording with one intent changed, at the first difference.
    let recording = dir.join("intents.jsonl");
    let mut tampered = expected.clone();
    let index = tampered.len() / 2;
    tampered[index] = tampered[index].replace("\"npc\":\"", "\"npc\":\"x");
    std::fs::write(&recording, tampered.join("\n")).expect("recording");
    let compared = replay(&log, 1, &["--compare", recording.to_str().expect("utf-8")]);
    assert_eq!(compared.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&compared.stderr);
    assert!(
        stderr.contains(&format!("intent {index} differs")),
        "{stderr}"
    );
    assert!(
        stderr.contains("the streams part after world event `")
            && stderr.contains("the differing intent comes from world event `")
            && stderr.contains(", game time "),
        "the world event where the streams part is named: {stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Malformed log lines are reported one by one (line, reason) and counted; `--strict` fails on
/// any; the replay of the good lines is the replay of the log without them.
#[test]
fn malformed_log_lines_are_reported_each_with_its_line_and_fail_under_strict() {
    let dir = std::env::temp_dir().join(format!("geppetto-replay-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let clean = dir.join("clean.jsonl");
    let lines = world_log(3000, &clean);
    let mut broken = lines.clone();
    let bad = [
        (10, "{\"v\":1,\"type\":\"time_advanced\""),
        (500, "not json at all"),
        (
            1200,
            "{\"v\":1,\"type\":\"no_such_event\",\"id\":\"x\",\"zone\":\"village\",\"game_time\":1}",
        ),
        (2500, "[1,2,3]"),
    ];
    // Ascending, so each lands at its index in the final file.
    for (at, line) in bad {
        broken.insert(at, line.to_owned());
    }
    let damaged = dir.join("damaged.jsonl");
    std::fs::write(&damaged, broken.join("\n")).expect("log");

    let good = replay(&clean, 1, &[]);
    assert!(good.status.success());
    // The generated log carries a few refused lines of its own.
    let already = String::from_utf8_lossy(&good.stderr)
        .matches("-- skipped line ")
        .count();
    let lenient = replay(&damaged, 1, &[]);
    assert!(lenient.status.success());
    assert_eq!(
        lenient.stdout, good.stdout,
        "the broken lines change nothing"
    );
    let stderr = String::from_utf8_lossy(&lenient.stderr);
    for (at, _) in bad {
        assert!(
            stderr.contains(&format!("-- skipped line {} (log id {}): ", at + 1, at + 1)),
            "line {} is reported: {stderr}",
            at + 1
        );
    }
    assert!(
        stderr.contains(&format!(
            "{} log entries replayed, {} skipped",
            lines.len() - already,
            already + bad.len()
        )),
        "{stderr}"
    );

    let strict = replay(&damaged, 1, &["--strict"]);
    assert!(!strict.status.success(), "--strict fails on a broken line");
    let stderr = String::from_utf8_lossy(&strict.stderr);
    assert!(
        stderr.contains(&format!(
            "--strict: {} log entries are not world messages",
            already + bad.len()
        )) && stderr.contains("line 11 (log id 11)"),
        "{stderr}"
    );
    assert!(strict.stdout.is_empty(), "nothing replayed under --strict");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where a snapshot ends in a Redis world stream: the entry there; nothing knowable once the
/// stream was trimmed past it; another stream when one made since holds later ids only.
#[test]
fn a_snapshot_position_in_a_stream_is_held_trimmed_away_or_of_another_stream() {
    use geppetto_service::bus::redis::{RedisBus, RedisBusConfig};
    use geppetto_service::runtime::world_log::{EntryAt, WorldLog};

    let server = redis_server::RedisServer::start();
    let key = "geppetto:{village}:world";
    for n in 0..5 {
        server.xadd(key, &format!("m{n}"));
    }
    let client = redis::Client::open(server.url.as_str()).expect("url");
    let mut redis = client.get_connection().expect("connection");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let config = RedisBusConfig {
            url: server.url.clone(),
            ..RedisBusConfig::default()
        };
        let log = WorldLog::Stream(std::sync::Arc::new(
            RedisBus::connect(config).await.expect("bus"),
        ));
        let entries = log.read_after("village", None, 10).await.expect("read");
        let third = entries[2].id.clone();
        let at = log.entry_at("village", &third).await.expect("position");
        assert!(
            matches!(&at, EntryAt::Holds(entry) if entry.body == "m2"),
            "{at:?}"
        );
        redis::cmd("XTRIM")
            .arg(key)
            .arg("MAXLEN")
            .arg(1)
            .query::<()>(&mut redis)
            .expect("trim");
        let trimmed = log.entry_at("village", &third).await.expect("position");
        assert_eq!(trimmed, EntryAt::Gone);
        redis::cmd("DEL")
            .arg(key)
            .query::<()>(&mut redis)
            .expect("del");
        server.xadd(key, "another log");
        let other = log.entry_at("village", &third).await.expect("position");
        assert_eq!(other, EntryAt::Missing);
    });
}
