//! `geppetto sets eval` and `geppetto sets simulate`: try a reactive utility set without a
//! running world — score it for given inputs, or run it against wobbling inputs and count how
//! often it changes its mind.
//!
//! Owns the `sets` subcommands ([`SetsCommand`], [`command`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use geppetto_core::life::reactive::{SetState, UtilitySet, run_wobbling};
use geppetto_core::rng::DetRng;
use geppetto_core::vocabulary::Vocabulary;

use super::error::CommandError;
use super::input::sets;
use crate::content::sets::SetLibrary;

/// Frames a second `sets simulate` runs at unless told otherwise.
pub const DEFAULT_FRAME_HZ: f64 = 30.0;

/// The `sets` subcommands.
#[derive(clap::Subcommand)]
pub enum SetsCommand {
    /// Score every action of a set for some inputs and show the pick.
    Eval {
        /// A set file, or the name of an embedded set (`villager`, `duel`).
        #[arg(long)]
        set: String,
        /// Raw input values as a JSON object, e.g. '{"THREAT": 80}' (missing: the input's min).
        #[arg(long)]
        inputs: Option<String>,
        /// Seed for the random selectors.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Run a set against inputs that wobble by ±W each frame; print the choices and the
    /// number of switches.
    Simulate {
        /// A set file, or the name of an embedded set.
        #[arg(long)]
        set: String,
        /// Seconds to run.
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
        /// Jitter of each input per frame, as a fraction of its range.
        #[arg(long, default_value_t = 0.0)]
        wobble: f64,
        /// Base input values as a JSON object (default: the middle of each range).
        #[arg(long)]
        inputs: Option<String>,
        /// Frames per second.
        #[arg(long, default_value_t = DEFAULT_FRAME_HZ)]
        fps: f64,
        /// Turn inertia off (no commitment bonus, no cooldowns, re-score every frame).
        #[arg(long)]
        no_inertia: bool,
        /// Seed of the jitter and the selector.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
}

/// Runs a `sets` subcommand over the embedded sets (or a set file); the text to print.
pub fn command(command: SetsCommand) -> Result<String, CommandError> {
    match command {
        SetsCommand::Eval { set, inputs, seed } => eval(&sets()?, &set, inputs.as_deref(), seed),
        SetsCommand::Simulate {
            set,
            seconds,
            wobble,
            inputs,
            fps,
            no_inertia,
            seed,
        } => {
            let options = WobbleOptions {
                seconds,
                wobble,
                frame_hz: fps,
                no_inertia,
                seed,
            };
            simulate(&sets()?, &set, inputs.as_deref(), &options)
        }
    }
}

/// A set compiled with its own vocabulary, so input names can be shown.
struct NamedSet {
    set: UtilitySet,
    input_names: Vec<String>,
}

fn load(library: &SetLibrary, set: &str) -> Result<NamedSet, CommandError> {
    let loaded = library.resolve(set)?;
    let mut vocabulary = Vocabulary::new();
    let set = loaded.compile(&mut vocabulary);
    let input_names = set
        .inputs
        .iter()
        .map(|input| vocabulary.name(input.name).to_owned())
        .collect();
    Ok(NamedSet { set, input_names })
}

impl NamedSet {
    /// Raw input values in the set's order from a JSON object of name → number. Unknown names
    /// are refused; missing ones read as the input's minimum.
    fn inputs(&self, json: Option<&str>) -> Result<Vec<f64>, CommandError> {
        let given: BTreeMap<String, f64> = match json {
            Some(text) => serde_json::from_str(text).map_err(|e| {
                CommandError::BadInput(format!("--inputs: expected an object of numbers: {e}"))
            })?,
            None => BTreeMap::new(),
        };
        if let Some(unknown) = given.keys().find(|name| !self.input_names.contains(name)) {
            return Err(CommandError::BadInput(format!(
                "--inputs.{unknown}: the set has no such input (declared: {})",
                self.input_names.join(", ")
            )));
        }
        Ok(self
            .set
            .inputs
            .iter()
            .zip(&self.input_names)
            .map(|(input, name)| given.get(name).copied().unwrap_or(input.min))
            .collect())
    }
}

/// Scores every action of a set for the given inputs and shows the pick.
pub fn eval(
    library: &SetLibrary,
    set: &str,
    inputs_json: Option<&str>,
    seed: u64,
) -> Result<String, CommandError> {
    let named = load(library, set)?;
    let raw = named.inputs(inputs_json)?;
    let set = &named.set;
    let scores = set.evaluate(&SetState::default(), &raw, 0.0);
    let pick = set.select(&scores, &mut DetRng::new(seed));
    let mut out = String::new();
    let _ = writeln!(out, "set {} ({:?})", set.name, set.selector);
    let inputs: Vec<String> = named
        .input_names
        .iter()
        .zip(&set.inputs)
        .zip(&raw)
        .map(|((name, input), value)| format!("{name}={value} ({:.3})", input.normalise(*value)))
        .collect();
    let _ = writeln!(out, "inputs: {}", inputs.join(", "));
    let _ = writeln!(
        out,
        "{:<20} {:>6} {:>6} {:>8}  considerations",
        "action", "bucket", "weight", "utility"
    );
    for (index, (action, score)) in set.actions.iter().zip(&scores).enumerate() {
        let parts: Vec<String> = action
            .considerations
            .iter()
            .map(|c| {
                let x = set.inputs.get(c.input).map_or(0.0, |input| {
                    input.normalise(raw.get(c.input).copied().unwrap_or(0.0))
                });
                format!("{}={:.3}", c.name, c.shape.evaluate(x))
            })
            .collect();
        let mark = if pick == Some(index) {
            "  <- pick"
        } else if score.vetoed {
            "  (vetoed)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{:<20} {:>6} {:>6.2} {:>8.4}  {}{mark}",
            action.name,
            action.bucket,
            action.weight,
            score.utility,
            parts.join(" ")
        );
    }
    match pick {
        Some(index) => {
            let emergency = if set.is_emergency(index) {
                " (emergency: preempts daily life)"
            } else {
                ""
            };
            let _ = write!(out, "pick: {}{emergency}", set.actions[index].name);
        }
        None => {
            let _ = write!(out, "pick: nothing (every action vetoed)");
        }
    }
    Ok(out)
}

/// What `sets simulate` runs.
#[derive(Clone, Debug)]
pub struct WobbleOptions {
    /// Seconds to run.
    pub seconds: f64,
    /// Jitter of every input, as a fraction of its range.
    pub wobble: f64,
    /// Frames per second.
    pub frame_hz: f64,
    /// Inertia off: no bonus, no cooldowns, re-score every frame.
    pub no_inertia: bool,
    /// Seed of the jitter and the selector.
    pub seed: u64,
}

/// Runs a set against wobbling inputs; prints the choice timeline and the switch count.
pub fn simulate(
    library: &SetLibrary,
    set: &str,
    inputs_json: Option<&str>,
    options: &WobbleOptions,
) -> Result<String, CommandError> {
    let named = load(library, set)?;
    let base = match inputs_json {
        Some(_) => named.inputs(inputs_json)?,
        // Without inputs, wobble around the middle of every range.
        None => named
            .set
            .inputs
            .iter()
            .map(|input| (input.min + input.max) / 2.0)
            .collect(),
    };
    if !(options.seconds.is_finite()
        && options.seconds >= 0.0
        && options.frame_hz.is_finite()
        && options.frame_hz > 0.0)
    {
        return Err(CommandError::BadInput(
            "--seconds and --fps must be finite, --fps positive".into(),
        ));
    }
    let set = if options.no_inertia {
        named.set.without_inertia()
    } else {
        named.set.clone()
    };
    let run = run_wobbling(
        &set,
        &base,
        options.seconds,
        options.frame_hz,
        options.wobble,
        options.seed,
    );
    let mut out = String::new();
    for (second, choice) in &run.timeline {
        let name = choice
            .and_then(|i| set.actions.get(i))
            .map_or("(nothing)", |a| a.name.as_str());
        let _ = writeln!(out, "{second:>8.2}s  {name}");
    }
    let inertia = if options.no_inertia { "off" } else { "on" };
    let _ = write!(
        out,
        "switches: {} in {} s ({} frames, inertia {inertia}, wobble ±{})",
        run.switches, options.seconds, run.frames, options.wobble
    );
    Ok(out)
}
