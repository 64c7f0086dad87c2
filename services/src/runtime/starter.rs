//! Starting the zones of a service: the LLM seams, the durable bus and snapshot store, the
//! content (world files, profiles, archetypes, sets), and [`ZoneStarter`], which recovers a
//! zone (snapshot + log), starts its actor, and runs its loop and clock until told to stop. A
//! single instance starts every zone at once (`geppetto serve`); a clustered one leaves the
//! choice to [`crate::runtime::cluster`], which starts and stops zones as it takes and gives up
//! their leases.

use std::path::Path;
use std::sync::Arc;

use geppetto_llm::{LlmConfig, TemplateProvider, WorkerStats};
use geppetto_storage::{MemorySnapshotStore, RedbFile, RedisSnapshotStore, SnapshotStore};
use tokio::sync::{mpsc, watch};

use crate::bus::EventBus;
use crate::bus::memory::InProcessBus;
use crate::bus::redis::RedisBus;
use crate::config::clock::ClockKind;
use crate::config::{BusKind, ServiceConfig, SnapshotBackend};
use crate::content::archetypes::ArchetypeLibrary;
use crate::content::llm_assets;
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::content::world_file::{WorldFile, load_world_file};
use crate::runtime::actor::ActorRuntime;
use crate::runtime::directory::{RunningZone, ZoneDirectory};
use crate::runtime::lease::LeaseGuard;
use crate::runtime::llm_bridge::{self, LlmLink};
use crate::runtime::recovery::{SnapshotKeeper, recover};
use crate::runtime::world_log::WorldLog;
use crate::runtime::zone_control::Rebuild;
use crate::runtime::zone_loop::{
    IsolationPersistence, LoopStats, Persistence, ServiceError, load_isolation, run_clock, run_zone,
};
use crate::zone::isolation::IsolationState;
use crate::zone::{Zone, ZoneConfig, ZoneError};

/// Why the service's parts could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The configuration or the content was refused (field or file and reason).
    #[error("{0}")]
    Refused(String),
    /// Something around it failed: a store, Redis.
    #[error("{0}")]
    Unavailable(String),
}

fn environment(error: impl std::fmt::Display) -> StartError {
    StartError::Unavailable(error.to_string())
}

/// The started LLM seams of a service: the link zone loops use, the placeholder writer and
/// the worker's counters.
pub struct StartedSeams {
    /// For zone loops.
    pub link: LlmLink,
    /// For zones' placeholders.
    pub narrator: Arc<TemplateProvider>,
    /// Calls, fallbacks by reason, deliveries and latency so far.
    pub stats: WorkerStats,
    /// The spend budget: what the calls spent (to keep across restarts and read) and the
    /// allowances in force (to read and change).
    pub spend: geppetto_llm::SpendBudgetHandle,
}

/// Starts the seams of `config` (inside the runtime) and the task that publishes what they
/// say; both stop when `stopped` turns true.
pub fn start_llm(
    config: &LlmConfig,
    assets_dir: Option<&Path>,
    bus: &Arc<dyn EventBus>,
    stopped: &watch::Receiver<bool>,
) -> Result<StartedSeams, StartError> {
    let assets = llm_assets::assets(assets_dir).map_err(|e| StartError::Refused(e.to_string()))?;
    let narrator = llm_assets::placeholder_writer(&assets, config);
    let mut stop = stopped.clone();
    let shutdown = async move {
        let _ = stop.wait_for(|stopped| *stopped).await;
    };
    let seams = llm_bridge::start(config, assets, shutdown)
        .map_err(|e| StartError::Refused(e.to_string()))?;
    tokio::spawn(llm_bridge::run_output(
        seams.output,
        Arc::clone(bus),
        seams.link.rooms.clone(),
        seams.worker.stats.clone(),
    ));
    Ok(StartedSeams {
        link: seams.link,
        narrator,
        stats: seams.worker.stats,
        spend: seams.worker.spend,
    })
}

/// Snapshot and reload requests a zone loop holds before the admin API is told to wait.
const ZONE_CONTROLS_QUEUED: usize = 4;

