//! The in-process bus, the embedded default: one bounded log per zone stream in memory, with
//! consumer-group cursors, so the embedded service and the demo run with no external server.
//!
//! A stream holds at most `capacity` messages; publishing to a full stream trims its oldest
//! message (the same bound `MAXLEN` gives on Redis), and counts it as dropped when a consumer
//! group of the stream had not read it yet (trimming what every reader has seen loses
//! nothing; a stream nobody reads is only retention). Delivery is at most
//! once per group within the process (acks are accepted and ignored): the in-process bus does
//! not survive a restart, so there is nothing to redeliver.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;

use super::{BusFuture, BusStats, Consumer, Delivery, EventBus, Outgoing, StreamKind};

/// Default bound of each in-process stream, in messages.
pub const DEFAULT_STREAM_CAPACITY: usize = 100_000;

#[derive(Default)]
struct Stream {
    /// Sequence of the first message in `messages`.
    first: u64,
    messages: VecDeque<Arc<str>>,
    /// Next-unread sequence per group.
    cursors: BTreeMap<String, u64>,
}

struct Inner {
    // A std Mutex: it is never held across an await.
    streams: Mutex<BTreeMap<(String, StreamKind), Stream>>,
    notify: Notify,
    capacity: usize,
    published: AtomicU64,
    dropped: AtomicU64,
    /// Bytes of the messages the streams hold.
    held_bytes: AtomicU64,
}

/// The in-process bus. Cloning shares the same streams.
#[derive(Clone)]
pub struct InProcessBus {
    inner: Arc<Inner>,
}

