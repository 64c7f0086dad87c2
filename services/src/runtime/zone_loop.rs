//! The service loop of one zone, run on the zone's actor thread: read a batch from the zone's
//! `world` stream (its own consumer, so its own connection), parse each message (refused ones
//! go to `deadletter` with the reason and are acknowledged — nothing on input stops the loop),
//! apply the batch in the zone's actor, persist isolation counts when they change; then write
//! the outputs in order (governor records to `world` first), acknowledge the batch and read the
//! next, in one round trip on Redis ([`Consumer::exchange`]). Also the internal clock, which
//! writes `time_advanced` events into the world stream so they are logged like the game's.
//!
//! The loop runs in named phases, one method each of its state (`ZoneLoop`): open the
//! consumer, answer the admin API's requests ([`crate::runtime::zone_control`]) between two
//! reads, read, record in the log, sort out what is refused, apply, keep (the entry the state
//! ends at, isolation counts, snapshots), and finish.
//!
//! Every dependency (bus, store, shutdown signal) comes from the caller, so tests run it against
//! a private Redis or the in-process bus.

use std::sync::Arc;
use std::time::Duration;

use geppetto_storage::{Snapshot, SnapshotStore, ZoneName};
use tokio::sync::{mpsc, watch};

use crate::bus::envelope::{
    DeadLetter, EnvelopeError, WorldEvent, WorldMessage, dead_letter_envelope, header,
    parse_world_within,
};
use crate::bus::{BusError, Consumer, ConsumerConfig, Delivery, EventBus, Outgoing, StreamKind};
use crate::config::clock::ClockConfig;
use crate::runtime::actor::{ZoneGone, ZoneHandle};
use crate::runtime::lease::LeaseGuard;
use crate::runtime::llm_bridge::LlmLink;
use crate::runtime::metrics;
use crate::runtime::recovery::{SnapshotKeeper, SnapshotReport};
use crate::runtime::world_log::{EntryAt, WorldLog};
use crate::runtime::zone_control::{ReloadRequest, ZoneControl, reload};
use crate::zone::anchor::LogMark;
use crate::zone::isolation::IsolationState;
use crate::zone::{ZoneOutput, ZoneStatus};

