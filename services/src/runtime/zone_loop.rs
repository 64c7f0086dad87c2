//! The service loop of one zone, run on the zone's actor thread: read a batch from the zone's
//! `world` stream (its own consumer, so its own connection), parse each message (refused ones
//! go to `deadletter` with the reason and are acknowledged — nothing on input stops the loop),
//! apply the batch in the zone's actor, persist isolation counts when they change; then write
//! the outputs in order (governor records to `world` first), acknowledge the batch and read the
//! next, in one round trip on Redis ([`Consumer::exchange`]). Also the internal clock, which
//! writes `time_advanced` events into the world stream so they are logged like the game's.
//!
//! Every dependency (bus, store, shutdown signal) comes from the caller, so tests run it against
//! a private Redis or the in-process bus.

use std::sync::Arc;
use std::time::Duration;

use geppetto_storage::{Snapshot, SnapshotStore, ZoneName};
use tokio::sync::{mpsc, oneshot, watch};

use crate::bus::envelope::{
    DeadLetter, EnvelopeError, WorldEvent, WorldMessage, dead_letter_envelope, header,
    parse_world_within,
};
use crate::bus::{BusError, Consumer, ConsumerConfig, EventBus, Outgoing, StreamKind};
use crate::config::clock::ClockConfig;
use crate::runtime::actor::{ZoneGone, ZoneHandle};
use crate::runtime::lease::LeaseGuard;
use crate::runtime::llm_bridge::LlmLink;
use crate::runtime::metrics;
use crate::runtime::recovery::{SnapshotKeeper, SnapshotReport};
use crate::runtime::world_log::{Position, WorldLog};
use crate::zone::anchor::LogMark;
use crate::zone::isolation::IsolationState;
use crate::zone::{Zone, ZoneError, ZoneState};

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

/// Asks a zone loop for a snapshot now (`POST /zones/{zone}/snapshot`); answered with what
/// was written or why not.
pub type SnapshotRequest = oneshot::Sender<Result<SnapshotReport, String>>;

/// Builds a zone from reloaded content over a vocabulary (the running zone's).
pub type Rebuild = Box<dyn FnOnce(&[String]) -> Result<Zone, ZoneError> + Send>;

/// Asks a zone loop to rebuild its zone from reloaded content, keeping its state
/// (`POST /content/reload`).
pub struct ReloadRequest {
    /// The rebuild.
    pub rebuild: Rebuild,
    /// Where the outcome goes.
    pub reply: oneshot::Sender<Result<ReloadReport, String>>,
}

/// A zone rebuilt from reloaded content.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ReloadReport {
    /// Zone.
    pub zone: String,
    /// NPCs after the reload.
    pub npcs: usize,
    /// Names the new content brought (appended to the zone's vocabulary).
    pub names_added: usize,
    /// The snapshot written right after, so a restart starts from the reloaded state.
    pub snapshot: Option<u64>,
}

/// What the admin API asks of a zone loop; handled between two reads of the world stream
/// (never by cancelling a read, which could leave delivered entries behind).
pub enum ZoneControl {
    /// Write a snapshot now.
    Snapshot(SnapshotRequest),
    /// Rebuild the zone from reloaded content.
    Reload(ReloadRequest),
}

/// Swaps `zone` for one rebuilt from new content with the same state: the state is captured,
/// the new zone built over its vocabulary, and the state laid over it — as a restart on the
/// new content would. On any refusal the running zone is left as it was.
async fn reload(zone: &ZoneHandle, rebuild: Rebuild) -> Result<ReloadReport, String> {
    // Only this loop changes the zone, so the state cannot move on between capture and swap;
    // the build runs off the actor, which keeps answering the admin API meanwhile.
    let saved = zone
        .with(|running| running.capture())
        .await
        .map_err(|e| e.to_string())?;
    let before = saved.vocabulary.len();
    let restored = tokio::task::spawn_blocking(move || rebuild_over(rebuild, saved))
        .await
        .map_err(|e| e.to_string())??;
    let report = ReloadReport {
        zone: restored.name.clone(),
        npcs: restored.agents.len(),
        names_added: restored.vocabulary.len().saturating_sub(before),
        snapshot: None,
    };
    zone.with(move |running| *running = restored)
        .await
        .map_err(|e| e.to_string())?;
    Ok(report)
}

