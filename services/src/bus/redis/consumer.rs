//! One reader of a stream in a consumer group on Redis: its own connection (a blocking
//! `XREADGROUP` would stall every other command on a shared one), opened again with backoff
//! after a failure; on start it first re-reads what it was given and never acknowledged, then
//! new entries, and it claims entries a dead consumer left pending (`XAUTOCLAIM`). Between two
//! batches a consumer loop acknowledges the last one and reads the next in one pipeline.

use std::time::Duration;

use geppetto_storage::{RedisConnection, RedisTarget};
use redis::streams::{
    StreamAutoClaimOptions, StreamAutoClaimReply, StreamReadOptions, StreamReadReply,
};
use redis::{RedisError, Value};

use super::{BODY_FIELD, RedisBusConfig, SETTLE_PAGE, backoff, redis_error};
use crate::bus::{BusError, BusFuture, Consumer, Delivery};

pub(super) struct RedisConsumer {
    target: RedisTarget,
    config: RedisBusConfig,
    key: String,
    group: String,
    name: String,
    connection: Option<RedisConnection>,
    /// On start, first re-read what this consumer was given and never acknowledged.
    reading_own_pending: bool,
    reads: u32,
    failures: u32,
}

impl RedisConsumer {
    /// A connected consumer of `key` in `group` under the name `name`; the group is created
    /// (with the stream) if it does not exist yet.
    pub(super) async fn open(
        target: RedisTarget,
        config: RedisBusConfig,
        key: String,
        group: String,
        name: String,
    ) -> Result<Self, BusError> {
        let mut reader = Self {
            target,
            config,
            key,
            group,
            name,
            connection: None,
            reading_own_pending: true,
            reads: 0,
            failures: 0,
        };
        let (key, group) = (reader.key.clone(), reader.group.clone());
        let connection = reader.connection().await?;
        let created: Result<(), RedisError> = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(&key)
            .arg(&group)
            .arg("0")
            .arg("MKSTREAM")
            .query_async(connection)
            .await;
        match created {
            Ok(()) => Ok(reader),
            Err(error) if error.to_string().contains("BUSYGROUP") => Ok(reader),
            Err(error) => Err(redis_error("XGROUP CREATE", &reader.key)(error)),
        }
    }

    /// This consumer's own connection, (re)opened with backoff after a failure.
    async fn connection(&mut self) -> Result<&mut RedisConnection, BusError> {
        if self.connection.is_none() {
            if self.failures > 0 {
                tokio::time::sleep(backoff(&self.config, self.failures - 1)).await;
            }
            let timeout = Duration::from_millis(
                self.config.read_block_ms + self.config.response_timeout_margin_ms,
            );
            match self.target.dedicated(timeout).await {
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

    /// Acknowledges `handled`, then reads: one round trip (an `XACK` and an `XREADGROUP` in one
    /// pipeline) unless this read claims or re-reads this consumer's own pending entries, when
    /// the acknowledgement goes first on its own.
    async fn read(
        &mut self,
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
            self.acknowledge(handled).await?;
            handled = &[];
        }
        if claim_due {
            let (key, group, name, idle) = (
                self.key.clone(),
                self.group.clone(),
                self.name.clone(),
                self.config.claim_min_idle_ms,
            );
            let connection = self.connection().await?;
            let reply: Result<StreamAutoClaimReply, RedisError> = redis::cmd("XAUTOCLAIM")
                .arg(&key)
                .arg(&group)
                .arg(&name)
                .arg(idle)
                .arg("0-0")
                .arg(StreamAutoClaimOptions::default().count(max))
                .query_async(connection)
                .await;
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
        let (key, group) = (self.key.clone(), self.group.clone());
        let connection = self.connection().await?;
        let mut read = redis::cmd("XREADGROUP");
        read.arg(&options).arg("STREAMS").arg(&key).arg(from);
        let reply: Result<Option<StreamReadReply>, RedisError> = if handled.is_empty() {
            read.query_async(connection).await
        } else {
            let mut pipe = redis::pipe();
            pipe.cmd("XACK").arg(&key).arg(&group).arg(handled).ignore();
            pipe.add_command(read);
            pipe.query_async::<(Option<StreamReadReply>,)>(connection)
                .await
                .map(|(reply,)| reply)
        };
        let reply = match reply {
            Ok(reply) => reply,
            Err(error) => return Err(self.failed("XACK + XREADGROUP", error)),
        };
        self.failures = 0;
        let entries: Vec<_> = reply
            .map(|r| r.keys.into_iter().flat_map(|k| k.ids).collect())
            .unwrap_or_default();
        if self.reading_own_pending && entries.is_empty() {
            self.reading_own_pending = false;
            return Box::pin(self.read(&[], max, block)).await;
        }
        Ok(deliveries(entries))
    }

    /// `XACK`s `ids` on their own (nothing to do for none).
    async fn acknowledge(&mut self, ids: &[String]) -> Result<(), BusError> {
        if ids.is_empty() {
            return Ok(());
        }
        let (key, group) = (self.key.clone(), self.group.clone());
        let connection = self.connection().await?;
        let acked: Result<u64, RedisError> = redis::cmd("XACK")
            .arg(&key)
            .arg(&group)
            .arg(ids)
            .query_async(connection)
            .await;
        acked
            .map(|_| ())
            .map_err(|error| self.failed("XACK", error))
    }
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
        Box::pin(self.read(&[], max.max(1), block))
    }

    fn ack<'a>(&'a mut self, ids: &'a [String]) -> BusFuture<'a, ()> {
        Box::pin(self.acknowledge(ids))
    }

    fn ack_and_next_batch<'a>(
        &'a mut self,
        handled: &'a [String],
        max: usize,
        block: Duration,
    ) -> BusFuture<'a, Vec<Delivery>> {
        Box::pin(self.read(handled, max.max(1), block))
    }

    fn resume_after<'a>(&'a mut self, id: &'a str) -> BusFuture<'a, ()> {
        Box::pin(async move {
            let (key, group) = (self.key.clone(), self.group.clone());
            let connection = self.connection().await?;
            let set: Result<(), RedisError> = redis::cmd("XGROUP")
                .arg("SETID")
                .arg(&key)
                .arg(&group)
                .arg(id)
                .query_async(connection)
                .await;
            if let Err(error) = set {
                return Err(self.failed("XGROUP SETID", error));
            }
            loop {
                let connection = self.connection().await?;
                let pending: Result<Vec<(String, String, u64, u64)>, RedisError> =
                    redis::cmd("XPENDING")
                        .arg(&key)
                        .arg(&group)
                        .arg("-")
                        .arg(id)
                        .arg(SETTLE_PAGE)
                        .query_async(connection)
                        .await;
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
