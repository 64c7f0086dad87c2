//! The scenario file of `geppetto simulate` (YAML or JSON): the agent and world of the decide
//! contract plus a start hour, a duration, a queue and a timeline of changes; and the JSONL
//! trace line each tick prints.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::WireError;
use super::compile;
use super::request::{AgentSpec, ContextSpec, ProviderSpec, WorldSpec};
use super::response::{OrderedMap, round4};
use crate::decision::tuning::TuningPatch;
use crate::life::action::{DetailLevel, QueuedAction};
use crate::life::scenario::{Scenario, TickRecord, TimelineEntry};
use crate::life::simulator::{SimEvent, SimulatedAgent};
use crate::vocabulary::{Symbol, Vocabulary};

/// Longest scenario, game hours (a leap year): a run is a tick a minute, so a longer one would
/// run for ages.
pub const MAX_SCENARIO_HOURS: f64 = 8784.0;

/// Hours a scenario runs when it says nothing (and `--hours` is not given).
pub const DEFAULT_SCENARIO_HOURS: f64 = 24.0;

fn default_hours() -> f64 {
    DEFAULT_SCENARIO_HOURS
}

/// A detail level on the wire.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LevelSpec {
    /// Full detail.
    #[default]
    Full,
    /// Simplified.
    Simplified,
}

impl From<LevelSpec> for DetailLevel {
    fn from(level: LevelSpec) -> Self {
        match level {
            LevelSpec::Full => DetailLevel::Full,
            LevelSpec::Simplified => DetailLevel::Simplified,
        }
    }
}

/// A queue entry.
#[derive(Clone, Debug, Deserialize)]
pub struct QueueSpec {
    /// Provider id.
    pub provider: String,
    /// Action id.
    pub action: String,
    /// Ordered by a player.
    #[serde(default)]
    pub player_queued: bool,
}

/// A timeline entry.
#[derive(Clone, Debug, Deserialize)]
pub struct TimelineSpec {
    /// Game hour it applies.
    pub at_hours: f64,
    /// Switch the detail level.
    #[serde(default)]
    pub level: Option<LevelSpec>,
    /// Coarse event to record while simplified.
    #[serde(default)]
    pub event: Option<String>,
    /// Work to enqueue.
    #[serde(default)]
    pub enqueue: Vec<QueueSpec>,
    /// Event-driven changes to considerations.
    #[serde(default)]
    pub set_considerations: BTreeMap<String, f64>,
    /// Perception values to set.
    #[serde(default)]
    pub perceptions: BTreeMap<String, f64>,
    /// Relationship values to set.
    #[serde(default)]
    pub relationships: BTreeMap<String, f64>,
    /// Context-aggregate values to set.
    #[serde(default)]
    pub context_aggregates: BTreeMap<String, f64>,
    /// Replace the active contexts.
    #[serde(default)]
    pub contexts: Option<Vec<ContextSpec>>,
    /// Providers that appear.
    #[serde(default)]
    pub add_providers: Vec<ProviderSpec>,
    /// Providers that disappear (ids).
    #[serde(default)]
    pub remove_providers: Vec<String>,
}

/// A scenario file.
#[derive(Clone, Debug, Deserialize)]
pub struct ScenarioSpec {
    /// Seed (`--seed` overrides).
    #[serde(default)]
    pub seed: u64,
    /// Profile name; default `default`.
    #[serde(default)]
    pub profile: Option<String>,
    /// Tuning over the profile.
    #[serde(default)]
    pub tuning: TuningPatch,
    /// Game hour of the first tick.
    #[serde(default)]
    pub start_hours: f64,
    /// Game hours to run (`--hours` overrides); default 24.
    #[serde(default = "default_hours")]
    pub hours: f64,
    /// Level of the first tick.
    #[serde(default)]
    pub level: LevelSpec,
    /// The agent.
    pub agent: AgentSpec,
    /// Linear-rate adjustments per consideration (traits).
    #[serde(default)]
    pub rate_adjustments: BTreeMap<String, f64>,
    /// The world at the start (`now_hours` is replaced by `start_hours`).
    pub world: WorldSpec,
    /// Name of a reactive utility set (from `config/sets/`) the agent carries.
    #[serde(default)]
    pub reactive_set: Option<String>,
    /// Work queued at the start.
    #[serde(default)]
    pub queue: Vec<QueueSpec>,
    /// Changes over time.
    #[serde(default)]
    pub timeline: Vec<TimelineSpec>,
}

