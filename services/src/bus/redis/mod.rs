//! The Redis Streams bus: `XADD … MAXLEN ~ N` for publishing, consumer groups (`XREADGROUP`,
//! `XACK`) for reading, `XAUTOCLAIM` for entries a dead consumer left pending.
//!
//! The same code talks to one server or to a Redis Cluster (`cluster_nodes`): every key of a
//! zone carries the zone as a hash tag, and the writer sends one pipeline (or one script) per
//! zone, so nothing it sends crosses a slot.
//!
//! Two traps of redis-rs decide the wiring (STACK.md): a blocking `XREADGROUP` stalls every
//! other command on the same multiplexed connection, so each [`Consumer`] opens its own
//! connection; and async connections time out responses after 500 ms by default, so a
//! consumer's response timeout is set above its `BLOCK` time. A zone loop writes its zone's
//! outputs on its consumer's connection, in the pipeline that acknowledges its last batch and
//! reads the next ([`Consumer::exchange`]): an event's outputs reach Redis in the round trip
//! that follows its batch, without a hop to another task. Everything else published (the
//! internal clock, travellers handed to other zones, LLM narration, recovery's replayed
//! outputs) goes through a bounded buffer drained by one writer task over a reconnecting
//! connection; when Redis is away the buffer fills and further messages are dropped and counted
//! — a tick never waits.
//!
//! A zone held under a lease is *fenced*: its messages are written by a Lua script
//! that first checks the zone's lease still holds this instance's token, atomically with the
//! `XADD`s, so an instance whose lease lapsed (paused, partitioned) cannot publish for the zone
//! any more; such a batch is dropped, counted as fenced, and the lease is marked lost. The
//! writer task and the zone loops stage their writes alike ([`Writes`]).
//!
//! The `[bus.redis]` settings and where they point (server or cluster, password, CA) are
//! `config`'s; reading a zone's stream as a consumer group is `consumer`'s, on a connection of
//! `raw`'s (its replies read without redis-rs's parser) when the target is one server over
//! TCP.

mod config;
mod consumer;
mod raw;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use geppetto_redis_target::{RedisConnection, RedisTarget, SharedSettings};
use redis::streams::StreamMaxlen;
use redis::{RedisError, Value};
use tokio::sync::{Notify, mpsc};

use super::{BusError, BusFuture, BusStats, Consumer, Delivery, EventBus, StreamKind};
pub use config::{RedisBusConfig, redacted_url, target_for, tcp_settings};
use config::{backoff, redis_error, shown_servers};
use consumer::{RedisConsumer, deliveries};
pub(crate) use raw::{parse_one, raw_address, reply_ends, setup};

/// The field every stream entry carries its envelope in.
pub const BODY_FIELD: &str = "m";

/// The field naming the instance that wrote an entry (when the bus was given a name): which
/// instance of a cluster published what, for operators and the fencing tests.
pub const WRITER_FIELD: &str = "i";

/// Pending entries acknowledged per round trip when settling after recovery.
const SETTLE_PAGE: usize = 1000;

/// Writes a fenced zone's messages only while its lease holds this instance's token.
/// KEYS: the lease, then one stream key per message. ARGV: the token, MAXLEN, the body field,
/// the writer field, the writer's name, then one body per message. Reply: 1 written, 0 fenced
/// off (nothing written).
const FENCED_XADD_SCRIPT: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
for i = 2, #KEYS do
  redis.call('XADD', KEYS[i], 'MAXLEN', '~', ARGV[2], '*', ARGV[3], ARGV[i + 4], ARGV[4], ARGV[5])
end
return 1
";

struct Counters {
    accepted: AtomicU64,
    settled: AtomicU64,
    dropped: AtomicU64,
    fenced: AtomicU64,
    settled_notify: Notify,
}

impl Counters {
    /// `count` of `zone`'s messages were not written: `fence` no longer holds this instance's
    /// lease, which is marked lost.
    fn fenced_off(&self, zone: &str, fence: &Fence, count: usize) {
        fence.mark_lost();
        self.fenced.fetch_add(count as u64, Ordering::Relaxed);
        tracing::warn!(
            zone,
            messages = count,
            "redis bus: lease lost; messages fenced off"
        );
    }

    /// Of messages that did not pass through the buffer, `written` were written (or fenced
    /// off) and `dropped` dropped.
    fn settled_directly(&self, written: usize, dropped: usize) {
        let count = (written + dropped) as u64;
        self.accepted.fetch_add(count, Ordering::AcqRel);
        self.dropped.fetch_add(dropped as u64, Ordering::Relaxed);
        self.settled.fetch_add(count, Ordering::Release);
    }
}

