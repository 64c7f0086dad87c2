//! # geppetto-service
//!
//! Everything around the pure core that touches the outside world, one folder a layer:
//!
//! - [`cli`]: the `geppetto` command line, every subcommand (`demo`, `serve`, `load`,
//!   `decide`, `simulate`, `replay`, …); `main.rs` only parses arguments and maps errors to
//!   exit codes.
//! - [`runtime`]: what runs zones — the zone actor, the zone loop (world stream in, outputs
//!   out, snapshots), recovery, leases and the cluster, the LLM link, metrics.
//! - [`zone`]: one zone's NPCs and the policies of its tick (tiers, governor, isolation,
//!   social life), driving the pure core; no IO.
//! - [`http`]: the admin API and the web inspector.
//! - [`bus`]: the event bus (in-process and Redis Streams) and the wire envelopes.
//! - [`content`]: world files, profiles, archetypes, utility sets and personas from data.
//! - [`config`]: the service's TOML config file.

pub mod bus;
pub mod cli;
pub mod config;
pub mod content;
pub mod http;
pub mod runtime;
pub mod zone;
