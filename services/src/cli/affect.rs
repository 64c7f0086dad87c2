//! `geppetto affect run --persona P --events FILE [--time-scale X] [--resolution R]`: runs one
//! persona through a timed list of events and prints the per-tick trace (JSONL) and a summary
//! of peaks, bursts and lash-outs.
//!
//! Owns the `affect` subcommands ([`AffectCommand`], [`command`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use geppetto_core::affect::{AffectEvent, AffectModel};
use geppetto_core::wire::response::round4 as wire_round;
use serde::{Deserialize, Serialize};

use super::error::CommandError;
use super::input::read_file;
use crate::content::affect::{load_persona, with_tick};

/// The `affect` subcommands.
#[derive(clap::Subcommand)]
pub enum AffectCommand {
    /// Print the per-tick trace (JSONL on stdout) and a summary of peaks, bursts and lash-outs
    /// (on stderr, or alone on stdout with --summary).
    Run {
        /// A persona file, or a shipped persona (`halgrim`, `mira`).
        #[arg(long)]
        persona: String,
        /// The events file (YAML: `initial`, `seconds`, `events: [{at_s, kind, source}]`).
        #[arg(long)]
        events: PathBuf,
        /// Relabel the clock (every half-life ×X; the per-tick trace is unchanged).
        #[arg(long)]
        time_scale: Option<f64>,
        /// Refine the tick (dt ÷ R; real-time behaviour kept).
        #[arg(long)]
        resolution: Option<f64>,
        /// Print only the summary.
        #[arg(long)]
        summary: bool,
    },
}

/// Runs an `affect` subcommand: the trace to print, the summary on stderr (or the summary
/// alone to print, with `--summary`).
pub fn command(command: AffectCommand) -> Result<String, CommandError> {
    let AffectCommand::Run {
        persona,
        events,
        time_scale,
        resolution,
        summary,
    } = command;
    let text = read_file(&events)?;
    let options = AffectRunOptions {
        time_scale,
        resolution,
        summary_only: summary,
    };
    let (trace, report) = run(&persona, &events, &text, &options)?;
    if summary {
        Ok(report)
    } else {
        eprintln!("{report}");
        Ok(trace)
    }
}

/// An events file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsFile {
    /// Seconds to run (real time; default: 10 minutes after the last event).
    #[serde(default)]
    pub seconds: Option<f64>,
    /// Starting values by state (others at rest).
    #[serde(default)]
    pub initial: BTreeMap<String, f64>,
    /// The events, at real seconds from the start.
    #[serde(default)]
    pub events: Vec<TimedEvent>,
}

/// An event at a time.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimedEvent {
    /// Seconds from the start (real time, before `time_scale`).
    pub at_s: f64,
    /// Its kind (a channel of the persona).
    pub kind: String,
    /// Who caused it.
    #[serde(default)]
    pub source: Option<String>,
    /// What it concerns.
    #[serde(default)]
    pub object: Option<String>,
    /// Scale of the impulse; default 1.
    #[serde(default = "one")]
    pub magnitude: f64,
}

fn one() -> f64 {
    1.0
}

/// Seconds `affect run` keeps going after the last event when the file gives no duration.
pub const DEFAULT_TAIL_S: f64 = 600.0;

/// One trace line.
#[derive(Serialize)]
struct TraceLine<'a> {
    tick: u64,
    t_s: f64,
    states: BTreeMap<&'a str, f64>,
    latched: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    lash_out: Option<(String, f64)>,
}

/// What to run.
#[derive(Clone, Debug, Default)]
pub struct AffectRunOptions {
    /// Relabel the clock.
    pub time_scale: Option<f64>,
    /// Refine the tick.
    pub resolution: Option<f64>,
    /// Print only the summary.
    pub summary_only: bool,
}