/// The bus and what makes the service durable: the snapshot store and the world log.
#[derive(Clone)]
pub struct Durable {
    /// The Redis bus, when the bus is Redis (the leases and fences use it).
    pub redis: Option<Arc<RedisBus>>,
    /// The bus.
    pub bus: Arc<dyn EventBus>,
    /// Snapshots and isolation counts.
    pub store: Arc<dyn SnapshotStore>,
    /// The same store when it is Redis: a clustered instance fences a zone's snapshots with
    /// the zone's lease through it.
    pub redis_snapshots: Option<RedisSnapshotStore>,
    /// Where world events are recorded before they apply.
    pub log: WorldLog,
}

/// The name a clustered instance's bus writes into every entry (none for a lone instance).
fn writer_name(config: &ServiceConfig) -> String {
    if config.cluster.enabled {
        config.cluster.instance_name(&config.consumer)
    } else {
        String::new()
    }
}

/// Opens the bus, the snapshot store and the world log `config` names: with Redis the world
/// stream is the log (and snapshots go to Redis unless told otherwise); with the in-process
/// bus a redb file holds both the log and the snapshots.
pub async fn open_durable(config: &ServiceConfig) -> Result<Durable, StartError> {
    let storage = &config.storage;
    storage
        .stores
        .validate()
        .map_err(|e| StartError::Refused(format!("storage.stores: {e}")))?;
    let redb = match &storage.redb_path {
        Some(file) => Some(RedbFile::open(file, &storage.stores).map_err(environment)?),
        None => None,
    };
    let (bus, redis): (Arc<dyn EventBus>, Option<Arc<RedisBus>>) = match config.bus.kind {
        BusKind::Memory => (
            Arc::new(InProcessBus::new(config.bus.memory_stream_capacity)),
            None,
        ),
        BusKind::Redis => {
            let redis = Arc::new(
                RedisBus::connect_as(config.bus.redis.clone(), &writer_name(config))
                    .await
                    .map_err(environment)?,
            );
            (Arc::clone(&redis) as Arc<dyn EventBus>, Some(redis))
        }
    };
    let backend = match storage.snapshots {
        SnapshotBackend::Auto if redis.is_some() => SnapshotBackend::Redis,
        SnapshotBackend::Auto if redb.is_some() => SnapshotBackend::Redb,
        SnapshotBackend::Auto => SnapshotBackend::Memory,
        chosen => chosen,
    };
    let mut redis_snapshots = None;
    let store: Arc<dyn SnapshotStore> = match backend {
        SnapshotBackend::Redb => match &redb {
            Some(file) => Arc::new(file.snapshot_store()),
            None => {
                return Err(StartError::Refused(
                    "storage.snapshots = \"redb\" needs storage.redb_path".into(),
                ));
            }
        },
        SnapshotBackend::Redis => {
            let store = RedisSnapshotStore::with_target(
                crate::bus::redis::target_for(&config.bus.redis).map_err(environment)?,
                &storage.stores,
            )
            .await
            .map_err(environment)?;
            redis_snapshots = Some(store.clone());
            Arc::new(store)
        }
        SnapshotBackend::Memory | SnapshotBackend::Auto => {
            Arc::new(MemorySnapshotStore::new(&storage.stores).map_err(environment)?)
        }
    };
    let log = match (&redis, &redb) {
        (Some(redis), _) => WorldLog::Stream(Arc::clone(redis)),
        (None, Some(file)) => WorldLog::Embedded(Arc::new(file.event_log())),
        (None, None) => WorldLog::Volatile,
    };
    Ok(Durable {
        redis,
        bus,
        store,
        redis_snapshots,
        log,
    })
}

/// The content zones are built from: profiles, sets, archetypes and the world files, as read
/// at start or at the last `POST /content/reload`.
pub struct Content {
    /// Profiles (embedded, plus `profiles_dir`).
    pub profiles: ProfileLibrary,
    /// Reactive sets (embedded; a world may name a set file, read when its zone is built).
    pub sets: SetLibrary,
    /// Archetypes (embedded, plus `archetypes_dir`).
    pub archetypes: ArchetypeLibrary,
    /// The world files, one zone each, in config order.
    pub worlds: Vec<WorldFile>,
}

