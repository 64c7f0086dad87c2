//! The embedded store's single redb file, shared by its snapshot store and its event log.
//!
//! Owns opening the file (creating its tables) and the mapping of redb's open errors to ours;
//! the table layout lives in [`super::tables`]. redb allows one `Database` per file per
//! process, so the snapshot store and the event log are handed out by one [`RedbFile`] and
//! share it. Every write is one ACID write transaction committed with `Durability::Immediate`
//! (fsync before `commit` returns); after a crash redb recovers to the last committed
//! transaction on open. A damaged file is refused at open ([`RedbOpenError::Damaged`], after
//! redb's integrity check when `redb.verify_on_open`) and, met later, reported per call by the
//! boundary in [`super::tables`]; nothing panics.
//!
//! It does not compact the file or take backups.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;

use redb::{Builder, Database, StorageBackend};

use super::event_log::RedbEventLog;
use super::snapshots::RedbSnapshotStore;
use super::tables::{
    EVENT_HEADS, EVENTS, Opener, SNAPSHOTS, Shared, begin_durable_write, panic_message,
};
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
    /// The file is damaged: redb panicked on it or its integrity check failed and could not
    /// repair it.
    #[error(
        "redb file {path} is damaged ({reason}): move it aside and restore it from a backup, \
         or start without it (a new file, an empty world log)"
    )]
    Damaged {
        /// The file.
        path: String,
        /// What redb reported.
        reason: String,
    },
}

impl RedbFile {
    /// Opens the file at `path`, creating it and its tables if needed; with
    /// `redb.verify_on_open` its integrity is checked first (a damaged file is refused with
    /// [`RedbOpenError::Damaged`], never a panic).
    pub fn open(path: impl AsRef<Path>, config: &StorageConfig) -> Result<Self, RedbOpenError> {
        config.validate()?;
        let label = path.as_ref().display().to_string();
        let owned = path.as_ref().to_path_buf();
        let cache = config.redb.cache_size_bytes;
        let opener: Opener =
            Box::new(move || builder(cache).create(&owned).map_err(redb::Error::from));
        Self::from_opener(opener, label, config)
    }

    /// Opens a database held by `backend` (a test backend that fails or tears writes, say);
    /// `label` names it in errors. After a fault the database is opened again over a clone of
    /// `backend`.
    pub fn open_with_backend(
        backend: impl StorageBackend + Clone,
        label: impl Into<String>,
        config: &StorageConfig,
    ) -> Result<Self, RedbOpenError> {
        config.validate()?;
        let cache = config.redb.cache_size_bytes;
        let opener: Opener = Box::new(move || {
            builder(cache)
                .create_with_backend(backend.clone())
                .map_err(redb::Error::from)
        });
        Self::from_opener(opener, label.into(), config)
    }

    fn from_opener(
        opener: Opener,
        path: String,
        config: &StorageConfig,
    ) -> Result<Self, RedbOpenError> {
        let verify = config.redb.verify_on_open;
        let opened = catch_unwind(AssertUnwindSafe(|| -> Result<Database, RedbOpenError> {
            let mut database = opener().map_err(|error| open_error(&path, error))?;
            if verify {
                verify_integrity(&mut database, &path)?;
            }
            create_tables(&database).map_err(|error| open_error(&path, error))?;
            Ok(database)
        }));
        let database = match opened {
            Ok(database) => database?,
            Err(payload) => {
                return Err(RedbOpenError::Damaged {
                    path,
                    reason: panic_message(payload.as_ref()),
                });
            }
        };
        Ok(Self {
            shared: Arc::new(Shared::new(
                database,
                opener,
                path,
                config.snapshots_kept_per_zone,
            )),
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

fn builder(cache_size_bytes: usize) -> Builder {
    let mut builder = Builder::new();
    builder.set_cache_size(cache_size_bytes);
    builder
}

/// redb's own check of every page; a file it had to repair is reported, one it cannot repair
/// is refused.
fn verify_integrity(database: &mut Database, path: &str) -> Result<(), RedbOpenError> {
    match database.check_integrity() {
        Ok(true) => Ok(()),
        Ok(false) => {
            tracing::warn!(
                file = path,
                "redb file failed its integrity check and was repaired"
            );
            Ok(())
        }
        Err(error) => Err(RedbOpenError::Damaged {
            path: path.to_owned(),
            reason: error.to_string(),
        }),
    }
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
