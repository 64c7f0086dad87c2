//! A zone tick whose agents live apart from the world they share — an actor each, say — while
//! a coordinator owns the world. Each agent takes its own steps against the [`ZoneView`] it is
//! handed and reports their events; the coordinator records them ([`ZoneView::record`]) and
//! grants contested slots ([`ZoneView::reconcile`]). Taken in this order, the steps are
//! [`Simulator::finish_zone`]'s, so the events and the world come out identical:
//!
//! 1. every due agent prepares ([`Simulator::prepare`], seeded with [`zone_agent_seed`])
//!    against the view at the tick's start, and every report is recorded;
//! 2. in zone order, each idle agent with a queue starts its next entry
//!    ([`Simulator::start_queued_apart`]), recorded before the next one starts;
//! 3. the agents still idle rank their candidates into a [`Bid`] ([`Simulator::offer`])
//!    against one view made [`ZoneView::for_offers`]; the coordinator reconciles the offers,
//!    in zone order, and each agent applies its grant ([`Simulator::commit`]), recorded;
//! 4. in zone order, each continuing agent considers preemption
//!    ([`Simulator::preempt_apart`]) against a view made [`ZoneView::for_preemption`],
//!    recorded before the next one does.
//!
//! The agents end the tick as they would in the zone.

use std::borrow::Borrow;

use super::advance::Simulator;
use super::agent::SimulatedAgent;
use super::occupancy::{ProviderIndex, occupy};
use super::tick::{SimEvent, TickRequest};
use super::zone::zone_agent_seed;
use crate::decision::agent::Agent;
use crate::decision::contention::{self, Preference, PreferenceLists};
use crate::decision::decider::Scratch;
use crate::decision::spatial::ProviderGrid;
use crate::decision::world::World;
use crate::rng::derive_seed;

/// The providers' spatial index a view carries for the step in hand.
enum Grid {
    /// None built.
    None,
    /// The providers with a free slot (the batch decision's; invalid once a slot frees up).
    Free(ProviderGrid),
    /// Every provider (preemption's; valid while occupancy changes).
    All(ProviderGrid),
}

/// The zone as its agents see it at one step of a tick: the world (providers and their
/// occupancy), the tick's game hour and seed, and the spatial index of the step, built once
/// for every agent. The coordinator owns it between steps and records what the agents report.
pub struct ZoneView {
    world: World,
    now_hours: f64,
    seed: u64,
    index: ProviderIndex,
    grid: Grid,
}

impl ZoneView {
    /// The view of `world` for the tick at `now_hours` seeded with `seed` (the seed
    /// [`Simulator::finish_zone`] would be given).
    pub fn new(world: World, now_hours: f64, seed: u64) -> Self {
        let index = ProviderIndex::new(&world);
        Self {
            world,
            now_hours,
            seed,
            index,
            grid: Grid::None,
        }
    }

    /// The world as it stands.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The tick's game hour.
    pub fn now_hours(&self) -> f64 {
        self.now_hours
    }

    /// The tick's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The world, once the tick is over.
    pub fn into_world(self) -> World {
        self.world
    }

    /// Keeps occupancy in step with what an agent reports (actions started and stopped).
    pub fn record(&mut self, events: &[SimEvent]) {
        let index = &self.index;
        occupy(&mut self.world, events, |world, id| index.find(world, id));
        if matches!(self.grid, Grid::Free(_)) && !events.is_empty() {
            self.grid = Grid::None;
        }
    }

    /// Indexes the providers with a free slot, for the offers of step 3.
    pub fn for_offers(&mut self) {
        self.grid = Grid::Free(ProviderGrid::new(&self.world));
    }

    /// Indexes every provider, for the preemption of step 4.
    pub fn for_preemption(&mut self) {
        if !matches!(self.grid, Grid::All(_)) {
            self.grid = Grid::All(ProviderGrid::of_all(&self.world));
        }
    }

    /// Grants slots among `offers` (in zone order) by proximity, as the zone's batch decision
    /// does: each offer's granted preference, or `None`.
    pub fn reconcile(&self, offers: &[Bid]) -> Vec<Option<Preference>> {
        let keep = offers.iter().map(|o| o.preferences.len()).max();
        let mut lists = PreferenceLists::with_capacity(offers.len(), keep.unwrap_or(0));
        for offer in offers {
            offer.preferences.iter().for_each(|&p| lists.push(p));
            lists.end_agent();
        }
        contention::resolve(&lists, offers, &self.world).0
    }
}

/// An idle agent's part in a zone's batch decision: who it is, as contention orders it, and
/// its retained preferences (its pick first, then fallbacks by descending utility).
#[derive(Clone, Debug, PartialEq)]
pub struct Bid {
    /// The agent's id and position (contention breaks ties by id); nothing else is kept.
    pub agent: Agent,
    /// Its retained preferences.
    pub preferences: Vec<Preference>,
}

