//! The agent as the decision engine sees it: position, considerations, personality (tag and
//! domain modifiers), resources, capabilities and narrative commitments.

use crate::decision::consideration::Consideration;
use crate::decision::world::Position;
use crate::vocabulary::Symbol;
use thin_vec::ThinVec;

/// A narrative promise that forbids actions with some tags until it expires.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Commitment {
    /// Actions carrying any of these tags are ineligible.
    pub forbid_tags: Vec<Symbol>,
    /// Active while absent or later than the world's hour.
    pub expires_at: Option<f64>,
}

impl Commitment {
    /// Whether the commitment binds at `now_hours`.
    pub fn is_active(&self, now_hours: f64) -> bool {
        self.expires_at
            .is_none_or(|expires_at| expires_at > now_hours)
    }
}

/// The pull of the activity an agent's schedule has in force: a bonus added to the utility
/// sum of the actions that fit it (see [`crate::decision::scoring`]), already scaled by the
/// agent's adherence, so a need pressing harder than the bonus wins over the schedule.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SchedulePull {
    /// The activity's tags: an action carrying one of them fits it.
    pub tags: Vec<Symbol>,
    /// The activity's place (a provider id): an action there fits it too.
    pub place: Option<String>,
    /// Added for an action carrying one of `tags`.
    pub tag_bonus: f64,
    /// Added for an action at `place`.
    pub place_bonus: f64,
    /// Whether the activity binds: while it is in force an action that does not carry one of
    /// its tags (of an activity with no tags: is not at its place) is removed (gate
    /// `off_schedule`) unless it restores a critical need, and a fitting action's preconditions
    /// on the agent's own needs give way to the schedule (one sleeps at night, tired or not). An empty binding activity — nothing fits that passes the other gates — binds
    /// nothing.
    #[serde(default)]
    pub binding: bool,
    /// The tags of the agent's other binding activities (its sleep, when another activity is
    /// in force): an action carrying one and lasting `reserved_from_hours` or more is removed
    /// (gate `off_schedule`) unless it restores a critical need, so what a binding activity
    /// binds keeps to its hours — one sleeps at night, not through the evening before it, and
    /// naps when one likes.
    #[serde(default)]
    pub reserved: Vec<Symbol>,
    /// The shortest action `reserved` holds back, game hours (0: every one).
    #[serde(default)]
    pub reserved_from_hours: f64,
}

/// One decision-making agent.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Agent {
    /// Unique among the agents of a batch; part of every derived seed.
    pub id: String,
    /// Where it is.
    pub position: Position,
    /// Its signals; names are unique.
    pub considerations: ThinVec<Consideration>,
    /// Multiplier per action tag (personality); absent is 1.
    pub tag_modifiers: ThinVec<(Symbol, f64)>,
    /// Multiplier per action domain; absent is 1.
    pub domain_preferences: ThinVec<(Symbol, f64)>,
    /// Resources held.
    pub resources: ThinVec<(Symbol, f64)>,
    /// Capabilities held.
    pub capabilities: ThinVec<Symbol>,
    /// Narrative commitments.
    pub commitments: ThinVec<Commitment>,
    /// Symbolic facts that hold for it (`has:hammer`), read by fact preconditions and plans.
    pub facts: ThinVec<Symbol>,
    /// What its schedule asks of it now (set by its schedule layer each tick), if anything.
    #[serde(default)]
    pub schedule: Option<Box<SchedulePull>>,
    /// The action it has just completed (provider id, action id), until it starts another:
    /// its utility is multiplied by the tuning's `repeat_factor` (boxed: most agents have
    /// none, and an agent's record stays small).
    #[serde(default)]
    pub just_completed: Option<Box<(Box<str>, Box<str>)>>,
    /// Facts and resources its goals pursue, with the priority bonus an action that produces
    /// them gets (set by its goal book).
    pub goal_bonuses: ThinVec<(Symbol, f64)>,
    /// Its needs that are running out: each one that its decay will take (or has taken) below
    /// its critical threshold, with the game hours until it does, 0 once it has (set by the
    /// simulator each tick). An action lasting longer that does not raise one is worth that
    /// share of itself (`M_foresight` in [`crate::decision::scoring`]): one eats before a
    /// night's sleep rather than wake starving. A `decide` agent has none.
    #[serde(default, skip_serializing_if = "ThinVec::is_empty")]
    pub running_out: ThinVec<(Symbol, f64)>,
}

impl Agent {
    /// An agent with nothing but an id and a position.
    pub fn new(id: impl Into<String>, position: Position) -> Self {
        Self {
            id: id.into(),
            position,
            considerations: ThinVec::new(),
            tag_modifiers: ThinVec::new(),
            domain_preferences: ThinVec::new(),
            resources: ThinVec::new(),
            capabilities: ThinVec::new(),
            commitments: ThinVec::new(),
            facts: ThinVec::new(),
            schedule: None,
            just_completed: None,
            goal_bonuses: ThinVec::new(),
            running_out: ThinVec::new(),
        }
    }

    /// Takes what changes as the agent lives from `saved` (a snapshot's agent): where it is,
    /// each consideration's value (by name, kept within this one's bounds), resources,
    /// commitments, facts, the schedule's pull, the action just completed, goal bonuses and
    /// the needs running out. What the content
    /// gives — each consideration's bounds, weight, curve, updater and thresholds, the
    /// personality, domain preferences and capabilities — stays as built, so a restored agent
    /// lives by the running version's content; a consideration the content no longer has is
    /// dropped, a new one starts at the content's value.
    pub fn take_state_from(&mut self, saved: Agent) {
        for consideration in &mut self.considerations {
            if let Some(value) = saved
                .considerations
                .iter()
                .find(|s| s.name == consideration.name)
                .map(|s| s.value)
            {
                let high = consideration.max().max(consideration.min());
                consideration.value = value.clamp(consideration.min(), high);
            }
        }
        self.position = saved.position;
        self.resources = saved.resources;
        self.commitments = saved.commitments;
        self.facts = saved.facts;
        self.schedule = saved.schedule;
        self.just_completed = saved.just_completed;
        self.goal_bonuses = saved.goal_bonuses;
        self.running_out = saved.running_out;
    }

    /// The consideration named `name`.
    pub fn consideration(&self, name: Symbol) -> Option<&Consideration> {
        self.considerations.iter().find(|c| c.name == name)
    }

    /// How much of `resource` the agent holds (0 if none).
    pub fn resource(&self, resource: Symbol) -> f64 {
        lookup(&self.resources, resource).unwrap_or(0.0)
    }
}

/// The value paired with `key` in a small association list.
pub(crate) fn lookup(pairs: &[(Symbol, f64)], key: Symbol) -> Option<f64> {
    pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}
