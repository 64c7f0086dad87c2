//! The load generator: synthetic zones of N NPCs each ([`world`]: 20 to a room, three
//! providers a room, a player in every room — all NPCs Active — or in `player_rooms` rooms
//! spread along the zone, the rest Nearby or Background by the tier rules), one or several in
//! one process, driven through the real service loop and bus by an internal clock at
//! [`LOAD_TICKS_PER_SECOND`] plus social events at the requested rate, spread over the zones
//! and aimed at NPCs in rooms with a player ([`inject`]). On Redis the generator writes its
//! events as a game server would, on a connection of its own, not through geppetto's bus.
//!
//! Reports ([`report`]) world-event throughput, event→output latency (a social event to its
//! `social_interaction` NPC event, read back from the bus by [`probe`]),
//! time_advanced→first-intent latency, tick duration percentiles (and each zone's, with
//! several), NPCs per tier and the process's resident memory.

mod inject;
mod probe;
mod report;
mod world;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use geppetto_llm::{LlmConfig, OpenAiProviderConfig};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::bus::{ConsumerConfig, EventBus};
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::drive::bus::{open_bus, reset_redis_zone};
use crate::drive::error::DriveError;
use crate::drive::spend::PriceOptions;
use crate::runtime::actor::{ActorRuntime, ZoneHandle, ZoneHooks};
use crate::runtime::llm_bridge::LlmLink;
use crate::runtime::starter::start_llm;
use crate::runtime::zone_loop::{LoopStats, Persistence, ServiceError, run_zone};
use inject::{Aim, Due, Injector, Schedule};
use probe::{Latencies, Sent, read_outputs};
use report::{Measured, ZoneFigures};

pub use inject::LOAD_TICKS_PER_SECOND;
pub use world::{LOAD_NPCS_PER_ROOM, LOAD_ZONE, LoadZone, build_zone, synthetic_world};

/// How often the generator sends what is due, milliseconds: events go out in slices this
/// long, close to the steady arrival of a live game (10 ms slices made bursts of 200 events at
/// 20,000/s, each waiting on the whole burst).
pub const LOAD_SEND_PERIOD_MS: u64 = 2;

/// How long the zones get to finish what was sent before they are measured, milliseconds.
const LOAD_SETTLE_MS: u64 = 300;

/// The shortest run, seconds.
const LOAD_MIN_SECONDS: f64 = 0.1;

/// How long a zone's loop blocks on an empty world stream, milliseconds.
const LOAD_BLOCK_MS: u64 = 5;

/// What to run (`geppetto load`'s arguments).
#[derive(Clone, Debug, clap::Args)]
pub struct LoadOptions {
    /// Zones run in one process, each of `--npcs` NPCs (the clock ticks every zone; social
    /// events and said lines are spread over them).
    #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub zones: usize,
    /// NPCs in each zone (20 to a room).
    #[arg(long, default_value_t = 200)]
    pub npcs: usize,
    /// Rooms with a player in each zone, spread along it (default: every room, so every
    /// NPC is Active); fewer leaves the rest Nearby or Background, as in a live world.
    #[arg(long)]
    pub player_rooms: Option<usize>,
    /// World events per second besides the clock.
    #[arg(long, default_value_t = 1000.0)]
    pub events_per_sec: f64,
    /// Wall-clock seconds to run.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Run over Redis Streams at this URL.
    #[arg(long)]
    pub redis: Option<String>,
    /// Player lines (`say` events, perceived by the LLM seams) per second.
    #[arg(long, default_value_t = 0.0)]
    pub says_per_sec: f64,
    /// An OpenAI-compatible endpoint for the seams (default: templates only). Pointing it at
    /// an endpoint that never answers shows the seams never delay a tick.
    #[arg(long)]
    pub llm_url: Option<String>,
    /// The model's price per million tokens.
    #[command(flatten)]
    pub prices: PriceOptions,
}

impl LoadOptions {
    /// The seams' settings: defaults, plus the endpoint and its price when one is given.
    fn llm_config(&self) -> LlmConfig {
        let provider = self.llm_url.as_ref().map(|url| OpenAiProviderConfig {
            base_url: url.clone(),
            ..OpenAiProviderConfig::default()
        });
        LlmConfig {
            prices: self.prices.prices(provider.as_ref()),
            provider,
            ..LlmConfig::default()
        }
    }
}

/// A zone of the run, started.
struct Running {
    name: String,
    handle: ZoneHandle,
    /// Its tick durations, milliseconds.
    durations: Arc<Mutex<Vec<f64>>>,
    /// Its loop.
    zone_loop: JoinHandle<Result<LoopStats, ServiceError>>,
    /// Its outputs' reader.
    reader: JoinHandle<Latencies>,
}

/// Runs the load and returns the report.
pub fn run_load(options: &LoadOptions) -> Result<String, DriveError> {
    let profiles = ProfileLibrary::embedded()?;
    let sets = SetLibrary::embedded()?;
    let mut built = Vec::new();
    for name in world::zone_names(options.zones) {
        let zone = build_zone(
            &name,
            (options.npcs, options.player_rooms),
            &profiles,
            &sets,
        )?;
        built.push((name, zone));
    }
    let options = options.clone();
    crate::runtime::block_on(crate::runtime::cores(), drive(options, built))?
}

