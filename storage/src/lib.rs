//! # geppetto-storage
//!
//! Where geppetto keeps what must survive a restart: snapshots of each zone's NPC state, and in
//! the embedded (single-process) mode the world-event log those snapshots are folded from.
//! Recovery is "load [`SnapshotStore::latest_valid`], replay the log after its
//! `last_event_id`"; a store never hands out a snapshot that fails its checksums or whose schema
//! is newer than the reader's, and says which ones it passed over.
//!
//! - [`snapshot`]: the snapshot type and its versioned, checksummed encoding.
//! - [`store`]: the [`SnapshotStore`] trait, its results and errors.
//! - [`embedded`]: the embedded default, snapshots and the event log in one redb file.
//! - [`redis_snapshots`]: snapshots in Redis for shared deployments.
//! - [`lease_fence`]: the lease a leased zone's writes are checked against.
//! - [`memory`]: in-memory store and log for tests.
//! - [`event_log`]: the [`EventLog`] trait and [`EventId`].
//! - [`config`]: every tunable number, with its default.
//!
//! This crate never interprets a payload (the service owns the NPC state type, its JSON and its
//! schema migrations), never decides when to snapshot, and depends on no other geppetto crate
//! but `geppetto-redis-target`, how every part of geppetto reaches Redis.

pub mod config;
pub mod embedded;
pub mod event_log;
pub mod lease_fence;
pub mod memory;
pub mod redis_snapshots;
pub mod snapshot;
pub mod store;
pub mod zone;

pub use config::{ConfigError, RedbConfig, RedisConfig, StorageConfig};
pub use embedded::event_log::RedbEventLog;
pub use embedded::file::{RedbFile, RedbOpenError};
pub use embedded::snapshots::RedbSnapshotStore;
pub use event_log::{EventId, EventIdParseError, EventLog, EventLogError};
pub use lease_fence::LeaseFence;
pub use memory::{MemoryEventLog, MemorySnapshotStore};
pub use redis_snapshots::{RedisConnectError, RedisSnapshotStore};
pub use snapshot::{EncodeError, Snapshot, SnapshotDefect, SnapshotHeader};
pub use store::{
    LatestValid, ListedSnapshot, PutOutcome, SkippedSnapshot, SnapshotError, SnapshotStore,
    StoreFuture,
};
pub use zone::{InvalidZone, ZoneName};
