//! Storage settings: every number the stores would otherwise default silently.
//!
//! Owns the `[storage]` section's shape, its documented defaults and its validation. It does not
//! read files (the service loads its config and hands this section over) and holds no
//! connection strings or paths, which the service passes to each store's constructor.

use serde::Deserialize;

/// Settings shared by the snapshot stores.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StorageConfig {
    /// Snapshots kept per zone: every `put` removes older ones beyond this count, in the same
    /// transaction. Default 3; at least 1.
    pub snapshots_kept_per_zone: usize,
    /// The embedded redb file.
    pub redb: RedbConfig,
    /// The shared Redis snapshot store.
    pub redis: RedisConfig,
}

/// Settings of the embedded redb file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedbConfig {
    /// Page cache redb may use, in bytes. Default 64 MiB (redb's own default is 1 GiB, too much
    /// for a file read mostly at start-up).
    pub cache_size_bytes: usize,
    /// Check every page of the file when it is opened (redb's integrity check, which repairs
    /// what it can): a damaged file is refused at start-up with what to do instead of failing
    /// later. Reads the whole file once. Default true.
    pub verify_on_open: bool,
}

/// Settings of the Redis snapshot store.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedisConfig {
    /// First segment of every key: `{key_prefix}:{zone}:snapshot:…`. Default `"geppetto"`.
    pub key_prefix: String,
    /// How long one command may wait for its reply, in milliseconds. Default 5000: redis-rs
    /// would otherwise give up after 500 ms, too short for a snapshot of 100,000 NPCs (~100 MB).
    pub response_timeout_ms: u64,
    /// How long one connection attempt may take, in milliseconds. Default 2000.
    pub connection_timeout_ms: u64,
    /// Reconnection attempts after a lost connection before a command fails. Default 6.
    pub reconnect_retries: usize,
}

/// A setting that cannot work.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("storage config field {field}: {reason}")]
pub struct ConfigError {
    /// Dotted path of the field, e.g. `redis.response_timeout_ms`.
    pub field: &'static str,
    /// Why it was refused.
    pub reason: &'static str,
}

impl Default for StorageConfig {
    fn default() -> Self {
        Self {
            snapshots_kept_per_zone: 3,
            redb: RedbConfig::default(),
            redis: RedisConfig::default(),
        }
    }
}

impl Default for RedbConfig {
    fn default() -> Self {
        Self {
            cache_size_bytes: 64 * 1024 * 1024,
            verify_on_open: true,
        }
    }
}

impl Default for RedisConfig {
    fn default() -> Self {
        Self {
            key_prefix: "geppetto".to_owned(),
            response_timeout_ms: 5000,
            connection_timeout_ms: 2000,
            reconnect_retries: 6,
        }
    }
}

impl StorageConfig {
    /// Refuses settings that cannot work.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.snapshots_kept_per_zone == 0 {
            return Err(ConfigError {
                field: "snapshots_kept_per_zone",
                reason: "must keep at least one snapshot",
            });
        }
        if self.redis.key_prefix.is_empty()
            || self
                .redis
                .key_prefix
                .bytes()
                .any(|byte| matches!(byte, b'{' | b'}') || byte.is_ascii_whitespace())
        {
            return Err(ConfigError {
                field: "redis.key_prefix",
                reason: "must be non-empty, without braces or whitespace (braces would move the cluster hash tag)",
            });
        }
        if self.redis.response_timeout_ms == 0 {
            return Err(ConfigError {
                field: "redis.response_timeout_ms",
                reason: "must be positive",
            });
        }
        if self.redis.connection_timeout_ms == 0 {
            return Err(ConfigError {
                field: "redis.connection_timeout_ms",
                reason: "must be positive",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omitted_fields_take_the_documented_defaults() {
        let config: StorageConfig =
            serde_json::from_str(r#"{"redis": {"response_timeout_ms": 9000}}"#).expect("parses");
        assert_eq!(config.snapshots_kept_per_zone, 3);
        assert_eq!(config.redis.response_timeout_ms, 9000);
        assert_eq!(config.redis.key_prefix, "geppetto");
        assert_eq!(config.redb.cache_size_bytes, 64 * 1024 * 1024);
        assert_eq!(config.validate(), Ok(()));
    }

    #[test]
    fn refuses_unknown_fields_and_impossible_values() {
        assert!(serde_json::from_str::<StorageConfig>(r#"{"snapshots_kept": 2}"#).is_err());
        let cases: &[(&str, &str)] = &[
            (
                r#"{"snapshots_kept_per_zone": 0}"#,
                "snapshots_kept_per_zone",
            ),
            (r#"{"redis": {"key_prefix": "a{b}"}}"#, "redis.key_prefix"),
            (r#"{"redis": {"key_prefix": ""}}"#, "redis.key_prefix"),
            (
                r#"{"redis": {"response_timeout_ms": 0}}"#,
                "redis.response_timeout_ms",
            ),
            (
                r#"{"redis": {"connection_timeout_ms": 0}}"#,
                "redis.connection_timeout_ms",
            ),
        ];
        for (json, field) in cases {
            let config: StorageConfig = serde_json::from_str(json).expect("parses");
            assert_eq!(
                config.validate().map_err(|error| error.field),
                Err(*field),
                "{json}"
            );
        }
    }
}
