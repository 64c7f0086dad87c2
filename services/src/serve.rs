//! `geppetto serve --config FILE`: loads the config and the world files, opens the bus and the
//! isolation store, starts one zone actor per world on the arbiters, one consumer loop per zone,
//! the internal clock when configured, and the admin API; runs until Ctrl-C.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use geppetto_llm::{LlmConfig, TemplateProvider, read_secret};
use geppetto_storage::{MemorySnapshotStore, RedbFile, RedisSnapshotStore, SnapshotStore};
use metrics_exporter_prometheus::PrometheusBuilder;
use tokio::sync::{mpsc, watch};

use crate::actor::ActorRuntime;
use crate::admin::{self, AdminState};
use crate::bus::EventBus;
use crate::bus::memory::InProcessBus;
use crate::bus::redis::RedisBus;
use crate::commands::CommandError;
use crate::config::{BusKind, ServiceConfig, SnapshotBackend, load_config};
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::llm_bridge::{self, LlmLink};
use crate::recovery::{SnapshotKeeper, WorldLog, recover};
use crate::service::{
    ClockKind, IsolationPersistence, Persistence, load_isolation, run_clock, run_zone,
};
use crate::world_file::load_world_file;
use crate::zone::Zone;

fn environment(error: impl std::fmt::Display) -> CommandError {
    CommandError::Environment(error.to_string())
}

/// The started LLM seams of a service: the link zone loops use and the placeholder writer.
pub struct StartedSeams {
    /// For zone loops.
    pub link: LlmLink,
    /// For zones' placeholders.
    pub narrator: Arc<TemplateProvider>,
}

/// Starts the seams of `config` (inside the runtime) and the task that publishes what they
/// say; both stop when `stopped` turns true.
pub fn start_llm(
    config: &LlmConfig,
    assets_dir: Option<&Path>,
    bus: &Arc<dyn EventBus>,
    stopped: &watch::Receiver<bool>,
) -> Result<StartedSeams, CommandError> {
    let assets =
        llm_bridge::assets(assets_dir).map_err(|e| CommandError::BadInput(e.to_string()))?;
    let narrator = llm_bridge::placeholder_writer(&assets, config);
    let mut stop = stopped.clone();
    let shutdown = async move {
        let _ = stop.wait_for(|stopped| *stopped).await;
    };
    let seams = llm_bridge::start(config, assets, shutdown)
        .map_err(|e| CommandError::BadInput(e.to_string()))?;
    tokio::spawn(llm_bridge::run_output(
        seams.output,
        Arc::clone(bus),
        seams.link.rooms.clone(),
    ));
    Ok(StartedSeams {
        link: seams.link,
        narrator,
    })
}

/// Snapshot requests a zone loop holds before the admin API is told to wait.
const SNAPSHOT_REQUESTS_QUEUED: usize = 4;

/// The bus and what makes the service durable: the snapshot store and the world log.
pub struct Durable {
    /// The bus.
    pub bus: Arc<dyn EventBus>,
    /// Snapshots and isolation counts.
    pub store: Arc<dyn SnapshotStore>,
    /// Where world events are recorded before they apply.
    pub log: WorldLog,
}

/// Opens the bus, the snapshot store and the world log `config` names: with Redis the world
/// stream is the log (and snapshots go to Redis unless told otherwise); with the in-process
/// bus a redb file holds both the log and the snapshots.
pub async fn open_durable(config: &ServiceConfig) -> Result<Durable, CommandError> {
    let storage = &config.storage;
    storage
        .stores
        .validate()
        .map_err(|e| CommandError::BadInput(format!("storage.stores: {e}")))?;
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
                RedisBus::connect(config.bus.redis.clone())
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
    let store: Arc<dyn SnapshotStore> = match backend {
        SnapshotBackend::Redb => match &redb {
            Some(file) => Arc::new(file.snapshot_store()),
            None => {
                return Err(CommandError::BadInput(
                    "storage.snapshots = \"redb\" needs storage.redb_path".into(),
                ));
            }
        },
        SnapshotBackend::Redis => Arc::new(
            RedisSnapshotStore::with_client(
                crate::bus::redis::client_for(&config.bus.redis).map_err(environment)?,
                &storage.stores,
            )
            .await
            .map_err(environment)?,
        ),
        SnapshotBackend::Memory | SnapshotBackend::Auto => {
            Arc::new(MemorySnapshotStore::new(&storage.stores).map_err(environment)?)
        }
    };
    let log = match (redis, &redb) {
        (Some(redis), _) => WorldLog::Stream(redis),
        (None, Some(file)) => WorldLog::Embedded(Arc::new(file.event_log())),
        (None, None) => WorldLog::Volatile,
    };
    Ok(Durable { bus, store, log })
}

