//! What a snapshot keeps of a simulated agent: its changing state, never its content.
//!
//! A [`SimulatedAgent`] mixes content shared by an archetype (a reactive set, an affect
//! persona, a schedule, bark lines, goal reactions — behind `Arc`s) with state that changes as
//! it lives (needs, resources, facts, the running action and queue, feelings, overrides,
//! memories, goals). [`AgentState`] is the second part only, serialisable with string enums;
//! [`AgentState::restore_onto`] lays it over an agent freshly built from the same content, so
//! a restored NPC picks up the content of the running version and the state of the saved one.
//!
//! Symbols are saved as their numbers: the zone saves its vocabulary beside the states and
//! lays it over the content's first (`Vocabulary::extend_to`), so they keep their meaning.

use serde::{Deserialize, Serialize};
use thin_vec::ThinVec;

use crate::affect::{AffectEvent, AffectState};
use crate::decision::agent::Agent;
use crate::life::action::{AggregatedEvent, DetailLevel, QueuedAction, RunningAction};
use crate::life::bark::BarkMemory;
use crate::life::goals::Goal;
use crate::life::reactive::SetState;
use crate::life::schedule::ScheduleOverride;
use crate::life::simulator::SimulatedAgent;
use crate::life::wellbeing::Wellbeing;
use crate::vocabulary::Symbol;

/// The changing state of one simulated agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentState {
    /// What decisions read: considerations with their values, resources, facts, commitments,
    /// personal contexts, the preferred provider and goal bonuses.
    pub agent: Agent,
    /// Trait adjustments of updater rates.
    pub rate_adjustments: ThinVec<(Symbol, f64)>,
    /// The action being carried out.
    pub running: Option<Box<RunningAction>>,
    /// Work waiting.
    pub queue: ThinVec<QueuedAction>,
    /// The level of the last advance.
    pub level: DetailLevel,
    /// Coarse events recorded while simplified.
    pub aggregated_events: ThinVec<AggregatedEvent>,
    /// The reactive set's memory (running set action, cooldowns, last decision).
    pub reactive: Option<SetState>,
    /// Feelings.
    pub affect: Option<AffectLayerState>,
    /// Schedule state.
    pub schedule: Option<ScheduleState>,
    /// Mood, stress and their memories.
    pub wellbeing: Option<Wellbeing>,
    /// When each line was last said.
    pub barks: Option<BarkMemory>,
    /// Goals.
    pub goals: Option<GoalBookState>,
    /// Why the game has taken the agent over, while it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engaged: Option<Box<str>>,
}

/// The changing part of an agent's affect layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AffectLayerState {
    /// The feelings and the overlay's memory.
    pub state: AffectState,
    /// Events waiting for the next affect tick.
    pub pending: Vec<AffectEvent>,
    /// Game seconds not yet spent on a tick.
    pub carry_s: f64,
}

/// The changing part of an agent's schedule layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScheduleState {
    /// Placeholder values (`workplace` → `forge`).
    pub places: Vec<(String, String)>,
    /// Temporary overrides.
    pub overrides: Vec<ScheduleOverride>,
    /// The activity in force.
    pub current: Option<Symbol>,
}

/// The changing part of an agent's goal book.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GoalBookState {
    /// Active goals, oldest first.
    pub goals: Vec<Goal>,
    /// Goals whose plan failed.
    pub blocked: Vec<String>,
}

/// Why a saved state does not fit the agent the current content builds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateMismatch {
    /// The saved state has a layer the content no longer gives this agent.
    #[error("the saved state has {0} but the current content gives this NPC none")]
    MissingLayer(&'static str),
    /// The saved feelings do not fit the persona's states.
    #[error("the saved feelings hold {saved} states but the persona has {current}")]
    AffectStates {
        /// States saved.
        saved: usize,
        /// States of the current persona.
        current: usize,
    },
}