impl Borrow<Agent> for Bid {
    fn borrow(&self) -> &Agent {
        &self.agent
    }
}

impl Simulator {
    /// Step 2, agent side: starts the first queue entry that can start (dropping those that
    /// cannot). Returns the events; the agent stays idle when nothing started.
    pub fn start_queued_apart(&self, agent: &mut SimulatedAgent, view: &ZoneView) -> Vec<SimEvent> {
        let mut events = Vec::new();
        let request = TickRequest::full(view.now_hours, &view.world);
        let seed = zone_agent_seed(view.seed, agent);
        self.start_queued(agent, &request, seed, &mut events);
        events
    }

    /// Step 3, agent side: the idle agent's offer, ranked as the zone's batch would rank it.
    pub fn offer(&self, agent: &SimulatedAgent, view: &ZoneView) -> Bid {
        let built;
        let grid = match &view.grid {
            Grid::Free(grid) => grid,
            Grid::None | Grid::All(_) => {
                built = ProviderGrid::new(&view.world);
                &built
            }
        };
        let batch_seed = derive_seed(view.seed, 1);
        let agents = std::slice::from_ref(&agent.agent);
        let lists = self
            .decider
            .preferences(agents, &view.world, (grid, None), batch_seed);
        Bid {
            agent: Agent::new(agent.agent.id.clone(), agent.agent.position),
            preferences: lists.of(0).to_vec(),
        }
    }

    /// Step 3, agent side: starts what the coordinator granted, if anything.
    pub fn commit(
        agent: &mut SimulatedAgent,
        view: &ZoneView,
        granted: Option<Preference>,
    ) -> Option<SimEvent> {
        granted.map(|granted| {
            Self::start_granted(agent, (&view.world, &view.index), granted, view.now_hours)
        })
    }

