//! Zone actor or an actor per NPC: the same synthetic zone (`geppetto load`'s — rooms of
//! twenty NPCs with decaying needs, a work, food and rest provider each) ticked by the two
//! designs on actix, one design a process so their memory is not mixed:
//!
//! ```text
//! cargo bench -p geppetto-service --bench actors -- --design zone --npcs 10000 --ticks 600
//! cargo bench -p geppetto-service --bench actors -- --design npc-actors --npcs 100000 --player-rooms 10 --ticks 600
//! cargo bench -p geppetto-service --bench actors -- --check --npcs 2000 --player-rooms 10 --ticks 240
//! ```
//!
//! - `zone`: one actor owns every NPC; a tick message prepares each due NPC under
//!   `catch_unwind` (Active every tick, Nearby every 10th, Background every 60th, staggered by
//!   id) and resolves the zone with one `Simulator::finish_zone`.
//! - `npc-actors`: each NPC is an actor owning its `SimulatedAgent`, spread over one Arbiter
//!   per core; a coordinator actor owns the world and sends each due NPC a tick; the NPC
//!   prepares itself (under `catch_unwind`); NPCs that are idle rank their candidates into an
//!   offer, the coordinator reconciles the offers and sends each its commit (the granted action
//!   or nothing); queued starts and preemption go NPC by NPC in zone order, since each changes
//!   the occupancy the next one sees (`geppetto_core::life::simulator::ZoneView`).
//!
//! Without `--player-rooms` every room has a player (every NPC Active); with it the players are
//! in that many rooms spread along the zone and the tiers follow as in the service. A tick is
//! one game minute. Printed per run: the tiers, tick p50/p99/max (milliseconds, the round trip
//! of the tick message), messages per tick, and the process's resident memory after building
//! the NPCs, at the end and at its peak. `--check` runs both designs in this process and exits
//! non-zero unless every tick's events are the same.

mod npc_actors;

use std::cmp::Reverse;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use actix::{
    Actor, ActorFutureExt, Addr, Arbiter, AtomicResponse, Context, Handler, Message, MessageResult,
    Recipient, WrapFuture,
};
use geppetto_core::life::simulator::{
    Bid, Prepared, SimEvent, SimulatedAgent, Simulator, Stage, TickRequest, TickResult, ZoneView,
    zone_agent_seed,
};
use geppetto_core::rng::{derive_seed, stable_hash};
use geppetto_core::{Decider, DetailLevel, Preference, ProviderIndex, World};
use geppetto_service::bus::envelope::{WorldEvent, WorldMessage, header};
use geppetto_service::content::profiles::{DEFAULT_PROFILE, ProfileLibrary};
use geppetto_service::content::sets::SetLibrary;
use geppetto_service::content::world_file::{WorldFile, parse_world_json};
use geppetto_service::drive::load::synthetic_world;
use geppetto_service::zone::isolation::IsolationState;
use geppetto_service::zone::tiers::Tier;
use geppetto_service::zone::{TickInputs, Zone, ZoneConfig};

/// What to run, from the command line.
struct Options {
    design: Option<Design>,
    npcs: usize,
    player_rooms: Option<usize>,
    ticks: u64,
}

#[derive(Clone, Copy, PartialEq)]
enum Design {
    Zone,
    NpcActors,
}

impl Design {
    fn name(self) -> &'static str {
        match self {
            Design::Zone => "zone",
            Design::NpcActors => "npc-actors",
        }
    }
}

