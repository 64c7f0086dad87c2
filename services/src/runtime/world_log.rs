//! A zone's world log: where its world events are durably recorded and read back.
//!
//! Owns [`WorldLog`] — the Redis world stream itself, or (with the in-process bus, which does
//! not outlive the process) the embedded redb log, appended before a batch is applied — how far
//! a recovery replays it ([`ReplayEnd`]), and what it holds at a snapshot's position
//! ([`EntryAt`]): the entry a snapshot's anchor is checked against, or why there is none.

use std::sync::Arc;

use geppetto_storage::{EventId, EventLog, ZoneName};

use crate::bus::redis::RedisBus;
use crate::bus::{BusError, Delivery, StreamKind};

/// Why the world log could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
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
}

fn log_zone(zone: &str) -> Result<ZoneName, LogError> {
    ZoneName::new(zone).map_err(|e| LogError::Log {
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
    pub async fn record(&self, zone: &str, batch: &[Delivery]) -> Result<Vec<String>, LogError> {
        match self {
            Self::Stream(_) | Self::Volatile => Ok(batch.iter().map(|d| d.id.clone()).collect()),
            Self::Embedded(log) => {
                let key = log_zone(zone)?;
                let log = Arc::clone(log);
                let bodies: Vec<Vec<u8>> =
                    batch.iter().map(|d| d.body.clone().into_bytes()).collect();
                let appended =
                    tokio::task::spawn_blocking(move || log.append_batch(&key, &bodies)).await;
                match appended {
                    Ok(Ok(ids)) => Ok(ids.iter().map(ToString::to_string).collect()),
                    Ok(Err(error)) => Err(LogError::Log {
                        zone: zone.to_owned(),
                        reason: error.to_string(),
                    }),
                    Err(error) => Err(LogError::Log {
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
    pub async fn replay_end(&self, zone: &str, group: &str) -> Result<ReplayEnd, LogError> {
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

    /// What the log holds at `id` (a snapshot's `last_event_id`).
    pub async fn entry_at(&self, zone: &str, id: &str) -> Result<EntryAt, LogError> {
        let held = match self {
            Self::Volatile => None,
            Self::Stream(bus) => bus.read_at(zone, StreamKind::World, id).await?,
            Self::Embedded(_) => match id.parse::<u64>() {
                Ok(raw) if raw > 0 => {
                    let before = (raw - 1).to_string();
                    self.read_after(zone, Some(&before), 1)
                        .await?
                        .into_iter()
                        .find(|entry| entry.id == id)
                }
                _ => None,
            },
        };
        if let Some(entry) = held {
            return Ok(EntryAt::Holds(entry));
        }
        let first = self.read_after(zone, None, 1).await?;
        let at = EntryAt::within(
            first
                .iter()
                .map(|entry| (entry.id.as_str(), entry.body.as_str())),
            id,
        );
        // A stream that starts after `id` was trimmed past it, or is another stream made
        // since (its ids are later too): one that never lost an entry never held `id`.
        if let (EntryAt::Gone, Self::Stream(bus)) = (&at, self)
            && bus.entries_removed(zone, StreamKind::World).await? == Some(0)
        {
            return Ok(EntryAt::Missing);
        }
        Ok(at)
    }

    /// Up to `limit` entries after `after` (from the start when `None`), in log order.
    pub async fn read_after(
        &self,
        zone: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Delivery>, LogError> {
        match self {
            Self::Volatile => Ok(Vec::new()),
            Self::Stream(bus) => Ok(bus
                .read_range(zone, StreamKind::World, after, limit)
                .await?),
            Self::Embedded(log) => {
                let key = log_zone(zone)?;
                let after = match after {
                    Some(id) => Some(id.parse::<EventId>().map_err(|e| LogError::Log {
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
                        return Err(LogError::Log {
                            zone: zone.to_owned(),
                            reason: error.to_string(),
                        });
                    }
                    Err(error) => {
                        return Err(LogError::Log {
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

/// What a log holds at a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryAt {
    /// The entry there.
    Holds(Delivery),
    /// Nothing there, and nothing before it: the log was trimmed past it (or is empty), so
    /// what was there cannot be known.
    Gone,
    /// Nothing there although the log holds entries before it (or is a stream that never lost
    /// an entry): not the log the position is of.
    Missing,
}

impl EntryAt {
    /// What `entries` (a log's ids and bodies, in order, read until `id` is found) hold at
    /// `id`.
    pub fn within<I: AsRef<str>, B: Into<String>>(
        entries: impl IntoIterator<Item = (I, B)>,
        id: &str,
    ) -> Self {
        let mut earlier = false;
        for (entry, body) in entries {
            let entry = entry.as_ref();
            if entry == id {
                return Self::Holds(Delivery {
                    id: entry.to_owned(),
                    body: body.into(),
                    utf8_error_at: None,
                });
            }
            earlier |= stream_order(entry) < stream_order(id);
        }
        if earlier { Self::Missing } else { Self::Gone }
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
    pub fn includes(&self, id: &str) -> bool {
        match self {
            Self::Nothing => false,
            Self::Everything => true,
            Self::Through(end) => stream_order(id) <= stream_order(end),
        }
    }
}

/// A log id (a Redis stream id `millis-seq`, or a number) as a comparable pair.
fn stream_order(id: &str) -> (u64, u64) {
    let (millis, seq) = id.split_once('-').unwrap_or((id, "0"));
    (millis.parse().unwrap_or(0), seq.parse().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_of_a_stream_stops_at_what_the_group_was_given() {
        let end = ReplayEnd::Through("1700-3".into());
        assert!(end.includes("1700-3") && end.includes("1699-9") && end.includes("1700-0"));
        assert!(!end.includes("1700-4") && !end.includes("1701-0"));
        assert!(!ReplayEnd::Nothing.includes("0-1"));
        assert!(ReplayEnd::Everything.includes("99"));
    }

    #[test]
    fn a_position_is_held_missing_or_gone_before_the_log_starts() {
        let log = [("3", "c"), ("4", "d"), ("5", "e")];
        assert!(matches!(EntryAt::within(log, "4"), EntryAt::Holds(d) if d.body == "d"));
        assert_eq!(EntryAt::within(log, "9"), EntryAt::Missing);
        assert_eq!(EntryAt::within(log, "2"), EntryAt::Gone);
        assert_eq!(EntryAt::within::<&str, &str>([], "2"), EntryAt::Gone);
        let stream = [("1700-5", "x")];
        assert_eq!(EntryAt::within(stream, "1700-4"), EntryAt::Gone);
        assert_eq!(EntryAt::within(stream, "1700-6"), EntryAt::Missing);
    }

    #[test]
    fn the_embedded_log_is_read_back_at_a_position() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let log = WorldLog::Embedded(Arc::new(geppetto_storage::MemoryEventLog::new()));
            let batch: Vec<Delivery> = ["a", "b", "c"]
                .iter()
                .map(|body| Delivery::from_bytes(String::new(), body.as_bytes()))
                .collect();
            let ids = log.record("village", &batch).await.expect("recorded");
            assert_eq!(ids, ["1", "2", "3"]);
            let at = log.entry_at("village", "2").await.expect("reads");
            assert!(matches!(at, EntryAt::Holds(d) if d.body == "b" && d.id == "2"));
            assert_eq!(
                log.entry_at("village", "7").await.expect("reads"),
                EntryAt::Missing
            );
            assert_eq!(
                log.entry_at("other", "2").await.expect("reads"),
                EntryAt::Gone
            );
            assert_eq!(
                WorldLog::Volatile
                    .entry_at("village", "2")
                    .await
                    .expect("reads"),
                EntryAt::Gone
            );
        });
    }
}
