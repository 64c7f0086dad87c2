//! `geppetto replay` and `geppetto log export`: a zone's recorded world log, offline.
//!
//! Replay re-runs a world log through the core — from the world file, or from a stored
//! snapshot and the log after it — with the governor's logged decisions, and prints the intents
//! it emits (JSONL, exactly as published), or reports the first difference against a recorded
//! intent stream (duplicates by id dropped on both sides). Export writes a stream of a zone as
//! JSONL, each line the envelope with its log position as `log_id`; replay reads that format
//! back (a line without `log_id` is numbered by its line), so a log can leave the machine.
//!
//! Logs come from a JSONL file, a Redis world stream, or the embedded redb log.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use geppetto_storage::{
    EventId, EventLog, RedbFile, RedisSnapshotStore, SnapshotStore, StorageConfig,
};
use serde_json::Value;

use super::error::CommandError;
use crate::bus::StreamKind;
use crate::bus::envelope::{EnvelopeLimits, WorldMessage, parse_world_within};
use crate::bus::redis::{RedisBus, RedisBusConfig};
use crate::content::archetypes::ArchetypeLibrary;
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::runtime::recovery::{governor_script, replay_messages};
use crate::zone::isolation::IsolationState;
use crate::zone::{TickInputs, ZONE_STATE_SCHEMA_VERSION, Zone, ZoneConfig, ZoneState};

/// Where a log is read from.
#[derive(Clone)]
pub enum LogSource {
    /// A JSONL file (as `log export` writes, or plain envelopes one per line).
    File(PathBuf),
    /// A zone's stream on Redis at this URL.
    Redis(String),
    /// The embedded redb log in this file.
    Redb(PathBuf),
    /// A running service's own log and snapshot store (the admin API's what-if).
    Service {
        /// The zone's world log.
        log: crate::runtime::recovery::WorldLog,
        /// Its snapshots.
        store: Arc<dyn SnapshotStore>,
    },
}

impl std::fmt::Debug for LogSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(path) => write!(f, "File({})", path.display()),
            Self::Redis(url) => write!(f, "Redis({url})"),
            Self::Redb(path) => write!(f, "Redb({})", path.display()),
            Self::Service { .. } => write!(f, "Service"),
        }
    }
}

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
    /// With `--compare`: `None` when identical, else the first difference and the world event
    /// where the streams part.
    pub difference: Option<String>,
}

/// One log entry: its position in the log, the message as recorded and, read from a file, its
/// line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    /// Its log id (a file's `log_id`, else its line number).
    pub id: String,
    /// The message as recorded.
    pub body: String,
    /// Its line in a JSONL file.
    pub line: Option<usize>,
}

impl LogEntry {
    fn new(id: String, body: String) -> Self {
        Self {
            id,
            body,
            line: None,
        }
    }

    /// Where it is, for a report: `line 7 (log id 7-0)` or `log id 7-0`.
    pub fn place(&self) -> String {
        match self.line {
            Some(line) => format!("line {line} (log id {})", self.id),
            None => format!("log id {}", self.id),
        }
    }
}

fn bad(error: impl std::fmt::Display) -> CommandError {
    CommandError::BadInput(error.to_string())
}

fn environment(error: impl std::fmt::Display) -> CommandError {
    CommandError::Environment(error.to_string())
}

/// Runs `future` to completion: on the running service's runtime when called from one of its
/// blocking threads (an admin what-if), else on a runtime of its own (the CLI).
fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, CommandError> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => Ok(handle.block_on(future)),
        Err(_) => Ok(tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(environment)?
            .block_on(future)),
    }
}

/// Reads a JSONL log: `log_id` (else the line number) and the envelope (or `unparsed` text).
pub fn read_jsonl(path: &Path) -> Result<Vec<LogEntry>, CommandError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CommandError::BadInput(format!("{}: {e}", path.display())))?;
    let mut entries = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let number = (index + 1).to_string();
        let (id, body) = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(mut fields)) => {
                let id = match fields.remove("log_id") {
                    Some(Value::String(id)) => id,
                    _ => number,
                };
                match fields.remove("unparsed") {
                    Some(Value::String(raw)) => (id, raw),
                    _ => (id, Value::Object(fields).to_string()),
                }
            }
            _ => (number, line.to_owned()),
        };
        entries.push(LogEntry {
            id,
            body,
            line: Some(index + 1),
        });
    }
    Ok(entries)
}

