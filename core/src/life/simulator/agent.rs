//! What an agent carries through simulated time: the [`SimulatedAgent`] and its optional layers,
//! the reactive set ([`ReactiveLayer`]) and feelings ([`AffectLayer`], which runs its own affect
//! ticks). How a tick moves them is the [`super::prepare`] and [`super::start`] steps' job.

use std::sync::Arc;

use super::tick::SimEvent;
use crate::affect::{AffectEvent, AffectModel, AffectState};
use crate::decision::agent::Agent;
use crate::life::action::{AggregatedEvent, DetailLevel, QueuedAction, RunningAction};
use crate::life::bark::{BarkLines, BarkMemory};
use crate::life::goals::GoalBook;
use crate::life::reactive::{SetState, UtilitySet};
use crate::life::reply::ReplyTemplate;
use crate::life::schedule::ScheduleLayer;
use crate::life::wellbeing::{Wellbeing, WellbeingConfig};
use crate::vocabulary::{Symbol, Vocabulary};
use thin_vec::ThinVec;

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

/// An agent's feelings carried through simulated time. Each advance runs as many
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
    pub(super) fn run(&mut self, hours: f64, events: &mut Vec<SimEvent>) {
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

/// An agent with a life over time: the decision data plus what it is doing and will do. What
/// an agent may lack is held by a pointer: the running action, and its optional layers
/// ([`Layers`]) all behind one, so a resident carrying none of them (most of a large zone's:
/// townsfolk without a persona, a schedule or goals) holds 8 bytes for them, not 72.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulatedAgent {
    /// What decisions read.
    pub agent: Agent,
    /// Additive adjustments of linear updater rates per consideration (traits: a glutton's
    /// hunger decays faster). They never touch other updater kinds.
    pub rate_adjustments: ThinVec<(Symbol, f64)>,
    /// The action being carried out, boxed: a resident between actions (most of a large
    /// zone's, away from any player) carries a pointer, not the action's 336 bytes.
    pub running: Option<Box<RunningAction>>,
    /// Work waiting, first in first out.
    pub queue: ThinVec<QueuedAction>,
    /// The level of the last advance.
    pub level: DetailLevel,
    /// Coarse events recorded while simplified.
    pub aggregated_events: ThinVec<AggregatedEvent>,
    /// The layers it carries: reads see every layer (absent ones as `None`), changes go
    /// through [`Layers::get_mut`] or [`Layers::make_mut`].
    pub layers: Layers,
}

/// The optional layers of an agent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayerSet {
    /// The reactive set it carries, if any.
    pub reactive: Option<Box<ReactiveLayer>>,
    /// Its feelings, if it has a persona.
    pub affect: Option<Box<AffectLayer>>,
    /// Its daily schedule, if it has one.
    pub schedule: Option<Box<ScheduleLayer>>,
    /// Its mood and stress, if tracked (with the config that derives them).
    pub wellbeing: Option<Box<(Arc<WellbeingConfig>, Wellbeing)>>,
    /// Its lines (prompted and idle) and its memory of saying them, if it barks.
    pub barks: Option<Box<(Arc<BarkLines>, BarkMemory)>>,
    /// Its archetype's reply lines, if it has its own (else the defaults answer).
    pub replies: Option<Arc<Vec<ReplyTemplate>>>,
    /// Its goals, if it pursues any.
    pub goals: Option<Box<GoalBook>>,
    /// Why the game has taken the agent over (a fight, a dialogue), while it has: its needs
    /// and feelings go on, but it starts nothing until it is given back.
    pub engaged: Option<Box<str>>,
}

/// What an agent carrying no layer reads.
static NO_LAYERS: LayerSet = LayerSet {
    reactive: None,
    affect: None,
    schedule: None,
    wellbeing: None,
    barks: None,
    replies: None,
    goals: None,
    engaged: None,
};

/// An agent's [`LayerSet`], allocated only once it carries a layer. It reads as the set
/// (every layer `None` when it carries none); changing one goes through [`Self::get_mut`]
/// (nothing to change when none is carried) or [`Self::make_mut`] (to add one).
#[derive(Clone, Debug, Default)]
pub struct Layers(Option<Box<LayerSet>>);

impl Layers {
    /// Whether the agent carries a set (reading it then reads one more allocation).
    pub fn carries_any(&self) -> bool {
        self.0.is_some()
    }

    /// The layers to change in place, when the agent carries a set.
    pub fn get_mut(&mut self) -> Option<&mut LayerSet> {
        self.0.as_deref_mut()
    }

    /// The layers to change, the set allocated if the agent carried none.
    pub fn make_mut(&mut self) -> &mut LayerSet {
        self.0.get_or_insert_with(Box::default)
    }

    /// Marks the agent taken over by the game for `why`, or given back (`None`: nothing is
    /// allocated to say an agent carrying no layer is not engaged).
    pub fn set_engaged(&mut self, why: Option<Box<str>>) {
        if why.is_some() || self.0.is_some() {
            self.make_mut().engaged = why;
        }
    }
}

impl std::ops::Deref for Layers {
    type Target = LayerSet;

    fn deref(&self) -> &LayerSet {
        self.0.as_deref().unwrap_or(&NO_LAYERS)
    }
}

/// Two agents' layers are equal when they carry the same ones, allocated or not.
impl PartialEq for Layers {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl SimulatedAgent {
    /// An idle, full-detail agent.
    pub fn new(agent: Agent) -> Self {
        Self {
            agent,
            rate_adjustments: ThinVec::new(),
            running: None,
            queue: ThinVec::new(),
            level: DetailLevel::Full,
            aggregated_events: ThinVec::new(),
            layers: Layers::default(),
        }
    }

    /// Appends work to the queue (the game decides what to enqueue and debits its costs).
    pub fn enqueue_action(
        &mut self,
        provider: impl Into<String>,
        action: impl Into<String>,
        player_queued: bool,
    ) {
        self.queue.push(QueuedAction {
            provider: provider.into(),
            action: action.into(),
            player_queued,
            from_plan: false,
            order: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every resident of a zone holds one, and a Background NPC's turn reads it cold: what an
    /// NPC may lack (a running action, a layer, a list) takes a pointer, not its room.
    #[test]
    fn a_resident_holds_pointers_for_what_it_lacks() {
        assert!(std::mem::size_of::<SimulatedAgent>() <= 184);
        assert!(std::mem::size_of::<Agent>() <= 136);
        assert_eq!(std::mem::size_of::<Layers>(), 8);
    }

    /// An agent without layers reads each as absent and allocates none until one is added;
    /// being given back by the game allocates nothing either.
    #[test]
    fn layers_are_allocated_only_once_one_is_carried() {
        let mut npc = SimulatedAgent::new(Agent::new("npc", Default::default()));
        assert!(npc.layers.goals.is_none() && npc.layers.engaged.is_none());
        assert!(npc.layers.get_mut().is_none());
        npc.layers.set_engaged(None);
        assert!(!npc.layers.carries_any());
        npc.layers.set_engaged(Some("a duel".into()));
        assert!(npc.layers.carries_any());
        assert_eq!(npc.layers.engaged.as_deref(), Some("a duel"));
        npc.layers.set_engaged(None);
        // Emptied again, it equals an agent that never carried a layer.
        assert_eq!(
            npc,
            SimulatedAgent::new(Agent::new("npc", Default::default()))
        );
        npc.layers.make_mut().goals = Some(Box::default());
        assert!(
            npc.layers
                .get_mut()
                .is_some_and(|layers| layers.goals.is_some())
        );
    }
}
