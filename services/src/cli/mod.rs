//! The `geppetto` command line: every subcommand, one module each, as functions from parsed
//! arguments and input text to output text (so tests can call them without a process), the
//! long-running ones (`demo`, `load`, `serve`) included. A command's module owns its arguments
//! and the whole of its work, reading its input ([`input`]) and writing what it streams
//! ([`output`]); `main.rs` parses arguments, dispatches, prints what a command returns and maps
//! a [`error::CommandError`] to the exit code.

pub mod affect;
pub mod cluster;
pub mod decide;
pub mod demo;
pub mod error;
pub mod input;
pub mod load;
pub mod log;
pub mod logging;
pub mod output;
pub mod replay;
pub mod report;
pub mod serve;
pub mod sets;
pub mod simulate;
pub mod validate;
pub mod whatif;
pub mod world;
