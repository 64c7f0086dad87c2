//! Timed simulation: an agent's life over time (seed 000, "Ticks, preemption, and simulation
//! detail"). The [`Decider`] stays stateless; the [`Simulator`] advances a mutable
//! [`SimulatedAgent`] one tick at a time, deterministically from the request and a seed.
//!
//! Order within one [`Simulator::advance`]:
//! 1. expire commitments whose `expires_at` is at or before `now_hours`;
//! 2. at simplified level: record the optional coarse event, let the considerations' updaters
//!    run over the simplified tick, and stop — actions are frozen while simplified;
//! 3. at full level, returning from simplified: apply the profile's aggregated-event effects
//!    (clamped) for every recorded event at or before now, then drop the log;
//! 4. update considerations by updater kind;
//! 5. apply the running action's gradual deltas (its promised deltas spread evenly over its
//!    duration, clamped; unknown considerations ignored) and complete it when its time is up;
//! 6. if idle, start the next FIFO queue entry, or select autonomously;
//! 7. a continuing action is considered for preemption: only when some consideration is
//!    critical; a player-queued action only when one is collapsing; the replacement comes from
//!    the normal stochastic pipeline and must strictly beat `preemption_margin ×` the running
//!    action's utility frozen when it started. Preempted work is abandoned; the queue stays.
//!
//! Between 5 and 6, an agent carrying a reactive utility set re-scores it (each decision
//! interval). When the set's pick is in an emergency bucket, that reactive action interrupts the
//! needs-driven one (abandoned, queue kept) and holds the agent until the set picks something
//! else — the way combat preempts daily life. Set inputs read the agent's considerations by
//! name, then the world's perceptions, else the input's minimum.
//!
//! A completed action's symbolic effects (facts added and removed) apply to the agent, so a
//! planned sequence can run through the queue; its costs and yields apply only when the
//! simulator is told to settle resources (a game usually debits costs itself).
//!
//! A newly started action therefore gets its first gradual delta on the following tick.
//! Randomness: the autonomous pick draws from `derive_seed(seed, 1)`, the preemption pick from
//! `derive_seed(seed, 2)`, the reactive set from `derive_seed(seed, 3)`, the schedule's
//! adherence roll from `derive_seed(seed, 4)`, the bark choice from `derive_seed(seed, 5)`,
//! queue-entry ranking from `seed` (it only matters for perception noise). Mood and stress
//! (when tracked) are derived after the running action's deltas, and a bark may follow.
//!
//! A schedule, when the agent has one, is applied after the updaters: its block in force
//! becomes the agent's personal context and preferred provider for the decisions of the tick.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::affect::{AffectEvent, AffectModel, AffectState};
use crate::decision::agent::{Agent, lookup};
use crate::decision::consideration::Updater;
use crate::decision::decider::{Decider, Scratch};
use crate::decision::scoring::{Breakdown, Candidate};
use crate::decision::spatial::ProviderGrid;
use crate::decision::tuning::AggregatedEffects;
use crate::decision::world::World;
use crate::life::action::{AggregatedEvent, DetailLevel, QueuedAction, RunningAction};
use crate::life::bark::{self, BarkMemory, BarkTemplate};
use crate::life::goals::{GoalBook, GoalEvent};
use crate::life::planner::PlannerConfig;
use crate::life::reactive::{SetState, UtilitySet};
use crate::life::schedule::ScheduleLayer;
use crate::life::wellbeing::{Wellbeing, WellbeingConfig};
use crate::rng::DetRng;
use crate::rng::{derive_seed, stable_hash};
use crate::vocabulary::{Symbol, Vocabulary};

/// A reactive utility set an agent carries, with the agent's memory of it.
#[derive(Clone, Debug, PartialEq)]
pub struct ReactiveLayer {
    /// The set (shared by every agent of an archetype).
    pub set: Arc<UtilitySet>,
    /// This agent's running set action, cooldowns and last decision.
    pub state: SetState,
}

impl ReactiveLayer {
    /// A fresh layer for `set`.
    pub fn new(set: Arc<UtilitySet>) -> Self {
        Self {
            set,
            state: SetState::default(),
        }
    }

    /// The set action running in an emergency bucket, if any.
    pub fn emergency(&self) -> Option<usize> {
        self.state
            .running
            .filter(|index| self.set.is_emergency(*index))
    }
}