    /// Step 4, agent side: considers preempting the running action. `events` holds the agent's
    /// events of this tick so far (a change of routine among them matters); the preemption's
    /// are appended.
    pub fn preempt_apart(
        &self,
        agent: &mut SimulatedAgent,
        view: &ZoneView,
        events: &mut Vec<SimEvent>,
    ) {
        let Some(off_routine) = self.may_preempt(agent, events) else {
            return;
        };
        let built;
        let grid = match &view.grid {
            Grid::All(grid) => grid,
            Grid::None | Grid::Free(_) => {
                built = ProviderGrid::of_all(&view.world);
                &built
            }
        };
        let request = TickRequest::full(view.now_hours, &view.world);
        let seed = derive_seed(zone_agent_seed(view.seed, agent), 2);
        let mut scratch = Scratch::default();
        self.preempt_near(
            agent,
            &request,
            seed,
            off_routine,
            (grid, &mut scratch),
            events,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::consideration::{Consideration, Updater};
    use crate::decision::decider::Decider;
    use crate::decision::tuning::TuningPatch;
    use crate::decision::world::{AdvertisedAction, Position, Provider};
    use crate::life::action::QueuedAction;
    use crate::life::simulator::tick::{Prepared, Stage};
    use crate::vocabulary::Vocabulary;

    const MINUTE: f64 = 1.0 / 60.0;

    /// Forty agents getting hungry and tired around a pie stall with one slot, a soup kitchen
    /// and a bed that fill up, and a long, idle pastime that a critical need interrupts; a few
    /// with queued meals, one queued at a provider that does not exist.
    fn village() -> (Vec<SimulatedAgent>, World) {
        let mut names = Vocabulary::default();
        let needs = ["HUNGER", "ENERGY", "FUN"].map(|name| names.intern(name));
        let action = |id: &str, need, delta: f64, minutes: f64| {
            let mut action = AdvertisedAction::new(id);
            action.deltas = thin_vec::thin_vec![(need, delta)];
            action.duration_hours = minutes * MINUTE;
            action
        };
        let provider = |id: &str, x: f64, capacity: u32, actions: Vec<AdvertisedAction>| Provider {
            id: id.into(),
            position: Position::new(x, 0.0),
            capacity,
            occupants: 0,
            state: None,
            actions,
        };
        let world = World {
            now_hours: 12.0,
            providers: vec![
                provider(
                    "pie_stall",
                    0.0,
                    1,
                    vec![action("eat_pie", needs[0], 50.0, 3.0)],
                ),
                provider(
                    "kitchen",
                    5.0,
                    6,
                    vec![action("eat_gruel", needs[0], 20.0, 4.0)],
                ),
                provider("bed", 10.0, 4, vec![action("sleep", needs[1], 60.0, 20.0)]),
                provider("green", 20.0, 40, vec![action("loaf", needs[2], 5.0, 90.0)]),
            ],
            ..World::default()
        };
        let agents = (0..40)
            .map(|i| {
                let mut agent = Agent::new(format!("v{i:02}"), Position::new(i as f64, 1.0));
                let start = [60.0 + (i % 30) as f64, 70.0 + (i % 20) as f64, 10.0];
                for ((need, value), rate) in needs.into_iter().zip(start).zip([30.0, 20.0, 0.0]) {
                    let mut c = Consideration::new(need, value, 0.0, 100.0);
                    c.behaviour_mut().updater = Updater::LinearDecay { rate };
                    c.behaviour_mut().critical_threshold = (rate > 0.0).then_some(25.0);
                    agent.considerations.push(c);
                }
                let mut agent = SimulatedAgent::new(agent);
                if i % 7 == 0 {
                    for provider in ["kitchen", "nowhere"] {
                        agent.queue.push(QueuedAction {
                            provider: provider.into(),
                            action: "eat_gruel".into(),
                            player_queued: i % 2 == 0,
                            from_plan: false,
                            order: None,
                        });
                    }
                }
                agent
            })
            .collect();
        (agents, world)
    }

    /// One tick the way an actor per agent would run it, each step as the module describes.
    fn tick_apart(
        sim: &Simulator,
        agents: &mut [SimulatedAgent],
        world: World,
        now_hours: f64,
        seed: u64,
    ) -> (Vec<Vec<SimEvent>>, World) {
        let mut view = ZoneView::new(world, now_hours, seed);
        let mut stages = Vec::new();
        let mut events = Vec::new();
        for agent in agents.iter_mut() {
            let request = TickRequest::full(now_hours, view.world());
            let prepared = sim.prepare(agent, &request, zone_agent_seed(seed, agent));
            stages.push(prepared.stage);
            events.push(prepared.result.events);
        }
        events.iter().for_each(|e| view.record(e));
        for (index, agent) in agents.iter_mut().enumerate() {
            if stages[index] == Stage::Idle && !agent.queue.is_empty() {
                let started = sim.start_queued_apart(agent, &view);
                view.record(&started);
                events[index].extend(started);
            }
        }
        view.for_offers();
        let idle: Vec<usize> = (0..agents.len())
            .filter(|&i| stages[i] == Stage::Idle && agents[i].running.is_none())
            .collect();
        let offers: Vec<Bid> = idle.iter().map(|&i| sim.offer(&agents[i], &view)).collect();
        let grants = view.reconcile(&offers);
        let commits: Vec<(usize, SimEvent)> = idle
            .iter()
            .zip(grants)
            .filter_map(|(&i, granted)| {
                Some((i, Simulator::commit(&mut agents[i], &view, granted)?))
            })
            .collect();
        for (index, event) in commits {
            view.record(std::slice::from_ref(&event));
            events[index].push(event);
        }
        view.for_preemption();
        for (index, agent) in agents.iter_mut().enumerate() {
            if stages[index] == Stage::Continuing {
                let from = events[index].len();
                sim.preempt_apart(agent, &view, &mut events[index]);
                let new = events[index][from..].to_vec();
                view.record(&new);
            }
        }
        (events, view.into_world())
    }

    #[test]
    fn agents_apart_tick_exactly_as_their_zone_does() {
        let sim = Simulator::new(Decider::new(
            TuningPatch {
                perception_noise: Some(0.1),
                ..Default::default()
            }
            .resolve(),
        ));
        let (mut together, mut world) = village();
        let (mut apart, mut apart_world) = village();
        let (mut starts, mut preempted, mut dropped) = (0, 0, 0);
        for tick in 0..120u64 {
            let now = 12.0 + tick as f64 * MINUTE;
            let prepared: Vec<(usize, Prepared)> = together
                .iter_mut()
                .enumerate()
                .map(|(index, agent)| {
                    let request = TickRequest::full(now, &world);
                    (
                        index,
                        sim.prepare(agent, &request, zone_agent_seed(tick, agent)),
                    )
                })
                .collect();
            let mut providers = ProviderIndex::new(&world);
            let results = sim.finish_zone(
                &mut together,
                prepared,
                now,
                &mut world,
                &mut providers,
                tick,
                1,
            );
            let expected: Vec<Vec<SimEvent>> = results.into_iter().map(|(_, r)| r.events).collect();
            let (events, next) = tick_apart(&sim, &mut apart, apart_world, now, tick);
            apart_world = next;
            assert_eq!(events, expected, "tick {tick}");
            assert_eq!(apart_world, world, "tick {tick}");
            for event in expected.iter().flatten() {
                match event {
                    SimEvent::ActionStarted { .. } => starts += 1,
                    SimEvent::ActionPreempted { .. } => preempted += 1,
                    SimEvent::QueueEntryDropped { .. } => dropped += 1,
                    _ => {}
                }
            }
        }
        assert_eq!(apart, together);
        assert!(starts > 100, "{starts} starts");
        assert!(preempted > 0, "a critical need preempts");
        assert!(dropped > 0, "a queue entry nowhere is dropped");
    }
}
