//! In-memory snapshot store and event log, for tests and tools.
//!
//! Owns nothing durable: everything is lost with the process. It keeps snapshots *encoded*, so
//! it runs exactly the checks the durable stores run and a test can corrupt a stored snapshot
//! through [`SnapshotStore::put_encoded`]. It does not simulate crashes; the redb tests do that.
//!
//! A std `Mutex` guards the maps: it is never held across an `.await` (every method finishes
//! its work before returning a ready future). A writer that panicked cannot leave a map
//! half-updated (each update is a single insert or removal), so a poisoned lock is read through.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::config::{ConfigError, StorageConfig};
use crate::event_log::{EventId, EventLog, EventLogError, next_id};
use crate::snapshot::{MAX_HEADER_BYTES, Snapshot, SnapshotHeader};
use crate::store::{
    LatestValid, ListedSnapshot, PutOutcome, SnapshotError, SnapshotStore, StoreFuture,
    accept_or_skip, decode_for_get, encode_for_put,
};
use crate::zone::ZoneName;

type ZoneSnapshots = BTreeMap<u64, Vec<u8>>;

/// Snapshots in a map, encoded as the durable stores encode them.
#[derive(Debug)]
pub struct MemorySnapshotStore {
    snapshots: Mutex<HashMap<ZoneName, ZoneSnapshots>>,
    snapshots_kept_per_zone: usize,
}

impl MemorySnapshotStore {
    /// An empty store keeping `config.snapshots_kept_per_zone` snapshots per zone.
    pub fn new(config: &StorageConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self {
            snapshots: Mutex::new(HashMap::new()),
            snapshots_kept_per_zone: config.snapshots_kept_per_zone,
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<ZoneName, ZoneSnapshots>> {
        self.snapshots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn location(zone: &ZoneName, sequence: u64) -> String {
        format!("memory:{zone}/{sequence}")
    }

    fn put_now(&self, snapshot: &Snapshot) -> Result<PutOutcome, SnapshotError> {
        let bytes = encode_for_put(snapshot)?;
        let encoded_bytes = bytes.len() as u64;
        let mut all = self.lock();
        let zone = all.entry(snapshot.zone.clone()).or_default();
        if let Some((&newest, _)) = zone.last_key_value()
            && newest >= snapshot.sequence
        {
            return Err(SnapshotError::SequenceNotIncreasing {
                zone: snapshot.zone.clone(),
                sequence: snapshot.sequence,
                newest,
            });
        }
        zone.insert(snapshot.sequence, bytes);
        let pruned = prune_map(zone, self.snapshots_kept_per_zone);
        Ok(PutOutcome {
            encoded_bytes,
            pruned,
        })
    }

    fn latest_valid_now(&self, zone: &ZoneName, supported: u32) -> LatestValid {
        let all = self.lock();
        let mut skipped = Vec::new();
        let snapshot = all.get(zone).and_then(|snapshots| {
            snapshots.iter().rev().find_map(|(&sequence, bytes)| {
                accept_or_skip(
                    zone,
                    sequence,
                    || Self::location(zone, sequence),
                    Some(bytes),
                    supported,
                    &mut skipped,
                )
            })
        });
        LatestValid { snapshot, skipped }
    }

    fn get_now(
        &self,
        zone: &ZoneName,
        sequence: u64,
        supported: u32,
    ) -> Result<Option<Snapshot>, SnapshotError> {
        let all = self.lock();
        match all.get(zone).and_then(|snapshots| snapshots.get(&sequence)) {
            None => Ok(None),
            Some(bytes) => decode_for_get(
                zone,
                sequence,
                || Self::location(zone, sequence),
                bytes,
                supported,
            )
            .map(Some),
        }
    }

    fn list_now(&self, zone: &ZoneName) -> Vec<ListedSnapshot> {
        let all = self.lock();
        all.get(zone)
            .map(|snapshots| {
                snapshots
                    .iter()
                    .map(|(&sequence, bytes)| ListedSnapshot {
                        sequence,
                        header: SnapshotHeader::decode(
                            bytes.get(..MAX_HEADER_BYTES).unwrap_or(bytes),
                        ),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Removes all but the newest `keep_last` entries; returns the removed keys, oldest first.
fn prune_map(snapshots: &mut ZoneSnapshots, keep_last: usize) -> Vec<u64> {
    let excess = snapshots.len().saturating_sub(keep_last);
    let removed: Vec<u64> = snapshots.keys().take(excess).copied().collect();
    for sequence in &removed {
        snapshots.remove(sequence);
    }
    removed
}

impl SnapshotStore for MemorySnapshotStore {
    fn put(&self, snapshot: Snapshot) -> StoreFuture<'_, PutOutcome> {
        let result = self.put_now(&snapshot);
        Box::pin(async move { result })
    }

    fn latest_valid<'a>(
        &'a self,
        zone: &'a ZoneName,
        supported_schema_version: u32,
    ) -> StoreFuture<'a, LatestValid> {
        let result = self.latest_valid_now(zone, supported_schema_version);
        Box::pin(async move { Ok(result) })
    }

    fn get<'a>(
        &'a self,
        zone: &'a ZoneName,
        sequence: u64,
        supported_schema_version: u32,
    ) -> StoreFuture<'a, Option<Snapshot>> {
        let result = self.get_now(zone, sequence, supported_schema_version);
        Box::pin(async move { result })
    }

    fn list<'a>(&'a self, zone: &'a ZoneName) -> StoreFuture<'a, Vec<ListedSnapshot>> {
        let result = self.list_now(zone);
        Box::pin(async move { Ok(result) })
    }

    fn prune<'a>(&'a self, zone: &'a ZoneName, keep_last: usize) -> StoreFuture<'a, Vec<u64>> {
        let removed = self
            .lock()
            .get_mut(zone)
            .map(|snapshots| prune_map(snapshots, keep_last))
            .unwrap_or_default();
        Box::pin(async move { Ok(removed) })
    }

    fn get_encoded<'a>(
        &'a self,
        zone: &'a ZoneName,
        sequence: u64,
    ) -> StoreFuture<'a, Option<Vec<u8>>> {
        let bytes = self
            .lock()
            .get(zone)
            .and_then(|snapshots| snapshots.get(&sequence).cloned());
        Box::pin(async move { Ok(bytes) })
    }

    fn put_encoded<'a>(
        &'a self,
        zone: &'a ZoneName,
        sequence: u64,
        bytes: Vec<u8>,
    ) -> StoreFuture<'a, ()> {
        self.lock()
            .entry(zone.clone())
            .or_default()
            .insert(sequence, bytes);
        Box::pin(async move { Ok(()) })
    }
}