/// Why a zone loop stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The bus failed where the loop cannot go on without it.
    #[error(transparent)]
    Bus(#[from] BusError),
    /// The zone's actor is gone.
    #[error(transparent)]
    Zone(#[from] ZoneGone),
}

/// The schema version of the persisted isolation payload.
pub const ISOLATION_SCHEMA_VERSION: u32 = 1;

fn isolation_key(zone: &str) -> Option<ZoneName> {
    ZoneName::new(format!("{zone}.isolation")).ok()
}

/// Loads the persisted isolation counts of `zone` (empty when none or unreadable, with a warning).
pub async fn load_isolation(store: &dyn SnapshotStore, zone: &str) -> (IsolationState, u64) {
    let Some(key) = isolation_key(zone) else {
        return (IsolationState::default(), 0);
    };
    match store.latest_valid(&key, ISOLATION_SCHEMA_VERSION).await {
        Ok(latest) => match latest.snapshot {
            Some(snapshot) => match serde_json::from_slice(&snapshot.payload) {
                Ok(state) => (state, snapshot.sequence),
                Err(error) => {
                    tracing::warn!(%error, zone, "isolation state unreadable; starting clean");
                    (IsolationState::default(), snapshot.sequence)
                }
            },
            None => (IsolationState::default(), 0),
        },
        Err(error) => {
            tracing::warn!(%error, zone, "isolation state not loaded");
            (IsolationState::default(), 0)
        }
    }
}

/// Where a loop persists isolation counts.
pub struct IsolationPersistence {
    /// The store.
    pub store: Arc<dyn SnapshotStore>,
    /// The last sequence written (or loaded).
    pub sequence: u64,
}

async fn persist(
    persistence: &mut IsolationPersistence,
    zone: &str,
    state: &IsolationState,
    last_event_id: &str,
    game_time: u64,
) {
    let Some(key) = isolation_key(zone) else {
        return;
    };
    let payload = match serde_json::to_vec(state) {
        Ok(payload) => payload,
        Err(error) => {
            tracing::error!(%error, "isolation state not serialisable");
            return;
        }
    };
    persistence.sequence += 1;
    let snapshot = Snapshot {
        zone: key,
        sequence: persistence.sequence,
        last_event_id: last_event_id.to_owned(),
        game_time_ticks: game_time,
        schema_version: ISOLATION_SCHEMA_VERSION,
        payload,
    };
    if let Err(error) = persistence.store.put(snapshot).await {
        // A persistence failure must not stop the loop.
        tracing::error!(%error, zone, "isolation state not persisted");
    }
}

/// Everything a zone loop keeps durable: isolation counts, the world log it records batches in
/// before applying them, its snapshots, where recovery left the log, and on-demand requests.
pub struct Persistence {
    /// Isolation counts (persisted whenever they change).
    pub isolation: Option<IsolationPersistence>,
    /// The world log.
    pub log: WorldLog,
    /// Snapshots (periodic, at shutdown, on demand).
    pub snapshots: Option<SnapshotKeeper>,
    /// The last log id recovery folded in: the consumer resumes after it.
    pub resume_after: Option<String>,
    /// Snapshot and reload requests from the admin API.
    pub controls: Option<mpsc::Receiver<ZoneControl>>,
    /// The zone's lease, when this instance holds the zone under one: the loop reads only
    /// while the lease certainly holds, and stops (without a snapshot) when it does not.
    pub lease: Option<LeaseGuard>,
}

impl Persistence {
    /// Nothing durable (the demo, the load generator, tests of other things).
    pub fn volatile() -> Self {
        Self {
            isolation: None,
            log: WorldLog::Volatile,
            snapshots: None,
            resume_after: None,
            controls: None,
            lease: None,
        }
    }
}

/// The zone loop's side of its world stream: the consumer, the outputs waiting to be written
/// with the next read and the ids of the batch waiting to be acknowledged with it.
struct Link {
    consumer: Box<dyn Consumer>,
    outgoing: Outgoing,
    handled: Vec<String>,
}

impl Link {
    /// Writes what waits and acknowledges the last batch without reading: before a snapshot,
    /// which covers only outputs already written, and when the loop stops.
    async fn settle(&mut self) -> Result<(), BusError> {
        self.consumer
            .write_and_ack(&mut self.outgoing, &self.handled)
            .await?;
        self.handled.clear();
        Ok(())
    }
}

/// The log entry a zone's state ends at, which its next snapshot is anchored to.
enum LastEntry {
    /// None: nothing applied, nothing recovered.
    Nothing,
    /// Recovery ended at this log id, but the log could not give its entry back.
    Unread(String),
    /// This entry: its log id and its text, marked ([`LogMark::of`]) only when a snapshot is
    /// anchored to it, not after every batch.
    Read {
        /// Its log id.
        log_id: String,
        /// Its text.
        body: String,
    },
}

impl LastEntry {
    /// Where recovery left the zone: the entry at `resume_after`, read back from `log`.
    async fn resumed(log: &WorldLog, zone: &str, resume_after: Option<&str>) -> Self {
        let Some(id) = resume_after else {
            return Self::Nothing;
        };
        match log.entry_at(zone, id).await {
            Ok(EntryAt::Holds(entry)) => Self::Read {
                log_id: id.to_owned(),
                body: entry.body,
            },
            Ok(_) => Self::Unread(id.to_owned()),
            Err(error) => {
                tracing::warn!(zone, %error, "the log entry recovery ended at could not be read");
                Self::Unread(id.to_owned())
            }
        }
    }

    /// Its log id.
    fn id(&self) -> Option<&str> {
        match self {
            Self::Nothing => None,
            Self::Unread(id) => Some(id),
            Self::Read { log_id, .. } => Some(log_id),
        }
    }
}

/// Counts of one loop run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopStats {
    /// World messages applied.
    pub applied: u64,
    /// World messages sent to `deadletter`.
    pub dead_lettered: u64,
    /// Messages published.
    pub published: u64,
    /// World messages not applied because the zone applied their id lately.
    pub duplicates: u64,
}