/// Every entry after `after`, read a page at a time with `page` (given the last id read) until
/// a page comes back empty.
async fn all_pages<F, Fut>(after: Option<&str>, mut page: F) -> Result<Vec<LogEntry>, CommandError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<crate::bus::Delivery>, CommandError>>,
{
    let mut all = Vec::new();
    let mut cursor = after.map(str::to_owned);
    loop {
        let entries = page(cursor.clone()).await?;
        let Some(last) = entries.last() else { break };
        cursor = Some(last.id.clone());
        all.extend(entries.into_iter().map(|d| LogEntry::new(d.id, d.body)));
    }
    Ok(all)
}

/// Every entry of `zone`'s `stream` after `after` from `source`, in log order.
pub fn read_log(
    source: &LogSource,
    zone: &str,
    stream: StreamKind,
    after: Option<&str>,
) -> Result<Vec<LogEntry>, CommandError> {
    const PAGE: usize = 10_000;
    let mut entries = match source {
        LogSource::File(path) => read_jsonl(path)?,
        LogSource::Service { log, .. } => block_on(all_pages(after, |cursor| async move {
            log.read_after(zone, cursor.as_deref(), PAGE)
                .await
                .map_err(environment)
        }))??,
        LogSource::Redis(url) => block_on(async {
            let bus = RedisBus::connect(RedisBusConfig {
                url: url.clone(),
                ..RedisBusConfig::default()
            })
            .await
            .map_err(environment)?;
            all_pages(after, |cursor| {
                let bus = &bus;
                async move {
                    bus.read_range(zone, stream, cursor.as_deref(), PAGE)
                        .await
                        .map_err(environment)
                }
            })
            .await
        })??,
        LogSource::Redb(path) => {
            if stream != StreamKind::World {
                return Err(bad("the embedded redb log holds only the world stream"));
            }
            let log = RedbFile::open(path, &StorageConfig::default())
                .map_err(environment)?
                .event_log();
            let key = geppetto_storage::ZoneName::new(zone).map_err(bad)?;
            let mut all = Vec::new();
            let mut cursor = match after {
                Some(id) => Some(id.parse::<EventId>().map_err(bad)?),
                None => None,
            };
            loop {
                let page = log.read_after(&key, cursor, PAGE).map_err(environment)?;
                let Some((last, _)) = page.last() else { break };
                cursor = Some(*last);
                all.extend(page.into_iter().map(|(id, body)| {
                    LogEntry::new(id.to_string(), String::from_utf8_lossy(&body).into_owned())
                }));
            }
            all
        }
    };
    // A file is read whole: keep what follows `after`.
    if let (LogSource::File(_), Some(after)) = (source, after) {
        match entries.iter().position(|entry| entry.id == after) {
            Some(index) => {
                entries.drain(..=index);
            }
            None => {
                return Err(bad(format!(
                    "the snapshot covers log entry `{after}`, which this log does not hold"
                )));
            }
        }
    }
    Ok(entries)
}

/// `geppetto log export`: one JSONL line per entry, the envelope with its `log_id` (an entry
/// that is not a JSON object is kept as `unparsed` text).
pub fn export(
    source: &LogSource,
    zone: &str,
    stream: StreamKind,
    mut write: impl FnMut(&str),
) -> Result<usize, CommandError> {
    let entries = read_log(source, zone, stream, None)?;
    let progress = super::progress::bar(entries.len() as u64, "exporting", "entries");
    for LogEntry { id, body, .. } in &entries {
        progress.inc(1);
        let line = match serde_json::from_str::<Value>(body) {
            Ok(Value::Object(mut fields)) => {
                fields.insert("log_id".into(), Value::String(id.clone()));
                Value::Object(fields).to_string()
            }
            _ => serde_json::json!({"log_id": id, "unparsed": body}).to_string(),
        };
        write(&line);
    }
    progress.finish_and_clear();
    Ok(entries.len())
}