fn options() -> Result<(Options, bool), String> {
    let mut options = Options {
        design: None,
        npcs: 10_000,
        player_rooms: None,
        ticks: 600,
    };
    let mut check = false;
    let mut args = std::env::args().skip(1);
    let number = |value: Option<String>, flag: &str| {
        value
            .and_then(|v| v.replace('_', "").parse::<u64>().ok())
            .ok_or_else(|| format!("{flag} takes a number"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--design" => {
                options.design = match args.next().as_deref() {
                    Some("zone") => Some(Design::Zone),
                    Some("npc-actors") => Some(Design::NpcActors),
                    _ => return Err("--design takes zone or npc-actors".into()),
                }
            }
            "--npcs" => options.npcs = number(args.next(), "--npcs")? as usize,
            "--player-rooms" => {
                options.player_rooms = Some(number(args.next(), "--player-rooms")? as usize);
            }
            "--ticks" => options.ticks = number(args.next(), "--ticks")?,
            "--check" => check = true,
            // What `cargo bench` passes to every bench binary.
            "--bench" => {}
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if options.design.is_none() && !check {
        return Err("give --design zone|npc-actors, or --check".into());
    }
    Ok((options, check))
}

/// The simulators of a zone's tiers: Active and Background NPCs use the first, Nearby ones the
/// second (whose full tick spans the Nearby step), as the service's zone builds them.
struct Simulators {
    full: Simulator,
    nearby: Simulator,
}

impl Simulators {
    /// The simulator and detail level an NPC of `tier` prepares with.
    fn of(&self, tier: Tier) -> (&Simulator, DetailLevel) {
        match tier {
            Tier::Active => (&self.full, DetailLevel::Full),
            Tier::Nearby => (&self.nearby, DetailLevel::Full),
            Tier::Background => (&self.full, DetailLevel::Simplified),
        }
    }
}

/// The synthetic zone's NPCs, their tiers and world, ready for either design.
struct Workload {
    agents: Vec<SimulatedAgent>,
    tiers: Vec<Tier>,
    /// `stable_hash` of each NPC's id: it staggers the steps and seeds the decisions.
    hashes: Vec<u64>,
    world: World,
    simulators: Arc<Simulators>,
    seed: u64,
    full_tick_hours: f64,
    /// Ticks between two steps of a Nearby and a Background NPC.
    every: (u64, u64),
}

impl Workload {
    /// Builds `geppetto load`'s zone: players first (in `player_rooms` rooms spread along the
    /// zone, or all), then the NPCs, so they start in their tiers.
    fn build(npcs: usize, player_rooms: Option<usize>) -> Result<Self, String> {
        let text = synthetic_world("actors", npcs);
        let file: WorldFile = parse_world_json("synthetic", &text).map_err(|e| e.to_string())?;
        drop(text);
        let profiles = ProfileLibrary::embedded().map_err(|e| e.to_string())?;
        let sets = SetLibrary::embedded().map_err(|e| e.to_string())?;
        let empty = WorldFile {
            npcs: Vec::new(),
            ..file.clone()
        };
        let config = ZoneConfig::default();
        let every = (
            config.tiers.nearby_every_ticks.max(1),
            config.tiers.background_every_ticks.max(1),
        );
        let mut zone = Zone::new(&empty, &profiles, &sets, config, IsolationState::default())
            .map_err(|e| e.to_string())?;
        let rooms: Vec<&str> = file.rooms.iter().map(|r| r.id.as_str()).collect();
        let with_players: Vec<&str> = match player_rooms {
            None => rooms.clone(),
            Some(count) => {
                let count = count.clamp(1, rooms.len().max(1));
                let step = (rooms.len() / count).max(1);
                (0..count)
                    .filter_map(|i| rooms.get(i * step).copied())
                    .collect()
            }
        };
        let clock = || std::time::Duration::ZERO;
        let mut setup = geppetto_service::zone::ZoneOutput::default();
        for (i, room) in with_players.iter().enumerate() {
            let message = WorldMessage {
                header: header(format!("setup{i}"), &file.zone, 0),
                event: WorldEvent::PlayerEntered {
                    player: format!("p{i}"),
                    room: (*room).to_owned(),
                },
            };
            zone.apply(&message, &TickInputs::live(&clock), &mut setup);
        }
        for (i, npc) in file.npcs.iter().enumerate() {
            zone.add_npc(&format!("npcs[{i}]"), npc)
                .map_err(|e| e.to_string())?;
        }
        let profile = profiles
            .get(file.profile.as_deref().unwrap_or(DEFAULT_PROFILE))
            .ok_or("no default profile")?;
        let effects = profile.aggregated_effects_in(&mut zone.vocabulary);
        let weights = profile.weights_in(&mut zone.vocabulary);
        let mut nearby_tuning = zone.decider().tuning().clone();
        nearby_tuning.full_tick_hours *= every.0 as f64;
        let simulators = Simulators {
            full: Simulator::new(zone.decider().clone()).with_aggregated_effects(effects.clone()),
            nearby: Simulator::new(Decider::new(nearby_tuning).with_consideration_weights(weights))
                .with_aggregated_effects(effects),
        };
        let agents = std::mem::take(&mut zone.agents);
        Ok(Self {
            tiers: zone.meta.iter().map(|m| m.tier.tier).collect(),
            hashes: agents.iter().map(|a| stable_hash(&a.agent.id)).collect(),
            agents,
            world: std::mem::take(&mut zone.world),
            simulators: Arc::new(simulators),
            seed: file.seed,
            full_tick_hours: zone.full_tick_hours(),
            every,
        })
    }

    /// NPCs per tier: Active, Nearby, Background.
    fn tier_counts(&self) -> [usize; 3] {
        let count = |tier| self.tiers.iter().filter(|&&t| t == tier).count();
        [
            count(Tier::Active),
            count(Tier::Nearby),
            count(Tier::Background),
        ]
    }
}

/// Who is due at `tick`, in the zone's priority order (Active first, then by index).
fn due(tick: u64, tiers: &[Tier], hashes: &[u64], every: (u64, u64)) -> Vec<usize> {
    let mut due: Vec<(Reverse<Tier>, usize)> = (0..tiers.len())
        .filter(|&i| {
            let every = match tiers[i] {
                Tier::Active => 1,
                Tier::Nearby => every.0,
                Tier::Background => every.1,
            };
            every == 1 || tick.wrapping_add(hashes[i]).is_multiple_of(every)
        })
        .map(|i| (Reverse(tiers[i]), i))
        .collect();
    due.sort_unstable();
    due.into_iter().map(|(_, i)| i).collect()
}

/// Prepares one NPC under `catch_unwind`, as the zone does; a panic leaves it settled.
fn prepare_isolated(
    simulators: &Simulators,
    tier: Tier,
    agent: &mut SimulatedAgent,
    world: &World,
    seed: u64,
) -> Prepared {
    let (simulator, level) = simulators.of(tier);
    let request = TickRequest {
        now_hours: world.now_hours,
        world,
        level,
        simplified_event: None,
    };
    catch_unwind(AssertUnwindSafe(|| {
        simulator.prepare(agent, &request, seed)
    }))
    .unwrap_or(Prepared {
        stage: Stage::Settled,
        result: TickResult::default(),
    })
}

/// What a tick did: NPCs due, events, messages sent, and (with `--check`) a hash of every
/// NPC's events in zone order.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct TickReport {
    due: usize,
    events: usize,
    messages: usize,
    hash: Option<u64>,
}

/// Folds NPC `index`'s events of a tick into `hash`.
fn fold_events(hash: &mut Option<u64>, index: usize, events: &[SimEvent]) {
    if let (Some(h), false) = (hash.as_mut(), events.is_empty()) {
        let text = format!("{index}{events:?}");
        *h = xxhash_rust::xxh3::xxh3_64_with_seed(text.as_bytes(), *h);
    }
}

/// Runs one tick.
struct RunTick;

impl Message for RunTick {
    type Result = TickReport;
}

// --- The zone design: one actor owns every NPC. ---

struct ZoneActor {
    work: Workload,
    /// The world's providers by id (its provider list never changes).
    providers: ProviderIndex,
    tick: u64,
    check: bool,
}

impl Actor for ZoneActor {
    type Context = Context<Self>;
}

impl Handler<RunTick> for ZoneActor {
    type Result = MessageResult<RunTick>;

    fn handle(&mut self, _: RunTick, _: &mut Context<Self>) -> Self::Result {
        self.tick += 1;
        let work = &mut self.work;
        let now_hours = self.tick as f64 * work.full_tick_hours;
        work.world.now_hours = now_hours;
        let zone_seed = derive_seed(work.seed, self.tick);
        let due = due(self.tick, &work.tiers, &work.hashes, work.every);
        let mut prepared: Vec<(usize, Prepared)> = Vec::with_capacity(due.len());
        for &index in &due {
            let seed = derive_seed(zone_seed, work.hashes[index]);
            let agent = &mut work.agents[index];
            let tier = work.tiers[index];
            let result = prepare_isolated(&work.simulators, tier, agent, &work.world, seed);
            prepared.push((index, result));
        }
        prepared.sort_unstable_by_key(|(index, _)| *index);
        let results = work.simulators.full.finish_zone(
            &mut work.agents,
            prepared,
            now_hours,
            &mut work.world,
            &mut self.providers,
            zone_seed,
            1,
        );
        let mut report = TickReport {
            due: due.len(),
            messages: 1,
            hash: self.check.then_some(0),
            ..TickReport::default()
        };
        for (index, result) in &results {
            report.events += result.events.len();
            fold_events(&mut report.hash, *index, &result.events);
        }
        MessageResult(report)
    }
}

// --- Running a design. ---

/// The process's `field` of `/proc/self/status` (`VmRSS`, `VmHWM`), MiB.
fn memory_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * (sorted.len().max(1) - 1) as f64).round() as usize;
    sorted.get(rank).copied().unwrap_or_default()
}

