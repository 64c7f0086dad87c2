//! The service config (`config/geppetto.toml`): bus, world files, content, clock, consumer,
//! tick, tiers, governor, isolation, storage and admin. Every number has a named, documented
//! default (see each section's type); unknown keys are refused; errors name the file and field.

pub mod clock;
pub mod cluster;

use std::path::{Path, PathBuf};

use serde::Deserialize;

use self::clock::ClockConfig;
use crate::bus::ConsumerConfig;
use crate::bus::redis::RedisBusConfig;
use crate::zone::governor::GovernorConfig;
use crate::zone::isolation::IsolationConfig;
use crate::zone::tiers::TierConfig;
use crate::zone::{IntegrationConfig, LivingConfig, TickConfig, ZoneConfig};

/// A config file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Unreadable.
    #[error("{file}: cannot read: {source}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// Invalid.
    #[error("{file}: {reason}")]
    Invalid {
        /// The file.
        file: String,
        /// Field and reason.
        reason: String,
    },
}

geppetto_core::wire_enum! {
    /// Which bus to use.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub enum BusKind {
        /// The in-process bus.
        #[default]
        Memory = "memory",
        /// Redis Streams.
        Redis = "redis",
    }
}

/// `[bus]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BusConfig {
    /// `memory` or `redis`.
    pub kind: BusKind,
    /// Messages each in-process stream keeps.
    pub memory_stream_capacity: usize,
    /// Redis settings.
    pub redis: RedisBusConfig,
}

impl Default for BusConfig {
    fn default() -> Self {
        Self {
            kind: BusKind::Memory,
            memory_stream_capacity: crate::bus::memory::DEFAULT_STREAM_CAPACITY,
            redis: RedisBusConfig::default(),
        }
    }
}

/// `[storage]`: where zone snapshots, isolation counts and the embedded world log persist.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct StorageSection {
    /// A redb file holding snapshots and isolation counts, and with the memory bus the
    /// world-event log too; absent = memory (lost on restart).
    pub redb_path: Option<PathBuf>,
    /// Where snapshots go: `auto` (Redis when the bus is Redis, else redb when `redb_path` is
    /// set, else memory), `redb`, `redis` or `memory`. Default `auto`.
    pub snapshots: SnapshotBackend,
    /// A zone snapshot every this many ticks (plus one at shutdown and on demand); 0 = only
    /// those. Default 600 (ten game hours at a minute a tick).
    pub snapshot_every_ticks: u64,
    /// The stores' own settings (`[storage.stores]`: `snapshots_kept_per_zone` 3, `[redb]`
    /// page cache, `[redis]` key prefix and timeouts — see `geppetto_storage::StorageConfig`).
    pub stores: geppetto_storage::StorageConfig,
    /// World-log entries read per page while recovering or replaying. Default 1000.
    pub replay_page_messages: usize,
    /// How long a snapshot waits for the bus to write the outputs it covers, milliseconds;
    /// past it the snapshot is not written (it would claim outputs that may be lost), and a
    /// stopping zone stops without one. Default 30000.
    pub snapshot_flush_timeout_ms: u64,
}

impl Default for StorageSection {
    fn default() -> Self {
        Self {
            redb_path: None,
            snapshots: SnapshotBackend::Auto,
            snapshot_every_ticks: 600,
            stores: geppetto_storage::StorageConfig::default(),
            replay_page_messages: 1000,
            snapshot_flush_timeout_ms: 30_000,
        }
    }
}

geppetto_core::wire_enum! {
    /// Which store keeps zone snapshots.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub enum SnapshotBackend {
        /// Redis with the Redis bus, else redb with a `redb_path`, else memory.
        #[default]
        Auto = "auto",
        /// The redb file (`redb_path` required).
        Redb = "redb",
        /// The bus's Redis (`bus.redis.url`), next to the zone's streams.
        Redis = "redis",
        /// Memory (tests; lost on restart).
        Memory = "memory",
    }
}

/// `[admin]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AdminConfig {
    /// Listen address (loopback by default); empty = no admin API.
    pub address: String,
    /// Environment variable holding the bearer token for mutating calls (unset = they are refused).
    pub token_env: String,
    /// A file holding the token instead (relative to the config file); it wins over
    /// `token_env`. Default none.
    pub token_file: Option<PathBuf>,
    /// Largest request body, bytes; a bigger one is answered 413. Default 256 KiB.
    pub max_body_bytes: usize,
}

impl Default for AdminConfig {
    fn default() -> Self {
        Self {
            address: "127.0.0.1:7878".into(),
            token_env: "GEPPETTO_ADMIN_TOKEN".into(),
            token_file: None,
            max_body_bytes: 256 * 1024,
        }
    }
}

