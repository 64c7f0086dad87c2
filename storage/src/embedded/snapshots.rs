//! The embedded snapshot store: snapshots in the redb file's `snapshots` table.
//!
//! Owns the redb side of the `SnapshotStore` contract. Each `put` is one write transaction: the
//! monotonic-sequence check, the insert and the pruning commit together with an fsync, so a
//! crash leaves either the previous state or the new one, never a torn snapshot. Reads run in
//! one read transaction, so `latest_valid` sees a consistent set. Every call runs on tokio's
//! blocking pool: redb's IO and fsync must not stall a runtime worker.
//!
//! It does not cache decoded snapshots: a snapshot is read once, at recovery.

use std::sync::Arc;

use redb::{Database, ReadableDatabase, ReadableTable};

use super::tables::{SNAPSHOTS, Shared, begin_durable_write, needs_reopen};
use crate::snapshot::{MAX_HEADER_BYTES, Snapshot, SnapshotHeader};
use crate::store::{
    LatestValid, ListedSnapshot, PutOutcome, SnapshotError, SnapshotStore, StoreFuture,
    accept_or_skip, decode_for_get, encode_for_put,
};
use crate::zone::ZoneName;

/// Snapshots in the embedded redb file. Obtained from [`crate::RedbFile::snapshot_store`].
#[derive(Clone, Debug)]
pub struct RedbSnapshotStore {
    shared: Arc<Shared>,
}

impl RedbSnapshotStore {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    /// Runs `work` on the blocking pool across the redb boundary ([`Shared::run`]): a panic
    /// in redb, or a file that cannot be opened again, becomes [`SnapshotError::Unavailable`];
    /// a failed task [`SnapshotError::Background`].
    fn blocking<T, F>(
        &self,
        zone: &ZoneName,
        operation: &'static str,
        work: F,
    ) -> StoreFuture<'static, T>
    where
        T: Send + 'static,
        F: FnOnce(&Shared, &Database) -> Result<T, SnapshotError> + Send + 'static,
    {
        let shared = Arc::clone(&self.shared);
        let zone = zone.clone();
        Box::pin(async move {
            let task_shared = Arc::clone(&shared);
            let task = tokio::task::spawn_blocking(move || {
                task_shared.run(
                    |database| work(&task_shared, database),
                    |error| matches!(error, SnapshotError::Redb { source, .. } if needs_reopen(source)),
                )
            });
            match task.await {
                Ok(Ok(result)) => result,
                Ok(Err(fault)) => Err(SnapshotError::Unavailable {
                    path: shared.path.clone(),
                    zone,
                    operation,
                    reason: fault.to_string(),
                }),
                Err(source) => Err(SnapshotError::Background {
                    path: shared.path.clone(),
                    zone,
                    operation,
                    source,
                }),
            }
        })
    }
}

fn failed<E: Into<redb::Error>>(
    shared: &Shared,
    zone: &ZoneName,
    operation: &'static str,
) -> impl FnOnce(E) -> SnapshotError {
    let path = shared.path.clone();
    let zone = zone.clone();
    move |error| SnapshotError::Redb {
        path,
        zone,
        operation,
        source: Box::new(error.into()),
    }
}

fn location(shared: &Shared, zone: &ZoneName, sequence: u64) -> String {
    format!("{}#snapshots/{zone}/{sequence}", shared.path)
}

fn zone_range(zone: &ZoneName) -> std::ops::RangeInclusive<(&str, u64)> {
    (zone.as_str(), 0)..=(zone.as_str(), u64::MAX)
}