fn stored_snapshot(
    options: &ReplayOptions,
    zone: &str,
    pick: SnapshotPick,
) -> Result<geppetto_storage::Snapshot, CommandError> {
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

/// The distinct intents of a recorded stream (JSONL), first occurrence of each id kept.
fn distinct_by_id(lines: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    lines
        .into_iter()
        .filter(|line| intent_id(line).is_none_or(|id| seen.insert(id)))
        .collect()
}

/// Compares replayed intents with a recorded stream as JSON values (a recording's key order
/// and its `log_id`s do not matter); `None` when identical, else the index of the first
/// replayed intent that differs (or the shorter length) and what differs.
fn first_difference(replayed: &[String], recorded: &[String]) -> Option<(usize, String)> {
    let value = |line: &str| -> Value {
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(mut fields)) => {
                fields.remove("log_id");
                Value::Object(fields)
            }
            Ok(other) => other,
            Err(_) => Value::String(line.to_owned()),
        }
    };
    for (index, (got, want)) in replayed.iter().zip(recorded).enumerate() {
        if value(got) != value(want) {
            return Some((
                index,
                format!("intent {index} differs:\n  recorded: {want}\n  replayed: {got}"),
            ));
        }
    }
    (replayed.len() != recorded.len()).then(|| {
        (
            replayed.len().min(recorded.len()),
            format!(
                "the replay emitted {} intents, the recording holds {}",
                replayed.len(),
                recorded.len()
            ),
        )
    })
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
    pub fn embedded() -> Result<Self, CommandError> {
        Ok(Self {
            profiles: ProfileLibrary::embedded().map_err(bad)?,
            sets: SetLibrary::embedded().map_err(bad)?,
            archetypes: ArchetypeLibrary::embedded().map_err(bad)?,
        })
    }
}

/// The zone a replay starts from (the world file, or a stored snapshot laid over it) and the
/// log entry it has folded so far.
fn starting_zone(
    options: &ReplayOptions,
    content: &ReplayContent,
) -> Result<(Zone, Option<(u64, String)>), CommandError> {
    let world = super::world::world(&options.world)?;
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
            let state: ZoneState = serde_json::from_slice(&snapshot.payload)
                .map_err(|e| bad(format!("snapshot {}: {e}", snapshot.sequence)))?;
            let fresh = build(&state.vocabulary).map_err(bad)?;
            let zone = Zone::restored(fresh, state)
                .map_err(|e| bad(format!("snapshot {}: {e}", snapshot.sequence)))?;
            Ok((zone, Some((snapshot.sequence, snapshot.last_event_id))))
        }
        None => Ok((build(&[]).map_err(bad)?, None)),
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

/// What a replay of a window produced.
pub struct ReplayRun {
    /// The window replayed.
    pub window: Window,
    /// The intents emitted, in order, each with the index (into `sources`) of the world event
    /// it came from.
    pub intents: Vec<(String, usize)>,
    /// The world events applied, in order.
    pub sources: Vec<EventSource>,
    /// Log entries that are not world messages (or not within the limits), each with where it
    /// is and why: left out, as the live loop dead-lettered them.
    pub skipped: Vec<String>,
    /// The zone as the window left it.
    pub zone: Zone,
}