impl Content {
    /// Reads everything `config` names; an error names the file, path and reason.
    pub fn load(config: &ServiceConfig) -> Result<Self, StartError> {
        let bad = |e: crate::content::ContentError| StartError::Refused(e.to_string());
        let profiles = match &config.profiles_dir {
            Some(dir) => ProfileLibrary::embedded_and_dir(dir),
            None => ProfileLibrary::embedded(),
        }
        .map_err(bad)?;
        let archetypes = match &config.archetypes_dir {
            Some(dir) => ArchetypeLibrary::embedded_and_dir(dir),
            None => ArchetypeLibrary::embedded(),
        }
        .map_err(bad)?;
        let sets = SetLibrary::embedded().map_err(bad)?;
        let worlds = config
            .worlds
            .iter()
            .map(|path| load_world_file(path).map_err(bad))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            profiles,
            sets,
            archetypes,
            worlds,
        })
    }

    /// The world file of `zone`.
    pub fn world(&self, zone: &str) -> Option<&WorldFile> {
        self.worlds.iter().find(|w| w.zone == zone)
    }

    /// Builds `zone` over `vocabulary` (see [`Zone::over`]) with `narrator` for its
    /// placeholder lines; NPCs may walk into any zone of the content.
    pub fn build(
        &self,
        zone: &str,
        mut config: ZoneConfig,
        isolation: IsolationState,
        narrator: &Arc<TemplateProvider>,
        vocabulary: &[String],
    ) -> Result<Zone, ZoneError> {
        let world = self.world(zone).ok_or_else(|| {
            ZoneError::Spec(format!("no configured world file is of zone `{zone}`"))
        })?;
        config.zones = Some(self.worlds.iter().map(|w| w.zone.clone()).collect());
        let mut built = Zone::over(
            world,
            &self.profiles,
            &self.sets,
            Some(&self.archetypes),
            config,
            isolation,
            vocabulary,
        )?;
        built.set_narrator(Arc::clone(narrator));
        Ok(built)
    }
}

/// Everything a zone of this process is started with.
pub struct ZoneStarter {
    /// The service config.
    pub config: ServiceConfig,
    /// The content, replaced whole by a reload.
    content: std::sync::RwLock<Arc<Content>>,
    /// Bus, store and log.
    pub durable: Durable,
    /// The LLM seams' placeholder writer.
    pub narrator: Arc<TemplateProvider>,
    /// The LLM seams.
    pub link: LlmLink,
    /// Where zone actors run.
    pub actors: ActorRuntime,
    /// The zones running here (the admin API's view).
    pub zones: ZoneDirectory,
}

/// A recovered zone whose actor runs, ready for its loop.
pub struct OpenedZone {
    persistence: Persistence,
    handle: crate::runtime::actor::ZoneHandle,
    start_time: u64,
}

impl ZoneStarter {
    /// A starter of zones from `content`, on `durable`'s bus and store, with the started
    /// LLM `seams`, running actors on `actors`.
    pub fn new(
        config: ServiceConfig,
        content: Content,
        durable: Durable,
        seams: StartedSeams,
        actors: ActorRuntime,
    ) -> Self {
        Self {
            config,
            content: std::sync::RwLock::new(Arc::new(content)),
            durable,
            narrator: seams.narrator,
            link: seams.link,
            actors,
            zones: ZoneDirectory::default(),
        }
    }

