//! The demo: the embedded village on the in-process bus (or Redis) with the internal clock and
//! a short script ([`script`]), handing a readable live feed of what the NPCs do ([`feed`]) to
//! the caller. The feed is read back from the bus like any subscriber would, so the demo
//! exercises the same path as a game server; everything else is the service's.
//!
//! Owns the demo's options ([`DemoOptions`], which are also `geppetto demo`'s arguments), its
//! zone settings, the redb file that keeps the village between runs, and the run
//! ([`run_demo`]).

mod feed;
mod script;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use geppetto_llm::{LlmConfig, OpenAiProviderConfig};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::bus::{ConsumerConfig, EventBus};
use crate::config::clock::{ClockConfig, ClockKind};
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::content::world_file::{EMBEDDED_VILLAGE, embedded_village};
use crate::drive::bus::{open_bus, reset_redis_zone};
use crate::drive::error::DriveError;
use crate::drive::spend::PriceOptions;
use crate::http::WhatIfSource;
use crate::http::llm::LlmAdmin;
use crate::runtime::actor::{ActorRuntime, ZoneHandle};
use crate::runtime::recovery::{SnapshotKeeper, recover};
use crate::runtime::starter::start_llm;
use crate::runtime::world_log::WorldLog;
use crate::runtime::zone_loop::{LoopStats, Persistence, ServiceError, run_clock, run_zone};
use crate::zone::isolation::IsolationState;
use crate::zone::{IntegrationConfig, Zone, ZoneConfig, ZoneError};
use feed::{Feed, Names};

pub use feed::{llm_summary, spend_summary};

/// Default speed of the demo clock, game minutes per wall-clock second.
pub const DEFAULT_DEMO_SPEED: f64 = 60.0;

/// The demo's tick budget (soft and hard), milliseconds: out of the way on purpose.
pub const DEMO_TICK_BUDGET_MS: f64 = 10_000.0;

/// The name the village's world has in the redb file that keeps it.
const KEPT_WORLD: &str = "village";

/// What to run (`geppetto demo`'s arguments).
#[derive(Clone, Debug, clap::Args)]
pub struct DemoOptions {
    /// Stop after this many game hours.
    #[arg(long, default_value_t = 24.0)]
    pub hours: f64,
    /// Game minutes per wall-clock second.
    #[arg(long, default_value_t = DEFAULT_DEMO_SPEED)]
    pub speed: f64,
    /// Run over Redis Streams at this URL instead of the in-process bus. The village's
    /// streams must be empty there (see --zone, --reset).
    #[arg(long)]
    pub redis: Option<String>,
    /// The zone the village runs as: over Redis, the streams
    /// `geppetto:{ZONE}:world`, `…:intents`, … it writes and reads.
    #[arg(long, default_value = "village")]
    pub zone: String,
    /// Over Redis, delete the zone's streams first when they hold entries (without it the
    /// demo refuses to touch a zone in use).
    #[arg(long, requires = "redis")]
    pub reset: bool,
    /// An OpenAI-compatible endpoint (e.g. `http://127.0.0.1:8080/v1`) that writes flavour
    /// text for witnessed interactions and reads what players say; the key, if any, comes
    /// from `GEPPETTO_LLM_API_KEY`. Without it the demo runs on templates.
    #[arg(long)]
    pub llm_url: Option<String>,
    /// The model to ask at `--llm-url`.
    #[arg(long, requires = "llm_url")]
    pub llm_model: Option<String>,
    /// The ceiling of every model call in milliseconds (default: the `[llm]` defaults,
    /// 8000 for a narration a player witnessed, 10000 for the rest).
    #[arg(long, requires = "llm_url", value_parser = clap::value_parser!(u64).range(1..))]
    pub llm_timeout_ms: Option<u64>,
    /// The model's price per million tokens.
    #[command(flatten)]
    pub prices: PriceOptions,
    /// Keep the village in this redb file (world log and snapshots): the next run resumes
    /// where this one stopped, and `geppetto replay --redb FILE` replays it.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Serve the admin API and the web inspector on this address while the demo runs
    /// (e.g. `127.0.0.1:7878`, then open http://127.0.0.1:7878/inspector). Its calls that
    /// replay or change anything take the bearer token in `GEPPETTO_ADMIN_TOKEN`, as
    /// `serve`'s do (none set: refused).
    #[arg(long)]
    pub admin: Option<String>,
}