/// Runs the loop of `zone` until `shutdown` turns true, on the zone's own thread beside its
/// actor (see [`ZoneHandle::run_beside`]): a batch goes from the read to the actor and its
/// outputs back to the bus without waking another thread.
pub async fn run_zone(
    zone: ZoneHandle,
    bus: Arc<dyn EventBus>,
    consumer_config: ConsumerConfig,
    persistence: Persistence,
    llm: Option<LlmLink>,
    shutdown: watch::Receiver<bool>,
) -> Result<LoopStats, ServiceError> {
    let beside = zone.clone();
    let zone_loop = async move {
        ZoneLoop::open(zone, bus, consumer_config, persistence, llm)
            .await?
            .run(shutdown)
            .await
    };
    beside.run_beside(zone_loop).await?
}

/// The loop [`run_zone`] runs, one method a phase: `open`, then per batch `answer_controls`,
/// `read`, `record`, `sort`, `apply` and `keep`, and `finish` when it stops.
struct ZoneLoop {
    zone: ZoneHandle,
    name: String,
    bus: Arc<dyn EventBus>,
    config: ConsumerConfig,
    isolation: Option<IsolationPersistence>,
    log: WorldLog,
    snapshots: Option<SnapshotKeeper>,
    controls: Option<mpsc::Receiver<ZoneControl>>,
    lease: Option<LeaseGuard>,
    llm: Option<LlmLink>,
    link: Link,
    /// The log entry the zone's state ends at.
    last: LastEntry,
    stats: LoopStats,
    /// World reads failed in a row, reported when they resume.
    failed_reads: u64,
    /// World messages the next read asks for (see [`ConsumerConfig::batch_max_messages_behind`]).
    batch_limit: usize,
    /// Whether the loop stopped because its lease could no longer be trusted.
    lease_lapsed: bool,
    /// The zone's game time after the last batch it applied: what a dead letter says.
    game_time: u64,
}

/// A batch read, sorted ([`ZoneLoop::sort`]): the messages for the zone, the position in the
/// batch of each, and the id of every delivery (acknowledged with the next read).
struct Sorted {
    messages: Vec<WorldMessage>,
    accepted: Vec<usize>,
    ids: Vec<String>,
}

/// What applying a batch left to keep ([`ZoneLoop::keep`]): the log ids it was recorded
/// under, the delivery ids to acknowledge, the isolation counts when they changed and the
/// batch's last game time.
struct Applied {
    log_ids: Vec<String>,
    ids: Vec<String>,
    isolation: Option<IsolationState>,
    game_time: u64,
}

impl ZoneLoop {
    /// Opens the zone's consumer after where recovery left the log, and queues the zone's
    /// settings for its log.
    async fn open(
        zone: ZoneHandle,
        bus: Arc<dyn EventBus>,
        config: ConsumerConfig,
        persistence: Persistence,
        llm: Option<LlmLink>,
    ) -> Result<Self, ServiceError> {
        let name = zone.name.clone();
        let Persistence {
            isolation,
            log,
            snapshots,
            resume_after,
            controls,
            lease,
        } = persistence;
        let consumer = bus
            .consumer(&name, StreamKind::World, &config.group, &config.name)
            .await?;
        let mut link = Link {
            consumer,
            outgoing: Outgoing::new(),
            handled: Vec::new(),
        };
        if let Some(id) = &resume_after {
            link.consumer.resume_after(id).await?;
        }
        // The settings the zone runs with go into its log, after what is already there, so a
        // replay or a later recovery reads them like any input.
        if let Ok(settings) = zone.with(|zone| zone.settings_message().to_json()).await {
            link.outgoing.push((StreamKind::World, settings));
        }
        let last = LastEntry::resumed(&log, &name, resume_after.as_deref()).await;
        let game_time = zone.status().await.map_or(0, |status| status.game_time);
        let batch_limit = config.batch_max_messages.max(1);
        Ok(Self {
            zone,
            name,
            bus,
            config,
            isolation,
            log,
            snapshots,
            controls,
            lease,
            llm,
            link,
            last,
            stats: LoopStats::default(),
            failed_reads: 0,
            batch_limit,
            lease_lapsed: false,
            game_time,
        })
    }

