//! The layout the embedded store's users share: the redb tables, the state of one open file,
//! and the durable write transaction every write goes through. It imports none of its users.

use redb::{Database, Durability, TableDefinition, WriteTransaction};

/// Snapshots: (zone, sequence) → encoded snapshot.
pub(crate) const SNAPSHOTS: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("snapshots");
/// World events: (zone, event id) → event bytes.
pub(crate) const EVENTS: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("events");
/// Last event id per zone. Kept apart from `EVENTS` so ids never go back, even if old events
/// are one day trimmed.
pub(crate) const EVENT_HEADS: TableDefinition<&str, u64> = TableDefinition::new("event_heads");

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) database: Database,
    /// The file path (or the backend's label), for error messages.
    pub(crate) path: String,
    pub(crate) snapshots_kept_per_zone: usize,
}

/// A write transaction that fsyncs on commit. `Immediate` is redb's default; it is set here so
/// the guarantee does not rest on a default.
pub(crate) fn begin_durable_write(database: &Database) -> Result<WriteTransaction, redb::Error> {
    let mut transaction = database.begin_write()?;
    transaction.set_durability(Durability::Immediate)?;
    Ok(transaction)
}
