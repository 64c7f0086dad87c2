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
//! and parses the next page on a thread of its own (unless it is given a single thread) while
//! the zone, alone on this one, applies the page before, and hands each event's intents on as
//! they come. Comparing keeps the ids of
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
use super::log_source::{LogEntry, LogPages, LogSource, bad, block_on, entry_at, environment};
use crate::bus::StreamKind;
use crate::bus::envelope::{
    Completion, EnvelopeError, EnvelopeLimits, GovernorDecision, WorldEvent, WorldMessage,
    parse_world_within,
};
use crate::content::archetypes::ArchetypeLibrary;
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::content::world_file::WorldFile;
use crate::runtime::recovery::{governor_script, replay_messages_into};
use crate::runtime::world_log::EntryAt;
use crate::zone::isolation::IsolationState;
use crate::zone::{
    GovernorScript, TickInputs, ZONE_STATE_SCHEMA_VERSION, Zone, ZoneConfig, ZoneOutput, ZoneState,
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
    /// A recorded stream (JSONL) of `stream` to compare against.
    pub compare: Option<PathBuf>,
    /// The output stream replayed: printed, counted and compared (`intents`; `story`,
    /// `npc_events` likewise).
    pub stream: StreamKind,
    /// Threads the replay runs on (never changes the answer): 1 reads, parses and folds on
    /// one; any other number reads and parses the next page on a second thread while the zone
    /// folds this one, and — unless the stream replayed is `story` — runs the zone's story
    /// detector on a third (see [`Detection`](crate::zone::detection::Detection)).
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
    let build = |vocabulary: &[String]| {
        Zone::over(
            &world,
            &content.profiles,
            &content.sets,
            Some(&content.archetypes),
            options.zone_config.clone(),
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
    match entry_at(&options.source, &world.zone, last_event_id)? {
        EntryAt::Holds(entry) => {
            anchor
                .check_entry(&entry.body)
                .map_err(|e| refuse(e.to_string()))?;
            Ok(format!(
                "snapshot {sequence} covers log entry `{last_event_id}`, {}, as this log holds it",
                anchor.last
            ))
        }
        EntryAt::Missing => Err(refuse(anchor.missing().to_string())),
        EntryAt::Gone => Ok(format!(
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
    let reader_thread = options.threads != 1;
    if reader_thread && options.stream != StreamKind::Story {
        zone.social.detect_beside();
    }
    LogPages::open(&options.source, &name, StreamKind::World, after.as_deref())?.pipelined(
        reader_thread,
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
                        let only = ZoneOutput {
                            only: Some(options.stream),
                            ..ZoneOutput::default()
                        };
                        let one = std::slice::from_ref(&message);
                        let out = replay_messages_into(&mut zone, one, &inputs, only);
                        let intents = out
                            .messages
                            .into_iter()
                            .filter(|(stream, _)| *stream == options.stream)
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
    zone.social.detect_here();
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
    let mut comparison =
        (options.compare.as_deref()).map(|path| Comparison::new(path, options.stream));
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
mod tests;
