//! `geppetto serve --config FILE`: loads the config (and the command line's overrides), says
//! where it runs (zones, bus, clock, admin and inspector addresses), starts every zone through
//! [`ZoneStarter`] — or, with `[cluster] enabled`, leaves that to [`crate::runtime::cluster`] —
//! and the admin API, and runs until Ctrl-C, then stops the zones and flushes the bus.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use geppetto_llm::read_secret;
use metrics_exporter_prometheus::PrometheusBuilder;
use tokio::sync::watch;

use crate::cli::error::CommandError;
use crate::config::{BusKind, ServiceConfig, load_config};
use crate::http::{self, AdminState};
use crate::runtime::actor::ActorRuntime;
use crate::runtime::llm_spend::SpendKeeper;
use crate::runtime::world_log::WorldLog;
use crate::zone::Completion;

use crate::runtime::starter::{Content, ZoneStarter, open_durable, start_llm};

/// What `serve`'s command line overrides in the config file.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--instance`: `cluster.instance`.
    pub instance: Option<String>,
    /// `--admin`: `admin.address`.
    pub admin: Option<String>,
}

/// The config as `serve` runs it: the file, then the command line's `overrides`.
fn load(path: &Path, overrides: &Overrides) -> Result<ServiceConfig, CommandError> {
    let mut config = load_config(path)?;
    if let Some(instance) = &overrides.instance {
        config.cluster.instance = instance.clone();
    }
    if let Some(admin) = &overrides.admin {
        config.admin.address = admin.clone();
    }
    if config.cluster.enabled {
        // Each instance reads every zone's world stream under its own consumer name.
        config.consumer.name = config.cluster.instance_name(&config.consumer);
    }
    if config.bus.kind == BusKind::Memory {
        // No game can reach an in-process bus: geppetto's own timer ends actions and moves
        // NPCs, or every walk would fail at its deadline and every job at its timeout. The
        // banner says so.
        config.integration.completion = Completion::Simulated;
        config.integration.zones.clear();
    }
    Ok(config)
}

/// Whose LLM spend this instance keeps: a clustered instance's own, else the service's.
fn spend_owner(config: &ServiceConfig) -> String {
    if config.cluster.enabled {
        config.cluster.instance_name(&config.consumer)
    } else {
        "service".to_owned()
    }
}

/// What `serve` prints on stderr as it starts: the zones, the bus, the clock, the admin API and
/// the inspector's address, and a warning when no admin token is set (mutating admin calls are
/// then refused). A Redis URL is shown without its credentials.
pub fn start_banner(config: &ServiceConfig, zones: &[String], admin_token_set: bool) -> String {
    let mut lines = Vec::new();
    let bus = match config.bus.kind {
        BusKind::Memory => "the in-process bus".to_owned(),
        BusKind::Redis if !config.bus.redis.cluster_nodes.is_empty() => format!(
            "a Redis Cluster ({} seed nodes)",
            config.bus.redis.cluster_nodes.len()
        ),
        BusKind::Redis => format!("Redis at {}", without_credentials(&config.bus.redis.url)),
    };
    let clock = match config.clock.kind {
        crate::config::clock::ClockKind::Internal => format!(
            "its own clock, {} game minutes a second",
            config.clock.speed_minutes_per_second
        ),
        crate::config::clock::ClockKind::External => "the game's `time_advanced` events".to_owned(),
    };
    let instance = if config.cluster.enabled {
        format!(
            " as instance `{}` of a cluster",
            config.cluster.instance_name(&config.consumer)
        )
    } else {
        String::new()
    };
    lines.push(format!(
        "geppetto serve{instance}: {} zone(s) ({}) on {bus}, time from {clock}",
        zones.len(),
        zones.join(", ")
    ));
    let modes: Vec<String> = zones
        .iter()
        .map(|zone| format!("{zone} {}", config.integration.completion_in(zone).as_str()))
        .collect();
    let why = match config.bus.kind {
        BusKind::Memory => {
            " (the in-process bus has no game on it: geppetto ends actions and moves NPCs \
             itself; a game needs [bus] kind = \"redis\")"
        }
        BusKind::Redis => "",
    };
    lines.push(format!("  completion: {}{why}", modes.join(", ")));
    if config.admin.address.is_empty() {
        lines.push("admin API: off (admin.address is empty)".to_owned());
    } else {
        let address = &config.admin.address;
        lines.push(format!(
            "admin API: http://{address}  inspector: http://{address}/inspector"
        ));
        if !admin_token_set {
            let source = match &config.admin.token_file {
                Some(file) => format!("admin.token_file {}", file.display()),
                None => format!("the environment variable {}", config.admin.token_env),
            };
            lines.push(format!(
                "warning: no admin token in {source}: snapshot, reload, spawn, despawn and schedule calls \
                 are refused; choose a token and export it to allow them"
            ));
        }
    }
    lines.join("\n")
}

