//! A whole zone's tick: every agent prepared, then queued work started in agent order, the idle
//! agents decided in one batch (contested slots by proximity), preemption considered, and
//! provider occupancy kept in step throughout. One agent's steps are in [`super::prepare`] and
//! [`super::start`].

use super::advance::Simulator;
use super::agent::SimulatedAgent;
use super::occupancy::{ProviderIndex, occupy};
use super::tick::{Prepared, SimEvent, Stage, TickRequest, TickResult};
use crate::decision::agent::Agent;
use crate::decision::scoring::{Breakdown, Candidate};
use crate::decision::world::World;
use crate::life::action::DetailLevel;
use crate::rng::{derive_seed, stable_hash};
use crate::vocabulary::Symbol;

/// One agent's part of a zone tick: the level the game wants for it and a coarse event.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AgentTick {
    /// Full or simplified.
    pub level: DetailLevel,
    /// A coarse event to record (simplified level only).
    pub simplified_event: Option<Symbol>,
}

/// The seed an agent's own steps draw from in a zone tick seeded with `zone_seed`: it depends
/// on the agent's id, never on its place in the zone.
pub fn zone_agent_seed(zone_seed: u64, agent: &SimulatedAgent) -> u64 {
    derive_seed(zone_seed, stable_hash(&agent.agent.id))
}

impl Simulator {
    /// Advances every agent of a zone by one tick against one shared world, and keeps the
    /// world's provider occupancy in step with what starts and stops. Agents are prepared in
    /// order (expiry, updaters, running actions, reactive sets); queue entries start in agent
    /// order; then every agent that still needs something decides in one batch, so contested
    /// slots go by proximity ([`Decider::decide_batch`]) instead of to whoever asked first;
    /// continuing actions are then considered for preemption. The result never depends on
    /// `workers`.
    pub fn advance_zone(
        &self,
        agents: &mut [SimulatedAgent],
        ticks: &[AgentTick],
        now_hours: f64,
        world: &mut World,
        seed: u64,
        workers: usize,
    ) -> Vec<TickResult> {
        let prepared: Vec<Prepared> = agents
            .iter_mut()
            .enumerate()
            .map(|(index, agent)| {
                let tick = ticks.get(index).copied().unwrap_or_default();
                let request = TickRequest {
                    now_hours,
                    world,
                    level: tick.level,
                    simplified_event: tick.simplified_event,
                };
                self.prepare(agent, &request, zone_agent_seed(seed, agent))
            })
            .collect();
        self.finish_zone(agents, prepared, now_hours, world, seed, workers)
    }

    /// The second half of [`Simulator::advance_zone`], for integrations that run each agent's
    /// [`Simulator::prepare`] themselves (under isolation, say): frees the slots of what ended,
    /// starts queued work in agent order, decides for the idle agents in one batch, and
    /// considers preemption. `prepared` is parallel to `agents`; an agent left out of a tick
    /// should be given a [`Stage::Settled`] entry.
    pub fn finish_zone(
        &self,
        agents: &mut [SimulatedAgent],
        prepared: Vec<Prepared>,
        now_hours: f64,
        world: &mut World,
        seed: u64,
        workers: usize,
    ) -> Vec<TickResult> {
        let (mut stages, mut results): (Vec<Stage>, Vec<TickResult>) =
            prepared.into_iter().map(|p| (p.stage, p.result)).unzip();
        stages.resize(agents.len(), Stage::Settled);
        results.resize_with(agents.len(), TickResult::default);
        let index = ProviderIndex::new(world);
        let apply_occupancy = |world: &mut World, events: &[SimEvent]| {
            occupy(world, events, |w, id| index.find(w, id))
        };
        // Completions and interruptions free their slots before anyone chooses.
        for result in &results {
            apply_occupancy(world, &result.events);
        }
        for (index, agent) in agents.iter_mut().enumerate() {
            if stages[index] != Stage::Idle || agent.queue.is_empty() {
                continue;
            }
            let request = TickRequest::full(now_hours, world);
            let from = results[index].events.len();
            self.start_queued(
                agent,
                &request,
                zone_agent_seed(seed, agent),
                &mut results[index].events,
            );
            apply_occupancy(world, &results[index].events[from..]);
            if agent.running.is_some() {
                stages[index] = Stage::Settled;
            }
        }
        let choosing: Vec<usize> = (0..agents.len())
            .filter(|&i| stages[i] == Stage::Idle)
            .collect();
        if !choosing.is_empty() {
            let deciders: Vec<&Agent> = choosing.iter().map(|&i| &agents[i].agent).collect();
            let batch = self
                .decider
                .decide_batch(&deciders, world, derive_seed(seed, 1), workers);
            for (slot, &index) in choosing.iter().enumerate() {
                let Some(granted) = batch.assignments.get(slot).copied().flatten() else {
                    continue;
                };
                let candidate = Candidate {
                    provider: granted.provider,
                    action: granted.action,
                    utility: granted.utility,
                    distance: granted.distance,
                    breakdown: Breakdown::default(),
                };
                let event = Self::start(&mut agents[index], world, &candidate, now_hours, false);
                apply_occupancy(world, std::slice::from_ref(&event));
                results[index].events.push(event);
            }
        }
        let mut near = None;
        for (index, agent) in agents.iter_mut().enumerate() {
            if stages[index] != Stage::Continuing {
                continue;
            }
            let request = TickRequest::full(now_hours, world);
            let from = results[index].events.len();
            let preemption_seed = derive_seed(zone_agent_seed(seed, agent), 2);
            let events = &mut results[index].events;
            self.consider_preemption(agent, &request, preemption_seed, &mut near, events);
            apply_occupancy(world, &results[index].events[from..]);
        }
        results
    }
}
