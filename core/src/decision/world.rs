//! The world as one decision sees it: providers (objects, places, actors) at positions,
//! advertising actions with deltas, costs, preconditions and capacities; the active contexts;
//! and the current game hour. Built by the caller; the engine only reads it.

use crate::vocabulary::Symbol;
use thin_vec::ThinVec;

/// A point in world units. Two-dimensional worlds leave `z` at 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Position {
    /// East–west.
    pub x: f64,
    /// North–south.
    pub y: f64,
    /// Height.
    pub z: f64,
}

impl Position {
    /// A point on the ground plane.
    pub fn new(x: f64, y: f64) -> Self {
        Self { x, y, z: 0.0 }
    }

    /// Euclidean distance.
    pub fn distance_to(&self, other: &Position) -> f64 {
        let (dx, dy, dz) = (self.x - other.x, self.y - other.y, self.z - other.z);
        (dx * dx + dy * dy + dz * dz).sqrt()
    }
}

/// A comparison a consideration precondition applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

impl CompareOp {
    /// Whether `left op right` holds.
    pub fn holds(self, left: f64, right: f64) -> bool {
        match self {
            Self::Lt => left < right,
            Self::Le => left <= right,
            Self::Gt => left > right,
            Self::Ge => left >= right,
            Self::Eq => left == right,
            Self::Ne => left != right,
        }
    }
}

/// Something that must hold for an action to be eligible.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precondition {
    /// The agent's consideration compared with a value; fails if the agent lacks it.
    Consideration {
        /// Which consideration.
        name: Symbol,
        /// How to compare.
        op: CompareOp,
        /// Compared with.
        value: f64,
    },
    /// The agent must have this capability.
    Capability(Symbol),
    /// The agent must hold at least `min` of a resource.
    Resource {
        /// Which resource.
        name: Symbol,
        /// The minimum held.
        min: f64,
    },
    /// The provider must be in this state.
    ProviderState(Symbol),
    /// The agent must hold this symbolic fact (`has:ore`, `knows:recipe`).
    Fact(Symbol),
}

/// What an action does to the symbolic world the planner reasons over, beyond its
/// consideration deltas: facts it makes true or false, resources it yields (its costs are
/// what it takes).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ActionEffects {
    /// Facts that hold afterwards.
    pub adds: ThinVec<Symbol>,
    /// Facts that no longer hold afterwards.
    pub removes: ThinVec<Symbol>,
    /// Resources gained.
    pub yields: ThinVec<(Symbol, f64)>,
}

/// An action a provider advertises.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AdvertisedAction {
    /// Unique within its provider.
    pub id: String,
    /// Tags personality and contexts act on (`food`, `indoor`, `violence`…).
    pub tags: ThinVec<Symbol>,
    /// The domain a domain preference acts on (`work`, `rest`…).
    pub domain: Option<Symbol>,
    /// Promised change per consideration.
    pub deltas: ThinVec<(Symbol, f64)>,
    /// Game hours the action takes.
    pub duration_hours: f64,
    /// A structural preference, multiplied by the tuning's priority weight.
    pub intrinsic_priority: f64,
    /// Inclusive advertisement radius; `None` is unlimited.
    pub radius: Option<f64>,
    /// Concurrent users allowed; 0 is unlimited (unlike a provider's capacity).
    pub capacity: u32,
    /// Users now.
    pub occupancy: u32,
    /// Must all hold.
    pub preconditions: ThinVec<Precondition>,
    /// Resources it costs.
    pub costs: ThinVec<(Symbol, f64)>,
    /// Its symbolic effects, for planning.
    pub effects: ActionEffects,
}

impl AdvertisedAction {
    /// An action with no tags, deltas, costs or limits.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            tags: ThinVec::new(),
            domain: None,
            deltas: ThinVec::new(),
            duration_hours: 0.0,
            intrinsic_priority: 0.0,
            radius: None,
            capacity: 0,
            occupancy: 0,
            preconditions: ThinVec::new(),
            costs: ThinVec::new(),
            effects: ActionEffects::default(),
        }
    }

    /// Free action-level slots; `None` means unlimited.
    pub fn free_slots(&self) -> Option<u32> {
        (self.capacity != 0).then(|| self.capacity.saturating_sub(self.occupancy))
    }
}

/// An object, place or actor that advertises actions.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Provider {
    /// Unique in the world.
    pub id: String,
    /// Where it is.
    pub position: Position,
    /// Concurrent users allowed; 0 means no slot at all.
    pub capacity: u32,
    /// Users now.
    pub occupants: u32,
    /// Its state (`open`, `closed`…), read by provider-state preconditions.
    pub state: Option<Symbol>,
    /// What it offers.
    pub actions: Vec<AdvertisedAction>,
}

impl Provider {
    /// Free provider-level slots.
    pub fn free_slots(&self) -> u32 {
        self.capacity.saturating_sub(self.occupants)
    }
}

/// A situation that multiplies tagged actions (a storm favouring `indoor`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Context {
    /// Its name.
    pub name: Symbol,
    /// Multiplier per tag; applied squared (see the scoring module).
    pub tag_multipliers: Vec<(Symbol, f64)>,
}

/// Everything a decision reads besides the agent.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct World {
    /// The game hour now.
    pub now_hours: f64,
    /// Active contexts.
    pub contexts: Vec<Context>,
    /// Providers, in input order (ties in utility keep this order).
    pub providers: Vec<Provider>,
    /// Current values of perception-driven considerations, by name.
    pub perceptions: Vec<(Symbol, f64)>,
    /// Current values of relationship-driven considerations, by name.
    pub relationships: Vec<(Symbol, f64)>,
    /// Current values of context-aggregate considerations, by name.
    pub context_aggregates: Vec<(Symbol, f64)>,
}

/// `M_context` of a tag: `Π m·m` over `contexts`, in order, of each context's first multiplier
/// of `tag` (1 when none names it).
pub(crate) fn context_multiplier(contexts: &[Context], tag: Symbol) -> f64 {
    let mut product = 1.0;
    for context in contexts {
        if let Some((_, multiplier)) = context.tag_multipliers.iter().find(|(t, _)| *t == tag) {
            product *= multiplier * multiplier;
        }
    }
    product
}
