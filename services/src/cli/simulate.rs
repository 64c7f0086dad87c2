//! `geppetto simulate --scenario FILE [--hours H] [--seed S] [--summary]`: runs one agent
//! through a scenario (YAML or JSON) and prints a JSONL trace, one line per tick, or with
//! `--summary` an hour-by-hour table for humans; with `--world` it hands the run to
//! [`super::world`].
//!
//! Owns the command's arguments ([`SimulateArgs`]) and its run ([`run`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use geppetto_core::life::scenario::TickRecord;
use geppetto_core::life::simulator::{ReactiveLayer, Simulator};
use geppetto_core::vocabulary::Vocabulary;
use geppetto_core::wire::scenario::{EventOut, ScenarioSpec, TraceLine, compile_scenario};
use geppetto_core::wire::{self, WireError};

use super::error::CommandError;
use super::input::{config, profiles, read_file, sets};
use super::world::{WorldRun, simulate_world};
use crate::content::archetypes::ArchetypeLibrary;
use crate::content::profiles::{DEFAULT_PROFILE, ProfileLibrary};
use crate::content::sets::SetLibrary;
use crate::history::scorecard::{Seeds, parse_seeds};
use crate::zone::ZoneConfig;

/// The arguments of `geppetto simulate`.
#[derive(clap::Args)]
pub struct SimulateArgs {
    /// The scenario (YAML, or JSON when it ends in .json).
    #[arg(long, required_unless_present = "world")]
    scenario: Option<PathBuf>,
    /// Run a whole world instead — a world file or directory, or a shipped world by name
    /// (`village`, `harbour`) — every NPC at full detail, and print its scorecard.
    #[arg(long, conflicts_with = "scenario")]
    world: Option<String>,
    /// Game days to run a world.
    #[arg(long, default_value_t = 1.0)]
    days: f64,
    /// Game hours to run (overrides the scenario's hours, or a world's `--days`).
    #[arg(long)]
    hours: Option<f64>,
    /// Seed (overrides the scenario's or the world file's).
    #[arg(long)]
    seed: Option<u64>,
    /// Run a world under several seeds (`1..10`, inclusive, or `1,4,9`) and report each
    /// scorecard and the spread (min / median / max) of the world's figures.
    #[arg(long, conflicts_with_all = ["seed", "scenario"], value_parser = parse_seeds)]
    seeds: Option<Seeds>,
    /// Print a world's whole scorecard as JSON.
    #[arg(long, conflicts_with = "scenario")]
    json: bool,
    /// Write a self-contained HTML page of the world's run (the first seed's): a timeline
    /// per NPC, its needs over the days, the story signals on the same axis.
    #[arg(long, conflicts_with = "scenario")]
    report: Option<PathBuf>,
    /// Run a world with the settings of this service config (`[social]`, `[story]`,
    /// `[tick]`, `[tiers]`…); default: the documented defaults.
    #[arg(long, conflicts_with = "scenario")]
    config: Option<PathBuf>,
    /// Print an hour-by-hour table instead of JSONL.
    #[arg(long)]
    summary: bool,
    /// Also load profiles from this directory.
    #[arg(long)]
    profiles_dir: Option<PathBuf>,
}

/// `geppetto simulate`: a world's run (`--world`) or a scenario's trace, as text to print.
pub fn run(mut args: SimulateArgs) -> Result<String, CommandError> {
    if let Some(world) = args.world.take() {
        return simulate_world(&world, &world_run(args)?);
    }
    let scenario = args
        .scenario
        .ok_or_else(|| CommandError::BadInput("--scenario or --world is needed".into()))?;
    let library = profiles(args.profiles_dir.as_deref())?;
    let text = read_file(&scenario)?;
    let options = SimulateOptions {
        hours: args.hours,
        seed: args.seed,
        summary: args.summary,
    };
    simulate(&scenario, &text, &library, &sets()?, &options)
}