/// The lease a zone's writes are checked against (shared with the snapshot store's fence).
pub use geppetto_storage::LeaseFence as Fence;

type Fences = Arc<RwLock<HashMap<String, Fence>>>;

/// One message waiting for the writer.
struct Outbound {
    zone: String,
    key: String,
    body: String,
}

/// Publishes and consumes zone streams on Redis.
pub struct RedisBus {
    config: RedisBusConfig,
    target: RedisTarget,
    /// For one-off commands (ranges, group info, leases): never blocks.
    shared: RedisConnection,
    outbound: mpsc::Sender<Outbound>,
    writes: Writes,
}

/// What writing a zone's messages takes beside a connection, shared by the writer task and
/// every consumer (a zone loop writes its outputs through its own): the counters, the fences,
/// the streams' bound and the instance's name.
#[derive(Clone)]
struct Writes {
    counters: Arc<Counters>,
    fences: Fences,
    /// Approximate length each stream is trimmed to.
    stream_maxlen: usize,
    /// The instance named in each entry ("" = none).
    name: Arc<str>,
}

/// How one zone's messages went into a pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Staged {
    /// As `XADD`s (the zone is not fenced), their replies ignored.
    Plain,
    /// As the fenced script, whose reply (1 written, 0 fenced off) is the pipeline's first.
    Fenced,
    /// Not at all: the zone's fence no longer lets it write.
    FencedOff,
}

impl Writes {
    /// The fence `zone`'s messages are checked against, when it is held under a lease.
    fn fence(&self, zone: &str) -> Option<Fence> {
        self.fences
            .read()
            .ok()
            .and_then(|fences| fences.get(zone).cloned())
    }

    /// Adds the writes of one zone's `messages` (stream key, body), in order, to `pipe`: plain
    /// `XADD`s when the zone has no `fence`, else the fenced script (`EVAL`, so a restarted
    /// server needs no `SCRIPT LOAD`) while the fence may still write. The pipeline answers
    /// every command, a server's error in its place (`ignore_errors`), so a refused write is
    /// told from the rest of the round trip ([`Writes::settle`]).
    fn stage<'m>(
        &self,
        pipe: &mut redis::Pipeline,
        fence: Option<&Fence>,
        messages: impl Iterator<Item = (&'m str, &'m str)> + Clone,
    ) -> Staged {
        pipe.ignore_errors();
        let name = &*self.name;
        match fence {
            None => {
                let maxlen = StreamMaxlen::Approx(self.stream_maxlen);
                for (key, body) in messages {
                    if name.is_empty() {
                        pipe.xadd_maxlen(key, maxlen, "*", &[(BODY_FIELD, body)]);
                    } else {
                        pipe.xadd_maxlen(
                            key,
                            maxlen,
                            "*",
                            &[(BODY_FIELD, body), (WRITER_FIELD, name)],
                        );
                    }
                }
                Staged::Plain
            }
            Some(fence) if fence.may_write() => {
                let mut script = redis::cmd("EVAL");
                script
                    .arg(FENCED_XADD_SCRIPT)
                    .arg(1 + messages.clone().count())
                    .arg(&fence.lease_key);
                for (key, _) in messages.clone() {
                    script.arg(key);
                }
                script
                    .arg(&fence.token)
                    .arg(self.stream_maxlen)
                    .arg(BODY_FIELD)
                    .arg(WRITER_FIELD)
                    .arg(name);
                for (_, body) in messages {
                    script.arg(body);
                }
                pipe.add_command(script);
                Staged::Fenced
            }
            Some(_) => Staged::FencedOff,
        }
    }

    /// After the round trip that carried `count` messages of `zone` staged as `staged`
    /// (`replies`: their replies, in order): `Ok` when they were written or a lapsed lease
    /// kept them off (counted as fenced, the lease marked lost); [`Refused`] when the server
    /// refused one (out of memory, say).
    fn settle(
        &self,
        zone: &str,
        fence: Option<&Fence>,
        staged: Staged,
        replies: &[Value],
        count: usize,
    ) -> Result<(), Refused> {
        if let Some((index, error)) =
            replies
                .iter()
                .enumerate()
                .find_map(|(index, reply)| match reply {
                    Value::ServerError(error) => Some((index, error)),
                    _ => None,
                })
        {
            return Err(Refused {
                error: error.clone().into(),
                // `XADD`s before the first refused one were written; a script's may have been.
                written: if staged == Staged::Plain { index } else { 0 },
            });
        }
        let written = match staged {
            Staged::Plain => true,
            Staged::Fenced => replies
                .first()
                .is_some_and(|reply| redis::from_redis_value_ref::<i64>(reply).ok() == Some(1)),
            Staged::FencedOff => false,
        };
        if !written && let Some(fence) = fence {
            self.counters.fenced_off(zone, fence, count);
        }
        Ok(())
    }
}

