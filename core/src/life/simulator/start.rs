//! Starting and replacing actions: the queue's next entry (dropping those that cannot start,
//! and the rest of a broken plan), the autonomous pick, and preemption of a running action by a
//! strictly better one. What happens before (updaters, the running action) is
//! [`super::prepare`]'s job.

use std::sync::Arc;

use thin_vec::ThinVec;

use super::advance::Simulator;
use super::agent::SimulatedAgent;
use super::occupancy::ProviderIndex;
use super::tick::{SimEvent, TickRequest};
use crate::decision::contention::Preference;
use crate::decision::decider::Scratch;
use crate::decision::scoring::{Breakdown, Candidate};
use crate::decision::spatial::ProviderGrid;
use crate::decision::world::{AdvertisedAction, World};
use crate::life::action::{QueuedAction, RunningAction};
use crate::rng::{DetRng, derive_seed};

impl Simulator {
    /// Starts the slot contention granted `agent` (a pick without its breakdown), its running
    /// copy of the action shared through `providers`.
    pub(super) fn start_granted(
        agent: &mut SimulatedAgent,
        (world, providers): (&World, &ProviderIndex),
        granted: Preference,
        now: f64,
    ) -> SimEvent {
        let candidate = Candidate {
            provider: granted.provider,
            action: granted.action,
            utility: granted.utility,
            distance: granted.distance,
            breakdown: Breakdown::default(),
        };
        let shared = providers.running_copy(world, candidate.provider, candidate.action);
        Self::start(agent, world, &candidate, now, (false, shared))
    }

    /// Starts `candidate` in place of whatever `agent` was doing; its running copy of the
    /// action is `shared`, or made for it.
    pub(super) fn start(
        agent: &mut SimulatedAgent,
        world: &World,
        candidate: &Candidate,
        now: f64,
        (player_queued, shared): (bool, Option<Arc<AdvertisedAction>>),
    ) -> SimEvent {
        let provider = &world.providers[candidate.provider];
        let action =
            shared.unwrap_or_else(|| RunningAction::copy_of(&provider.actions[candidate.action]));
        let event = SimEvent::ActionStarted {
            provider: provider.id.clone(),
            action: action.id.clone(),
            utility: candidate.utility,
            player_queued,
        };
        agent.agent.just_completed = None;
        agent.running = Some(Box::new(RunningAction {
            provider: provider.id.clone(),
            action,
            started_at_hours: now,
            elapsed_hours: 0.0,
            continuation_utility: candidate.utility,
            player_queued,
            order: None,
            carried_by_game: None,
        }));
        event
    }

    /// Starts the first queue entry that can start, dropping the ones that cannot.
    pub(super) fn start_queued(
        &self,
        agent: &mut SimulatedAgent,
        request: &TickRequest<'_>,
        seed: u64,
        events: &mut Vec<SimEvent>,
    ) {
        let world = request.world;
        while !agent.queue.is_empty() {
            let entry = agent.queue.remove(0);
            let position = world
                .providers
                .iter()
                .enumerate()
                .find_map(|(p, provider)| {
                    (provider.id == entry.provider)
                        .then(|| {
                            provider
                                .actions
                                .iter()
                                .position(|a| a.id == entry.action)
                                .map(|a| (p, a))
                        })
                        .flatten()
                });
            let Some((provider, action)) = position else {
                events.push(SimEvent::QueueEntryDropped {
                    provider: entry.provider,
                    action: entry.action,
                    reason: "not_advertised",
                    order: entry.order,
                });
                if entry.from_plan {
                    Self::abandon_plan(agent, events);
                }
                continue;
            };
            let ranking = self.decider.rank(&agent.agent, world, seed);
            if let Some(candidate) = ranking
                .ranked()
                .iter()
                .find(|c| c.provider == provider && c.action == action)
            {
                let event = Self::start(
                    agent,
                    world,
                    candidate,
                    request.now_hours,
                    (entry.player_queued, None),
                );
                if let Some(running) = agent.running.as_mut() {
                    running.order = entry.order;
                }
                events.push(event);
                return;
            }
            let reason = ranking
                .ineligible
                .iter()
                .find(|i| i.provider == provider && i.action == action)
                .map_or("ineligible", |i| i.reason.as_str());
            events.push(SimEvent::QueueEntryDropped {
                provider: entry.provider,
                action: entry.action,
                reason,
                order: entry.order,
            });
            if entry.from_plan {
                Self::abandon_plan(agent, events);
            }
        }
    }

    /// Drops the rest of a broken plan (the queue's non-player entries: only plans put them
    /// there), so the goal behind it is planned afresh from where the agent now stands.
    fn abandon_plan(agent: &mut SimulatedAgent, events: &mut Vec<SimEvent>) {
        let (orders, rest): (ThinVec<QueuedAction>, ThinVec<QueuedAction>) =
            std::mem::take(&mut agent.queue)
                .into_iter()
                .partition(|entry| entry.player_queued);
        agent.queue = orders;
        events.extend(rest.into_iter().map(|entry| SimEvent::QueueEntryDropped {
            provider: entry.provider,
            action: entry.action,
            reason: "plan_broken",
            order: None,
        }));
    }

