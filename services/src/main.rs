//! The `geppetto` binary: parses the arguments, hands each subcommand to its module of the
//! library's [`cli`] (which does the whole of its work), prints what it returns and maps its
//! error to the exit code.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use geppetto_service::cli::error::CommandError;
use geppetto_service::cli::output::print_line;
use geppetto_service::{cli, history};

/// With the `jemalloc` feature (the default), jemalloc rather than the system allocator: a zone
/// tick makes and drops many small strings and vectors (every intent and event is its own line
/// of JSON), which its thread caches serve at a fraction of glibc's cost, and it hands back what
/// a zone freed while it was built (BENCHMARKS.md, "The allocator").
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// geppetto: NPCs that live — a deterministic utility-AI engine and its service.
#[derive(Parser)]
#[command(name = "geppetto", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Score one agent's options and pick one (JSON request on stdin or --input).
    Decide(cli::decide::DecideArgs),
    /// Decide for many agents and resolve their contention for slots.
    DecideBatch {
        #[command(flatten)]
        common: cli::decide::DecideArgs,
        /// Scoring threads (default: the machine's cores). Never changes the answer.
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Try a reactive utility set: score it, or run it against wobbling inputs.
    #[command(subcommand)]
    Sets(cli::sets::SetsCommand),
    /// Run an affect persona through timed events.
    #[command(subcommand)]
    Affect(cli::affect::AffectCommand),
    /// One NPC's debug-brain view: from a world run offline for some game hours, or live from a
    /// running service (`--admin URL [--follow]`).
    Brain(cli::world::BrainArgs),
    /// Check content files (profiles, sets, personas, archetypes, examples); one
    /// `file:line: problem` line per error, exit code 1 on any.
    Validate {
        /// Files or folders (default: config/).
        paths: Vec<PathBuf>,
    },
    /// Run the embedded village with an internal clock and print a live feed (no Redis needed).
    Demo(cli::demo::DemoArgs),
    /// Run the service: zones from world files, the bus, the clock and the admin API.
    Serve {
        /// The service config (TOML).
        #[arg(long, default_value = "config/geppetto.toml")]
        config: PathBuf,
        /// This instance's name in a cluster (overrides `cluster.instance`).
        #[arg(long)]
        instance: Option<String>,
        /// The admin API's address (overrides `admin.address`; "" turns it off).
        #[arg(long)]
        admin: Option<String>,
        #[command(flatten)]
        log: cli::logging::LogArgs,
    },
    /// Re-run a recorded world log through the core and print the intents (JSONL), or report
    /// the first difference against a recorded intent stream.
    Replay {
        #[command(flatten)]
        window: cli::replay::ReplayArgs,
        /// A recorded intent stream (JSONL, e.g. from `log export --stream intents`).
        #[arg(long)]
        compare: Option<PathBuf>,
        /// Fail when any log entry is not a world message (each is reported either way).
        #[arg(long)]
        strict: bool,
    },
    /// Replay a recorded window twice — as it was, and with parameters changed — and show one
    /// NPC's two timelines side by side with the first divergence marked. Offline: the live
    /// world is never touched.
    Whatif {
        #[command(flatten)]
        window: cli::replay::ReplayArgs,
        /// The NPC whose timeline to show.
        #[arg(long)]
        npc: String,
        /// A change: `tuning.FIELD=V`, `profile.PATH=V` or `need.NAME=V` (repeatable).
        #[arg(long = "set", required = true)]
        changes: Vec<history::whatif::Change>,
        /// Game ticks of the window after its start (default: the whole log).
        #[arg(long)]
        ticks: Option<u64>,
        /// JSON instead of two columns.
        #[arg(long)]
        json: bool,
    },
    /// A zone's recorded streams.
    #[command(subcommand)]
    Log(cli::log::LogCommand),
    /// Instances sharing zones over Redis.
    #[command(subcommand)]
    Cluster(ClusterCommand),
    /// Drive synthetic NPCs with world events and report throughput, latency and tick times.
    Load(geppetto_service::drive::load::LoadOptions),
    /// Run one agent through a scenario file and print a JSONL trace (or an hourly table).
    Simulate(cli::simulate::SimulateArgs),
}

#[derive(Subcommand)]
enum ClusterCommand {
    /// Live instances, and every zone's owner, fencing token, lease age, expiry and lag.
    Status {
        /// The service config (TOML) naming the worlds and the Redis bus.
        #[arg(long, default_value = "config/geppetto.toml")]
        config: PathBuf,
        /// JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

fn run(cli: Cli) -> Result<String, CommandError> {
    match cli.command {
        Command::Decide(args) => cli::decide::run(&args),
        Command::DecideBatch { common, threads } => cli::decide::run_batch(&common, threads),
        Command::Simulate(args) => cli::simulate::run(args),
        Command::Demo(args) => cli::demo::run(args),
        Command::Serve {
            config,
            instance,
            admin,
            log,
        } => {
            log.init()?;
            let overrides = cli::serve::Overrides { instance, admin };
            cli::serve::serve(&config, &overrides)?;
            Ok(String::new())
        }
        Command::Cluster(ClusterCommand::Status { config, json }) => {
            print_line(&cli::cluster::status_command(&config, json)?);
            Ok(String::new())
        }
        Command::Replay {
            window,
            compare,
            strict,
        } => cli::replay::run(window, compare, strict),
        Command::Whatif {
            window,
            npc,
            changes,
            ticks,
            json,
        } => cli::whatif::run(window, &npc, &changes, ticks, json),
        Command::Log(command) => cli::log::run(command),
        Command::Load(options) => cli::load::run(&options),
        Command::Affect(command) => cli::affect::command(command),
        Command::Brain(args) => cli::world::brain(args),
        Command::Validate { paths } => cli::validate::run(&paths, std::path::Path::new("config")),
        Command::Sets(command) => cli::sets::command(command),
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(output) => {
            if !output.is_empty() {
                print_line(&output);
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            // Errors quote their input (a profile name, a path): its control characters are
            // escaped, line by line, so nothing reaches the terminal as a command.
            let message = error.to_string();
            let lines: Vec<_> = message
                .lines()
                .map(|line| cli::logging::escape_controls(line, false))
                .collect();
            eprintln!("error: {}", lines.join("\n"));
            ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(1))
        }
    }
}