/// The zone `rebuild` makes over `saved`'s vocabulary, with `saved` laid over it.
fn rebuild_over(rebuild: Rebuild, saved: ZoneState) -> Result<Zone, String> {
    let fresh = rebuild(&saved.vocabulary).map_err(|e| e.to_string())?;
    Zone::restored(fresh, saved).map_err(|e| e.to_string())
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

/// Writes a snapshot anchored at `last`, after `link` has written the outputs it covers.
async fn take_snapshot(
    snapshots: Option<&mut SnapshotKeeper>,
    zone: &ZoneHandle,
    bus: &dyn EventBus,
    last: &LastEntry,
    link: &mut Link,
) -> Result<SnapshotReport, String> {
    let Some(keeper) = snapshots else {
        return Err("this zone keeps no snapshots".into());
    };
    let mark = match last {
        LastEntry::Nothing => return Err("nothing has been applied yet".into()),
        LastEntry::Unread(id) => {
            return Err(format!(
                "log entry `{id}`, where the zone resumed, could not be read back to anchor a \
                 snapshot to; the next batch gives one"
            ));
        }
        LastEntry::Read { log_id, body } => LogMark::of(log_id, body),
    };
    link.settle()
        .await
        .map_err(|error| format!("the outputs it covers were not written: {error}"))?;
    keeper
        .write(zone, bus, &mark)
        .await
        .map_err(|e| e.to_string())
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
        match log.position(zone, id).await {
            Ok(Position::Holds(entry)) => Self::Read {
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
    let zone_loop = zone_loop(zone, bus, consumer_config, persistence, llm, shutdown);
    beside.run_beside(zone_loop).await?
}

/// The loop [`run_zone`] runs.
async fn zone_loop(
    zone: ZoneHandle,
    bus: Arc<dyn EventBus>,
    consumer_config: ConsumerConfig,
    persistence: Persistence,
    llm: Option<LlmLink>,
    mut shutdown: watch::Receiver<bool>,
) -> Result<LoopStats, ServiceError> {
    let name = zone.name.clone();
    let Persistence {
        isolation: mut isolation_store,
        log,
        mut snapshots,
        resume_after,
        mut controls,
        lease,
    } = persistence;
    let consumer = bus
        .consumer(
            &name,
            StreamKind::World,
            &consumer_config.group,
            &consumer_config.name,
        )
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
    let mut last = LastEntry::resumed(&log, &name, resume_after.as_deref()).await;
    let mut stats = LoopStats::default();
    let block = Duration::from_millis(consumer_config.block_ms);
    let pause = Duration::from_millis(consumer_config.retry_pause_ms);
    let mut lease_lapsed = false;
    let mut failed_reads = 0u64;
    loop {
        if *shutdown.borrow() {
            break;
        }
        if let Some(lease) = &lease
            && !lease.may_read(block)
        {
            tracing::warn!(zone = %name, "the zone's lease can no longer be trusted; the loop stops");
            lease_lapsed = true;
            break;
        }
        loop {
            let control = match controls.as_mut() {
                Some(controls) => controls.try_recv().ok(),
                None => None,
            };
            let Some(control) = control else { break };
            match control {
                ZoneControl::Snapshot(reply) => {
                    let report =
                        take_snapshot(snapshots.as_mut(), &zone, &*bus, &last, &mut link).await;
                    let _ = reply.send(report);
                }
                ZoneControl::Reload(request) => {
                    let mut outcome = reload(&zone, request.rebuild).await;
                    if let Ok(report) = &mut outcome
                        && last.id().is_some()
                    {
                        match take_snapshot(snapshots.as_mut(), &zone, &*bus, &last, &mut link)
                            .await
                        {
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
            }
        }
        // A read that carries writes is not cancelled (it returns within `block`): what it
        // writes is then known written, not written again when the loop stops.
        let writes = !link.outgoing.is_empty();
        let read = link.consumer.exchange(
            &mut link.outgoing,
            &link.handled,
            consumer_config.batch_max_messages,
            block,
        );
        let batch = if writes {
            read.await
        } else {
            tokio::select! {
                batch = read => batch,
                _ = shutdown.changed() => break,
            }
        };
        let mut batch = match batch {
            Ok(batch) => {
                link.handled.clear();
                if failed_reads > 0 {
                    tracing::info!(zone = %name, failed_reads, "world reads resumed: Redis is back");
                    failed_reads = 0;
                }
                batch
            }
            Err(error) => {
                tracing::warn!(%error, zone = %name, "world read (with the last batch's outputs and ack) failed; retrying");
                metrics::bus_error();
                failed_reads += 1;
                tokio::time::sleep(pause).await;
                continue;
            }
        };
        if batch.is_empty() {
            continue;
        }
        // Woken after the lease may have lapsed (a paused process): what was read stays for
        // the next owner, whose recovery replays everything delivered.
        if let Some(lease) = &lease
            && !lease.may_read(Duration::ZERO)
        {
            tracing::warn!(zone = %name, "the zone's lease lapsed during a read; the loop stops");
            lease_lapsed = true;
            break;
        }
        // Logged before it is applied (invariant 1); a batch the log refuses is retried, never
        // applied unlogged.
        let log_ids = loop {
            match log.record(&name, &batch).await {
                Ok(ids) => break ids,
                Err(error) => {
                    tracing::error!(%error, zone = %name, "world log refused a batch; retrying");
                    tokio::time::sleep(pause).await;
                    if *shutdown.borrow() {
                        return Ok(stats);
                    }
                }
            }
        };
        let mut messages = Vec::with_capacity(batch.len());
        let mut accepted = Vec::with_capacity(batch.len());
        let mut ids = Vec::with_capacity(batch.len());
        for (index, delivery) in batch.iter().enumerate() {
            ids.push(delivery.id.clone());
            let refused = |event_type: &str, path: &str, reason: String| DeadLetter {
                source_id: delivery.id.clone(),
                event_type: event_type.to_owned(),
                path: path.to_owned(),
                reason,
                original: excerpt(&delivery.body, consumer_config.limits.max_bytes).to_owned(),
            };
            let parsed = match delivery.utf8_error_at {
                Some(at) => Err(EnvelopeError {
                    kind: "unknown".into(),
                    path: ".".into(),
                    reason: format!("not UTF-8: invalid byte at {at}"),
                }),
                None => parse_world_within(&delivery.body, &consumer_config.limits),
            };
            match parsed {
                Ok(message) if message.header.zone == name => {
                    metrics::event_in(message.event.kind());
                    messages.push(message);
                    accepted.push(index);
                }
                Ok(message) => {
                    let reason = format!(
                        "message for zone `{}` on the stream of `{name}`",
                        message.header.zone
                    );
                    dead_letter(
                        &mut link.outgoing,
                        &name,
                        refused(message.event.kind(), "zone", reason),
                    );
                    stats.dead_lettered += 1;
                }
                Err(error) => {
                    tracing::warn!(zone = %name, %error, "world event refused");
                    let letter = refused(&error.kind, &error.path, error.reason.clone());
                    dead_letter(&mut link.outgoing, &name, letter);
                    stats.dead_lettered += 1;
                }
            }
        }
        let game_time = messages.last().map_or(0, |m| m.header.game_time);
        let (output, status) = zone.apply(messages).await?;
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
            dead_letter(&mut link.outgoing, &name, letter);
            stats.dead_lettered += 1;
        }
        stats.applied += output.applied;
        stats.duplicates += output.duplicates;
        if output.duplicates > 0 {
            metrics::world_duplicates(output.duplicates);
        }
        if let Some(llm) = &llm {
            // Presence first, so the delivery guard already sees this batch's rooms; then one
            // budget refill per batch (the tick boundary the seams can see) and the requests.
            llm.rooms
                .update(&name, status.rooms_with_players.clone(), status.game_time);
            llm.handle.start_tick();
            llm.submit(output.llm);
        }
        // Written with the next read; travellers go to other zones' streams through the bus.
        for (stream, body) in output.messages {
            metrics::event_out(stream);
            link.outgoing.push((stream, body));
            stats.published += 1;
        }
        for (target, body) in output.handovers {
            metrics::event_out(StreamKind::World);
            bus.publish(&target, StreamKind::World, body);
            stats.published += 1;
        }
        if let (Some(id), Some(entry)) = (log_ids.last(), batch.pop()) {
            last = LastEntry::Read {
                log_id: id.clone(),
                body: entry.body,
            };
        }
        if let (Some(state), Some(persistence)) =
            (output.isolation_changed, isolation_store.as_mut())
        {
            let last = last.id().unwrap_or_default();
            persist(persistence, &name, &state, last, game_time).await;
        }
        link.handled = ids;
        if snapshots.as_ref().is_some_and(|s| s.due(status.tick)) {
            match take_snapshot(snapshots.as_mut(), &zone, &*bus, &last, &mut link).await {
                Ok(report) => {
                    tracing::info!(zone = %name, sequence = report.sequence, bytes = report.bytes, "snapshot written")
                }
                Err(error) => tracing::error!(zone = %name, %error, "snapshot not written"),
            }
        }
        metrics::zone_status(&name, &status);
        let stats = bus.stats();
        metrics::bus_dropped(stats.dropped);
        metrics::bus_fenced(stats.fenced);
    }
    if let Err(error) = link.settle().await {
        tracing::warn!(%error, zone = %name, "the last batch's outputs and ack were not written; the batch will be redelivered");
        metrics::bus_error();
    }
    // The messages fenced off when the lease was lost, which ended the loop.
    metrics::bus_fenced(bus.stats().fenced);
    let lease_lost = lease.as_ref().is_some_and(LeaseGuard::is_lost);
    tracing::info!(zone = %name, lease_lapsed, lease_lost, "zone loop stopped");
    if snapshots.is_some() && last.id().is_some() && !lease_lapsed && !lease_lost {
        match take_snapshot(snapshots.as_mut(), &zone, &*bus, &last, &mut link).await {
            Ok(report) => {
                tracing::info!(zone = %name, sequence = report.sequence, "shutdown snapshot written")
            }
            Err(error) => tracing::error!(zone = %name, %error, "shutdown snapshot not written"),
        }
    }
    Ok(stats)
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

/// Queues `letter` for `zone`'s `deadletter` stream.
fn dead_letter(outgoing: &mut Outgoing, zone: &str, letter: DeadLetter) {
    metrics::dead_letter();
    let h = header(format!("{zone}:deadletter:{}", letter.source_id), zone, 0);
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
