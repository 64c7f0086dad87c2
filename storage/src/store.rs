//! The `SnapshotStore` trait: the only way the service saves and recovers zone state.
//!
//! Owns the contract every store keeps (sequences strictly increase per zone; a put is atomic
//! with its pruning; `latest_valid` returns the newest snapshot that passes every check and
//! names each one it skipped), the result types and the error type.
//!
//! **Why an async trait with boxed futures.** The service is tokio-based and one of the stores
//! talks to Redis, which is async; the embedded redb store does blocking file IO with an fsync,
//! which must not run on a runtime worker, so it runs each call on `spawn_blocking`. A sync
//! trait would force the Redis store to block a thread on a runtime (or carry its own), and
//! `async fn` in a trait cannot be used as `dyn SnapshotStore` — the service picks its store
//! from config at start-up, so it holds a `Box<dyn SnapshotStore>` / `Arc<dyn SnapshotStore>`.
//! One boxed future per call is nothing next to a snapshot's size.
//!
//! It deliberately does not decide *when* to snapshot, does not replay the log (recovery is
//! the service's: load `latest_valid`, replay events after `last_event_id`; `None` means a
//! full replay) and never interprets the payload.

use std::future::Future;
use std::pin::Pin;

use crate::snapshot::{EncodeError, Expected, Snapshot, SnapshotDefect, SnapshotHeader};
use crate::zone::ZoneName;

/// The future every store method returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, SnapshotError>> + Send + 'a>>;

/// Saves and recovers zone snapshots. Implemented by the redb, Redis and memory stores.
pub trait SnapshotStore: Send + Sync {
    /// Stores `snapshot` under its zone and sequence, then removes that zone's snapshots beyond
    /// the configured count, all in one atomic step. Refuses a sequence that is not newer than
    /// the newest stored one ([`SnapshotError::SequenceNotIncreasing`]).
    fn put(&self, snapshot: Snapshot) -> StoreFuture<'_, PutOutcome>;

    /// The newest snapshot of `zone` that decodes, passes both checksums and has a schema
    /// version no newer than `supported_schema_version`, with every newer one it skipped and
    /// why. `snapshot: None` means none qualifies: replay the whole log.
    fn latest_valid<'a>(
        &'a self,
        zone: &'a ZoneName,
        supported_schema_version: u32,
    ) -> StoreFuture<'a, LatestValid>;

    /// One snapshot by sequence: `Ok(None)` if absent, [`SnapshotError::Unusable`] if it fails a
    /// check (a newer schema included).
    fn get<'a>(
        &'a self,
        zone: &'a ZoneName,
        sequence: u64,
        supported_schema_version: u32,
    ) -> StoreFuture<'a, Option<Snapshot>>;

    /// The snapshots of `zone`, oldest first, from their headers alone (payload checksums are
    /// verified on load, not here).
    fn list<'a>(&'a self, zone: &'a ZoneName) -> StoreFuture<'a, Vec<ListedSnapshot>>;

    /// Removes all but the newest `keep_last` snapshots of `zone`; returns the removed
    /// sequences, oldest first. `keep_last` 0 removes them all.
    fn prune<'a>(&'a self, zone: &'a ZoneName, keep_last: usize) -> StoreFuture<'a, Vec<u64>>;

    /// The stored bytes of one snapshot, unchecked: for copying snapshots between stores byte
    /// for byte and for inspecting a damaged one.
    fn get_encoded<'a>(
        &'a self,
        zone: &'a ZoneName,
        sequence: u64,
    ) -> StoreFuture<'a, Option<Vec<u8>>>;

    /// Stores `bytes` under `zone` and `sequence` as they are, replacing what is there, without
    /// checks or pruning: the counterpart of [`SnapshotStore::get_encoded`]. Every load still
    /// verifies them.
    fn put_encoded<'a>(
        &'a self,
        zone: &'a ZoneName,
        sequence: u64,
        bytes: Vec<u8>,
    ) -> StoreFuture<'a, ()>;
}

/// What a successful `put` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PutOutcome {
    /// Size of the stored encoding, bytes.
    pub encoded_bytes: u64,
    /// Sequences removed by the retention rule, oldest first.
    pub pruned: Vec<u64>,
}

/// The answer of `latest_valid`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatestValid {
    /// The newest usable snapshot, if any.
    pub snapshot: Option<Snapshot>,
    /// The newer snapshots passed over, newest first, each with its defect.
    pub skipped: Vec<SkippedSnapshot>,
}

/// A snapshot `latest_valid` passed over.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("skipped snapshot {sequence} at {location}: {defect}")]
pub struct SkippedSnapshot {
    /// Its sequence.
    pub sequence: u64,
    /// Where it is stored (file and table, or key).
    pub location: String,
    /// Why it was skipped.
    pub defect: SnapshotDefect,
}

