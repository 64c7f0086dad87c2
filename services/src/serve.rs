//! `geppetto serve --config FILE`: loads the config and the world files, opens the bus and the
//! isolation store, starts one zone actor per world on the arbiters, one consumer loop per zone,
//! the internal clock when configured, and the admin API; runs until Ctrl-C.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use geppetto_llm::{LlmConfig, TemplateProvider, read_secret};
use geppetto_storage::{MemorySnapshotStore, RedbFile, SnapshotStore, StorageConfig};
use metrics_exporter_prometheus::PrometheusBuilder;
use tokio::sync::watch;

use crate::actor::ActorRuntime;
use crate::admin::{self, AdminState};
use crate::bus::EventBus;
use crate::bus::memory::InProcessBus;
use crate::bus::redis::RedisBus;
use crate::commands::CommandError;
use crate::config::{BusKind, load_config};
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::llm_bridge::{self, LlmLink};
use crate::service::{ClockKind, IsolationPersistence, load_isolation, run_clock, run_zone};
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
        let bus: Arc<dyn EventBus> = match config.bus.kind {
            BusKind::Memory => Arc::new(InProcessBus::new(config.bus.memory_stream_capacity)),
            BusKind::Redis => Arc::new(
                RedisBus::connect(config.bus.redis.clone())
                    .await
                    .map_err(environment)?,
            ),
        };
        let storage = StorageConfig::default();
        let store: Arc<dyn SnapshotStore> = match &config.storage.redb_path {
            Some(file) => Arc::new(
                RedbFile::open(file, &storage)
                    .map_err(environment)?
                    .snapshot_store(),
            ),
            None => Arc::new(MemorySnapshotStore::new(&storage).map_err(environment)?),
        };
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
        for world in &worlds {
            let (isolation, sequence) = load_isolation(&*store, &world.zone).await;
            let mut zone = Zone::new(world, &profiles, &sets, config.zone_config(), isolation)
                .map_err(|e| CommandError::BadInput(format!("{}: {e}", world.zone)))?;
            zone.set_narrator(Arc::clone(&narrator));
            let start = zone.game_time;
            let handle = actors.start(zone);
            handles.insert(world.zone.clone(), handle.clone());
            let persistence = IsolationPersistence {
                store: Arc::clone(&store),
                sequence,
            };
            tasks.push(tokio::spawn(run_zone(
                handle,
                Arc::clone(&bus),
                config.consumer.clone(),
                Some(persistence),
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
                zones: handles,
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