    /// Reads, logs and applies batches until `shutdown` turns true or the lease can no longer
    /// be trusted, then [`finish`](Self::finish)es.
    async fn run(mut self, mut shutdown: watch::Receiver<bool>) -> Result<LoopStats, ServiceError> {
        let block = Duration::from_millis(self.config.block_ms);
        loop {
            if *shutdown.borrow() {
                break;
            }
            if !self.lease_holds(block) {
                tracing::warn!(zone = %self.name, "the zone's lease can no longer be trusted; the loop stops");
                break;
            }
            self.answer_controls().await;
            let Some(batch) = self.read(block, &mut shutdown).await else {
                break;
            };
            if batch.is_empty() {
                continue;
            }
            // Woken after the lease may have lapsed (a paused process): what was read stays for
            // the next owner, whose recovery replays everything delivered.
            if !self.lease_holds(Duration::ZERO) {
                tracing::warn!(zone = %self.name, "the zone's lease lapsed during a read; the loop stops");
                break;
            }
            let Some(log_ids) = self.record(&batch, &shutdown).await else {
                return Ok(self.stats);
            };
            let sorted = self.sort(&batch);
            let game_time = sorted.messages.last().map_or(0, |m| m.header.game_time);
            let (output, status) = self.zone.apply(sorted.messages).await?;
            let isolation = self.apply(output, &status, &sorted.accepted, &batch);
            let applied = Applied {
                log_ids,
                ids: sorted.ids,
                isolation,
                game_time,
            };
            self.keep(batch, applied, &status).await;
        }
        self.finish().await;
        Ok(self.stats)
    }

    /// Whether the lease (if any) holds for `within`; when it does not, the loop is marked as
    /// stopped for it.
    fn lease_holds(&mut self, within: Duration) -> bool {
        let holds = self
            .lease
            .as_ref()
            .is_none_or(|lease| lease.may_read(within));
        self.lease_lapsed |= !holds;
        holds
    }

    /// Answers the admin API's snapshot and reload requests waiting, between two reads.
    async fn answer_controls(&mut self) {
        while let Some(control) = self
            .controls
            .as_mut()
            .and_then(|controls| controls.try_recv().ok())
        {
            match control {
                ZoneControl::Snapshot(reply) => {
                    let report = self.snapshot().await;
                    let _ = reply.send(report);
                }
                ZoneControl::Reload(request) => self.answer_reload(request).await,
            }
        }
    }

    /// Rebuilds the zone from reloaded content, snapshots it when it has applied anything (so
    /// a restart starts from the reloaded state) and answers `request`.
    async fn answer_reload(&mut self, request: ReloadRequest) {
        let name = self.name.clone();
        let mut outcome = reload(&self.zone, request.rebuild).await;
        if let Ok(report) = &mut outcome
            && self.last.id().is_some()
        {
            match self.snapshot().await {
                Ok(written) => report.snapshot = Some(written.sequence),
                Err(error) => {
                    tracing::warn!(zone = %name, %error, "no snapshot after the reload")
                }
            }
        }
        match &outcome {
            Ok(report) => {
                tracing::info!(zone = %name, npcs = report.npcs, names_added = report.names_added, "content reloaded")
            }
            Err(error) => {
                tracing::warn!(zone = %name, %error, "content reload refused; the zone runs on")
            }
        }
        let _ = request.reply.send(outcome);
    }

    /// Writes a snapshot anchored at the last entry, after the outputs it covers are written.
    async fn snapshot(&mut self) -> Result<SnapshotReport, String> {
        let Some(keeper) = self.snapshots.as_mut() else {
            return Err("this zone keeps no snapshots".into());
        };
        let mark = match &self.last {
            LastEntry::Nothing => return Err("nothing has been applied yet".into()),
            LastEntry::Unread(id) => {
                return Err(format!(
                    "log entry `{id}`, where the zone resumed, could not be read back to anchor \
                     a snapshot to; the next batch gives one"
                ));
            }
            LastEntry::Read { log_id, body } => LogMark::of(log_id, body),
        };
        self.link
            .settle()
            .await
            .map_err(|error| format!("the outputs it covers were not written: {error}"))?;
        keeper
            .write(&self.zone, &*self.bus, &mark)
            .await
            .map_err(|e| e.to_string())
    }

