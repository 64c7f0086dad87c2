//! The steps of an advance before a new action is chosen ([`Simulator::prepare`]):
//! commitments, the detail level and coarse events, affect, updaters, the schedule, the running
//! action's deltas and completion, wellbeing, goals, barks and the reactive set. Starting and
//! preempting actions is [`super::start`]'s job.

use std::sync::Arc;

use super::advance::Simulator;
use super::agent::SimulatedAgent;
use super::tick::{Prepared, SimEvent, Stage, TickRequest, TickResult};
use crate::decision::agent::lookup;
use crate::decision::consideration::{Consideration, Updater};
use crate::decision::world::World;
use crate::life::action::{AggregatedEvent, DetailLevel};
use crate::life::bark;
use crate::life::goals::GoalEvent;
use crate::rng::derive_seed;
use crate::vocabulary::Symbol;
use thin_vec::ThinVec;

/// Relative slack when deciding that an action's remaining time fits in this tick, so float
/// rounding never leaves a sliver of duration for one more tick.
const DURATION_SLACK: f64 = 1e-9;

impl Simulator {
    /// Everything of an advance before a new action is chosen: commitments, the level, coarse
    /// events, updaters, the running action, the reactive set. In a zone, seed it with
    /// [`zone_agent_seed`].
    pub fn prepare(
        &self,
        agent: &mut SimulatedAgent,
        request: &TickRequest<'_>,
        seed: u64,
    ) -> Prepared {
        let tuning = self.decider.tuning();
        let now = request.now_hours;
        let mut events = Vec::new();
        agent
            .agent
            .commitments
            .retain(|commitment| match commitment.expires_at {
                Some(expires_at) if expires_at <= now => {
                    events.push(SimEvent::CommitmentExpired {
                        forbid_tags: commitment.forbid_tags.clone(),
                        expires_at,
                    });
                    false
                }
                _ => true,
            });
        if request.level != agent.level {
            events.push(SimEvent::LevelChanged {
                from: agent.level,
                to: request.level,
            });
        }
        let simulated_hours = match request.level {
            DetailLevel::Full => tuning.full_tick_hours,
            DetailLevel::Simplified => tuning.simplified_tick_hours,
        };
        if request.level == DetailLevel::Simplified {
            if let Some(name) = request.simplified_event {
                agent.aggregated_events.push(AggregatedEvent {
                    name,
                    at_hours: now,
                });
            }
            agent.level = DetailLevel::Simplified;
            let change = agent
                .layers
                .get_mut()
                .and_then(|layers| layers.schedule.as_mut())
                .and_then(|layer| layer.track(request.world, now));
            if let Some((from, to, coarse)) = change {
                events.push(SimEvent::ActivityChanged { from, to });
                if let Some(name) = coarse {
                    agent.aggregated_events.push(AggregatedEvent {
                        name,
                        at_hours: now,
                    });
                }
            }
            if let Some(layer) = agent
                .layers
                .get_mut()
                .and_then(|layers| layers.affect.as_mut())
            {
                layer.run(simulated_hours, &mut events);
            }
            self.update_considerations(agent, request.world, simulated_hours);
            let result = TickResult {
                effective_level: DetailLevel::Simplified,
                simulated_hours,
                events,
            };
            return Prepared {
                stage: Stage::Settled,
                result,
            };
        }
        if agent.level == DetailLevel::Simplified {
            let count = self.apply_aggregated_events(agent, now);
            events.push(SimEvent::AggregatedEventsApplied { count });
            agent.level = DetailLevel::Full;
        }
        if let Some(layer) = agent
            .layers
            .get_mut()
            .and_then(|layers| layers.affect.as_mut())
        {
            layer.run(simulated_hours, &mut events);
        }
        self.update_considerations(agent, request.world, simulated_hours);
        if let Some(layer) = agent
            .layers
            .get_mut()
            .and_then(|layers| layers.schedule.as_mut())
            && let Some((from, to)) = layer.apply(&mut agent.agent, request.world, now)
        {
            events.push(SimEvent::ActivityChanged { from, to });
        }
        let continuing = self.progress_running_action(agent, now, simulated_hours, &mut events);
        if let Some((config, wellbeing)) = agent
            .layers
            .get_mut()
            .and_then(|layers| layers.wellbeing.as_deref_mut())
        {
            let asleep = agent
                .running
                .as_ref()
                .is_some_and(|r| config.sleeps(&r.action.tags));
            config.update(wellbeing, &agent.agent, (now, simulated_hours), asleep);
            config.weigh_needs(wellbeing, &mut agent.agent, now);
        }
        let engaged = agent.layers.engaged.is_some();
        if let Some(book) = agent
            .layers
            .get_mut()
            .and_then(|layers| layers.goals.as_mut())
        {
            let at = agent.running.as_ref().map(|r| r.provider.as_str());
            for event in book.review(&mut agent.agent, request.world, now, at) {
                events.push(match event {
                    GoalEvent::Created(goal) => SimEvent::GoalCreated { goal },
                    GoalEvent::Completed(goal) => SimEvent::GoalCompleted { goal },
                    GoalEvent::Failed(goal, reason) => SimEvent::GoalFailed { goal, reason },
                    GoalEvent::Blocked(goal, reason) => SimEvent::GoalBlocked {
                        goal,
                        reason: reason.as_str(),
                    },
                });
            }
            if !engaged && agent.running.is_none() && agent.queue.is_empty() {
                match book.seed_plan(&agent.agent, request.world, &self.planner, self.settles()) {
                    Ok(steps) => agent.queue.extend(steps),
                    Err(Some(blocked)) => {
                        let (goal, reason) = *blocked;
                        events.push(SimEvent::GoalBlocked {
                            goal,
                            reason: reason.as_str(),
                        });
                    }
                    Err(_) => {}
                }
            }
        }
        // An NPC the game has taken over (a fight, a dialogue) lives on — needs, feelings,
        // mood, goals' deadlines — but says and starts nothing until it is given back.
        if engaged {
            return Prepared {
                stage: Stage::Settled,
                result: TickResult {
                    effective_level: DetailLevel::Full,
                    simulated_hours,
                    events,
                },
            };
        }
        if let Some(layers) = agent.layers.get_mut()
            && let Some((lines, memory)) = layers.barks.as_deref_mut()
        {
            let mood = layers.wellbeing.as_deref().map_or(0.0, |(_, w)| w.mood);
            // Idle chatter while nothing presses — never in its sleep.
            let asleep = agent.running.as_ref().is_some_and(|r| {
                (layers.wellbeing.as_deref())
                    .is_some_and(|(config, _)| config.sleeps(&r.action.tags))
            });
            let said = bark::choose(
                &lines.prompted,
                &agent.agent,
                mood,
                now,
                memory,
                derive_seed(seed, 5),
            )
            .or_else(|| {
                let at = (mood, now, simulated_hours);
                let seed = derive_seed(seed, 6);
                (!asleep)
                    .then(|| bark::chatter(lines, &agent.agent, at, memory, seed))
                    .flatten()
            });
            if let Some(said) = said {
                events.push(SimEvent::Bark {
                    id: said.id,
                    text: said.text,
                });
            }
        }
        let held = self.run_reactive(agent, request, derive_seed(seed, 3), &mut events);
        // Only a critical need or a change of routine can preempt a running action; asked here,
        // while the agent's considerations are fresh in cache, instead of in a second pass over
        // every agent.
        let stage = if held {
            Stage::Settled
        } else if agent.running.is_none() {
            Stage::Idle
        } else if continuing
            && (agent.agent.considerations.iter().any(|c| c.is_critical())
                || Self::off_routine(agent, &events))
        {
            Stage::Continuing
        } else {
            Stage::Settled
        };
        Prepared {
            stage,
            result: TickResult {
                effective_level: DetailLevel::Full,
                simulated_hours,
                events,
            },
        }
    }

