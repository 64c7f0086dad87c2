//! A whole zone's tick: every agent prepared, then queued work started in agent order, the idle
//! agents decided in one batch (contested slots by proximity), preemption considered, and
//! provider occupancy kept in step throughout. One agent's steps are in [`super::prepare`] and
//! [`super::start`].

use super::advance::Simulator;
use super::agent::SimulatedAgent;
use super::occupancy::{ProviderIndex, occupy};
use super::tick::{Prepared, SimEvent, Stage, TickRequest, TickResult};
use crate::decision::agent::Agent;
use crate::decision::batch_index::BatchIndex;
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
        let prepared: Vec<(usize, Prepared)> = agents
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
                (
                    index,
                    self.prepare(agent, &request, zone_agent_seed(seed, agent)),
                )
            })
            .collect();
        let mut providers = ProviderIndex::new(world);
        self.finish_zone(
            agents,
            prepared,
            now_hours,
            world,
            &mut providers,
            seed,
            workers,
        )
        .into_iter()
        .map(|(_, result)| result)
        .collect()
    }

    /// The second half of [`Simulator::advance_zone`], for integrations that run each agent's
    /// [`Simulator::prepare`] themselves (under isolation, say): frees the slots of what ended,
    /// starts queued work in agent order, decides for the idle agents in one batch, and
    /// considers preemption. `prepared` holds the agents prepared this tick by their index in
    /// `agents`, in ascending order; an agent left out of it takes no part in the tick, so a
    /// tick costs what its prepared agents cost, however many others the zone holds. The
    /// results are parallel to `prepared`. `providers` indexes `world`'s providers (kept by
    /// the caller while the provider list does not change).
    #[allow(clippy::too_many_arguments)]
    pub fn finish_zone(
        &self,
        agents: &mut [SimulatedAgent],
        mut prepared: Vec<(usize, Prepared)>,
        now_hours: f64,
        world: &mut World,
        providers: &mut ProviderIndex,
        seed: u64,
        workers: usize,
    ) -> Vec<(usize, TickResult)> {
        debug_assert!(prepared.windows(2).all(|w| w[0].0 < w[1].0));
        prepared.retain(|(index, _)| *index < agents.len());
        // The stages read where they lie, the results moved once, straight into their list: a
        // loop pushing both moved each result through a copy of its own on the stack and read
        // it back before the writes were through, a stall for every NPC.
        let mut stages: Vec<(usize, Stage)> = prepared
            .iter()
            .map(|(index, p)| (*index, p.stage))
            .collect();
        let mut results: Vec<(usize, TickResult)> = prepared
            .into_iter()
            .map(|(index, p)| (index, p.result))
            .collect();
        let apply_occupancy =
            |providers: &ProviderIndex, world: &mut World, events: &[SimEvent]| {
                occupy(world, events, |w, id| providers.find(w, id))
            };
        // Completions and interruptions free their slots before anyone chooses.
        for (_, result) in &results {
            apply_occupancy(providers, world, &result.events);
        }
        for (slot, (agent_index, stage)) in stages.iter_mut().enumerate() {
            let agent = &mut agents[*agent_index];
            if *stage != Stage::Idle || agent.queue.is_empty() {
                continue;
            }
            let request = TickRequest::full(now_hours, world);
            let events = &mut results[slot].1.events;
            let from = events.len();
            self.start_queued(agent, &request, zone_agent_seed(seed, agent), events);
            apply_occupancy(providers, world, &events[from..]);
            if agent.running.is_some() {
                *stage = Stage::Settled;
            }
        }
        // Slots into `stages` / `results` of the agents that choose, in agent order.
        let choosing: Vec<usize> = (0..stages.len())
            .filter(|&slot| stages[slot].1 == Stage::Idle)
            .collect();
        if !choosing.is_empty() {
            let deciders: Vec<&Agent> = choosing
                .iter()
                .map(|&slot| &agents[stages[slot].0].agent)
                .collect();
            let index = providers.batch(world, self.decider.tuning());
            let batch = self.decider.decide_batch_indexed(
                &deciders,
                world,
                index,
                derive_seed(seed, 1),
                workers,
            );
            for (place, &slot) in choosing.iter().enumerate() {
                let Some(granted) = batch.assignments.get(place).copied().flatten() else {
                    continue;
                };
                let agent = &mut agents[stages[slot].0];
                let event = Self::start_granted(agent, (world, providers), granted, now_hours);
                apply_occupancy(providers, world, std::slice::from_ref(&event));
                results[slot].1.events.push(event);
            }
        }
        if stages.iter().any(|(_, stage)| *stage == Stage::Continuing) {
            providers.batch(world, self.decider.tuning());
        }
        let mut scratch = None;
        for (slot, (agent_index, stage)) in stages.iter().enumerate() {
            if *stage != Stage::Continuing {
                continue;
            }
            let agent = &mut agents[*agent_index];
            let request = TickRequest::full(now_hours, world);
            let preemption_seed = derive_seed(zone_agent_seed(seed, agent), 2);
            let events = &mut results[slot].1.events;
            let from = events.len();
            let grid = providers.built_batch().map(BatchIndex::grid);
            self.consider_preemption(
                agent,
                &request,
                preemption_seed,
                (grid, &mut scratch),
                events,
            );
            apply_occupancy(providers, world, &events[from..]);
        }
        results
    }
}
