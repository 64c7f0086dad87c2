//! Zone state that survives a crash: zone snapshots, and recovery (newest usable snapshot + the
//! world log after it).
//!
//! Owns [`SnapshotKeeper`] (when and how a zone snapshot is written: after the outputs it covers
//! are flushed, so a snapshot never claims work whose intents were lost, and anchored to the
//! log entry it ends at as the log holds it) and [`recover`] (try snapshots newest first,
//! reporting each one refused and why — among them one whose anchor names another entry than
//! the log holds at its position; replay everything after the chosen one with the governor's
//! logged decisions; the intents re-emitted carry the ids they had, so consumers drop
//! duplicates, and are written before `recover` returns, so the outputs a crash lost come
//! out ahead of anything the zone loop writes after). The log itself is [`WorldLog`].
//!
//! Replay is also what `geppetto replay` does offline ([`replay_messages`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use geppetto_storage::{PutOutcome, Snapshot, SnapshotStore, ZoneName};

use crate::bus::ConsumerConfig;
use crate::bus::envelope::{EnvelopeLimits, WorldEvent, WorldMessage, parse_world_within};
use crate::bus::{BusError, Delivery, EventBus, StreamKind};
use crate::runtime::actor::{ZoneGone, ZoneHandle};
use crate::runtime::world_log::{EntryAt, LogError, ReplayEnd, WorldLog};
use crate::zone::anchor::{AnchorMismatch, LogMark, SnapshotAnchor};
use crate::zone::{
    GovernorScript, TickInputs, ZONE_STATE_SCHEMA_VERSION, Zone, ZoneError, ZoneOutput, ZoneState,
};