    /// Re-scores the agent's reactive set when due; returns whether an emergency set action
    /// holds the agent (so no needs-driven action runs).
    fn run_reactive(
        &self,
        agent: &mut SimulatedAgent,
        request: &TickRequest<'_>,
        seed: u64,
        events: &mut Vec<SimEvent>,
    ) -> bool {
        let Some(layer) = agent.layers.reactive.as_ref() else {
            return false;
        };
        let inputs: Vec<f64> = layer
            .set
            .inputs
            .iter()
            .map(|input| {
                agent
                    .agent
                    .consideration(input.name)
                    .map(|c| c.value)
                    .or_else(|| lookup(&request.world.perceptions, input.name))
                    .or_else(|| {
                        let layer = agent.layers.affect.as_ref()?;
                        layer.value_for(input.name, input.min, input.max)
                    })
                    .unwrap_or(input.min)
            })
            .collect();
        let Some(layer) = agent
            .layers
            .get_mut()
            .and_then(|layers| layers.reactive.as_mut())
        else {
            return false;
        };
        let before = layer.emergency();
        let decision =
            layer
                .set
                .decide(&mut layer.state, &inputs, request.now_hours * 3600.0, seed);
        let after = layer.emergency();
        let set = Arc::clone(&layer.set);
        if decision.switched {
            if let Some(ended) = before.and_then(|index| set.actions.get(index)) {
                events.push(SimEvent::ReactiveEnded {
                    set: set.name.clone(),
                    action: ended.name.clone(),
                });
            }
            if let Some(started) = after.and_then(|index| set.actions.get(index)) {
                if let Some(running) = agent.running.take() {
                    events.push(SimEvent::ActionInterrupted {
                        provider: running.provider,
                        action: running.action.id.clone(),
                        by_set: set.name.clone(),
                        by_action: started.name.clone(),
                    });
                }
                events.push(SimEvent::ReactiveStarted {
                    set: set.name.clone(),
                    action: started.name.clone(),
                    bucket: started.bucket,
                });
            }
        }
        after.is_some()
    }

