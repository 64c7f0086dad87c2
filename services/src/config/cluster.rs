//! `[cluster]`: running zones across several instances — which zones an instance takes and
//! the timing of the leases that keep each zone with one instance.

use serde::Deserialize;

use crate::bus::ConsumerConfig;

/// `[cluster]` lease timing.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct LeaseConfig {
    /// How long a lease lives without renewal, milliseconds; a dead instance's zones are
    /// taken over after this. Default 5000.
    pub ttl_ms: u64,
    /// How often held leases are renewed (and free zones looked for), milliseconds; at most
    /// half the TTL. Default 1000.
    pub renew_every_ms: u64,
    /// A zone loop stops reading this long before its lease could expire (on top of one
    /// read's block), milliseconds. Default 1000.
    pub read_margin_ms: u64,
}

impl Default for LeaseConfig {
    fn default() -> Self {
        Self {
            ttl_ms: 5_000,
            renew_every_ms: 1_000,
            read_margin_ms: 1_000,
        }
    }
}

/// Which zones an instance may take.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ZoneSelection {
    /// Any configured zone, up to a fair share.
    #[default]
    Auto,
    /// Exactly these zones (each taken whenever it is free).
    Listed(Vec<String>),
}

impl<'de> Deserialize<'de> for ZoneSelection {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Word(String),
            List(Vec<String>),
        }
        match Raw::deserialize(deserializer)? {
            Raw::Word(word) if word == "auto" => Ok(Self::Auto),
            Raw::Word(word) => Err(serde::de::Error::custom(format!(
                "`{word}` is neither \"auto\" nor a list of zone names"
            ))),
            Raw::List(zones) => Ok(Self::Listed(zones)),
        }
    }
}

/// `[cluster]`: running zones across several instances.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterConfig {
    /// Take zones by lease instead of running every configured zone (needs the Redis bus).
    /// Default false.
    pub enabled: bool,
    /// This instance's name: the lease owner and its consumer name on every zone's world
    /// stream; unique per instance. Default "" = `consumer.name`. `serve --instance` sets it.
    pub instance: String,
    /// `"auto"` (a fair share of the configured zones) or a list of zone names. Default auto.
    pub zones: ZoneSelection,
    /// Lease timing (`[cluster.lease]`).
    pub lease: LeaseConfig,
}

impl ClusterConfig {
    /// The instance's name as used: `instance`, or the consumer name when that is empty.
    pub fn instance_name(&self, consumer: &ConsumerConfig) -> String {
        if self.instance.is_empty() {
            consumer.name.clone()
        } else {
            self.instance.clone()
        }
    }

    /// What is wrong with the section, if anything (field and reason).
    pub fn validate(&self, consumer: &ConsumerConfig) -> Result<(), String> {
        let lease = &self.lease;
        if lease.renew_every_ms == 0 || lease.renew_every_ms.saturating_mul(2) > lease.ttl_ms {
            return Err(
                "cluster.lease.renew_every_ms: must be positive and at most half of ttl_ms".into(),
            );
        }
        if lease.read_margin_ms + consumer.block_ms + lease.renew_every_ms >= lease.ttl_ms {
            return Err(
                "cluster.lease.ttl_ms: must exceed read_margin_ms + renew_every_ms + consumer.block_ms"
                    .into(),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_are_auto_or_a_list_and_anything_else_is_named() {
        #[derive(Deserialize)]
        struct Wrapper {
            zones: ZoneSelection,
        }
        let auto: Wrapper = toml::from_str("zones = 'auto'").expect("auto");
        assert_eq!(auto.zones, ZoneSelection::Auto);
        let listed: Wrapper = toml::from_str("zones = ['a', 'b']").expect("list");
        assert_eq!(
            listed.zones,
            ZoneSelection::Listed(vec!["a".into(), "b".into()])
        );
        let error = toml::from_str::<Wrapper>("zones = 'most'")
            .err()
            .expect("refused")
            .to_string();
        assert!(error.contains("`most` is neither"), "{error}");
    }

    #[test]
    fn lease_timing_that_could_outlive_a_read_is_refused() {
        let consumer = ConsumerConfig::default();
        assert!(ClusterConfig::default().validate(&consumer).is_ok());
        let mut config = ClusterConfig::default();
        config.lease.renew_every_ms = 3_000;
        assert!(
            config
                .validate(&consumer)
                .expect_err("refused")
                .contains("renew_every_ms")
        );
        let mut config = ClusterConfig::default();
        config.lease.read_margin_ms = 4_000;
        assert!(
            config
                .validate(&consumer)
                .expect_err("refused")
                .contains("ttl_ms")
        );
    }
}
