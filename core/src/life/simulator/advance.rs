//! The [`Simulator`]: its configuration and one agent's [`Simulator::advance`] (prepare, then
//! start something or consider preemption). The steps themselves are in [`super::prepare`] and
//! [`super::start`]; a whole zone's tick is in [`super::zone`].

use super::agent::SimulatedAgent;
use super::tick::{Prepared, Stage, TickRequest, TickResult};
use super::values::{ValueSource, WorldMaps};
use crate::decision::decider::Decider;
use crate::decision::tuning::AggregatedEffects;
use crate::life::planner::PlannerConfig;
use crate::rng::derive_seed;

/// Advances agents through time with a decider's tuning.
pub struct Simulator {
    pub(super) decider: Decider,
    pub(super) effects: AggregatedEffects,
    pub(super) values: Box<dyn ValueSource>,
    /// Whether completed actions pay their costs and earn their yields: a flag the owner may
    /// flip between ticks (a zone's completion mode is itself a logged event).
    pub(super) settle_resources: std::sync::atomic::AtomicBool,
    pub(super) planner: PlannerConfig,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("decider", &self.decider)
            .field("effects", &self.effects)
            .finish()
    }
}

impl Simulator {
    /// A simulator deciding with `decider`, reading values from the world's maps, with no
    /// aggregated-event effects.
    pub fn new(decider: Decider) -> Self {
        Self {
            decider,
            effects: Vec::new(),
            values: Box::new(WorldMaps),
            settle_resources: std::sync::atomic::AtomicBool::new(false),
            planner: PlannerConfig::default(),
        }
    }

    /// Debits an action's costs and credits its yields when it completes. Off by default: a
    /// game debits costs itself; turn it on where geppetto is the whole world
    /// (scenarios, the demo). Symbolic facts always follow a completed action.
    pub fn settling_resources(self, settle: bool) -> Self {
        self.settle(settle);
        self
    }

    /// Turns settling on or off from now on (see [`Self::settling_resources`]); between ticks.
    pub fn settle(&self, settle: bool) {
        self.settle_resources
            .store(settle, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether completed actions settle their costs and yields.
    pub fn settles(&self) -> bool {
        self.settle_resources
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sets the profile's aggregated-event effects table.
    pub fn with_aggregated_effects(mut self, effects: AggregatedEffects) -> Self {
        self.effects = effects;
        self
    }

    /// The decider it selects with.
    pub fn decider(&self) -> &Decider {
        &self.decider
    }

    /// Advances `agent` by one tick. See the module documentation for the order of steps.
    pub fn advance(
        &self,
        agent: &mut SimulatedAgent,
        request: TickRequest<'_>,
        seed: u64,
    ) -> TickResult {
        let Prepared { stage, mut result } = self.prepare(agent, &request, seed);
        match stage {
            Stage::Idle => self.start_next(agent, &request, seed, &mut result.events),
            Stage::Continuing => {
                let seed = derive_seed(seed, 2);
                self.consider_preemption(
                    agent,
                    &request,
                    seed,
                    (None, &mut None),
                    &mut result.events,
                );
            }
            Stage::Settled => {}
        }
        result
    }
}
