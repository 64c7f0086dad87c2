//! `geppetto demo`: the embedded village with the internal clock and a short script, its live
//! feed printed line by line as it happens (the run is [`crate::drive::demo`]'s).

use crate::cli::error::CommandError;
use crate::cli::logging::LogArgs;
use crate::cli::output::print_line;
use crate::drive::demo::{DemoOptions, run_demo};

/// The arguments of `geppetto demo`.
#[derive(clap::Args)]
pub struct DemoArgs {
    #[command(flatten)]
    options: DemoOptions,
    #[command(flatten)]
    log: LogArgs,
}

/// `geppetto demo`: the feed on stdout as it happens; the closing line is left to print.
pub fn run(args: DemoArgs) -> Result<String, CommandError> {
    args.log.init()?;
    let printed = run_demo(&args.options, |line| print_line(&line))?;
    Ok(format!(
        "-- {printed} feed lines, {} game hours",
        args.options.hours
    ))
}
