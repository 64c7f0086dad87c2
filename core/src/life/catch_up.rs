//! Background catch-up: bringing an NPC nobody watched up to date in one step
//! instead of ticking it through every missed hour.
//!
//! A whole day of an NPC's routine changes its needs by the same amount every day (decay, plus
//! what its schedule's coarse events reconstruct), so that daily change is computed once — by
//! simulating one simplified day — cached per archetype and start hour, and applied to every
//! whole missed day at once. Only the remainder (less than a day) is simulated hour by hour.
//! The gap is capped (168 hours by default: a week); older time is simply gone. Goals whose
//! deadline passed fail, and the NPC ends where its schedule says it is.

use crate::decision::world::World;
use crate::life::action::DetailLevel;
use crate::life::simulator::{SimEvent, SimulatedAgent, Simulator, TickRequest};
use crate::vocabulary::Symbol;

/// Catch-up bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CatchUpConfig {
    /// Longest gap caught up, in game hours; default 168.
    pub max_hours: f64,
}

impl Default for CatchUpConfig {
    fn default() -> Self {
        Self { max_hours: 168.0 }
    }
}

/// The net change of each consideration over one day of routine.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DailyCycle {
    /// Per consideration.
    pub deltas: Vec<(Symbol, f64)>,
}

/// Daily cycles by archetype and start hour of day.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CatchUpCache {
    cycles: Vec<((String, u32), DailyCycle)>,
}

impl CatchUpCache {
    /// How many cycles are cached.
    pub fn len(&self) -> usize {
        self.cycles.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.cycles.is_empty()
    }
}

/// The gap to catch up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CatchUpRequest<'a> {
    /// Game hour the NPC was last brought up to date.
    pub from_hours: f64,
    /// Game hour to bring it to.
    pub to_hours: f64,
    /// Its archetype: the cache key of its daily cycle.
    pub archetype: &'a str,
    /// Seed of the simulated hours.
    pub seed: u64,
}

/// What a catch-up did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CatchUpReport {
    /// Game hours caught up (after the cap).
    pub hours: f64,
    /// Whole days applied in closed form.
    pub closed_form_days: u32,
    /// Hourly steps simulated for the remainder.
    pub hourly_steps: u32,
    /// Events of the remainder and of the review (goals failed, activity…).
    pub events: Vec<SimEvent>,
}

fn hourly(
    simulator: &Simulator,
    agent: &mut SimulatedAgent,
    world: &World,
    from: f64,
    hours: u32,
    seed: u64,
    events: &mut Vec<SimEvent>,
) {
    for step in 0..hours {
        let request = TickRequest {
            now_hours: from + f64::from(step),
            world,
            level: DetailLevel::Simplified,
            simplified_event: None,
        };
        events.extend(
            simulator
                .advance(
                    agent,
                    request,
                    crate::rng::derive_seed(seed, u64::from(step)),
                )
                .events,
        );
    }
}

impl Simulator {
    /// One simplified day of `agent`'s routine from `from_hours`, as the net change of each
    /// consideration (coarse events reconstructed at its end).
    pub fn daily_cycle(
        &self,
        agent: &SimulatedAgent,
        world: &World,
        from_hours: f64,
        seed: u64,
    ) -> DailyCycle {
        let mut probe = agent.clone();
        probe.running = None;
        let mut ignored = Vec::new();
        hourly(self, &mut probe, world, from_hours, 24, seed, &mut ignored);
        self.apply_aggregated_events(&mut probe, from_hours + 24.0);
        DailyCycle {
            deltas: agent
                .agent
                .considerations
                .iter()
                .zip(&probe.agent.considerations)
                .map(|(before, after)| (before.name, after.value - before.value))
                .collect(),
        }
    }

    /// Brings `agent` over the gap of `request` (see the module documentation).
    pub fn catch_up(
        &self,
        agent: &mut SimulatedAgent,
        world: &World,
        request: &CatchUpRequest<'_>,
        cache: &mut CatchUpCache,
        config: &CatchUpConfig,
    ) -> CatchUpReport {
        let CatchUpRequest {
            from_hours,
            to_hours,
            archetype: key,
            seed,
        } = *request;
        let gap = (to_hours - from_hours).clamp(0.0, config.max_hours.max(0.0));
        let start = to_hours - gap;
        let days = (gap / 24.0).floor() as u32;
        let mut report = CatchUpReport {
            hours: gap,
            closed_form_days: days,
            ..CatchUpReport::default()
        };
        agent.running = None;
        if days > 0 {
            let slot = (key.to_owned(), start.rem_euclid(24.0).round() as u32);
            let cycle = match self.cached(cache, &slot) {
                Some(cycle) => cycle,
                None => {
                    let cycle = self.daily_cycle(agent, world, start, seed);
                    cache.cycles.push((slot, cycle.clone()));
                    cycle
                }
            };
            for (name, delta) in &cycle.deltas {
                if let Some(c) = agent
                    .agent
                    .considerations
                    .iter_mut()
                    .find(|c| c.name == *name)
                {
                    c.value += delta * f64::from(days);
                    c.clamp_value();
                }
            }
        }
        let remainder_from = start + 24.0 * f64::from(days);
        let remainder = (to_hours - remainder_from).floor().max(0.0) as u32;
        hourly(
            self,
            agent,
            world,
            remainder_from,
            remainder,
            seed,
            &mut report.events,
        );
        report.hourly_steps = remainder;
        self.apply_aggregated_events(agent, to_hours);
        agent.level = DetailLevel::Simplified;
        if let Some(book) = agent
            .layers
            .get_mut()
            .and_then(|layers| layers.goals.as_mut())
        {
            for event in book.review(&mut agent.agent, world, to_hours, None) {
                if let crate::life::goals::GoalEvent::Failed(goal, reason) = event {
                    report.events.push(SimEvent::GoalFailed { goal, reason });
                }
            }
        }
        let place = agent
            .layers
            .schedule
            .as_ref()
            .and_then(|s| s.location_at(world, to_hours));
        if let Some(provider) =
            place.and_then(|place| world.providers.iter().find(|p| p.id == place))
        {
            agent.agent.position = provider.position;
        }
        report
    }

    fn cached(&self, cache: &CatchUpCache, slot: &(String, u32)) -> Option<DailyCycle> {
        cache
            .cycles
            .iter()
            .find(|(key, _)| key == slot)
            .map(|(_, cycle)| cycle.clone())
    }
}
