//! The embedded world-event log: the `EventLog` trait, event ids and their errors.
//!
//! Owns the contract of the log the embedded (single-process) mode folds NPC state from: per
//! zone, ids start at 1 and strictly increase, an append is durable when it returns, and
//! `read_after` pages through the log in id order. Entries are opaque bytes (the service's JSON
//! envelopes).
//!
//! **Why synchronous.** Both implementations are synchronous (redb, memory), and invariant 1 of
//! the design wants each input logged *before* it is applied, in order, so the caller awaits the
//! append either way. The service gathers a tick's inputs and appends them with one
//! [`EventLog::append_batch`] (one fsync) from `spawn_blocking` or a dedicated logging thread;
//! an async trait would only hide that blocking call inside the store.
//!
//! It deliberately does not trim the log (a snapshot makes older entries unnecessary for
//! recovery, but keeping them for `geppetto replay` is the service's choice) and is not the
//! shared deployment's log: with Redis, the world stream owned by the event bus is the log.

use std::fmt;
use std::str::FromStr;

use crate::zone::ZoneName;

/// Position of an event in its zone's log: 1 for the first, strictly increasing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId(u64);

impl EventId {
    /// Wraps a raw id (as read back from a snapshot's `last_event_id`).
    pub const fn new(raw: u64) -> Self {
        Self(raw)
    }

    /// The raw id.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A string that is not an embedded-log event id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not an embedded event-log id (a decimal number)")]
pub struct EventIdParseError {
    /// The refused text.
    pub text: String,
}

impl FromStr for EventId {
    type Err = EventIdParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.parse::<u64>()
            .map(Self)
            .map_err(|_| EventIdParseError {
                text: text.to_owned(),
            })
    }
}

/// Appends and reads a zone's world-event log.
pub trait EventLog: Send + Sync {
    /// Appends one event; returns its id, one more than the zone's previous last id.
    fn append(&self, zone: &ZoneName, event: &[u8]) -> Result<EventId, EventLogError>;

    /// Appends `events` in order, atomically and with one fsync; returns their ids.
    fn append_batch(
        &self,
        zone: &ZoneName,
        events: &[Vec<u8>],
    ) -> Result<Vec<EventId>, EventLogError>;

    /// Up to `limit` events of `zone` with ids greater than `after` (from the start if `None`),
    /// in id order.
    fn read_after(
        &self,
        zone: &ZoneName,
        after: Option<EventId>,
        limit: usize,
    ) -> Result<Vec<(EventId, Vec<u8>)>, EventLogError>;

    /// The id of the zone's last event, `None` if it has none.
    fn last_id(&self, zone: &ZoneName) -> Result<Option<EventId>, EventLogError>;
}

/// An event-log operation that failed, naming the zone and the file.
#[derive(Debug, thiserror::Error)]
pub enum EventLogError {
    /// The redb file failed.
    #[error("redb file {path}: event log {operation} for zone {zone} failed: {source}")]
    Redb {
        /// The file.
        path: String,
        /// The zone.
        zone: ZoneName,
        /// What was being done.
        operation: &'static str,
        /// redb's error.
        source: Box<redb::Error>,
    },
    /// The redb file is unusable for now: redb panicked on damaged data, or the file could not
    /// be opened again after a fault. Nothing was read or written.
    #[error("redb file {path}: event log {operation} for zone {zone} failed: {reason}")]
    Unavailable {
        /// The file.
        path: String,
        /// The zone.
        zone: ZoneName,
        /// What was being done.
        operation: &'static str,
        /// What happened and what to do.
        reason: String,
    },
    /// The zone has used every id (2^64 − 1 events).
    #[error("event log of zone {zone} has no ids left after {last}")]
    IdsExhausted {
        /// The zone.
        zone: ZoneName,
        /// Its last id.
        last: EventId,
    },
}

/// The id following `last`, or [`EventLogError::IdsExhausted`].
pub(crate) fn next_id(zone: &ZoneName, last: u64) -> Result<EventId, EventLogError> {
    last.checked_add(1)
        .map(EventId::new)
        .ok_or_else(|| EventLogError::IdsExhausted {
            zone: zone.clone(),
            last: EventId::new(last),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_print_and_parse_as_decimal() {
        assert_eq!(EventId::new(42).to_string(), "42");
        assert_eq!("42".parse::<EventId>(), Ok(EventId::new(42)));
        assert!("1700000000000-3".parse::<EventId>().is_err());
    }

    #[test]
    fn next_id_refuses_to_wrap() {
        let zone = ZoneName::new("z").expect("valid zone");
        assert_eq!(next_id(&zone, 5).ok(), Some(EventId::new(6)));
        assert!(matches!(
            next_id(&zone, u64::MAX),
            Err(EventLogError::IdsExhausted { .. })
        ));
    }
}
