//! `geppetto decide` and `geppetto decide-batch`: a JSON request in, a JSON answer out, per the
//! contract in docs/contract.md (implemented once, in `geppetto_core::wire`).

use std::io::Read;

use geppetto_core::wire::limits::{DecideLimits, check_bytes};
use geppetto_core::wire::{self, WireError};
use serde::Serialize;

use super::error::CommandError;
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

/// Reads a request from `source` (a file or stdin, named `name` in errors): at most
/// `limits.max_bytes` are read, and the bytes must be UTF-8. Either failure is a refused
/// input.
pub fn read_request(
    source: impl Read,
    name: &str,
    limits: &DecideLimits,
) -> Result<String, CommandError> {
    let mut bytes = Vec::new();
    let cap = u64::try_from(limits.max_bytes).unwrap_or(u64::MAX);
    source
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| CommandError::Environment(format!("{name}: cannot read: {e}")))?;
    check_bytes(bytes.len(), &limits.json())
        .map_err(|e| CommandError::BadInput(format!("{name}: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        CommandError::BadInput(format!(
            "{name}: not UTF-8: invalid byte at {}",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Answers one `decide` request.
pub fn decide(
    input: &str,
    library: &ProfileLibrary,
    limits: &DecideLimits,
    pretty: bool,
) -> Result<String, CommandError> {
    let request = wire::parse_decide(input, limits).map_err(bad_input)?;
    let profile = profile(library, request.profile.as_deref())?;
    let answer = wire::decide(&request, profile).map_err(bad_input)?;
    render(&answer, pretty)
}

/// Answers one `decide-batch` request, scoring on `workers` threads.
pub fn decide_batch(
    input: &str,
    library: &ProfileLibrary,
    limits: &DecideLimits,
    pretty: bool,
    workers: usize,
) -> Result<String, CommandError> {
    let request = wire::parse_decide_batch(input, limits).map_err(bad_input)?;
    let profile = profile(library, request.profile.as_deref())?;
    let answer = wire::decide_batch(&request, profile, workers).map_err(bad_input)?;
    render(&answer, pretty)
}