/// One entry of `list`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedSnapshot {
    /// The sequence it is filed under.
    pub sequence: u64,
    /// Its header, or why the header is unreadable.
    pub header: Result<SnapshotHeader, SnapshotDefect>,
}

/// A store operation that failed. Each names the zone and the file or key involved.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// `put` was given a sequence not newer than the newest stored one.
    #[error(
        "zone {zone}: snapshot sequence {sequence} is not newer than the newest stored, {newest}"
    )]
    SequenceNotIncreasing {
        /// The zone.
        zone: ZoneName,
        /// The refused sequence.
        sequence: u64,
        /// The newest stored sequence.
        newest: u64,
    },
    /// The snapshot cannot be encoded.
    #[error("zone {zone}: snapshot {sequence} cannot be encoded: {source}")]
    Encode {
        /// The zone.
        zone: ZoneName,
        /// The sequence.
        sequence: u64,
        /// Why.
        source: EncodeError,
    },
    /// A stored snapshot failed a check.
    #[error("zone {zone}: snapshot {sequence} at {location} is unusable: {defect}")]
    Unusable {
        /// The zone.
        zone: ZoneName,
        /// The sequence.
        sequence: u64,
        /// File and table, or key.
        location: String,
        /// What is wrong with it.
        #[source]
        defect: SnapshotDefect,
    },
    /// The redb file failed.
    #[error("redb file {path}: {operation} for zone {zone} failed: {source}")]
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
    #[error("redb file {path}: {operation} for zone {zone} failed: {reason}")]
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
    /// The blocking task running a redb operation did not complete (it panicked or the
    /// runtime is shutting down).
    #[error(
        "redb file {path}: the blocking task for {operation} in zone {zone} did not complete: {source}"
    )]
    Background {
        /// The file.
        path: String,
        /// The zone.
        zone: ZoneName,
        /// What was being done.
        operation: &'static str,
        /// tokio's error.
        source: tokio::task::JoinError,
    },
    /// A Redis command failed (connection, timeout, server error).
    #[error("redis key {key}: {operation} failed: {source}")]
    Redis {
        /// The key involved.
        key: String,
        /// What was being done.
        operation: &'static str,
        /// redis-rs's error.
        source: Box<redis::RedisError>,
    },
    /// The zone is fenced by a lease this instance no longer holds: nothing was written.
    #[error(
        "zone {zone}: snapshot refused: the lease {lease_key} is no longer held by this instance"
    )]
    Fenced {
        /// The zone.
        zone: ZoneName,
        /// The lease key checked.
        lease_key: String,
    },
    /// Redis answered something this store never writes (a foreign index entry, an unexpected
    /// script reply).
    #[error("redis key {key}: {reason}")]
    RedisContent {
        /// The key involved.
        key: String,
        /// What was unexpected.
        reason: String,
    },
}

/// Checks one candidate of a newest-first scan: returns the snapshot if usable, otherwise
/// records why it was skipped (and logs it). Shared by every store's `latest_valid`.
pub(crate) fn accept_or_skip(
    zone: &ZoneName,
    sequence: u64,
    location: impl FnOnce() -> String,
    bytes: Option<&[u8]>,
    supported_schema_version: u32,
    skipped: &mut Vec<SkippedSnapshot>,
) -> Option<Snapshot> {
    let decoded = match bytes {
        Some(bytes) => Snapshot::decode(
            bytes,
            Expected {
                zone,
                sequence,
                supported_schema_version,
            },
        ),
        None => Err(SnapshotDefect::Missing),
    };
    match decoded {
        Ok(snapshot) => Some(snapshot),
        Err(defect) => {
            let skip = SkippedSnapshot {
                sequence,
                location: location(),
                defect,
            };
            tracing::warn!(zone = %zone, sequence, reason = %skip, "snapshot skipped during recovery");
            skipped.push(skip);
            None
        }
    }
}

/// Decodes one snapshot for `get`, turning a defect into [`SnapshotError::Unusable`].
pub(crate) fn decode_for_get(
    zone: &ZoneName,
    sequence: u64,
    location: impl FnOnce() -> String,
    bytes: &[u8],
    supported_schema_version: u32,
) -> Result<Snapshot, SnapshotError> {
    Snapshot::decode(
        bytes,
        Expected {
            zone,
            sequence,
            supported_schema_version,
        },
    )
    .map_err(|defect| SnapshotError::Unusable {
        zone: zone.clone(),
        sequence,
        location: location(),
        defect,
    })
}

/// Encodes `snapshot` for `put`.
pub(crate) fn encode_for_put(snapshot: &Snapshot) -> Result<Vec<u8>, SnapshotError> {
    snapshot.encode().map_err(|source| SnapshotError::Encode {
        zone: snapshot.zone.clone(),
        sequence: snapshot.sequence,
        source,
    })
}
