//! # geppetto-service
//!
//! Everything around the pure core that touches the outside world, one folder a layer:
//!
//! - [`cli`]: the `geppetto` command line, every subcommand (`demo`, `serve`, `load`,
//!   `decide`, `simulate`, `replay`, …); `main.rs` only parses arguments and maps errors to
//!   exit codes.
//! - [`drive`]: the service run whole in one process for a purpose of its own — the demo's
//!   live feed, the load generator's measurements.
//! - [`runtime`]: what runs zones — the zone actor, the zone loop (world stream in, outputs
//!   out, snapshots), recovery, leases and the cluster, the LLM link, metrics.
//! - [`zone`]: one zone's NPCs and the policies of its tick (tiers, governor, isolation,
//!   social life), driving the pure core; no IO.
//! - [`http`]: the admin API and the web inspector.
//! - [`history`]: what the service knows about its past — log sources, replay, what-if, the
//!   scorecard of a simulated run — for the admin API and the command line alike.
//! - [`bus`]: the event bus (in-process and Redis Streams) and the wire envelopes.
//! - [`content`]: world files, profiles, archetypes, utility sets and personas from data.
//! - [`config`]: the service's TOML config file.

pub mod bus;
pub mod cli;
pub mod config;
pub mod content;
pub mod drive;
pub mod history;
pub mod http;
pub mod runtime;
pub mod zone;

#[cfg(test)]
mod tests {
    /// Serde and `as_str` agree for every variant of every wire enum of this crate
    /// (declared with [`geppetto_core::wire_enum!`]).
    #[test]
    fn every_service_wire_enum_agrees_with_serde() {
        fn check<T>(variants: &[T], names: &[&str], as_str: fn(T) -> &'static str)
        where
            T: Copy + PartialEq + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned,
        {
            geppetto_core::assert_wire_names_agree(variants, names, as_str);
            // Config files and sets are TOML and YAML: the names read back from YAML too.
            for (variant, name) in variants.iter().zip(names) {
                let from_yaml: T = serde_saphyr::from_str(name).expect("yaml");
                assert_eq!(from_yaml, *variant);
            }
        }
        use crate::bus::StreamKind;
        use crate::config::clock::ClockKind;
        use crate::config::{BusKind, SnapshotBackend};
        use crate::content::sets::SelectorName;
        use crate::zone::tiers::Tier;
        use crate::zone::{Completion, IntentKind};
        check(
            StreamKind::VARIANTS,
            StreamKind::WIRE_NAMES,
            StreamKind::as_str,
        );
        check(BusKind::VARIANTS, BusKind::WIRE_NAMES, BusKind::as_str);
        check(
            SnapshotBackend::VARIANTS,
            SnapshotBackend::WIRE_NAMES,
            SnapshotBackend::as_str,
        );
        check(
            SelectorName::VARIANTS,
            SelectorName::WIRE_NAMES,
            SelectorName::as_str,
        );
        check(
            ClockKind::VARIANTS,
            ClockKind::WIRE_NAMES,
            ClockKind::as_str,
        );
        check(
            IntentKind::VARIANTS,
            IntentKind::WIRE_NAMES,
            IntentKind::as_str,
        );
        check(Tier::VARIANTS, Tier::WIRE_NAMES, Tier::as_str);
        check(
            Completion::VARIANTS,
            Completion::WIRE_NAMES,
            Completion::as_str,
        );
        // The names the old hand-written tables gave, which keys, metrics and snapshots carry.
        assert_eq!(
            StreamKind::WIRE_NAMES,
            [
                "world",
                "intents",
                "story",
                "narrative",
                "npc_events",
                "deadletter"
            ]
        );
        assert_eq!(Tier::WIRE_NAMES, ["background", "nearby", "active"]);
        assert_eq!(IntentKind::WIRE_NAMES, ["use", "reactive", "navigate"]);
    }
}