fn queued(specs: &[QueueSpec]) -> Vec<QueuedAction> {
    specs
        .iter()
        .map(|q| QueuedAction {
            provider: q.provider.clone(),
            action: q.action.clone(),
            player_queued: q.player_queued,
            from_plan: false,
            order: None,
        })
        .collect()
}

fn values(
    path: &str,
    map: &BTreeMap<String, f64>,
    vocabulary: &mut Vocabulary,
) -> Result<Vec<(Symbol, f64)>, WireError> {
    map.iter()
        .map(|(name, value)| {
            if value.is_finite() {
                Ok((vocabulary.intern(name), *value))
            } else {
                Err(WireError::at(
                    &format!("{path}.{name}"),
                    "must be a finite number",
                ))
            }
        })
        .collect()
}

fn timeline_entry(
    path: &str,
    spec: &TimelineSpec,
    vocabulary: &mut Vocabulary,
) -> Result<TimelineEntry, WireError> {
    if !spec.at_hours.is_finite() {
        return Err(WireError::at(
            &format!("{path}.at_hours"),
            "must be a finite number",
        ));
    }
    let contexts = match &spec.contexts {
        Some(contexts) => {
            let world = WorldSpec {
                now_hours: 0.0,
                contexts: contexts.clone(),
                providers: Vec::new(),
                perceptions: BTreeMap::new(),
                relationships: BTreeMap::new(),
                context_aggregates: BTreeMap::new(),
            };
            Some(compile::world(path, &world, vocabulary)?.contexts)
        }
        None => None,
    };
    let add_providers = spec
        .add_providers
        .iter()
        .enumerate()
        .map(|(i, p)| compile::provider(&format!("{path}.add_providers[{i}]"), p, vocabulary))
        .collect::<Result<_, _>>()?;
    Ok(TimelineEntry {
        at_hours: spec.at_hours,
        level: spec.level.map(DetailLevel::from),
        event: spec.event.as_deref().map(|event| vocabulary.intern(event)),
        enqueue: queued(&spec.enqueue),
        set_considerations: values(
            &format!("{path}.set_considerations"),
            &spec.set_considerations,
            vocabulary,
        )?,
        perceptions: values(
            &format!("{path}.perceptions"),
            &spec.perceptions,
            vocabulary,
        )?,
        relationships: values(
            &format!("{path}.relationships"),
            &spec.relationships,
            vocabulary,
        )?,
        context_aggregates: values(
            &format!("{path}.context_aggregates"),
            &spec.context_aggregates,
            vocabulary,
        )?,
        contexts,
        add_providers,
        remove_providers: spec.remove_providers.clone(),
    })
}

/// Builds a runnable scenario; `hours` overrides the file's duration.
pub fn compile_scenario(
    spec: &ScenarioSpec,
    hours: Option<f64>,
    vocabulary: &mut Vocabulary,
) -> Result<Scenario, WireError> {
    let hours = hours.unwrap_or(spec.hours);
    if !(hours.is_finite() && (0.0..=MAX_SCENARIO_HOURS).contains(&hours)) {
        return Err(WireError::at(
            "hours",
            format!("must be a number of game hours from 0 to {MAX_SCENARIO_HOURS} (a year)"),
        ));
    }
    if !spec.start_hours.is_finite() {
        return Err(WireError::at("start_hours", "must be a finite number"));
    }
    let mut agent = SimulatedAgent::new(compile::agent("agent", &spec.agent, vocabulary)?);
    agent.rate_adjustments = values("rate_adjustments", &spec.rate_adjustments, vocabulary)?.into();
    agent.queue.extend(queued(&spec.queue));
    agent.level = spec.level.into();
    let mut world = compile::world("world", &spec.world, vocabulary)?;
    world.now_hours = spec.start_hours;
    let mut timeline = spec
        .timeline
        .iter()
        .enumerate()
        .map(|(i, entry)| timeline_entry(&format!("timeline[{i}]"), entry, vocabulary))
        .collect::<Result<Vec<_>, _>>()?;
    timeline.sort_by(|a, b| a.at_hours.total_cmp(&b.at_hours));
    Ok(Scenario {
        agent,
        world,
        start_hours: spec.start_hours,
        hours,
        level: spec.level.into(),
        timeline,
    })
}