/// The whole file.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ServiceConfig {
    /// World files, one zone each (relative to the config file).
    pub worlds: Vec<PathBuf>,
    /// Extra profile directory.
    pub profiles_dir: Option<PathBuf>,
    /// Extra archetype directory (its archetypes join and override the shipped ones; read
    /// again by `POST /content/reload`).
    pub archetypes_dir: Option<PathBuf>,
    /// Actor threads (0 = one per core).
    pub actor_threads: usize,
    /// Bus.
    pub bus: BusConfig,
    /// Clock.
    pub clock: ClockConfig,
    /// Consumer.
    pub consumer: ConsumerConfig,
    /// Tick.
    pub tick: TickConfig,
    /// Tiers.
    pub tiers: TierConfig,
    /// Governor.
    pub governor: GovernorConfig,
    /// Isolation.
    pub isolation: IsolationConfig,
    /// Who completes actions and moves NPCs, the game or geppetto (`[integration]`).
    pub integration: IntegrationConfig,
    /// The living world's rules over content: what sleep is, private homes (`[living]`).
    pub living: LivingConfig,
    /// The social fabric: interactions, gossip, relationships (`[social]`).
    pub social: geppetto_core::social::FabricConfig,
    /// The story detector: its windows, thresholds and capacities (`[story]`).
    pub story: geppetto_core::story::DetectorConfig,
    /// Storage.
    pub storage: StorageSection,
    /// Admin API.
    pub admin: AdminConfig,
    /// Zones shared among instances by lease (`[cluster]`, off by default).
    pub cluster: cluster::ClusterConfig,
    /// Limits on `decide` / `decide-batch` requests (`geppetto decide --config`).
    pub decide: geppetto_core::wire::limits::DecideLimits,
    /// The LLM seams (`[llm]`, with `[llm.provider]` for an OpenAI-compatible endpoint; none
    /// configured: deterministic templates only). Every field and default is documented in
    /// `geppetto_llm::LlmConfig`.
    pub llm: geppetto_llm::LlmConfig,
    /// Directory holding `prompts/` and `templates/` for the seams (relative to the config
    /// file); default: the files shipped in `config/`, embedded.
    pub llm_assets_dir: Option<PathBuf>,
}

impl ServiceConfig {
    /// The zone part.
    pub fn zone_config(&self) -> ZoneConfig {
        ZoneConfig {
            tick: self.tick.clone(),
            tiers: self.tiers.clone(),
            governor: self.governor.clone(),
            isolation: self.isolation.clone(),
            integration: self.integration.clone(),
            living: self.living.clone(),
            social: self.social.clone(),
            story: self.story.clone(),
            // The zones of the world files, once they are read (see `Content::build`).
            zones: None,
        }
    }
}

/// Parses config text; `file` names it in errors.
pub fn parse_config(file: &str, text: &str) -> Result<ServiceConfig, ConfigError> {
    let config: ServiceConfig = toml::from_str(text).map_err(|e| ConfigError::Invalid {
        file: file.to_owned(),
        reason: e.to_string().trim().replace('\n', " "),
    })?;
    let invalid = |reason: &str| ConfigError::Invalid {
        file: file.to_owned(),
        reason: reason.to_owned(),
    };
    if config.governor.tick_budget_ms_hard < config.governor.tick_budget_ms_soft {
        return Err(invalid(
            "governor.tick_budget_ms_hard: must not be below tick_budget_ms_soft",
        ));
    }
    if config.tiers.nearby_radius_rooms < config.tiers.active_radius_rooms {
        return Err(invalid(
            "tiers.nearby_radius_rooms: must not be below active_radius_rooms",
        ));
    }
    if !(config.clock.speed_minutes_per_second.is_finite()
        && config.clock.speed_minutes_per_second >= 0.0)
    {
        return Err(invalid(
            "clock.speed_minutes_per_second: must be a non-negative number",
        ));
    }
    config
        .integration
        .check()
        .map_err(|reason| invalid(&reason))?;
    if config.worlds.is_empty() {
        return Err(invalid("worlds: name at least one world file"));
    }
    if let Err(error) = config.llm.validate() {
        return Err(invalid(&format!("llm.{error}")));
    }
    if config.cluster.enabled {
        if config.bus.kind != BusKind::Redis {
            return Err(invalid("cluster.enabled: needs bus.kind = \"redis\""));
        }
        config
            .cluster
            .validate(&config.consumer)
            .map_err(|reason| invalid(&reason))?;
    }
    Ok(config)
}

