//! One reader of a stream in a consumer group on Redis: its own connection (a blocking
//! `XREADGROUP` would stall every other command on a shared one), opened again with backoff
//! after a failure; on start it first re-reads what it was given and never acknowledged, then
//! new entries, and it claims entries a dead consumer left pending (`XAUTOCLAIM`). Between two
//! batches a consumer loop writes what it has for its zone's streams, acknowledges the last
//! batch and reads the next in one pipeline ([`Consumer::exchange`]).

use std::time::Duration;

use geppetto_redis_target::{RedisConnection, RedisTarget};
use redis::streams::{StreamAutoClaimOptions, StreamAutoClaimReply, StreamReadOptions};
use redis::{FromRedisValue, RedisError, Value};

use super::raw::RawConnection;

use super::{
    BODY_FIELD, Fence, RedisBusConfig, Refused, SETTLE_PAGE, Staged, Writes, backoff, redis_error,
};
use crate::bus::{BusError, BusFuture, Consumer, Delivery, Outgoing, StreamKind};

pub(super) struct RedisConsumer {
    target: RedisTarget,
    config: RedisBusConfig,
    /// How this consumer writes its zone's messages.
    writes: Writes,
    zone: String,
    /// The key of each of the zone's streams.
    keys: Vec<(StreamKind, String)>,
    /// The key of the stream it reads.
    key: String,
    group: String,
    name: String,
    connection: Option<Link>,
    /// On start, first re-read what this consumer was given and never acknowledged.
    reading_own_pending: bool,
    reads: u32,
    failures: u32,
    /// Round trips in a row whose writes the server refused.
    refused_writes: u32,
}

impl RedisConsumer {
    /// A connected consumer of `key` in `group` under the name `name`; the group is created
    /// (with the stream) if it does not exist yet.
    pub(super) async fn open(
        target: RedisTarget,
        config: RedisBusConfig,
        writes: Writes,
        zone: &str,
        stream: StreamKind,
        group: String,
        name: String,
    ) -> Result<Self, BusError> {
        let mut reader = Self {
            target,
            config,
            writes,
            zone: zone.to_owned(),
            keys: StreamKind::VARIANTS
                .iter()
                .map(|&kind| (kind, kind.key(zone)))
                .collect(),
            key: stream.key(zone),
            group,
            name,
            connection: None,
            reading_own_pending: true,
            reads: 0,
            failures: 0,
            refused_writes: 0,
        };
        let (key, group) = (reader.key.clone(), reader.group.clone());
        let mut create = redis::cmd("XGROUP");
        create
            .arg("CREATE")
            .arg(&key)
            .arg(&group)
            .arg("0")
            .arg("MKSTREAM");
        let created: Result<(), RedisError> = reader.connection().await?.query(create).await;
        match created {
            Ok(()) => Ok(reader),
            Err(error) if error.to_string().contains("BUSYGROUP") => Ok(reader),
            Err(error) => Err(redis_error("XGROUP CREATE", &reader.key)(error)),
        }
    }

    /// This consumer's own connection, (re)opened with backoff after a failure: one read here
    /// ([`RawConnection`]) when the target is a server it can reach, else redis-rs's.
    async fn connection(&mut self) -> Result<&mut Link, BusError> {
        if self.connection.is_none() {
            if self.failures > 0 {
                tokio::time::sleep(backoff(&self.config, self.failures - 1)).await;
            }
            let timeout = Duration::from_millis(
                self.config.read_block_ms + self.config.response_timeout_margin_ms,
            );
            match Link::open(&self.target, timeout, &self.config).await {
                Ok(connection) => self.connection = Some(connection),
                Err(error) => {
                    self.failures = self.failures.saturating_add(1);
                    return Err(redis_error("connect", &self.key)(error));
                }
            }
        }
        self.connection.as_mut().ok_or(BusError::Closed)
    }

    fn failed(&mut self, operation: &'static str, error: RedisError) -> BusError {
        self.connection = None;
        self.failures = self.failures.saturating_add(1);
        redis_error(operation, &self.key)(error)
    }

