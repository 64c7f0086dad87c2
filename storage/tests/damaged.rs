//! A damaged or full redb file: never a panic, an acknowledged event never lost.
//!
//! Damage: a file with snapshots and events gets random bytes across its second half, or is cut
//! short; opening it (with and without the integrity check) and every call on it afterwards
//! either work or fail with an error naming the file — nothing panics. Full: a backend with a
//! byte budget fails writes past it like a full disk; the failed append or put is an error, the
//! store opens the database again by itself, and once there is room the next write lands with
//! every event acknowledged before it.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use geppetto_storage::{EventId, EventLog, RedbFile, SnapshotStore, StorageConfig};
use support::snapshots::{snapshot, zone};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime")
}

/// SplitMix64: the damage is the same on every run.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

/// A healthy file: three zones with events and snapshots.
fn healthy_file(path: &std::path::Path) {
    let file = RedbFile::open(path, &StorageConfig::default()).expect("opens");
    let log = file.event_log();
    let store = file.snapshot_store();
    let runtime = runtime();
    for name in ["north", "south", "east"] {
        let zone = zone(name);
        for round in 0..20u64 {
            let batch: Vec<Vec<u8>> = (0..50)
                .map(|i| {
                    format!(
                        "{{\"event\":{round},\"i\":{i},\"pad\":\"{}\"}}",
                        "x".repeat(200)
                    )
                })
                .map(String::into_bytes)
                .collect();
            log.append_batch(&zone, &batch).expect("append");
        }
        for sequence in 1..=3 {
            runtime
                .block_on(store.put(snapshot(&zone, sequence, 1)))
                .expect("put");
        }
    }
}

/// Every read and write the service makes, on every zone; each must return, not panic.
fn exercise(file: &RedbFile) -> Vec<String> {
    let log = file.event_log();
    let store = file.snapshot_store();
    let runtime = runtime();
    let mut errors = Vec::new();
    for name in ["north", "south", "east"] {
        let zone = zone(name);
        if let Err(e) = log.last_id(&zone) {
            errors.push(e.to_string());
        }
        let mut after = None;
        loop {
            match log.read_after(&zone, after, 100) {
                Ok(page) => match page.last() {
                    Some((last, _)) => after = Some(*last),
                    None => break,
                },
                Err(e) => {
                    errors.push(e.to_string());
                    break;
                }
            }
        }
        if let Err(e) = log.append(&zone, b"after the damage") {
            errors.push(e.to_string());
        }
        let results = runtime.block_on(async {
            [
                store.list(&zone).await.err(),
                store.latest_valid(&zone, 1).await.err(),
                store.get(&zone, 2, 1).await.err(),
                store.put(snapshot(&zone, 10, 1)).await.err(),
                store.prune(&zone, 1).await.err(),
            ]
        });
        errors.extend(results.into_iter().flatten().map(|e| e.to_string()));
    }
    errors
}

fn check_damaged(label: &str, bytes: &[u8]) {
    for verify_on_open in [true, false] {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("damaged.redb");
        std::fs::write(&path, bytes).expect("write damaged file");
        let mut config = StorageConfig::default();
        config.redb.verify_on_open = verify_on_open;
        let outcome = catch_unwind(AssertUnwindSafe(|| match RedbFile::open(&path, &config) {
            Ok(file) => {
                for error in exercise(&file) {
                    assert!(
                        error.contains(&path.display().to_string()),
                        "{label}: an error names the file: {error}"
                    );
                }
            }
            Err(error) => {
                let message = error.to_string();
                assert!(
                    message.contains(&path.display().to_string()) && !message.contains('\n'),
                    "{label}: one line naming the file: {message}"
                );
            }
        }));
        assert!(
            outcome.is_ok(),
            "{label} (verify_on_open {verify_on_open}): a damaged file made the store panic"
        );
    }
}

#[test]
fn random_bytes_across_the_second_half_never_panic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("healthy.redb");
    healthy_file(&path);
    let healthy = std::fs::read(&path).expect("read");
    assert!(healthy.len() > 64 * 1024, "{} bytes", healthy.len());
    for seed in 1..=6u64 {
        let mut damaged = healthy.clone();
        let half = damaged.len() / 2;
        let span = damaged.len() - half;
        damaged[half..].copy_from_slice(&noise(seed, span));
        check_damaged(&format!("second half random, seed {seed}"), &damaged);
        // Scattered bytes: a page here and there.
        let mut scattered = healthy.clone();
        for (index, byte) in noise(seed * 31, 64).into_iter().enumerate() {
            let at = half + (usize::from(byte) * 997 + index * 4099) % span;
            scattered[at] ^= 0xa5;
        }
        check_damaged(&format!("scattered bytes, seed {seed}"), &scattered);
    }
}

#[test]
fn a_truncated_file_never_panics() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("healthy.redb");
    healthy_file(&path);
    let healthy = std::fs::read(&path).expect("read");
    for keep in [7, 8, 9, 10, 12] {
        let cut = healthy.len() * keep / 13;
        check_damaged(&format!("cut to {cut} bytes"), &healthy[..cut]);
    }
    check_damaged("cut to 100 bytes", &healthy[..100]);
}

