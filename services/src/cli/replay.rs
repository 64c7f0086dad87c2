//! `geppetto replay`: a zone's recorded world log, offline.
//!
//! Replay re-runs a world log through the core — from the world file, or from a stored
//! snapshot and the log after it — with the governor's logged decisions, and prints the intents
//! it emits (JSONL, exactly as published), or reports the first difference against a recorded
//! intent stream (duplicates by id dropped on both sides).
//!
//! A snapshot is laid over a log only if it belongs to it: its anchor must name the world file
//! given and the entry the log holds at the snapshot's position (a snapshot of another world or
//! log is refused, saying what differs). An older snapshot without an anchor, or one whose
//! position a trimmed log no longer holds, is used and the summary says it was not checked.
//! Logs are read through [`super::log_source`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use geppetto_storage::{RedbFile, RedisSnapshotStore, SnapshotStore, StorageConfig};
use serde_json::Value;

use super::error::CommandError;
use super::log_source::{
    LogEntry, LogSource, bad, block_on, environment, position, read_jsonl, read_log,
};
use crate::bus::StreamKind;
use crate::bus::envelope::{EnvelopeLimits, WorldMessage, parse_world_within};
use crate::content::archetypes::ArchetypeLibrary;
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::content::world_file::WorldFile;
use crate::runtime::recovery::{governor_script, replay_messages};
use crate::runtime::world_log::Position;
use crate::zone::isolation::IsolationState;
use crate::zone::{TickInputs, ZONE_STATE_SCHEMA_VERSION, Zone, ZoneConfig, ZoneState};

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
) -> Result<(Zone, Option<Start>), CommandError> {
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
) -> Result<String, CommandError> {
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
    /// From a snapshot: how it was checked against the world file and the log.
    pub snapshot_check: Option<String>,
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
    let snapshot = start.as_ref().map(|start| start.sequence);
    let after = start.as_ref().map(|start| start.last_event_id.clone());
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
        snapshot_check: start.map(|start| start.checked),
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
        snapshot_check: run.snapshot_check,
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