/// Why recovery or persistence failed.
#[derive(Debug, thiserror::Error)]
pub enum RecoveryError {
    /// The zone name is not a storage key.
    #[error("zone `{zone}`: {reason}")]
    ZoneName {
        /// Zone.
        zone: String,
        /// Why.
        reason: String,
    },
    /// The bus failed to write a snapshot's outputs.
    #[error(transparent)]
    Bus(#[from] BusError),
    /// The world log failed.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A snapshot could not be written.
    #[error("snapshot of zone `{zone}`: {reason}")]
    Snapshot {
        /// Zone.
        zone: String,
        /// Why.
        reason: String,
    },
    /// Building the zone from its world file failed.
    #[error(transparent)]
    Zone(#[from] ZoneError),
    /// The zone actor is gone.
    #[error(transparent)]
    Gone(#[from] ZoneGone),
}

fn store_zone(zone: &str) -> Result<ZoneName, RecoveryError> {
    ZoneName::new(zone).map_err(|e| RecoveryError::ZoneName {
        zone: zone.to_owned(),
        reason: e.to_string(),
    })
}

/// What a written snapshot covers.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SnapshotReport {
    /// Zone.
    pub zone: String,
    /// Its sequence.
    pub sequence: u64,
    /// The last world-log id it covers.
    pub last_event_id: String,
    /// Zone tick.
    pub tick: u64,
    /// Game time, ticks.
    pub game_time: u64,
    /// Stored size, bytes.
    pub bytes: u64,
}

/// Writes a zone's snapshots: every `every_ticks` ticks, at shutdown and on demand.
pub struct SnapshotKeeper {
    /// The store.
    pub store: Arc<dyn SnapshotStore>,
    /// Ticks between snapshots; 0 = only at shutdown and on demand.
    pub every_ticks: u64,
    /// The last sequence stored (or found at start).
    pub sequence: u64,
    /// How long a snapshot waits for the bus to write what it covers before it is given up.
    pub flush_timeout: std::time::Duration,
    /// The tick of the last snapshot attempt (written or failed).
    pub last_tick: u64,
}

impl SnapshotKeeper {
    /// Whether a snapshot is due at `tick`.
    pub fn due(&self, tick: u64) -> bool {
        self.every_ticks > 0 && tick >= self.last_tick.saturating_add(self.every_ticks)
    }

    /// Captures the zone, waits until every output published so far is written, then stores
    /// the snapshot as covering `last`, the log entry the zone's state ends at (its anchor).
    pub async fn write(
        &mut self,
        zone: &ZoneHandle,
        bus: &dyn EventBus,
        last: &LogMark,
    ) -> Result<SnapshotReport, RecoveryError> {
        let name = zone.name.clone();
        let failed = |reason: String| RecoveryError::Snapshot {
            zone: name.clone(),
            reason,
        };
        let last_event_id = last.log_id.clone();
        let mark = last.clone();
        let state = zone.with(move |zone| zone.capture_at(mark)).await?;
        // A failed snapshot waits for the next interval, not the next batch: a store that
        // cannot write (a full disk, Redis away) is not asked again on every batch.
        self.last_tick = state.tick;
        tokio::time::timeout(self.flush_timeout, bus.flush())
            .await
            .map_err(|_| {
                failed(format!(
                    "the bus did not write its outputs within {} ms",
                    self.flush_timeout.as_millis()
                ))
            })??;
        let (tick, game_time) = (state.tick, state.game_time);
        let payload = tokio::task::spawn_blocking(move || serde_json::to_vec(&state))
            .await
            .map_err(|e| failed(e.to_string()))?
            .map_err(|e| failed(e.to_string()))?;
        let snapshot = Snapshot {
            zone: store_zone(&name)?,
            sequence: self.sequence + 1,
            last_event_id: last_event_id.clone(),
            game_time_ticks: game_time,
            schema_version: ZONE_STATE_SCHEMA_VERSION,
            payload,
        };
        let PutOutcome { encoded_bytes, .. } = self
            .store
            .put(snapshot)
            .await
            .map_err(|e| failed(e.to_string()))?;
        self.sequence += 1;
        Ok(SnapshotReport {
            zone: name,
            sequence: self.sequence,
            last_event_id,
            tick,
            game_time,
            bytes: encoded_bytes,
        })
    }
}

/// A zone brought back: its state, where its log resumes, and how it got there.
pub struct Recovered {
    /// The zone, ready to run live.
    pub zone: Zone,
    /// The snapshot used (sequence), if any.
    pub snapshot: Option<u64>,
    /// The newest sequence in the store (the next snapshot follows it).
    pub newest_sequence: u64,
    /// The last log id folded into the zone (snapshot or replay), if any.
    pub last_event_id: Option<String>,
    /// Log entries replayed after the snapshot.
    pub replayed: u64,
    /// Snapshots refused, newest first, with why.
    pub refused: Vec<String>,
}

/// The governor's logged decisions by tick in `messages` (what a replay applies instead of
/// the wall clock).
pub fn governor_script<'a>(
    messages: impl IntoIterator<Item = &'a WorldMessage>,
    script: &mut GovernorScript,
) {
    for message in messages {
        if let WorldEvent::GovernorDecision(decision) = &message.event {
            script.insert(decision.tick, decision.clone());
        }
    }
}

/// Applies logged `messages` of `zone` in order (others and unreadable ones skipped: they were
/// dead-lettered when first read) with `inputs` (a replay's: see [`TickInputs::replaying`])
/// and returns the outputs, the world stream's excepted (a replay writes nothing new into the
/// log).
pub fn replay_messages(
    zone: &mut Zone,
    messages: &[WorldMessage],
    inputs: &TickInputs<'_>,
) -> ZoneOutput {
    replay_messages_into(zone, messages, inputs, ZoneOutput::default())
}

/// As [`replay_messages`], into `out` (whose [`ZoneOutput::only`] may leave all streams but
/// one unwritten).
pub fn replay_messages_into(
    zone: &mut Zone,
    messages: &[WorldMessage],
    inputs: &TickInputs<'_>,
    mut out: ZoneOutput,
) -> ZoneOutput {
    for message in messages {
        if message.header.zone == zone.name {
            zone.apply(message, inputs, &mut out);
        }
    }
    out.messages
        .retain(|(stream, _)| *stream != StreamKind::World);
    out.llm.clear();
    out
}

/// Whether `log` holds the entry `anchor` names at `id` (a snapshot's `last_event_id`):
/// refused when it holds another, or nothing though it holds earlier entries; a log that starts
/// after `id` (trimmed) cannot say, and the snapshot is kept.
async fn anchored(
    anchor: &SnapshotAnchor,
    log: &WorldLog,
    zone: &str,
    id: &str,
) -> Result<Result<(), AnchorMismatch>, LogError> {
    Ok(match log.entry_at(zone, id).await? {
        EntryAt::Holds(entry) => anchor.check_entry(&entry.body),
        EntryAt::Missing => Err(anchor.missing()),
        EntryAt::Gone => Ok(()),
    })
}

/// The messages of `page` that parse under `limits` (the live loop's): the others were
/// dead-lettered when first read.
fn parsed(page: &[Delivery], limits: &EnvelopeLimits) -> Vec<WorldMessage> {
    page.iter()
        .filter_map(|delivery| parse_world_within(&delivery.body, limits).ok())
        .collect()
}

/// Brings a zone back: the newest snapshot that loads and fits the current content (each one
/// refused is reported), then every log entry after it, replayed with the governor's logged
/// decisions and its outputs published again (same ids). `build` makes the zone from its
/// world file over a vocabulary — a snapshot's, so the snapshot fits content that changed
/// since, or none for a fresh start (called once per attempt).
pub async fn recover(
    name: &str,
    build: &(dyn Fn(&[String]) -> Result<Zone, ZoneError> + Sync),
    store: &dyn SnapshotStore,
    log: &WorldLog,
    bus: &dyn EventBus,
    consumer: &ConsumerConfig,
    page: usize,
) -> Result<Recovered, RecoveryError> {
    let key = store_zone(name)?;
    let end = log.replay_end(name, &consumer.group).await?;
    let mut refused = Vec::new();
    let listed = store.list(&key).await.unwrap_or_else(|error| {
        refused.push(format!("the snapshot list is unreadable: {error}"));
        Vec::new()
    });
    let newest_sequence = listed.last().map_or(0, |s| s.sequence);
    let snapshots = Snapshots {
        name,
        key: &key,
        build,
        store,
        log,
    };
    let mut start = None;
    for sequence in listed.iter().rev().map(|listed| listed.sequence) {
        match snapshots.restore(sequence).await? {
            Restore::Restored(zone, last_event_id) => {
                start = Some((*zone, sequence, last_event_id));
                break;
            }
            Restore::Refused(reason) => refused.push(reason),
            Restore::Absent => {}
        }
    }
    for reason in &refused {
        tracing::warn!(zone = name, %reason, "snapshot refused");
    }
    let (mut zone, snapshot, last_event_id) = match start {
        Some((zone, sequence, id)) => (zone, Some(sequence), Some(id)),
        None => (build(&[])?, None, None),
    };
    let after = LogAfter {
        name,
        log,
        end: &end,
        limits: &consumer.limits,
        page,
    };
    let script = after
        .governor_pass(&mut zone, last_event_id.clone(), snapshot.is_none())
        .await?;
    let (last_event_id, replayed) = after
        .replay_pass(&mut zone, last_event_id, &script, bus)
        .await?;
    tracing::info!(zone = name, snapshot, replayed, "zone recovered");
    Ok(Recovered {
        zone,
        snapshot,
        newest_sequence,
        last_event_id,
        replayed,
        refused,
    })
}

/// What one stored snapshot gave: the zone restored from it (and the last log id it covers),
/// the reason it was refused, or nothing (gone since it was listed).
enum Restore {
    Restored(Box<Zone>, String),
    Refused(String),
    Absent,
}

/// A zone's stored snapshots and what a restored one must fit: its log and its content.
struct Snapshots<'a> {
    name: &'a str,
    key: &'a ZoneName,
    build: &'a (dyn Fn(&[String]) -> Result<Zone, ZoneError> + Sync),
    store: &'a dyn SnapshotStore,
    log: &'a WorldLog,
}

