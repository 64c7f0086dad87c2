//! The event bus between geppetto and the game: the [`EventBus`] trait, the stream names of
//! docs/contract.md and the two implementations — [`memory::InProcessBus`] (the embedded default)
//! and [`redis::RedisBus`] (Redis Streams with consumer groups).
//!
//! Publishing never blocks a tick: each bus buffers a bounded number of messages and counts what
//! it has to drop. Reading is per consumer ([`Consumer`]), so each consumer loop owns its own
//! connection and a blocking read never stalls anything else; a zone loop writes its zone's
//! outputs through its consumer too, with its next read ([`Consumer::exchange`]). This module does not interpret
//! messages (see [`envelope`]).

pub mod envelope;
pub mod memory;
pub mod redis;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::Deserialize;

/// The future bus methods return.
pub type BusFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, BusError>> + Send + 'a>>;

geppetto_core::wire_enum! {
    /// The streams of one zone.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum StreamKind {
        /// World events in (and geppetto's own clock and governor records).
        World = "world",
        /// Intents out.
        Intents = "intents",
        /// Story signals out.
        Story = "story",
        /// LLM-written narration out.
        Narrative = "narrative",
        /// NPC lifecycle events out.
        NpcEvents = "npc_events",
        /// Refused world events, with the reason.
        Deadletter = "deadletter",
    }
}

impl StreamKind {
    /// The key of this stream for `zone`: `geppetto:{zone}:world` (a Redis Cluster hash tag keeps
    /// one zone's streams on one shard).
    pub fn key(self, zone: &str) -> String {
        format!("geppetto:{{{zone}}}:{}", self.as_str())
    }
}

/// One message handed to a consumer: its stream entry id and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// The stream entry id (acknowledge it when handled).
    pub id: String,
    /// The message text (empty when the bytes were not UTF-8).
    pub body: String,
    /// Where the message stopped being UTF-8, when it did: such a message is refused.
    pub utf8_error_at: Option<usize>,
}

impl Delivery {
    /// A delivery of a stream entry's raw bytes. Bytes that are not UTF-8 are not passed on as
    /// text — the body is empty, so every reader (the zone loop, recovery, replay) refuses the
    /// entry alike — and `utf8_error_at` says where they stopped being UTF-8.
    pub fn from_bytes(id: String, bytes: &[u8]) -> Self {
        Self::from_vec(id, bytes.to_vec())
    }

    /// [`Delivery::from_bytes`] of bytes the caller owns: valid UTF-8 becomes the body
    /// without a copy.
    pub fn from_vec(id: String, bytes: Vec<u8>) -> Self {
        match String::from_utf8(bytes) {
            Ok(body) => Self {
                id,
                body,
                utf8_error_at: None,
            },
            Err(error) => Self {
                id,
                body: String::new(),
                utf8_error_at: Some(error.utf8_error().valid_up_to()),
            },
        }
    }
}

/// Counters a bus keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BusStats {
    /// Messages accepted for publishing.
    pub published: u64,
    /// Messages dropped because a bounded buffer was full.
    pub dropped: u64,
    /// Messages not written because the zone's lease was no longer this instance's.
    pub fenced: u64,
    /// Bytes of the messages the bus keeps in this process: the in-process bus's streams, up
    /// to `[bus] memory_stream_capacity` messages each (0 over Redis, which keeps them).
    pub held_bytes: u64,
}

/// What went wrong talking to a bus.
#[derive(Debug, thiserror::Error)]
pub enum BusError {
    /// The Redis server failed or could not be reached.
    #[error("redis {operation} on {key}: {source}")]
    Redis {
        /// What was attempted.
        operation: &'static str,
        /// The stream key.
        key: String,
        /// The client's error.
        source: ::redis::RedisError,
    },
    /// A round trip got no reply in time; its connection was given up.
    #[error("redis {operation} on {key}: no reply within {after_ms} ms")]
    Timeout {
        /// What was attempted.
        operation: &'static str,
        /// The stream key.
        key: String,
        /// How long it waited, milliseconds.
        after_ms: u64,
    },
    /// The bus has been shut down.
    #[error("the bus is closed")]
    Closed,
    /// The bus config cannot be used (a secret or CA file that cannot be read).
    #[error("{0}")]
    Config(String),
}

/// Publishes and consumes zone streams.
pub trait EventBus: Send + Sync {
    /// Queues `body` for `stream` of `zone`. Never blocks: when the bounded buffer is full the
    /// message is dropped and counted.
    fn publish(&self, zone: &str, stream: StreamKind, body: String);