/// The action in a trace line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ActionOut {
    /// Provider id.
    pub provider: String,
    /// Action id.
    pub action: String,
    /// Hours of it carried out.
    pub elapsed_hours: f64,
    /// Ordered by a player.
    pub player_queued: bool,
}

/// A simulation event on the wire, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventOut {
    /// See [`SimEvent::ActionStarted`].
    ActionStarted {
        /// Provider id.
        provider: String,
        /// Action id.
        action: String,
        /// Frozen utility.
        utility: f64,
        /// Ordered by a player.
        player_queued: bool,
    },
    /// See [`SimEvent::ActionCompleted`].
    ActionCompleted {
        /// Provider id.
        provider: String,
        /// Action id.
        action: String,
    },
    /// See [`SimEvent::ActionPreempted`].
    ActionPreempted {
        /// Provider id.
        provider: String,
        /// Action id.
        action: String,
        /// Replacement provider.
        by_provider: String,
        /// Replacement action.
        by_action: String,
    },
    /// See [`SimEvent::QueueEntryDropped`].
    QueueEntryDropped {
        /// Provider id.
        provider: String,
        /// Action id.
        action: String,
        /// Why.
        reason: String,
    },
    /// See [`SimEvent::ActionTimedOut`].
    ActionTimedOut {
        /// Provider id.
        provider: String,
        /// Action id.
        action: String,
    },
    /// See [`SimEvent::CommitmentExpired`].
    CommitmentExpired {
        /// Tags it forbade.
        forbid_tags: Vec<String>,
        /// When.
        expires_at: f64,
    },
    /// See [`SimEvent::ActionInterrupted`].
    ActionInterrupted {
        /// Provider id.
        provider: String,
        /// Action id.
        action: String,
        /// The interrupting set.
        by_set: String,
        /// The interrupting set action.
        by_action: String,
    },
    /// See [`SimEvent::ReactiveStarted`].
    ReactiveStarted {
        /// The set.
        set: String,
        /// The set action.
        action: String,
        /// Its bucket.
        bucket: u32,
    },
    /// See [`SimEvent::ReactiveEnded`].
    ReactiveEnded {
        /// The set.
        set: String,
        /// The set action.
        action: String,
    },
    /// See [`SimEvent::ActivityChanged`].
    ActivityChanged {
        /// Before.
        from: Option<String>,
        /// After.
        to: Option<String>,
    },
    /// See [`SimEvent::GoalCreated`].
    GoalCreated {
        /// Description.
        description: String,
    },
    /// See [`SimEvent::GoalCompleted`].
    GoalCompleted {
        /// Description.
        description: String,
    },
    /// See [`SimEvent::GoalFailed`].
    GoalFailed {
        /// Description.
        description: String,
    },
    /// See [`SimEvent::GoalBlocked`].
    GoalBlocked {
        /// Description.
        description: String,
        /// Why.
        reason: String,
    },
    /// See [`SimEvent::Bark`].
    Bark {
        /// Template id.
        id: String,
        /// Text.
        text: String,
    },
    /// See [`SimEvent::BurstStarted`].
    BurstStarted,
    /// See [`SimEvent::BurstEnded`].
    BurstEnded,
    /// See [`SimEvent::LashOut`].
    LashOut {
        /// Who.
        target: String,
        /// How hard.
        intensity: f64,
    },
    /// See [`SimEvent::LevelChanged`].
    LevelChanged {
        /// Before.
        from: &'static str,
        /// After.
        to: &'static str,
    },
    /// See [`SimEvent::AggregatedEventsApplied`].
    AggregatedEventsApplied {
        /// How many.
        count: usize,
    },
}

