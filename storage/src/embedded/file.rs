//! The embedded store's single redb file, shared by its snapshot store and its event log.
//!
//! Owns opening the file (creating it and its tables), its table layout and the mapping of
//! redb's errors to ours. redb allows one `Database` per file per process, so the snapshot store
//! and the event log are handed out by one [`RedbFile`] and share it. Every write is one ACID
//! write transaction committed with `Durability::Immediate` (fsync before `commit` returns);
//! after a crash redb recovers to the last committed transaction on open.
//!
//! It does not compact the file or take backups.

use std::path::Path;
use std::sync::Arc;

use redb::{Builder, Database, Durability, StorageBackend, TableDefinition, WriteTransaction};

use crate::config::{ConfigError, StorageConfig};
use crate::redb_event_log::RedbEventLog;
use crate::redb_snapshots::RedbSnapshotStore;

/// Snapshots: (zone, sequence) → encoded snapshot.
pub(crate) const SNAPSHOTS: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("snapshots");
/// World events: (zone, event id) → event bytes.
pub(crate) const EVENTS: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("events");
/// Last event id per zone. Kept apart from `EVENTS` so ids never go back, even if old events
/// are one day trimmed.
pub(crate) const EVENT_HEADS: TableDefinition<&str, u64> = TableDefinition::new("event_heads");

/// An open redb file holding snapshots and the world-event log.
#[derive(Clone, Debug)]
pub struct RedbFile {
    pub(crate) shared: Arc<Shared>,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) database: Database,
    /// The file path (or the backend's label), for error messages.
    pub(crate) path: String,
    pub(crate) snapshots_kept_per_zone: usize,
}

/// The redb file cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum RedbOpenError {
    /// The storage config is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// redb refused the file (locked by another process, not a redb file, unreadable…).
    #[error("redb file {path}: cannot open: {source}")]
    Redb {
        /// The file.
        path: String,
        /// redb's error.
        source: Box<redb::Error>,
    },
}

impl RedbFile {
    /// Opens the file at `path`, creating it and its tables if needed.
    pub fn open(path: impl AsRef<Path>, config: &StorageConfig) -> Result<Self, RedbOpenError> {
        config.validate()?;
        let label = path.as_ref().display().to_string();
        let database = builder(config)
            .create(path.as_ref())
            .map_err(|error| open_error(&label, error))?;
        Self::from_database(database, label, config)
    }

    /// Opens a database held by `backend` (a test backend that fails or tears writes, say);
    /// `label` names it in errors.
    pub fn open_with_backend(
        backend: impl StorageBackend,
        label: impl Into<String>,
        config: &StorageConfig,
    ) -> Result<Self, RedbOpenError> {
        config.validate()?;
        let label = label.into();
        let database = builder(config)
            .create_with_backend(backend)
            .map_err(|error| open_error(&label, error))?;
        Self::from_database(database, label, config)
    }

    fn from_database(
        database: Database,
        path: String,
        config: &StorageConfig,
    ) -> Result<Self, RedbOpenError> {
        create_tables(&database).map_err(|error| open_error(&path, error))?;
        Ok(Self {
            shared: Arc::new(Shared {
                database,
                path,
                snapshots_kept_per_zone: config.snapshots_kept_per_zone,
            }),
        })
    }

    /// The snapshot store in this file.
    pub fn snapshot_store(&self) -> RedbSnapshotStore {
        RedbSnapshotStore::new(Arc::clone(&self.shared))
    }

    /// The world-event log in this file.
    pub fn event_log(&self) -> RedbEventLog {
        RedbEventLog::new(Arc::clone(&self.shared))
    }

    /// The path (or label) of the file.
    pub fn path(&self) -> &str {
        &self.shared.path
    }
}

fn builder(config: &StorageConfig) -> Builder {
    let mut builder = Builder::new();
    builder.set_cache_size(config.redb.cache_size_bytes);
    builder
}

fn open_error(path: &str, error: impl Into<redb::Error>) -> RedbOpenError {
    RedbOpenError::Redb {
        path: path.to_owned(),
        source: Box::new(error.into()),
    }
}

fn create_tables(database: &Database) -> Result<(), redb::Error> {
    let transaction = begin_durable_write(database)?;
    transaction.open_table(SNAPSHOTS)?;
    transaction.open_table(EVENTS)?;
    transaction.open_table(EVENT_HEADS)?;
    transaction.commit()?;
    Ok(())
}

/// A write transaction that fsyncs on commit. `Immediate` is redb's default; it is set here so
/// the guarantee does not rest on a default.
pub(crate) fn begin_durable_write(database: &Database) -> Result<WriteTransaction, redb::Error> {
    let mut transaction = database.begin_write()?;
    transaction.set_durability(Durability::Immediate)?;
    Ok(transaction)
}