/// How `--world` runs: `--profiles-dir` first, else the config's; archetypes from the
/// config's; the config's zone settings.
fn world_run(args: SimulateArgs) -> Result<WorldRun, CommandError> {
    let service = args.config.as_deref().map(config).transpose()?;
    let profiles_dir = args
        .profiles_dir
        .or_else(|| service.as_ref().and_then(|s| s.profiles_dir.clone()));
    let archetypes = service
        .as_ref()
        .and_then(|s| s.archetypes_dir.as_ref())
        .map(|dir| ArchetypeLibrary::embedded_and_dir(dir))
        .transpose()?;
    Ok(WorldRun {
        hours: args.hours.unwrap_or(args.days * 24.0),
        seeds: args
            .seeds
            .map_or_else(|| args.seed.into_iter().collect(), |s| s.0),
        profiles: profiles(profiles_dir.as_deref())?,
        archetypes,
        json: args.json,
        report: args.report,
        config: service.map_or_else(ZoneConfig::default, |s| s.zone_config()),
    })
}

/// What to run and how to print it.
#[derive(Clone, Debug, Default)]
pub struct SimulateOptions {
    /// Overrides the scenario's duration.
    pub hours: Option<f64>,
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    /// An hourly table instead of JSONL.
    pub summary: bool,
}

fn refused(file: &Path, error: impl std::fmt::Display) -> CommandError {
    CommandError::BadInput(format!("{}: {error}", file.display()))
}

/// Parses a scenario file's text: JSON (paths in errors) when the file ends in `.json`, YAML
/// (line and column in errors) otherwise.
pub fn parse_scenario(file: &Path, text: &str) -> Result<ScenarioSpec, CommandError> {
    if file.extension().is_some_and(|ext| ext == "json") {
        wire::parse(text).map_err(|e: WireError| refused(file, e))
    } else {
        serde_saphyr::from_str(text).map_err(|e| {
            let message = e.to_string();
            refused(file, message.strip_prefix("error: ").unwrap_or(&message))
        })
    }
}

/// Runs the scenario in `text` (read from `file`) and renders its trace.
pub fn simulate(
    file: &Path,
    text: &str,
    library: &ProfileLibrary,
    sets: &SetLibrary,
    options: &SimulateOptions,
) -> Result<String, CommandError> {
    let spec = parse_scenario(file, text)?;
    let name = spec.profile.as_deref().unwrap_or(DEFAULT_PROFILE);
    let profile = library
        .get(name)
        .ok_or_else(|| refused(file, format!("profile: unknown profile `{name}`")))?;
    let mut vocabulary = Vocabulary::new();
    let decider =
        wire::decider_for(&spec.tuning, profile, &mut vocabulary).map_err(|e| refused(file, e))?;
    let effects = profile.aggregated_effects_in(&mut vocabulary);
    let simulator = Simulator::new(decider)
        .with_aggregated_effects(effects)
        .settling_resources(true);
    let mut scenario =
        compile_scenario(&spec, options.hours, &mut vocabulary).map_err(|e| refused(file, e))?;
    if let Some(name) = &spec.reactive_set {
        let set = sets
            .resolve(name)
            .map_err(|e| refused(file, format!("reactive_set: {e}")))?;
        scenario.agent.layers.make_mut().reactive = Some(Box::new(ReactiveLayer::new(Arc::new(
            set.compile(&mut vocabulary),
        ))));
    }
    let seed = options.seed.unwrap_or(spec.seed);
    let mut output = String::new();
    if options.summary {
        let mut table = SummaryTable::default();
        scenario.run(&simulator, seed, |record| table.add(&record, &vocabulary));
        table.render(&mut output);
    } else {
        let mut failure = None;
        scenario.run(&simulator, seed, |record| {
            match serde_json::to_string(&TraceLine::from_record(&record, &vocabulary)) {
                Ok(line) => {
                    output.push_str(&line);
                    output.push('\n');
                }
                Err(error) => failure = Some(error),
            }
        });
        if let Some(error) = failure {
            return Err(CommandError::Environment(format!(
                "cannot write the trace: {error}"
            )));
        }
    }
    Ok(output.trim_end().to_owned())
}

/// One row per game hour: the state at the first tick of the hour and what happened during it.
#[derive(Default)]
struct SummaryTable {
    names: Vec<String>,
    rows: Vec<SummaryRow>,
    current_hour: Option<i64>,
}

