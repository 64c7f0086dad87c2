//! The agent as the decision engine sees it: position, considerations, personality (tag and
//! domain modifiers), resources, capabilities and narrative commitments.

use crate::consideration::Consideration;
use crate::vocabulary::Symbol;
use crate::world::{Context, Position};

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

/// One decision-making agent.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Agent {
    /// Unique among the agents of a batch; part of every derived seed.
    pub id: String,
    /// Where it is.
    pub position: Position,
    /// Its signals; names are unique.
    pub considerations: Vec<Consideration>,
    /// Multiplier per action tag (personality); absent is 1.
    pub tag_modifiers: Vec<(Symbol, f64)>,
    /// Multiplier per action domain; absent is 1.
    pub domain_preferences: Vec<(Symbol, f64)>,
    /// Resources held.
    pub resources: Vec<(Symbol, f64)>,
    /// Capabilities held.
    pub capabilities: Vec<Symbol>,
    /// Narrative commitments.
    pub commitments: Vec<Commitment>,
    /// Symbolic facts that hold for it (`has:hammer`), read by fact preconditions and plans.
    pub facts: Vec<Symbol>,
    /// Contexts that apply to this agent only (its schedule's activity), scored like the
    /// world's.
    pub contexts: Vec<Context>,
    /// A provider it is drawn to (its schedule's location) and the multiplier its actions get.
    pub preferred_provider: Option<(String, f64)>,
    /// Facts and resources its goals pursue, with the priority bonus an action that produces
    /// them gets (set by its goal book).
    pub goal_bonuses: Vec<(Symbol, f64)>,
}

impl Agent {
    /// An agent with nothing but an id and a position.
    pub fn new(id: impl Into<String>, position: Position) -> Self {
        Self {
            id: id.into(),
            position,
            considerations: Vec::new(),
            tag_modifiers: Vec::new(),
            domain_preferences: Vec::new(),
            resources: Vec::new(),
            capabilities: Vec::new(),
            commitments: Vec::new(),
            facts: Vec::new(),
            contexts: Vec::new(),
            preferred_provider: None,
            goal_bonuses: Vec::new(),
        }
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