/// Starts `design` over `work` on `arbiters` and runs `ticks` ticks; every tick's report and
/// duration, milliseconds.
async fn run(
    design: Design,
    work: Workload,
    arbiters: &[Arbiter],
    ticks: u64,
    check: bool,
) -> Vec<(TickReport, f64)> {
    let recipient: Recipient<RunTick> = match design {
        Design::Zone => ZoneActor::start_in_arbiter(&arbiters[0].handle(), move |_| ZoneActor {
            providers: ProviderIndex::new(&work.world),
            work,
            tick: 0,
            check,
        })
        .recipient(),
        Design::NpcActors => npc_actors::start(work, arbiters, check),
    };
    let mut out = Vec::with_capacity(ticks as usize);
    for _ in 0..ticks {
        let started = Instant::now();
        let Ok(report) = recipient.send(RunTick).await else {
            break;
        };
        out.push((report, started.elapsed().as_secs_f64() * 1000.0));
    }
    out
}

fn main() -> ExitCode {
    let (options, check) = match options() {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("actors: {message}");
            return ExitCode::from(2);
        }
    };
    let system = actix::System::new();
    let code = system.block_on(async move {
        let arbiters: Vec<Arbiter> = (0..2).map(|_| Arbiter::new()).collect();
        let code = if check {
            check_designs(&options, &arbiters).await
        } else {
            measure(&options, &arbiters).await
        };
        for arbiter in arbiters {
            arbiter.stop();
            let _ = arbiter.join();
        }
        code
    });
    ExitCode::from(code)
}

