//! The shared `SnapshotStore` suite against the Redis store, plus what only Redis can show:
//! hash-tagged keys, errors naming the key or address, the response timeout, a restarted
//! server, and the lease fence. Each test starts a private `redis-server` on a free loopback
//! port (or uses `REDIS_URL`, loopback only).

use geppetto_storage::{RedisSnapshotStore, SnapshotError, SnapshotStore, StorageConfig};
use support::redis_server::RedisServer;
use support::snapshot_suite as suite;
use support::snapshots::{snapshot, zone};

#[tokio::test]
async fn redis_store_passes_the_suite() {
    let server = RedisServer::start();
    let prefix = format!("t{}", std::process::id());
    let mut config = StorageConfig::default();
    config.redis.key_prefix = format!("geppetto-test-{prefix}");
    let store = RedisSnapshotStore::connect(&server.url, &config)
        .await
        .expect("connects");
    suite::run_all(&store, &prefix).await;
}

#[tokio::test]
async fn redis_keys_are_hash_tagged_by_zone() {
    let server = RedisServer::start();
    let store = RedisSnapshotStore::connect(&server.url, &StorageConfig::default())
        .await
        .expect("connects");
    let zone = zone(&format!("tag{}", std::process::id()));
    store.put(snapshot(&zone, 7, 1)).await.expect("put");

    let client = redis::Client::open(server.url.as_str()).expect("url");
    let mut connection = client
        .get_multiplexed_async_connection()
        .await
        .expect("connects");
    let pattern = format!("geppetto:{{{zone}}}:snapshot:*");
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg(&pattern)
        .query_async(&mut connection)
        .await
        .expect("KEYS");
    keys.sort();
    assert_eq!(
        keys,
        vec![
            format!("geppetto:{{{zone}}}:snapshot:00000000000000000007"),
            format!("geppetto:{{{zone}}}:snapshot:index"),
        ]
    );
    // An index entry whose value is gone is reported, not fatal.
    let _: () = redis::cmd("DEL")
        .arg(&keys[0])
        .query_async(&mut connection)
        .await
        .expect("DEL");
    let latest = store.latest_valid(&zone, 1).await.expect("latest_valid");
    assert_eq!(latest.snapshot, None);
    assert_eq!(
        latest.skipped[0].defect,
        geppetto_storage::SnapshotDefect::Missing
    );
}

#[tokio::test]
async fn redis_errors_name_the_key_when_the_server_is_gone() {
    let mut config = StorageConfig::default();
    config.redis.reconnect_retries = 0;
    config.redis.connection_timeout_ms = 200;
    config.redis.response_timeout_ms = 200;
    let (store, zone) = {
        let server = RedisServer::start();
        let store = RedisSnapshotStore::connect(&server.url, &config)
            .await
            .expect("connects");
        (store, zone(&format!("gone{}", std::process::id())))
    };
    // The private server was killed when `server` dropped.
    if std::env::var("REDIS_URL").is_ok() {
        return;
    }
    match store.put(snapshot(&zone, 1, 1)).await {
        Err(error @ SnapshotError::Redis { .. }) => {
            let message = error.to_string();
            assert!(message.contains(&format!("{{{zone}}}")), "{message}");
        }
        other => panic!("a put to a dead server did not fail: {other:?}"),
    }
}

#[tokio::test]
async fn redis_connect_failure_names_the_address() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("free port")
        .port();
    let mut config = StorageConfig::default();
    config.redis.reconnect_retries = 0;
    config.redis.connection_timeout_ms = 200;
    let error = RedisSnapshotStore::connect(&format!("redis://127.0.0.1:{port}/"), &config)
        .await
        .expect_err("nothing listens there");
    assert!(error.to_string().contains(&port.to_string()), "{error}");
}

