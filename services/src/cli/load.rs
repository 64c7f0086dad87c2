//! `geppetto load`: synthetic zones of N NPCs each (20 to a room, three providers per room, a
//! player in every room — all NPCs Active — or in `player_rooms` rooms spread along the zone,
//! the rest Nearby or Background by the tier rules), one or several in one process, driven
//! through the real service loop and bus by an internal clock at [`LOAD_TICKS_PER_SECOND`]
//! plus social events at the requested rate, spread over the zones (aimed at NPCs in rooms
//! with a player). On Redis the generator writes its events as a game server would, on a
//! connection of its own ([`Injector`]), not through geppetto's bus. Reports world-event
//! throughput, event→output latency (a social event to its `social_interaction` NPC event,
//! read back from the bus), time_advanced→first-intent latency, tick duration percentiles (and
//! each zone's, with several), NPCs per tier and the process's resident memory.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use geppetto_llm::{LlmConfig, OpenAiProviderConfig};
use redis::IntoConnectionInfo;
use redis::streams::StreamMaxlen;
use serde_json::Value;
use tokio::sync::watch;

use crate::bus::StreamKind;
use crate::bus::envelope::{WorldEvent, WorldMessage, header};
use crate::bus::redis::{BODY_FIELD, RedisBusConfig, tcp_settings};
use crate::bus::{ConsumerConfig, EventBus};
use crate::cli::demo::{open_bus, reset_redis_zone};
use crate::cli::error::CommandError;
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::content::world_file::{WorldFile, parse_world_json};
use crate::runtime::actor::{ActorRuntime, ZoneHandle, ZoneHooks};
use crate::runtime::starter::start_llm;
use crate::runtime::zone_loop::{Persistence, run_zone};
use crate::zone::isolation::IsolationState;
use crate::zone::tiers::Tier;
use crate::zone::{IntegrationConfig, TickConfig, TickInputs, Zone, ZoneConfig};

/// Ticks the load clock advances per second.
pub const LOAD_TICKS_PER_SECOND: u64 = 10;
/// How often the generator sends what is due, milliseconds: events go out in slices this
/// long, close to the steady arrival of a live game (10 ms slices made bursts of 200 events at
/// 20,000/s, each waiting on the whole burst).
pub const LOAD_SEND_PERIOD_MS: u64 = 2;
/// NPCs per synthetic room.
pub const LOAD_NPCS_PER_ROOM: usize = 20;
/// The synthetic zone's name (with several, each is named `load-0`, `load-1`, …).
pub const LOAD_ZONE: &str = "load";

/// What to run.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Zones, run in one process.
    pub zones: usize,
    /// NPCs in each zone.
    pub npcs: usize,
    /// Rooms with a player, spread evenly along the zone; `None`: every room.
    pub player_rooms: Option<usize>,
    /// Social events per second (besides the clock), spread over the zones.
    pub events_per_sec: f64,
    /// Seconds to run.
    pub seconds: f64,
    /// Redis URL, or the in-process bus.
    pub redis: Option<String>,
    /// Player lines (`say`) per second, each handed to perception.
    pub says_per_sec: f64,
    /// An OpenAI-compatible endpoint for the LLM seams; none: templates only. Pointing it at
    /// an endpoint that never answers shows the seams never delay a tick.
    pub llm_url: Option<String>,
}

