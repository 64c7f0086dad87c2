//! The behaviour every `SnapshotStore` must show, run against memory, redb and Redis. Each
//! check uses its own zone (named from `prefix`) so runs against a shared server do not meet.
//! The store must keep 3 snapshots per zone (the default).

use geppetto_storage::{SnapshotDefect, SnapshotError, SnapshotStore, ZoneName};

use crate::snapshots::{snapshot, zone};

pub async fn run_all(store: &dyn SnapshotStore, prefix: &str) {
    round_trip_and_retention(store, &zone(&format!("{prefix}-round-trip"))).await;
    zones_are_independent(store, prefix).await;
    corrupt_snapshots_are_skipped(store, &zone(&format!("{prefix}-corrupt"))).await;
    newer_schema_is_refused(store, &zone(&format!("{prefix}-schema"))).await;
    nothing_valid_means_full_replay(store, &zone(&format!("{prefix}-all-bad"))).await;
}

async fn sequences_listed(store: &dyn SnapshotStore, zone: &ZoneName) -> Vec<u64> {
    store
        .list(zone)
        .await
        .expect("list")
        .iter()
        .map(|listed| listed.sequence)
        .collect()
}

async fn round_trip_and_retention(store: &dyn SnapshotStore, zone: &ZoneName) {
    let empty = store.latest_valid(zone, 1).await.expect("latest_valid");
    assert_eq!(empty.snapshot, None);
    assert!(empty.skipped.is_empty());
    assert!(store.list(zone).await.expect("list").is_empty());

    let first = snapshot(zone, 1, 1);
    let outcome = store.put(first.clone()).await.expect("put 1");
    assert!(outcome.encoded_bytes > first.payload.len() as u64);
    assert!(outcome.pruned.is_empty());
    store.put(snapshot(zone, 2, 1)).await.expect("put 2");

    let latest = store.latest_valid(zone, 1).await.expect("latest_valid");
    assert_eq!(latest.snapshot, Some(snapshot(zone, 2, 1)));
    assert!(latest.skipped.is_empty());
    assert_eq!(store.get(zone, 1, 1).await.expect("get"), Some(first));
    assert_eq!(store.get(zone, 9, 1).await.expect("get"), None);

    let listed = store.list(zone).await.expect("list");
    assert_eq!(listed.len(), 2);
    let header = listed[1].header.as_ref().expect("header readable");
    assert_eq!(listed[1].sequence, 2);
    assert_eq!(header.last_event_id, "1700000000000-2");
    assert_eq!(header.game_time_ticks, 120);

    for stale in [2, 1] {
        match store.put(snapshot(zone, stale, 1)).await {
            Err(SnapshotError::SequenceNotIncreasing {
                sequence, newest, ..
            }) => assert_eq!((sequence, newest), (stale, 2)),
            other => panic!("stale sequence {stale} was not refused: {other:?}"),
        }
    }
    assert_eq!(sequences_listed(store, zone).await, vec![1, 2]);

    store.put(snapshot(zone, 3, 1)).await.expect("put 3");
    let outcome = store.put(snapshot(zone, 10, 1)).await.expect("put 10");
    assert_eq!(outcome.pruned, vec![1], "keeps the newest 3");
    assert_eq!(sequences_listed(store, zone).await, vec![2, 3, 10]);
    assert_eq!(store.get(zone, 1, 1).await.expect("get"), None);

    assert_eq!(store.prune(zone, 1).await.expect("prune"), vec![2, 3]);
    assert_eq!(sequences_listed(store, zone).await, vec![10]);
    assert_eq!(
        store.prune(zone, 1).await.expect("prune"),
        Vec::<u64>::new()
    );
    let latest = store.latest_valid(zone, 1).await.expect("latest_valid");
    assert_eq!(latest.snapshot.map(|s| s.sequence), Some(10));
}

async fn zones_are_independent(store: &dyn SnapshotStore, prefix: &str) {
    let north = zone(&format!("{prefix}-north"));
    let south = zone(&format!("{prefix}-south"));
    store.put(snapshot(&north, 5, 1)).await.expect("put north");
    store
        .put(snapshot(&south, 1, 1))
        .await
        .expect("a lower sequence in another zone");
    let latest = store.latest_valid(&south, 1).await.expect("latest_valid");
    assert_eq!(latest.snapshot, Some(snapshot(&south, 1, 1)));
    store.prune(&south, 0).await.expect("prune all of south");
    assert_eq!(sequences_listed(store, &south).await, Vec::<u64>::new());
    assert_eq!(sequences_listed(store, &north).await, vec![5]);
}

