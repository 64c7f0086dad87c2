//! `geppetto decide` and `geppetto decide-batch`: a JSON request in, a JSON answer out, per the
//! contract in DESIGN.md §10.1 (implemented once, in `geppetto_core::wire`).

use geppetto_core::wire::{self, WireError};
use serde::Serialize;

use super::CommandError;
use crate::content::profiles::{DEFAULT_PROFILE, ProfileLibrary};

fn bad_input(error: WireError) -> CommandError {
    CommandError::BadInput(error.to_string())
}

fn profile<'a>(
    library: &'a ProfileLibrary,
    name: Option<&str>,
) -> Result<&'a geppetto_core::Profile, CommandError> {
    let name = name.unwrap_or(DEFAULT_PROFILE);
    library.get(name).ok_or_else(|| {
        let known: Vec<&str> = library.names().collect();
        CommandError::BadInput(format!(
            "profile: unknown profile `{name}` (known: {})",
            known.join(", ")
        ))
    })
}

fn render<T: Serialize>(answer: &T, pretty: bool) -> Result<String, CommandError> {
    let text = if pretty {
        serde_json::to_string_pretty(answer)
    } else {
        serde_json::to_string(answer)
    };
    text.map_err(|e| CommandError::Environment(format!("cannot write the answer: {e}")))
}

/// Answers one `decide` request.
pub fn decide(input: &str, library: &ProfileLibrary, pretty: bool) -> Result<String, CommandError> {
    let request: wire::request::DecideRequest = wire::parse(input).map_err(bad_input)?;
    let profile = profile(library, request.profile.as_deref())?;
    let answer = wire::decide(&request, profile).map_err(bad_input)?;
    render(&answer, pretty)
}

/// Answers one `decide-batch` request, scoring on `workers` threads.
pub fn decide_batch(
    input: &str,
    library: &ProfileLibrary,
    pretty: bool,
    workers: usize,
) -> Result<String, CommandError> {
    let request: wire::request::DecideBatchRequest = wire::parse(input).map_err(bad_input)?;
    let profile = profile(library, request.profile.as_deref())?;
    let answer = wire::decide_batch(&request, profile, workers).map_err(bad_input)?;
    render(&answer, pretty)
}