    /// Moves each need of `agent` on by `hours` as its updater says, and lists those whose
    /// decay will take them below their critical threshold, with the hours until each does
    /// ([`Agent::running_out`](crate::decision::agent::Agent::running_out)): one pass over the
    /// needs.
    fn update_considerations(&self, agent: &mut SimulatedAgent, world: &World, hours: f64) {
        let SimulatedAgent {
            agent: inner,
            rate_adjustments,
            layers,
            ..
        } = agent;
        let affect = &layers.affect;
        inner.running_out.clear();
        for index in 0..inner.considerations.len() {
            let (name, updater) = (
                inner.considerations[index].name,
                inner.considerations[index].updater().clone(),
            );
            let adjustment = lookup(rate_adjustments, name).unwrap_or(0.0);
            let new_value = match updater {
                Updater::LinearDecay { rate } => {
                    Some(inner.considerations[index].value - (rate + adjustment) * hours)
                }
                Updater::LinearRegen { rate } => {
                    Some(inner.considerations[index].value + (rate + adjustment) * hours)
                }
                Updater::TowardBaseline { rate, baseline } => {
                    let value = inner.considerations[index].value;
                    let step = ((rate + adjustment) * hours).max(0.0);
                    Some(if value > baseline {
                        (value - step).max(baseline)
                    } else {
                        (value + step).min(baseline)
                    })
                }
                Updater::EventDriven => None,
                Updater::PerceptionDriven
                | Updater::RelationshipDriven
                | Updater::ContextAggregate => {
                    self.values.value(inner, name, &updater, world).or_else(|| {
                        let c = &inner.considerations[index];
                        affect
                            .as_ref()
                            .and_then(|layer| layer.value_for(name, c.min(), c.max()))
                    })
                }
            };
            let consideration = &mut inner.considerations[index];
            if let Some(value) = new_value.filter(|v| v.is_finite()) {
                consideration.value = value;
                consideration.clamp_value();
            }
            if let Some(hours) = running_out_in(consideration, &updater, adjustment) {
                inner.running_out.push((name, hours));
            }
        }
    }

    /// Applies the effects of every recorded event at or before `now`, then drops the log.
    pub(crate) fn apply_aggregated_events(&self, agent: &mut SimulatedAgent, now: f64) -> usize {
        let recorded = std::mem::take(&mut agent.aggregated_events);
        let mut count = 0;
        for event in recorded.iter().filter(|event| event.at_hours <= now) {
            count += 1;
            let Some((_, deltas)) = self.effects.iter().find(|(name, _)| *name == event.name)
            else {
                continue;
            };
            for (name, delta) in deltas {
                if let Some(consideration) = agent
                    .agent
                    .considerations
                    .iter_mut()
                    .find(|c| c.name == *name)
                {
                    consideration.value += delta;
                    consideration.clamp_value();
                }
            }
        }
        count
    }

