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
    Offer, Prepared, SimEvent, SimulatedAgent, Simulator, Stage, TickRequest, TickResult, ZoneView,
    zone_agent_seed,
};
use geppetto_core::rng::{derive_seed, stable_hash};
use geppetto_core::{Decider, DetailLevel, Preference, ProviderIndex, World};
use geppetto_service::bus::envelope::{WorldEvent, WorldMessage, header};
use geppetto_service::cli::load::synthetic_world;
use geppetto_service::content::profiles::{DEFAULT_PROFILE, ProfileLibrary};
use geppetto_service::content::sets::SetLibrary;
use geppetto_service::content::world_file::{WorldFile, parse_world_json};
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
            &self.providers,
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

// --- The NPC-actor design: an actor per NPC and a coordinator owning the world. ---

struct NpcActor {
    agent: SimulatedAgent,
    tier: Tier,
    simulators: Arc<Simulators>,
    /// This tick's events so far while its running action may be preempted (a change of
    /// routine among them matters).
    continuing: Vec<SimEvent>,
}

impl Actor for NpcActor {
    type Context = Context<Self>;
}

/// Prepare for the tick of this view; answers the stage, whether something is queued, and the
/// events.
struct NpcTick(Arc<ZoneView>);

impl Message for NpcTick {
    type Result = (Stage, bool, Vec<SimEvent>);
}

impl Handler<NpcTick> for NpcActor {
    type Result = MessageResult<NpcTick>;

    fn handle(&mut self, NpcTick(view): NpcTick, _: &mut Context<Self>) -> Self::Result {
        let seed = zone_agent_seed(view.seed(), &self.agent);
        let prepared = prepare_isolated(
            &self.simulators,
            self.tier,
            &mut self.agent,
            view.world(),
            seed,
        );
        let events = prepared.result.events;
        self.continuing.clear();
        if prepared.stage == Stage::Continuing {
            self.continuing.clone_from(&events);
        }
        MessageResult((prepared.stage, !self.agent.queue.is_empty(), events))
    }
}

/// Start the next queue entry; answers whether the NPC is still idle, and the events.
struct StartQueued(Arc<ZoneView>);

impl Message for StartQueued {
    type Result = (bool, Vec<SimEvent>);
}

impl Handler<StartQueued> for NpcActor {
    type Result = MessageResult<StartQueued>;

    fn handle(&mut self, StartQueued(view): StartQueued, _: &mut Context<Self>) -> Self::Result {
        let events = self
            .simulators
            .full
            .start_queued_apart(&mut self.agent, &view);
        MessageResult((self.agent.running.is_none(), events))
    }
}

/// Rank the candidates into an offer.
struct MakeOffer(Arc<ZoneView>);

impl Message for MakeOffer {
    type Result = Offer;
}

impl Handler<MakeOffer> for NpcActor {
    type Result = MessageResult<MakeOffer>;

    fn handle(&mut self, MakeOffer(view): MakeOffer, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.simulators.full.offer(&self.agent, &view))
    }
}

/// Start the granted action, if any.
struct Commit(Arc<ZoneView>, Option<Preference>);

impl Message for Commit {
    type Result = Option<SimEvent>;
}

impl Handler<Commit> for NpcActor {
    type Result = MessageResult<Commit>;

    fn handle(&mut self, Commit(view, granted): Commit, _: &mut Context<Self>) -> Self::Result {
        MessageResult(Simulator::commit(&mut self.agent, &view, granted))
    }
}

/// Consider preempting the running action; answers the events.
struct Preempt(Arc<ZoneView>);

impl Message for Preempt {
    type Result = Vec<SimEvent>;
}

impl Handler<Preempt> for NpcActor {
    type Result = MessageResult<Preempt>;

    fn handle(&mut self, Preempt(view): Preempt, _: &mut Context<Self>) -> Self::Result {
        let from = self.continuing.len();
        let simulator = &self.simulators.full;
        simulator.preempt_apart(&mut self.agent, &view, &mut self.continuing);
        MessageResult(self.continuing.split_off(from))
    }
}

/// What the coordinator owns: the NPCs' addresses, tiers and id hashes, and the world.
#[derive(Default)]
struct Coordinated {
    npcs: Vec<Addr<NpcActor>>,
    tiers: Vec<Tier>,
    hashes: Vec<u64>,
    world: World,
    seed: u64,
    full_tick_hours: f64,
    every: (u64, u64),
    tick: u64,
    check: bool,
    /// Times a view was still shared when the coordinator took it back (and was copied).
    copied_views: usize,
}

/// The view back from the NPCs it was lent to (copied if one still holds it).
fn take_back(view: Arc<ZoneView>, copied: &mut usize) -> ZoneView {
    Arc::try_unwrap(view).unwrap_or_else(|shared| {
        *copied += 1;
        ZoneView::new(shared.world().clone(), shared.now_hours(), shared.seed())
    })
}

/// The coordinator: sends the ticks, records what the NPCs report, reconciles their offers.
struct Coordinator {
    zone: Coordinated,
}

impl Actor for Coordinator {
    type Context = Context<Self>;
}

impl Handler<RunTick> for Coordinator {
    type Result = AtomicResponse<Self, TickReport>;

    fn handle(&mut self, _: RunTick, _: &mut Context<Self>) -> Self::Result {
        let mut zone = std::mem::take(&mut self.zone);
        AtomicResponse::new(Box::pin(
            async move {
                let report = zone.tick().await;
                (zone, report)
            }
            .into_actor(self)
            .map(|(zone, report), act, _| {
                act.zone = zone;
                report
            }),
        ))
    }
}

