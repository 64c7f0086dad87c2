//! `geppetto replay`: a zone's recorded world log, offline.
//!
//! Replay re-runs a world log through the core — from the world file, or from a stored
//! snapshot and the log after it — with the governor's logged decisions, and prints the intents
//! it emits (JSONL, exactly as published), or reports the first difference against a recorded
//! intent stream (duplicates by id dropped on both sides).
//!
//! A log of any length replays in bounded memory. It is read twice, a page at a time: a scan
//! keeps what the fold needs before it starts (the governor's logged decisions — one for each
//! tick in which it shed or gave back work, logged after the tick it shaped — and the zone's
//! first settings; under `--strict` every entry that is no world message), then the fold reads
//! and parses the next page on a thread of its own while the zone, alone on this one, applies
//! the page before, and hands each event's intents on as they come. Comparing keeps the ids of
//! the intents seen, never the intents.
//!
//! A snapshot is laid over a log only if it belongs to it: its anchor must name the world file
//! given and the entry the log holds at the snapshot's position (a snapshot of another world or
//! log is refused, saying what differs). An older snapshot without an anchor, or one whose
//! position a trimmed log no longer holds, is used and the summary says it was not checked.
//! Logs are read through [`super::log_source`].

mod compare;

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Arc;

use geppetto_storage::{RedbFile, RedisSnapshotStore, SnapshotStore, StorageConfig};

use self::compare::Comparison;
use super::error::HistoryError;
use super::log_source::{LogEntry, LogPages, LogSource, bad, block_on, environment, position};
use crate::bus::StreamKind;
use crate::bus::envelope::{
    Completion, EnvelopeError, EnvelopeLimits, GovernorDecision, WorldEvent, WorldMessage,
    parse_world_within,
};
use crate::content::archetypes::ArchetypeLibrary;
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::content::world_file::WorldFile;
use crate::runtime::recovery::{governor_script, replay_messages};
use crate::runtime::world_log::Position;
use crate::zone::isolation::IsolationState;
use crate::zone::{
    GovernorScript, TickInputs, ZONE_STATE_SCHEMA_VERSION, Zone, ZoneConfig, ZoneState,
};

/// Which stored snapshot a replay starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotPick {
    /// The newest valid one.
    Latest,
    /// This sequence.
    Sequence(u64),
}

impl std::str::FromStr for SnapshotPick {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "latest" {
            return Ok(Self::Latest);
        }
        text.parse()
            .map(Self::Sequence)
            .map_err(|_| format!("`{text}` is neither `latest` nor a snapshot sequence number"))
    }
}

/// What `geppetto replay` is asked.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// The log.
    pub source: LogSource,
    /// The zone settings the log was recorded under (tick, tiers; the governor's decisions come
    /// from the log).
    pub zone_config: ZoneConfig,
    /// The world-message limits the log was read under live (`[consumer.limits]`): a message
    /// the live loop refused is refused here too.
    pub limits: EnvelopeLimits,
    /// The world file (`village` for the embedded one).
    pub world: String,
    /// The zone (default: the world file's).
    pub zone: Option<String>,
    /// Start from a stored snapshot instead of the world file.
    pub from_snapshot: Option<SnapshotPick>,
    /// The redb file holding snapshots (with a Redis log, the Redis store is the default).
    pub store: Option<PathBuf>,
    /// A recorded intent stream (JSONL) to compare against.
    pub compare: Option<PathBuf>,
    /// Decision worker threads (never changes the answer).
    pub threads: usize,
}

/// What a replay did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplaySummary {
    /// Log entries replayed.
    pub replayed: u64,
    /// Intents emitted.
    pub intents: usize,
    /// Log entries left out (not world messages), each with where it is and why.
    pub skipped: Vec<String>,
    /// From a snapshot: how it was checked against the world file and the log.
    pub snapshot_check: Option<String>,
    /// With `--compare`: `None` when identical, else the first difference and the world event
    /// where the streams part.
    pub difference: Option<String>,
}