/// Replays the log of `options` with `content`, after `adjust` has changed the starting zone,
/// up to `ticks` game ticks past the start (all of it when `None`).
pub fn replay_window(
    options: &ReplayOptions,
    content: &ReplayContent,
    adjust: impl FnOnce(&mut Zone) -> Result<(), CommandError>,
    ticks: Option<u64>,
) -> Result<ReplayRun, CommandError> {
    let (mut zone, start) = starting_zone(options, content)?;
    let (snapshot, after) = start.unzip();
    let from_game_time = zone.game_time;
    adjust(&mut zone)?;
    let end = ticks.map(|t| zone.game_time.saturating_add(t));
    let entries = read_log(
        &options.source,
        &zone.name.clone(),
        StreamKind::World,
        after.as_deref(),
    )?;
    let mut skipped = Vec::new();
    let mut applied: Vec<(WorldMessage, &LogEntry)> = Vec::new();
    for entry in &entries {
        match parse_world_within(&entry.body, &options.limits) {
            Ok(message) if end.is_some_and(|end| message.header.game_time > end) => break,
            Ok(message) => applied.push((message, entry)),
            Err(error) => skipped.push(format!("{}: {error}", entry.place())),
        }
    }
    let messages: Vec<WorldMessage> = applied.iter().map(|(m, _)| m.clone()).collect();
    let mut script = BTreeMap::new();
    governor_script(&messages, &mut script);
    if snapshot.is_none() {
        zone.begin_as_logged(&messages);
    }
    let clock = crate::runtime::wall_clock();
    let inputs = TickInputs::replaying(&clock, &script);
    let mut intents = Vec::new();
    let progress = super::progress::bar(messages.len() as u64, "replaying", "world events");
    for (index, message) in messages.iter().enumerate() {
        progress.inc(1);
        let out = replay_messages(&mut zone, std::slice::from_ref(message), &inputs);
        intents.extend(
            out.messages
                .into_iter()
                .filter(|(stream, _)| *stream == StreamKind::Intents)
                .map(|(_, body)| (body, index)),
        );
    }
    let sources = applied
        .iter()
        .map(|(message, entry)| EventSource {
            id: message.header.id.clone(),
            place: entry.place(),
            game_time: message.header.game_time,
        })
        .collect();
    progress.finish_and_clear();
    Ok(ReplayRun {
        window: Window {
            snapshot,
            from_game_time,
            to_game_time: zone.game_time,
            events: messages.len() as u64,
        },
        intents,
        sources,
        skipped,
        zone,
    })
}

/// Runs a replay; each intent is handed to `write` unless comparing. Each log entry that is not
/// a world message is reported in the summary (where and why); with `strict` any such entry
/// fails the replay instead.
pub fn replay(
    options: &ReplayOptions,
    strict: bool,
    mut write: impl FnMut(&str),
) -> Result<ReplaySummary, CommandError> {
    let run = replay_window(options, &ReplayContent::embedded()?, |_| Ok(()), None)?;
    if strict && !run.skipped.is_empty() {
        return Err(bad(format!(
            "--strict: {} log entries are not world messages:\n  {}",
            run.skipped.len(),
            run.skipped.join("\n  ")
        )));
    }
    let difference = match &options.compare {
        Some(path) => {
            let recorded = distinct_by_id(read_jsonl(path)?.into_iter().map(|entry| entry.body));
            let mut seen = BTreeSet::new();
            let replayed: Vec<&(String, usize)> = run
                .intents
                .iter()
                .filter(|(body, _)| intent_id(body).is_none_or(|id| seen.insert(id)))
                .collect();
            let bodies: Vec<String> = replayed.iter().map(|(body, _)| body.clone()).collect();
            first_difference(&bodies, &recorded).map(|(index, what)| {
                let from = replayed
                    .get(index)
                    .map_or(run.sources.len(), |(_, from)| *from);
                what + &parting(&run.sources, from)
            })
        }
        None => {
            for (intent, _) in &run.intents {
                write(intent);
            }
            None
        }
    };
    Ok(ReplaySummary {
        replayed: run.window.events,
        intents: run.intents.len(),
        skipped: run.skipped,
        difference,
    })
}

/// Where the replayed and recorded streams part: after the world event before `from` (the
/// one whose intents first differ), named by id, place and game time.
fn parting(sources: &[EventSource], from: usize) -> String {
    let after = match from.checked_sub(1).and_then(|before| sources.get(before)) {
        Some(event) => format!("after world event {event}"),
        None => "before the first world event".to_owned(),
    };
    match sources.get(from) {
        Some(event) => format!(
            "\n  the streams part {after}; the differing intent comes from world event {event}"
        ),
        None => format!("\n  the streams part {after} (the last one replayed)"),
    }
}