fn put_now(
    shared: &Shared,
    database: &Database,
    snapshot: &Snapshot,
) -> Result<PutOutcome, SnapshotError> {
    let zone = &snapshot.zone;
    let bytes = encode_for_put(snapshot)?;
    let transaction = begin_durable_write(database).map_err(failed(shared, zone, "put: begin"))?;
    let pruned = {
        let mut table =
            transaction
                .open_table(SNAPSHOTS)
                .map_err(failed(shared, zone, "put: open table"))?;
        let stored: Vec<u64> = table
            .range(zone_range(zone))
            .map_err(failed(shared, zone, "put: scan"))?
            .map(|entry| entry.map(|(key, _)| key.value().1))
            .collect::<Result<_, _>>()
            .map_err(failed(shared, zone, "put: scan"))?;
        if let Some(&newest) = stored.last()
            && newest >= snapshot.sequence
        {
            // Dropping the transaction uncommitted aborts it.
            return Err(SnapshotError::SequenceNotIncreasing {
                zone: zone.clone(),
                sequence: snapshot.sequence,
                newest,
            });
        }
        table
            .insert((zone.as_str(), snapshot.sequence), bytes.as_slice())
            .map_err(failed(shared, zone, "put: insert"))?;
        // `stored` plus the new snapshot, oldest first: drop from the front.
        let excess = (stored.len() + 1).saturating_sub(shared.snapshots_kept_per_zone);
        let pruned: Vec<u64> = stored.into_iter().take(excess).collect();
        for &sequence in &pruned {
            table
                .remove((zone.as_str(), sequence))
                .map_err(failed(shared, zone, "put: prune"))?;
        }
        pruned
    };
    transaction
        .commit()
        .map_err(failed(shared, zone, "put: commit"))?;
    Ok(PutOutcome {
        encoded_bytes: bytes.len() as u64,
        pruned,
    })
}

fn latest_valid_now(
    shared: &Shared,
    database: &Database,
    zone: &ZoneName,
    supported: u32,
) -> Result<LatestValid, SnapshotError> {
    let transaction = database
        .begin_read()
        .map_err(failed(shared, zone, "latest_valid: begin"))?;
    let table = transaction.open_table(SNAPSHOTS).map_err(failed(
        shared,
        zone,
        "latest_valid: open table",
    ))?;
    let mut skipped = Vec::new();
    for entry in table
        .range(zone_range(zone))
        .map_err(failed(shared, zone, "latest_valid: scan"))?
        .rev()
    {
        let (key, value) = entry.map_err(failed(shared, zone, "latest_valid: read"))?;
        let sequence = key.value().1;
        if let Some(snapshot) = accept_or_skip(
            zone,
            sequence,
            || location(shared, zone, sequence),
            Some(value.value()),
            supported,
            &mut skipped,
        ) {
            return Ok(LatestValid {
                snapshot: Some(snapshot),
                skipped,
            });
        }
    }
    Ok(LatestValid {
        snapshot: None,
        skipped,
    })
}

fn get_now(
    shared: &Shared,
    database: &Database,
    zone: &ZoneName,
    sequence: u64,
    supported: u32,
) -> Result<Option<Snapshot>, SnapshotError> {
    let transaction = database
        .begin_read()
        .map_err(failed(shared, zone, "get: begin"))?;
    let table =
        transaction
            .open_table(SNAPSHOTS)
            .map_err(failed(shared, zone, "get: open table"))?;
    let Some(value) =
        table
            .get((zone.as_str(), sequence))
            .map_err(failed(shared, zone, "get: read"))?
    else {
        return Ok(None);
    };
    decode_for_get(
        zone,
        sequence,
        || location(shared, zone, sequence),
        value.value(),
        supported,
    )
    .map(Some)
}

fn list_now(
    shared: &Shared,
    database: &Database,
    zone: &ZoneName,
) -> Result<Vec<ListedSnapshot>, SnapshotError> {
    let transaction = database
        .begin_read()
        .map_err(failed(shared, zone, "list: begin"))?;
    let table =
        transaction
            .open_table(SNAPSHOTS)
            .map_err(failed(shared, zone, "list: open table"))?;
    let mut listed = Vec::new();
    for entry in table
        .range(zone_range(zone))
        .map_err(failed(shared, zone, "list: scan"))?
    {
        let (key, value) = entry.map_err(failed(shared, zone, "list: read"))?;
        let bytes = value.value();
        listed.push(ListedSnapshot {
            sequence: key.value().1,
            header: SnapshotHeader::decode(bytes.get(..MAX_HEADER_BYTES).unwrap_or(bytes)),
        });
    }
    Ok(listed)
}