fn stored_snapshot(
    options: &ReplayOptions,
    zone: &str,
    pick: SnapshotPick,
) -> Result<geppetto_storage::Snapshot, HistoryError> {
    block_on(async {
        let config = StorageConfig::default();
        let store: Arc<dyn SnapshotStore> = match (&options.store, &options.source) {
            (None, LogSource::Service { store, .. }) => Arc::clone(store),
            (Some(file), _) => Arc::new(
                RedbFile::open(file, &config)
                    .map_err(environment)?
                    .snapshot_store(),
            ),
            (None, LogSource::Redis(url)) => Arc::new(
                RedisSnapshotStore::connect(url, &config)
                    .await
                    .map_err(environment)?,
            ),
            (None, LogSource::Redb(file)) => Arc::new(
                RedbFile::open(file, &config)
                    .map_err(environment)?
                    .snapshot_store(),
            ),
            (None, LogSource::File(_)) => {
                return Err(bad("--from-snapshot with --log needs --store FILE.redb"));
            }
        };
        let key = geppetto_storage::ZoneName::new(zone).map_err(bad)?;
        let found = match pick {
            SnapshotPick::Latest => {
                let latest = store
                    .latest_valid(&key, ZONE_STATE_SCHEMA_VERSION)
                    .await
                    .map_err(environment)?;
                for skipped in &latest.skipped {
                    tracing::warn!(%skipped, "snapshot skipped");
                }
                latest.snapshot
            }
            SnapshotPick::Sequence(sequence) => store
                .get(&key, sequence, ZONE_STATE_SCHEMA_VERSION)
                .await
                .map_err(bad)?,
        };
        found.ok_or_else(|| bad(format!("no usable snapshot of zone `{zone}` ({pick:?})")))
    })?
}

/// The content a replay builds its zone from (a what-if's run uses a changed copy).
#[derive(Clone)]
pub struct ReplayContent {
    /// Tuning profiles.
    pub profiles: ProfileLibrary,
    /// Reactive utility sets.
    pub sets: SetLibrary,
    /// Archetypes.
    pub archetypes: ArchetypeLibrary,
}

impl ReplayContent {
    /// The shipped content.
    pub fn embedded() -> Result<Self, HistoryError> {
        Ok(Self {
            profiles: ProfileLibrary::embedded().map_err(bad)?,
            sets: SetLibrary::embedded().map_err(bad)?,
            archetypes: ArchetypeLibrary::embedded().map_err(bad)?,
        })
    }
}

/// The snapshot a replay starts from.
struct Start {
    /// Its sequence.
    sequence: u64,
    /// The last log entry it covers.
    last_event_id: String,
    /// How it was checked against the world file and the log.
    checked: String,
}

/// The zone a replay starts from (the world file, or a stored snapshot laid over it) and the
/// snapshot, if any.
fn starting_zone(
    options: &ReplayOptions,
    content: &ReplayContent,
) -> Result<(Zone, Option<Start>), HistoryError> {
    let world = crate::content::world_file::load_world(&options.world)
        .map_err(|e| HistoryError::Refused(e.to_string()))?;
    let zone_name = options.zone.clone().unwrap_or_else(|| world.zone.clone());
    if zone_name != world.zone {
        return Err(bad(format!(
            "--zone `{zone_name}` but the world file is of zone `{}`",
            world.zone
        )));
    }
    let mut config = options.zone_config.clone();
    config.tick.decision_workers = options.threads.max(1);
    let build = |vocabulary: &[String]| {
        Zone::over(
            &world,
            &content.profiles,
            &content.sets,
            Some(&content.archetypes),
            config.clone(),
            IsolationState::default(),
            vocabulary,
        )
    };
    match options.from_snapshot {
        Some(pick) => {
            let snapshot = stored_snapshot(options, &zone_name, pick)?;
            let sequence = snapshot.sequence;
            let state: ZoneState = serde_json::from_slice(&snapshot.payload)
                .map_err(|e| bad(format!("snapshot {sequence}: {e}")))?;
            let checked = check_anchor(options, &world, sequence, &snapshot.last_event_id, &state)?;
            let fresh = build(&state.vocabulary).map_err(bad)?;
            let zone = Zone::restored(fresh, state)
                .map_err(|e| bad(format!("snapshot {sequence}: {e}")))?;
            let start = Start {
                sequence,
                last_event_id: snapshot.last_event_id,
                checked,
            };
            Ok((zone, Some(start)))
        }
        None => Ok((build(&[]).map_err(bad)?, None)),
    }
}

/// Refuses snapshot `sequence` unless its anchor names `world` and the entry the log holds at
/// `last_event_id`; says how it was checked.
fn check_anchor(
    options: &ReplayOptions,
    world: &WorldFile,
    sequence: u64,
    last_event_id: &str,
    state: &ZoneState,
) -> Result<String, HistoryError> {
    let Some(anchor) = &state.anchor else {
        return Ok(format!(
            "snapshot {sequence} carries no anchor (an older geppetto wrote it): it was not \
             checked against this world file and log"
        ));
    };
    let refuse = |why: String| {
        bad(format!(
            "snapshot {sequence} of zone `{}` does not belong here: {why}; replay from the start \
             (without --from-snapshot), or give the world file and log it was taken over",
            world.zone
        ))
    };
    anchor
        .check_world(&world.fingerprint)
        .map_err(|e| refuse(e.to_string()))?;
    match position(&options.source, &world.zone, last_event_id)? {
        Position::Holds(entry) => {
            anchor
                .check_entry(&entry.body)
                .map_err(|e| refuse(e.to_string()))?;
            Ok(format!(
                "snapshot {sequence} covers log entry `{last_event_id}`, {}, as this log holds it",
                anchor.last
            ))
        }
        Position::Missing => Err(refuse(anchor.missing().to_string())),
        Position::Gone => Ok(format!(
            "this log starts after log entry `{last_event_id}`, which snapshot {sequence} \
             covers: its anchor could not be checked"
        )),
    }
}