impl Snapshots<'_> {
    /// The zone snapshot `sequence` restores, when it loads, is of this log (its anchor) and
    /// fits the current content.
    async fn restore(&self, sequence: u64) -> Result<Restore, LogError> {
        let refused = |reason: String| Ok(Restore::Refused(reason));
        let snapshot = match (self.store)
            .get(self.key, sequence, ZONE_STATE_SCHEMA_VERSION)
            .await
        {
            Ok(Some(snapshot)) => snapshot,
            Ok(None) => return Ok(Restore::Absent),
            Err(error) => return refused(format!("snapshot {sequence}: {error}")),
        };
        let state: ZoneState = match serde_json::from_slice(&snapshot.payload) {
            Ok(state) => state,
            Err(error) => {
                return refused(format!(
                    "snapshot {sequence}: unreadable zone state: {error}"
                ));
            }
        };
        if let Some(anchor) = &state.anchor
            && let Err(mismatch) =
                anchored(anchor, self.log, self.name, &snapshot.last_event_id).await?
        {
            return refused(format!(
                "snapshot {sequence} is not of this log: {mismatch}"
            ));
        }
        let fresh = match (self.build)(&state.vocabulary) {
            Ok(fresh) => fresh,
            Err(error) => return refused(format!("snapshot {sequence}: {error}")),
        };
        match Zone::restored(fresh, state) {
            Ok(zone) => Ok(Restore::Restored(Box::new(zone), snapshot.last_event_id)),
            Err(error) => refused(format!("snapshot {sequence}: {error}")),
        }
    }
}