async fn corrupt_snapshots_are_skipped(store: &dyn SnapshotStore, zone: &ZoneName) {
    for sequence in 1..=3 {
        store.put(snapshot(zone, sequence, 1)).await.expect("put");
    }
    // Flip one payload byte of the newest.
    let mut flipped = store
        .get_encoded(zone, 3)
        .await
        .expect("read")
        .expect("present");
    let last = flipped.len() - 1;
    flipped[last] ^= 0x01;
    store
        .put_encoded(zone, 3, flipped)
        .await
        .expect("overwrite");

    let latest = store.latest_valid(zone, 1).await.expect("latest_valid");
    assert_eq!(latest.snapshot, Some(snapshot(zone, 2, 1)));
    assert_eq!(latest.skipped.len(), 1);
    assert_eq!(latest.skipped[0].sequence, 3);
    assert!(matches!(
        latest.skipped[0].defect,
        SnapshotDefect::PayloadChecksum { .. }
    ));
    assert!(
        latest.skipped[0]
            .to_string()
            .contains("payload checksum mismatch"),
        "{}",
        latest.skipped[0]
    );
    match store.get(zone, 3, 1).await {
        Err(SnapshotError::Unusable {
            sequence: 3,
            defect: SnapshotDefect::PayloadChecksum { .. },
            ..
        }) => {}
        other => panic!("a corrupt snapshot was not refused: {other:?}"),
    }

    // Truncate the next one: fall back once more.
    let mut cut = store
        .get_encoded(zone, 2)
        .await
        .expect("read")
        .expect("present");
    cut.truncate(cut.len() / 2);
    store.put_encoded(zone, 2, cut).await.expect("overwrite");
    let latest = store.latest_valid(zone, 1).await.expect("latest_valid");
    assert_eq!(latest.snapshot, Some(snapshot(zone, 1, 1)));
    let reasons: Vec<(u64, bool)> = latest
        .skipped
        .iter()
        .map(|skip| {
            (
                skip.sequence,
                matches!(skip.defect, SnapshotDefect::Truncated { .. }),
            )
        })
        .collect();
    assert_eq!(reasons, vec![(3, false), (2, true)]);

    // A header byte: the listing reports it too.
    let mut header_hit = store
        .get_encoded(zone, 1)
        .await
        .expect("read")
        .expect("present");
    header_hit[20] ^= 0x80;
    store
        .put_encoded(zone, 1, header_hit)
        .await
        .expect("overwrite");
    let listed = store.list(zone).await.expect("list");
    assert!(matches!(
        listed[0].header,
        Err(SnapshotDefect::HeaderChecksum { .. })
    ));
    let latest = store.latest_valid(zone, 1).await.expect("latest_valid");
    assert_eq!(latest.snapshot, None);
    assert_eq!(latest.skipped.len(), 3);
}

async fn newer_schema_is_refused(store: &dyn SnapshotStore, zone: &ZoneName) {
    store.put(snapshot(zone, 1, 3)).await.expect("put v3");
    store.put(snapshot(zone, 2, 5)).await.expect("put v5");

    let latest = store.latest_valid(zone, 4).await.expect("latest_valid");
    assert_eq!(latest.snapshot, Some(snapshot(zone, 1, 3)));
    assert_eq!(
        latest
            .skipped
            .iter()
            .map(|s| s.defect.clone())
            .collect::<Vec<_>>(),
        vec![SnapshotDefect::SchemaTooNew {
            found: 5,
            supported: 4
        }]
    );
    match store.get(zone, 2, 4).await {
        Err(error @ SnapshotError::Unusable { .. }) => {
            let message = error.to_string();
            assert!(
                message.contains("schema version 5 is newer than 4")
                    && message.contains(zone.as_str()),
                "{message}"
            );
        }
        other => panic!("a newer schema was not refused: {other:?}"),
    }
    let upgraded = store.latest_valid(zone, 5).await.expect("latest_valid");
    assert_eq!(upgraded.snapshot, Some(snapshot(zone, 2, 5)));
}

async fn nothing_valid_means_full_replay(store: &dyn SnapshotStore, zone: &ZoneName) {
    store.put(snapshot(zone, 1, 1)).await.expect("put");
    store
        .put_encoded(zone, 1, b"not a snapshot".to_vec())
        .await
        .expect("overwrite");
    let latest = store.latest_valid(zone, 1).await.expect("latest_valid");
    assert_eq!(latest.snapshot, None);
    assert!(matches!(
        latest.skipped[0].defect,
        SnapshotDefect::BadMagic { .. }
    ));
}
