//! The NPC-actor design: an actor per NPC owning its `SimulatedAgent`, spread over the
//! arbiters, and a coordinator owning the world, which sends each due NPC its tick, reconciles
//! the idle ones' bids and sends each its commit; queued starts and preemption go NPC by NPC
//! in zone order (the apart-zone protocol, `geppetto_core::life::simulator::ZoneView`).

use super::*;

/// Starts an actor per NPC of `work`, spread over `arbiters`, and the coordinator that owns
/// the world; ticks go to the coordinator.
pub(super) fn start(work: Workload, arbiters: &[Arbiter], check: bool) -> Recipient<RunTick> {
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
    type Result = Bid;
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