impl AgentState {
    /// The changing state of `agent`.
    pub fn capture(agent: &SimulatedAgent) -> Self {
        Self {
            agent: agent.agent.clone(),
            rate_adjustments: agent.rate_adjustments.clone(),
            running: agent.running.clone(),
            queue: agent.queue.clone(),
            level: agent.level,
            aggregated_events: agent.aggregated_events.clone(),
            reactive: agent
                .layers
                .reactive
                .as_ref()
                .map(|layer| layer.state.clone()),
            affect: agent.layers.affect.as_ref().map(|layer| AffectLayerState {
                state: layer.state.clone(),
                pending: layer.pending.clone(),
                carry_s: layer.carry_s,
            }),
            schedule: agent.layers.schedule.as_ref().map(|layer| ScheduleState {
                places: layer.places.clone(),
                overrides: layer.overrides.clone(),
                current: layer.current,
            }),
            wellbeing: agent.layers.wellbeing.as_deref().map(|(_, w)| w.clone()),
            barks: agent
                .layers
                .barks
                .as_deref()
                .map(|(_, memory)| memory.clone()),
            engaged: agent.layers.engaged.clone(),
            goals: agent.layers.goals.as_ref().map(|book| GoalBookState {
                goals: book.goals.clone(),
                blocked: book.blocked.clone(),
            }),
        }
    }

    /// Lays this state over `agent`, built from the current content. A layer the state has
    /// must exist on the agent (else nothing changes and the mismatch is returned); a layer the
    /// state lacks is left as the content made it.
    pub fn restore_onto(self, agent: &mut SimulatedAgent) -> Result<(), StateMismatch> {
        let layer = |present: bool, saved: bool, name| {
            if saved && !present {
                Err(StateMismatch::MissingLayer(name))
            } else {
                Ok(())
            }
        };
        layer(
            agent.layers.reactive.is_some(),
            self.reactive.is_some(),
            "a reactive set",
        )?;
        layer(
            agent.layers.affect.is_some(),
            self.affect.is_some(),
            "feelings",
        )?;
        layer(
            agent.layers.schedule.is_some(),
            self.schedule.is_some(),
            "a schedule",
        )?;
        layer(
            agent.layers.wellbeing.is_some(),
            self.wellbeing.is_some(),
            "a mood",
        )?;
        layer(agent.layers.barks.is_some(), self.barks.is_some(), "barks")?;
        layer(agent.layers.goals.is_some(), self.goals.is_some(), "goals")?;
        if let (Some(layer), Some(saved)) = (&agent.layers.affect, &self.affect) {
            let current = layer.state.values.len();
            if saved.state.values.len() != current {
                return Err(StateMismatch::AffectStates {
                    saved: saved.state.values.len(),
                    current,
                });
            }
        }
        // The weight an unmet need carries in force (wellbeing raises it) is state; the
        // content's weight comes back at the next review once the need is met.
        let weighed: Vec<(Symbol, f64)> =
            agent
                .layers
                .wellbeing
                .as_deref()
                .map_or_else(Vec::new, |(config, _)| {
                    self.agent
                        .considerations
                        .iter()
                        .filter(|c| config.weights.iter().any(|(need, _)| *need == c.name))
                        .map(|c| (c.name, c.weight))
                        .collect()
                });
        agent.agent.take_state_from(self.agent);
        for (need, weight) in weighed {
            if let Some(c) = agent
                .agent
                .considerations
                .iter_mut()
                .find(|c| c.name == need)
            {
                c.weight = weight;
            }
        }
        agent.rate_adjustments = self.rate_adjustments;
        agent.running = self.running;
        agent.queue = self.queue;
        agent.layers.set_engaged(self.engaged);
        agent.level = self.level;
        agent.aggregated_events = self.aggregated_events;
        // A saved layer the agent lacks was refused above: an agent without layers has none
        // to lay state over.
        let Some(layers) = agent.layers.get_mut() else {
            return Ok(());
        };
        if let (Some(layer), Some(saved)) = (layers.reactive.as_mut(), self.reactive) {
            layer.state = saved;
        }
        if let (Some(layer), Some(saved)) = (layers.affect.as_mut(), self.affect) {
            layer.state = saved.state;
            layer.pending = saved.pending;
            layer.carry_s = saved.carry_s;
        }
        if let (Some(layer), Some(saved)) = (layers.schedule.as_mut(), self.schedule) {
            layer.places = saved.places;
            layer.overrides = saved.overrides;
            layer.current = saved.current;
        }
        if let (Some((_, wellbeing)), Some(saved)) =
            (layers.wellbeing.as_deref_mut(), self.wellbeing)
        {
            *wellbeing = saved;
        }
        if let (Some((_, memory)), Some(saved)) = (layers.barks.as_deref_mut(), self.barks) {
            *memory = saved;
        }
        if let (Some(book), Some(saved)) = (layers.goals.as_mut(), self.goals) {
            book.goals = saved.goals;
            book.blocked = saved.blocked;
        }
        Ok(())
    }
}
