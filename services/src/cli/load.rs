//! `geppetto load`: drives synthetic zones through the real service loop and bus and prints
//! the report (the run is [`crate::drive::load`]'s).

use crate::cli::error::CommandError;
use crate::drive::load::{LoadOptions, run_load};

/// `geppetto load`: the report, to print.
pub fn run(options: &LoadOptions) -> Result<String, CommandError> {
    Ok(run_load(options)?)
}
