//! End-to-end: the zone service loop over a real Redis (a private `redis-server` on a free
//! loopback port, or `REDIS_URL`): world events in, intents out with the right envelope and
//! schema; consumer-group restarts without loss; batches acknowledged in the next round trip;
//! fencing under a lost lease; dead letters (tiers, error isolation and the governor are
//! `tiers_and_faults`'). Assertions are on counts and orders, never on durations (the deadlines
//! below only stop a broken run from hanging).

use std::sync::Arc;
use std::time::{Duration, Instant};

use geppetto_service::bus::ConsumerConfig;
use geppetto_service::bus::redis::{Fence, RedisBus, RedisBusConfig};
use geppetto_service::bus::{EventBus, Outgoing, StreamKind};
use geppetto_service::runtime::actor::{ActorRuntime, ZoneHooks};
use geppetto_service::runtime::zone_loop::{
    IsolationPersistence, LoopStats, Persistence, run_zone,
};
use geppetto_service::zone::Zone;
use geppetto_service::zone::isolation::IsolationState;
use geppetto_storage::SnapshotStore;
use serde_json::Value;
use support::redis_server::RedisServer;
use support::schema::check_schema;
use support::village::{calm, village};
use tokio::sync::watch;

pub(crate) const ZONE: &str = "village";

pub(crate) fn key(stream: StreamKind) -> String {
    stream.key(ZONE)
}

pub(crate) fn event(kind: &str, id: &str, game_time: u64, extra: &str) -> String {
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(",{extra}")
    };
    format!(
        r#"{{"v":1,"type":"{kind}","id":"{id}","zone":"{ZONE}","game_time":{game_time}{extra}}}"#
    )
}

