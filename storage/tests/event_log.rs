//! The `EventLog` contract against the memory and redb logs, and redb's durability across
//! reopening.

use geppetto_storage::{EventId, EventLog, MemoryEventLog, RedbFile, StorageConfig};
use support::snapshots::zone;

fn ids(raw: &[u64]) -> Vec<EventId> {
    raw.iter().copied().map(EventId::new).collect()
}

fn check_log(log: &dyn EventLog) {
    let north = zone("north");
    let south = zone("south");
    assert_eq!(log.last_id(&north).expect("last_id"), None);
    assert!(log.read_after(&north, None, 10).expect("read").is_empty());

    assert_eq!(log.append(&north, b"n1").expect("append"), EventId::new(1));
    assert_eq!(log.append(&north, b"n2").expect("append"), EventId::new(2));
    assert_eq!(
        log.append(&south, b"s1").expect("append"),
        EventId::new(1),
        "zones count apart"
    );
    let batch: Vec<Vec<u8>> = (3..=7).map(|i| format!("n{i}").into_bytes()).collect();
    assert_eq!(
        log.append_batch(&north, &batch).expect("batch"),
        ids(&[3, 4, 5, 6, 7])
    );
    assert_eq!(
        log.append_batch(&north, &[]).expect("empty batch"),
        ids(&[])
    );
    assert_eq!(log.last_id(&north).expect("last_id"), Some(EventId::new(7)));
    assert_eq!(log.last_id(&south).expect("last_id"), Some(EventId::new(1)));

    // Page through north three at a time.
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = log.read_after(&north, after, 3).expect("read");
        assert!(page.len() <= 3);
        let Some((last, _)) = page.last() else { break };
        after = Some(*last);
        seen.extend(page);
    }
    let expected: Vec<(EventId, Vec<u8>)> = (1..=7)
        .map(|i| (EventId::new(i), format!("n{i}").into_bytes()))
        .collect();
    assert_eq!(seen, expected);
    assert_eq!(
        log.read_after(&north, Some(EventId::new(5)), 100)
            .expect("read")
            .len(),
        2
    );
    assert!(
        log.read_after(&north, Some(EventId::new(u64::MAX)), 10)
            .expect("read")
            .is_empty()
    );
    assert!(log.read_after(&north, None, 0).expect("read").is_empty());
    assert_eq!(
        log.read_after(&south, None, 10).expect("read"),
        vec![(EventId::new(1), b"s1".to_vec())]
    );
}

#[test]
fn memory_log_keeps_the_contract() {
    check_log(&MemoryEventLog::new());
}

#[test]
fn redb_log_keeps_the_contract_and_survives_reopening() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("geppetto.redb");
    {
        let file = RedbFile::open(&path, &StorageConfig::default()).expect("opens");
        check_log(&file.event_log());
    }
    let file = RedbFile::open(&path, &StorageConfig::default()).expect("reopens");
    let log = file.event_log();
    let north = zone("north");
    assert_eq!(log.last_id(&north).expect("last_id"), Some(EventId::new(7)));
    assert_eq!(
        log.append(&north, b"n8").expect("append"),
        EventId::new(8),
        "ids continue"
    );
    assert_eq!(log.read_after(&north, None, 100).expect("read").len(), 8);
}
