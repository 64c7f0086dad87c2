//! The shared `SnapshotStore` suite against the memory and redb stores, plus what only redb
//! can show (the Redis store's are in `redis_store.rs`: they need a `redis-server`).

use geppetto_storage::{MemorySnapshotStore, RedbFile, SnapshotStore, StorageConfig};
use support::snapshot_suite as suite;
use support::snapshots::{snapshot, zone};

#[tokio::test]
async fn memory_store_passes_the_suite() {
    let store = MemorySnapshotStore::new(&StorageConfig::default()).expect("valid config");
    suite::run_all(&store, "mem").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redb_store_passes_the_suite() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file =
        RedbFile::open(dir.path().join("geppetto.redb"), &StorageConfig::default()).expect("opens");
    suite::run_all(&file.snapshot_store(), "redb").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redb_snapshots_survive_reopening() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("geppetto.redb");
    let village = zone("village");
    {
        let file = RedbFile::open(&path, &StorageConfig::default()).expect("opens");
        let store = file.snapshot_store();
        store.put(snapshot(&village, 1, 1)).await.expect("put");
        store.put(snapshot(&village, 2, 1)).await.expect("put");
    }
    let file = RedbFile::open(&path, &StorageConfig::default()).expect("reopens");
    let latest = file
        .snapshot_store()
        .latest_valid(&village, 1)
        .await
        .expect("latest_valid");
    assert_eq!(latest.snapshot, Some(snapshot(&village, 2, 1)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_open_of_a_redb_file_is_refused_with_its_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("geppetto.redb");
    let _first = RedbFile::open(&path, &StorageConfig::default()).expect("opens");
    let error = RedbFile::open(&path, &StorageConfig::default()).expect_err("already open");
    assert!(error.to_string().contains("geppetto.redb"), "{error}");
}