/// The server refused a write of a zone's messages.
struct Refused {
    /// Its error.
    error: RedisError,
    /// How many of the messages, from the first, are known written: the rest go again (those
    /// after the refused one may be written twice, and stay in order).
    written: usize,
}

impl RedisBus {
    /// Connects (must run inside a tokio runtime: it spawns the writer task).
    pub async fn connect(config: RedisBusConfig) -> Result<Self, BusError> {
        Self::connect_as(config, "").await
    }

    /// Connects as the instance `writer`: every entry it writes names it in the field
    /// [`WRITER_FIELD`] (none when `writer` is empty).
    pub async fn connect_as(config: RedisBusConfig, writer: &str) -> Result<Self, BusError> {
        let target = target_for(&config)?;
        let shown = shown_servers(&config);
        let settings = SharedSettings {
            response_timeout: Duration::from_millis(
                config.read_block_ms + config.response_timeout_margin_ms,
            ),
            connection_timeout: Duration::from_millis(config.reconnect_backoff_max_ms.max(1)),
            retries: 6,
        };
        let shared = target
            .shared(settings)
            .await
            .map_err(redis_error("connect", &shown))?;
        let (outbound, receiver) = mpsc::channel(config.outbound_buffer_messages.max(1));
        let counters = Arc::new(Counters {
            accepted: AtomicU64::new(0),
            settled: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            fenced: AtomicU64::new(0),
            settled_notify: Notify::new(),
        });
        let writes = Writes {
            counters,
            fences: Fences::default(),
            stream_maxlen: config.stream_maxlen,
            name: Arc::from(writer),
        };
        tokio::spawn(write_loop(
            Writer {
                target: target.clone(),
                settings,
                connection: None,
                config: config.clone(),
            },
            receiver,
            writes.clone(),
        ));
        Ok(Self {
            config,
            target,
            shared,
            outbound,
            writes,
        })
    }

    /// Where this bus connects (for the zone leases and the snapshot store to share).
    pub fn target(&self) -> &RedisTarget {
        &self.target
    }

    /// A clone of the bus's reconnecting connection for short commands (never blocks).
    pub fn shared_connection(&self) -> RedisConnection {
        self.shared.clone()
    }

    /// From now on `zone`'s messages are written only while `fence` holds (see the module
    /// comment); replaces an earlier fence of the zone.
    pub fn fence(&self, zone: &str, fence: Fence) {
        if let Ok(mut fences) = self.writes.fences.write() {
            fences.insert(zone.to_owned(), fence);
        }
    }

    /// `zone`'s messages are no longer written (the zone was released or lost): whatever is
    /// still buffered for it is dropped as fenced.
    pub fn unfence(&self, zone: &str) {
        if let Ok(mut fences) = self.writes.fences.write()
            && let Some(fence) = fences.get_mut(zone)
        {
            fence.token.clear();
            fence.lost.store(true, Ordering::Release);
        }
    }
}

impl RedisBus {
    /// The bus's shared connection, for a one-off read (never a consumer's blocking one).
    fn side_connection(&self) -> RedisConnection {
        self.shared.clone()
    }

