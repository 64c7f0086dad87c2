//! # geppetto-service
//!
//! Everything around the pure core that touches the outside world: content files, the CLI's
//! commands (and, as they land, NPC actors, the tick loop, the event bus and the admin API).
//! The `geppetto` binary in `main.rs` only parses arguments and maps errors to exit codes.

pub mod commands;
pub mod content;