    /// Delivers the running action's share of its deltas for this tick; completes it when its
    /// time is up — or, for an action the game carries out, holds it done until the game says
    /// so, makes no progress while the agent walks, and drops it at its deadline. Returns
    /// whether an action continues past this tick.
    fn progress_running_action(
        &self,
        agent: &mut SimulatedAgent,
        now: f64,
        hours: f64,
        events: &mut Vec<SimEvent>,
    ) -> bool {
        let Some(running) = agent.running.as_mut() else {
            return false;
        };
        if let Some(carried) = running.carried_by_game {
            if now >= carried.deadline_hours {
                events.push(SimEvent::ActionTimedOut {
                    provider: running.provider.clone(),
                    action: running.action.id.clone(),
                    order: running.order.clone(),
                });
                agent.running = None;
                return false;
            }
            if carried.walking {
                return true;
            }
        }
        let duration = running.action.duration_hours;
        let remaining = (duration - running.elapsed_hours).max(0.0);
        let finishes = remaining <= hours + DURATION_SLACK * duration.max(1.0);
        let step = if finishes { remaining } else { hours };
        Self::deliver_deltas(agent, step);
        if finishes {
            if agent
                .running
                .as_ref()
                .is_some_and(|r| r.carried_by_game.is_some())
            {
                return true;
            }
            self.finish_running(agent, events);
            return false;
        }
        true
    }

    /// Adds `step` game hours of the running action: its share of the deltas.
    fn deliver_deltas(agent: &mut SimulatedAgent, step: f64) {
        let Some(running) = agent.running.as_mut() else {
            return;
        };
        let duration = running.action.duration_hours;
        let fraction = if duration > 0.0 { step / duration } else { 1.0 };
        for (name, delta) in &running.action.deltas {
            if let Some(consideration) = agent
                .agent
                .considerations
                .iter_mut()
                .find(|c| c.name == *name)
            {
                consideration.value += delta * fraction;
                consideration.clamp_value();
            }
        }
        running.elapsed_hours += step;
    }

    /// The game reports the running action done: the rest of its deltas are delivered at
    /// once, then it completes as if its time were up. Nothing when nothing runs.
    pub fn complete_running(&self, agent: &mut SimulatedAgent) -> Vec<SimEvent> {
        let mut events = Vec::new();
        if let Some(running) = agent.running.as_ref() {
            let remaining = (running.action.duration_hours - running.elapsed_hours).max(0.0);
            Self::deliver_deltas(agent, remaining);
            self.finish_running(agent, &mut events);
        }
        events
    }

    /// Completes the running action: its event, its facts, its costs and yields (when the
    /// simulator settles resources).
    fn finish_running(&self, agent: &mut SimulatedAgent, events: &mut Vec<SimEvent>) {
        let Some(running) = agent.running.take() else {
            return;
        };
        events.push(SimEvent::ActionCompleted {
            provider: running.provider.clone(),
            action: running.action.id.clone(),
        });
        agent.agent.just_completed = Some(Box::new((
            running.provider.as_str().into(),
            running.action.id.as_str().into(),
        )));
        let effects = &running.action.effects;
        let facts = &mut agent.agent.facts;
        facts.retain(|fact| !effects.removes.contains(fact));
        for fact in &effects.adds {
            if !facts.contains(fact) {
                facts.push(*fact);
            }
        }
        if self.settles() {
            let resources = &mut agent.agent.resources;
            let settle =
                |resources: &mut ThinVec<(Symbol, f64)>, name: Symbol, delta: f64| match resources
                    .iter_mut()
                    .find(|(held, _)| *held == name)
                {
                    Some((_, amount)) => *amount += delta,
                    None => resources.push((name, delta)),
                };
            for &(name, cost) in &running.action.costs {
                settle(resources, name, -cost);
            }
            for &(name, gain) in &effects.yields {
                settle(resources, name, gain);
            }
        }
    }
}

/// Game hours until need `c`, moved by `updater` (its rate adjusted by `adjustment`), falls
/// below its critical threshold; `None` when it does not fall there (a need that rises, holds
/// or follows events and perception).
fn running_out_in(c: &Consideration, updater: &Updater, adjustment: f64) -> Option<f64> {
    let (per_hour, floor) = match *updater {
        Updater::LinearDecay { rate } => (-(rate + adjustment), c.min()),
        Updater::LinearRegen { rate } => (rate + adjustment, c.min()),
        Updater::TowardBaseline { rate, baseline } if c.value > baseline => {
            (-(rate + adjustment).max(0.0), baseline)
        }
        _ => return None,
    };
    c.hours_until_critical(per_hour, floor)
}
