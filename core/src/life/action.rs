//! The action types of an agent's life over time: the action it is carrying out
//! ([`RunningAction`]), the FIFO queue's entries ([`QueuedAction`]), the level of detail its
//! ticks run at ([`DetailLevel`]) and the coarse events recorded while it is simplified
//! ([`AggregatedEvent`]). Plain data shared by the simulator, goals, the planner and snapshots;
//! it imports nothing of theirs.

use std::sync::Arc;

use crate::decision::world::AdvertisedAction;
use crate::vocabulary::Symbol;

geppetto_wire_enum::wire_enum! {
    /// How much of the world an agent's tick simulates.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub enum DetailLevel {
        /// Every tick runs the decision loop (`full_tick_hours` each).
        #[default]
        Full = "full",
        /// Only needs drift and coarse events are recorded (`simplified_tick_hours` each).
        Simplified = "simplified",
    }
}

/// The action an agent is carrying out.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunningAction {
    /// Id of the provider it uses.
    pub provider: String,
    /// The advertisement as it was when the action started, its users not counted
    /// (`occupancy` 0: the world counts them), so that the starts of one action may share
    /// one copy (a zone tick's batch decision does: see [`RunningAction::copy_of`]).
    pub action: Arc<AdvertisedAction>,
    /// Game hour it started.
    pub started_at_hours: f64,
    /// Game hours of it already carried out.
    pub elapsed_hours: f64,
    /// Its utility when it was selected: what a preemption must beat (× margin).
    pub continuation_utility: f64,
    /// Whether a player ordered it (then only collapse interrupts it).
    pub player_queued: bool,
    /// The id of the player's order it carries out, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
    /// Set when the game carries the action out and reports its end itself (see
    /// [`GameCarried`]); absent, the simulator's timer ends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_by_game: Option<GameCarried>,
}

impl RunningAction {
    /// The copy of `advertised` a running action holds: the advertisement as it is, its
    /// occupancy left out (0), so every start of it holds equal copies and may share one.
    pub fn copy_of(advertised: &AdvertisedAction) -> Arc<AdvertisedAction> {
        Arc::new(AdvertisedAction {
            occupancy: 0,
            ..advertised.clone()
        })
    }
}

/// An action the game carries out: it reports the agent's arrival at the provider and the
/// action's end; the simulator only waits for those reports, until a deadline.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GameCarried {
    /// The agent is still walking to the provider: the action makes no progress yet.
    pub walking: bool,
    /// Game hour past which the action fails with reason `timeout` (a walk that never arrived,
    /// an action never reported done).
    pub deadline_hours: f64,
}

/// An entry of the FIFO action queue, resolved against the world when it is dequeued.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueuedAction {
    /// Provider id.
    pub provider: String,
    /// Action id.
    pub action: String,
    /// Whether a player ordered it.
    pub player_queued: bool,
    /// Whether a goal's plan put it there (a failed plan step drops the rest of its plan).
    pub from_plan: bool,
    /// The id of the player's order it is, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
}

/// A coarse event recorded while an agent was simplified.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AggregatedEvent {
    /// Its name (`meal`, `sleep`…), looked up in the effects table.
    pub name: Symbol,
    /// Game hour it happened.
    pub at_hours: f64,
}