/// A redb backend in memory with a byte budget: a write or resize past it fails like a full
/// disk. Clones share the bytes, as reopening a file finds what was written.
#[derive(Clone, Debug)]
struct FullDisk {
    state: Arc<Mutex<Disk>>,
}

#[derive(Debug)]
struct Disk {
    bytes: Vec<u8>,
    capacity: u64,
    refused: u64,
}

impl FullDisk {
    fn new(capacity: u64) -> Self {
        Self {
            state: Arc::new(Mutex::new(Disk {
                bytes: Vec::new(),
                capacity,
                refused: 0,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Disk> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn no_space() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::StorageFull, "No space left on device")
}

impl redb::StorageBackend for FullDisk {
    fn len(&self) -> Result<u64, std::io::Error> {
        Ok(self.lock().bytes.len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), std::io::Error> {
        let disk = self.lock();
        let start = usize::try_from(offset).map_err(std::io::Error::other)?;
        let source = disk
            .bytes
            .get(start..start + out.len())
            .ok_or_else(|| std::io::Error::other("read past the end"))?;
        out.copy_from_slice(source);
        Ok(())
    }

    fn set_len(&self, len: u64) -> Result<(), std::io::Error> {
        let mut disk = self.lock();
        if len > disk.capacity {
            disk.refused += 1;
            return Err(no_space());
        }
        disk.bytes
            .resize(usize::try_from(len).map_err(std::io::Error::other)?, 0);
        Ok(())
    }

    fn sync_data(&self) -> Result<(), std::io::Error> {
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), std::io::Error> {
        let mut disk = self.lock();
        let end = offset + data.len() as u64;
        if end > disk.capacity {
            disk.refused += 1;
            return Err(no_space());
        }
        let start = usize::try_from(offset).map_err(std::io::Error::other)?;
        let end = usize::try_from(end).map_err(std::io::Error::other)?;
        if disk.bytes.len() < end {
            disk.bytes.resize(end, 0);
        }
        disk.bytes[start..end].copy_from_slice(data);
        Ok(())
    }
}

/// A snapshot larger than any free room left in the file.
fn big_snapshot(zone: &geppetto_storage::ZoneName, sequence: u64) -> geppetto_storage::Snapshot {
    geppetto_storage::Snapshot {
        payload: support::snapshots::payload_for(sequence, 1024 * 1024),
        ..snapshot(zone, sequence, 1)
    }
}

fn event(i: u64) -> Vec<u8> {
    format!("{{\"event\":{i},\"pad\":\"{}\"}}", "y".repeat(500)).into_bytes()
}

/// Appends until the disk is full, then frees room: the failed append is an error, the next
/// one after room is made lands without a restart, and every acknowledged event is there.
#[test]
fn a_full_disk_fails_the_write_and_the_store_recovers_once_there_is_room() {
    let disk = FullDisk::new(2 * 1024 * 1024);
    let file = RedbFile::open_with_backend(disk.clone(), "full-disk", &StorageConfig::default())
        .expect("opens");
    let log = file.event_log();
    let store = file.snapshot_store();
    let runtime = runtime();
    let north = zone("north");
    let mut acknowledged: Vec<(EventId, Vec<u8>)> = Vec::new();
    let mut next = 0u64;
    let failure = loop {
        let batch: Vec<Vec<u8>> = (next..next + 20).map(event).collect();
        match log.append_batch(&north, &batch) {
            Ok(ids) => {
                acknowledged.extend(ids.into_iter().zip(batch));
                next += 20;
            }
            Err(error) => break error.to_string(),
        }
        assert!(next < 1_000_000, "the disk never filled");
    };
    assert!(failure.contains("full-disk"), "{failure}");
    assert!(disk.lock().refused > 0);
    // Still full: the next write fails too, with an error, not a panic.
    assert!(log.append(&north, &event(next)).is_err());
    let put = runtime.block_on(store.put(big_snapshot(&north, 1)));
    assert!(put.is_err(), "a put that does not fit fails: {put:?}");

    // Room is made (the operator freed space): the same store writes again.
    disk.lock().capacity = u64::MAX;
    let batch: Vec<Vec<u8>> = (next..next + 20).map(event).collect();
    let ids = log
        .append_batch(&north, &batch)
        .expect("appends once there is room");
    acknowledged.extend(ids.into_iter().zip(batch));
    runtime
        .block_on(store.put(big_snapshot(&north, 1)))
        .expect("puts once there is room");

    let read = log.read_after(&north, None, usize::MAX).expect("reads");
    assert_eq!(
        read, acknowledged,
        "every acknowledged event, in order, nothing else"
    );
    drop((log, store, file));
    // And as a restart finds it.
    let reopened =
        RedbFile::open_with_backend(disk.clone(), "full-disk", &StorageConfig::default())
            .expect("reopens");
    let read = reopened
        .event_log()
        .read_after(&north, None, usize::MAX)
        .expect("reads");
    assert_eq!(read, acknowledged);
    let latest = runtime
        .block_on(reopened.snapshot_store().latest_valid(&north, 1))
        .expect("latest_valid");
    assert_eq!(latest.snapshot, Some(big_snapshot(&north, 1)));
}
