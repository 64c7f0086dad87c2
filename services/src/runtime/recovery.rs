//! Zone state that survives a crash: the world log each zone folds, zone snapshots, and
//! recovery (newest usable snapshot + the log after it).
//!
//! Owns [`WorldLog`] (where a zone's world events are durably recorded: the Redis world stream
//! itself, or — with the in-process bus, which does not outlive the process — the embedded redb
//! log, appended before a batch is applied), [`SnapshotKeeper`] (when and how a zone snapshot
//! is written: after the outputs it covers are flushed, so a snapshot never claims work whose
//! intents were lost) and [`recover`] (try snapshots newest first, reporting each one refused
//! and why; replay everything after the chosen one with the governor's logged decisions; the
//! intents re-emitted carry the ids they had, so consumers drop duplicates).
//!
//! Replay is also what `geppetto replay` does offline ([`replay_messages`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use geppetto_storage::{EventId, EventLog, PutOutcome, Snapshot, SnapshotStore, ZoneName};

use crate::bus::ConsumerConfig;
use crate::bus::envelope::{EnvelopeLimits, WorldEvent, WorldMessage, parse_world_within};
use crate::bus::redis::RedisBus;
use crate::bus::{BusError, Delivery, EventBus, StreamKind};
use crate::runtime::actor::{ZoneGone, ZoneHandle};
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
    /// Reading or writing the Redis world stream failed.
    #[error(transparent)]
    Bus(#[from] BusError),
    /// The embedded log failed.
    #[error("world log of zone `{zone}`: {reason}")]
    Log {
        /// Zone.
        zone: String,
        /// Why.
        reason: String,
    },
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

/// Where a zone's world events are durably recorded.
#[derive(Clone)]
pub enum WorldLog {
    /// The Redis world stream is the log: ids are stream ids.
    Stream(Arc<RedisBus>),
    /// The embedded redb log (with the in-process bus): each batch is appended before it is
    /// applied; ids are the log's.
    Embedded(Arc<dyn EventLog>),
    /// Nothing durable (the in-process bus without a redb file): nothing to recover.
    Volatile,
}

impl WorldLog {
    /// Records `batch` before it is applied and returns the ids the log knows the entries by
    /// (the stream's own ids, or the embedded log's).
    pub async fn record(
        &self,
        zone: &str,
        batch: &[Delivery],
    ) -> Result<Vec<String>, RecoveryError> {
        match self {
            Self::Stream(_) | Self::Volatile => Ok(batch.iter().map(|d| d.id.clone()).collect()),
            Self::Embedded(log) => {
                let key = store_zone(zone)?;
                let log = Arc::clone(log);
                let bodies: Vec<Vec<u8>> =
                    batch.iter().map(|d| d.body.clone().into_bytes()).collect();
                let appended =
                    tokio::task::spawn_blocking(move || log.append_batch(&key, &bodies)).await;
                match appended {
                    Ok(Ok(ids)) => Ok(ids.iter().map(ToString::to_string).collect()),
                    Ok(Err(error)) => Err(RecoveryError::Log {
                        zone: zone.to_owned(),
                        reason: error.to_string(),
                    }),
                    Err(error) => Err(RecoveryError::Log {
                        zone: zone.to_owned(),
                        reason: error.to_string(),
                    }),
                }
            }
        }
    }

    /// How far recovery replays: the entries this zone was already given. With Redis that is
    /// the consumer group's last delivered id (what comes later is new work for the live loop,
    /// which snapshots as it goes; no group yet means nothing was delivered); the embedded log
    /// holds only entries that were applied, so all of it.
    pub async fn replay_end(&self, zone: &str, group: &str) -> Result<ReplayEnd, RecoveryError> {
        match self {
            Self::Volatile => Ok(ReplayEnd::Nothing),
            Self::Embedded(_) => Ok(ReplayEnd::Everything),
            Self::Stream(bus) => Ok(
                match bus.delivered_up_to(zone, StreamKind::World, group).await? {
                    Some(id) if id != "0-0" => ReplayEnd::Through(id),
                    _ => ReplayEnd::Nothing,
                },
            ),
        }
    }

    /// Up to `limit` entries after `after` (from the start when `None`), in log order.
    pub async fn read_after(
        &self,
        zone: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Delivery>, RecoveryError> {
        match self {
            Self::Volatile => Ok(Vec::new()),
            Self::Stream(bus) => Ok(bus
                .read_range(zone, StreamKind::World, after, limit)
                .await?),
            Self::Embedded(log) => {
                let key = store_zone(zone)?;
                let after = match after {
                    Some(id) => Some(id.parse::<EventId>().map_err(|e| RecoveryError::Log {
                        zone: zone.to_owned(),
                        reason: e.to_string(),
                    })?),
                    None => None,
                };
                let log = Arc::clone(log);
                let read =
                    tokio::task::spawn_blocking(move || log.read_after(&key, after, limit)).await;
                let entries = match read {
                    Ok(Ok(entries)) => entries,
                    Ok(Err(error)) => {
                        return Err(RecoveryError::Log {
                            zone: zone.to_owned(),
                            reason: error.to_string(),
                        });
                    }
                    Err(error) => {
                        return Err(RecoveryError::Log {
                            zone: zone.to_owned(),
                            reason: error.to_string(),
                        });
                    }
                };
                Ok(entries
                    .into_iter()
                    .map(|(id, body)| Delivery::from_bytes(id.to_string(), &body))
                    .collect())
            }
        }
    }
}

/// Where a recovery replay stops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayEnd {
    /// Nothing to replay.
    Nothing,
    /// Through this stream id.
    Through(String),
    /// To the end of the log.
    Everything,
}

impl ReplayEnd {
    /// Whether an entry with log id `id` is within the replay.
    fn includes(&self, id: &str) -> bool {
        match self {
            Self::Nothing => false,
            Self::Everything => true,
            Self::Through(end) => stream_order(id) <= stream_order(end),
        }
    }
}

/// A Redis stream id (`millis-seq`) as a comparable pair.
fn stream_order(id: &str) -> (u64, u64) {
    let (millis, seq) = id.split_once('-').unwrap_or((id, "0"));
    (millis.parse().unwrap_or(0), seq.parse().unwrap_or(0))
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
    /// the snapshot as covering `last_event_id`.
    pub async fn write(
        &mut self,
        zone: &ZoneHandle,
        bus: &dyn EventBus,
        last_event_id: &str,
    ) -> Result<SnapshotReport, RecoveryError> {
        let name = zone.name.clone();
        let failed = |reason: String| RecoveryError::Snapshot {
            zone: name.clone(),
            reason,
        };
        let state = zone.with(|zone| zone.capture()).await?;
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
            last_event_id: last_event_id.to_owned(),
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
            last_event_id: last_event_id.to_owned(),
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
    let mut out = ZoneOutput::default();
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
    let mut start: Option<(Zone, u64, String)> = None;
    for listed in listed.iter().rev() {
        let sequence = listed.sequence;
        let snapshot = match store.get(&key, sequence, ZONE_STATE_SCHEMA_VERSION).await {
            Ok(Some(snapshot)) => snapshot,
            Ok(None) => continue,
            Err(error) => {
                refused.push(format!("snapshot {sequence}: {error}"));
                continue;
            }
        };
        let state: ZoneState = match serde_json::from_slice(&snapshot.payload) {
            Ok(state) => state,
            Err(error) => {
                refused.push(format!(
                    "snapshot {sequence}: unreadable zone state: {error}"
                ));
                continue;
            }
        };
        let fresh = match build(&state.vocabulary) {
            Ok(fresh) => fresh,
            Err(error) => {
                refused.push(format!("snapshot {sequence}: {error}"));
                continue;
            }
        };
        match Zone::restored(fresh, state) {
            Ok(zone) => {
                start = Some((zone, sequence, snapshot.last_event_id));
                break;
            }
            Err(error) => refused.push(format!("snapshot {sequence}: {error}")),
        }
    }
    for reason in &refused {
        tracing::warn!(zone = name, %reason, "snapshot refused");
    }
    let (mut zone, snapshot, mut last_event_id) = match start {
        Some((zone, sequence, id)) => (zone, Some(sequence), Some(id)),
        None => (build(&[])?, None, None),
    };
    // Pass 1: the governor's decisions after the snapshot, so a tick replays as it ran; and,
    // from the start of the log, the mode the zone first ran in.
    let mut script = BTreeMap::new();
    let mut cursor = last_event_id.clone();
    let mut from_start = snapshot.is_none();
    loop {
        let mut entries = log.read_after(name, cursor.as_deref(), page).await?;
        entries.retain(|entry| end.includes(&entry.id));
        let Some(last) = entries.last() else { break };
        cursor = Some(last.id.clone());
        let messages = parsed(&entries, &consumer.limits);
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
    // Pass 2: apply and publish again.
    let clock = crate::runtime::wall_clock();
    let inputs = TickInputs::replaying(&clock, &script);
    let mut replayed = 0u64;
    loop {
        let mut entries = log.read_after(name, last_event_id.as_deref(), page).await?;
        entries.retain(|entry| end.includes(&entry.id));
        let Some(last) = entries.last() else { break };
        last_event_id = Some(last.id.clone());
        replayed += entries.len() as u64;
        let out = replay_messages(&mut zone, &parsed(&entries, &consumer.limits), &inputs);
        for (stream, body) in out.messages {
            bus.publish(name, stream, body);
        }
        // Travellers are handed over again (same ids); the zone they went to keeps the first.
        for (target, body) in out.handovers {
            bus.publish(&target, StreamKind::World, body);
        }
    }
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

    fn ticks(from: u64, to: u64) -> Vec<Delivery> {
        (from..to)
            .map(|t| Delivery {
                id: String::new(),
                utf8_error_at: None,
                body: WorldMessage {
                    header: header(format!("t{t}"), "village", 420 + t),
                    event: WorldEvent::TimeAdvanced,
                }
                .to_json(),
            })
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
            let refused = keeper.write(&handle, &bus, "39").await;
            assert!(refused.is_err(), "{refused:?}");
            assert!(!keeper.due(tick), "not tried again at the next batch");
            assert!(!keeper.due(tick + 9));
            assert!(keeper.due(tick + 10), "tried again one interval later");
            actors.stop();
        })
        .expect("runtime");
    }

    #[test]
    fn a_replay_of_a_stream_stops_at_what_the_group_was_given() {
        let end = ReplayEnd::Through("1700-3".into());
        assert!(end.includes("1700-3") && end.includes("1699-9") && end.includes("1700-0"));
        assert!(!end.includes("1700-4") && !end.includes("1701-0"));
        assert!(!ReplayEnd::Nothing.includes("0-1"));
        assert!(ReplayEnd::Everything.includes("99"));
    }
}
