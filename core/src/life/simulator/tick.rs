//! An advance's inputs and outputs: the [`TickRequest`], the [`SimEvent`]s that happen, the
//! [`TickResult`], and where an agent stands after preparation ([`Stage`], [`Prepared`]).
//! It owns no behaviour; the steps that produce these live in the sibling files.

use crate::decision::world::World;
use crate::life::action::DetailLevel;
use crate::life::goals::GoalNote;
use crate::vocabulary::Symbol;

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
        /// The player's order it was, if any.
        order: Option<String>,
    },
    /// An action the game carries out was not reported done (or its walk not reported
    /// arrived) by its deadline: it is dropped and the agent decides again.
    ActionTimedOut {
        /// Provider id.
        provider: String,
        /// Action id.
        action: String,
        /// The player's order it carried out, if any.
        order: Option<String>,
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
        /// The goal.
        goal: GoalNote,
    },
    /// A goal was met.
    GoalCompleted {
        /// The goal.
        goal: GoalNote,
    },
    /// A goal failed.
    GoalFailed {
        /// The goal.
        goal: GoalNote,
        /// `deadline` (it passed) or `unreachable` (nothing in the world could meet it).
        reason: &'static str,
    },
    /// No plan reaches a goal (a story signal for a quest generator).
    GoalBlocked {
        /// The goal.
        goal: GoalNote,
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

geppetto_wire_enum::wire_enum! {
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
        /// `SimEvent::ActionTimedOut`.
        ActionTimedOut = "action_timed_out",
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
            Self::ActionTimedOut { .. } => SimEventKind::ActionTimedOut,
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

/// An agent after [`Simulator::prepare`]: where it stands and what has happened so far.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    /// Whether it needs a new action, may be preempted, or is done for this tick.
    pub stage: Stage,
    /// The tick's result so far.
    pub result: TickResult,
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