/// An agent's feelings (seed 003) carried through simulated time. Each advance runs as many
/// affect ticks as the simulated time holds (at most `max_ticks_per_advance`; a longer gap
/// only lets time pass), with the events pushed since the last advance on the first of them.
/// Affect states back perception-, relationship- and context-driven considerations of the
/// same name (when the world gives no value) and reactive-set inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct AffectLayer {
    /// The agent's persona, compiled.
    pub model: Arc<AffectModel>,
    /// Its current feelings.
    pub state: AffectState,
    /// Events waiting for the next affect tick (insults, gifts… from the world).
    pub pending: Vec<AffectEvent>,
    /// Affect ticks one advance may run; default 1,200 (an hour of 3-second ticks).
    pub max_ticks_per_advance: u64,
    /// Which symbols read which state: each state's name as written and in capitals.
    pub bindings: Vec<(Symbol, usize)>,
    /// Seconds of game time not yet spent on an affect tick.
    pub(crate) carry_s: f64,
}

/// The kind of the no-impulse event that keeps a provoker present through an advance (no
/// channel has this name, so it moves nothing).
const PRESENCE_EVENT: &str = "__present";

/// The default of [`AffectLayer::max_ticks_per_advance`].
pub const DEFAULT_MAX_AFFECT_TICKS_PER_ADVANCE: u64 = 1200;

impl AffectLayer {
    /// A layer at rest for `model`; state names are bound through `vocabulary`.
    pub fn new(model: Arc<AffectModel>, vocabulary: &mut Vocabulary) -> Self {
        let mut bindings = Vec::new();
        for (index, name) in model.state_names().iter().enumerate() {
            bindings.push((vocabulary.intern(name), index));
            bindings.push((vocabulary.intern(&name.to_uppercase()), index));
        }
        bindings.sort();
        bindings.dedup();
        let state = model.initial_state();
        Self {
            model,
            state,
            pending: Vec::new(),
            max_ticks_per_advance: DEFAULT_MAX_AFFECT_TICKS_PER_ADVANCE,
            bindings,
            carry_s: 0.0,
        }
    }

    /// The value of the state bound to `name`, mapped onto `[min, max]` (signed states map
    /// −1..1, others 0..1).
    pub fn value_for(&self, name: Symbol, min: f64, max: f64) -> Option<f64> {
        let index = self
            .bindings
            .iter()
            .find(|(symbol, _)| *symbol == name)
            .map(|(_, index)| *index)?;
        let raw = *self.state.values.get(index)?;
        let unit = if self.model.is_signed(index) {
            (raw + 1.0) / 2.0
        } else {
            raw
        };
        Some(min + unit * (max - min))
    }

    /// Runs the affect ticks `hours` of game time hold; returns what they produced.
    fn run(&mut self, hours: f64, events: &mut Vec<SimEvent>) {
        let dt = self.model.dt_s();
        let available = self.carry_s + hours * 3600.0;
        let due = (available / dt).floor().max(0.0);
        let ticks = (due as u64).min(self.max_ticks_per_advance);
        self.carry_s = if (ticks as f64) < due {
            0.0
        } else {
            available - due * dt
        };
        let mut pending = std::mem::take(&mut self.pending);
        // A provoker reported during this advance stays in front of the agent for the rest of
        // it: later ticks carry a no-impulse presence event with the source, so a burst that
        // latches a few seconds after an insult can still be aimed at whoever gave it.
        let presence: Vec<AffectEvent> = pending
            .iter()
            .filter_map(|event| event.source.clone())
            .map(|source| AffectEvent {
                magnitude: 0.0,
                ..AffectEvent::new(PRESENCE_EVENT).from_source(source)
            })
            .take(1)
            .collect();
        for tick in 0..ticks {
            let outcome = self.model.step(&mut self.state, &pending);
            if tick == 0 {
                pending.clone_from(&presence);
            }
            if outcome.burst_started {
                events.push(SimEvent::BurstStarted);
            }
            if let Some(discharge) = outcome.discharge {
                events.push(SimEvent::LashOut {
                    target: discharge.target,
                    intensity: discharge.intensity,
                });
            }
            if outcome.burst_ended {
                events.push(SimEvent::BurstEnded);
            }
        }
        // Events that found no tick wait for the next advance.
        if ticks == 0 {
            self.pending = pending;
        }
    }
}