/// A world-event log in a map.
#[derive(Debug, Default)]
pub struct MemoryEventLog {
    events: Mutex<HashMap<ZoneName, BTreeMap<u64, Vec<u8>>>>,
}

impl MemoryEventLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<ZoneName, BTreeMap<u64, Vec<u8>>>> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl EventLog for MemoryEventLog {
    fn append(&self, zone: &ZoneName, event: &[u8]) -> Result<EventId, EventLogError> {
        let mut all = self.lock();
        let log = all.entry(zone.clone()).or_default();
        let last = log.last_key_value().map_or(0, |(&id, _)| id);
        let id = next_id(zone, last)?;
        log.insert(id.get(), event.to_vec());
        Ok(id)
    }

    fn append_batch(
        &self,
        zone: &ZoneName,
        events: &[Vec<u8>],
    ) -> Result<Vec<EventId>, EventLogError> {
        let mut all = self.lock();
        let log = all.entry(zone.clone()).or_default();
        let mut last = log.last_key_value().map_or(0, |(&id, _)| id);
        // Checked before inserting anything, so a batch is all or nothing.
        if !events.is_empty() {
            next_id(zone, last.saturating_add(events.len() as u64 - 1))?;
        }
        let mut ids = Vec::with_capacity(events.len());
        for event in events {
            let id = next_id(zone, last)?;
            log.insert(id.get(), event.clone());
            ids.push(id);
            last = id.get();
        }
        Ok(ids)
    }

    fn read_after(
        &self,
        zone: &ZoneName,
        after: Option<EventId>,
        limit: usize,
    ) -> Result<Vec<(EventId, Vec<u8>)>, EventLogError> {
        let all = self.lock();
        let start = after.map_or(0, EventId::get);
        Ok(all
            .get(zone)
            .map(|log| {
                log.range((std::ops::Bound::Excluded(start), std::ops::Bound::Unbounded))
                    .take(limit)
                    .map(|(&id, event)| (EventId::new(id), event.clone()))
                    .collect()
            })
            .unwrap_or_default())
    }

    fn last_id(&self, zone: &ZoneName) -> Result<Option<EventId>, EventLogError> {
        Ok(self
            .lock()
            .get(zone)
            .and_then(|log| log.last_key_value().map(|(&id, _)| EventId::new(id))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_that_would_wrap_appends_nothing() {
        let zone = ZoneName::new("z").expect("valid zone");
        let log = MemoryEventLog::new();
        log.lock()
            .entry(zone.clone())
            .or_default()
            .insert(u64::MAX - 1, b"old".to_vec());
        let result = log.append_batch(&zone, &[b"a".to_vec(), b"b".to_vec()]);
        assert!(matches!(result, Err(EventLogError::IdsExhausted { .. })));
        assert_eq!(
            log.last_id(&zone).ok().flatten(),
            Some(EventId::new(u64::MAX - 1))
        );
    }
}