/// Runs one design and prints its figures.
async fn measure(options: &Options, arbiters: &[Arbiter]) -> u8 {
    let Some(design) = options.design else {
        return 2;
    };
    let work = match Workload::build(options.npcs, options.player_rooms) {
        Ok(work) => work,
        Err(message) => {
            eprintln!("actors: {message}");
            return 1;
        }
    };
    let [active, nearby, background] = work.tier_counts();
    let built_rss = memory_mib("VmRSS");
    let ticks = run(design, work, arbiters, options.ticks, false).await;
    let mut durations: Vec<f64> = ticks.iter().map(|(_, ms)| *ms).collect();
    durations.sort_by(f64::total_cmp);
    let per_tick = |f: fn(&TickReport) -> usize| {
        ticks.iter().map(|(r, _)| f(r)).sum::<usize>() as f64 / ticks.len().max(1) as f64
    };
    println!(
        "design={} npcs={} active={active} nearby={nearby} background={background} ticks={} \
         tick_ms p50={:.3} p99={:.3} max={:.3} due/tick={:.0} events/tick={:.1} \
         messages/tick={:.1} rss_built_mib={built_rss:.0} rss_mib={:.0} hwm_mib={:.0}",
        design.name(),
        options.npcs,
        durations.len(),
        percentile(&durations, 50.0),
        percentile(&durations, 99.0),
        durations.last().copied().unwrap_or_default(),
        per_tick(|r| r.due),
        per_tick(|r| r.events),
        per_tick(|r| r.messages),
        memory_mib("VmRSS"),
        memory_mib("VmHWM"),
    );
    0
}

/// Runs both designs over the same zone and compares every tick's events.
async fn check_designs(options: &Options, arbiters: &[Arbiter]) -> u8 {
    let mut runs = Vec::new();
    for design in [Design::Zone, Design::NpcActors] {
        let work = match Workload::build(options.npcs, options.player_rooms) {
            Ok(work) => work,
            Err(message) => {
                eprintln!("actors: {message}");
                return 1;
            }
        };
        runs.push(run(design, work, arbiters, options.ticks, true).await);
    }
    let (zone, npcs) = (&runs[0], &runs[1]);
    let events: usize = zone.iter().map(|(r, _)| r.events).sum();
    let mismatch = (0..zone.len().max(npcs.len())).find(|&t| {
        let (a, b) = (zone.get(t).map(|x| x.0), npcs.get(t).map(|x| x.0));
        a.map(|r| (r.hash, r.events, r.due)) != b.map(|r| (r.hash, r.events, r.due))
    });
    match mismatch {
        Some(tick) => {
            eprintln!(
                "actors: the designs differ at tick {}: zone {:?}, npc-actors {:?}",
                tick + 1,
                zone.get(tick).map(|x| x.0),
                npcs.get(tick).map(|x| x.0)
            );
            1
        }
        None if events == 0 => {
            eprintln!("actors: nothing happened to compare");
            1
        }
        None => {
            println!(
                "check: {} ticks, {events} events, identical in both designs",
                zone.len()
            );
            0
        }
    }
}