/// An agent with a life over time: the decision data plus what it is doing and will do.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulatedAgent {
    /// What decisions read.
    pub agent: Agent,
    /// Additive adjustments of linear updater rates per consideration (traits: a glutton's
    /// hunger decays faster). They never touch other updater kinds.
    pub rate_adjustments: Vec<(Symbol, f64)>,
    /// The action being carried out.
    pub running: Option<RunningAction>,
    /// Work waiting, first in first out.
    pub queue: VecDeque<QueuedAction>,
    /// The level of the last advance.
    pub level: DetailLevel,
    /// Coarse events recorded while simplified.
    pub aggregated_events: Vec<AggregatedEvent>,
    /// The reactive set it carries, if any.
    pub reactive: Option<ReactiveLayer>,
    /// Its feelings, if it has a persona.
    pub affect: Option<AffectLayer>,
    /// Its daily schedule, if it has one.
    pub schedule: Option<ScheduleLayer>,
    /// Its mood and stress, if tracked (with the config that derives them).
    pub wellbeing: Option<(Arc<WellbeingConfig>, Wellbeing)>,
    /// Its lines and its memory of saying them, if it barks.
    pub barks: Option<(Arc<Vec<BarkTemplate>>, BarkMemory)>,
    /// Its goals, if it pursues any.
    pub goals: Option<GoalBook>,
}

impl SimulatedAgent {
    /// An idle, full-detail agent.
    pub fn new(agent: Agent) -> Self {
        Self {
            agent,
            rate_adjustments: Vec::new(),
            running: None,
            queue: VecDeque::new(),
            level: DetailLevel::Full,
            aggregated_events: Vec::new(),
            reactive: None,
            affect: None,
            schedule: None,
            wellbeing: None,
            barks: None,
            goals: None,
        }
    }

    /// Appends work to the queue (the game decides what to enqueue and debits its costs).
    pub fn enqueue_action(
        &mut self,
        provider: impl Into<String>,
        action: impl Into<String>,
        player_queued: bool,
    ) {
        self.queue.push_back(QueuedAction {
            provider: provider.into(),
            action: action.into(),
            player_queued,
            from_plan: false,
        });
    }
}

/// One advance's inputs.
#[derive(Clone, Copy, Debug)]
pub struct TickRequest<'w> {
    /// The absolute game hour of this tick.
    pub now_hours: f64,
    /// The world as the agent sees it now.
    pub world: &'w World,
    /// The level the integrating game wants (only it knows visibility and importance).
    pub level: DetailLevel,
    /// A coarse event to record (simplified level only).
    pub simplified_event: Option<Symbol>,
}

impl<'w> TickRequest<'w> {
    /// A full-detail tick at `now_hours` with no coarse event.
    pub fn full(now_hours: f64, world: &'w World) -> Self {
        Self {
            now_hours,
            world,
            level: DetailLevel::Full,
            simplified_event: None,
        }
    }
}

/// Something that happened during an advance, for the service to publish.
#[derive(Clone, Debug, PartialEq)]
pub enum SimEvent {
    /// An action began.
    ActionStarted {
        /// Provider id.
        provider: String,
        /// Action id.
        action: String,
        /// Its (frozen) utility.
        utility: f64,
        /// Whether a player ordered it.
        player_queued: bool,
    },
    /// An action ran its full duration.
    ActionCompleted {
        /// Provider id.
        provider: String,
        /// Action id.
        action: String,
    },
    /// An action was abandoned for a better one.
    ActionPreempted {
        /// Provider id of the abandoned action.
        provider: String,
        /// The abandoned action.
        action: String,
        /// Provider id of the replacement.
        by_provider: String,
        /// The replacement.
        by_action: String,
    },
    /// A queue entry could not start and was dropped.
    QueueEntryDropped {
        /// Provider id.
        provider: String,
        /// Action id.
        action: String,
        /// Why (`not_advertised` or an eligibility gate's name).
        reason: &'static str,
    },
    /// A commitment ended.
    CommitmentExpired {
        /// The tags it forbade.
        forbid_tags: Vec<Symbol>,
        /// When it ended.
        expires_at: f64,
    },
    /// A reactive set's emergency action interrupted the needs-driven action.
    ActionInterrupted {
        /// Provider id of the abandoned action.
        provider: String,
        /// The abandoned action.
        action: String,
        /// The set that interrupted it.
        by_set: String,
        /// The set action that interrupted it.
        by_action: String,
    },
    /// A reactive set's emergency action took over.
    ReactiveStarted {
        /// The set.
        set: String,
        /// The set action.
        action: String,
        /// Its bucket.
        bucket: u32,
    },
    /// A reactive emergency action ended; needs-driven life resumes.
    ReactiveEnded {
        /// The set.
        set: String,
        /// The set action that ended.
        action: String,
    },
    /// The schedule's activity changed (`None`: no block in force).
    ActivityChanged {
        /// Before.
        from: Option<Symbol>,
        /// After.
        to: Option<Symbol>,
    },
    /// A goal was added (need-derived ones appear by themselves).
    GoalCreated {
        /// Its description.
        description: String,
    },
    /// A goal was met.
    GoalCompleted {
        /// Its description.
        description: String,
    },
    /// A goal's deadline passed.
    GoalFailed {
        /// Its description.
        description: String,
    },
    /// No plan reaches a goal (a story signal for a quest generator).
    GoalBlocked {
        /// Its description.
        description: String,
        /// `budget_exhausted` or `unreachable`.
        reason: &'static str,
    },
    /// A line said aloud.
    Bark {
        /// The template's id.
        id: String,
        /// The text.
        text: String,
    },
    /// An outburst latched (affect overlay).
    BurstStarted,
    /// An outburst ended.
    BurstEnded,
    /// While bursting, the agent lashes out at whoever provoked it this tick: a reactive
    /// candidate the integration turns into a social intent.
    LashOut {
        /// Who it lashes out at.
        target: String,
        /// How hard (softened for a repeat provoker).
        intensity: f64,
    },
    /// The detail level changed.
    LevelChanged {
        /// Before.
        from: DetailLevel,
        /// After.
        to: DetailLevel,
    },
    /// Returning to full detail reconstructed these coarse events.
    AggregatedEventsApplied {
        /// How many recorded events were applied.
        count: usize,
    },
}