impl DemoOptions {
    /// The seams' settings: defaults, plus the endpoint when one is given.
    pub fn llm_config(&self) -> LlmConfig {
        let provider = self.llm_url.as_ref().map(|url| {
            let defaults = OpenAiProviderConfig::default();
            OpenAiProviderConfig {
                base_url: url.clone(),
                model: self.llm_model.clone().unwrap_or(defaults.model.clone()),
                ..defaults
            }
        });
        let defaults = LlmConfig::default();
        let prices = self.prices.prices(provider.as_ref());
        LlmConfig {
            provider,
            prices,
            call_timeout_ms: self.llm_timeout_ms.unwrap_or(defaults.call_timeout_ms),
            witnessed_narration_timeout_ms: self
                .llm_timeout_ms
                .unwrap_or(defaults.witnessed_narration_timeout_ms),
            ..defaults
        }
    }
}

/// The demo shows lives, not load shedding: its budgets are far above any tick, so the feed is
/// the same on every machine and build (`serve` keeps the documented 4/5 ms and 2 ms an NPC).
/// With no game to carry intents out, geppetto's timer ends actions.
fn demo_zone_config() -> ZoneConfig {
    let mut config = ZoneConfig::default();
    config.governor.tick_budget_ms_soft = DEMO_TICK_BUDGET_MS;
    config.governor.tick_budget_ms_hard = DEMO_TICK_BUDGET_MS;
    config.tick.npc_budget_ms = DEMO_TICK_BUDGET_MS;
    config.integration = IntegrationConfig::simulated();
    config
}

/// Builds the village's zone over a perception vocabulary.
type BuildZone<'a> = dyn Fn(&[String]) -> Result<Zone, ZoneError> + Sync + 'a;

/// The village as the redb file at `path` left it (a fresh one if it holds nothing), the
/// persistence that keeps it there, and the source the admin API's what-if reads.
async fn kept_village(
    path: &Path,
    build: &BuildZone<'_>,
    bus: &Arc<dyn EventBus>,
) -> Result<(Zone, Persistence, WhatIfSource), DriveError> {
    let storage = crate::config::StorageSection::default();
    let file = geppetto_storage::RedbFile::open(path, &storage.stores)?;
    let store: Arc<dyn geppetto_storage::SnapshotStore> = Arc::new(file.snapshot_store());
    let log = WorldLog::Embedded(Arc::new(file.event_log()));
    let consumer = ConsumerConfig::default();
    let recovered = recover(
        KEPT_WORLD,
        build,
        &*store,
        &log,
        &**bus,
        &consumer,
        storage.replay_page_messages,
    )
    .await
    .map_err(|source| DriveError::Recovery {
        path: path.display().to_string(),
        source,
    })?;
    let source = WhatIfSource {
        world: KEPT_WORLD.into(),
        zone_config: demo_zone_config(),
        limits: consumer.limits.clone(),
        log: log.clone(),
        store: Arc::clone(&store),
    };
    let keeper = SnapshotKeeper {
        store,
        every_ticks: storage.snapshot_every_ticks,
        sequence: recovered.newest_sequence,
        flush_timeout: std::time::Duration::from_millis(storage.snapshot_flush_timeout_ms),
        last_tick: recovered.zone.tick,
    };
    let persistence = Persistence {
        isolation: None,
        log,
        snapshots: Some(keeper),
        resume_after: recovered.last_event_id,
        controls: None,
        lease: None,
    };
    Ok((recovered.zone, persistence, source))
}

/// Serves the admin API and the inspector for the running village (`zone`, run by `handle`) at
/// `address` until the process ends.
fn serve_admin(
    address: &str,
    bus: &Arc<dyn EventBus>,
    (zone, handle): (&str, &ZoneHandle),
    (whatif, llm): (BTreeMap<String, WhatIfSource>, LlmAdmin),
    stopped: &watch::Receiver<bool>,
) -> Result<(), DriveError> {
    use crate::runtime::directory::{RunningZone, ZoneDirectory};
    let admin = crate::config::AdminConfig::default();
    let zones = ZoneDirectory::default();
    zones.insert(RunningZone {
        handle: handle.clone(),
        controls: None,
        lease: None,
    });
    let state = crate::http::AdminState {
        story_feed: crate::http::story_feed(bus, [zone.to_owned()], "inspector", stopped),
        whatif,
        whatif_busy: Arc::default(),
        zones,
        bus: Arc::clone(bus),
        content_reload: None,
        metrics: None,
        token: geppetto_llm::read_secret(&admin.token_env, None)?,
        max_body_bytes: admin.max_body_bytes,
        llm: Some(llm),
    };
    let server = crate::http::start(state, address).map_err(|source| DriveError::Admin {
        address: address.to_owned(),
        source,
    })?;
    tokio::spawn(server);
    Ok(())
}

/// The village running: its zone, the bus, the stop signal, and its clock's and loop's tasks.
struct Running<'a> {
    handle: &'a ZoneHandle,
    bus: &'a Arc<dyn EventBus>,
    stop: &'a watch::Sender<bool>,
    tasks: (JoinHandle<u64>, JoinHandle<Result<LoopStats, ServiceError>>),
}