    /// Writes the outputs waiting, acknowledges the last batch and reads the next, in one
    /// round trip; `None` when `shutdown` turned true during a read that wrote nothing. A
    /// failed read is retried after the pause: it gives an empty batch.
    async fn read(
        &mut self,
        block: Duration,
        shutdown: &mut watch::Receiver<bool>,
    ) -> Option<Vec<Delivery>> {
        // A read that carries writes is not cancelled (it returns within `block`): what it
        // writes is then known written, not written again when the loop stops.
        let writes = !self.link.outgoing.is_empty();
        let read = self.link.consumer.exchange(
            &mut self.link.outgoing,
            &self.link.handled,
            self.batch_limit,
            block,
        );
        let batch = if writes {
            read.await
        } else {
            tokio::select! {
                batch = read => batch,
                _ = shutdown.changed() => return None,
            }
        };
        let name = &self.name;
        match batch {
            Ok(batch) => {
                self.link.handled.clear();
                self.batch_limit = next_batch_limit(&self.config, self.batch_limit, batch.len());
                if self.failed_reads > 0 {
                    let failed_reads = self.failed_reads;
                    tracing::info!(zone = %name, failed_reads, "world reads resumed: Redis is back");
                    self.failed_reads = 0;
                }
                Some(batch)
            }
            Err(error) => {
                tracing::warn!(%error, zone = %name, "world read (with the last batch's outputs and ack) failed; retrying");
                metrics::bus_error();
                self.failed_reads += 1;
                tokio::time::sleep(Duration::from_millis(self.config.retry_pause_ms)).await;
                Some(Vec::new())
            }
        }
    }

    /// Records `batch` in the world log before it is applied (invariant 1): a batch the log
    /// refuses is retried, never applied unlogged. `None` when `shutdown` turned true meanwhile.
    async fn record(
        &mut self,
        batch: &[Delivery],
        shutdown: &watch::Receiver<bool>,
    ) -> Option<Vec<String>> {
        loop {
            match self.log.record(&self.name, batch).await {
                Ok(ids) => return Some(ids),
                Err(error) => {
                    tracing::error!(%error, zone = %self.name, "world log refused a batch; retrying");
                    tokio::time::sleep(Duration::from_millis(self.config.retry_pause_ms)).await;
                    if *shutdown.borrow() {
                        return None;
                    }
                }
            }
        }
    }

    /// Parses `batch`: the messages for this zone go on to be applied; one that does not parse,
    /// or is for another zone, goes to `deadletter` with the reason.
    fn sort(&mut self, batch: &[Delivery]) -> Sorted {
        let name = &self.name;
        let mut sorted = Sorted {
            messages: Vec::with_capacity(batch.len()),
            accepted: Vec::with_capacity(batch.len()),
            ids: Vec::with_capacity(batch.len()),
        };
        for (index, delivery) in batch.iter().enumerate() {
            sorted.ids.push(delivery.id.clone());
            let refused = |event_type: &str, path: &str, reason: String| DeadLetter {
                source_id: delivery.id.clone(),
                event_type: event_type.to_owned(),
                path: path.to_owned(),
                reason,
                original: excerpt(&delivery.body, self.config.limits.max_bytes).to_owned(),
            };
            let parsed = match delivery.utf8_error_at {
                Some(at) => Err(EnvelopeError {
                    kind: "unknown".into(),
                    path: ".".into(),
                    reason: format!("not UTF-8: invalid byte at {at}"),
                }),
                None => parse_world_within(&delivery.body, &self.config.limits),
            };
            let letter = match parsed {
                Ok(message) if message.header.zone == *name => {
                    metrics::event_in(message.event.kind());
                    sorted.messages.push(message);
                    sorted.accepted.push(index);
                    continue;
                }
                Ok(message) => {
                    let reason = format!(
                        "message for zone `{}` on the stream of `{name}`",
                        message.header.zone
                    );
                    refused(message.event.kind(), "zone", reason)
                }
                Err(error) => {
                    tracing::warn!(zone = %name, %error, "world event refused");
                    refused(&error.kind, &error.path, error.reason.clone())
                }
            };
            dead_letter(&mut self.link.outgoing, (name, self.game_time), letter);
            self.stats.dead_lettered += 1;
        }
        sorted
    }