/// Player `ann` enters `room` at game time 420, as world message `id`.
pub(crate) fn ann_enters(server: &RedisServer, id: &str, room: &str) {
    let fields = format!(r#""player":"ann","room":"{room}""#);
    server.xadd(
        &key(StreamKind::World),
        &event("player_entered", id, 420, &fields),
    );
}

/// A `time_advanced` (id `t{minute}`) for each game minute of `minutes`.
pub(crate) fn advance(server: &RedisServer, minutes: std::ops::RangeInclusive<u64>) {
    for t in minutes {
        server.xadd(
            &key(StreamKind::World),
            &event("time_advanced", &format!("t{t}"), t, ""),
        );
    }
}

pub(crate) fn parsed(bodies: &[String]) -> Vec<Value> {
    bodies
        .iter()
        .map(|b| serde_json::from_str(b).expect("json body"))
        .collect()
}

/// Polls until `done` holds for the stream's bodies (or a generous deadline).
pub(crate) fn wait_for(
    server: &RedisServer,
    stream: StreamKind,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let values = parsed(&server.bodies(&key(stream)));
        if done(&values) || Instant::now() > deadline {
            return values;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends a marker event (a `social_event` from `sentinel` to Tomas, no deltas) after the
/// events under test and returns the `npc_events` once its `social_interaction` is out: the
/// loop handles and publishes in order, so everything before it is out too.
pub(crate) fn drain(server: &RedisServer, game_time: u64) -> Vec<Value> {
    server.xadd(
        &key(StreamKind::World),
        &event(
            "social_event",
            "sentinel",
            game_time,
            r#""kind":"wave","source":"sentinel","target":"tomas""#,
        ),
    );
    let values = wait_for(server, StreamKind::NpcEvents, |v| {
        v.iter().any(|m| m["source"] == "sentinel")
    });
    assert!(
        values.iter().any(|m| m["source"] == "sentinel"),
        "the loop handled every event"
    );
    values
}

fn count(values: &[Value], kind: &str) -> usize {
    values.iter().filter(|v| v["type"] == kind).count()
}

/// Runs the zone loop over Redis on a background thread until the returned guard is dropped.
pub(crate) struct Running {
    stop: watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<LoopStats>>,
}

impl Running {
    pub(crate) fn start(
        server: &RedisServer,
        zone: Zone,
        store: Option<Arc<dyn SnapshotStore>>,
    ) -> Self {
        Self::start_with(server, zone, ZoneHooks::default(), store)
    }

    /// Starts the loop over `zone`, whose actor gives it `hooks` (injected faults).
    pub(crate) fn start_with(
        server: &RedisServer,
        zone: Zone,
        hooks: ZoneHooks,
        store: Option<Arc<dyn SnapshotStore>>,
    ) -> Self {
        let url = server.url.clone();
        let (stop, stopped) = watch::channel(false);
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            geppetto_service::runtime::block_on(2, async move {
                let config = RedisBusConfig {
                    url,
                    read_block_ms: 100,
                    ..RedisBusConfig::default()
                };
                let bus: Arc<dyn EventBus> =
                    Arc::new(RedisBus::connect(config).await.expect("bus"));
                let actors = ActorRuntime::new(2);
                let handle = actors.start_with(zone, hooks);
                let persistence = Persistence {
                    isolation: store.map(|store| IsolationPersistence { store, sequence: 0 }),
                    ..Persistence::volatile()
                };
                let consumer = ConsumerConfig {
                    block_ms: 100,
                    ..ConsumerConfig::default()
                };
                let task = tokio::spawn(run_zone(
                    handle,
                    Arc::clone(&bus),
                    consumer,
                    persistence,
                    None,
                    stopped,
                ));
                let _ = ready_tx.send(());
                let stats = task.await.expect("join").expect("loop");
                bus.flush().await.expect("flush");
                actors.stop();
                stats
            })
            .expect("runtime")
        });
        ready_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("loop started");
        Self {
            stop,
            thread: Some(thread),
        }
    }

    pub(crate) fn finish(mut self) -> LoopStats {
        let _ = self.stop.send(true);
        self.thread
            .take()
            .expect("thread")
            .join()
            .expect("loop thread")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[test]
fn events_in_intents_out_with_the_envelope_and_the_schema() {
    let server = RedisServer::start();
    let running = Running::start(&server, village(calm(), IsolationState::default()), None);
    let world = key(StreamKind::World);
    ann_enters(&server, "g1", "square");
    advance(&server, 421..=480);
    let npc_events = drain(&server, 480);
    let intents = parsed(&server.bodies(&key(StreamKind::Intents)));
    running.finish();
    assert!(count(&intents, "use") >= 8, "{intents:?}");
    assert!(count(&intents, "navigate") >= 1);
    for intent in &intents {
        assert_eq!(intent["v"], 1);
        assert_eq!(intent["zone"], ZONE);
        let id = intent["id"].as_str().expect("id");
        let npc = intent["npc"].as_str().expect("npc");
        assert!(id.starts_with(&format!("{ZONE}:{npc}:")), "{id}");
        check_schema("intents", intent);
    }
    // A navigate comes right before the use it leads to.
    for (i, intent) in intents.iter().enumerate() {
        if intent["type"] == "navigate" {
            let next = &intents[i + 1];
            assert_eq!(
                (next["type"].as_str(), &next["npc"]),
                (Some("use"), &intent["npc"])
            );
            assert_eq!(next["provider"], intent["provider"]);
        }
    }
    for message in &npc_events {
        check_schema("npc_events", message);
    }
    for message in parsed(&server.bodies(&world)) {
        check_schema("world", &message);
    }
    assert!(
        count(&npc_events, "tier_changed") >= 4,
        "players make NPCs Active"
    );
}

#[test]
fn the_same_log_gives_the_same_intent_stream() {
    let run = || {
        let server = RedisServer::start();
        let running = Running::start(&server, village(calm(), IsolationState::default()), None);
        ann_enters(&server, "g1", "tavern");
        advance(&server, 421..=450);
        drain(&server, 450);
        running.finish();
        server.bodies(&key(StreamKind::Intents))
    };
    let first = run();
    assert!(!first.is_empty());
    assert_eq!(first, run());
}

#[test]
fn a_consumer_group_restart_resumes_without_loss() {
    let server = RedisServer::start();
    let world = key(StreamKind::World);
    for i in 0..10 {
        server.xadd(&world, &format!("m{i}"));
    }
    let url = server.url.clone();
    let seen = geppetto_service::runtime::block_on(1, async move {
        let bus = consumer_bus(url, 1_000).await;
        let mut seen = Vec::new();
        {
            let mut first = bus
                .consumer(ZONE, StreamKind::World, "g", "worker")
                .await
                .expect("consumer");
            let batch = first
                .next_batch(4, Duration::from_millis(50))
                .await
                .expect("read");
            let ids: Vec<String> = batch.iter().map(|d| d.id.clone()).collect();
            first.ack(&ids).await.expect("ack");
            seen.extend(batch.into_iter().map(|d| d.body));
            // Read three more and "crash" before acknowledging them.
            let unacked = first
                .next_batch(3, Duration::from_millis(50))
                .await
                .expect("read");
            assert_eq!(unacked.len(), 3);
        }
        // The same consumer name comes back: its pending entries first, then the rest.
        let mut again = bus
            .consumer(ZONE, StreamKind::World, "g", "worker")
            .await
            .expect("consumer");
        loop {
            let batch = again
                .next_batch(10, Duration::from_millis(50))
                .await
                .expect("read");
            if batch.is_empty() {
                break;
            }
            let ids: Vec<String> = batch.iter().map(|d| d.id.clone()).collect();
            again.ack(&ids).await.expect("ack");
            seen.extend(batch.into_iter().map(|d| d.body));
        }
        seen
    })
    .expect("runtime");
    let expected: Vec<String> = (0..10).map(|i| format!("m{i}")).collect();
    assert_eq!(seen, expected, "every entry exactly once, in order");
}

/// A bus for the consumer tests at `url`: short reads, entries claimable at once, a claim every
/// `claim_every_reads` reads.
async fn consumer_bus(url: String, claim_every_reads: u32) -> RedisBus {
    let config = RedisBusConfig {
        url,
        read_block_ms: 50,
        claim_min_idle_ms: 0,
        claim_every_reads,
        ..RedisBusConfig::default()
    };
    RedisBus::connect(config).await.expect("bus")
}

/// How many entries group `g` of `key` has delivered and not had acknowledged.
fn pending(server: &RedisServer, key: &str) -> u64 {
    pending_of(&server.url, key)
}

/// [`pending`] on the server at `url`.
fn pending_of(url: &str, key: &str) -> u64 {
    let client = redis::Client::open(url).expect("url");
    let mut c = client.get_connection().expect("connection");
    let reply: redis::streams::StreamPendingReply = redis::cmd("XPENDING")
        .arg(key)
        .arg("g")
        .query(&mut c)
        .expect("xpending");
    reply.count() as u64
}

#[test]
fn a_batch_is_acknowledged_in_the_round_trip_that_reads_the_next() {
    let server = RedisServer::start();
    let world = key(StreamKind::World);
    for i in 0..10 {
        server.xadd(&world, &format!("m{i}"));
    }
    let url = server.url.clone();
    let (seen, pending_between) = geppetto_service::runtime::block_on(1, async move {
        let bus = consumer_bus(url, 1_000).await;
        let mut consumer = bus
            .consumer(ZONE, StreamKind::World, "g", "worker")
            .await
            .expect("consumer");
        let block = Duration::from_millis(50);
        let mut seen = Vec::new();
        let mut pending_between = Vec::new();
        let mut handled: Vec<String> = Vec::new();
        loop {
            let batch = consumer
                .ack_and_next_batch(&handled, 4, block)
                .await
                .expect("ack and read");
            // Only what was just read is pending: the batch before it went in the same trip.
            pending_between.push((batch.len(), pending(&server, &world)));
            if batch.is_empty() {
                break;
            }
            handled = batch.iter().map(|d| d.id.clone()).collect();
            seen.extend(batch.into_iter().map(|d| d.body));
        }
        (seen, pending_between)
    })
    .expect("runtime");
    let expected: Vec<String> = (0..10).map(|i| format!("m{i}")).collect();
    assert_eq!(seen, expected, "every entry once, in order");
    for (read, pending) in &pending_between {
        assert_eq!(*read as u64, *pending, "{pending_between:?}");
    }
}

/// Runs one command on the server at `url`.
fn command(url: &str, args: &[&str]) {
    let client = redis::Client::open(url).expect("url");
    let mut c = client.get_connection().expect("connection");
    let mut cmd = redis::cmd(args[0]);
    for arg in &args[1..] {
        cmd.arg(*arg);
    }
    cmd.query::<redis::Value>(&mut c).expect("command");
}

#[test]
fn a_zones_outputs_go_with_its_next_read_and_a_refused_write_with_the_one_after() {
    let server = RedisServer::start();
    let world = key(StreamKind::World);
    for i in 0..3 {
        server.xadd(&world, &format!("m{i}"));
    }
    // A key of the wrong type: the server refuses every XADD to it.
    command(
        &server.url,
        &["SET", &key(StreamKind::Intents), "not a stream"],
    );
    let url = server.url.clone();
    let probe = server.url.clone();
    let (kept, written, pending_after, stats) =
        geppetto_service::runtime::block_on(1, async move {
            let bus = consumer_bus(url, 0).await;
            let mut consumer = bus
                .consumer(ZONE, StreamKind::World, "g", "worker")
                .await
                .expect("consumer");
            let block = Duration::from_millis(50);
            let mut outgoing: Outgoing = vec![
                (StreamKind::Story, "s1".to_owned()),
                (StreamKind::Intents, "i1".to_owned()),
            ];
            let first = consumer
                .exchange(&mut outgoing, &[], 2, block)
                .await
                .expect("the read goes on");
            assert_eq!(first.len(), 2, "what was read is handed over");
            let kept = outgoing.clone();
            command(&probe, &["DEL", &key(StreamKind::Intents)]);
            outgoing.push((StreamKind::Intents, "i2".to_owned()));
            let handled: Vec<String> = first.iter().map(|d| d.id.clone()).collect();
            let second = consumer
                .exchange(&mut outgoing, &handled, 2, block)
                .await
                .expect("exchange");
            assert_eq!(second.len(), 1);
            (kept, outgoing, pending_of(&probe, &world), bus.stats())
        })
        .expect("runtime");
    assert_eq!(
        kept,
        [(StreamKind::Intents, "i1".to_owned())],
        "the refused write waits for the next round trip; the one before it was written"
    );
    assert!(written.is_empty(), "written once accepted: {written:?}");
    assert_eq!(
        pending_after, 1,
        "the first batch was acknowledged in the second trip"
    );
    assert_eq!(server.bodies(&key(StreamKind::Story)), ["s1"]);
    assert_eq!(server.bodies(&key(StreamKind::Intents)), ["i1", "i2"]);
    assert_eq!((stats.published, stats.dropped, stats.fenced), (3, 0, 0));
}

#[test]
fn a_zones_outputs_under_a_lost_lease_are_fenced_off_and_its_read_goes_on() {
    let server = RedisServer::start();
    let world = key(StreamKind::World);
    server.xadd(&world, "m0");
    let lease = "geppetto:{village}:lease";
    command(&server.url, &["SET", lease, "another instance"]);
    let url = server.url.clone();
    let (read, left, lost, stats) = geppetto_service::runtime::block_on(1, async move {
        let bus = consumer_bus(url, 0).await;
        let lost = Arc::new(std::sync::atomic::AtomicBool::new(false));
        bus.fence(
            ZONE,
            Fence {
                lease_key: lease.to_owned(),
                token: "this instance".to_owned(),
                lost: Arc::clone(&lost),
            },
        );
        let mut consumer = bus
            .consumer(ZONE, StreamKind::World, "g", "worker")
            .await
            .expect("consumer");
        let mut outgoing: Outgoing = vec![(StreamKind::Intents, "i1".to_owned())];
        let read = consumer
            .exchange(&mut outgoing, &[], 10, Duration::from_millis(50))
            .await
            .expect("exchange");
        (
            read.len(),
            outgoing,
            lost.load(std::sync::atomic::Ordering::Acquire),
            bus.stats(),
        )
    })
    .expect("runtime");
    assert_eq!(read, 1);
    assert!(left.is_empty(), "fenced off, not kept: {left:?}");
    assert!(lost, "the lease is marked lost");
    assert!(server.bodies(&key(StreamKind::Intents)).is_empty());
    assert_eq!((stats.published, stats.fenced), (1, 1));
}

#[test]
fn a_dead_consumers_pending_entries_are_claimed() {
    let server = RedisServer::start();
    let world = key(StreamKind::World);
    for i in 0..3 {
        server.xadd(&world, &format!("m{i}"));
    }
    let url = server.url.clone();
    let claimed = geppetto_service::runtime::block_on(1, async move {
        let bus = consumer_bus(url, 1).await;
        let mut dead = bus
            .consumer(ZONE, StreamKind::World, "g", "dead")
            .await
            .expect("consumer");
        assert_eq!(
            dead.next_batch(10, Duration::from_millis(50))
                .await
                .expect("read")
                .len(),
            3
        );
        let mut heir = bus
            .consumer(ZONE, StreamKind::World, "g", "heir")
            .await
            .expect("consumer");
        heir.next_batch(10, Duration::from_millis(50))
            .await
            .expect("read")
    })
    .expect("runtime");
    let bodies: Vec<&str> = claimed.iter().map(|d| d.body.as_str()).collect();
    assert_eq!(bodies, ["m0", "m1", "m2"]);
}

#[test]
fn a_poisoned_event_lands_in_deadletter_and_the_loop_goes_on() {
    let server = RedisServer::start();
    let running = Running::start(&server, village(calm(), IsolationState::default()), None);
    let world = key(StreamKind::World);
    server.xadd(&world, "{not json");
    server.xadd(
        &world,
        &event("player_entered", "bad", 420, r#""player":"ann","room":7"#),
    );
    ann_enters(&server, "g1", "square");
    advance(&server, 421..=440);
    let events = drain(&server, 440);
    let stats = running.finish();
    let letters = parsed(&server.bodies(&key(StreamKind::Deadletter)));
    assert_eq!(letters.len(), 2);
    assert_eq!(letters[0]["event_type"], "unknown");
    assert_eq!(letters[0]["original"], "{not json");
    assert_eq!(
        (
            letters[1]["event_type"].as_str(),
            letters[1]["path"].as_str()
        ),
        (Some("player_entered"), Some("room"))
    );
    for letter in &letters {
        check_schema("deadletter", letter);
        // A letter carries the zone's game time when it refused the message.
        assert!(letter["game_time"].as_u64() >= Some(420), "{letter}");
    }
    assert_eq!(stats.dead_lettered, 2);
    assert_eq!(
        stats.applied, 23,
        "the zone's settings, the 20 ticks, the player and the marker"
    );
    assert!(count(&events, "action_started") >= 5, "the loop went on");
}

#[test]
fn a_stream_of_good_and_bad_events_keeps_every_good_one_and_dead_letters_every_bad_one() {
    let server = RedisServer::start();
    let running = Running::start(&server, village(calm(), IsolationState::default()), None);
    let world = key(StreamKind::World);
    let long_text = "blah ".repeat(2_000);
    // (body, the reason its dead letter must give)
    let bad: Vec<(Vec<u8>, &str)> = vec![
        (b"{not json".to_vec(), "not JSON"),
        (
            b"{\"v\":1,\"type\":\"say\",\"text\":\"caf\xe9\"}".to_vec(),
            "not UTF-8",
        ),
        (
            format!("{{\"v\":1,\"x\":{}1{}}}", "[".repeat(40), "]".repeat(40)).into_bytes(),
            "consumer.limits.max_depth exceeded",
        ),
        (
            event(
                "say",
                "b-text",
                420,
                &format!(r#""speaker":"ann","text":"{long_text}""#),
            )
            .into_bytes(),
            "consumer.limits.max_text_bytes exceeded",
        ),
        (
            format!(r#"{{"pad":"{}"}}"#, "x".repeat(1_100_000)).into_bytes(),
            "consumer.limits.max_bytes exceeded",
        ),
        (
            event("earthquake", "b-type", 420, "").into_bytes(),
            "unknown world event type",
        ),
        (
            event(
                "social_event",
                "b-mood",
                420,
                r#""kind":"insult","source":"ann","target":"bram","mood":7"#,
            )
            .into_bytes(),
            "must be between -1 and 1",
        ),
        (
            event(
                "social_event",
                "b-npc",
                420,
                r#""kind":"insult","source":"ann","target":"nobody""#,
            )
            .into_bytes(),
            "unknown NPC `nobody`",
        ),
        (
            event(
                "player_entered",
                "b-room",
                420,
                r#""player":"ann","room":"atlantis""#,
            )
            .into_bytes(),
            "unknown room `atlantis`",
        ),
        (
            event("time_advanced", "b-zone", 421, "")
                .replace(ZONE, "elsewhere")
                .into_bytes(),
            "message for zone `elsewhere`",
        ),
    ];
    // Good and bad interleaved: every third message is bad.
    let mut good = 0u64;
    let mut bad_left = bad.iter();
    for t in 421..=450u64 {
        server.xadd(&world, &event("time_advanced", &format!("t{t}"), t, ""));
        good += 1;
        if t % 3 == 0
            && let Some((body, _)) = bad_left.next()
        {
            server.xadd_bytes(&world, body);
        }
    }
    for (body, _) in bad_left {
        server.xadd_bytes(&world, body);
    }
    drain(&server, 450);
    let stats = running.finish();
    let letters = parsed(&server.bodies(&key(StreamKind::Deadletter)));
    assert_eq!(letters.len(), bad.len(), "{letters:#?}");
    // A batch's parse refusals go out before the zone's own: match reasons, not order.
    let reasons: Vec<String> = letters
        .iter()
        .map(|letter| {
            check_schema("deadletter", letter);
            let original = letter["original"].as_str().expect("original");
            assert!(
                original.len() <= 1_048_576,
                "at most a message's worth is kept"
            );
            format!("{}: {}", letter["path"], letter["reason"])
        })
        .collect();
    for (_, reason) in &bad {
        assert_eq!(
            reasons.iter().filter(|r| r.contains(reason)).count(),
            1,
            "`{reason}` in {reasons:#?}"
        );
    }
    assert_eq!(stats.dead_lettered, bad.len() as u64);
    assert_eq!(
        stats.applied,
        good + 2,
        "the zone's settings, every good event and the marker"
    );
}