fn prune_now(
    shared: &Shared,
    database: &Database,
    zone: &ZoneName,
    keep_last: usize,
) -> Result<Vec<u64>, SnapshotError> {
    let transaction =
        begin_durable_write(database).map_err(failed(shared, zone, "prune: begin"))?;
    let pruned = {
        let mut table =
            transaction
                .open_table(SNAPSHOTS)
                .map_err(failed(shared, zone, "prune: open table"))?;
        let stored: Vec<u64> = table
            .range(zone_range(zone))
            .map_err(failed(shared, zone, "prune: scan"))?
            .map(|entry| entry.map(|(key, _)| key.value().1))
            .collect::<Result<_, _>>()
            .map_err(failed(shared, zone, "prune: scan"))?;
        let excess = stored.len().saturating_sub(keep_last);
        let pruned: Vec<u64> = stored.into_iter().take(excess).collect();
        for &sequence in &pruned {
            table.remove((zone.as_str(), sequence)).map_err(failed(
                shared,
                zone,
                "prune: remove",
            ))?;
        }
        pruned
    };
    transaction
        .commit()
        .map_err(failed(shared, zone, "prune: commit"))?;
    Ok(pruned)
}

fn get_encoded_now(
    shared: &Shared,
    database: &Database,
    zone: &ZoneName,
    sequence: u64,
) -> Result<Option<Vec<u8>>, SnapshotError> {
    let transaction = database
        .begin_read()
        .map_err(failed(shared, zone, "get_encoded: begin"))?;
    let table = transaction.open_table(SNAPSHOTS).map_err(failed(
        shared,
        zone,
        "get_encoded: open table",
    ))?;
    let value =
        table
            .get((zone.as_str(), sequence))
            .map_err(failed(shared, zone, "get_encoded: read"))?;
    Ok(value.map(|value| value.value().to_vec()))
}

fn put_encoded_now(
    shared: &Shared,
    database: &Database,
    zone: &ZoneName,
    sequence: u64,
    bytes: &[u8],
) -> Result<(), SnapshotError> {
    let transaction =
        begin_durable_write(database).map_err(failed(shared, zone, "put_encoded: begin"))?;
    {
        let mut table = transaction.open_table(SNAPSHOTS).map_err(failed(
            shared,
            zone,
            "put_encoded: open table",
        ))?;
        table
            .insert((zone.as_str(), sequence), bytes)
            .map_err(failed(shared, zone, "put_encoded: insert"))?;
    }
    transaction
        .commit()
        .map_err(failed(shared, zone, "put_encoded: commit"))
}

impl SnapshotStore for RedbSnapshotStore {
    fn put(&self, snapshot: Snapshot) -> StoreFuture<'_, PutOutcome> {
        let zone = snapshot.zone.clone();
        self.blocking(&zone, "put", move |shared, database| {
            put_now(shared, database, &snapshot)
        })
    }

    fn latest_valid<'a>(
        &'a self,
        zone: &'a ZoneName,
        supported_schema_version: u32,
    ) -> StoreFuture<'a, LatestValid> {
        let owned = zone.clone();
        self.blocking(zone, "latest_valid", move |shared, database| {
            latest_valid_now(shared, database, &owned, supported_schema_version)
        })
    }

    fn get<'a>(
        &'a self,
        zone: &'a ZoneName,
        sequence: u64,
        supported_schema_version: u32,
    ) -> StoreFuture<'a, Option<Snapshot>> {
        let owned = zone.clone();
        self.blocking(zone, "get", move |shared, database| {
            get_now(shared, database, &owned, sequence, supported_schema_version)
        })
    }

    fn list<'a>(&'a self, zone: &'a ZoneName) -> StoreFuture<'a, Vec<ListedSnapshot>> {
        let owned = zone.clone();
        self.blocking(zone, "list", move |shared, database| {
            list_now(shared, database, &owned)
        })
    }

    fn prune<'a>(&'a self, zone: &'a ZoneName, keep_last: usize) -> StoreFuture<'a, Vec<u64>> {
        let owned = zone.clone();
        self.blocking(zone, "prune", move |shared, database| {
            prune_now(shared, database, &owned, keep_last)
        })
    }

    fn get_encoded<'a>(
        &'a self,
        zone: &'a ZoneName,
        sequence: u64,
    ) -> StoreFuture<'a, Option<Vec<u8>>> {
        let owned = zone.clone();
        self.blocking(zone, "get_encoded", move |shared, database| {
            get_encoded_now(shared, database, &owned, sequence)
        })
    }

    fn put_encoded<'a>(
        &'a self,
        zone: &'a ZoneName,
        sequence: u64,
        bytes: Vec<u8>,
    ) -> StoreFuture<'a, ()> {
        let owned = zone.clone();
        self.blocking(zone, "put_encoded", move |shared, database| {
            put_encoded_now(shared, database, &owned, sequence, &bytes)
        })
    }
}
