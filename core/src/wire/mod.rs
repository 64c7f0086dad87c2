//! The JSON contract of `geppetto decide` and `geppetto decide-batch`:
//! parsing with JSON-path errors, compiling into engine values, running the [`Decider`] and
//! shaping the answer. The CLI, the admin API and the fuzz targets all go through here, so the
//! contract has one implementation.

pub mod batch;
pub mod compile;
pub mod decide;
pub mod limits;
pub mod read;
pub mod request;
pub mod response;
pub mod scenario;

use serde::de::DeserializeOwned;

use crate::decision::decider::Decider;
use crate::decision::scoring::{Candidate, Ineligible};
use crate::decision::tuning::Profile;
use crate::decision::world::World;
use crate::vocabulary::Vocabulary;
pub use batch::parse_decide_batch;
pub use decide::parse_decide;
use limits::{DecideLimits, LimitError};
use read::{Counted, Nested};
use response::{BreakdownOut, IneligibleOut, RankedOut, round4};

/// A refused request: where (a JSON path such as `agent.considerations[2].max`) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct WireError {
    /// JSON path of the offending value (`.` for the document itself).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl WireError {
    /// An error at `path`.
    pub fn at(path: &str, message: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            message: message.into(),
        }
    }
}

impl From<LimitError> for WireError {
    fn from(error: LimitError) -> Self {
        Self::at(".", error.to_string())
    }
}

/// Replaces serde's Rust type names with words a JSON author knows.
fn plain_words(message: String) -> String {
    message
        .replace("expected f64", "expected a number")
        .replace("expected u64", "expected a non-negative integer")
        .replace("expected u32", "expected a non-negative integer")
        .replace("expected usize", "expected a non-negative integer")
        .replace("expected a sequence", "expected an array")
        .replace("expected a map", "expected an object")
}

/// Parses `json` into `T`, naming the JSON path of the first problem.
pub fn parse<T: DeserializeOwned>(json: &str) -> Result<T, WireError> {
    // serde accepts a struct written as an array; a request is always an object.
    if !json.trim_start().starts_with('{') {
        return Err(WireError::at(".", "expected a JSON object"));
    }
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        WireError {
            path,
            message: plain_words(error.into_inner().to_string()),
        }
    })?;
    deserializer
        .end()
        .map_err(|error| WireError::at(".", error.to_string()))?;
    Ok(value)
}

/// Checks the world's counted providers and their actions against `limits` (the raw count
/// while reading misses an array under an escaped key, which the parser reads like any other).
fn check_world_counts<P: Nested>(
    providers: &Counted<P>,
    limits: &DecideLimits,
) -> Result<(), LimitError> {
    limits.check_count(
        "max_providers",
        "providers",
        providers.len,
        limits.max_providers,
    )?;
    limits.check_count(
        "max_actions",
        "actions",
        providers.nested,
        limits.max_actions,
    )
}

/// Refuses an answer holding a utility that overflowed: every number was finite, but their
/// products were not (huge deltas times huge multipliers). Accepted requests answer with finite
/// utilities only.
fn finite_utility(provider: usize, action: usize, utility: f64) -> Result<(), WireError> {
    if utility.is_finite() {
        return Ok(());
    }
    Err(WireError::at(
        &format!("world.providers[{provider}].actions[{action}]"),
        "its utility overflows (the request's numbers are too large to score)",
    ))
}

/// The decider a request runs with: the request's tuning over the profile's, weights from the
/// profile.
pub fn decider_for(
    tuning: &crate::decision::tuning::TuningPatch,
    profile: &Profile,
    vocabulary: &mut Vocabulary,
) -> Result<Decider, WireError> {
    tuning
        .validate()
        .map_err(|e| WireError::at(&format!("tuning.{}", e.field), e.reason))?;
    let weights = profile.weights_in(vocabulary);
    Ok(Decider::new(tuning.over(&profile.tuning).resolve()).with_consideration_weights(weights))
}

fn ids(world: &World, candidate_provider: usize, candidate_action: usize) -> (String, String) {
    let provider = world.providers.get(candidate_provider);
    let action = provider.and_then(|p| p.actions.get(candidate_action));
    (
        provider.map(|p| p.id.clone()).unwrap_or_default(),
        action.map(|a| a.id.clone()).unwrap_or_default(),
    )
}

/// A ranked candidate as the wire shows it: ids, and the utility and its factors rounded.
pub fn ranked_out(world: &World, candidate: &Candidate) -> RankedOut {
    let (provider, action) = ids(world, candidate.provider, candidate.action);
    let b = candidate.breakdown;
    RankedOut {
        provider,
        action,
        utility: round4(candidate.utility),
        breakdown: BreakdownOut {
            benefit: round4(b.benefit),
            priority: round4(b.priority),
            personality: round4(b.personality),
            context: round4(b.context),
            schedule: round4(b.schedule),
            repeat: round4(b.repeat),
            distance: round4(b.distance),
            foresight: round4(b.foresight),
            cost: round4(b.cost),
        },
    }
}

/// A removed candidate as the wire shows it: ids and the first gate that failed.
pub fn ineligible_out(world: &World, ineligible: &Ineligible) -> IneligibleOut {
    let (provider, action) = ids(world, ineligible.provider, ineligible.action);
    IneligibleOut {
        provider,
        action,
        reason: ineligible.reason,
    }
}