/// Hands `sink` the feed's lines until the village reached game time `end` and everything it
/// wrote is printed; returns how many lines that was.
async fn follow(
    running: Running<'_>,
    end: u64,
    feed: &mut Feed,
    sink: &mut impl FnMut(String),
) -> Result<usize, DriveError> {
    let Running {
        handle,
        bus,
        stop,
        tasks,
    } = running;
    let mut tasks = Some(tasks);
    let mut printed = 0usize;
    loop {
        // Once the zone has applied the last tick, stop its loop: the loop finishes publishing
        // the batch in hand before it looks at the stop signal, so after it has returned and
        // the bus is flushed, every output is on the bus and the feed drains it.
        let reached = handle.status().await.map_or(true, |s| s.game_time >= end);
        if let Some((clock_task, loop_task)) = tasks.take_if(|_| reached) {
            let _ = stop.send(true);
            let _ = clock_task.await;
            loop_task.await??;
            bus.flush().await?;
            feed.finish();
        }
        let (lines, drained) = feed.read(sink).await?;
        printed += lines;
        if drained {
            return Ok(printed);
        }
    }
}

/// Runs the demo, handing each feed line to `sink`; returns how many lines it printed.
pub fn run_demo(options: &DemoOptions, mut sink: impl FnMut(String)) -> Result<usize, DriveError> {
    let (file, _) = EMBEDDED_VILLAGE;
    let mut world = embedded_village()?;
    world.zone.clone_from(&options.zone);
    let profiles = ProfileLibrary::embedded()?;
    let sets = SetLibrary::embedded()?;
    let config = demo_zone_config();
    let build = |vocabulary: &[String]| {
        Zone::over(
            &world,
            &profiles,
            &sets,
            None,
            config.clone(),
            IsolationState::default(),
            vocabulary,
        )
    };
    let zone = build(&[]).map_err(|source| DriveError::Zone {
        world: file.to_owned(),
        source,
    })?;
    let names = Names::new(&world);
    let future = async move {
        let zone_name = zone.name.clone();
        if let Some(url) = &options.redis {
            reset_redis_zone(url, &zone_name, options.reset).await?;
        }
        let bus = open_bus(options.redis.as_deref()).await?;
        let (zone, persistence, whatif) = match &options.data {
            Some(path) => {
                let (zone, persistence, source) = kept_village(path, &build, &bus).await?;
                let whatif = BTreeMap::from([(zone_name.clone(), source)]);
                (zone, persistence, whatif)
            }
            None => (zone, Persistence::volatile(), BTreeMap::new()),
        };
        let (start, npcs) = (zone.game_time, zone.agents.len());
        let end = start + (options.hours.max(0.0) * 60.0).round() as u64;
        let actors = ActorRuntime::new(crate::runtime::cores());
        let handle = actors.start(zone);
        let (stop, stopped) = watch::channel(false);
        let llm_config = options.llm_config();
        let seams = start_llm(&llm_config, None, &bus, &stopped)?;
        let llm_stats = seams.stats.clone();
        if let Some(address) = &options.admin {
            let llm = LlmAdmin {
                spend: seams.spend.clone(),
                stats: seams.stats.clone(),
                started: std::time::Instant::now(),
            };
            let zone = (zone_name.as_str(), &handle);
            serve_admin(address, &bus, zone, (whatif, llm), &stopped)?;
        }
        let loop_task = tokio::spawn(run_zone(
            handle.clone(),
            Arc::clone(&bus),
            ConsumerConfig::default(),
            persistence,
            Some(seams.link),
            stopped.clone(),
        ));
        let clock = ClockConfig {
            kind: ClockKind::Internal,
            speed_minutes_per_second: options.speed,
            ..ClockConfig::default()
        };
        let clock_task = tokio::spawn(run_clock(
            Arc::clone(&bus),
            zone_name.clone(),
            start,
            Some(end),
            clock,
            script::script(&zone_name, start),
            stopped.clone(),
        ));
        let mut feed = Feed::open(&*bus, &zone_name, names).await?;
        let running = Running {
            handle: &handle,
            bus: &bus,
            stop: &stop,
            tasks: (clock_task, loop_task),
        };
        let printed = follow(running, end, &mut feed, &mut sink).await?;
        actors.stop();
        if let Some(provider) = &llm_config.provider {
            let counts = llm_stats.snapshot();
            sink(llm_summary(&provider.model, &counts));
            let game_hours = end.saturating_sub(start) as f64 / 60.0;
            sink(spend_summary(&counts.spend, npcs, game_hours));
        }
        Ok(printed)
    };
    crate::runtime::block_on(crate::runtime::cores(), future)?
}