    /// Starts the next queue entry or, with nothing queued that can start, the autonomous
    /// pick.
    pub(super) fn start_next(
        &self,
        agent: &mut SimulatedAgent,
        request: &TickRequest<'_>,
        seed: u64,
        events: &mut Vec<SimEvent>,
    ) {
        self.start_queued(agent, request, seed, events);
        if agent.running.is_some() {
            return;
        }
        let world = request.world;
        let decision = self
            .decider
            .decide(&agent.agent, world, derive_seed(seed, 1));
        if let Some(candidate) = decision.selected {
            let event = Self::start(agent, world, &candidate, request.now_hours, (false, None));
            events.push(event);
        }
    }

    /// Whether the schedule's activity changed this tick (in `events`) and the running action
    /// is out of the new routine: the agent chose it itself, the game is not carrying it out,
    /// it fits neither the activity's tags nor its place, and it raises no critical need. Such an action yields to a fresh
    /// pick — the bell rings, the smith puts down his hammer and goes to lunch.
    pub(super) fn off_routine(agent: &SimulatedAgent, events: &[SimEvent]) -> bool {
        let (Some(running), Some(pull)) = (agent.running.as_ref(), agent.agent.schedule.as_ref())
        else {
            return false;
        };
        let changed = events
            .iter()
            .any(|e| matches!(e, SimEvent::ActivityChanged { to: Some(_), .. }));
        let fits = pull.place.as_deref() == Some(running.provider.as_str())
            || running
                .action
                .tags
                .iter()
                .any(|tag| pull.tags.contains(tag));
        let restores_critical = running.action.deltas.iter().any(|(need, delta)| {
            *delta > 0.0
                && agent
                    .agent
                    .consideration(*need)
                    .is_some_and(|c| c.is_critical())
        });
        changed
            && !fits
            && !restores_critical
            && !running.player_queued
            && running.order.is_none()
            && running.carried_by_game.is_none()
    }

    /// `grid` is every provider's (a zone's, kept between ticks; built here when `None`),
    /// `scratch` the scoring buffers, made by the first agent that needs them and reused by
    /// the next (positions and radii do not change; occupancy does, so the grid keeps full
    /// providers too).
    pub(super) fn consider_preemption(
        &self,
        agent: &mut SimulatedAgent,
        request: &TickRequest<'_>,
        seed: u64,
        (grid, scratch): (Option<&ProviderGrid>, &mut Option<Scratch>),
        events: &mut Vec<SimEvent>,
    ) {
        let Some(off_routine) = self.may_preempt(agent, events) else {
            return;
        };
        let built;
        let grid = match grid {
            Some(grid) => grid,
            None => {
                built = ProviderGrid::of_all(request.world);
                &built
            }
        };
        let scratch = scratch.get_or_insert_with(Scratch::default);
        self.preempt_near(agent, request, seed, off_routine, (grid, scratch), events);
    }

    /// Whether the running action may be preempted this tick (`events`: the agent's so far):
    /// `Some(off_routine)` when a need is critical or the routine changed under it — and, for
    /// a player-queued action, a need is collapsing.
    pub(super) fn may_preempt(&self, agent: &SimulatedAgent, events: &[SimEvent]) -> Option<bool> {
        let running = agent.running.as_ref()?;
        let considerations = &agent.agent.considerations;
        let off_routine = Self::off_routine(agent, events);
        if !off_routine && !considerations.iter().any(|c| c.is_critical()) {
            return None;
        }
        let collapse_fraction = self.decider.tuning().imminent_collapse_fraction;
        if running.player_queued
            && !considerations
                .iter()
                .any(|c| c.is_collapsing(collapse_fraction))
        {
            return None;
        }
        Some(off_routine)
    }

    /// Picks among the providers `grid` finds near the agent (scoring into `scratch`) and
    /// starts the pick in place of the running action when it strictly beats the frozen
    /// utility by the margin (or the routine changed and it is another action).
    pub(super) fn preempt_near(
        &self,
        agent: &mut SimulatedAgent,
        request: &TickRequest<'_>,
        seed: u64,
        off_routine: bool,
        (grid, scratch): (&ProviderGrid, &mut Scratch),
        events: &mut Vec<SimEvent>,
    ) {
        let Some(running) = agent.running.as_ref() else {
            return;
        };
        let world = request.world;
        let mut rng = DetRng::new(seed);
        let Some(pick) =
            self.decider
                .pick_near(&agent.agent, world, (grid, None), &mut rng, scratch)
        else {
            return;
        };
        let Some(candidate) = scratch.ranked.get(pick.index).copied() else {
            return;
        };
        let replacement = &world.providers[candidate.provider];
        let same = replacement.id == running.provider
            && replacement.actions[candidate.action].id == running.action.id;
        let threshold = self.decider.tuning().preemption_margin * running.continuation_utility;
        if same || (!off_routine && candidate.utility <= threshold) {
            return;
        }
        let preempted = SimEvent::ActionPreempted {
            provider: running.provider.clone(),
            action: running.action.id.clone(),
            by_provider: replacement.id.clone(),
            by_action: replacement.actions[candidate.action].id.clone(),
        };
        events.push(preempted);
        let started = Self::start(agent, world, &candidate, request.now_hours, (false, None));
        events.push(started);
    }
}