    /// Queues what the zone gave for `batch` (its `accepted` deliveries applied): refusals to
    /// `deadletter`, outputs to be written with the next read, travellers to their zones'
    /// streams, requests to the LLM seams. Returns the isolation counts when they changed.
    fn apply(
        &mut self,
        output: ZoneOutput,
        status: &ZoneStatus,
        accepted: &[usize],
        batch: &[Delivery],
    ) -> Option<IsolationState> {
        let name = &self.name;
        self.game_time = status.game_time;
        for refusal in &output.refused {
            tracing::warn!(zone = %name, id = %refusal.id, reason = %refusal.reason, "world event refused by the zone");
            // The delivery the refused message came from: `accepted` maps a position in what
            // was applied to one in the batch read.
            let delivery = accepted
                .get(refusal.position)
                .and_then(|&index| batch.get(index));
            let letter = DeadLetter {
                source_id: delivery.map_or_else(|| refusal.id.clone(), |d| d.id.clone()),
                event_type: refusal.kind.to_owned(),
                path: refusal.path.clone(),
                reason: refusal.reason.clone(),
                original: delivery.map(|d| d.body.clone()).unwrap_or_default(),
            };
            dead_letter(&mut self.link.outgoing, (name, self.game_time), letter);
            self.stats.dead_lettered += 1;
        }
        self.stats.applied += output.applied;
        self.stats.duplicates += output.duplicates;
        if output.duplicates > 0 {
            metrics::world_duplicates(output.duplicates);
        }
        if let Some(llm) = &self.llm {
            // Presence first, so the delivery guard already sees this batch's rooms; then one
            // budget refill per batch (the tick boundary the seams can see) and the requests.
            llm.rooms
                .update(name, status.rooms_with_players.clone(), status.game_time);
            llm.handle.start_tick();
            llm.submit(output.llm);
        }
        // Written with the next read; travellers go to other zones' streams through the bus.
        for (stream, body) in output.messages {
            metrics::event_out(stream);
            self.link.outgoing.push((stream, body));
            self.stats.published += 1;
        }
        for (target, body) in output.handovers {
            metrics::event_out(StreamKind::World);
            self.bus.publish(&target, StreamKind::World, body);
            self.stats.published += 1;
        }
        output.isolation_changed
    }

    /// Keeps what the batch changed: the entry the zone's state now ends at, isolation counts
    /// when they changed, the ids to acknowledge with the next read, and a snapshot when one
    /// is due.
    async fn keep(&mut self, mut batch: Vec<Delivery>, applied: Applied, status: &ZoneStatus) {
        let name = self.name.clone();
        let Applied {
            log_ids,
            ids,
            isolation,
            game_time,
        } = applied;
        if let (Some(id), Some(entry)) = (log_ids.last(), batch.pop()) {
            self.last = LastEntry::Read {
                log_id: id.clone(),
                body: entry.body,
            };
        }
        if let (Some(state), Some(persistence)) = (isolation, self.isolation.as_mut()) {
            let last = self.last.id().unwrap_or_default();
            persist(persistence, &name, &state, last, game_time).await;
        }
        self.link.handled = ids;
        if self.snapshots.as_ref().is_some_and(|s| s.due(status.tick)) {
            match self.snapshot().await {
                Ok(report) => {
                    tracing::info!(zone = %name, sequence = report.sequence, bytes = report.bytes, "snapshot written")
                }
                Err(error) => tracing::error!(zone = %name, %error, "snapshot not written"),
            }
        }
        metrics::zone_status(&name, status);
        let stats = self.bus.stats();
        metrics::bus_dropped(stats.dropped);
        metrics::bus_fenced(stats.fenced);
        metrics::bus_held_bytes(stats.held_bytes);
    }

    /// Writes what waits and acknowledges the last batch; then, unless the lease lapsed or was
    /// lost, writes a last snapshot.
    async fn finish(&mut self) {
        let name = self.name.clone();
        if let Err(error) = self.link.settle().await {
            tracing::warn!(%error, zone = %name, "the last batch's outputs and ack were not written; the batch will be redelivered");
            metrics::bus_error();
        }
        // The messages fenced off when the lease was lost, which ended the loop.
        metrics::bus_fenced(self.bus.stats().fenced);
        let lease_lapsed = self.lease_lapsed;
        let lease_lost = self.lease.as_ref().is_some_and(LeaseGuard::is_lost);
        tracing::info!(zone = %name, lease_lapsed, lease_lost, "zone loop stopped");
        if self.snapshots.is_some() && self.last.id().is_some() && !lease_lapsed && !lease_lost {
            match self.snapshot().await {
                Ok(report) => {
                    tracing::info!(zone = %name, sequence = report.sequence, "shutdown snapshot written")
                }
                Err(error) => {
                    tracing::error!(zone = %name, %error, "shutdown snapshot not written")
                }
            }
        }
    }
}