/// A world event a replay applied: what a difference is traced back to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventSource {
    /// The message's id.
    pub id: String,
    /// Where it is in the log (line, log id).
    pub place: String,
    /// Its game time, ticks.
    pub game_time: u64,
}

impl std::fmt::Display for EventSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` at {}, game time {}",
            self.id, self.place, self.game_time
        )
    }
}

/// Where a replayed window starts and ends.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Window {
    /// The snapshot it starts from (`None`: the world file, at the log's beginning).
    pub snapshot: Option<u64>,
    /// Game time at its start, ticks.
    pub from_game_time: u64,
    /// Game time at its end, ticks.
    pub to_game_time: u64,
    /// World events replayed.
    pub events: u64,
}

/// A world event a replay applied, with the intents it emitted.
pub struct Applied<'a> {
    /// The log entry it was read from.
    pub entry: &'a LogEntry,
    /// The world message.
    pub message: &'a WorldMessage,
    /// The intents it emitted, in order, as published.
    pub intents: Vec<String>,
}

impl Applied<'_> {
    /// The event, named for a report.
    pub fn source(&self) -> EventSource {
        EventSource {
            id: self.message.header.id.clone(),
            place: self.entry.place(),
            game_time: self.message.header.game_time,
        }
    }
}

/// What a replay of a window did besides its intents.
pub struct ReplayRun {
    /// The window replayed.
    pub window: Window,
    /// Log entries that are not world messages (or not within the limits), each with where it
    /// is and why: left out, as the live loop dead-lettered them.
    pub skipped: Vec<String>,
    /// From a snapshot: how it was checked against the world file and the log.
    pub snapshot_check: Option<String>,
}

/// What the fold needs before it starts, found by a scan of the log.
#[derive(Default)]
struct Scan {
    /// The governor's logged decisions by tick (each logged after the tick it shaped).
    script: GovernorScript,
    /// The zone's first `zone_settings`, which a replay from the start of the log runs in.
    settings: Option<WorldMessage>,
    /// Log entries scanned (the length of the fold's progress bar).
    entries: u64,
    /// Under `--strict`: the entries that are not world messages, each with where and why.
    skipped: Vec<String>,
}

/// The `type`s of the entries a scan keeps.
fn kept_types() -> [&'static str; 2] {
    [
        WorldEvent::GovernorDecision(GovernorDecision::default()).kind(),
        WorldEvent::ZoneSettings {
            completion: Completion::default(),
        }
        .kind(),
    ]
}

/// Scans `zone`'s log after `after` up to the first world event past game time `end`: what the
/// fold needs before it starts. Only an entry whose text names a kept type (or escapes a
/// character, which could spell one) is read and parsed, unless every entry must be: to report
/// each one that is not a world message (`strict`), or to find where the window ends.
fn scan(
    options: &ReplayOptions,
    zone: &str,
    after: Option<&str>,
    end: Option<u64>,
    strict: bool,
) -> Result<Scan, HistoryError> {
    let kept = kept_types();
    let every = strict || end.is_some();
    let wanted =
        |text: &str| every || text.contains('\\') || kept.iter().any(|kind| text.contains(kind));
    let mut scan = Scan::default();
    let mut pages = LogPages::open(&options.source, zone, StreamKind::World, after)?;
    loop {
        let (page, covered) = pages.next_page_where(&wanted)?;
        if covered == 0 {
            return Ok(scan);
        }
        scan.entries += covered as u64;
        for entry in &page {
            match parse_world_within(&entry.body, &options.limits) {
                Ok(message) if end.is_some_and(|end| message.header.game_time > end) => {
                    return Ok(scan);
                }
                Ok(message) => {
                    governor_script(std::iter::once(&message), &mut scan.script);
                    if scan.settings.is_none()
                        && message.header.zone == zone
                        && matches!(message.event, WorldEvent::ZoneSettings { .. })
                    {
                        scan.settings = Some(message);
                    }
                }
                Err(error) if strict => {
                    scan.skipped.push(format!("{}: {error}", entry.place()));
                }
                Err(_) => {}
            }
        }
    }
}

/// A page of log entries as the reader thread hands it over: each entry with the world
/// message it holds, or why it holds none.
type ParsedPage = Vec<(LogEntry, Result<WorldMessage, EnvelopeError>)>;

/// Replays the log of `options` with `content`, after `adjust` has changed the starting zone,
/// up to `ticks` game ticks past the start (all of it when `None`), handing each world event
/// applied to `each` with the intents it emitted. With `strict`, any log entry that is not a
/// world message fails the replay before anything is applied.
pub fn replay_window(
    options: &ReplayOptions,
    content: &ReplayContent,
    adjust: impl FnOnce(&mut Zone) -> Result<(), HistoryError>,
    ticks: Option<u64>,
    strict: bool,
    mut each: impl FnMut(Applied<'_>) -> Result<(), HistoryError>,
) -> Result<ReplayRun, HistoryError> {
    let (mut zone, start) = starting_zone(options, content)?;
    let snapshot = start.as_ref().map(|start| start.sequence);
    let after = start.as_ref().map(|start| start.last_event_id.clone());
    let from_game_time = zone.game_time;
    adjust(&mut zone)?;
    let end = ticks.map(|t| zone.game_time.saturating_add(t));
    let name = zone.name.clone();
    let scan = scan(options, &name, after.as_deref(), end, strict)?;
    if !scan.skipped.is_empty() {
        return Err(bad(format!(
            "--strict: {} log entries are not world messages:\n  {}",
            scan.skipped.len(),
            scan.skipped.join("\n  ")
        )));
    }
    if snapshot.is_none() {
        zone.begin_as_logged(&scan.settings);
    }
    let clock = crate::runtime::wall_clock();
    let inputs = TickInputs::replaying(&clock, &scan.script);
    let progress = super::progress::bar(scan.entries, "replaying", "log entries");
    let limits: &EnvelopeLimits = &options.limits;
    let mut events = 0u64;
    let mut skipped = Vec::new();
    LogPages::open(&options.source, &name, StreamKind::World, after.as_deref())?.pipelined(
        |page| -> ParsedPage {
            page.into_iter()
                .map(|entry| {
                    let message = parse_world_within(&entry.body, limits);
                    (entry, message)
                })
                .collect()
        },
        |page| {
            for (entry, message) in page {
                progress.inc(1);
                match message {
                    Ok(message) if end.is_some_and(|end| message.header.game_time > end) => {
                        return Ok(ControlFlow::Break(()));
                    }
                    Ok(message) => {
                        let out =
                            replay_messages(&mut zone, std::slice::from_ref(&message), &inputs);
                        let intents = out
                            .messages
                            .into_iter()
                            .filter(|(stream, _)| *stream == StreamKind::Intents)
                            .map(|(_, body)| body)
                            .collect();
                        events += 1;
                        each(Applied {
                            entry: &entry,
                            message: &message,
                            intents,
                        })?;
                    }
                    Err(error) => skipped.push(format!("{}: {error}", entry.place())),
                }
            }
            Ok(ControlFlow::Continue(()))
        },
    )?;
    progress.finish_and_clear();
    Ok(ReplayRun {
        window: Window {
            snapshot,
            from_game_time,
            to_game_time: zone.game_time,
            events,
        },
        skipped,
        snapshot_check: start.map(|start| start.checked),
    })
}

/// Runs a replay; each intent is handed to `write` as it comes, unless comparing. Each log
/// entry that is not a world message is reported in the summary (where and why); with `strict`
/// any such entry fails the replay instead, before anything is written.
pub fn replay(
    options: &ReplayOptions,
    strict: bool,
    mut write: impl FnMut(&str),
) -> Result<ReplaySummary, HistoryError> {
    let mut comparison = options.compare.as_deref().map(Comparison::new);
    let mut intents = 0usize;
    let run = replay_window(
        options,
        &ReplayContent::embedded()?,
        |_| Ok(()),
        None,
        strict,
        |applied| {
            intents += applied.intents.len();
            match &mut comparison {
                Some(comparison) => comparison.replayed(&applied)?,
                None => applied.intents.iter().for_each(|intent| write(intent)),
            }
            Ok(())
        },
    )?;
    let difference = match comparison {
        Some(comparison) => comparison.finish()?,
        None => None,
    };
    Ok(ReplaySummary {
        replayed: run.window.events,
        intents,
        skipped: run.skipped,
        snapshot_check: run.snapshot_check,
        difference,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::recovery::governor_script;
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
        let mut comparison = Comparison::new(&path);
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
        let missing = Comparison::new(Path::new("/nonexistent/intents.jsonl")).finish();
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
}
