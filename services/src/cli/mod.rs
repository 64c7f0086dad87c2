//! The `geppetto` command line: every subcommand, one module each, as functions from parsed
//! arguments and input text to output text (so tests can call them without a process), the
//! long-running ones (`demo`, `load`, `serve`) included; `main.rs` parses arguments and maps a
//! [`error::CommandError`] to the exit code.

pub mod affect;
pub mod cluster;
pub mod decide;
pub mod demo;
pub mod error;
pub mod load;
pub mod logging;
pub mod report;
pub mod serve;
pub mod sets;
pub mod simulate;
pub mod validate;
pub mod world;
