//! Between zones of a Redis Cluster deployment: a resident walks across a border into a zone
//! another instance runs and lives on there (needs, rumours, arriving once); and the fence
//! itself, deterministically: a write checked against a lease that changed hands is refused
//! whole, counted, and marks the lease lost.

use std::time::Duration;

use redis::cluster::ClusterConnection;
use support::cluster_world::*;
use support::redis_cluster::RedisCluster;
use support::redis_server;
use support::schema;
use support::serve::Serve;

/// The messages of `zone`'s `kind` stream as JSON.
fn messages(redis: &mut ClusterConnection, zone: &str, kind: &str) -> Vec<serde_json::Value> {
    entries(redis, &format!("geppetto:{{{zone}}}:{kind}"))
        .into_iter()
        .map(|(_, body, _)| serde_json::from_str(&body).expect("json"))
        .collect()
}

#[test]
fn a_resident_walks_across_a_border_into_another_zone_and_lives_on_there() {
    let dir = scratch("cluster-border");
    let cluster = RedisCluster::start(3, &dir);
    let mut redis = cluster.connection();
    let worlds = worlds(&dir, 2);
    let (from, to) = (zone_name(0), zone_name(1));
    let config = config_file(
        &dir,
        "border",
        &worlds,
        &cluster,
        &Setup {
            clustered: true,
            zones: "'auto'",
            clock: "kind = 'external'",
            admin: String::new(),
        },
    );
    // The two zones are copies of one village: the one vex walks into lets its own vex go.
    let gone = serde_json::json!({"v": 1, "type": "npc_despawned", "id": "gone-1", "zone": to,
        "game_time": 421, "npc": "vex"});
    load(&mut redis, &to, &[gone.to_string()]);
    for zone in [&from, &to] {
        load(&mut redis, zone, &script(zone, 1, 30));
    }
    let transfer = serde_json::json!({"v": 1, "type": "npc_transfer", "id": "border-1",
        "zone": from, "game_time": 451, "npc": "vex", "to_zone": to, "room": "woods"});
    schema::check_schema("world", &transfer);
    load(&mut redis, &from, &[transfer.to_string()]);
    load(&mut redis, &from, &script(&from, 31, 60));
    let serve = Serve::start_as(
        env!("CARGO_BIN_EXE_geppetto"),
        &config,
        Some("solo"),
        &[("RUST_LOG", "info")],
        Some(&dir.join("solo.log")),
    );
    let arrived = |redis: &mut ClusterConnection| {
        messages(redis, &to, "npc_events")
            .iter()
            .any(|m| m["type"] == "npc_arrived" && m["npc"] == "vex")
    };
    wait_until("vex arrives", Duration::from_secs(120), || {
        processed(&mut redis, &from) && arrived(&mut redis)
    });
    // Life goes on in the new zone, with vex in it.
    load(&mut redis, &to, &script(&to, 31, 90));
    wait_until("both zones are processed", Duration::from_secs(120), || {
        processed(&mut redis, &from) && processed(&mut redis, &to)
    });
    serve.stop();

    let departed: Vec<_> = messages(&mut redis, &from, "npc_events")
        .into_iter()
        .filter(|m| m["type"] == "npc_departed")
        .collect();
    assert_eq!(departed.len(), 1, "{departed:?}");
    assert_eq!(departed[0]["npc"], "vex");
    assert_eq!(departed[0]["to_zone"], to.as_str());
    schema::check_schema("npc_events", &departed[0]);
    let handover: Vec<_> = messages(&mut redis, &to, "world")
        .into_iter()
        .filter(|m| m["type"] == "npc_arrived")
        .collect();
    assert_eq!(handover.len(), 1);
    assert_eq!(handover[0]["from_zone"], from.as_str());
    assert_eq!(handover[0]["npc"]["resident"]["room"], "woods");
    schema::check_schema("world", &handover[0]);
    for event in messages(&mut redis, &to, "npc_events")
        .iter()
        .filter(|m| m["type"] == "npc_arrived")
    {
        schema::check_schema("npc_events", event);
    }
    let departed_at = departed[0]["game_time"].as_u64().expect("time");
    assert!(
        messages(&mut redis, &from, "intents")
            .iter()
            .filter(|m| m["npc"] == "vex" && m["type"] != "cancel")
            .all(|m| m["game_time"].as_u64() < Some(departed_at)),
        "vex does nothing in the zone it left"
    );
    assert!(
        messages(&mut redis, &to, "intents")
            .iter()
            .any(|m| m["npc"] == "vex"),
        "vex acts in the zone it walked into"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_write_checked_against_a_lease_that_changed_hands_is_refused_whole() {
    use geppetto_service::bus::redis::{RedisBus, RedisBusConfig};
    use geppetto_service::bus::{EventBus, StreamKind};
    use geppetto_service::runtime::lease::{LeaseConfig, Leases};

    let server = redis_server::RedisServer::start();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let zone = format!("fence{}", std::process::id());
    runtime.block_on(async {
        let config = RedisBusConfig {
            url: server.url.clone(),
            ..RedisBusConfig::default()
        };
        let bus = RedisBus::connect_as(config.clone(), "x")
            .await
            .expect("bus");
        let leases = Leases::new(bus.shared_connection(), "x", LeaseConfig::default());
        let held = leases
            .try_acquire(&zone)
            .await
            .expect("acquire")
            .expect("free");
        assert!(
            leases.try_acquire(&zone).await.expect("acquire").is_none(),
            "a held lease cannot be taken"
        );
        bus.fence(&zone, held.fence());
        bus.publish(&zone, StreamKind::Intents, "{\"n\":1}".into());
        bus.flush().await.expect("flush");

        // The lease runs out (the holder was paused) and another instance takes it.
        let mut connection = bus.shared_connection();
        redis::cmd("DEL")
            .arg(geppetto_service::runtime::lease::lease_key(&zone))
            .query_async::<()>(&mut connection)
            .await
            .expect("expire");
        let other = Leases::new(bus.shared_connection(), "y", LeaseConfig::default());
        let taken = other
            .try_acquire(&zone)
            .await
            .expect("acquire")
            .expect("free");
        assert!(taken.token() > held.token(), "fencing tokens only grow");

        bus.publish(&zone, StreamKind::Intents, "{\"n\":2}".into());
        bus.publish(&zone, StreamKind::World, "{\"n\":3}".into());
        bus.flush().await.expect("flush");
        assert_eq!(bus.stats().fenced, 2, "both late messages fenced off");
        assert!(held.guard.is_lost(), "the writer learns its lease is lost");
        assert!(
            !leases.renew(&held).await.expect("renew"),
            "nor can it renew"
        );
        assert!(other.renew(&taken).await.expect("renew"));
    });
    let intents: Vec<String> = server.bodies(&format!("geppetto:{{{zone}}}:intents"));
    assert_eq!(
        intents,
        ["{\"n\":1}"],
        "only the write under the lease landed"
    );
    assert!(
        server
            .bodies(&format!("geppetto:{{{zone}}}:world"))
            .is_empty()
    );
}
