//! Scenarios: one agent, a world, and a timeline of changes (new providers, perceptions,
//! queued orders, level switches, coarse events), run tick by tick through the [`Simulator`]
//! into a trace. Used by `geppetto simulate` and by tests; pure like the rest of the core.

use crate::decision::agent::Agent;
use crate::decision::world::{Context, Provider, World};
use crate::life::action::{DetailLevel, QueuedAction};
use crate::life::simulator::{SimEvent, SimulatedAgent, Simulator, TickRequest};
use crate::rng::derive_seed;
use crate::vocabulary::Symbol;

/// A change applied to the scenario when game time reaches `at_hours`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimelineEntry {
    /// When it applies (the first tick at or after this hour).
    pub at_hours: f64,
    /// Switch the detail level.
    pub level: Option<DetailLevel>,
    /// A coarse event to record (has an effect at simplified level only).
    pub event: Option<Symbol>,
    /// Work to append to the queue.
    pub enqueue: Vec<QueuedAction>,
    /// Event-driven changes: set these considerations (clamped).
    pub set_considerations: Vec<(Symbol, f64)>,
    /// Perception values to set (others keep theirs).
    pub perceptions: Vec<(Symbol, f64)>,
    /// Relationship values to set.
    pub relationships: Vec<(Symbol, f64)>,
    /// Context-aggregate values to set.
    pub context_aggregates: Vec<(Symbol, f64)>,
    /// Replace the active contexts.
    pub contexts: Option<Vec<Context>>,
    /// Providers that appear (replacing one with the same id).
    pub add_providers: Vec<Provider>,
    /// Providers that disappear, by id.
    pub remove_providers: Vec<String>,
}

/// A runnable scenario.
#[derive(Debug)]
pub struct Scenario {
    /// The agent and its queue.
    pub agent: SimulatedAgent,
    /// The world at the start.
    pub world: World,
    /// Game hour of the first tick.
    pub start_hours: f64,
    /// Game hours to run.
    pub hours: f64,
    /// Level of the first tick.
    pub level: DetailLevel,
    /// Changes, in the order they apply.
    pub timeline: Vec<TimelineEntry>,
}

/// What one tick did.
#[derive(Clone, Debug, PartialEq)]
pub struct TickRecord<'a> {
    /// Tick number from 0.
    pub tick: u64,
    /// Game hour of the tick.
    pub now_hours: f64,
    /// Its level.
    pub level: DetailLevel,
    /// The agent after the tick.
    pub agent: &'a SimulatedAgent,
    /// What happened.
    pub events: &'a [SimEvent],
}

fn set_values(target: &mut Vec<(Symbol, f64)>, values: &[(Symbol, f64)]) {
    for &(name, value) in values {
        match target.iter_mut().find(|(existing, _)| *existing == name) {
            Some(slot) => slot.1 = value,
            None => target.push((name, value)),
        }
    }
}

fn apply(
    entry: &TimelineEntry,
    agent: &mut SimulatedAgent,
    world: &mut World,
    level: &mut DetailLevel,
) {
    if let Some(new_level) = entry.level {
        *level = new_level;
    }
    agent.queue.extend(entry.enqueue.iter().cloned());
    let Agent { considerations, .. } = &mut agent.agent;
    for &(name, value) in &entry.set_considerations {
        if let Some(consideration) = considerations.iter_mut().find(|c| c.name == name) {
            consideration.value = value;
            consideration.clamp_value();
        }
    }
    set_values(&mut world.perceptions, &entry.perceptions);
    set_values(&mut world.relationships, &entry.relationships);
    set_values(&mut world.context_aggregates, &entry.context_aggregates);
    if let Some(contexts) = &entry.contexts {
        world.contexts = contexts.clone();
    }
    world
        .providers
        .retain(|p| !entry.remove_providers.contains(&p.id));
    for provider in &entry.add_providers {
        world.providers.retain(|p| p.id != provider.id);
        world.providers.push(provider.clone());
    }
}

impl Scenario {
    /// Runs the scenario, calling `on_tick` after every tick. Tick `n` is seeded with
    /// `derive_seed(seed, n)`. Returns the number of ticks run.
    pub fn run(
        mut self,
        simulator: &Simulator,
        seed: u64,
        mut on_tick: impl FnMut(TickRecord<'_>),
    ) -> u64 {
        let end = self.start_hours + self.hours;
        let mut now = self.start_hours;
        let mut level = self.level;
        let mut next_entry = 0;
        let mut tick = 0u64;
        while now < end {
            let mut event = None;
            while let Some(entry) = self.timeline.get(next_entry).filter(|e| e.at_hours <= now) {
                apply(entry, &mut self.agent, &mut self.world, &mut level);
                event = entry.event.or(event);
                next_entry += 1;
            }
            self.world.now_hours = now;
            let request = TickRequest {
                now_hours: now,
                world: &self.world,
                level,
                simplified_event: event,
            };
            let result = simulator.advance(&mut self.agent, request, derive_seed(seed, tick));
            on_tick(TickRecord {
                tick,
                now_hours: now,
                level,
                agent: &self.agent,
                events: &result.events,
            });
            if result.simulated_hours <= 0.0 {
                break;
            }
            now += result.simulated_hours;
            tick += 1;
        }
        tick
    }
}