/// `url` with any `user:password@` removed.
fn without_credentials(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}{}", &url[..scheme + 3], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

/// Runs the service described by the config file at `path`, with the command line's
/// `overrides`, until Ctrl-C.
pub fn serve(path: &Path, overrides: &Overrides) -> Result<(), CommandError> {
    let config = load(path, overrides)?;
    let content = Content::load(&config)?;
    let threads = if config.actor_threads == 0 {
        crate::runtime::cores()
    } else {
        config.actor_threads
    };
    let future = async move {
        let metrics = PrometheusBuilder::new().install_recorder().ok();
        let durable = open_durable(&config).await?;
        let bus = Arc::clone(&durable.bus);
        let (stop, stopped) = watch::channel(false);
        let seams = start_llm(
            &config.llm,
            config.llm_assets_dir.as_deref(),
            &bus,
            &stopped,
        )?;
        // The spend the budget held before a restart is back before any zone asks the model.
        let keeper = SpendKeeper {
            store: Arc::clone(&durable.store),
            owner: spend_owner(&config),
            budget: seams.spend.clone(),
        };
        let llm_admin = http::llm::LlmAdmin {
            spend: seams.spend.clone(),
            stats: seams.stats.clone(),
            started: std::time::Instant::now(),
        };
        let after = keeper.restore().await;
        let keeping =
            tokio::spawn(keeper.keep(after, config.llm.budget.save_within(), stopped.clone()));
        let mut whatif = BTreeMap::new();
        if !matches!(durable.log, WorldLog::Volatile) {
            for (world, world_path) in content.worlds.iter().zip(&config.worlds) {
                whatif.insert(
                    world.zone.clone(),
                    http::WhatIfSource {
                        world: world_path.display().to_string(),
                        zone_config: config.zone_config(),
                        limits: config.consumer.limits.clone(),
                        log: durable.log.clone(),
                        store: Arc::clone(&durable.store),
                    },
                );
            }
        }
        let clustered = config.cluster.enabled;
        let feed_group = if clustered {
            format!(
                "inspector:{}",
                config.cluster.instance_name(&config.consumer)
            )
        } else {
            "inspector".to_owned()
        };
        let admin_config = config.admin.clone();
        let zone_names: Vec<String> = content.worlds.iter().map(|w| w.zone.clone()).collect();
        let admin_token = if admin_config.address.is_empty() {
            None
        } else {
            read_secret(&admin_config.token_env, admin_config.token_file.as_deref())
                .map_err(|e| CommandError::BadInput(format!("admin.token_file: {e}")))?
        };
        eprintln!(
            "{}",
            start_banner(&config, &zone_names, admin_token.is_some())
        );
        let starter = Arc::new(ZoneStarter::new(
            config,
            content,
            durable,
            seams,
            ActorRuntime::new(threads),
        ));
        let mut tasks = Vec::new();
        let ownership = if clustered {
            let cluster =
                crate::runtime::cluster::Ownership::new(Arc::clone(&starter), zone_names.clone())?;
            Some(tokio::spawn(cluster.run(stopped.clone())))
        } else {
            for zone in &zone_names {
                let opened = starter.open(zone).await?;
                let starter = Arc::clone(&starter);
                let stopped = stopped.clone();
                tasks.push(tokio::spawn(async move {
                    starter.run(opened, stopped, None).await
                }));
            }
            None
        };
        if !admin_config.address.is_empty() {
            let state = AdminState {
                story_feed: http::story_feed(&bus, zone_names, &feed_group, &stopped),
                whatif,
                whatif_busy: Arc::default(),
                zones: starter.zones.clone(),
                bus: Arc::clone(&bus),
                content_reload: Some({
                    let starter = Arc::clone(&starter);
                    Arc::new(move |zones: &[String]| starter.reload(zones))
                }),
                metrics,
                token: admin_token,
                max_body_bytes: admin_config.max_body_bytes,
                llm: Some(llm_admin),
            };
            let server = http::start(state, &admin_config.address)
                .map_err(CommandError::io(format!("admin {}", admin_config.address)))?;
            tokio::spawn(server);
            tracing::info!(address = %admin_config.address, "admin API listening");
        }
        tokio::signal::ctrl_c()
            .await
            .map_err(CommandError::io("cannot wait for Ctrl-C"))?;
        let _ = stop.send(true);
        if let Err(error) = keeping.await {
            tracing::error!(%error, "saving the LLM spend failed");
        }
        if let Some(ownership) = ownership
            && let Err(error) = ownership.await
        {
            tracing::error!(%error, "zone ownership panicked");
        }
        for task in tasks {
            match task.await {
                Ok(Ok(_)) => {}
                Ok(Err(error)) => tracing::error!(%error, "zone loop failed"),
                Err(error) => tracing::error!(%error, "zone loop panicked"),
            }
        }
        let flush_timeout =
            std::time::Duration::from_millis(starter.config.storage.snapshot_flush_timeout_ms);
        if tokio::time::timeout(flush_timeout, bus.flush())
            .await
            .is_err()
        {
            tracing::error!("the bus did not write everything before shutdown");
        }
        if let Ok(starter) = Arc::try_unwrap(starter) {
            starter.actors.stop();
        }
        Ok(())
    };
    crate::runtime::block_on(crate::runtime::cores(), future)?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_names_zones_bus_clock_and_addresses_and_warns_without_a_token() {
        let mut config = ServiceConfig::default();
        config.bus.kind = BusKind::Redis;
        config.bus.redis.url = "redis://ann:secret@127.0.0.1:6379/0".into();
        let zones = ["village".to_owned(), "mine".to_owned()];
        let banner = start_banner(&config, &zones, false);
        assert!(banner.contains("2 zone(s) (village, mine)"), "{banner}");
        assert!(
            banner.contains("Redis at redis://127.0.0.1:6379/0"),
            "{banner}"
        );
        assert!(!banner.contains("secret"), "{banner}");
        assert!(
            banner.contains("inspector: http://127.0.0.1:7878/inspector"),
            "{banner}"
        );
        assert!(
            banner.contains(
                "warning: no admin token in the environment variable GEPPETTO_ADMIN_TOKEN"
            ),
            "{banner}"
        );
        let with_token = start_banner(&config, &zones, true);
        assert!(!with_token.contains("warning"), "{with_token}");
        config.admin.address.clear();
        assert!(start_banner(&config, &zones, false).contains("admin API: off"));
        config
            .integration
            .zones
            .insert("mine".into(), Completion::Simulated);
        let modes = start_banner(&config, &zones, false);
        assert!(
            modes.contains("completion: village game, mine simulated\n"),
            "{modes}"
        );
    }

    #[test]
    fn on_the_in_process_bus_every_zone_runs_simulated_and_the_banner_says_why() {
        let dir = std::env::temp_dir().join(format!("geppetto-serve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("memory.toml");
        std::fs::write(
            &path,
            "worlds = [\"config/worlds/village\"]\n[bus]\nkind = \"memory\"\n[integration]\ncompletion = \"game\"\nzones = { mine = \"game\" }\n",
        )
        .expect("config");
        let config = load(&path, &Overrides::default()).expect("config");
        assert_eq!(
            config.integration.completion_in("village"),
            Completion::Simulated
        );
        assert_eq!(
            config.integration.completion_in("mine"),
            Completion::Simulated
        );
        let banner = start_banner(&config, &["village".to_owned()], true);
        assert!(
            banner.contains("completion: village simulated (the in-process bus has no game"),
            "{banner}"
        );
    }
}