    /// How long a round trip that blocks its read for `block` may wait for its reply: the
    /// block (at least the configured `read_block_ms`) plus `response_timeout_margin_ms`.
    fn reply_deadline(&self, block: Duration) -> Duration {
        let block = block.max(Duration::from_millis(self.config.read_block_ms));
        block + Duration::from_millis(self.config.response_timeout_margin_ms)
    }

    /// A round trip that got no reply within `deadline`: the connection is given up whatever
    /// state its client is in (a process paused past its server's patience can leave a
    /// request that is never answered nor timed out), and the next one opens a fresh one.
    fn stalled(&mut self, operation: &'static str, deadline: Duration) -> BusError {
        tracing::warn!(zone = %self.zone, operation, deadline_ms = deadline.as_millis() as u64, "redis bus: no reply in time; the connection is opened afresh");
        self.connection = None;
        self.failures = self.failures.saturating_add(1);
        BusError::Timeout {
            operation,
            key: self.key.clone(),
            after_ms: u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// The key of `stream` of this consumer's zone.
    fn key_of(&self, stream: StreamKind) -> &str {
        self.keys
            .iter()
            .find(|(kind, _)| *kind == stream)
            .map_or("", |(_, key)| key)
    }

    /// Adds `outgoing`'s writes to `pipe` (see [`Writes::stage`]).
    fn stage(
        &self,
        pipe: &mut redis::Pipeline,
        fence: Option<&Fence>,
        outgoing: &Outgoing,
    ) -> Staged {
        self.writes.stage(
            pipe,
            fence,
            outgoing
                .iter()
                .map(|(stream, body)| (self.key_of(*stream), body.as_str())),
        )
    }

    /// After the round trip that carried `outgoing` staged as `staged` (`replies`: the writes'
    /// replies): counts it and empties it; when the server refused a write, keeps what is not
    /// known written for the next round trip — its oldest messages beyond the outbound bound
    /// dropped and counted — and answers the server's error.
    fn settle(
        &mut self,
        outgoing: &mut Outgoing,
        fence: Option<&Fence>,
        staged: Staged,
        replies: &[Value],
    ) -> Result<(), RedisError> {
        if outgoing.is_empty() {
            return Ok(());
        }
        let counters = &self.writes.counters;
        match self
            .writes
            .settle(&self.zone, fence, staged, replies, outgoing.len())
        {
            Ok(()) => {
                counters.settled_directly(outgoing.len(), 0);
                outgoing.clear();
                if self.refused_writes > 0 {
                    tracing::info!(zone = %self.zone, refused_round_trips = self.refused_writes, "redis bus: the zone's writes are accepted again");
                    self.refused_writes = 0;
                }
                Ok(())
            }
            Err(Refused { error, written }) => {
                outgoing.drain(..written);
                let excess = outgoing
                    .len()
                    .saturating_sub(self.config.outbound_buffer_messages.max(1));
                outgoing.drain(..excess);
                counters.settled_directly(written, excess);
                if self.refused_writes == 0 {
                    tracing::warn!(zone = %self.zone, %error, "redis bus: the server refused the zone's writes; they go again with the next round trip");
                }
                self.refused_writes = self.refused_writes.saturating_add(1);
                Err(error)
            }
        }
    }

    /// Writes `outgoing`, acknowledges `handled`, then reads: one round trip (the writes, an
    /// `XACK` and an `XREADGROUP` in one pipeline) unless this read claims or re-reads this
    /// consumer's own pending entries, when the acknowledgement goes first on its own (and
    /// what a claim delivers comes back before `outgoing` is written: it goes with the next
    /// read). A write the server refuses stays in `outgoing` and the read goes on.
    async fn read(
        &mut self,
        outgoing: &mut Outgoing,
        handled: &[String],
        max: usize,
        block: Duration,
    ) -> Result<Vec<Delivery>, BusError> {
        self.reads = self.reads.wrapping_add(1).max(1);
        // The first read and every `claim_every_reads`-th after it.
        let claim_due = self.config.claim_every_reads > 0
            && (self.reads - 1).is_multiple_of(self.config.claim_every_reads);
        let mut handled = handled;
        if claim_due || self.reading_own_pending {
            self.write_and_acknowledge(&mut Outgoing::new(), handled)
                .await?;
            handled = &[];
        }
        if claim_due {
            let (key, group, name, idle) = (
                self.key.clone(),
                self.group.clone(),
                self.name.clone(),
                self.config.claim_min_idle_ms,
            );
            let mut claim = redis::cmd("XAUTOCLAIM");
            claim
                .arg(&key)
                .arg(&group)
                .arg(&name)
                .arg(idle)
                .arg("0-0")
                .arg(StreamAutoClaimOptions::default().count(max));
            let reply: Result<StreamAutoClaimReply, RedisError> =
                self.connection().await?.query(claim).await;
            match reply {
                Ok(reply) if !reply.claimed.is_empty() => {
                    return Ok(deliveries(reply.claimed));
                }
                Ok(_) => {}
                Err(error) => return Err(self.failed("XAUTOCLAIM", error)),
            }
        }
        let from = if self.reading_own_pending { "0" } else { ">" };
        let mut options = StreamReadOptions::default()
            .group(&self.group, &self.name)
            .count(max);
        if !self.reading_own_pending && !block.is_zero() {
            options = options.block(usize::try_from(block.as_millis()).unwrap_or(usize::MAX));
        }
        let (mut pipe, fence, staged) = self.writes_and_ack(outgoing, handled);
        pipe.cmd("XREADGROUP")
            .arg(&options)
            .arg("STREAMS")
            .arg(&self.key)
            .arg(from);
        let deadline = self.reply_deadline(block);
        let connection = self.connection().await?;
        let reply = tokio::time::timeout(deadline, connection.pipeline_read(&pipe));
        let (mut replies, read) = match reply.await {
            Ok(Ok(replies)) => replies,
            Ok(Err(error)) => return Err(self.failed("XADD + XACK + XREADGROUP", error)),
            Err(_) => return Err(self.stalled("XADD + XACK + XREADGROUP", deadline)),
        };
        self.failures = 0;
        let ack = ack_reply(&mut replies, handled);
        // A refused write stays in `outgoing` for the next round trip; the read goes on (what
        // it delivered is handed over, not left pending).
        let _ = self.settle(outgoing, fence.as_ref(), staged, &replies);
        if let Err(error) = ack.extract_error() {
            return Err(self.failed("XACK", error));
        }
        let entries = match read {
            Ok(entries) => entries,
            Err(error) => return Err(self.failed("XREADGROUP", error)),
        };
        if self.reading_own_pending && entries.is_empty() {
            self.reading_own_pending = false;
            return Box::pin(self.read(outgoing, &[], max, block)).await;
        }
        Ok(entries)
    }

    /// A pipeline of `outgoing`'s writes then an `XACK` of `handled` (when there are any), with
    /// the fence and the way the writes were staged.
    fn writes_and_ack(
        &self,
        outgoing: &Outgoing,
        handled: &[String],
    ) -> (redis::Pipeline, Option<Fence>, Staged) {
        let fence = self.fence_for(outgoing);
        let mut pipe = redis::pipe();
        let staged = self.stage(&mut pipe, fence.as_ref(), outgoing);
        if !handled.is_empty() {
            pipe.cmd("XACK")
                .arg(&self.key)
                .arg(&self.group)
                .arg(handled);
        }
        (pipe, fence, staged)
    }

    /// The fence `outgoing` is written under (none needed when there is nothing to write).
    fn fence_for(&self, outgoing: &Outgoing) -> Option<Fence> {
        if outgoing.is_empty() {
            None
        } else {
            self.writes.fence(&self.zone)
        }
    }

    /// Writes `outgoing` and `XACK`s `handled` in one pipeline (nothing to do for neither).
    async fn write_and_acknowledge(
        &mut self,
        outgoing: &mut Outgoing,
        handled: &[String],
    ) -> Result<(), BusError> {
        let (pipe, fence, staged) = self.writes_and_ack(outgoing, handled);
        if pipe.is_empty() {
            return Ok(());
        }
        let deadline = self.reply_deadline(Duration::ZERO);
        let connection = self.connection().await?;
        let reply = tokio::time::timeout(deadline, connection.pipeline(&pipe));
        let mut replies = match reply.await {
            Ok(Ok(replies)) => replies,
            Ok(Err(error)) => return Err(self.failed("XADD + XACK", error)),
            Err(_) => return Err(self.stalled("XADD + XACK", deadline)),
        };
        let ack = ack_reply(&mut replies, handled);
        self.settle(outgoing, fence.as_ref(), staged, &replies)
            .map_err(redis_error("XADD", &self.key))?;
        ack.extract_error()
            .map(|_| ())
            .map_err(redis_error("XACK", &self.key))
    }
}

/// A consumer's connection: read here ([`RawConnection`]) or by redis-rs.
pub(super) enum Link {
    Raw(Box<RawConnection>),
    Redis(RedisConnection),
}

impl Link {
    /// A connection to `target`, read here when [`RawConnection::open`] can.
    async fn open(
        target: &RedisTarget,
        timeout: Duration,
        config: &RedisBusConfig,
    ) -> Result<Self, RedisError> {
        if let RedisTarget::Server(client) = target {
            let connect = Duration::from_millis(config.reconnect_backoff_max_ms.max(1));
            let info = client.get_connection_info();
            if let Some(raw) = RawConnection::open(info, connect, timeout).await? {
                return Ok(Self::Raw(Box::new(raw)));
            }
        }
        Ok(Self::Redis(target.dedicated(timeout).await?))
    }

    /// One command's reply as a `T` (a server's error as the error), waited for at most the
    /// connection's response timeout.
    async fn query<T: FromRedisValue>(&mut self, command: redis::Cmd) -> Result<T, RedisError> {
        match self {
            Self::Raw(raw) => {
                let reply = raw.command(command).await?;
                Ok(redis::from_redis_value(reply.extract_error()?)?)
            }
            Self::Redis(connection) => command.query_async(connection).await,
        }
    }

    /// Every reply of `pipe` (which ignores errors: a server's error in its place).
    async fn pipeline(&mut self, pipe: &redis::Pipeline) -> Result<Vec<Value>, RedisError> {
        match self {
            Self::Raw(raw) => raw.round_trip(pipe).await,
            Self::Redis(connection) => pipe.query_async(connection).await,
        }
    }

    /// The replies of `pipe` but its last, an `XREADGROUP`, and the entries that read.
    async fn pipeline_read(
        &mut self,
        pipe: &redis::Pipeline,
    ) -> Result<(Vec<Value>, Result<Vec<Delivery>, RedisError>), RedisError> {
        match self {
            Self::Raw(raw) => raw.round_trip_read(pipe).await,
            Self::Redis(connection) => {
                let mut replies: Vec<Value> = pipe.query_async(connection).await?;
                let read = read_reply(replies.pop().unwrap_or(Value::Nil));
                Ok((replies, read))
            }
        }
    }
}

/// The `XACK`'s reply, the last of `replies` when `handled` was acknowledged ([`Value::Okay`]
/// when there was nothing to acknowledge).
fn ack_reply(replies: &mut Vec<Value>, handled: &[String]) -> Value {
    if handled.is_empty() {
        Value::Okay
    } else {
        replies.pop().unwrap_or(Value::Nil)
    }
}

/// The entries of an `XREADGROUP` reply, taken apart in place: no map per entry, each body
/// moved out of the reply rather than copied. The reply is nil (nothing came) or the streams
/// read — an array of `[key, entries]` (RESP2) or a map of key to entries (RESP3) — each entry
/// `[id, fields]`, its fields nil when the entry was deleted since it was delivered. A body is
/// the last value of the field [`BODY_FIELD`] (empty when there is none), as [`deliveries`]
/// reads it.
pub(super) fn read_reply(reply: Value) -> Result<Vec<Delivery>, RedisError> {
    let unexpected = |what: &str| {
        RedisError::from((
            redis::ErrorKind::Parse,
            "unexpected XREADGROUP reply",
            what.to_owned(),
        ))
    };
    let streams: Vec<Value> = match reply {
        Value::Nil => return Ok(Vec::new()),
        Value::Array(streams) => streams
            .into_iter()
            .map(|stream| match stream {
                Value::Array(mut key_and_entries) if key_and_entries.len() == 2 => {
                    key_and_entries.pop().unwrap_or(Value::Nil)
                }
                _ => Value::Nil,
            })
            .collect(),
        Value::Map(streams) => streams.into_iter().map(|(_, entries)| entries).collect(),
        _ => return Err(unexpected("neither nil, an array nor a map")),
    };
    let mut read = Vec::new();
    for entries in streams {
        let Value::Array(entries) = entries else {
            return Err(unexpected("a stream without its entries"));
        };
        read.reserve(entries.len());
        for entry in entries {
            let Value::Array(mut id_and_fields) = entry else {
                return Err(unexpected("an entry that is not an array"));
            };
            let (Some(fields), Some(id), true) = (
                id_and_fields.pop(),
                id_and_fields.pop(),
                id_and_fields.is_empty(),
            ) else {
                return Err(unexpected("an entry that is not [id, fields]"));
            };
            let id = match id {
                Value::BulkString(bytes) => {
                    String::from_utf8(bytes).map_err(|_| unexpected("an id that is not UTF-8"))?
                }
                Value::SimpleString(id) => id,
                _ => return Err(unexpected("an id that is not a string")),
            };
            let mut body = Vec::new();
            match fields {
                Value::Nil => {}
                Value::Array(fields) => {
                    let mut fields = fields.into_iter();
                    while let (Some(name), Some(value)) = (fields.next(), fields.next()) {
                        let is_body = match &name {
                            Value::BulkString(name) => name == BODY_FIELD.as_bytes(),
                            Value::SimpleString(name) => name == BODY_FIELD,
                            _ => false,
                        };
                        if is_body {
                            body = match value {
                                Value::BulkString(bytes) => bytes,
                                Value::SimpleString(text) => text.into_bytes(),
                                _ => Vec::new(),
                            };
                        }
                    }
                }
                _ => return Err(unexpected("fields that are not an array")),
            }
            read.push(Delivery::from_vec(id, body));
        }
    }
    Ok(read)
}

pub(super) fn deliveries(entries: Vec<redis::streams::StreamId>) -> Vec<Delivery> {
    entries
        .into_iter()
        .map(|entry| match entry.map.get(BODY_FIELD) {
            Some(Value::BulkString(bytes)) => Delivery::from_bytes(entry.id, bytes),
            Some(Value::SimpleString(text)) => Delivery::from_bytes(entry.id, text.as_bytes()),
            _ => Delivery::from_bytes(entry.id, &[]),
        })
        .collect()
}

impl Consumer for RedisConsumer {
    fn next_batch(&mut self, max: usize, block: Duration) -> BusFuture<'_, Vec<Delivery>> {
        Box::pin(async move {
            self.read(&mut Outgoing::new(), &[], max.max(1), block)
                .await
        })
    }

    fn exchange<'a>(
        &'a mut self,
        outgoing: &'a mut Outgoing,
        handled: &'a [String],
        max: usize,
        block: Duration,
    ) -> BusFuture<'a, Vec<Delivery>> {
        Box::pin(self.read(outgoing, handled, max.max(1), block))
    }

    fn write_and_ack<'a>(
        &'a mut self,
        outgoing: &'a mut Outgoing,
        handled: &'a [String],
    ) -> BusFuture<'a, ()> {
        Box::pin(self.write_and_acknowledge(outgoing, handled))
    }

    fn resume_after<'a>(&'a mut self, id: &'a str) -> BusFuture<'a, ()> {
        Box::pin(async move {
            let (key, group) = (self.key.clone(), self.group.clone());
            let mut set_id = redis::cmd("XGROUP");
            set_id.arg("SETID").arg(&key).arg(&group).arg(id);
            let set: Result<(), RedisError> = self.connection().await?.query(set_id).await;
            if let Err(error) = set {
                return Err(self.failed("XGROUP SETID", error));
            }
            loop {
                let mut list = redis::cmd("XPENDING");
                list.arg(&key).arg(&group).arg("-").arg(id).arg(SETTLE_PAGE);
                let pending: Result<Vec<(String, String, u64, u64)>, RedisError> =
                    self.connection().await?.query(list).await;
                let ids: Vec<String> = match pending {
                    Ok(entries) => entries.into_iter().map(|(id, ..)| id).collect(),
                    Err(error) => return Err(self.failed("XPENDING", error)),
                };
                if ids.is_empty() {
                    break;
                }
                self.ack(&ids).await?;
            }
            // What this consumer had pending is settled: read new entries only.
            self.reading_own_pending = false;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(text: &[u8]) -> Value {
        Value::BulkString(text.to_vec())
    }

    fn entry(id: &str, fields: Value) -> Value {
        Value::Array(vec![bulk(id.as_bytes()), fields])
    }

    /// What the general parse of the same reply gives.
    fn general(reply: Value) -> Vec<Delivery> {
        let reply: Option<redis::streams::StreamReadReply> =
            redis::from_redis_value(reply).expect("a reply redis-rs reads");
        deliveries(
            reply
                .map(|r| r.keys.into_iter().flat_map(|k| k.ids).collect())
                .unwrap_or_default(),
        )
    }

    #[test]
    fn a_read_reply_is_taken_apart_as_the_general_parse_reads_it() {
        let entries = Value::Array(vec![
            entry(
                "1-0",
                Value::Array(vec![bulk(b"m"), bulk(b"hello"), bulk(b"i"), bulk(b"a")]),
            ),
            // Deleted since it was delivered.
            entry("2-0", Value::Nil),
            entry("3-0", Value::Array(vec![bulk(b"m"), bulk(b"ok \xff")])),
            entry("4-0", Value::Array(vec![bulk(b"x"), bulk(b"no body")])),
            entry(
                "5-0",
                Value::Array(vec![bulk(b"m"), bulk(b"first"), bulk(b"m"), bulk(b"last")]),
            ),
        ]);
        let reply = Value::Array(vec![Value::Array(vec![
            bulk(b"geppetto:{z}:world"),
            entries,
        ])]);
        let read = read_reply(reply.clone()).expect("read");
        assert_eq!(read, general(reply));
        let bodies: Vec<_> = read.iter().map(|d| d.body.as_str()).collect();
        assert_eq!(bodies, ["hello", "", "", "", "last"]);
        assert_eq!(read[2].utf8_error_at, Some(3));
        assert!(read_reply(Value::Nil).expect("nil").is_empty());
    }

    #[test]
    fn a_resp3_read_reply_is_read_and_a_malformed_one_refused() {
        let entries = Value::Array(vec![entry(
            "1-0",
            Value::Array(vec![bulk(b"m"), bulk(b"hello")]),
        )]);
        let map = Value::Map(vec![(bulk(b"geppetto:{z}:world"), entries)]);
        let read = read_reply(map).expect("read");
        assert_eq!(
            (read[0].id.as_str(), read[0].body.as_str()),
            ("1-0", "hello")
        );
        for malformed in [
            Value::Int(1),
            Value::Array(vec![Value::Int(1)]),
            Value::Array(vec![Value::Array(vec![
                bulk(b"k"),
                Value::Array(vec![Value::Array(vec![bulk(b"1-0")])]),
            ])]),
        ] {
            let error = read_reply(malformed).expect_err("refused");
            assert!(
                error.to_string().contains("unexpected XREADGROUP reply"),
                "{error}"
            );
        }
    }
}