impl InProcessBus {
    /// A bus whose streams each keep at most `capacity` messages (at least 1).
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                streams: Mutex::new(BTreeMap::new()),
                notify: Notify::new(),
                capacity: capacity.max(1),
                published: AtomicU64::new(0),
                dropped: AtomicU64::new(0),
                held_bytes: AtomicU64::new(0),
            }),
        }
    }

    /// Every message currently held in `stream` of `zone`, oldest first (for tests and tools).
    pub fn snapshot(&self, zone: &str, stream: StreamKind) -> Vec<String> {
        self.inner
            .lock()
            .get(&(zone.to_owned(), stream))
            .map(|s| s.messages.iter().map(|m| m.to_string()).collect())
            .unwrap_or_default()
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<(String, StreamKind), Stream>> {
        // A panic while holding the lock leaves plain data behind: keep using it.
        self.streams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Inner {
    /// Appends `body` to `stream` of `zone`, trimming (and counting) as the module says.
    fn publish(&self, zone: &str, stream: StreamKind, body: String) {
        {
            let mut streams = self.lock();
            let entry = streams.entry((zone.to_owned(), stream)).or_default();
            if entry.messages.len() >= self.capacity {
                let trimmed = entry.first;
                if let Some(oldest) = entry.messages.pop_front() {
                    self.held_bytes
                        .fetch_sub(oldest.len() as u64, Ordering::Relaxed);
                }
                entry.first += 1;
                if entry.cursors.values().any(|&next| next <= trimmed) {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
            self.held_bytes
                .fetch_add(body.len() as u64, Ordering::Relaxed);
            entry.messages.push_back(Arc::from(body));
        }
        self.published.fetch_add(1, Ordering::Relaxed);
        self.notify.notify_waiters();
    }
}

impl EventBus for InProcessBus {
    fn publish(&self, zone: &str, stream: StreamKind, body: String) {
        self.inner.publish(zone, stream, body);
    }

    fn consumer<'a>(
        &'a self,
        zone: &'a str,
        stream: StreamKind,
        group: &'a str,
        _consumer: &'a str,
    ) -> BusFuture<'a, Box<dyn Consumer>> {
        // The group reads from the oldest message held (as `XGROUP CREATE … 0` would).
        let mut streams = self.inner.lock();
        let entry = streams.entry((zone.to_owned(), stream)).or_default();
        let first = entry.first;
        entry.cursors.entry(group.to_owned()).or_insert(first);
        drop(streams);
        let consumer = InProcessConsumer {
            inner: Arc::clone(&self.inner),
            key: (zone.to_owned(), stream),
            group: group.to_owned(),
        };
        Box::pin(async move { Ok(Box::new(consumer) as Box<dyn Consumer>) })
    }

    fn flush(&self) -> BusFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }

    fn stats(&self) -> BusStats {
        BusStats {
            published: self.inner.published.load(Ordering::Relaxed),
            dropped: self.inner.dropped.load(Ordering::Relaxed),
            fenced: 0,
            held_bytes: self.inner.held_bytes.load(Ordering::Relaxed),
        }
    }
}

struct InProcessConsumer {
    inner: Arc<Inner>,
    key: (String, StreamKind),
    group: String,
}

impl InProcessConsumer {
    fn take(&self, max: usize) -> Vec<Delivery> {
        let mut streams = self.inner.lock();
        let stream = streams.entry(self.key.clone()).or_default();
        let cursor = stream
            .cursors
            .get(&self.group)
            .copied()
            .unwrap_or(stream.first)
            .max(stream.first);
        let start = usize::try_from(cursor - stream.first).unwrap_or(usize::MAX);
        let batch: Vec<Delivery> = stream
            .messages
            .iter()
            .enumerate()
            .skip(start)
            .take(max)
            .map(|(offset, body)| Delivery {
                id: (stream.first + offset as u64).to_string(),
                body: body.to_string(),
                utf8_error_at: None,
            })
            .collect();
        stream
            .cursors
            .insert(self.group.clone(), cursor + batch.len() as u64);
        batch
    }
}

impl InProcessConsumer {
    /// Publishes `outgoing` to this consumer's zone, in order.
    fn write(&self, outgoing: &mut Outgoing) {
        for (stream, body) in outgoing.drain(..) {
            self.inner.publish(&self.key.0, stream, body);
        }
    }
}

impl Consumer for InProcessConsumer {
    fn next_batch(&mut self, max: usize, block: Duration) -> BusFuture<'_, Vec<Delivery>> {
        Box::pin(async move {
            let notified = self.inner.notify.notified();
            let batch = self.take(max);
            if !batch.is_empty() || block.is_zero() {
                return Ok(batch);
            }
            let _ = tokio::time::timeout(block, notified).await;
            Ok(self.take(max))
        })
    }

    fn exchange<'a>(
        &'a mut self,
        outgoing: &'a mut Outgoing,
        _handled: &'a [String],
        max: usize,
        block: Duration,
    ) -> BusFuture<'a, Vec<Delivery>> {
        self.write(outgoing);
        self.next_batch(max, block)
    }

    fn write_and_ack<'a>(
        &'a mut self,
        outgoing: &'a mut Outgoing,
        _handled: &'a [String],
    ) -> BusFuture<'a, ()> {
        self.write(outgoing);
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime")
    }

    #[test]
    fn groups_read_in_order_and_full_streams_drop_the_oldest() {
        runtime().block_on(async {
            let bus = InProcessBus::new(3);
            let mut a = bus
                .consumer("z", StreamKind::Intents, "g", "c")
                .await
                .expect("consumer");
            for i in 0..5 {
                bus.publish("z", StreamKind::Intents, format!("m{i}"));
            }
            // m0 and m1 were trimmed before group g read them.
            assert_eq!(
                bus.stats(),
                BusStats {
                    published: 5,
                    dropped: 2,
                    fenced: 0,
                    // m2, m3 and m4 are held.
                    held_bytes: 6,
                }
            );
            let batch = a.next_batch(2, Duration::ZERO).await.expect("batch");
            let bodies: Vec<_> = batch.iter().map(|d| d.body.as_str()).collect();
            assert_eq!(bodies, ["m2", "m3"]);
            let rest = a.next_batch(10, Duration::ZERO).await.expect("batch");
            assert_eq!(rest.len(), 1);
            // Trimming what every group has read, or a stream no group reads, drops nothing.
            bus.publish("z", StreamKind::Intents, "m5".into());
            for i in 0..5 {
                bus.publish("z", StreamKind::Story, format!("s{i}"));
            }
            assert_eq!(bus.stats().dropped, 2);
            // m3, m4, m5 and the story stream's s2, s3 and s4.
            assert_eq!(bus.stats().held_bytes, 12);
            let mut other = bus
                .consumer("z", StreamKind::Intents, "g2", "c")
                .await
                .expect("consumer");
            assert_eq!(
                other.next_batch(10, Duration::ZERO).await.expect("b").len(),
                3
            );
        });
    }

    #[test]
    fn a_blocked_reader_wakes_on_publish() {
        runtime().block_on(async {
            let bus = InProcessBus::new(10);
            let mut consumer = bus
                .consumer("z", StreamKind::World, "g", "c")
                .await
                .expect("consumer");
            let publisher = bus.clone();
            let task = tokio::spawn(async move {
                tokio::task::yield_now().await;
                publisher.publish("z", StreamKind::World, "hello".into());
            });
            let batch = consumer
                .next_batch(10, Duration::from_secs(30))
                .await
                .expect("batch");
            task.await.expect("task");
            let batch = if batch.is_empty() {
                consumer.next_batch(10, Duration::ZERO).await.expect("b")
            } else {
                batch
            };
            assert_eq!(batch.len(), 1);
        });
    }
}
