//! `geppetto replay`: a recorded world log re-run through the core, its intents printed
//! (JSONL), or compared against a recorded intent stream up to the first difference.
//!
//! Owns what a replay reads and where it starts ([`ReplayArgs`], also `whatif`'s) and the
//! command's run ([`run`]); the replay itself is [`crate::history::replay`].

use std::path::PathBuf;

use super::error::CommandError;
use super::input::config;
use super::log::LogSourceArgs;
use super::output::print_line;
use crate::bus::StreamKind;
use crate::history::replay::{ReplayOptions, SnapshotPick, replay};

/// What a replay reads and where it starts.
#[derive(clap::Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    source: LogSourceArgs,
    /// The service config the log was recorded under: its zone settings (tick, tiers) and,
    /// unless `--world` says otherwise, its first world.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The world file (`village` for the embedded one; default: the config's first world,
    /// else `village`).
    #[arg(long)]
    world: Option<String>,
    /// The zone (default: the world file's).
    #[arg(long)]
    zone: Option<String>,
    /// Start from a stored snapshot (`latest` or a sequence) and replay only what follows.
    #[arg(long)]
    from_snapshot: Option<SnapshotPick>,
    /// The redb file holding the snapshots (default: the Redis or redb log's own store).
    #[arg(long)]
    store: Option<PathBuf>,
    /// Threads to run on (never changes the answer): 1 reads and folds the log on one (for a
    /// machine whose other cores are busy); 2 reads the next page on a second while the zone
    /// folds this one, and — unless the stream is `story` — runs the zone's story detector
    /// beside it.
    #[arg(long, default_value_t = 2, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=2))]
    threads: usize,
    /// The output stream to print or compare: `intents`, `story` (story signals and their
    /// lifecycle) or `npc_events`.
    #[arg(long, default_value = "intents", value_parser = replayable_stream)]
    stream: StreamKind,
}

/// A stream a replay can print: one the zone writes.
fn replayable_stream(name: &str) -> Result<StreamKind, String> {
    match StreamKind::from_wire(name) {
        Some(stream @ (StreamKind::Intents | StreamKind::Story | StreamKind::NpcEvents)) => {
            Ok(stream)
        }
        _ => Err("one of intents, story, npc_events".to_owned()),
    }
}

impl ReplayArgs {
    /// The replay's options, comparing against `compare` when given.
    pub fn options(self, compare: Option<PathBuf>) -> Result<ReplayOptions, CommandError> {
        let service = self.config.as_deref().map(config).transpose()?;
        let world = self
            .world
            .or_else(|| {
                service
                    .as_ref()
                    .and_then(|c| c.worlds.first())
                    .map(|w| w.display().to_string())
            })
            .unwrap_or_else(|| "village".into());
        Ok(ReplayOptions {
            source: self.source.source(),
            limits: service
                .as_ref()
                .map(|c| c.consumer.limits.clone())
                .unwrap_or_default(),
            zone_config: service.map(|c| c.zone_config()).unwrap_or_default(),
            world,
            zone: self.zone,
            from_snapshot: self.from_snapshot,
            store: self.store,
            compare,
            stream: self.stream,
            threads: self.threads,
        })
    }
}

/// `geppetto replay`: the intents to stdout as they come, what was checked and skipped to
/// stderr; against a recording (`compare`), the first difference is the error.
pub fn run(
    window: ReplayArgs,
    compare: Option<PathBuf>,
    strict: bool,
) -> Result<String, CommandError> {
    let options = window.options(compare)?;
    let summary = replay(&options, strict, print_line)?;
    if let Some(checked) = &summary.snapshot_check {
        eprintln!("-- {checked}");
    }
    for skipped in &summary.skipped {
        eprintln!("-- skipped {skipped}");
    }
    eprintln!(
        "-- {} log entries replayed, {} skipped, {} intents",
        summary.replayed,
        summary.skipped.len(),
        summary.intents
    );
    match summary.difference {
        Some(difference) => Err(CommandError::Different(difference)),
        None if options.compare.is_some() => Ok(format!(
            "identical: {} intents match the recording",
            summary.intents
        )),
        None => Ok(String::new()),
    }
}