crate::wire_enum! {
    /// Which [`SimEvent`] happened, by the snake_case name it goes out under (`lash_out`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum SimEventKind {
        /// `SimEvent::ActionStarted`.
        ActionStarted = "action_started",
        /// `SimEvent::ActionCompleted`.
        ActionCompleted = "action_completed",
        /// `SimEvent::ActionPreempted`.
        ActionPreempted = "action_preempted",
        /// `SimEvent::QueueEntryDropped`.
        QueueEntryDropped = "queue_entry_dropped",
        /// `SimEvent::CommitmentExpired`.
        CommitmentExpired = "commitment_expired",
        /// `SimEvent::ActionInterrupted`.
        ActionInterrupted = "action_interrupted",
        /// `SimEvent::ReactiveStarted`.
        ReactiveStarted = "reactive_started",
        /// `SimEvent::ReactiveEnded`.
        ReactiveEnded = "reactive_ended",
        /// `SimEvent::ActivityChanged`.
        ActivityChanged = "activity_changed",
        /// `SimEvent::GoalCreated`.
        GoalCreated = "goal_created",
        /// `SimEvent::GoalCompleted`.
        GoalCompleted = "goal_completed",
        /// `SimEvent::GoalFailed`.
        GoalFailed = "goal_failed",
        /// `SimEvent::GoalBlocked`.
        GoalBlocked = "goal_blocked",
        /// `SimEvent::Bark`.
        Bark = "bark",
        /// `SimEvent::BurstStarted`.
        BurstStarted = "burst_started",
        /// `SimEvent::BurstEnded`.
        BurstEnded = "burst_ended",
        /// `SimEvent::LashOut`.
        LashOut = "lash_out",
        /// `SimEvent::LevelChanged`.
        LevelChanged = "level_changed",
        /// `SimEvent::AggregatedEventsApplied`.
        AggregatedEventsApplied = "aggregated_events_applied",
    }
}

impl SimEvent {
    /// Which event this is.
    #[must_use]
    pub fn kind(&self) -> SimEventKind {
        match self {
            Self::ActionStarted { .. } => SimEventKind::ActionStarted,
            Self::ActionCompleted { .. } => SimEventKind::ActionCompleted,
            Self::ActionPreempted { .. } => SimEventKind::ActionPreempted,
            Self::QueueEntryDropped { .. } => SimEventKind::QueueEntryDropped,
            Self::CommitmentExpired { .. } => SimEventKind::CommitmentExpired,
            Self::ActionInterrupted { .. } => SimEventKind::ActionInterrupted,
            Self::ReactiveStarted { .. } => SimEventKind::ReactiveStarted,
            Self::ReactiveEnded { .. } => SimEventKind::ReactiveEnded,
            Self::ActivityChanged { .. } => SimEventKind::ActivityChanged,
            Self::GoalCreated { .. } => SimEventKind::GoalCreated,
            Self::GoalCompleted { .. } => SimEventKind::GoalCompleted,
            Self::GoalFailed { .. } => SimEventKind::GoalFailed,
            Self::GoalBlocked { .. } => SimEventKind::GoalBlocked,
            Self::Bark { .. } => SimEventKind::Bark,
            Self::BurstStarted => SimEventKind::BurstStarted,
            Self::BurstEnded => SimEventKind::BurstEnded,
            Self::LashOut { .. } => SimEventKind::LashOut,
            Self::LevelChanged { .. } => SimEventKind::LevelChanged,
            Self::AggregatedEventsApplied { .. } => SimEventKind::AggregatedEventsApplied,
        }
    }

