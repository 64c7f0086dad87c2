//! The embedded world-event log: events in the redb file's `events` table.
//!
//! Owns the redb side of the `EventLog` contract. An append (or a batch) is one write
//! transaction that reads the zone's head from `event_heads`, inserts the events under the next
//! ids and moves the head, committed with an fsync: a crash loses no acknowledged event and
//! never reuses an id. Calls block; see [`crate::event_log`] for why.
//!
//! It does not trim old events.

use std::sync::Arc;

use redb::{Database, ReadableDatabase, ReadableTable};

use super::tables::{EVENT_HEADS, EVENTS, Shared, begin_durable_write, needs_reopen};
use crate::event_log::{EventId, EventLog, EventLogError, next_id};
use crate::zone::ZoneName;

/// The world-event log in the embedded redb file. Obtained from [`crate::RedbFile::event_log`].
#[derive(Clone, Debug)]
pub struct RedbEventLog {
    shared: Arc<Shared>,
}

impl RedbEventLog {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    fn failed<E: Into<redb::Error>>(
        &self,
        zone: &ZoneName,
        operation: &'static str,
    ) -> impl FnOnce(E) -> EventLogError {
        let path = self.shared.path.clone();
        let zone = zone.clone();
        move |error| EventLogError::Redb {
            path,
            zone,
            operation,
            source: Box::new(error.into()),
        }
    }

    /// Runs `work` across the redb boundary ([`Shared::run`]): a panic in redb, or a file that
    /// cannot be opened again, becomes [`EventLogError::Unavailable`].
    fn run<T>(
        &self,
        zone: &ZoneName,
        operation: &'static str,
        work: impl FnOnce(&Database) -> Result<T, EventLogError>,
    ) -> Result<T, EventLogError> {
        self.shared
            .run(
                work,
                |error| matches!(error, EventLogError::Redb { source, .. } if needs_reopen(source)),
            )
            .unwrap_or_else(|fault| {
                Err(EventLogError::Unavailable {
                    path: self.shared.path.clone(),
                    zone: zone.clone(),
                    operation,
                    reason: fault.to_string(),
                })
            })
    }

    fn append_all<'e>(
        &self,
        database: &Database,
        zone: &ZoneName,
        events: impl ExactSizeIterator<Item = &'e [u8]>,
    ) -> Result<(Vec<EventId>, EventId), EventLogError> {
        let transaction =
            begin_durable_write(database).map_err(self.failed(zone, "append: begin"))?;
        let mut ids = Vec::with_capacity(events.len());
        let head = {
            let mut heads = transaction
                .open_table(EVENT_HEADS)
                .map_err(self.failed(zone, "append: open heads"))?;
            let mut table = transaction
                .open_table(EVENTS)
                .map_err(self.failed(zone, "append: open events"))?;
            let mut last = heads
                .get(zone.as_str())
                .map_err(self.failed(zone, "append: read head"))?
                .map_or(0, |head| head.value());
            for event in events {
                // On exhaustion the transaction is dropped uncommitted: nothing is appended.
                let id = next_id(zone, last)?;
                table
                    .insert((zone.as_str(), id.get()), event)
                    .map_err(self.failed(zone, "append: insert"))?;
                ids.push(id);
                last = id.get();
            }
            heads
                .insert(zone.as_str(), last)
                .map_err(self.failed(zone, "append: move head"))?;
            EventId::new(last)
        };
        transaction
            .commit()
            .map_err(self.failed(zone, "append: commit"))?;
        Ok((ids, head))
    }
}

impl EventLog for RedbEventLog {
    fn append(&self, zone: &ZoneName, event: &[u8]) -> Result<EventId, EventLogError> {
        // After appending one event, the head is that event's id.
        let (_, head) = self.run(zone, "append", |database| {
            self.append_all(database, zone, std::iter::once(event))
        })?;
        Ok(head)
    }

    fn append_batch(
        &self,
        zone: &ZoneName,
        events: &[Vec<u8>],
    ) -> Result<Vec<EventId>, EventLogError> {
        let (ids, _) = self.run(zone, "append", |database| {
            self.append_all(database, zone, events.iter().map(Vec::as_slice))
        })?;
        Ok(ids)
    }

    fn read_after(
        &self,
        zone: &ZoneName,
        after: Option<EventId>,
        limit: usize,
    ) -> Result<Vec<(EventId, Vec<u8>)>, EventLogError> {
        let Some(first) = after.map_or(Some(1), |after| after.get().checked_add(1)) else {
            return Ok(Vec::new());
        };
        self.run(zone, "read_after", |database| {
            let transaction = database
                .begin_read()
                .map_err(self.failed(zone, "read_after: begin"))?;
            let table = transaction
                .open_table(EVENTS)
                .map_err(self.failed(zone, "read_after: open events"))?;
            let range = table
                .range((zone.as_str(), first)..=(zone.as_str(), u64::MAX))
                .map_err(self.failed(zone, "read_after: scan"))?;
            let mut events = Vec::with_capacity(limit.min(1024));
            for entry in range.take(limit) {
                let (key, value) = entry.map_err(self.failed(zone, "read_after: read"))?;
                events.push((EventId::new(key.value().1), value.value().to_vec()));
            }
            Ok(events)
        })
    }

    fn last_id(&self, zone: &ZoneName) -> Result<Option<EventId>, EventLogError> {
        self.run(zone, "last_id", |database| {
            let transaction = database
                .begin_read()
                .map_err(self.failed(zone, "last_id: begin"))?;
            let heads = transaction
                .open_table(EVENT_HEADS)
                .map_err(self.failed(zone, "last_id: open heads"))?;
            let head = heads
                .get(zone.as_str())
                .map_err(self.failed(zone, "last_id: read head"))?;
            Ok(head.map(|head| EventId::new(head.value())))
        })
    }
}
