//! The `geppetto` binary: argument parsing, input/output and exit codes. The work is in the
//! library's `commands`.

use std::io::{BufWriter, Read, StdoutLock, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use geppetto_core::wire::limits::DecideLimits;
use geppetto_service::cli::decide::read_request;
use geppetto_service::cli::error::CommandError;
use geppetto_service::config::load_config;
use geppetto_service::content::archetypes::ArchetypeLibrary;
use geppetto_service::content::profiles::ProfileLibrary;
use geppetto_service::content::sets::SetLibrary;
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
    Decide(DecideArgs),
    /// Decide for many agents and resolve their contention for slots.
    DecideBatch {
        #[command(flatten)]
        common: DecideArgs,
        /// Scoring threads (default: the machine's cores). Never changes the answer.
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Try a reactive utility set: score it, or run it against wobbling inputs.
    #[command(subcommand)]
    Sets(SetsCommand),
    /// Run an affect persona through timed events.
    #[command(subcommand)]
    Affect(AffectCommand),
    /// One NPC's debug-brain view: from a world run offline for some game hours, or live from a
    /// running service (`--admin URL [--follow]`).
    Brain {
        /// The world file or directory, or a shipped world by name (`village`, `harbour`).
        #[arg(long, default_value = "village")]
        world: String,
        /// The NPC.
        #[arg(long)]
        npc: String,
        /// Game hours to run first.
        #[arg(long, default_value_t = 0.0)]
        hours: f64,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Ask a running service instead (its admin API, e.g. `http://127.0.0.1:7878`).
        #[arg(long, conflicts_with = "hours")]
        admin: Option<String>,
        /// With `--admin`: print the view again every second (Ctrl-C stops).
        #[arg(long, requires = "admin")]
        follow: bool,
        /// With `--follow`: stop after this many views.
        #[arg(long, requires = "follow")]
        count: Option<u64>,
    },
    /// Check content files (profiles, sets, personas, archetypes, examples); one
    /// `file:line: problem` line per error, exit code 1 on any.
    Validate {
        /// Files or folders (default: config/).
        paths: Vec<PathBuf>,
    },
    /// Run the embedded village with an internal clock and print a live feed (no Redis needed).
    Demo {
        /// Stop after this many game hours.
        #[arg(long, default_value_t = 24.0)]
        hours: f64,
        /// Game minutes per wall-clock second.
        #[arg(long, default_value_t = cli::demo::DEFAULT_DEMO_SPEED)]
        speed: f64,
        /// Run over Redis Streams at this URL instead of the in-process bus. The village's
        /// streams must be empty there (see --zone, --reset).
        #[arg(long)]
        redis: Option<String>,
        /// The zone the village runs as: over Redis, the streams
        /// `geppetto:{ZONE}:world`, `…:intents`, … it writes and reads.
        #[arg(long, default_value = "village")]
        zone: String,
        /// Over Redis, delete the zone's streams first when they hold entries (without it the
        /// demo refuses to touch a zone in use).
        #[arg(long, requires = "redis")]
        reset: bool,
        /// An OpenAI-compatible endpoint (e.g. `http://127.0.0.1:8080/v1`) that writes flavour
        /// text for witnessed interactions and reads what players say; the key, if any, comes
        /// from `GEPPETTO_LLM_API_KEY`. Without it the demo runs on templates.
        #[arg(long)]
        llm_url: Option<String>,
        /// The model to ask at `--llm-url`.
        #[arg(long, requires = "llm_url")]
        llm_model: Option<String>,
        /// The ceiling of every model call in milliseconds (default: the `[llm]` defaults,
        /// 8000 for a narration a player witnessed, 10000 for the rest).
        #[arg(long, requires = "llm_url", value_parser = clap::value_parser!(u64).range(1..))]
        llm_timeout_ms: Option<u64>,
        /// Keep the village in this redb file (world log and snapshots): the next run resumes
        /// where this one stopped, and `geppetto replay --redb FILE` replays it.
        #[arg(long)]
        data: Option<PathBuf>,
        /// Serve the admin API and the web inspector on this address while the demo runs
        /// (e.g. `127.0.0.1:7878`, then open http://127.0.0.1:7878/inspector).
        #[arg(long)]
        admin: Option<String>,
        #[command(flatten)]
        log: LogArgs,
    },
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
        log: LogArgs,
    },
    /// Re-run a recorded world log through the core and print the intents (JSONL), or report
    /// the first difference against a recorded intent stream.
    Replay {
        #[command(flatten)]
        window: ReplayArgs,
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
        window: ReplayArgs,
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
    Log(LogCommand),
    /// Instances sharing zones over Redis.
    #[command(subcommand)]
    Cluster(ClusterCommand),
    /// Drive synthetic NPCs with world events and report throughput, latency and tick times.
    Load {
        /// Zones run in one process, each of `--npcs` NPCs (the clock ticks every zone; social
        /// events and said lines are spread over them).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
        zones: u64,
        /// NPCs in each zone (20 to a room).
        #[arg(long, default_value_t = 200)]
        npcs: usize,
        /// Rooms with a player in each zone, spread along it (default: every room, so every
        /// NPC is Active); fewer leaves the rest Nearby or Background, as in a live world.
        #[arg(long)]
        player_rooms: Option<usize>,
        /// World events per second besides the clock.
        #[arg(long, default_value_t = 1000.0)]
        events_per_sec: f64,
        /// Wall-clock seconds to run.
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        /// Run over Redis Streams at this URL.
        #[arg(long)]
        redis: Option<String>,
        /// Player lines (`say` events, perceived by the LLM seams) per second.
        #[arg(long, default_value_t = 0.0)]
        says_per_sec: f64,
        /// An OpenAI-compatible endpoint for the seams (default: templates only).
        #[arg(long)]
        llm_url: Option<String>,
    },
    /// Run one agent through a scenario file and print a JSONL trace (or an hourly table).
    Simulate {
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
        #[arg(long, conflicts_with_all = ["seed", "scenario"], value_parser = history::scorecard::parse_seeds)]
        seeds: Option<history::scorecard::Seeds>,
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
    },
}

/// What a replay reads and where it starts.
#[derive(Args)]
struct ReplayArgs {
    #[command(flatten)]
    source: LogSourceArgs,
    /// The service config the log was recorded under: its zone settings (tick, tiers) and,
    /// unless `--world` says otherwise, its first world.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The world file (`village` for the embedded one; default: the config's first world,
    /// else `village`).
    #[arg(long)]
    world: Option<String>,
    /// The zone (default: the world file's).
    #[arg(long)]
    zone: Option<String>,
    /// Start from a stored snapshot (`latest` or a sequence) and replay only what follows.
    #[arg(long)]
    from_snapshot: Option<history::replay::SnapshotPick>,
    /// The redb file holding the snapshots (default: the Redis or redb log's own store).
    #[arg(long)]
    store: Option<PathBuf>,
    /// Decision worker threads (never changes the answer).
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

impl ReplayArgs {
    fn options(
        self,
        compare: Option<PathBuf>,
    ) -> Result<history::replay::ReplayOptions, CommandError> {
        let service = match &self.config {
            Some(path) => Some(
                geppetto_service::config::load_config(path)
                    .map_err(|e| CommandError::BadInput(e.to_string()))?,
            ),
            None => None,
        };
        let world = self
            .world
            .or_else(|| {
                service
                    .as_ref()
                    .and_then(|c| c.worlds.first())
                    .map(|w| w.display().to_string())
            })
            .unwrap_or_else(|| "village".into());
        Ok(history::replay::ReplayOptions {
            source: self.source.source(),
            limits: service
                .as_ref()
                .map(|c| c.consumer.limits.clone())
                .unwrap_or_default(),
            zone_config: service.map(|c| c.zone_config()).unwrap_or_default(),
            world,
            zone: self.zone,
            from_snapshot: self.from_snapshot,
            store: self.store,
            compare,
            threads: self.threads,
        })
    }
}

/// Where a recorded log is read from (exactly one).
#[derive(Args)]
#[group(required = true, multiple = false)]
struct LogSourceArgs {
    /// A JSONL log (as `log export` writes, or one world envelope per line).
    #[arg(long)]
    log: Option<PathBuf>,
    /// A Redis server holding the zone's streams (e.g. `redis://127.0.0.1:6379/`).
    #[arg(long)]
    redis: Option<String>,
    /// The embedded redb file of a `serve` or `demo` run.
    #[arg(long)]
    redb: Option<PathBuf>,
}

impl LogSourceArgs {
    fn source(self) -> history::log_source::LogSource {
        use history::log_source::LogSource;
        match (self.log, self.redis, self.redb) {
            (Some(file), _, _) => LogSource::File(file),
            (_, Some(url), _) => LogSource::Redis(url),
            (_, _, Some(file)) => LogSource::Redb(file),
            // clap requires one of the three.
            (None, None, None) => LogSource::File(PathBuf::from("-")),
        }
    }
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

#[derive(Subcommand)]
enum LogCommand {
    /// Write a zone's stream as JSONL: each line the envelope with its `log_id`.
    Export {
        #[command(flatten)]
        source: LogSourceArgs,
        /// The zone.
        #[arg(long)]
        zone: String,
        /// The stream: world, intents, story, narrative, npc_events or deadletter.
        #[arg(long, default_value = "world")]
        stream: String,
    },
}

/// Options of the commands that run zones.
#[derive(Args)]
struct LogArgs {
    /// Log format on stderr: `text` or `json`.
    #[arg(long, default_value = "text")]
    log_format: String,
}

#[derive(Subcommand)]
enum AffectCommand {
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

#[derive(Subcommand)]
enum SetsCommand {
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
        #[arg(long, default_value_t = cli::sets::DEFAULT_FRAME_HZ)]
        fps: f64,
        /// Turn inertia off (no commitment bonus, no cooldowns, re-score every frame).
        #[arg(long)]
        no_inertia: bool,
        /// Seed of the jitter and the selector.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
}

#[derive(Args)]
struct DecideArgs {
    /// Read the request from this file instead of stdin.
    #[arg(long, short)]
    input: Option<PathBuf>,
    /// Indent the answer for humans.
    #[arg(long)]
    pretty: bool,
    /// Also load profiles from this directory (same name overrides the embedded one).
    #[arg(long)]
    profiles_dir: Option<PathBuf>,
    /// Take the request limits from this service config's `[decide]` section (default: the
    /// documented defaults).
    #[arg(long)]
    config: Option<PathBuf>,
}

impl DecideArgs {
    fn limits(&self) -> Result<DecideLimits, CommandError> {
        match &self.config {
            Some(path) => load_config(path)
                .map(|config| config.decide)
                .map_err(|e| CommandError::BadInput(e.to_string())),
            None => Ok(DecideLimits::default()),
        }
    }

    /// The request, read within `limits`.
    fn request(&self, limits: &DecideLimits) -> Result<String, CommandError> {
        match &self.input {
            Some(path) => {
                let file = std::fs::File::open(path).map_err(|e| {
                    CommandError::Environment(format!("{}: cannot read: {e}", path.display()))
                })?;
                let length = file.metadata().ok().map(|m| m.len());
                read_request(file, &path.display().to_string(), length, limits)
            }
            None => read_request(std::io::stdin().lock(), "stdin", None, limits),
        }
    }
}

fn read_input(path: Option<&PathBuf>) -> Result<String, CommandError> {
    match path {
        Some(path) => std::fs::read_to_string(path).map_err(|e| {
            CommandError::Environment(format!("{}: cannot read: {e}", path.display()))
        }),
        None => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| CommandError::Environment(format!("stdin: cannot read: {e}")))?;
            Ok(text)
        }
    }
}

fn profiles(dir: Option<&PathBuf>) -> Result<ProfileLibrary, CommandError> {
    let library = match dir {
        Some(dir) => ProfileLibrary::embedded_and_dir(dir),
        None => ProfileLibrary::embedded(),
    };
    library.map_err(|e| CommandError::BadInput(e.to_string()))
}

fn sets() -> Result<SetLibrary, CommandError> {
    SetLibrary::embedded().map_err(|e| CommandError::BadInput(e.to_string()))
}

fn run(cli: Cli) -> Result<String, CommandError> {
    match cli.command {
        Command::Decide(args) => {
            let library = profiles(args.profiles_dir.as_ref())?;
            let limits = args.limits()?;
            let input = args.request(&limits)?;
            let answered = cli::decide::decide(input, &library, &limits)?;
            write_stdout(|out| answered.write(out, args.pretty));
            Ok(String::new())
        }
        Command::DecideBatch { common, threads } => {
            let library = profiles(common.profiles_dir.as_ref())?;
            let workers = threads.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
            });
            let limits = common.limits()?;
            let input = common.request(&limits)?;
            let answered = cli::decide::decide_batch(input, &library, &limits, workers)?;
            write_stdout(|out| answered.write(out, common.pretty));
            Ok(String::new())
        }
        Command::Simulate {
            scenario,
            world,
            days,
            hours,
            seed,
            seeds,
            json,
            report,
            config,
            summary,
            profiles_dir,
        } => {
            if let Some(world) = world {
                let service = config
                    .as_ref()
                    .map(|path| {
                        load_config(path).map_err(|e| CommandError::BadInput(e.to_string()))
                    })
                    .transpose()?;
                // `--profiles-dir` first, else the config's; archetypes from the config's.
                let profiles_dir =
                    profiles_dir.or_else(|| service.as_ref().and_then(|s| s.profiles_dir.clone()));
                let archetypes = service
                    .as_ref()
                    .and_then(|s| s.archetypes_dir.as_ref())
                    .map(|dir| {
                        ArchetypeLibrary::embedded_and_dir(dir)
                            .map_err(|e| CommandError::BadInput(e.to_string()))
                    })
                    .transpose()?;
                let run = cli::world::WorldRun {
                    hours: hours.unwrap_or(days * 24.0),
                    seeds: seeds.map_or_else(|| seed.into_iter().collect(), |s| s.0),
                    profiles: profiles(profiles_dir.as_ref())?,
                    archetypes,
                    json,
                    report,
                    config: service.map_or_else(geppetto_service::zone::ZoneConfig::default, |s| {
                        s.zone_config()
                    }),
                };
                return cli::world::simulate_world(&world, &run);
            }
            let scenario = scenario
                .ok_or_else(|| CommandError::BadInput("--scenario or --world is needed".into()))?;
            let library = profiles(profiles_dir.as_ref())?;
            let text = read_input(Some(&scenario))?;
            let options = cli::simulate::SimulateOptions {
                hours,
                seed,
                summary,
            };
            cli::simulate::simulate(&scenario, &text, &library, &sets()?, &options)
        }
        Command::Demo {
            hours,
            speed,
            redis,
            zone,
            reset,
            llm_url,
            llm_model,
            llm_timeout_ms,
            data,
            admin,
            log,
        } => {
            cli::logging::init(&log.log_format)?;
            let options = cli::demo::DemoOptions {
                hours,
                speed,
                redis,
                zone,
                reset,
                llm_url,
                llm_model,
                llm_timeout_ms,
                data,
                admin,
            };
            let printed = cli::demo::run_demo(&options, |line| print_line(&line))?;
            Ok(format!("-- {printed} feed lines, {hours} game hours"))
        }
        Command::Serve {
            config,
            instance,
            admin,
            log,
        } => {
            cli::logging::init(&log.log_format)?;
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
        } => {
            let options = window.options(compare)?;
            let summary = history::replay::replay(&options, strict, print_line)?;
            if let Some(checked) = &summary.snapshot_check {
                eprintln!("-- {checked}");
            }
            for skipped in &summary.skipped {
                eprintln!("-- skipped {skipped}");
            }
            eprintln!(
                "-- {} log entries replayed, {} skipped, {} intents",
                summary.replayed,
                summary.skipped.len(),
                summary.intents
            );
            match summary.difference {
                Some(difference) => Err(CommandError::Different(difference)),
                None if options.compare.is_some() => Ok(format!(
                    "identical: {} intents match the recording",
                    summary.intents
                )),
                None => Ok(String::new()),
            }
        }
        Command::Whatif {
            window,
            npc,
            changes,
            ticks,
            json,
        } => {
            let options = window.options(None)?;
            let report = history::whatif::what_if(&options, &npc, &changes, ticks)?;
            if json {
                serde_json::to_string_pretty(&report)
                    .map_err(|e| CommandError::Environment(e.to_string()))
            } else {
                Ok(history::whatif::report_text(&report))
            }
        }
        Command::Log(LogCommand::Export {
            source,
            zone,
            stream,
        }) => {
            let stream = geppetto_service::bus::StreamKind::from_wire(&stream).ok_or_else(|| {
                    CommandError::BadInput(format!(
                        "--stream `{stream}`: one of world, intents, story, narrative, npc_events, deadletter"
                    ))
                })?;
            let written = history::log_source::export(&source.source(), &zone, stream, print_line)?;
            eprintln!("-- {written} entries");
            Ok(String::new())
        }
        Command::Load {
            zones,
            npcs,
            player_rooms,
            events_per_sec,
            seconds,
            redis,
            says_per_sec,
            llm_url,
        } => {
            let options = cli::load::LoadOptions {
                zones: usize::try_from(zones).unwrap_or(usize::MAX),
                npcs,
                player_rooms,
                events_per_sec,
                seconds,
                redis,
                says_per_sec,
                llm_url,
            };
            cli::load::run_load(&options)
        }
        Command::Affect(AffectCommand::Run {
            persona,
            events,
            time_scale,
            resolution,
            summary,
        }) => {
            let text = read_input(Some(&events))?;
            let options = cli::affect::AffectRunOptions {
                time_scale,
                resolution,
                summary_only: summary,
            };
            let (trace, report) = cli::affect::run(&persona, &events, &text, &options)?;
            if summary {
                Ok(report)
            } else {
                eprintln!("{report}");
                Ok(trace)
            }
        }
        Command::Brain {
            npc,
            json,
            admin: Some(admin),
            follow,
            count,
            ..
        } => {
            let follow = follow.then_some((std::time::Duration::from_secs(1), count));
            cli::world::brain_live(&admin, &npc, json, follow, print_line)?;
            Ok(String::new())
        }
        Command::Brain {
            world,
            npc,
            hours,
            json,
            admin: None,
            ..
        } => cli::world::brain_view(&world, &npc, hours, json),
        Command::Validate { paths } => cli::validate::run(&paths, std::path::Path::new("config")),
        Command::Sets(SetsCommand::Eval { set, inputs, seed }) => {
            cli::sets::eval(&sets()?, &set, inputs.as_deref(), seed)
        }
        Command::Sets(SetsCommand::Simulate {
            set,
            seconds,
            wobble,
            inputs,
            fps,
            no_inertia,
            seed,
        }) => {
            let options = cli::sets::WobbleOptions {
                seconds,
                wobble,
                frame_hz: fps,
                no_inertia,
                seed,
            };
            cli::sets::simulate(&sets()?, &set, inputs.as_deref(), &options)
        }
    }
}

/// Writes one line to stdout; a reader that went away (`| head`) ends the program quietly
/// instead of a panic.
/// Writes to stdout through a buffer. A closed pipe (`| head`) ends the process quietly; any
/// other failure ends it with exit code 1.
fn write_stdout(write: impl FnOnce(&mut BufWriter<StdoutLock<'static>>) -> std::io::Result<()>) {
    let mut out = BufWriter::new(std::io::stdout().lock());
    if let Err(error) = write(&mut out).and_then(|()| out.flush()) {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {error}");
        std::process::exit(1);
    }
}

fn print_line(line: &str) {
    write_stdout(|out| writeln!(out, "{line}"));
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