    /// The event's snake_case name (`lash_out`), as it goes out on the wire.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.kind().as_str()
    }
}

/// One advance's outputs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TickResult {
    /// The level this tick ran at.
    pub effective_level: DetailLevel,
    /// Game hours this tick simulated (`full_tick_hours` or `simplified_tick_hours`).
    pub simulated_hours: f64,
    /// What happened, in order.
    pub events: Vec<SimEvent>,
}

/// One agent's part of a zone tick: the level the game wants for it and a coarse event.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AgentTick {
    /// Full or simplified.
    pub level: DetailLevel,
    /// A coarse event to record (simplified level only).
    pub simplified_event: Option<Symbol>,
}

/// Where an agent stands after the preparation phase of an advance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Nothing runs: it needs a queue entry or a decision.
    Idle,
    /// An action runs on from an earlier tick while a need is critical: it may be preempted.
    Continuing,
    /// Nothing more to do this tick (simplified, just started, held by a reactive set, or
    /// running on with no need critical).
    Settled,
}

/// The seed an agent's own steps draw from in a zone tick seeded with `zone_seed`: it depends
/// on the agent's id, never on its place in the zone.
pub fn zone_agent_seed(zone_seed: u64, agent: &SimulatedAgent) -> u64 {
    derive_seed(zone_seed, stable_hash(&agent.agent.id))
}

/// An agent after [`Simulator::prepare`]: where it stands and what has happened so far.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    /// Whether it needs a new action, may be preempted, or is done for this tick.
    pub stage: Stage,
    /// The tick's result so far.
    pub result: TickResult,
}

/// Keeps provider and action occupancy in step with actions that start and stop: a start
/// takes a slot of the provider and of the action, a completion, preemption or interruption
/// gives it back.
pub fn apply_occupancy(world: &mut World, events: &[SimEvent]) {
    occupy(world, events, |world, id| {
        world.providers.iter().position(|p| p.id == id)
    });
}

/// A world's providers by id: indices sorted by id, so a look-up is a binary search instead of
/// a scan (a zone tick looks up every action that starts or stops). Valid while the world's
/// provider list does not change; finds the first provider of an id, as a scan would.
#[derive(Clone, Debug, Default)]
pub struct ProviderIndex {
    sorted: Vec<usize>,
}

impl ProviderIndex {
    /// The index of `world`'s providers.
    pub fn new(world: &World) -> Self {
        let mut sorted: Vec<usize> = (0..world.providers.len()).collect();
        sorted.sort_by(|&a, &b| world.providers[a].id.cmp(&world.providers[b].id));
        Self { sorted }
    }

    /// The position in `world.providers` of the first provider with id `id`.
    pub fn find(&self, world: &World, id: &str) -> Option<usize> {
        let at = self
            .sorted
            .partition_point(|&p| world.providers.get(p).is_some_and(|p| p.id.as_str() < id));
        self.sorted
            .get(at)
            .copied()
            .filter(|&p| world.providers.get(p).is_some_and(|p| p.id == id))
    }
}

/// [`apply_occupancy`] with the provider look-up `find`.
fn occupy(world: &mut World, events: &[SimEvent], find: impl Fn(&World, &str) -> Option<usize>) {
    let mut change = |provider_id: &str, action_id: &str, up: bool| {
        let Some(provider) = find(world, provider_id).and_then(|p| world.providers.get_mut(p))
        else {
            return;
        };
        let bump = |count: &mut u32| {
            *count = if up {
                count.saturating_add(1)
            } else {
                count.saturating_sub(1)
            }
        };
        bump(&mut provider.occupants);
        if let Some(action) = provider.actions.iter_mut().find(|a| a.id == action_id) {
            bump(&mut action.occupancy);
        }
    };
    for event in events {
        match event {
            SimEvent::ActionStarted {
                provider, action, ..
            } => change(provider, action, true),
            SimEvent::ActionCompleted { provider, action }
            | SimEvent::ActionPreempted {
                provider, action, ..
            }
            | SimEvent::ActionInterrupted {
                provider, action, ..
            } => change(provider, action, false),
            _ => {}
        }
    }
}