/// The log a recovery reads after its snapshot, a page at a time, up to where it ends.
struct LogAfter<'a> {
    name: &'a str,
    log: &'a WorldLog,
    end: &'a ReplayEnd,
    limits: &'a EnvelopeLimits,
    page: usize,
}

impl LogAfter<'_> {
    /// The page after `cursor` up to the replay's end (empty at the end).
    async fn page_after(&self, cursor: Option<&str>) -> Result<Vec<Delivery>, LogError> {
        let mut entries = self.log.read_after(self.name, cursor, self.page).await?;
        entries.retain(|entry| self.end.includes(&entry.id));
        Ok(entries)
    }

    /// Pass 1: the governor's decisions after `cursor`, so a tick replays as it ran; and, when
    /// `from_start` (no snapshot), the mode the zone first ran in.
    async fn governor_pass(
        &self,
        zone: &mut Zone,
        mut cursor: Option<String>,
        mut from_start: bool,
    ) -> Result<GovernorScript, LogError> {
        let mut script = BTreeMap::new();
        loop {
            let entries = self.page_after(cursor.as_deref()).await?;
            let Some(last) = entries.last() else { break };
            cursor = Some(last.id.clone());
            let messages = parsed(&entries, self.limits);
            governor_script(&messages, &mut script);
            if from_start
                && messages
                    .iter()
                    .any(|m| matches!(m.event, WorldEvent::ZoneSettings { .. }))
            {
                zone.begin_as_logged(&messages);
                from_start = false;
            }
        }
        Ok(script)
    }

    /// Pass 2: applies every entry after `last_event_id` and publishes its outputs again, a
    /// page at a time, each written before the next is read; returns the last log id applied
    /// and how many entries were.
    async fn replay_pass(
        &self,
        zone: &mut Zone,
        mut last_event_id: Option<String>,
        script: &GovernorScript,
        bus: &dyn EventBus,
    ) -> Result<(Option<String>, u64), LogError> {
        let clock = crate::runtime::wall_clock();
        let inputs = TickInputs::replaying(&clock, script);
        let mut replayed = 0u64;
        loop {
            let entries = self.page_after(last_event_id.as_deref()).await?;
            let Some(last) = entries.last() else { break };
            last_event_id = Some(last.id.clone());
            replayed += entries.len() as u64;
            let out = replay_messages(zone, &parsed(&entries, self.limits), &inputs);
            for (stream, body) in out.messages {
                bus.publish(self.name, stream, body);
            }
            // Travellers are handed over again (same ids); the zone they went to keeps the
            // first.
            for (target, body) in out.handovers {
                bus.publish(&target, StreamKind::World, body);
            }
            // Written before the next page, and before the zone loop writes anything new:
            // the bus's buffer never overflows on a long log (it drops what it cannot hold),
            // and outputs lost to a crash keep their place ahead of the loop's.
            bus.flush().await?;
        }
        Ok((last_event_id, replayed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::envelope::header;
    use crate::bus::memory::InProcessBus;
    use crate::zone::testing::{live, village};
    use geppetto_storage::{MemoryEventLog, MemorySnapshotStore, StorageConfig};

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    }

    /// `event` (id `id`, at `game_time`) as the log delivers it.
    fn delivery(id: String, game_time: u64, event: WorldEvent) -> Delivery {
        Delivery {
            id: String::new(),
            utf8_error_at: None,
            body: WorldMessage {
                header: header(id, "village", game_time),
                event,
            }
            .to_json(),
        }
    }

    fn ticks(from: u64, to: u64) -> Vec<Delivery> {
        (from..to)
            .map(|t| delivery(format!("t{t}"), 420 + t, WorldEvent::TimeAdvanced))
            .collect()
    }

    fn snapshot(zone: &Zone, sequence: u64, last: &str, schema: u32) -> Snapshot {
        Snapshot {
            zone: store_zone("village").expect("zone"),
            sequence,
            last_event_id: last.into(),
            game_time_ticks: zone.game_time,
            schema_version: schema,
            payload: serde_json::to_vec(&zone.capture()).expect("state"),
        }
    }

    /// Snapshot 1 is good; 2 is corrupt, 3 of a newer schema, 4 of changed content: recovery
    /// names each, starts from 1, replays the log after it and reaches the uninterrupted state.
    #[test]
    fn recovery_skips_bad_snapshots_with_reasons_and_replays_after_the_good_one() {
        runtime().block_on(async {
            let store = MemorySnapshotStore::new(&StorageConfig {
                snapshots_kept_per_zone: 10,
                ..StorageConfig::default()
            })
            .expect("store");
            let log = WorldLog::Embedded(Arc::new(MemoryEventLog::new()));
            let mut whole = village();
            let first = log.record("village", &ticks(1, 40)).await.expect("log");
            let second = log.record("village", &ticks(40, 90)).await.expect("log");
            let parse = |batch: &[Delivery]| parsed(batch, &EnvelopeLimits::default());
            replay_messages(&mut whole, &parse(&ticks(1, 40)), &live());
            store
                .put(snapshot(
                    &whole,
                    1,
                    first.last().expect("id"),
                    ZONE_STATE_SCHEMA_VERSION,
                ))
                .await
                .expect("put 1");
            replay_messages(&mut whole, &parse(&ticks(40, 90)), &live());
            let key = store_zone("village").expect("zone");
            let mut corrupt = snapshot(&whole, 2, second.last().expect("id"), 1)
                .encode()
                .expect("encode");
            let middle = corrupt.len() / 2;
            corrupt[middle] ^= 0xff;
            store.put_encoded(&key, 2, corrupt).await.expect("put 2");
            store
                .put(snapshot(
                    &whole,
                    3,
                    second.last().expect("id"),
                    ZONE_STATE_SCHEMA_VERSION + 1,
                ))
                .await
                .expect("put 3");
            let mut changed = snapshot(&whole, 4, second.last().expect("id"), 1);
            let mut state: ZoneState = serde_json::from_slice(&changed.payload).expect("state");
            state.vocabulary[0] = "renamed".into();
            changed.payload = serde_json::to_vec(&state).expect("state");
            store.put(changed).await.expect("put 4");
            let bus = InProcessBus::new(1000);
            let build = |_: &[String]| Ok(village());
            let recovered = recover(
                "village",
                &build,
                &store,
                &log,
                &bus,
                &ConsumerConfig::default(),
                7,
            )
            .await
            .expect("recovers");
            assert_eq!(recovered.snapshot, Some(1));
            assert_eq!(recovered.newest_sequence, 4);
            assert_eq!(recovered.replayed, 50);
            assert_eq!(
                recovered.last_event_id.as_deref(),
                second.last().map(String::as_str)
            );
            let reasons = recovered.refused.join("\n");
            assert!(
                reasons.contains("snapshot 4: the content changed"),
                "{reasons}"
            );
            assert!(
                reasons.contains("snapshot 3") && reasons.contains("schema"),
                "{reasons}"
            );
            assert!(
                reasons.contains("snapshot 2") && reasons.contains("checksum"),
                "{reasons}"
            );
            assert_eq!(
                serde_json::to_value(recovered.zone.capture()).expect("json"),
                serde_json::to_value(whole.capture()).expect("json"),
                "snapshot 1 plus the replay is the uninterrupted zone"
            );
        });
    }

    /// A snapshot anchored to another log (same positions, other entries) is refused with
    /// what differs, and the whole log is replayed; one anchored to this log is used.
    #[test]
    fn a_snapshot_of_another_log_is_refused_and_one_of_this_log_used() {
        runtime().block_on(async {
            let store = MemorySnapshotStore::new(&StorageConfig::default()).expect("store");
            let log = WorldLog::Embedded(Arc::new(MemoryEventLog::new()));
            let ids = log.record("village", &ticks(1, 40)).await.expect("log");
            let last = ids.last().expect("id");
            let mut zone = village();
            let parse = |batch: &[Delivery]| parsed(batch, &EnvelopeLimits::default());
            replay_messages(&mut zone, &parse(&ticks(1, 40)), &live());
            let anchored = |body: &str, sequence: u64| Snapshot {
                payload: serde_json::to_vec(&zone.capture_at(LogMark::of(last, body)))
                    .expect("state"),
                ..snapshot(&zone, sequence, last, ZONE_STATE_SCHEMA_VERSION)
            };
            let other_log = ticks(500, 539);
            let other = other_log.last().expect("entry");
            store.put(anchored(&other.body, 1)).await.expect("put");
            let bus = InProcessBus::new(1000);
            let build = |_: &[String]| Ok(village());
            let consumer = ConsumerConfig::default();
            let recovered = recover("village", &build, &store, &log, &bus, &consumer, 16)
                .await
                .expect("recovers");
            assert_eq!(recovered.snapshot, None, "{:?}", recovered.refused);
            assert_eq!(recovered.replayed, 39);
            let reasons = recovered.refused.join("\n");
            assert!(
                reasons.contains("snapshot 1 is not of this log")
                    && reasons.contains("log entry `39`, event `t538` at game time 958")
                    && reasons.contains("holds event `t39` at game time 459"),
                "{reasons}"
            );
            let ours = ticks(1, 40).pop().expect("entry");
            store.put(anchored(&ours.body, 2)).await.expect("put");
            let recovered = recover("village", &build, &store, &log, &bus, &consumer, 16)
                .await
                .expect("recovers");
            assert_eq!(recovered.snapshot, Some(2), "{:?}", recovered.refused);
            assert_eq!(recovered.replayed, 0);
        });
    }

    #[test]
    fn without_a_usable_snapshot_the_whole_log_is_replayed() {
        runtime().block_on(async {
            let store = MemorySnapshotStore::new(&StorageConfig::default()).expect("store");
            let log = WorldLog::Embedded(Arc::new(MemoryEventLog::new()));
            log.record("village", &ticks(1, 30)).await.expect("log");
            let bus = InProcessBus::new(1000);
            let build = |_: &[String]| Ok(village());
            let recovered = recover(
                "village",
                &build,
                &store,
                &log,
                &bus,
                &ConsumerConfig::default(),
                4,
            )
            .await
            .expect("recovers");
            assert_eq!(recovered.snapshot, None);
            assert_eq!(recovered.replayed, 29);
            assert_eq!(recovered.zone.game_time, 420 + 29);
        });
    }

    /// A snapshot the store refuses (here: a newer one is already stored) is tried again at
    /// the next interval, not at every batch.
    #[test]
    fn a_failed_snapshot_waits_for_its_interval() {
        crate::runtime::block_on(1, async {
            let store = MemorySnapshotStore::new(&StorageConfig::default()).expect("store");
            let mut zone = village();
            let parse = |batch: &[Delivery]| parsed(batch, &EnvelopeLimits::default());
            replay_messages(&mut zone, &parse(&ticks(1, 40)), &live());
            store
                .put(snapshot(&zone, 5, "39", ZONE_STATE_SCHEMA_VERSION))
                .await
                .expect("put 5");
            let tick = zone.tick;
            let actors = crate::runtime::actor::ActorRuntime::new(1);
            let handle = actors.start(zone);
            let mut keeper = SnapshotKeeper {
                store: Arc::new(store),
                every_ticks: 10,
                sequence: 0,
                flush_timeout: std::time::Duration::from_secs(5),
                last_tick: 0,
            };
            assert!(keeper.due(tick), "tick {tick}");
            let bus = InProcessBus::new(100);
            let refused = keeper.write(&handle, &bus, &LogMark::of("39", "{}")).await;
            assert!(refused.is_err(), "{refused:?}");
            assert!(!keeper.due(tick), "not tried again at the next batch");
            assert!(!keeper.due(tick + 9));
            assert!(keeper.due(tick + 10), "tried again one interval later");
            actors.stop();
        })
        .expect("runtime");
    }

    /// The crash test's world in process: the village in game mode with 200 more residents.
    fn crowded_village() -> Zone {
        use crate::content::profiles::ProfileLibrary;
        use crate::content::sets::SetLibrary;
        use crate::content::world_file::{ResidentSpec, embedded_village};
        let mut world = embedded_village().expect("village");
        for resident in support::world_script::more_residents(200) {
            let spec: ResidentSpec = serde_json::from_value(resident).expect("a resident");
            world.residents.push(spec);
        }
        let mut config = crate::zone::ZoneConfig::default();
        config.governor.tick_budget_ms_soft = 600_000.0;
        config.governor.tick_budget_ms_hard = 600_000.0;
        config.tick.npc_budget_ms = 600_000.0;
        Zone::new(
            &world,
            &ProfileLibrary::embedded().expect("profiles"),
            &SetLibrary::embedded().expect("sets"),
            config,
            crate::zone::isolation::IsolationState::default(),
        )
        .expect("zone")
    }

    fn crash_script(ticks: u64) -> Vec<WorldMessage> {
        let cast = &support::world_script::CROWDED_VILLAGE;
        support::world_script::script("village", 1, ticks, cast)
            .iter()
            .map(|line| parse_world_within(line, &EnvelopeLimits::default()).expect("parses"))
            .collect()
    }

    fn intents_of(out: &ZoneOutput) -> impl Iterator<Item = String> + '_ {
        out.messages
            .iter()
            .filter(|(stream, _)| *stream == StreamKind::Intents)
            .map(|(_, body)| body.clone())
    }

    /// Runs `messages` in batches of 1..=16 (from `seed`), snapshotting every 10 ticks; after
    /// each batch in `kills` the batch's outputs are lost but a prefix, and the zone restarts
    /// from its newest snapshot, replaying what was delivered. Answers the intents published.
    fn run_with_kills(messages: &[WorldMessage], seed: u64, kills: &[usize]) -> Vec<String> {
        let mut random = seed;
        let mut next = move || {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            random
        };
        let script = GovernorScript::new();
        let mut zone = crowded_village();
        let mut published = Vec::new();
        let mut snapshot: Option<(usize, Vec<u8>)> = None;
        let mut last_tick = 0;
        let (mut at, mut batch) = (0, 0);
        while at < messages.len() {
            let size = (1 + next() % 16) as usize;
            let end = (at + size).min(messages.len());
            let mut out = ZoneOutput::default();
            for message in &messages[at..end] {
                zone.apply(message, &live(), &mut out);
            }
            let status = zone.status();
            at = end;
            if kills.contains(&batch) {
                let intents: Vec<String> = intents_of(&out).collect();
                let kept = next() as usize % (intents.len() + 1);
                published.extend(intents.into_iter().take(kept));
                let from = snapshot.as_ref().map_or(0, |(from, _)| *from);
                zone = match &snapshot {
                    Some((_, bytes)) => Zone::restored(
                        crowded_village(),
                        serde_json::from_slice(bytes).expect("state"),
                    )
                    .expect("restores"),
                    None => crowded_village(),
                };
                let clock = crate::zone::testing::still;
                let out = replay_messages(
                    &mut zone,
                    &messages[from..at],
                    &TickInputs::replaying(&clock, &script),
                );
                published.extend(intents_of(&out));
                zone.status();
            } else {
                published.extend(intents_of(&out));
                if status.tick >= last_tick + 10 {
                    last_tick = status.tick;
                    snapshot = Some((at, serde_json::to_vec(&zone.capture()).expect("state")));
                }
            }
            batch += 1;
        }
        support::world_script::deduplicated(published)
    }

    #[test]
    fn a_zone_killed_between_batches_publishes_the_uninterrupted_intents() {
        let messages = crash_script(300);
        let expected = run_with_kills(&messages, 0x9e37_79b9_7f4a_7c15, &[]);
        for seed in 1..4u64 {
            let kills: Vec<usize> = (0..12).map(|k| 3 + k * 4 + seed as usize).collect();
            let got = run_with_kills(&messages, 0x9e37_79b9_7f4a_7c15 ^ seed, &kills);
            for (index, (got, want)) in got.iter().zip(&expected).enumerate() {
                assert_eq!(got, want, "seed {seed}: first difference at intent {index}");
            }
            assert_eq!(got.len(), expected.len(), "seed {seed}");
        }
    }

    /// A bus that writes what is published only when flushed, as a Redis writer behind on its
    /// work would.
    struct HeldBus {
        inner: InProcessBus,
        held: std::sync::Mutex<Vec<(String, StreamKind, String)>>,
    }

    impl EventBus for HeldBus {
        fn publish(&self, zone: &str, stream: StreamKind, body: String) {
            let mut held = self.held.lock().expect("held");
            held.push((zone.to_owned(), stream, body));
        }

        fn consumer<'a>(
            &'a self,
            zone: &'a str,
            stream: StreamKind,
            group: &'a str,
            consumer: &'a str,
        ) -> crate::bus::BusFuture<'a, Box<dyn crate::bus::Consumer>> {
            self.inner.consumer(zone, stream, group, consumer)
        }

        fn flush(&self) -> crate::bus::BusFuture<'_, ()> {
            let held = std::mem::take(&mut *self.held.lock().expect("held"));
            for (zone, stream, body) in held {
                self.inner.publish(&zone, stream, body);
            }
            self.inner.flush()
        }

        fn stats(&self) -> crate::bus::BusStats {
            self.inner.stats()
        }
    }

    /// What a recovery re-publishes is written when it returns: the outputs a crash lost come
    /// out ahead of anything the zone loop writes next (which consumers keeping the first of
    /// each id rely on), and a long log never overflows the bus's buffer.
    #[test]
    fn a_recovery_has_written_what_it_republished_when_it_returns() {
        runtime().block_on(async {
            let store = MemorySnapshotStore::new(&StorageConfig::default()).expect("store");
            let log = WorldLog::Embedded(Arc::new(MemoryEventLog::new()));
            let player = delivery(
                "p1".into(),
                420,
                WorldEvent::PlayerEntered {
                    player: "ann".into(),
                    room: "square".into(),
                },
            );
            log.record("village", &[player]).await.expect("log");
            log.record("village", &ticks(1, 120)).await.expect("log");
            let bus = HeldBus {
                inner: InProcessBus::new(100_000),
                held: std::sync::Mutex::new(Vec::new()),
            };
            let build = |_: &[String]| Ok(village());
            let recovered = recover(
                "village",
                &build,
                &store,
                &log,
                &bus,
                &ConsumerConfig::default(),
                16,
            )
            .await
            .expect("recovers");
            assert_eq!(recovered.replayed, 120);
            assert!(bus.held.lock().expect("held").is_empty(), "all written");
            assert!(bus.stats().published > 20, "{:?}", bus.stats());
        });
    }
}
