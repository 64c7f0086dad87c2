//! Replay against folding the log whole, streamed page by page, compared with a recording.

use super::*;
use crate::runtime::recovery::{governor_script, replay_messages};
use std::path::Path;

fn temp(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("geppetto-{name}-{}", std::process::id()));
    std::fs::write(&path, text).expect("write");
    path
}

/// World event `n` as read from line `n` of a log.
fn event(n: usize) -> (LogEntry, WorldMessage) {
    let body =
        format!(r#"{{"v":1,"type":"time_advanced","id":"e{n}","zone":"z","game_time":{n}}}"#);
    let message = parse_world_within(&body, &EnvelopeLimits::default()).expect("parses");
    let entry = LogEntry {
        id: n.to_string(),
        body,
        line: Some(n),
    };
    (entry, message)
}

/// `replayed` (each world event's intents) compared with the recording `recorded`.
fn compare(name: &str, recorded: &[&str], replayed: &[&[&str]]) -> Option<String> {
    let path = temp(name, &recorded.join("\n"));
    let mut comparison = Comparison::new(&path, StreamKind::Intents);
    for (n, intents) in replayed.iter().enumerate() {
        let (entry, message) = event(n + 1);
        let applied = Applied {
            entry: &entry,
            message: &message,
            intents: intents.iter().map(ToString::to_string).collect(),
        };
        comparison.replayed(&applied).expect("compares");
    }
    let difference = comparison.finish().expect("finishes");
    let _ = std::fs::remove_file(path);
    difference
}

#[test]
fn intents_compare_as_json_values_and_the_first_difference_is_named() {
    let a = r#"{"v":1,"type":"use","id":"z:a:1:0","npc":"a"}"#;
    let reordered = r#"{"id":"z:a:1:0","npc":"a","type":"use","v":1,"log_id":"3-0"}"#;
    let b = r#"{"v":1,"type":"use","id":"z:b:1:0","npc":"b"}"#;
    let c = r#"{"v":1,"type":"use","id":"z:c:2:0","npc":"c"}"#;
    assert_eq!(compare("same", &[reordered, b], &[&[a], &[], &[b]]), None);
    assert_eq!(
        compare("duplicates", &[a, b, a, b], &[&[a, a], &[b]]),
        None,
        "duplicates by id are dropped on both sides"
    );
    let differs = compare("differs", &[a, a, c], &[&[a], &[], &[b, c]]).expect("differs");
    // The recording's second distinct intent, as a JSONL log reads it.
    let c_as_read = r#"{"id":"z:c:2:0","npc":"c","type":"use","v":1}"#;
    assert_eq!(
        differs,
        format!(
            "intent 1 differs:\n  recorded: {c_as_read}\n  replayed: {b}\n  the streams part after \
             world event `e2` at line 2 (log id 2), game time 2; the differing intent comes \
             from world event `e3` at line 3 (log id 3), game time 3"
        )
    );
    let shorter = compare("shorter", &[a, b, c], &[&[a], &[b]]).expect("differs");
    assert_eq!(
        shorter,
        "the replay emitted 2 intents, the recording holds 3\n  the streams part after \
         world event `e2` at line 2 (log id 2), game time 2 (the last one replayed)"
    );
    let longer = compare("longer", &[a], &[&[a], &[b, b, c]]).expect("differs");
    assert_eq!(
        longer,
        "the replay emitted 3 intents, the recording holds 1\n  the streams part after \
         world event `e1` at line 1 (log id 1), game time 1; the differing intent comes \
         from world event `e2` at line 2 (log id 2), game time 2"
    );
    let nothing = compare("nothing", &[a], &[]).expect("differs");
    assert!(
        nothing.starts_with(
            "the replay emitted 0 intents, the recording holds 1\n  the \
             streams part before the first world event (the last one replayed)"
        ),
        "{nothing}"
    );
    let missing =
        Comparison::new(Path::new("/nonexistent/intents.jsonl"), StreamKind::Intents).finish();
    assert!(
        matches!(missing, Err(HistoryError::Refused(m)) if m.starts_with("/nonexistent/intents.jsonl: "))
    );
}

#[test]
fn a_snapshot_pick_is_latest_or_a_sequence() {
    assert_eq!("latest".parse(), Ok(SnapshotPick::Latest));
    assert_eq!("12".parse(), Ok(SnapshotPick::Sequence(12)));
    assert!("newest".parse::<SnapshotPick>().is_err());
}

/// A village log of more than two pages: a tick every 30 entries, players walking from
/// room to room, social events, the zone's settings 100 entries in, a malformed line now
/// and then, and with `governed` the governor's decisions skipping every NPC in ticks
/// 40–80, each logged after its tick (every other one with its type escaped).
fn village_log(governed: bool) -> Vec<String> {
    let village = crate::content::world_file::shipped_world("village")
        .expect("shipped")
        .expect("village");
    let npcs: Vec<String> = village.npcs.iter().map(|n| n.agent.id.clone()).collect();
    let rooms: Vec<String> = village.rooms.iter().map(|r| r.id.clone()).collect();
    let kinds = ["theft", "insult", "gift", "praise"];
    let mut lines = Vec::new();
    for i in 0..LOG_PAGE_LINES {
        let (tick, slot) = (i / 30, i % 30);
        let time = 420 + tick;
        let line = match slot {
            _ if i == 100 => format!(
                r#"{{"v":1,"type":"zone_settings","id":"s","zone":"village","game_time":{time},"completion":"simulated","origin":"geppetto"}}"#
            ),
            0 => format!(
                r#"{{"v":1,"type":"time_advanced","id":"t{i}","zone":"village","game_time":{time}}}"#
            ),
            1 => serde_json::json!({
                "v": 1, "type": "player_entered", "id": format!("p{i}"), "zone": "village",
                "game_time": time, "player": format!("p{}", tick % 3),
                "room": rooms[(tick / 7) % rooms.len()],
            })
            .to_string(),
            // Every other one with its type escaped, as a writer may.
            5 if governed && (40..=80).contains(&tick) => {
                let decision = serde_json::json!({
                    "v": 1, "type": "governor_decision", "id": format!("g{i}"),
                    "zone": "village", "game_time": time, "origin": "geppetto",
                    "tick": tick, "skipped": npcs,
                })
                .to_string();
                if tick % 2 == 0 {
                    decision
                } else {
                    decision.replace("governor_decision", "governor\\u005fdecision")
                }
            }
            7 if i % 301 == 7 => "{\"v\":1,\"type\":\"broken".to_owned(),
            _ => serde_json::json!({
                "v": 1, "type": "social_event", "id": format!("e{i}"), "zone": "village",
                "game_time": time, "kind": kinds[i % kinds.len()],
                "source": npcs[i % npcs.len()], "target": npcs[(i / 3 + 1) % npcs.len()],
                "deltas": {},
            })
            .to_string(),
        };
        lines.push(line);
    }
    lines
}

/// Lines of the log above: more than two pages.
const LOG_PAGE_LINES: usize = super::super::log_source::LOG_PAGE * 2 + 500;

fn options(log: &Path) -> ReplayOptions {
    ReplayOptions {
        source: LogSource::File(log.to_owned()),
        zone_config: ZoneConfig::default(),
        limits: EnvelopeLimits::default(),
        world: "village".into(),
        zone: None,
        from_snapshot: None,
        store: None,
        compare: None,
        stream: StreamKind::Intents,
        threads: 1,
    }
}

/// The intents of `lines` folded as a whole: every message parsed first, the governor's
/// script and the first settings taken from all of them, then applied one at a time.
fn folded_whole(options: &ReplayOptions, lines: &[String]) -> Vec<String> {
    let (mut zone, _) =
        starting_zone(options, &ReplayContent::embedded().expect("content")).expect("zone");
    let messages: Vec<WorldMessage> = lines
        .iter()
        .filter_map(|line| parse_world_within(line, &options.limits).ok())
        .collect();
    let mut script = GovernorScript::new();
    governor_script(&messages, &mut script);
    zone.begin_as_logged(&messages);
    let clock = crate::runtime::wall_clock();
    let inputs = TickInputs::replaying(&clock, &script);
    messages
        .iter()
        .flat_map(|message| {
            replay_messages(&mut zone, std::slice::from_ref(message), &inputs).messages
        })
        .filter(|(stream, _)| *stream == StreamKind::Intents)
        .map(|(_, body)| body)
        .collect()
}

fn replayed(
    options: &ReplayOptions,
    strict: bool,
) -> (Result<ReplaySummary, HistoryError>, Vec<String>) {
    let mut written = Vec::new();
    let summary = replay(options, strict, |line| written.push(line.to_owned()));
    (summary, written)
}

#[test]
fn a_log_streamed_a_page_at_a_time_replays_as_the_whole_log_folded_at_once() {
    let lines = village_log(true);
    let path = temp("streamed", &lines.join("\n"));
    let options = options(&path);
    let whole = folded_whole(&options, &lines);
    let (summary, streamed) = replayed(&options, false);
    let summary = summary.expect("replays");
    assert!(whole.len() > 100, "a busy log: {} intents", whole.len());
    assert_eq!(streamed, whole, "the same intents, in the same order");
    assert_eq!(summary.intents, whole.len());
    let broken = lines.iter().filter(|l| l.ends_with("broken")).count();
    assert_eq!(summary.skipped.len(), broken);
    assert_eq!(summary.replayed as usize, lines.len() - broken);
    // The governor's decisions, logged after the ticks they shaped, were applied.
    let ungoverned = village_log(false);
    let ungoverned_path = temp("ungoverned", &ungoverned.join("\n"));
    let (_, free) = replayed(&super::tests::options(&ungoverned_path), false);
    assert_ne!(
        free, streamed,
        "skipping every NPC for 40 ticks changes the intents"
    );
    // Compared with its own recording: identical.
    let recording = temp("recording", &whole.join("\n"));
    let comparing = ReplayOptions {
        compare: Some(recording.clone()),
        ..options.clone()
    };
    let (compared, written) = replayed(&comparing, false);
    assert_eq!(compared.expect("compares").difference, None);
    assert!(written.is_empty(), "nothing is printed while comparing");
    // Under --strict the malformed lines fail the replay before anything is printed.
    let (strict, written) = replayed(&options, true);
    assert!(
        matches!(&strict, Err(HistoryError::Refused(m)) if m.starts_with(&format!("--strict: {broken} log entries are not world messages:\n  line 8 (log id 8): "))),
        "{:?}",
        strict.err()
    );
    assert!(written.is_empty());
    for path in [path, ungoverned_path, recording] {
        let _ = std::fs::remove_file(path);
    }
}

#[test]
fn a_replay_says_the_same_on_any_number_of_threads() {
    let lines = village_log(true);
    let path = temp("threads", &lines.join("\n"));
    let options = options(&path);
    let on = |threads: usize| {
        let (summary, written) = replayed(
            &ReplayOptions {
                threads,
                ..options.clone()
            },
            false,
        );
        (summary.expect("replays"), written)
    };
    let (summary, written) = on(1);
    assert!(written.len() > 100, "a busy log: {} intents", written.len());
    for threads in [0, 2] {
        assert_eq!(
            on(threads),
            (summary.clone(), written.clone()),
            "{threads} threads"
        );
    }
    let _ = std::fs::remove_file(path);
}