/// Where perception-, relationship- and context-driven considerations get their values.
/// The default reads the world's maps; an integration may read its own tables (per-NPC
/// relationships, say). `None` keeps the previous value.
pub trait ValueSource: Send + Sync {
    /// The new value of `consideration` (of kind `updater`) for `agent`, if known.
    fn value(
        &self,
        agent: &Agent,
        consideration: Symbol,
        updater: &Updater,
        world: &World,
    ) -> Option<f64>;
}

/// Reads `world.perceptions`, `world.relationships` and `world.context_aggregates`.
#[derive(Clone, Copy, Debug, Default)]
pub struct WorldMaps;

impl ValueSource for WorldMaps {
    fn value(
        &self,
        _agent: &Agent,
        consideration: Symbol,
        updater: &Updater,
        world: &World,
    ) -> Option<f64> {
        let map = match updater {
            Updater::PerceptionDriven => &world.perceptions,
            Updater::RelationshipDriven => &world.relationships,
            Updater::ContextAggregate => &world.context_aggregates,
            Updater::LinearDecay { .. } | Updater::LinearRegen { .. } | Updater::EventDriven => {
                return None;
            }
        };
        lookup(map, consideration)
    }
}

/// Relative slack when deciding that an action's remaining time fits in this tick, so float
/// rounding never leaves a sliver of duration for one more tick.
const DURATION_SLACK: f64 = 1e-9;