/// Starts the zones, sends the load, stops and measures.
async fn drive(options: LoadOptions, built: Vec<(String, LoadZone)>) -> Result<String, DriveError> {
    let layout = built
        .first()
        .map_or((0, 0), |(_, zone)| (zone.player_rooms, zone.rooms));
    if let Some(url) = &options.redis {
        // The load generator's own zones, started afresh on every run.
        for (name, _) in &built {
            reset_redis_zone(url, name, true).await?;
        }
    }
    let bus = open_bus(options.redis.as_deref()).await?;
    let actors = ActorRuntime::new(built.len().min(crate::runtime::cores()));
    let (stop, stopped) = watch::channel(false);
    let seams = start_llm(&options.llm_config(), None, &bus, &stopped)?;
    let sent = Sent::default();
    let mut aims = Vec::with_capacity(built.len());
    let mut running = Vec::with_capacity(built.len());
    for (name, zone) in built {
        aims.push(Aim {
            zone: name.clone(),
            targets: zone.targets,
        });
        let context = (&bus, &seams.link, &sent, &stopped);
        running.push(start_zone(&actors, name, zone.zone, context));
    }
    let mut schedule = Schedule::new(aims, options.events_per_sec, options.says_per_sec);
    let started = Instant::now();
    let mut injector = Injector::open(&bus, options.redis.as_deref())?;
    send_for(&options, started, (&mut schedule, &mut injector), &sent).await?;
    let sending = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_millis(LOAD_SETTLE_MS)).await;
    let mut zones: Vec<ZoneFigures> = Vec::with_capacity(running.len());
    for zone in &running {
        let tiers = zone.handle.status().await?.tiers;
        let durations = zone.durations.lock().map(|d| d.clone()).unwrap_or_default();
        zones.push((zone.name.clone(), tiers, durations));
    }
    let wall = started.elapsed().as_secs_f64();
    // Read while the zones are resident: they are dropped once stopped.
    let rss_mib = report::memory_mib("VmRSS");
    let bus_held_mib = bus.stats().held_bytes as f64 / (1024.0 * 1024.0);
    let _ = stop.send(true);
    let (mut applied, mut published) = (0u64, 0u64);
    let (mut social_latencies, mut tick_latencies) = (Vec::new(), Vec::new());
    let mut readers = Vec::with_capacity(running.len());
    for zone in running {
        let stats = zone.zone_loop.await??;
        applied += stats.applied;
        published += stats.published;
        readers.push(zone.reader);
    }
    for reader in readers {
        let latencies = reader.await?;
        social_latencies.extend(latencies.social);
        tick_latencies.extend(latencies.first_intents);
    }
    actors.stop();
    Ok(Measured {
        npcs: options.npcs,
        layout,
        bus: if options.redis.is_some() {
            "redis"
        } else {
            "in-process"
        },
        wall,
        sending,
        sent: schedule.world,
        applied,
        published,
        dropped: bus.stats().dropped,
        social_latencies,
        tick_latencies,
        zones,
        spend: options
            .llm_url
            .is_some()
            .then(|| seams.stats.snapshot().spend),
        game_hours: schedule.game_time as f64 / 60.0,
        bus_held_mib,
        llm_url: options.llm_url,
        says: schedule.says,
        rss_mib,
    }
    .report())
}

/// Starts zone `name` on `actors` with its loop over the bus and its outputs' reader.
fn start_zone(
    actors: &ActorRuntime,
    name: String,
    zone: crate::zone::Zone,
    (bus, llm, sent, stopped): (&Arc<dyn EventBus>, &LlmLink, &Sent, &watch::Receiver<bool>),
) -> Running {
    let durations: Arc<Mutex<Vec<f64>>> = Arc::default();
    let hooks = ZoneHooks::default().with_tick_sink(Arc::clone(&durations));
    let handle = actors.start_with(zone, hooks);
    let zone_loop = tokio::spawn(run_zone(
        handle.clone(),
        Arc::clone(bus),
        ConsumerConfig {
            block_ms: LOAD_BLOCK_MS,
            ..ConsumerConfig::default()
        },
        Persistence::volatile(),
        Some(llm.clone()),
        stopped.clone(),
    ));
    let reader = tokio::spawn(read_outputs(
        Arc::clone(bus),
        name.clone(),
        sent.clone(),
        stopped.clone(),
    ));
    Running {
        name,
        handle,
        durations,
        zone_loop,
        reader,
    }
}

/// Sends what `schedule` makes due, a send period at a time, for the run's seconds from
/// `started`.
async fn send_for(
    options: &LoadOptions,
    started: Instant,
    (schedule, injector): (&mut Schedule, &mut Injector),
    sent: &Sent,
) -> Result<(), DriveError> {
    let total = Duration::from_secs_f64(options.seconds.max(LOAD_MIN_SECONDS));
    let mut interval = tokio::time::interval(Duration::from_millis(LOAD_SEND_PERIOD_MS));
    let mut due = Due::new();
    while started.elapsed() < total {
        injector.send(&mut due)?;
        interval.tick().await;
        schedule.catch_up(started.elapsed().as_secs_f64(), sent, &mut due);
    }
    injector.send(&mut due)
}