    /// A consumer of `stream` in consumer group `group` under the name `consumer`. A consumer
    /// that comes back under the same name first receives what it was given but never
    /// acknowledged.
    fn consumer<'a>(
        &'a self,
        zone: &'a str,
        stream: StreamKind,
        group: &'a str,
        consumer: &'a str,
    ) -> BusFuture<'a, Box<dyn Consumer>>;

    /// Waits until everything published so far has been written (or dropped).
    fn flush(&self) -> BusFuture<'_, ()>;

    /// Counters so far.
    fn stats(&self) -> BusStats;
}

/// Messages for the streams of one zone, in the order they are to be written: what a zone
/// loop sends with its next read ([`Consumer::exchange`]).
pub type Outgoing = Vec<(StreamKind, String)>;

/// One consumer loop's view of a stream.
pub trait Consumer: Send {
    /// Up to `max` messages, waiting at most `block` for the first.
    fn next_batch(&mut self, max: usize, block: Duration) -> BusFuture<'_, Vec<Delivery>>;

    /// Writes `outgoing` to the streams of this consumer's zone in order, acknowledges
    /// `handled`, then reads up to `max` messages, waiting at most `block` for the first: what a
    /// zone loop does between two batches, in one round trip where the bus allows it (on Redis
    /// one pipeline of the `XADD`s — or the fenced script — the `XACK` and the `XREADGROUP`, on
    /// the consumer's own connection). `outgoing` is emptied once its messages are written (or
    /// fenced off, counted in [`BusStats::fenced`]); what is still in it after a read — the
    /// server refused a write, or the read was one that claims entries — goes with the next
    /// one (keep adding to it, in order). On an error nothing is known written or
    /// acknowledged: the caller passes both again (a message may then be written twice, as any
    /// retried write may be; acknowledging twice is harmless).
    fn exchange<'a>(
        &'a mut self,
        outgoing: &'a mut Outgoing,
        handled: &'a [String],
        max: usize,
        block: Duration,
    ) -> BusFuture<'a, Vec<Delivery>>;

    /// Writes `outgoing` and acknowledges `handled` without reading, as
    /// [`Consumer::exchange`] does: what a zone loop does before a snapshot (which covers only
    /// outputs already written) and when it stops.
    fn write_and_ack<'a>(
        &'a mut self,
        outgoing: &'a mut Outgoing,
        handled: &'a [String],
    ) -> BusFuture<'a, ()>;

    /// Acknowledges handled messages.
    fn ack<'a>(&'a mut self, ids: &'a [String]) -> BusFuture<'a, ()> {
        Box::pin(async move { self.write_and_ack(&mut Outgoing::new(), ids).await })
    }

    /// Acknowledges `handled`, then reads (an [`Consumer::exchange`] with nothing to write).
    fn ack_and_next_batch<'a>(
        &'a mut self,
        handled: &'a [String],
        max: usize,
        block: Duration,
    ) -> BusFuture<'a, Vec<Delivery>> {
        Box::pin(async move {
            self.exchange(&mut Outgoing::new(), handled, max, block)
                .await
        })
    }

    /// After recovery replayed the log up to `id` itself: deliver only what comes after it,
    /// and settle everything up to it (acknowledged, whoever it was pending with). The
    /// in-process bus starts empty with each process, so it has nothing to settle.
    fn resume_after<'a>(&'a mut self, id: &'a str) -> BusFuture<'a, ()> {
        let _ = id;
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_use_a_cluster_hash_tag() {
        assert_eq!(StreamKind::World.key("village"), "geppetto:{village}:world");
        assert_eq!(StreamKind::NpcEvents.key("v"), "geppetto:{v}:npc_events");
    }
}

/// Consumer settings (`[consumer]` in `geppetto.toml`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ConsumerConfig {
    /// Consumer group name.
    pub group: String,
    /// This instance's consumer name (keep it stable across restarts to resume pending work).
    pub name: String,
    /// World messages read per batch at most.
    pub batch_max_messages: usize,
    /// World messages read per batch at most while the zone is behind: after a read that came
    /// back full the next asks for twice as many, up to this, and once one comes back short
    /// the batch is `batch_max_messages` again (a zone behind its stream catches up in fewer
    /// round trips instead of staying behind by as much). Default 4096; below
    /// `batch_max_messages` it is `batch_max_messages`.
    pub batch_max_messages_behind: usize,
    /// How long a read waits for the first message, milliseconds.
    pub block_ms: u64,
    /// Pause after a failed read before retrying, milliseconds.
    pub retry_pause_ms: u64,
    /// What one world message may be (`[consumer.limits]`); a message over a limit is
    /// dead-lettered naming it.
    pub limits: envelope::EnvelopeLimits,
}

impl Default for ConsumerConfig {
    fn default() -> Self {
        Self {
            group: "geppetto".into(),
            name: "geppetto-1".into(),
            batch_max_messages: 256,
            batch_max_messages_behind: 4096,
            block_ms: 200,
            retry_pause_ms: 200,
            limits: envelope::EnvelopeLimits::default(),
        }
    }
}
