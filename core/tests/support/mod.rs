//! Small builders shared by the core's behaviour tests: a scene owns a vocabulary and makes
//! agents, providers and actions by name, so each test states only what it is about.
#![allow(dead_code)]

use geppetto_core::{
    AdvertisedAction, Agent, Consideration, Decider, DetailLevel, Position, Provider,
    ResponseCurve, SimEvent, SimulatedAgent, Simulator, Symbol, TickRequest, Tuning, TuningPatch,
    Vocabulary, World,
};

#[derive(Default)]
pub struct Scene {
    pub vocabulary: Vocabulary,
}

impl Scene {
    pub fn sym(&mut self, name: &str) -> Symbol {
        self.vocabulary.intern(name)
    }

    /// An agent at `(x, y)` with `(name, value)` considerations on [0, 100], convex curve.
    pub fn agent(&mut self, id: &str, x: f64, y: f64, considerations: &[(&str, f64)]) -> Agent {
        let mut agent = Agent::new(id, Position::new(x, y));
        for (name, value) in considerations {
            let symbol = self.sym(name);
            agent
                .considerations
                .push(Consideration::new(symbol, *value, 0.0, 100.0));
        }
        agent
    }

    /// An action with `(consideration, delta)` deltas and `tags`.
    pub fn action(&mut self, id: &str, deltas: &[(&str, f64)], tags: &[&str]) -> AdvertisedAction {
        let mut action = AdvertisedAction::new(id);
        action.deltas = deltas
            .iter()
            .map(|(name, delta)| (self.sym(name), *delta))
            .collect();
        action.tags = tags.iter().map(|tag| self.sym(tag)).collect();
        action
    }

    pub fn linear_curves(agent: &mut Agent) {
        for c in &mut agent.considerations {
            c.behaviour_mut().curve = ResponseCurve::Linear;
        }
    }
}

pub fn provider(
    id: &str,
    x: f64,
    y: f64,
    capacity: u32,
    actions: Vec<AdvertisedAction>,
) -> Provider {
    Provider {
        id: id.into(),
        position: Position::new(x, y),
        capacity,
        occupants: 0,
        state: None,
        actions,
    }
}

pub fn world(providers: Vec<Provider>) -> World {
    World {
        now_hours: 8.0,
        contexts: Vec::new(),
        providers,
        ..World::default()
    }
}

pub fn decider() -> Decider {
    Decider::new(Tuning::default())
}

/// How often each action id is selected over `seeds` seeds.
pub fn pick_counts(
    decider: &Decider,
    agent: &Agent,
    world: &World,
    seeds: u64,
) -> std::collections::BTreeMap<String, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for seed in 0..seeds {
        if let Some(selected) = decider.decide(agent, world, seed).selected {
            let action = &world.providers[selected.provider].actions[selected.action];
            *counts.entry(action.id.clone()).or_insert(0) += 1;
        }
    }
    counts
}

pub fn count(counts: &std::collections::BTreeMap<String, usize>, id: &str) -> usize {
    counts.get(id).copied().unwrap_or(0)
}

/// One game minute, in hours: a full-detail tick.
pub const MINUTE: f64 = 1.0 / 60.0;

/// A simulator deciding under `patch`.
pub fn simulator(patch: TuningPatch) -> Simulator {
    Simulator::new(Decider::new(patch.resolve()))
}

/// A tuning that always picks the best candidate (top-k 1).
pub fn argmax() -> TuningPatch {
    TuningPatch {
        selection_top_k: Some(1),
        ..Default::default()
    }
}

/// Runs full ticks from `start` for `ticks` ticks; returns every tick's events.
pub fn run(
    sim: &Simulator,
    agent: &mut SimulatedAgent,
    world: &World,
    start: f64,
    ticks: usize,
) -> Vec<Vec<SimEvent>> {
    (0..ticks)
        .map(|tick| {
            let now = start + tick as f64 * MINUTE;
            let request = TickRequest {
                now_hours: now,
                world,
                level: DetailLevel::Full,
                simplified_event: None,
            };
            sim.advance(agent, request, tick as u64).events
        })
        .collect()
}

/// The action a tick's `events` started, if any.
pub fn started(events: &[SimEvent]) -> Option<&str> {
    events.iter().find_map(|e| match e {
        SimEvent::ActionStarted { action, .. } => Some(action.as_str()),
        _ => None,
    })
}

/// The action `agent` is running, if any.
pub fn running(agent: &SimulatedAgent) -> Option<&str> {
    agent.running.as_ref().map(|r| r.action.id.as_str())
}