    /// The content as it stands.
    pub fn content(&self) -> Arc<Content> {
        match self.content.read() {
            Ok(content) => Arc::clone(&content),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Reads the content files again and, when they load, makes them the content new zones
    /// are built from; returns one rebuild for each of `zones` (`POST /content/reload`).
    pub fn reload(&self, zones: &[String]) -> Result<Vec<(String, Rebuild)>, String> {
        let content = Arc::new(Content::load(&self.config).map_err(|e| e.to_string())?);
        for zone in zones {
            if content.world(zone).is_none() {
                return Err(format!(
                    "zone `{zone}` runs here but no world file of the new content is of it"
                ));
            }
        }
        match self.content.write() {
            Ok(mut current) => *current = Arc::clone(&content),
            Err(poisoned) => *poisoned.into_inner() = Arc::clone(&content),
        }
        Ok(zones
            .iter()
            .map(|zone| {
                let (content, name) = (Arc::clone(&content), zone.clone());
                let (config, narrator) = (self.config.zone_config(), Arc::clone(&self.narrator));
                let rebuild: Rebuild = Box::new(move |vocabulary: &[String]| {
                    content.build(
                        &name,
                        config,
                        IsolationState::default(),
                        &narrator,
                        vocabulary,
                    )
                });
                (zone.clone(), rebuild)
            })
            .collect())
    }

    /// Recovers `zone` (the newest usable snapshot, then the log after it), starts its actor
    /// and lists it in the directory. With a lease, everything recovery re-publishes is
    /// already fenced by it.
    pub async fn open(&self, zone: &str) -> Result<OpenedZone, StartError> {
        let (config, durable) = (&self.config, &self.durable);
        let content = self.content();
        let (isolation, sequence) = load_isolation(&*durable.store, zone).await;
        let build: &(dyn Fn(&[String]) -> Result<Zone, ZoneError> + Sync) = &|vocabulary| {
            content.build(
                zone,
                config.zone_config(),
                isolation.clone(),
                &self.narrator,
                vocabulary,
            )
        };
        let recovered = recover(
            zone,
            build,
            &*durable.store,
            &durable.log,
            &*durable.bus,
            &config.consumer,
            config.storage.replay_page_messages.max(1),
        )
        .await
        .map_err(|e| StartError::Refused(format!("{zone}: {e}")))?;
        let start_time = recovered.zone.game_time;
        let keeper = SnapshotKeeper {
            store: Arc::clone(&durable.store),
            every_ticks: config.storage.snapshot_every_ticks,
            sequence: recovered.newest_sequence,
            flush_timeout: std::time::Duration::from_millis(
                config.storage.snapshot_flush_timeout_ms,
            ),
            last_tick: recovered.zone.tick,
        };
        let handle = self.actors.start(recovered.zone);
        let (controls_tx, controls) = mpsc::channel(ZONE_CONTROLS_QUEUED);
        self.zones.insert(RunningZone {
            handle: handle.clone(),
            controls: Some(controls_tx),
            lease: None,
        });
        let persistence = Persistence {
            isolation: Some(IsolationPersistence {
                store: Arc::clone(&durable.store),
                sequence,
            }),
            log: durable.log.clone(),
            snapshots: Some(keeper),
            resume_after: recovered.last_event_id,
            controls: Some(controls),
            lease: None,
        };
        Ok(OpenedZone {
            persistence,
            handle,
            start_time,
        })
    }

    /// Runs an opened zone's loop (and its internal clock, when configured) until `stop`
    /// turns true or — under a `lease` — the lease can no longer be trusted; then takes the
    /// zone out of the directory (its actor ends with its last handle).
    pub async fn run(
        &self,
        opened: OpenedZone,
        stop: watch::Receiver<bool>,
        lease: Option<LeaseGuard>,
    ) -> Result<LoopStats, ServiceError> {
        let OpenedZone {
            mut persistence,
            handle,
            start_time,
        } = opened;
        let name = handle.name.clone();
        if let Some(lease) = &lease {
            self.zones.lease(&name, lease.clone());
        }
        persistence.lease = lease;
        let bus = Arc::clone(&self.durable.bus);
        if self.config.clock.kind == ClockKind::Internal {
            tokio::spawn(run_clock(
                Arc::clone(&bus),
                name.clone(),
                start_time,
                None,
                self.config.clock.clone(),
                Vec::new(),
                stop.clone(),
            ));
        }
        let result = run_zone(
            handle,
            bus,
            self.config.consumer.clone(),
            persistence,
            Some(self.link.clone()),
            stop,
        )
        .await;
        self.zones.remove(&name);
        result
    }
}