/// Advances agents through time with a decider's tuning.
pub struct Simulator {
    decider: Decider,
    effects: AggregatedEffects,
    values: Box<dyn ValueSource>,
    settle_resources: bool,
    planner: PlannerConfig,
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
            settle_resources: false,
            planner: PlannerConfig::default(),
        }
    }

    /// Debits an action's costs and credits its yields when it completes. Off by default: a
    /// game debits costs itself (seed 000); turn it on where geppetto is the whole world
    /// (scenarios, the demo). Symbolic facts always follow a completed action.
    pub fn settling_resources(mut self, settle: bool) -> Self {
        self.settle_resources = settle;
        self
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
                self.consider_preemption(agent, &request, seed, &mut None, &mut result.events);
            }
            Stage::Settled => {}
        }
        result
    }

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
                .schedule
                .as_mut()
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
            if let Some(layer) = agent.affect.as_mut() {
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
        if let Some(layer) = agent.affect.as_mut() {
            layer.run(simulated_hours, &mut events);
        }
        self.update_considerations(agent, request.world, simulated_hours);
        if let Some(layer) = agent.schedule.as_mut() {
            let mut rng = DetRng::new(derive_seed(seed, 4));
            if let Some((from, to)) = layer.apply(&mut agent.agent, request.world, now, &mut rng) {
                events.push(SimEvent::ActivityChanged { from, to });
            }
        }
        let continuing = self.progress_running_action(agent, simulated_hours, &mut events);
        if let Some((config, wellbeing)) = agent.wellbeing.as_mut() {
            config.update(wellbeing, &agent.agent, now, simulated_hours);
        }
        if let Some(book) = agent.goals.as_mut() {
            let at = agent.running.as_ref().map(|r| r.provider.as_str());
            for event in book.review(&mut agent.agent, request.world, now, at) {
                events.push(match event {
                    GoalEvent::Created(description) => SimEvent::GoalCreated { description },
                    GoalEvent::Completed(description) => SimEvent::GoalCompleted { description },
                    GoalEvent::Failed(description) => SimEvent::GoalFailed { description },
                    GoalEvent::Blocked(description, reason) => SimEvent::GoalBlocked {
                        description,
                        reason: reason.as_str(),
                    },
                });
            }
            if agent.running.is_none() && agent.queue.is_empty() {
                match book.seed_plan(&agent.agent, request.world, &self.planner) {
                    Ok(steps) => agent.queue.extend(steps),
                    Err(Some(GoalEvent::Blocked(description, reason))) => {
                        events.push(SimEvent::GoalBlocked {
                            description,
                            reason: reason.as_str(),
                        });
                    }
                    Err(_) => {}
                }
            }
        }
        if let Some((templates, memory)) = agent.barks.as_mut() {
            let mood = agent.wellbeing.as_ref().map_or(0.0, |(_, w)| w.mood);
            if let Some(said) = bark::choose(
                templates,
                &agent.agent,
                mood,
                now,
                memory,
                derive_seed(seed, 5),
            ) {
                events.push(SimEvent::Bark {
                    id: said.id,
                    text: said.text,
                });
            }
        }
        let held = self.run_reactive(agent, request, derive_seed(seed, 3), &mut events);
        // Only a critical need can preempt a running action; asked here, while the agent's
        // considerations are fresh in cache, instead of in a second pass over every agent.
        let stage = if held {
            Stage::Settled
        } else if agent.running.is_none() {
            Stage::Idle
        } else if continuing && agent.agent.considerations.iter().any(|c| c.is_critical()) {
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
        let Some(layer) = agent.reactive.as_ref() else {
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
                        let layer = agent.affect.as_ref()?;
                        layer.value_for(input.name, input.min, input.max)
                    })
                    .unwrap_or(input.min)
            })
            .collect();
        let Some(layer) = agent.reactive.as_mut() else {
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
                        action: running.action.id,
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

    fn update_considerations(&self, agent: &mut SimulatedAgent, world: &World, hours: f64) {
        let SimulatedAgent {
            agent: inner,
            rate_adjustments,
            affect,
            ..
        } = agent;
        for index in 0..inner.considerations.len() {
            let (name, updater) = (
                inner.considerations[index].name,
                inner.considerations[index].updater.clone(),
            );
            let adjustment = lookup(rate_adjustments, name).unwrap_or(0.0);
            let new_value = match updater {
                Updater::LinearDecay { rate } => {
                    Some(inner.considerations[index].value - (rate + adjustment) * hours)
                }
                Updater::LinearRegen { rate } => {
                    Some(inner.considerations[index].value + (rate + adjustment) * hours)
                }
                Updater::EventDriven => None,
                Updater::PerceptionDriven
                | Updater::RelationshipDriven
                | Updater::ContextAggregate => {
                    self.values.value(inner, name, &updater, world).or_else(|| {
                        let c = &inner.considerations[index];
                        affect
                            .as_ref()
                            .and_then(|layer| layer.value_for(name, c.min, c.max))
                    })
                }
            };
            if let Some(value) = new_value.filter(|v| v.is_finite()) {
                let consideration = &mut inner.considerations[index];
                consideration.value = value;
                consideration.clamp_value();
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
    /// time is up. Returns whether an action continues past this tick.
    fn progress_running_action(
        &self,
        agent: &mut SimulatedAgent,
        hours: f64,
        events: &mut Vec<SimEvent>,
    ) -> bool {
        let Some(running) = agent.running.as_mut() else {
            return false;
        };
        let duration = running.action.duration_hours;
        let remaining = (duration - running.elapsed_hours).max(0.0);
        let finishes = remaining <= hours + DURATION_SLACK * duration.max(1.0);
        let step = if finishes { remaining } else { hours };
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
        if finishes {
            events.push(SimEvent::ActionCompleted {
                provider: running.provider.clone(),
                action: running.action.id.clone(),
            });
            let effects = &running.action.effects;
            let facts = &mut agent.agent.facts;
            facts.retain(|fact| !effects.removes.contains(fact));
            for fact in &effects.adds {
                if !facts.contains(fact) {
                    facts.push(*fact);
                }
            }
            if self.settle_resources {
                let resources = &mut agent.agent.resources;
                let settle =
                    |resources: &mut Vec<(Symbol, f64)>, name: Symbol, delta: f64| match resources
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
            agent.running = None;
            return false;
        }
        true
    }

    fn start(
        agent: &mut SimulatedAgent,
        world: &World,
        candidate: &Candidate,
        now: f64,
        player_queued: bool,
    ) -> SimEvent {
        let provider = &world.providers[candidate.provider];
        let action = provider.actions[candidate.action].clone();
        let event = SimEvent::ActionStarted {
            provider: provider.id.clone(),
            action: action.id.clone(),
            utility: candidate.utility,
            player_queued,
        };
        agent.running = Some(RunningAction {
            provider: provider.id.clone(),
            action,
            started_at_hours: now,
            elapsed_hours: 0.0,
            continuation_utility: candidate.utility,
            player_queued,
        });
        event
    }

    /// Starts the first queue entry that can start, dropping the ones that cannot.
    fn start_queued(
        &self,
        agent: &mut SimulatedAgent,
        request: &TickRequest<'_>,
        seed: u64,
        events: &mut Vec<SimEvent>,
    ) {
        let world = request.world;
        while let Some(entry) = agent.queue.pop_front() {
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
                });
                if entry.from_plan {
                    Self::abandon_plan(agent, events);
                }
                continue;
            };
            let ranking = self.decider.rank(&agent.agent, world, seed);
            if let Some(candidate) = ranking
                .ranked
                .iter()
                .find(|c| c.provider == provider && c.action == action)
            {
                let event = Self::start(
                    agent,
                    world,
                    candidate,
                    request.now_hours,
                    entry.player_queued,
                );
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
            });
            if entry.from_plan {
                Self::abandon_plan(agent, events);
            }
        }
    }

    /// Drops the rest of a broken plan (the queue's non-player entries: only plans put them
    /// there), so the goal behind it is planned afresh from where the agent now stands.
    fn abandon_plan(agent: &mut SimulatedAgent, events: &mut Vec<SimEvent>) {
        let (orders, rest): (VecDeque<QueuedAction>, VecDeque<QueuedAction>) =
            std::mem::take(&mut agent.queue)
                .into_iter()
                .partition(|entry| entry.player_queued);
        agent.queue = orders;
        events.extend(rest.into_iter().map(|entry| SimEvent::QueueEntryDropped {
            provider: entry.provider,
            action: entry.action,
            reason: "plan_broken",
        }));
    }

    /// Starts the next queue entry or, with nothing queued that can start, the autonomous
    /// pick.
    fn start_next(
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
            let event = Self::start(agent, world, &candidate, request.now_hours, false);
            events.push(event);
        }
    }

    /// `near` holds a grid of every provider and scoring buffers, built by the first agent
    /// that needs them and reused by the next (positions and radii do not change within a
    /// tick; occupancy does, so the grid keeps full providers too).
    fn consider_preemption(
        &self,
        agent: &mut SimulatedAgent,
        request: &TickRequest<'_>,
        seed: u64,
        near: &mut Option<(ProviderGrid, Scratch)>,
        events: &mut Vec<SimEvent>,
    ) {
        let Some(running) = agent.running.as_ref() else {
            return;
        };
        let considerations = &agent.agent.considerations;
        if !considerations.iter().any(|c| c.is_critical()) {
            return;
        }
        let collapse_fraction = self.decider.tuning().imminent_collapse_fraction;
        if running.player_queued
            && !considerations
                .iter()
                .any(|c| c.is_collapsing(collapse_fraction))
        {
            return;
        }
        let world = request.world;
        let (grid, scratch) =
            near.get_or_insert_with(|| (ProviderGrid::of_all(world), Scratch::default()));
        let mut rng = DetRng::new(seed);
        let Some(pick) = self
            .decider
            .pick_near(&agent.agent, world, grid, &mut rng, scratch)
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
        if same || candidate.utility <= threshold {
            return;
        }
        let preempted = SimEvent::ActionPreempted {
            provider: running.provider.clone(),
            action: running.action.id.clone(),
            by_provider: replacement.id.clone(),
            by_action: replacement.actions[candidate.action].id.clone(),
        };
        events.push(preempted);
        let started = Self::start(agent, world, &candidate, request.now_hours, false);
        events.push(started);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `LashOut` → `lash_out`: how the service named core events before they named themselves.
    fn snake_case(variant: &str) -> String {
        let mut name = String::new();
        for (i, c) in variant.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                name.push('_');
            }
            name.push(c.to_ascii_lowercase());
        }
        name
    }

    #[test]
    fn every_event_is_named_after_its_variant() {
        for kind in SimEventKind::VARIANTS {
            assert_eq!(kind.as_str(), snake_case(&format!("{kind:?}")));
        }
        let events = [
            SimEvent::BurstStarted,
            SimEvent::BurstEnded,
            SimEvent::LashOut {
                target: "ann".into(),
                intensity: 1.0,
            },
            SimEvent::AggregatedEventsApplied { count: 2 },
        ];
        for event in events {
            let debug = format!("{event:?}");
            let variant: String = debug
                .chars()
                .take_while(char::is_ascii_alphanumeric)
                .collect();
            assert_eq!(event.name(), snake_case(&variant), "{debug}");
        }
    }
}