/// Reads a config file; relative world paths are resolved against its directory.
pub fn load_config(path: &Path) -> Result<ServiceConfig, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        file: file.clone(),
        source,
    })?;
    let mut config = parse_config(&file, &text)?;
    let base = path.parent().unwrap_or_else(|| Path::new("."));
    let resolve = |p: &PathBuf| {
        if p.is_relative() {
            base.join(p)
        } else {
            p.clone()
        }
    };
    config.worlds = config.worlds.iter().map(resolve).collect();
    config.profiles_dir = config.profiles_dir.as_ref().map(resolve);
    config.archetypes_dir = config.archetypes_dir.as_ref().map(resolve);
    config.storage.redb_path = config.storage.redb_path.as_ref().map(resolve);
    config.llm_assets_dir = config.llm_assets_dir.as_ref().map(resolve);
    config.admin.token_file = config.admin.token_file.as_ref().map(resolve);
    config.bus.redis.password_file = config.bus.redis.password_file.as_ref().map(resolve);
    config.bus.redis.tls_ca_file = config.bus.redis.tls_ca_file.as_ref().map(resolve);
    if let Some(provider) = config.llm.provider.as_mut() {
        provider.api_key_file = provider.api_key_file.as_ref().map(resolve);
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repository_config_loads() {
        let text = include_str!("../../../config/geppetto.toml");
        let config = parse_config("geppetto.toml", text).expect("loads");
        assert_eq!(config.governor, GovernorConfig::default());
        assert_eq!(config.tiers, TierConfig::default());
        assert_eq!(config.storage, StorageSection::default());
        assert_eq!(config.worlds.len(), 1);
        // The limits and secrets' defaults are documented there, value for value.
        assert_eq!(config.consumer, ConsumerConfig::default());
        assert_eq!(
            config.decide,
            geppetto_core::wire::limits::DecideLimits::default()
        );
        assert_eq!(config.admin, AdminConfig::default());
        assert_eq!(config.bus.redis, RedisBusConfig::default());
        assert_eq!(config.cluster, cluster::ClusterConfig::default());
        assert_eq!(config.llm, geppetto_llm::LlmConfig::default());
        assert_eq!(config.tick, TickConfig::default());
        assert_eq!(config.integration, IntegrationConfig::default());
        assert_eq!(config.living, LivingConfig::default());
        // The social fabric's and the story detector's settings are all there, value for
        // value: the file's tables are the defaults written out.
        let documented: toml::Table = toml::from_str(text).expect("toml");
        for (section, defaults) in [
            (
                "social",
                toml::Value::try_from(geppetto_core::social::FabricConfig::default()),
            ),
            (
                "story",
                toml::Value::try_from(geppetto_core::story::DetectorConfig::default()),
            ),
        ] {
            assert_eq!(
                documented.get(section),
                Some(&defaults.expect("defaults")),
                "[{section}] in config/geppetto.toml"
            );
        }
        // The provider is documented commented out (configuring one calls it): uncommented,
        // it is the default provider.
        let (_, provider) = text.split_once("# [llm.provider]").expect("documented");
        let provider: String = provider
            .lines()
            .skip(1)
            .map(|line| format!("{}\n", line.strip_prefix("# ").unwrap_or(line)))
            .collect();
        let provider: geppetto_llm::OpenAiProviderConfig =
            toml::from_str(&provider).expect("the documented provider parses");
        assert_eq!(
            provider,
            geppetto_llm::OpenAiProviderConfig {
                api_key_file: Some("llm.key".into()),
                ..geppetto_llm::OpenAiProviderConfig::default()
            }
        );
    }

    #[test]
    fn the_shipped_redis_and_cluster_configs_load() {
        let redis = parse_config("r", include_str!("../../../config/geppetto-redis.toml"))
            .expect("redis config");
        assert_eq!(redis.bus.kind, BusKind::Redis);
        let cluster = parse_config("c", include_str!("../../../config/geppetto-cluster.toml"))
            .expect("cluster config");
        assert!(cluster.cluster.enabled);
        assert_eq!(cluster.cluster.zones, cluster::ZoneSelection::Auto);
    }

    #[test]
    fn errors_name_file_and_field() {
        let cases = [
            (
                "worlds = ['w.yaml']\n[governor]\ntick_budget_ms_soft = 'x'\n",
                "tick_budget_ms_soft",
            ),
            (
                "worlds = ['w.yaml']\n[governor]\ntick_budget_ms_soft = 9.0\n",
                "tick_budget_ms_hard",
            ),
            (
                "worlds = ['w.yaml']\n[tiers]\nhysteresis = 3\n",
                "hysteresis",
            ),
            ("worlds = ['w.yaml']\n[bus]\nkind = 'kafka'\n", "kafka"),
            ("", "worlds"),
            (
                "worlds = ['w.yaml']\n[cluster]\nenabled = true\n",
                "cluster.enabled",
            ),
            (
                "worlds = ['w.yaml']\n[bus]\nkind = 'redis'\n[cluster]\nenabled = true\n[cluster.lease]\nttl_ms = 1500\n",
                "renew_every_ms",
            ),
        ];
        for (text, field) in cases {
            let error = parse_config("g.toml", text)
                .expect_err("refused")
                .to_string();
            assert!(error.starts_with("g.toml: "), "{error}");
            assert!(error.contains(field), "{field}: {error}");
        }
    }

    #[test]
    fn more_mood_bands_than_a_byte_holds_are_refused() {
        let config = |bounds: usize| {
            let bands: Vec<String> = (0..bounds)
                .map(|b| format!("{}", b as f64 / 1000.0))
                .collect();
            let names: Vec<String> = (0..=bounds).map(|b| format!("'band{b}'")).collect();
            format!(
                "worlds = ['w.yaml']\n[integration]\nmood_bands = [{}]\nmood_band_names = [{}]\n",
                bands.join(", "),
                names.join(", ")
            )
        };
        assert!(parse_config("g.toml", &config(254)).is_ok());
        let error = parse_config("g.toml", &config(255))
            .expect_err("refused")
            .to_string();
        assert!(
            error.contains("integration.mood_bands: 255 bounds, at most 254"),
            "{error}"
        );
    }
}