/// The configured response timeout replaces redis-rs's 500 ms default: while the server holds
/// writes (and scripts) for 1 s, a store allowed 3 s completes its put and a store allowed
/// 200 ms fails.
#[tokio::test]
async fn redis_response_timeout_comes_from_config() {
    if std::env::var("REDIS_URL").is_ok() {
        // Pausing a shared server would disturb its other users.
        return;
    }
    let server = RedisServer::start();
    let client = redis::Client::open(server.url.as_str()).expect("url");
    let mut admin = client
        .get_multiplexed_async_connection()
        .await
        .expect("connects");
    let zone = zone("paused");
    for (response_timeout_ms, sequence, should_succeed) in [(3000, 1, true), (200, 2, false)] {
        let mut config = StorageConfig::default();
        config.redis.response_timeout_ms = response_timeout_ms;
        config.redis.reconnect_retries = 0;
        let store = RedisSnapshotStore::connect(&server.url, &config)
            .await
            .expect("connects");
        let _: () = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(1000)
            .arg("WRITE")
            .query_async(&mut admin)
            .await
            .expect("CLIENT PAUSE");
        let result = store.put(snapshot(&zone, sequence, 1)).await;
        assert_eq!(
            result.is_ok(),
            should_succeed,
            "timeout {response_timeout_ms} ms: {result:?}"
        );
        let _: () = redis::cmd("CLIENT")
            .arg("UNPAUSE")
            .query_async(&mut admin)
            .await
            .expect("CLIENT UNPAUSE");
    }
}

/// A Redis restart leaves the store's connection stale (`broken pipe`): the first put after
/// the server is back succeeds, and so does every other call.
#[tokio::test]
async fn the_first_put_after_a_redis_restart_succeeds() {
    if std::env::var("REDIS_URL").is_ok() {
        // Restarting a shared server would disturb its other users.
        return;
    }
    let port = support::free_port();
    let server = RedisServer::start_on(port);
    let store = RedisSnapshotStore::connect(&server.url, &StorageConfig::default())
        .await
        .expect("connects");
    let zone = zone("restarted");
    store.put(snapshot(&zone, 1, 1)).await.expect("put 1");
    drop(server);
    let _server = RedisServer::start_on(port);
    // The restarted server holds nothing (no persistence in tests): sequence 1 again is new.
    store
        .put(snapshot(&zone, 1, 1))
        .await
        .expect("the first put after the restart");
    store.put(snapshot(&zone, 2, 1)).await.expect("put 2");
    drop(_server);
    let _server = RedisServer::start_on(port);
    let latest = store
        .latest_valid(&zone, 1)
        .await
        .expect("the first read after a restart");
    assert_eq!(latest.snapshot, None, "the restarted server is empty");
}

/// A fenced zone's snapshot is written only while the zone's lease holds this instance's
/// value: once another instance took the lease, the put writes nothing, fails as fenced and
/// marks the fence lost; an unfenced zone is not checked.
#[tokio::test]
async fn a_fenced_put_is_refused_once_the_lease_changed_hands() {
    let server = RedisServer::start();
    let store = RedisSnapshotStore::connect(&server.url, &StorageConfig::default())
        .await
        .expect("connects");
    let client = redis::Client::open(server.url.as_str()).expect("url");
    let mut admin = client
        .get_multiplexed_async_connection()
        .await
        .expect("connects");
    let zone = zone(&format!("fenced{}", std::process::id()));
    let lease_key = format!("geppetto:{{{zone}}}:lease");
    let _: () = redis::cmd("SET")
        .arg(&lease_key)
        .arg("a#1#0")
        .query_async(&mut admin)
        .await
        .expect("SET");
    let fence = geppetto_storage::LeaseFence {
        lease_key: lease_key.clone(),
        token: "a#1#0".into(),
        lost: std::sync::Arc::default(),
    };
    store.fence(&zone, fence.clone());
    store
        .put(snapshot(&zone, 1, 1))
        .await
        .expect("held: written");

    // Paused past its lease, instance a wakes up to b holding the zone.
    let _: () = redis::cmd("SET")
        .arg(&lease_key)
        .arg("b#2#5")
        .query_async(&mut admin)
        .await
        .expect("SET");
    match store.put(snapshot(&zone, 2, 1)).await {
        Err(error @ SnapshotError::Fenced { .. }) => {
            assert!(error.to_string().contains(&lease_key), "{error}");
        }
        other => panic!("a put under a lost lease was not fenced: {other:?}"),
    }
    assert!(!fence.may_write(), "the fence is marked lost");
    let listed: Vec<u64> = store
        .list(&zone)
        .await
        .expect("list")
        .iter()
        .map(|s| s.sequence)
        .collect();
    assert_eq!(listed, [1], "nothing was written");

    // Released: refused without asking Redis; another zone is not fenced at all.
    store.unfence(&zone);
    assert!(matches!(
        store.put(snapshot(&zone, 3, 1)).await,
        Err(SnapshotError::Fenced { .. })
    ));
    let free = support::snapshots::zone(&format!("free{}", std::process::id()));
    store.put(snapshot(&free, 1, 1)).await.expect("unfenced");
}
