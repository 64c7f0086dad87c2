//! `geppetto whatif`: a recorded window replayed twice — as it was, and with parameters
//! changed — and one NPC's two timelines side by side (or as JSON); the comparison itself is
//! [`crate::history::whatif`].

use super::error::CommandError;
use super::replay::ReplayArgs;
use crate::history::whatif::{Change, report_text, what_if};

/// `geppetto whatif` over `window` for `npc` with `changes`, for `ticks` game ticks (default:
/// the whole log): two columns, or JSON.
pub fn run(
    window: ReplayArgs,
    npc: &str,
    changes: &[Change],
    ticks: Option<u64>,
    json: bool,
) -> Result<String, CommandError> {
    let options = window.options(None)?;
    let report = what_if(&options, npc, changes, ticks)?;
    if json {
        Ok(serde_json::to_string_pretty(&report)?)
    } else {
        Ok(report_text(&report))
    }
}
