//! # geppetto-service
//!
//! Everything around the pure core that touches the outside world: content files, the CLI's
//! commands, the zones and their actors, the tick loop with tiers, governor and error
//! isolation, the event bus (in-process and Redis Streams) and the demo.
//! The `geppetto` binary in `main.rs` only parses arguments and maps errors to exit codes.

pub mod actor;
pub mod brain;
pub mod bus;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod content;
pub mod demo;
pub mod governor;
pub mod http;
pub mod isolation;
pub mod lease;
pub mod llm_bridge;
pub mod load;
pub mod logging;
pub mod metrics;
pub mod recovery;
pub mod runtime;
pub mod serve;
pub mod service;
pub mod social_life;
pub mod tiers;
pub mod world_file;
pub mod zone;