/// One hour of the summary.
struct SummaryRow {
    now_hours: f64,
    level: &'static str,
    action: String,
    values: Vec<f64>,
    events: Vec<String>,
}

impl SummaryTable {
    fn add(&mut self, record: &TickRecord<'_>, vocabulary: &Vocabulary) {
        let line = TraceLine::from_record(record, vocabulary);
        let hour = record.now_hours.floor() as i64;
        if self.current_hour != Some(hour) {
            self.current_hour = Some(hour);
            self.names = line
                .considerations
                .0
                .iter()
                .map(|(name, _)| name.clone())
                .collect();
            let action = line
                .action
                .as_ref()
                .map_or("-".to_owned(), |a| format!("{}/{}", a.provider, a.action));
            let values = line
                .considerations
                .0
                .iter()
                .map(|(_, value)| *value)
                .collect();
            self.rows.push(SummaryRow {
                now_hours: record.now_hours,
                level: line.level,
                action,
                values,
                events: Vec::new(),
            });
        }
        if let Some(row) = self.rows.last_mut() {
            row.events.extend(line.events.iter().filter_map(describe));
        }
    }

    fn render(&self, out: &mut String) {
        let _ = write!(out, "{:>6}  {:<10}  {:<28}", "hour", "level", "action");
        for name in &self.names {
            let _ = write!(out, "  {name:>8}");
        }
        let _ = writeln!(out, "  events");
        for SummaryRow {
            now_hours: now,
            level,
            action,
            values,
            events,
        } in &self.rows
        {
            let (h, m) = (
                now.floor() as i64,
                ((now - now.floor()) * 60.0).round() as i64,
            );
            let _ = write!(
                out,
                "{:>3}:{m:02}  {level:<10}  {action:<28}",
                h.rem_euclid(24)
            );
            for value in values {
                let _ = write!(out, "  {value:>8.1}");
            }
            let _ = writeln!(out, "  {}", events.join("; "));
        }
    }
}

fn describe(event: &EventOut) -> Option<String> {
    match event {
        EventOut::ActionStarted {
            action,
            player_queued,
            ..
        } => Some(if *player_queued {
            format!("started {action} (ordered)")
        } else {
            format!("started {action}")
        }),
        EventOut::ActionCompleted { action, .. } => Some(format!("finished {action}")),
        EventOut::ActionPreempted {
            action, by_action, ..
        } => Some(format!("dropped {action} for {by_action}")),
        EventOut::ActionTimedOut { action, .. } => Some(format!("gave up on {action} (timeout)")),
        EventOut::QueueEntryDropped { action, reason, .. } => {
            Some(format!("could not start {action} ({reason})"))
        }
        EventOut::CommitmentExpired { forbid_tags, .. } => {
            Some(format!("promise ended ({})", forbid_tags.join(", ")))
        }
        EventOut::LevelChanged { to, .. } => Some(format!("now {to}")),
        EventOut::ActionInterrupted {
            action, by_action, ..
        } => Some(format!("dropped {action} to {by_action}")),
        EventOut::ReactiveStarted { action, .. } => Some(format!("reacts: {action}")),
        EventOut::ReactiveEnded { action, .. } => Some(format!("stops {action}")),
        EventOut::ActivityChanged { to, .. } => {
            Some(format!("now {}", to.as_deref().unwrap_or("free time")))
        }
        EventOut::GoalCreated { description } => Some(format!("wants to {description}")),
        EventOut::GoalCompleted { description } => Some(format!("achieved: {description}")),
        EventOut::GoalFailed { description } => Some(format!("gave up: {description}")),
        EventOut::GoalBlocked {
            description,
            reason,
        } => Some(format!("stuck on {description} ({reason})")),
        EventOut::Bark { text, .. } => Some(format!("says \"{text}\"")),
        EventOut::BurstStarted => Some("loses their temper".to_owned()),
        EventOut::BurstEnded => Some("calms down".to_owned()),
        EventOut::LashOut { target, .. } => Some(format!("lashes out at {target}")),
        EventOut::AggregatedEventsApplied { count } => {
            Some(format!("caught up {count} coarse events"))
        }
    }
}
