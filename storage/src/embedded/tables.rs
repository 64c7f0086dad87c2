//! The layout the embedded store's users share: the redb tables, the state of one open file,
//! the durable write transaction every write goes through, and the boundary every redb call
//! crosses ([`Shared::run`]). It imports none of its users.
//!
//! **Why a boundary.** A damaged file can make redb panic inside its B-tree (`unreachable!`)
//! instead of returning an error, and after a failed write (a full disk) redb refuses every
//! later transaction ("Previous I/O error occurred. Please close and re-open the database").
//! [`Shared::run`] turns a panic into [`Fault::Damaged`] and, after either, drops the database
//! so the next call opens the file again: a write that failed for want of space succeeds once
//! there is space, and nothing panics past this module.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{PoisonError, RwLock};

use redb::{Database, Durability, TableDefinition, WriteTransaction};

/// Snapshots: (zone, sequence) → encoded snapshot.
pub(crate) const SNAPSHOTS: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("snapshots");
/// World events: (zone, event id) → event bytes.
pub(crate) const EVENTS: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("events");
/// Last event id per zone. Kept apart from `EVENTS` so ids never go back, even if old events
/// are one day trimmed.
pub(crate) const EVENT_HEADS: TableDefinition<&str, u64> = TableDefinition::new("event_heads");

/// Opens the database again (the file at its path, or the same test backend).
pub(crate) type Opener = Box<dyn Fn() -> Result<Database, redb::Error> + Send + Sync>;

pub(crate) struct Shared {
    /// The open database; `None` after a fault, until the next call opens it again.
    database: RwLock<Option<Database>>,
    opener: Opener,
    /// The file path (or the backend's label), for error messages.
    pub(crate) path: String,
    pub(crate) snapshots_kept_per_zone: usize,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("path", &self.path)
            .field("snapshots_kept_per_zone", &self.snapshots_kept_per_zone)
            .finish_non_exhaustive()
    }
}

/// What went wrong at the boundary, besides the operation's own errors.
#[derive(Debug)]
pub(crate) enum Fault {
    /// redb panicked: the file is damaged (or redb has a bug); the message.
    Damaged(String),
    /// The database could not be opened again after an earlier fault.
    Reopen(redb::Error),
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Damaged(message) => write!(
                f,
                "the file is damaged (redb: {message}); stop geppetto, move the file aside and \
                 restore it from a backup or let geppetto start a new one"
            ),
            Self::Reopen(error) => write!(f, "cannot open the file again: {error}"),
        }
    }
}

/// The text of a caught panic.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Whether redb's `error` leaves the open database unusable until it is opened again.
pub(crate) fn needs_reopen(error: &redb::Error) -> bool {
    matches!(error, redb::Error::PreviousIo | redb::Error::Io(_))
}

impl Shared {
    pub(crate) fn new(
        database: Database,
        opener: Opener,
        path: String,
        snapshots_kept_per_zone: usize,
    ) -> Self {
        Self {
            database: RwLock::new(Some(database)),
            opener,
            path,
            snapshots_kept_per_zone,
        }
    }

    /// Runs `work` on the open database (opening it again first after a fault). A panic in
    /// redb becomes [`Fault::Damaged`]; a panic or an error for which `reopen_after` holds
    /// closes the database, and the next call opens it again.
    pub(crate) fn run<T, E>(
        &self,
        work: impl FnOnce(&Database) -> Result<T, E>,
        reopen_after: impl FnOnce(&E) -> bool,
    ) -> Result<Result<T, E>, Fault> {
        self.ensure_open()?;
        let outcome = {
            let guard = self.database.read().unwrap_or_else(PoisonError::into_inner);
            let Some(database) = guard.as_ref() else {
                return Err(Fault::Reopen(redb::Error::DatabaseClosed));
            };
            catch_unwind(AssertUnwindSafe(|| work(database)))
        };
        match outcome {
            Ok(Ok(value)) => Ok(Ok(value)),
            Ok(Err(error)) => {
                if reopen_after(&error) {
                    self.close("a write failed");
                }
                Ok(Err(error))
            }
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                self.close("redb panicked");
                Err(Fault::Damaged(message))
            }
        }
    }

    fn ensure_open(&self) -> Result<(), Fault> {
        if self
            .database
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
        {
            return Ok(());
        }
        let mut slot = self
            .database
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            let opened = catch_unwind(AssertUnwindSafe(|| (self.opener)()))
                .map_err(|payload| Fault::Damaged(panic_message(payload.as_ref())))?
                .map_err(Fault::Reopen)?;
            tracing::info!(file = %self.path, "redb file opened again");
            *slot = Some(opened);
        }
        Ok(())
    }

    /// Drops the database (its file lock with it) so the next call opens the file afresh.
    fn close(&self, why: &str) {
        let taken = self
            .database
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        // Dropping a database redb gave up on may panic in its turn; it is closed either way.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(taken)));
        tracing::warn!(file = %self.path, why, "redb file closed; the next call opens it again");
    }
}

/// A write transaction that fsyncs on commit. `Immediate` is redb's default; it is set here so
/// the guarantee does not rest on a default.
pub(crate) fn begin_durable_write(database: &Database) -> Result<WriteTransaction, redb::Error> {
    let mut transaction = database.begin_write()?;
    transaction.set_durability(Durability::Immediate)?;
    Ok(transaction)
}
