//! The embedded store's single redb file, shared by its snapshot store and its event log.
//!
//! Owns opening the file (creating its tables) and the mapping of redb's open errors to ours;
//! the table layout lives in [`super::tables`]. redb allows one `Database` per file per
//! process, so the snapshot store and the event log are handed out by one [`RedbFile`] and
//! share it. Every write is one ACID write transaction committed with `Durability::Immediate`
//! (fsync before `commit` returns); after a crash redb recovers to the last committed
//! transaction on open.
//!
//! It does not compact the file or take backups.

use std::path::Path;
use std::sync::Arc;

use redb::{Builder, Database, StorageBackend};

use super::event_log::RedbEventLog;
use super::snapshots::RedbSnapshotStore;
use super::tables::{EVENT_HEADS, EVENTS, SNAPSHOTS, Shared, begin_durable_write};
use crate::config::{ConfigError, StorageConfig};

/// An open redb file holding snapshots and the world-event log.
#[derive(Clone, Debug)]
pub struct RedbFile {
    pub(crate) shared: Arc<Shared>,
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