impl EventOut {
    /// The wire form of `event`, names resolved through `vocabulary`.
    pub fn from_event(event: &SimEvent, vocabulary: &Vocabulary) -> Self {
        match event {
            SimEvent::ActionStarted {
                provider,
                action,
                utility,
                player_queued,
            } => Self::ActionStarted {
                provider: provider.clone(),
                action: action.clone(),
                utility: round4(*utility),
                player_queued: *player_queued,
            },
            SimEvent::ActionCompleted { provider, action } => Self::ActionCompleted {
                provider: provider.clone(),
                action: action.clone(),
            },
            SimEvent::ActionPreempted {
                provider,
                action,
                by_provider,
                by_action,
            } => Self::ActionPreempted {
                provider: provider.clone(),
                action: action.clone(),
                by_provider: by_provider.clone(),
                by_action: by_action.clone(),
            },
            SimEvent::QueueEntryDropped {
                provider,
                action,
                reason,
                ..
            } => Self::QueueEntryDropped {
                provider: provider.clone(),
                action: action.clone(),
                reason: (*reason).to_owned(),
            },
            SimEvent::ActionTimedOut {
                provider, action, ..
            } => Self::ActionTimedOut {
                provider: provider.clone(),
                action: action.clone(),
            },
            SimEvent::CommitmentExpired {
                forbid_tags,
                expires_at,
            } => Self::CommitmentExpired {
                forbid_tags: forbid_tags
                    .iter()
                    .map(|t| vocabulary.name(*t).to_owned())
                    .collect(),
                expires_at: *expires_at,
            },
            SimEvent::ActionInterrupted {
                provider,
                action,
                by_set,
                by_action,
            } => Self::ActionInterrupted {
                provider: provider.clone(),
                action: action.clone(),
                by_set: by_set.clone(),
                by_action: by_action.clone(),
            },
            SimEvent::ReactiveStarted {
                set,
                action,
                bucket,
            } => Self::ReactiveStarted {
                set: set.clone(),
                action: action.clone(),
                bucket: *bucket,
            },
            SimEvent::ReactiveEnded { set, action } => Self::ReactiveEnded {
                set: set.clone(),
                action: action.clone(),
            },
            SimEvent::ActivityChanged { from, to } => Self::ActivityChanged {
                from: from.map(|s| vocabulary.name(s).to_owned()),
                to: to.map(|s| vocabulary.name(s).to_owned()),
            },
            SimEvent::GoalCreated { goal } => Self::GoalCreated {
                description: goal.description.clone(),
            },
            SimEvent::GoalCompleted { goal } => Self::GoalCompleted {
                description: goal.description.clone(),
            },
            SimEvent::GoalFailed { goal, .. } => Self::GoalFailed {
                description: goal.description.clone(),
            },
            SimEvent::GoalBlocked { goal, reason } => Self::GoalBlocked {
                description: goal.description.clone(),
                reason: (*reason).to_owned(),
            },
            SimEvent::Bark { id, text } => Self::Bark {
                id: id.clone(),
                text: text.clone(),
            },
            SimEvent::BurstStarted => Self::BurstStarted,
            SimEvent::BurstEnded => Self::BurstEnded,
            SimEvent::LashOut { target, intensity } => Self::LashOut {
                target: target.clone(),
                intensity: round4(*intensity),
            },
            SimEvent::LevelChanged { from, to } => Self::LevelChanged {
                from: from.as_str(),
                to: to.as_str(),
            },
            SimEvent::AggregatedEventsApplied { count } => {
                Self::AggregatedEventsApplied { count: *count }
            }
        }
    }
}

/// One JSONL line of `geppetto simulate`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceLine {
    /// Tick number.
    pub tick: u64,
    /// Game hour.
    pub now_hours: f64,
    /// Level.
    pub level: &'static str,
    /// Every consideration's value, in the agent's order.
    pub considerations: OrderedMap<f64>,
    /// What it is doing.
    pub action: Option<ActionOut>,
    /// Queue length.
    pub queued: usize,
    /// What happened this tick.
    pub events: Vec<EventOut>,
}

impl TraceLine {
    /// The trace line of a tick record.
    pub fn from_record(record: &TickRecord<'_>, vocabulary: &Vocabulary) -> Self {
        let agent = record.agent;
        Self {
            tick: record.tick,
            now_hours: round4(record.now_hours),
            level: record.level.as_str(),
            considerations: OrderedMap(
                agent
                    .agent
                    .considerations
                    .iter()
                    .map(|c| (vocabulary.name(c.name).to_owned(), round4(c.value)))
                    .collect(),
            ),
            action: agent.running.as_ref().map(|r| ActionOut {
                provider: r.provider.clone(),
                action: r.action.id.clone(),
                elapsed_hours: round4(r.elapsed_hours),
                player_queued: r.player_queued,
            }),
            queued: agent.queue.len(),
            events: record
                .events
                .iter()
                .map(|e| EventOut::from_event(e, vocabulary))
                .collect(),
        }
    }
}