fn intent_id(line: &str) -> Option<String> {
    serde_json::from_str::<Value>(line)
        .ok()
        .and_then(|v| v.get("id").and_then(Value::as_str).map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, text: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("geppetto-{name}-{}", std::process::id()));
        std::fs::write(&path, text).expect("write");
        path
    }

    #[test]
    fn a_jsonl_log_keeps_its_ids_and_unparsed_entries_and_numbers_the_rest() {
        let path = temp(
            "jsonl",
            "{\"log_id\":\"7-0\",\"v\":1,\"type\":\"time_advanced\"}\n\n\
             {\"log_id\":\"7-1\",\"unparsed\":\"not json\"}\n{\"v\":1}\nbroken\n",
        );
        let entries = read_jsonl(&path).expect("reads");
        let ids: Vec<&str> = entries.iter().map(|entry| entry.id.as_str()).collect();
        assert_eq!(ids, ["7-0", "7-1", "4", "5"]);
        let lines: Vec<Option<usize>> = entries.iter().map(|entry| entry.line).collect();
        assert_eq!(
            lines,
            [Some(1), Some(3), Some(4), Some(5)],
            "blank lines count"
        );
        assert!(!entries[0].body.contains("log_id"), "{}", entries[0].body);
        assert_eq!(entries[1].body, "not json");
        assert_eq!(entries[3].body, "broken");
        assert_eq!(entries[3].place(), "line 5 (log id 5)");
        let after = read_log(
            &LogSource::File(path.clone()),
            "village",
            StreamKind::World,
            Some("7-1"),
        )
        .expect("after");
        assert_eq!(after.len(), 2);
        let missing = read_log(
            &LogSource::File(path.clone()),
            "village",
            StreamKind::World,
            Some("9-9"),
        );
        assert!(matches!(missing, Err(CommandError::BadInput(m)) if m.contains("`9-9`")));
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn an_export_reads_back_as_the_same_log() {
        let path = temp(
            "export-in",
            "{\"v\":1,\"type\":\"say\",\"text\":\"hi\"}\nnot json\n",
        );
        let mut lines = Vec::new();
        let count = export(
            &LogSource::File(path.clone()),
            "village",
            StreamKind::World,
            |l| lines.push(l.to_owned()),
        )
        .expect("exports");
        assert_eq!(count, 2);
        let out = temp("export-out", &lines.join("\n"));
        let back = read_jsonl(&out).expect("reads");
        assert_eq!(back, read_jsonl(&path).expect("reads"));
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(out);
    }

    #[test]
    fn intents_compare_as_json_values_and_the_first_difference_is_named() {
        let a = r#"{"v":1,"type":"use","id":"z:a:1:0","npc":"a"}"#.to_owned();
        let reordered =
            r#"{"id":"z:a:1:0","npc":"a","type":"use","v":1,"log_id":"3-0"}"#.to_owned();
        let b = r#"{"v":1,"type":"use","id":"z:b:1:0","npc":"b"}"#.to_owned();
        assert_eq!(
            first_difference(&[a.clone(), b.clone()], &[reordered, b.clone()]),
            None
        );
        let (index, difference) =
            first_difference(&[a.clone(), b.clone()], &[a.clone(), a.clone()]).expect("differs");
        assert_eq!(index, 1);
        assert!(difference.starts_with("intent 1 differs"), "{difference}");
        let (index, shorter) =
            first_difference(std::slice::from_ref(&a), &[a.clone(), b.clone()]).expect("differs");
        assert_eq!(index, 1);
        assert!(
            shorter.contains("emitted 1 intents, the recording holds 2"),
            "{shorter}"
        );
        assert_eq!(distinct_by_id([a.clone(), a.clone(), b.clone()]), [a, b]);
    }

    #[test]
    fn a_snapshot_pick_is_latest_or_a_sequence() {
        assert_eq!("latest".parse(), Ok(SnapshotPick::Latest));
        assert_eq!("12".parse(), Ok(SnapshotPick::Sequence(12)));
        assert!("newest".parse::<SnapshotPick>().is_err());
    }
}