/// What the read after one that gave `read` messages of the `limit` it asked for asks for:
/// twice as many after a full batch (the zone is behind), up to `batch_max_messages_behind`;
/// `batch_max_messages` after a short one.
fn next_batch_limit(config: &ConsumerConfig, limit: usize, read: usize) -> usize {
    let base = config.batch_max_messages.max(1);
    if read >= limit {
        limit
            .saturating_mul(2)
            .min(config.batch_max_messages_behind.max(base))
    } else {
        base
    }
}

/// The first `max_bytes` of `body` (on a character boundary): a dead letter keeps at most what
/// a message may hold.
fn excerpt(body: &str, max_bytes: usize) -> &str {
    let mut end = body.len().min(max_bytes);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    &body[..end]
}

/// Queues `letter` for `zone`'s `deadletter` stream, at the zone's `game_time`.
fn dead_letter(outgoing: &mut Outgoing, (zone, game_time): (&str, u64), letter: DeadLetter) {
    metrics::dead_letter();
    let h = header(
        format!("{zone}:deadletter:{}", letter.source_id),
        zone,
        game_time,
    );
    outgoing.push((StreamKind::Deadletter, dead_letter_envelope(&h, &letter)));
}

/// The internal clock: from `start` (ticks), publishes `time_advanced` into `zone`'s world
/// stream at `speed` ticks per second until `end` (if any) or shutdown, interleaving the
/// `script` (world messages sorted by game time) at their times. Returns the last time.
pub async fn run_clock(
    bus: Arc<dyn EventBus>,
    zone: String,
    start: u64,
    end: Option<u64>,
    config: ClockConfig,
    script: Vec<WorldMessage>,
    mut shutdown: watch::Receiver<bool>,
) -> u64 {
    let mut script = script.into_iter().peekable();
    let time_advanced = |now: u64| {
        WorldMessage {
            header: header(format!("{zone}:clock:{now}"), &zone, now),
            event: WorldEvent::TimeAdvanced,
        }
        .to_json()
    };
    let period = Duration::from_millis(config.publish_every_ms.max(1));
    let per_period = config.speed_minutes_per_second.max(0.0) * period.as_secs_f64();
    let mut interval = tokio::time::interval(period);
    let mut exact = start as f64;
    let mut published = start;
    loop {
        tokio::select! {
            _ = interval.tick() => {}
            _ = shutdown.changed() => return published,
        }
        exact += per_period;
        let mut now = exact.floor() as u64;
        if let Some(end) = end {
            now = now.min(end);
        }
        while let Some(next) = script.next_if(|m| m.header.game_time <= now) {
            if next.header.game_time > published {
                published = next.header.game_time;
                bus.publish(&zone, StreamKind::World, time_advanced(published));
            }
            bus.publish(&zone, StreamKind::World, next.to_json());
        }
        if now > published {
            published = now;
            bus.publish(&zone, StreamKind::World, time_advanced(now));
        }
        if end.is_some_and(|end| published >= end) {
            return published;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_batch_doubles_the_next_up_to_the_bound_and_a_short_one_resets_it() {
        let config = ConsumerConfig {
            batch_max_messages: 256,
            batch_max_messages_behind: 1000,
            ..ConsumerConfig::default()
        };
        let mut limit = 256;
        let mut asked = Vec::new();
        for _ in 0..4 {
            limit = next_batch_limit(&config, limit, limit);
            asked.push(limit);
        }
        assert_eq!(asked, [512, 1000, 1000, 1000]);
        assert_eq!(next_batch_limit(&config, 1000, 999), 256);
        assert_eq!(next_batch_limit(&config, 256, 0), 256);
        // A bound below the base is the base.
        let low = ConsumerConfig {
            batch_max_messages_behind: 16,
            ..config
        };
        assert_eq!(next_batch_limit(&low, 256, 256), 256);
    }
}
