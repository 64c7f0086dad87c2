//! Crash consistency of the redb snapshot store.
//!
//! Two angles: a real process killed with SIGKILL in the middle of a loop of large puts (this
//! test binary re-runs itself as the writer), and a storage backend that keeps the durable
//! image apart from the writes since, so a crash at every write of a commit — with the last
//! write torn — can be replayed, and a write can be made to fail.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use geppetto_storage::{RedbFile, Snapshot, SnapshotStore, StorageConfig, ZoneName};
use support::snapshots::{payload_for, zone};

/// Set (to a file path) when this binary runs as the writer child.
const WRITER_FILE_ENV: &str = "GEPPETTO_STORAGE_CRASH_WRITER_FILE";
const WRITER_ZONE: &str = "crash";
const WRITER_PAYLOAD_BYTES: usize = 4 * 1024 * 1024;

fn big_snapshot(zone: &ZoneName, sequence: u64) -> Snapshot {
    Snapshot {
        zone: zone.clone(),
        sequence,
        last_event_id: sequence.to_string(),
        game_time_ticks: sequence,
        schema_version: 1,
        payload: payload_for(sequence, WRITER_PAYLOAD_BYTES),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Writes big snapshots and prints `committed N` after each put returns. As the child of
/// `sigkill_mid_put_keeps_the_last_complete_snapshot` it loops until killed; run normally it
/// writes a few and checks them, so it is a test in its own right.
#[test]
fn crash_writer() {
    let child_file = std::env::var_os(WRITER_FILE_ENV);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = child_file
        .clone()
        .map_or_else(|| dir.path().join("writer.redb"), Into::into);
    let rounds = if child_file.is_some() { u64::MAX } else { 3 };
    let runtime = runtime();
    runtime.block_on(async {
        let zone = zone(WRITER_ZONE);
        let file = RedbFile::open(&path, &StorageConfig::default()).expect("opens");
        let store = file.snapshot_store();
        let start = store
            .latest_valid(&zone, 1)
            .await
            .expect("latest_valid")
            .snapshot
            .map_or(1, |snapshot| snapshot.sequence + 1);
        for sequence in (start..).take(usize::try_from(rounds).unwrap_or(usize::MAX)) {
            store.put(big_snapshot(&zone, sequence)).await.expect("put");
            println!("committed {sequence}");
        }
        let latest = store.latest_valid(&zone, 1).await.expect("latest_valid");
        assert_eq!(latest.snapshot, Some(big_snapshot(&zone, start + 2)));
    });
}

#[test]
fn sigkill_mid_put_keeps_the_last_complete_snapshot() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("crash.redb");
    let exe = std::env::current_exe().expect("test binary path");
    let zone = zone(WRITER_ZONE);
    let mut last_committed = 0;
    // Kill at a different moment of the write loop each round.
    for (round, extra_delay_ms) in [0u64, 7, 19, 31].into_iter().enumerate() {
        let mut child = Command::new(&exe)
            .args(["crash_writer", "--exact", "--nocapture", "--test-threads=1"])
            .env(WRITER_FILE_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn writer");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut commits_this_round = 0;
        while commits_this_round < 3 {
            assert!(Instant::now() < deadline, "writer made no progress");
            let line = lines
                .next()
                .expect("writer exited early")
                .expect("readable output");
            if let Some(sequence) = line.strip_prefix("committed ") {
                last_committed = sequence.parse().expect("a sequence");
                commits_this_round += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(extra_delay_ms));
        child.kill().expect("SIGKILL the writer");
        // Commits reported after the kill was sent still count.
        for line in lines.map_while(Result::ok) {
            if let Some(sequence) = line.strip_prefix("committed ") {
                last_committed = sequence.parse().expect("a sequence");
            }
        }
        child.wait().expect("reap the writer");

        let recovered = runtime().block_on(async {
            let file = RedbFile::open(&path, &StorageConfig::default()).expect("reopens");
            file.snapshot_store()
                .latest_valid(&zone, 1)
                .await
                .expect("latest_valid")
        });
        assert!(
            recovered.skipped.is_empty(),
            "round {round}: {:?}",
            recovered.skipped
        );
        let snapshot = recovered.snapshot.expect("a snapshot survives");
        assert!(
            snapshot.sequence >= last_committed,
            "round {round}: recovered {} but {last_committed} was acknowledged",
            snapshot.sequence
        );
        assert_eq!(
            snapshot,
            big_snapshot(&zone, snapshot.sequence),
            "round {round}"
        );
        last_committed = snapshot.sequence;
    }
}

/// A redb backend in memory that journals every write and resize once recording starts, so
/// the bytes on disk at any crash point can be rebuilt from the image before the journal (the
/// durable state) plus a prefix of it, the last write possibly torn; it can also fail the next
/// write on demand.
#[derive(Clone, Debug, Default)]
struct FaultyBackend {
    state: Arc<Mutex<BackendState>>,
}

#[derive(Debug, Default)]
struct BackendState {
    live: Vec<u8>,
    /// Every write and resize since `recording` started, in order.
    journal: Vec<Operation>,
    recording: bool,
    fail_next_write: bool,
}

#[derive(Clone, Debug)]
enum Operation {
    Write { offset: u64, data: Vec<u8> },
    SetLen(u64),
}

fn apply(bytes: &mut Vec<u8>, operation: &Operation, torn: bool) {
    match operation {
        Operation::SetLen(len) => bytes.resize(usize::try_from(*len).expect("fits"), 0),
        Operation::Write { offset, data } => {
            let offset = usize::try_from(*offset).expect("fits");
            let data = if torn {
                &data[..data.len() / 2]
            } else {
                &data[..]
            };
            if bytes.len() < offset + data.len() {
                bytes.resize(offset + data.len(), 0);
            }
            bytes[offset..offset + data.len()].copy_from_slice(data);
        }
    }
}

impl FaultyBackend {
    fn from_image(image: Vec<u8>) -> Self {
        let backend = Self::default();
        backend.lock().live = image;
        backend
    }

    fn lock(&self) -> MutexGuard<'_, BackendState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl redb::StorageBackend for FaultyBackend {
    fn len(&self) -> Result<u64, std::io::Error> {
        Ok(self.lock().live.len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), std::io::Error> {
        let state = self.lock();
        let start = usize::try_from(offset).map_err(std::io::Error::other)?;
        let source = state
            .live
            .get(start..start + out.len())
            .ok_or_else(|| std::io::Error::other("read past the end"))?;
        out.copy_from_slice(source);
        Ok(())
    }

    fn set_len(&self, len: u64) -> Result<(), std::io::Error> {
        let mut state = self.lock();
        let operation = Operation::SetLen(len);
        apply(&mut state.live, &operation, false);
        if state.recording {
            state.journal.push(operation);
        }
        Ok(())
    }

    fn sync_data(&self) -> Result<(), std::io::Error> {
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), std::io::Error> {
        let mut state = self.lock();
        if state.fail_next_write {
            state.fail_next_write = false;
            return Err(std::io::Error::other("injected write failure"));
        }
        let operation = Operation::Write {
            offset,
            data: data.to_vec(),
        };
        apply(&mut state.live, &operation, false);
        if state.recording {
            state.journal.push(operation);
        }
        Ok(())
    }
}

fn recover(image: Vec<u8>, zone: &ZoneName) -> Option<Snapshot> {
    let file = RedbFile::open_with_backend(
        FaultyBackend::from_image(image),
        "crash image",
        &StorageConfig::default(),
    )
    .expect("a crash image reopens");
    let latest = runtime()
        .block_on(file.snapshot_store().latest_valid(zone, 1))
        .expect("latest_valid");
    assert!(latest.skipped.is_empty(), "{:?}", latest.skipped);
    latest.snapshot
}

fn medium_snapshot(zone: &ZoneName, sequence: u64) -> Snapshot {
    Snapshot {
        payload: payload_for(sequence, 64 * 1024),
        ..big_snapshot(zone, sequence)
    }
}

#[test]
fn a_crash_at_any_write_of_a_put_recovers_the_old_or_the_new_snapshot() {
    let zone = zone("torn");
    let backend = FaultyBackend::default();
    let file = RedbFile::open_with_backend(backend.clone(), "faulty", &StorageConfig::default())
        .expect("opens");
    let store = file.snapshot_store();
    let runtime = runtime();
    for sequence in 1..=2 {
        runtime
            .block_on(store.put(medium_snapshot(&zone, sequence)))
            .expect("put");
    }
    let base = {
        let mut state = backend.lock();
        state.recording = true;
        state.live.clone()
    };
    runtime
        .block_on(store.put(medium_snapshot(&zone, 3)))
        .expect("put 3");
    let journal = std::mem::take(&mut backend.lock().journal);
    assert!(
        journal.len() >= 2,
        "a put writes more than once: {journal:?}"
    );

    let mut outcomes = Vec::new();
    for crash_at in 0..=journal.len() {
        for torn in [false, true] {
            if torn && crash_at == journal.len() {
                continue;
            }
            let mut image = base.clone();
            for operation in &journal[..crash_at] {
                apply(&mut image, operation, false);
            }
            if torn {
                apply(&mut image, &journal[crash_at], true);
            }
            let recovered = recover(image, &zone).expect("a snapshot survives");
            assert_eq!(
                recovered,
                medium_snapshot(&zone, recovered.sequence),
                "crash after {crash_at} writes (torn: {torn})"
            );
            assert!(
                recovered.sequence == 2 || recovered.sequence == 3,
                "crash after {crash_at} writes recovered {}",
                recovered.sequence
            );
            outcomes.push(recovered.sequence);
        }
    }
    assert_eq!(
        outcomes.first(),
        Some(&2),
        "nothing written: the old snapshot"
    );
    assert_eq!(
        outcomes.last(),
        Some(&3),
        "everything written: the new snapshot"
    );
}

#[test]
fn a_failed_write_fails_the_put_and_keeps_the_previous_snapshot() {
    let zone = zone("failing");
    let backend = FaultyBackend::default();
    let file = RedbFile::open_with_backend(backend.clone(), "faulty", &StorageConfig::default())
        .expect("opens");
    let store = file.snapshot_store();
    let runtime = runtime();
    runtime
        .block_on(store.put(medium_snapshot(&zone, 1)))
        .expect("put 1");
    backend.lock().fail_next_write = true;
    let error = runtime
        .block_on(store.put(medium_snapshot(&zone, 2)))
        .expect_err("the write failure surfaces");
    let message = error.to_string();
    assert!(
        message.contains("faulty") && message.contains("failing"),
        "{message}"
    );
    // Whatever reached the disk before the failure, reopening finds snapshot 1 intact.
    let on_disk = backend.lock().live.clone();
    drop(store);
    drop(file);
    assert_eq!(recover(on_disk, &zone), Some(medium_snapshot(&zone, 1)));
}