/// Runs the service described by the config file at `path` until Ctrl-C.
pub fn serve(path: &Path) -> Result<(), CommandError> {
    let config = load_config(path).map_err(|e| CommandError::BadInput(e.to_string()))?;
    let profiles = match &config.profiles_dir {
        Some(dir) => ProfileLibrary::embedded_and_dir(dir),
        None => ProfileLibrary::embedded(),
    }
    .map_err(|e| CommandError::BadInput(e.to_string()))?;
    let sets = SetLibrary::embedded().map_err(|e| CommandError::BadInput(e.to_string()))?;
    let worlds = config
        .worlds
        .iter()
        .map(|p| load_world_file(p).map_err(|e| CommandError::BadInput(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let threads = if config.actor_threads == 0 {
        crate::runtime::cores()
    } else {
        config.actor_threads
    };
    let future = async move {
        let metrics = PrometheusBuilder::new().install_recorder().ok();
        let durable = open_durable(&config).await?;
        let bus = Arc::clone(&durable.bus);
        let mut actors = ActorRuntime::new(threads);
        let (stop, stopped) = watch::channel(false);
        let seams = start_llm(
            &config.llm,
            config.llm_assets_dir.as_deref(),
            &bus,
            &stopped,
        )?;
        let narrator = seams.narrator;
        let link = seams.link;
        let mut tasks = Vec::new();
        let mut handles = BTreeMap::new();
        let mut snapshot_senders = BTreeMap::new();
        let mut whatif = BTreeMap::new();
        for (world, world_path) in worlds.iter().zip(&config.worlds) {
            if !matches!(durable.log, WorldLog::Volatile) {
                whatif.insert(
                    world.zone.clone(),
                    admin::WhatIfSource {
                        world: world_path.display().to_string(),
                        zone_config: config.zone_config(),
                        limits: config.consumer.limits.clone(),
                        log: durable.log.clone(),
                        store: Arc::clone(&durable.store),
                    },
                );
            }
            let (isolation, sequence) = load_isolation(&*durable.store, &world.zone).await;
            let build = || {
                let mut zone = Zone::new(
                    world,
                    &profiles,
                    &sets,
                    config.zone_config(),
                    isolation.clone(),
                )?;
                zone.set_narrator(Arc::clone(&narrator));
                Ok(zone)
            };
            let recovered = recover(
                &world.zone,
                &build,
                &*durable.store,
                &durable.log,
                &*bus,
                &config.consumer,
                config.storage.replay_page_messages.max(1),
            )
            .await
            .map_err(|e| CommandError::BadInput(format!("{}: {e}", world.zone)))?;
            let start = recovered.zone.game_time;
            let keeper = SnapshotKeeper {
                store: Arc::clone(&durable.store),
                every_ticks: config.storage.snapshot_every_ticks,
                sequence: recovered.newest_sequence,
                last_tick: recovered.zone.tick,
            };
            let handle = actors.start(recovered.zone);
            handles.insert(world.zone.clone(), handle.clone());
            let (requests_tx, requests) = mpsc::channel(SNAPSHOT_REQUESTS_QUEUED);
            snapshot_senders.insert(world.zone.clone(), requests_tx);
            let persistence = Persistence {
                isolation: Some(IsolationPersistence {
                    store: Arc::clone(&durable.store),
                    sequence,
                }),
                log: durable.log.clone(),
                snapshots: Some(keeper),
                resume_after: recovered.last_event_id,
                snapshot_requests: Some(requests),
            };
            tasks.push(tokio::spawn(run_zone(
                handle,
                Arc::clone(&bus),
                config.consumer.clone(),
                persistence,
                Some(link.clone()),
                stopped.clone(),
            )));
            if config.clock.kind == ClockKind::Internal {
                tokio::spawn(run_clock(
                    Arc::clone(&bus),
                    world.zone.clone(),
                    start,
                    None,
                    config.clock.clone(),
                    Vec::new(),
                    stopped.clone(),
                ));
            }
        }
        if !config.admin.address.is_empty() {
            let state = AdminState {
                story_feed: admin::story_feed(&bus, handles.keys().cloned(), &stopped),
                whatif,
                whatif_busy: Arc::default(),
                zones: handles,
                snapshot_requests: snapshot_senders,
                bus: Arc::clone(&bus),
                metrics,
                token: read_secret(&config.admin.token_env, config.admin.token_file.as_deref())
                    .map_err(|e| CommandError::BadInput(format!("admin.token_file: {e}")))?,
                max_body_bytes: config.admin.max_body_bytes,
            };
            let server = admin::start(state, &config.admin.address)
                .map_err(|e| environment(format!("admin {}: {e}", config.admin.address)))?;
            tokio::spawn(server);
            tracing::info!(address = %config.admin.address, "admin API listening");
        }
        tokio::signal::ctrl_c().await.map_err(environment)?;
        let _ = stop.send(true);
        for task in tasks {
            match task.await {
                Ok(Ok(_)) => {}
                Ok(Err(error)) => tracing::error!(%error, "zone loop failed"),
                Err(error) => tracing::error!(%error, "zone loop panicked"),
            }
        }
        let _ = bus.flush().await;
        actors.stop();
        Ok(())
    };
    crate::runtime::block_on(crate::runtime::cores(), future).map_err(environment)?
}