/// One NPC's part of a tick as the coordinator sees it.
struct Part {
    index: usize,
    stage: Stage,
    events: Vec<SimEvent>,
}

impl Coordinated {
    async fn tick(&mut self) -> TickReport {
        self.tick += 1;
        let now_hours = self.tick as f64 * self.full_tick_hours;
        let mut world = std::mem::take(&mut self.world);
        world.now_hours = now_hours;
        let zone_seed = derive_seed(self.seed, self.tick);
        let mut view = Arc::new(ZoneView::new(world, now_hours, zone_seed));
        let due = due(self.tick, &self.tiers, &self.hashes, self.every);
        let mut messages = 0;
        // 1. Every due NPC prepares itself; the replies are recorded in zone order.
        let sent: Vec<_> = due
            .iter()
            .map(|&i| self.npcs[i].send(NpcTick(Arc::clone(&view))))
            .collect();
        messages += sent.len();
        let mut parts = Vec::with_capacity(due.len());
        let mut queued = Vec::new();
        for (&index, reply) in due.iter().zip(sent) {
            let Ok((stage, has_queue, events)) = reply.await else {
                continue;
            };
            if stage == Stage::Idle && has_queue {
                queued.push(index);
            }
            parts.push(Part {
                index,
                stage,
                events,
            });
        }
        parts.sort_unstable_by_key(|p| p.index);
        queued.sort_unstable();
        let mut zone_view = take_back(view, &mut self.copied_views);
        parts.iter().for_each(|p| zone_view.record(&p.events));
        let find = |parts: &[Part], index: usize| parts.binary_search_by_key(&index, |p| p.index);
        // 2. Queued starts, one NPC after the other.
        for index in queued {
            let shared = Arc::new(zone_view);
            let reply = self.npcs[index]
                .send(StartQueued(Arc::clone(&shared)))
                .await;
            messages += 1;
            zone_view = take_back(shared, &mut self.copied_views);
            let (Ok((still_idle, events)), Ok(at)) = (reply, find(&parts, index)) else {
                continue;
            };
            zone_view.record(&events);
            parts[at].events.extend(events);
            if !still_idle {
                parts[at].stage = Stage::Settled;
            }
        }
        // 3. The idle NPCs offer, the coordinator reconciles, each NPC gets its commit.
        zone_view.for_offers();
        view = Arc::new(zone_view);
        let idle: Vec<usize> = (0..parts.len())
            .filter(|&at| parts[at].stage == Stage::Idle)
            .collect();
        let sent: Vec<_> = idle
            .iter()
            .map(|&at| self.npcs[parts[at].index].send(MakeOffer(Arc::clone(&view))))
            .collect();
        messages += sent.len();
        let mut offers = Vec::with_capacity(idle.len());
        let mut offering = Vec::with_capacity(idle.len());
        for (&at, reply) in idle.iter().zip(sent) {
            if let Ok(offer) = reply.await {
                offers.push(offer);
                offering.push(at);
            }
        }
        let grants = view.reconcile(&offers);
        drop(offers);
        let sent: Vec<_> = offering
            .iter()
            .zip(grants)
            .map(|(&at, granted)| {
                let commit = Commit(Arc::clone(&view), granted);
                (at, self.npcs[parts[at].index].send(commit))
            })
            .collect();
        messages += sent.len();
        let mut started = Vec::new();
        for (at, reply) in sent {
            if let Ok(Some(event)) = reply.await {
                started.push((at, event));
            }
        }
        let mut zone_view = take_back(view, &mut self.copied_views);
        for (at, event) in started {
            zone_view.record(std::slice::from_ref(&event));
            parts[at].events.push(event);
        }
        // 4. Preemption, one NPC after the other.
        let continuing: Vec<usize> = (0..parts.len())
            .filter(|&at| parts[at].stage == Stage::Continuing)
            .collect();
        if !continuing.is_empty() {
            zone_view.for_preemption();
        }
        for at in continuing {
            let shared = Arc::new(zone_view);
            let reply = self.npcs[parts[at].index]
                .send(Preempt(Arc::clone(&shared)))
                .await;
            messages += 1;
            zone_view = take_back(shared, &mut self.copied_views);
            if let Ok(events) = reply {
                zone_view.record(&events);
                parts[at].events.extend(events);
            }
        }
        self.world = zone_view.into_world();
        let mut report = TickReport {
            due: parts.len(),
            messages,
            hash: self.check.then_some(0),
            ..TickReport::default()
        };
        for part in &parts {
            report.events += part.events.len();
            fold_events(&mut report.hash, part.index, &part.events);
        }
        report
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
        Design::NpcActors => {
            let Workload {
                agents,
                tiers,
                hashes,
                world,
                simulators,
                seed,
                full_tick_hours,
                every,
            } = work;
            let npcs = agents
                .into_iter()
                .zip(&tiers)
                .enumerate()
                .map(|(i, (agent, &tier))| {
                    let simulators = Arc::clone(&simulators);
                    let arbiter = arbiters[i % arbiters.len()].handle();
                    NpcActor::start_in_arbiter(&arbiter, move |_| NpcActor {
                        agent,
                        tier,
                        simulators,
                        continuing: Vec::new(),
                    })
                })
                .collect();
            let zone = Coordinated {
                npcs,
                tiers,
                hashes,
                world,
                seed,
                full_tick_hours,
                every,
                check,
                ..Coordinated::default()
            };
            Coordinator { zone }.start().recipient()
        }
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