/// Runs the persona through the events; returns (trace, summary).
pub fn run(
    persona: &str,
    events_file: &Path,
    events_text: &str,
    options: &AffectRunOptions,
) -> Result<(String, String), CommandError> {
    let (config, _) = load_persona(persona, None)?;
    let model: AffectModel = with_tick(&config, options.time_scale, options.resolution)?;
    let file: EventsFile = serde_saphyr::from_str(events_text).map_err(|e| {
        let message = e.to_string();
        CommandError::BadInput(format!(
            "{}: {}",
            events_file.display(),
            message.strip_prefix("error: ").unwrap_or(&message)
        ))
    })?;
    let mut state = model.initial_state();
    for (name, value) in &file.initial {
        let index = model.state_index(name).ok_or_else(|| {
            CommandError::BadInput(format!(
                "{}: initial.{name}: the persona has no such state",
                events_file.display()
            ))
        })?;
        state.values[index] = *value;
    }
    // Event times are real seconds before the clock is relabelled.
    let scale = options.time_scale.unwrap_or(config.tick.time_scale);
    let dt = model.dt_s();
    let last = file.events.iter().map(|e| e.at_s).fold(0.0, f64::max);
    let seconds = file.seconds.unwrap_or(last + DEFAULT_TAIL_S) * scale;
    let ticks = (seconds / dt).ceil().max(0.0) as u64;
    let mut schedule: Vec<(u64, AffectEvent)> = file
        .events
        .iter()
        .map(|e| {
            let tick = ((e.at_s * scale) / dt).round().max(0.0) as u64;
            let event = AffectEvent {
                kind: e.kind.clone(),
                source: e.source.clone(),
                object: e.object.clone(),
                magnitude: e.magnitude,
            };
            (tick, event)
        })
        .collect();
    schedule.sort_by_key(|(tick, _)| *tick);
    let names = model.state_names().to_vec();
    let mut peaks = vec![(f64::NEG_INFINITY, 0.0); names.len()];
    let (mut bursts, mut lash_outs) = (Vec::new(), Vec::new());
    let mut burst_start = None;
    let mut trace = String::new();
    for tick in 0..ticks {
        let events: Vec<AffectEvent> = schedule
            .iter()
            .filter(|(at, _)| *at == tick)
            .map(|(_, e)| e.clone())
            .collect();
        let outcome = model.step(&mut state, &events);
        let t_s = (tick + 1) as f64 * dt;
        for (peak, value) in peaks.iter_mut().zip(&state.values) {
            if *value > peak.0 {
                *peak = (*value, t_s);
            }
        }
        if outcome.burst_started {
            burst_start = Some(t_s);
        }
        if outcome.burst_ended {
            bursts.push((burst_start.take().unwrap_or(t_s), t_s));
        }
        let lash_out = outcome
            .discharge
            .map(|d| (d.target, wire_round(d.intensity)));
        if let Some((target, intensity)) = &lash_out {
            lash_outs.push((t_s, target.clone(), *intensity));
        }
        if !options.summary_only {
            let line = TraceLine {
                tick,
                t_s: wire_round(t_s),
                states: names
                    .iter()
                    .map(String::as_str)
                    .zip(state.values.iter().map(|v| wire_round(*v)))
                    .collect(),
                latched: state.latched,
                lash_out,
            };
            let text = serde_json::to_string(&line)
                .map_err(|e| CommandError::Environment(format!("cannot write the trace: {e}")))?;
            trace.push_str(&text);
            trace.push('\n');
        }
    }
    if let Some(start) = burst_start {
        bursts.push((start, f64::INFINITY));
    }
    let mut summary = String::new();
    let _ = writeln!(
        summary,
        "persona {} — {} ticks of {} s",
        config.name, ticks, dt
    );
    for (name, (peak, at)) in names.iter().zip(&peaks) {
        let _ = writeln!(summary, "  peak {name:<12} {peak:.3} at {at:.0} s");
    }
    for (start, end) in &bursts {
        let _ = writeln!(summary, "  burst from {start:.0} s to {end:.0} s");
    }
    for (at, target, intensity) in &lash_outs {
        let _ = writeln!(
            summary,
            "  lashes out at {target} at {at:.0} s (intensity {intensity})"
        );
    }
    let _ = write!(
        summary,
        "  {} burst(s), {} lash-out(s)",
        bursts.len(),
        lash_outs.len()
    );
    Ok((trace.trim_end().to_owned(), summary))
}
