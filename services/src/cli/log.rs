//! `geppetto log export`: a zone's recorded stream written as JSONL, each line the envelope
//! with its `log_id`.
//!
//! Owns where a command reads a recorded log from ([`LogSourceArgs`], also `replay`'s and
//! `whatif`'s) and the `log` subcommands ([`LogCommand`], [`run`]).

use std::path::PathBuf;

use super::error::CommandError;
use super::output::print_line;
use crate::bus::StreamKind;
use crate::history::log_source::{LogSource, export};

/// Where a recorded log is read from (exactly one).
#[derive(clap::Args)]
#[group(required = true, multiple = false)]
pub struct LogSourceArgs {
    /// A JSONL log (as `log export` writes, or one world envelope per line).
    #[arg(long)]
    log: Option<PathBuf>,
    /// A Redis server holding the zone's streams (e.g. `redis://127.0.0.1:6379/`).
    #[arg(long)]
    redis: Option<String>,
    /// The embedded redb file of a `serve` or `demo` run.
    #[arg(long)]
    redb: Option<PathBuf>,
}

impl LogSourceArgs {
    /// The log source named.
    pub fn source(self) -> LogSource {
        match (self.log, self.redis, self.redb) {
            (Some(file), _, _) => LogSource::File(file),
            (_, Some(url), _) => LogSource::Redis(url),
            (_, _, Some(file)) => LogSource::Redb(file),
            // clap requires one of the three.
            (None, None, None) => LogSource::File(PathBuf::from("-")),
        }
    }
}

/// The `log` subcommands.
#[derive(clap::Subcommand)]
pub enum LogCommand {
    /// Write a zone's stream as JSONL: each line the envelope with its `log_id`.
    Export {
        #[command(flatten)]
        source: LogSourceArgs,
        /// The zone.
        #[arg(long)]
        zone: String,
        /// The stream: world, intents, story, narrative, npc_events or deadletter.
        #[arg(long, default_value = "world")]
        stream: String,
    },
}

/// Runs a `log` subcommand: the stream written to stdout, its count to stderr.
pub fn run(command: LogCommand) -> Result<String, CommandError> {
    let LogCommand::Export {
        source,
        zone,
        stream,
    } = command;
    let stream = StreamKind::from_wire(&stream).ok_or_else(|| {
        CommandError::BadInput(format!(
            "--stream `{stream}`: one of world, intents, story, narrative, npc_events, deadletter"
        ))
    })?;
    let written = export(&source.source(), &zone, stream, print_line)?;
    eprintln!("-- {written} entries");
    Ok(String::new())
}