/// The synthetic world of zone `zone` as JSON, written straight into one string: a
/// 100,000-NPC world is 25 MB of text, and building it as a `serde_json::Value` tree first
/// would hold twenty times that while the zone is built.
pub fn synthetic_world(zone: &str, npcs: usize) -> String {
    let rooms = npcs.div_ceil(LOAD_NPCS_PER_ROOM).max(1);
    let mut out = String::with_capacity(256 * npcs + 700 * rooms + 256);
    let zone = Value::String(zone.to_owned());
    // Writing into a `String` cannot fail.
    let _ = write!(
        out,
        r#"{{"zone":{zone},"seed":1,"start_game_time":0,"rooms":["#
    );
    for r in 0..rooms {
        let comma = if r == 0 { "" } else { "," };
        let next = if r + 1 < rooms {
            format!(r#""r{}""#, r + 1)
        } else {
            String::new()
        };
        let _ = write!(out, r#"{comma}{{"id":"r{r}","neighbours":[{next}]}}"#);
    }
    out.push_str(r#"],"providers":["#);
    for r in 0..rooms {
        let (x, z) = ((r % 100) as f64 * 30.0, (r / 100) as f64 * 30.0);
        let comma = if r == 0 { "" } else { "," };
        let provider = |id: &str, position: (f64, f64), capacity: u32, action: &str| {
            let (px, pz) = position;
            format!(
                r#"{{"id":"{id}{r}","room":"r{r}","position":[{px:?},{pz:?}],"capacity":{capacity},"actions":[{action}]}}"#
            )
        };
        let action = |id: &str, tag: &str, hours: f64, deltas: &str| {
            format!(
                r#"{{"id":"{id}","tags":["{tag}"],"duration_hours":{hours:?},"deltas":{{{deltas}}},"radius":20}}"#
            )
        };
        let _ = write!(
            out,
            "{comma}{},{},{}",
            provider(
                "work",
                (x, z),
                12,
                &action("work", "work", 1.0, r#""DUTY":40,"ENERGY":-5"#)
            ),
            provider(
                "food",
                (x + 5.0, z),
                8,
                &action("eat", "food", 0.5, r#""HUNGER":40"#)
            ),
            provider(
                "rest",
                (x, z + 5.0),
                8,
                &action("nap", "rest", 0.75, r#""ENERGY":30"#)
            ),
        );
    }
    out.push_str(r#"],"npcs":["#);
    for n in 0..npcs {
        let r = n / LOAD_NPCS_PER_ROOM;
        let x = (r % 100) as f64 * 30.0 + (n % 5) as f64;
        let z = (r / 100) as f64 * 30.0 + ((n / 5) % 4) as f64;
        let need = |name: &str, value: usize, rate: f64| {
            format!(
                r#"{{"name":"{name}","value":{value},"min":0,"max":100,"updater":{{"kind":"linear_decay","rate":{rate:?}}}}}"#
            )
        };
        let comma = if n == 0 { "" } else { "," };
        let _ = write!(
            out,
            r#"{comma}{{"id":"n{n:06}","room":"r{r}","archetype":"worker","position":[{x:?},{z:?}],"considerations":[{},{},{},{}]}}"#,
            need("HUNGER", 30 + (n * 37) % 60, 6.0),
            need("ENERGY", 30 + (n * 53) % 60, 4.0),
            need("DUTY", 20 + (n * 71) % 70, 8.0),
            need("FUN", 50, 0.0),
        );
    }
    out.push_str("]}");
    out
}

/// Only the game time of an envelope (the reader skips everything else unparsed).
#[derive(serde::Deserialize)]
struct GameTime {
    game_time: u64,
}

/// The rooms that get a player: all of them, or `count` spread evenly along the list.
fn rooms_with_players(rooms: &[String], count: Option<usize>) -> Vec<String> {
    match count {
        None => rooms.to_vec(),
        Some(count) => {
            let count = count.clamp(1, rooms.len().max(1));
            let step = rooms.len() / count;
            (0..count)
                .filter_map(|i| rooms.get(i * step.max(1)).cloned())
                .collect()
        }
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// The process's `field` of `/proc/self/status` (`VmRSS`: resident now, `VmHWM`: its peak), MiB.
fn memory_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| {
                    l.strip_prefix(field)
                        .is_some_and(|rest| rest.starts_with(':'))
                })
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn summary(label: &str, values: &mut [f64]) -> String {
    values.sort_by(f64::total_cmp);
    format!(
        "{label}: n={} p50={:.3} p99={:.3} max={:.3}",
        values.len(),
        percentile(values, 50.0),
        percentile(values, 99.0),
        values.last().copied().unwrap_or_default()
    )
}

/// The zones' names: `load` alone, else `load-0`, `load-1`, ….
fn zone_names(zones: usize) -> Vec<String> {
    match zones {
        0 | 1 => vec![LOAD_ZONE.to_owned()],
        n => (0..n).map(|i| format!("{LOAD_ZONE}-{i}")).collect(),
    }
}

/// One synthetic zone of a run, built.
pub struct LoadZone {
    /// The zone, its players in and its NPCs built.
    pub zone: Zone,
    /// Rooms with a player.
    pub player_rooms: usize,
    /// Rooms in all.
    pub rooms: usize,
    /// The NPCs a player can see, whose replies are immediate: where social events and lines
    /// said are aimed.
    pub targets: Vec<String>,
}

/// Builds zone `name`: its synthetic world, players in its rooms, then its NPCs (joining after
/// the players, so they start in their tiers instead of waiting for catch-up). `npcs` and
/// `player_rooms` are `--npcs` and `--player-rooms`.
pub fn build_zone(
    name: &str,
    (npcs, player_rooms): (usize, Option<usize>),
    profiles: &ProfileLibrary,
    sets: &SetLibrary,
) -> Result<LoadZone, CommandError> {
    let text = synthetic_world(name, npcs);
    let mut world: WorldFile =
        parse_world_json("synthetic", &text).map_err(|e| CommandError::BadInput(e.to_string()))?;
    drop(text);
    let npcs = std::mem::take(&mut world.npcs);
    let mut zone = Zone::new(
        &world,
        profiles,
        sets,
        ZoneConfig {
            governor: crate::zone::governor::GovernorConfig {
                // Measure, do not shed: the load generator reports raw tick times.
                tick_budget_ms_soft: f64::MAX,
                tick_budget_ms_hard: f64::MAX,
                ..Default::default()
            },
            tick: TickConfig {
                npc_budget_ms: f64::MAX,
                ..TickConfig::default()
            },
            // No game carries the intents out: geppetto's timer ends actions.
            integration: IntegrationConfig::simulated(),
            ..ZoneConfig::default()
        },
        IsolationState::default(),
    )
    .map_err(|e| CommandError::BadInput(e.to_string()))?;
    let clock = crate::runtime::wall_clock();
    let all_rooms: Vec<String> = world.rooms.iter().map(|r| r.id.clone()).collect();
    let rooms = rooms_with_players(&all_rooms, player_rooms);
    let mut setup = crate::zone::ZoneOutput::default();
    for (i, room) in rooms.iter().enumerate() {
        zone.apply(
            &WorldMessage {
                header: header(format!("setup{i}"), name, 0),
                event: WorldEvent::PlayerEntered {
                    player: format!("p{i}"),
                    room: room.clone(),
                },
            },
            &TickInputs::live(&clock),
            &mut setup,
        );
    }
    // Each spec is dropped once its NPC is built, so the zone never holds both at once.
    let mut targets = Vec::new();
    for (i, npc) in npcs.into_iter().enumerate() {
        zone.add_npc(&format!("npcs[{i}]"), &npc)
            .map_err(|e| CommandError::BadInput(e.to_string()))?;
        if rooms.contains(&npc.room) {
            targets.push(npc.agent.id);
        }
    }
    Ok(LoadZone {
        zone,
        player_rooms: rooms.len(),
        rooms: all_rooms.len(),
        targets,
    })
}

/// When each probe was sent, by key: a social event's source, or `{zone}:tick{t}`.
type Sent = Arc<Mutex<BTreeMap<String, Instant>>>;

/// Reads `zone`'s NPC events and intents back from the bus until `stop`, each stream by its
/// own consumer (as a game and a quest tool would), acknowledging as a real consumer does: the
/// latencies of social events to their `social_interaction` and of `time_advanced` to the
/// tick's first intent, milliseconds.
async fn read_outputs(
    bus: Arc<dyn EventBus>,
    zone: String,
    sent: Sent,
    stop: watch::Receiver<bool>,
) -> (Vec<f64>, Vec<f64>) {
    let interactions = read_stream(
        &bus,
        &zone,
        StreamKind::NpcEvents,
        stop.clone(),
        |body, latency_of| {
            // The reader must not be what saturates the machine: skip the other NPC events
            // before parsing.
            if !body.contains("\"social_interaction\"") {
                return None;
            }
            let v = serde_json::from_str::<Value>(body).ok()?;
            if v["type"] != "social_interaction" {
                return None;
            }
            latency_of(v["source"].as_str().unwrap_or_default())
        },
        &sent,
    );
    let mut seen_ticks = std::collections::BTreeSet::new();
    let first_intents = read_stream(
        &bus,
        &zone,
        StreamKind::Intents,
        stop,
        |body, latency_of| {
            let t = serde_json::from_str::<GameTime>(body).ok()?.game_time;
            if !seen_ticks.insert(t) {
                return None;
            }
            latency_of(&format!("{zone}:tick{t}"))
        },
        &sent,
    );
    tokio::join!(interactions, first_intents)
}

/// Reads `stream` of `zone` until `stop`, each batch acknowledged with the next read; `probe`
/// turns a message into a latency, given the latency of a probe by its key.
async fn read_stream(
    bus: &Arc<dyn EventBus>,
    zone: &str,
    stream: StreamKind,
    mut stop: watch::Receiver<bool>,
    mut probe: impl FnMut(&str, &dyn Fn(&str) -> Option<f64>) -> Option<f64>,
    sent: &Sent,
) -> Vec<f64> {
    let mut latencies = Vec::new();
    let Ok(mut consumer) = bus.consumer(zone, stream, "load", "reader").await else {
        return latencies;
    };
    let mut handled: Vec<String> = Vec::new();
    while !*stop.borrow_and_update() {
        let Ok(batch) = consumer
            .ack_and_next_batch(&handled, 4096, Duration::from_millis(5))
            .await
        else {
            continue;
        };
        let now = Instant::now();
        let latency_of = |key: &str| {
            let at = sent.lock().ok().and_then(|mut m| m.remove(key))?;
            Some(now.duration_since(at).as_secs_f64() * 1000.0)
        };
        latencies.extend(batch.iter().filter_map(|d| probe(&d.body, &latency_of)));
        // Acknowledged with the next read, as a real consumer would (an unacked pending list
        // grows without end, and the periodic reclaim that scans it slows the server for
        // everyone).
        handled = batch.into_iter().map(|d| d.id).collect();
    }
    let _ = consumer.ack(&handled).await;
    latencies
}

/// Where the generator sends world events: through the in-process bus, or — on Redis — as a
/// game server does, on a connection of its own, each send period's events in one pipeline
/// (a blocking client: the generator's thread has nothing else to do while Redis answers).
enum Injector {
    Bus(Arc<dyn EventBus>),
    Redis {
        connection: Box<redis::Connection>,
        url: String,
    },
}

impl Injector {
    /// The injector for `bus`, or for the Redis server at `redis`.
    fn open(bus: &Arc<dyn EventBus>, redis: Option<&str>) -> Result<Self, CommandError> {
        let Some(url) = redis else {
            return Ok(Self::Bus(Arc::clone(bus)));
        };
        let failed = |e: redis::RedisError| CommandError::Environment(format!("redis {url}: {e}"));
        let info = url
            .into_connection_info()
            .map_err(failed)?
            .set_tcp_settings(tcp_settings());
        let connection = redis::Client::open(info)
            .and_then(|client| client.get_connection())
            .map_err(failed)?;
        Ok(Self::Redis {
            connection: Box::new(connection),
            url: url.to_owned(),
        })
    }

    /// Sends `due` (zone, world message), in order, and empties it.
    fn send(&mut self, due: &mut Vec<(String, String)>) -> Result<(), CommandError> {
        match self {
            Self::Bus(bus) => {
                for (zone, body) in due.drain(..) {
                    bus.publish(&zone, StreamKind::World, body);
                }
                Ok(())
            }
            Self::Redis { connection, url } => {
                if due.is_empty() {
                    return Ok(());
                }
                let maxlen = StreamMaxlen::Approx(RedisBusConfig::default().stream_maxlen);
                let mut pipe = redis::pipe();
                for (zone, body) in due.drain(..) {
                    pipe.xadd_maxlen(
                        StreamKind::World.key(&zone),
                        maxlen,
                        "*",
                        &[(BODY_FIELD, body)],
                    )
                    .ignore();
                }
                pipe.query::<()>(&mut **connection)
                    .map_err(|e| CommandError::Environment(format!("redis {url}: {e}")))
            }
        }
    }
}

/// A zone of the run, started.
struct Running {
    name: String,
    handle: ZoneHandle,
    /// Its tick durations, milliseconds.
    durations: Arc<Mutex<Vec<f64>>>,
    targets: Vec<String>,
}

/// NPCs per tier, as `active 580, nearby 1520, background 97900`.
fn tier_list(tiers: &[(Tier, usize)]) -> String {
    let tiers: Vec<String> = tiers
        .iter()
        .map(|(t, n)| format!("{} {n}", t.as_str()))
        .collect();
    tiers.join(", ")
}

/// Runs the load and returns the report.
pub fn run_load(options: &LoadOptions) -> Result<String, CommandError> {
    let profiles = ProfileLibrary::embedded().map_err(|e| CommandError::BadInput(e.to_string()))?;
    let sets = SetLibrary::embedded().map_err(|e| CommandError::BadInput(e.to_string()))?;
    let names = zone_names(options.zones);
    let mut built = Vec::with_capacity(names.len());
    for name in &names {
        built.push((
            name.clone(),
            build_zone(name, (options.npcs, options.player_rooms), &profiles, &sets)?,
        ));
    }
    let (player_rooms, rooms) = built
        .first()
        .map_or((0, 0), |(_, zone)| (zone.player_rooms, zone.rooms));
    let options = options.clone();
    let future = async move {
        if let Some(url) = &options.redis {
            // The load generator's own zones, started afresh on every run.
            for name in &names {
                reset_redis_zone(url, name, true).await?;
            }
        }
        let bus = open_bus(options.redis.as_deref()).await?;
        let actors = ActorRuntime::new(names.len().min(crate::runtime::cores()));
        let (stop, stopped) = watch::channel(false);
        let llm = LlmConfig {
            provider: options.llm_url.as_ref().map(|url| OpenAiProviderConfig {
                base_url: url.clone(),
                ..OpenAiProviderConfig::default()
            }),
            ..LlmConfig::default()
        };
        let seams = start_llm(&llm, None, &bus, &stopped)?;
        let sent: Sent = Arc::default();
        let mut running = Vec::with_capacity(built.len());
        let mut loops = Vec::with_capacity(built.len());
        let mut readers = Vec::with_capacity(built.len());
        for (name, zone) in built {
            let durations: Arc<Mutex<Vec<f64>>> = Arc::default();
            let hooks = ZoneHooks::default().with_tick_sink(Arc::clone(&durations));
            let handle = actors.start_with(zone.zone, hooks);
            loops.push(tokio::spawn(run_zone(
                handle.clone(),
                Arc::clone(&bus),
                ConsumerConfig {
                    block_ms: 5,
                    ..ConsumerConfig::default()
                },
                Persistence::volatile(),
                Some(seams.link.clone()),
                stopped.clone(),
            )));
            readers.push(tokio::spawn(read_outputs(
                Arc::clone(&bus),
                name.clone(),
                Arc::clone(&sent),
                stopped.clone(),
            )));
            running.push(Running {
                name,
                handle,
                durations,
                targets: zone.targets,
            });
        }
        let started = Instant::now();
        let total = Duration::from_secs_f64(options.seconds.max(0.1));
        let period = Duration::from_millis(LOAD_SEND_PERIOD_MS);
        let mut interval = tokio::time::interval(period);
        let (mut game_time, mut social_sent, mut world_sent) = (0u64, 0u64, 0u64);
        let mut says_sent = 0u64;
        // The zone the `n`th social event or line said goes to, and one of its NPCs.
        let aim = |n: u64, spread: usize| {
            let zone = &running[n as usize % running.len()];
            let target = zone.targets[(n as usize * spread) % zone.targets.len().max(1)].clone();
            (zone.name.clone(), target)
        };
        let mut injector = Injector::open(&bus, options.redis.as_deref())?;
        // The world events due this send period: (zone, message).
        let mut due: Vec<(String, String)> = Vec::new();
        while started.elapsed() < total {
            injector.send(&mut due)?;
            interval.tick().await;
            let elapsed = started.elapsed().as_secs_f64();
            let due_ticks = (elapsed * LOAD_TICKS_PER_SECOND as f64) as u64;
            while game_time < due_ticks {
                game_time += 1;
                for zone in &running {
                    if let Ok(mut m) = sent.lock() {
                        m.insert(format!("{}:tick{game_time}", zone.name), Instant::now());
                    }
                    due.push((
                        zone.name.clone(),
                        WorldMessage {
                            header: header(format!("t{game_time}"), &zone.name, game_time),
                            event: WorldEvent::TimeAdvanced,
                        }
                        .to_json(),
                    ));
                    world_sent += 1;
                }
            }
            let due_social = (elapsed * options.events_per_sec) as u64;
            while social_sent < due_social {
                social_sent += 1;
                let source = format!("load-{social_sent}");
                let (zone, target) = aim(social_sent, 7919);
                if let Ok(mut m) = sent.lock() {
                    m.insert(source.clone(), Instant::now());
                }
                due.push((
                    zone.clone(),
                    WorldMessage {
                        header: header(format!("s{social_sent}"), &zone, game_time),
                        event: WorldEvent::SocialEvent {
                            kind: "greeting".into(),
                            source,
                            target,
                            deltas: BTreeMap::from([("FUN".into(), 1.0)]),
                            mood: None,
                            about: None,
                        },
                    }
                    .to_json(),
                ));
                world_sent += 1;
            }
            let due_says = (elapsed * options.says_per_sec) as u64;
            while says_sent < due_says {
                says_sent += 1;
                let (zone, addressee) = aim(says_sent, 104_729);
                let said = WorldMessage {
                    header: header(format!("say{says_sent}"), &zone, game_time),
                    event: WorldEvent::Say {
                        speaker: "load-player".into(),
                        room: None,
                        text: format!("{addressee}, you are a liar and a thief"),
                        addressee: Some(addressee),
                    },
                }
                .to_json();
                due.push((zone, said));
                world_sent += 1;
            }
        }
        injector.send(&mut due)?;
        let sending = started.elapsed().as_secs_f64();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut zones = Vec::with_capacity(running.len());
        for zone in &running {
            let tiers = zone
                .handle
                .status()
                .await
                .map(|s| s.tiers)
                .map_err(|e| CommandError::Environment(e.to_string()))?;
            let durations = zone.durations.lock().map(|d| d.clone()).unwrap_or_default();
            zones.push((zone.name.clone(), tiers, durations));
        }
        let wall = started.elapsed().as_secs_f64();
        let _ = stop.send(true);
        let (mut applied, mut published) = (0u64, 0u64);
        for task in loops {
            let stats = task
                .await
                .map_err(|e| CommandError::Environment(e.to_string()))?
                .map_err(|e| CommandError::Environment(e.to_string()))?;
            applied += stats.applied;
            published += stats.published;
        }
        let (mut latencies, mut tick_latencies) = (Vec::new(), Vec::new());
        for task in readers {
            let (social, ticks) = task
                .await
                .map_err(|e| CommandError::Environment(e.to_string()))?;
            latencies.extend(social);
            tick_latencies.extend(ticks);
        }
        actors.stop();
        let bus_stats = bus.stats();
        let mut report = String::new();
        let bus_name = if options.redis.is_some() {
            "redis"
        } else {
            "in-process"
        };
        // NPCs per tier over every zone, in the order a zone lists them.
        let mut tiers: Vec<(Tier, usize)> = Vec::new();
        for (tier, count) in zones.iter().flat_map(|(_, tiers, _)| tiers) {
            match tiers.iter_mut().find(|(t, _)| t == tier) {
                Some((_, sum)) => *sum += count,
                None => tiers.push((*tier, *count)),
            }
        }
        if zones.len() == 1 {
            let _ = writeln!(
                report,
                "load: {} NPCs ({}; players in {player_rooms} of {rooms} rooms), bus {bus_name}, {wall:.1} s",
                options.npcs,
                tier_list(&tiers),
            );
        } else {
            let _ = writeln!(
                report,
                "load: {} zones of {} NPCs, {} in all ({}; players in {player_rooms} of {rooms} rooms of each zone), bus {bus_name}, {wall:.1} s",
                zones.len(),
                options.npcs,
                options.npcs * zones.len(),
                tier_list(&tiers),
            );
        }
        let _ = writeln!(
            report,
            "world events sent {world_sent}, applied {applied} ({:.0}/s over the {sending:.1} s they were sent), published {published}, bus dropped {}",
            applied as f64 / sending,
            bus_stats.dropped
        );
        let _ = writeln!(
            report,
            "{} ms",
            summary(
                "event->output latency (social_event -> npc_event)",
                &mut latencies
            )
        );
        let _ = writeln!(
            report,
            "{} ms",
            summary("time_advanced->first intent latency", &mut tick_latencies)
        );
        let mut all_durations: Vec<f64> = zones
            .iter()
            .flat_map(|(_, _, durations)| durations.iter().copied())
            .collect();
        let _ = writeln!(
            report,
            "{} ms",
            summary("tick duration", &mut all_durations)
        );
        if zones.len() > 1 {
            for (name, tiers, mut durations) in zones {
                let _ = writeln!(
                    report,
                    "zone {name} ({}): {} ms",
                    tier_list(&tiers),
                    summary("tick duration", &mut durations)
                );
            }
        }
        let _ = writeln!(
            report,
            "llm: {}, {says_sent} said lines perceived",
            options.llm_url.as_deref().unwrap_or("templates only")
        );
        let _ = write!(
            report,
            "rss {:.1} MiB (peak {:.1} MiB)",
            memory_mib("VmRSS"),
            memory_mib("VmHWM")
        );
        Ok(report)
    };
    crate::runtime::block_on(crate::runtime::cores(), future)
        .map_err(|e| CommandError::Environment(e.to_string()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn players_stand_in_every_room_or_in_a_few_spread_along_the_zone() {
        let rooms: Vec<String> = (0..10).map(|r| format!("r{r}")).collect();
        assert_eq!(rooms_with_players(&rooms, None), rooms);
        assert_eq!(rooms_with_players(&rooms, Some(2)), ["r0", "r5"]);
        assert_eq!(rooms_with_players(&rooms, Some(0)), ["r0"]);
        assert_eq!(rooms_with_players(&rooms, Some(99)).len(), 10);
    }

    #[test]
    fn one_zone_is_named_load_and_several_are_numbered() {
        assert_eq!(zone_names(1), ["load"]);
        assert_eq!(zone_names(3), ["load-0", "load-1", "load-2"]);
    }
}