    /// Up to `limit` entries of `zone`'s `stream` after `after` (from the start when `None`), in
    /// stream order, read with `XRANGE`: how recovery and `geppetto log export` read the world
    /// log, whatever the consumer groups have acknowledged.
    pub async fn read_range(
        &self,
        zone: &str,
        stream: StreamKind,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Delivery>, BusError> {
        let key = stream.key(zone);
        let mut connection = self.side_connection();
        let start = after.map_or_else(|| "-".to_owned(), |id| format!("({id}"));
        let reply: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
            .arg(&key)
            .arg(start)
            .arg("+")
            .arg("COUNT")
            .arg(limit.max(1))
            .query_async(&mut connection)
            .await
            .map_err(redis_error("XRANGE", &key))?;
        Ok(deliveries(reply.ids))
    }

    /// The entry of `zone`'s `stream` at `id`, if the stream holds it (`XRANGE id id`): what a
    /// snapshot's anchor is checked against.
    pub async fn read_at(
        &self,
        zone: &str,
        stream: StreamKind,
        id: &str,
    ) -> Result<Option<Delivery>, BusError> {
        let key = stream.key(zone);
        let mut connection = self.side_connection();
        let reply: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
            .arg(&key)
            .arg(id)
            .arg(id)
            .query_async(&mut connection)
            .await
            .map_err(redis_error("XRANGE", &key))?;
        Ok(deliveries(reply.ids)
            .into_iter()
            .find(|entry| entry.id == id))
    }

    /// How many entries were ever taken out of `zone`'s `stream` (trimmed or deleted):
    /// `XINFO STREAM`'s `entries-added` less its `length` (Redis 7 and later); `None` when the
    /// stream does not exist or the server does not say.
    pub async fn entries_removed(
        &self,
        zone: &str,
        stream: StreamKind,
    ) -> Result<Option<u64>, BusError> {
        let key = stream.key(zone);
        let mut connection = self.side_connection();
        let info: Result<HashMap<String, Value>, RedisError> = redis::cmd("XINFO")
            .arg("STREAM")
            .arg(&key)
            .query_async(&mut connection)
            .await;
        let count = |info: &HashMap<String, Value>, field: &str| {
            info.get(field)
                .and_then(|value| redis::from_redis_value::<u64>(value.clone()).ok())
        };
        match info {
            Ok(info) => Ok(count(&info, "entries-added")
                .zip(count(&info, "length"))
                .map(|(added, length)| added.saturating_sub(length))),
            Err(error) if error.to_string().contains("no such key") => Ok(None),
            Err(error) => Err(redis_error("XINFO STREAM", &key)(error)),
        }
    }

    /// `XINFO GROUPS` of `zone`'s `stream`: one map per group, empty when the stream does not
    /// exist yet.
    pub async fn groups(
        &self,
        zone: &str,
        stream: StreamKind,
    ) -> Result<Vec<HashMap<String, Value>>, BusError> {
        let key = stream.key(zone);
        let mut connection = self.side_connection();
        let groups: Result<Vec<HashMap<String, Value>>, RedisError> = redis::cmd("XINFO")
            .arg("GROUPS")
            .arg(&key)
            .query_async(&mut connection)
            .await;
        match groups {
            Ok(groups) => Ok(groups),
            // No stream yet: no group either.
            Err(error) if error.to_string().contains("no such key") => Ok(Vec::new()),
            Err(error) => Err(redis_error("XINFO GROUPS", &key)(error)),
        }
    }

    /// The last entry of `zone`'s `stream` that consumer group `group` has been given (its
    /// `last-delivered-id`), or `None` when the group does not exist yet.
    pub async fn delivered_up_to(
        &self,
        zone: &str,
        stream: StreamKind,
        group: &str,
    ) -> Result<Option<String>, BusError> {
        Ok(self
            .groups(zone, stream)
            .await?
            .into_iter()
            .find(|g| group_field::<String>(g, "name").as_deref() == Some(group))
            .and_then(|g| group_field(&g, "last-delivered-id")))
    }
}

/// A field of an `XINFO GROUPS` entry, when present and of type `T`.
pub fn group_field<T: redis::FromRedisValue>(
    group: &HashMap<String, Value>,
    field: &str,
) -> Option<T> {
    group
        .get(field)
        .and_then(|v| redis::from_redis_value_ref::<T>(v).ok())
}

/// Drains the outbound buffer: one pipeline per zone (its `XADD`s, or its fenced script); on a
/// Redis failure waits with backoff and retries the same zone's messages (the connection
/// reconnects underneath).
async fn write_loop(mut writer: Writer, mut receiver: mpsc::Receiver<Outbound>, writes: Writes) {
    let batch_max = writer.config.write_batch_messages.max(1);
    let mut batch = Vec::with_capacity(batch_max);
    while let Some(first) = receiver.recv().await {
        batch.push(first);
        while batch.len() < batch_max {
            match receiver.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let count = batch.len() as u64;
        // Messages of one zone stay in order; zones are written one after another.
        let mut by_zone: BTreeMap<String, Vec<Outbound>> = BTreeMap::new();
        for message in batch.drain(..) {
            by_zone
                .entry(message.zone.clone())
                .or_default()
                .push(message);
        }
        for (zone, mut messages) in by_zone {
            let fence = writes.fence(&zone);
            let mut attempt = 0;
            loop {
                let mut pipe = redis::pipe();
                let staged = writes.stage(
                    &mut pipe,
                    fence.as_ref(),
                    messages.iter().map(|m| (m.key.as_str(), m.body.as_str())),
                );
                let replies = if staged == Staged::FencedOff {
                    Ok(Vec::new())
                } else {
                    writer
                        .round_trip(async |connection| {
                            pipe.query_async::<Vec<Value>>(connection).await
                        })
                        .await
                };
                let settled = replies.and_then(|replies| {
                    writes
                        .settle(&zone, fence.as_ref(), staged, &replies, messages.len())
                        .map_err(|refused| {
                            messages.drain(..refused.written);
                            refused.error
                        })
                });
                match settled {
                    Ok(()) => {
                        if attempt > 0 {
                            tracing::info!(
                                zone,
                                failed_attempts = attempt,
                                "redis bus: Redis is back; writes resumed"
                            );
                        }
                        break;
                    }
                    Err(error) => {
                        tracing::warn!(%error, attempt, "redis bus: write failed; retrying");
                        tokio::time::sleep(backoff(&writer.config, attempt)).await;
                        attempt = attempt.saturating_add(1);
                    }
                }
            }
        }
        let counters = &writes.counters;
        counters.settled.fetch_add(count, Ordering::Release);
        counters.settled_notify.notify_waiters();
    }
}

/// The writer task's connection and settings.
struct Writer {
    target: RedisTarget,
    settings: SharedSettings,
    /// The connection, dropped after a failure or a reply that took too long and opened
    /// again on the next write: a connection that stopped answering (a paused process, a
    /// half-open socket) never wedges the writer.
    connection: Option<RedisConnection>,
    config: RedisBusConfig,
}

impl Writer {
    /// Runs one round trip on the writer's connection (opened if needed), bounded by the
    /// response timeout; after any failure the connection is dropped.
    async fn round_trip<T>(
        &mut self,
        send: impl AsyncFnOnce(&mut RedisConnection) -> Result<T, RedisError>,
    ) -> Result<T, RedisError> {
        if self.connection.is_none() {
            self.connection = Some(self.target.shared(self.settings).await?);
        }
        let Some(connection) = self.connection.as_mut() else {
            return Err(RedisError::from((redis::ErrorKind::Io, "no connection")));
        };
        let outcome =
            match tokio::time::timeout(self.settings.response_timeout, send(connection)).await {
                Ok(outcome) => outcome,
                Err(_) => Err(RedisError::from((
                    redis::ErrorKind::Io,
                    "no reply within the response timeout",
                ))),
            };
        if outcome.is_err() {
            self.connection = None;
        }
        outcome
    }
}

impl EventBus for RedisBus {
    fn publish(&self, zone: &str, stream: StreamKind, body: String) {
        let counters = &self.writes.counters;
        counters.accepted.fetch_add(1, Ordering::AcqRel);
        let message = Outbound {
            zone: zone.to_owned(),
            key: stream.key(zone),
            body,
        };
        if self.outbound.try_send(message).is_err() {
            counters.dropped.fetch_add(1, Ordering::Relaxed);
            counters.settled.fetch_add(1, Ordering::Release);
            counters.settled_notify.notify_waiters();
        }
    }

    fn consumer<'a>(
        &'a self,
        zone: &'a str,
        stream: StreamKind,
        group: &'a str,
        consumer: &'a str,
    ) -> BusFuture<'a, Box<dyn Consumer>> {
        Box::pin(async move {
            let reader = RedisConsumer::open(
                self.target.clone(),
                self.config.clone(),
                self.writes.clone(),
                zone,
                stream,
                group.to_owned(),
                consumer.to_owned(),
            )
            .await?;
            Ok(Box::new(reader) as Box<dyn Consumer>)
        })
    }

    fn flush(&self) -> BusFuture<'_, ()> {
        Box::pin(async move {
            let counters = &self.writes.counters;
            let target = counters.accepted.load(Ordering::Acquire);
            loop {
                let notified = counters.settled_notify.notified();
                if counters.settled.load(Ordering::Acquire) >= target {
                    return Ok(());
                }
                let _ = tokio::time::timeout(Duration::from_millis(50), notified).await;
            }
        })
    }

    fn stats(&self) -> BusStats {
        let counters = &self.writes.counters;
        BusStats {
            published: counters.accepted.load(Ordering::Relaxed),
            dropped: counters.dropped.load(Ordering::Relaxed),
            fenced: counters.fenced.load(Ordering::Relaxed),
            held_bytes: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let config = RedisBusConfig::default();
        let delays: Vec<u64> = (0..9)
            .map(|attempt| backoff(&config, attempt).as_millis() as u64)
            .collect();
        assert_eq!(delays, [50, 100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    }

    #[test]
    fn the_consumer_response_timeout_outlasts_its_block() {
        let config = RedisBusConfig::default();
        assert!(config.read_block_ms + config.response_timeout_margin_ms > config.read_block_ms);
        assert!(config.response_timeout_margin_ms > 0);
    }
}
