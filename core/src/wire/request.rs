//! The request side of the `decide` / `decide-batch` JSON contract, as
//! plain serde types. Unknown fields are ignored; missing required fields and wrong types are
//! refused by the parser with their JSON path. Semantic checks live in `compile`.
//!
//! A request's large parts (its agents, its world's providers) are type parameters: the
//! contract is the defaults (arrays of specs), and `wire::read` reads a request in two passes
//! that hold those parts as a count, then as raw text read one element at a time.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::decision::curve::ShapeParams;
use crate::decision::tuning::TuningPatch;

/// `geppetto decide` input.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(rename = "DecideRequest")]
pub struct DecideRequest<Agent = AgentSpec, World = WorldSpec> {
    /// The decision's seed.
    pub seed: u64,
    /// Profile name; default `default`.
    #[serde(default)]
    pub profile: Option<String>,
    /// Tuning overrides on top of the profile.
    #[serde(default)]
    pub tuning: TuningPatch,
    /// Who decides.
    pub agent: Agent,
    /// What they can choose from.
    pub world: World,
}

/// `geppetto decide-batch` input.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(rename = "DecideBatchRequest")]
pub struct DecideBatchRequest<Agents = Vec<AgentSpec>, World = WorldSpec> {
    /// The batch's seed (each agent derives its own from it and its id).
    pub seed: u64,
    /// Profile name; default `default`.
    #[serde(default)]
    pub profile: Option<String>,
    /// Tuning overrides on top of the profile.
    #[serde(default)]
    pub tuning: TuningPatch,
    /// Who decides; ids must be unique.
    pub agents: Agents,
    /// The shared world.
    pub world: World,
}

/// An agent.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct AgentSpec {
    /// Unique id.
    pub id: String,
    /// `[x, y]` or `[x, y, z]`.
    pub position: Vec<f64>,
    /// Its considerations; names unique.
    #[serde(default)]
    pub considerations: Vec<ConsiderationSpec>,
    /// Personality multiplier per tag.
    #[serde(default)]
    pub tag_modifiers: BTreeMap<String, f64>,
    /// Multiplier per domain.
    #[serde(default)]
    pub domain_preferences: BTreeMap<String, f64>,
    /// Resources held.
    #[serde(default)]
    pub resources: BTreeMap<String, f64>,
    /// Capabilities held.
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// Narrative commitments.
    #[serde(default)]
    pub commitments: Vec<CommitmentSpec>,
    /// Symbolic facts that hold for it (`has:hammer`).
    #[serde(default)]
    pub facts: Vec<String>,
}

/// A consideration.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct ConsiderationSpec {
    /// Its name (`HUNGER`).
    pub name: String,
    /// Current value, within `[min, max]`.
    pub value: f64,
    /// Lower bound.
    pub min: f64,
    /// Upper bound (`max <= min` ⇒ pressure 0).
    pub max: f64,
    /// Weight, default 1.
    #[serde(default = "one")]
    pub weight: f64,
    /// Response curve, default `convex` with the profile's exponent.
    #[serde(default)]
    pub curve: CurveSpec,
    /// Updater, default `event_driven`.
    #[serde(default)]
    pub updater: UpdaterSpec,
    /// Critical threshold (optional).
    #[serde(default)]
    pub critical_threshold: Option<f64>,
    /// Collapse threshold (optional; see `Consideration::collapse_threshold`).
    #[serde(default)]
    pub collapse_threshold: Option<f64>,
}

fn one() -> f64 {
    1.0
}

/// A response curve, tagged by `kind`. An unknown kind is kept and scores 0.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CurveSpec {
    /// `d^exponent` (0 ⇒ the profile's).
    Convex {
        /// Exponent; default 0.
        #[serde(default)]
        exponent: f64,
    },
    /// `d`.
    Linear,
    /// `below` if `value < threshold` else `above`.
    Step {
        /// Raw switching value.
        threshold: f64,
        /// Output below.
        below: f64,
        /// Output at or above.
        above: f64,
    },
    /// Logistic on the raw value.
    Logistic {
        /// Steepness (0 ⇒ 1).
        #[serde(default)]
        steepness: f64,
        /// Raw value of the half point.
        midpoint: f64,
    },
    /// `m(x − c)^k + b` on the normalised value.
    Polynomial(ShapeParams),
    /// The logistic's inverse on the normalised value.
    Logit(ShapeParams),
    /// `m·e^(−(x − c)²/2k²) + b` on the normalised value.
    Gaussian(ShapeParams),
    /// Piecewise linear through `[[x, y], …]` on the normalised value.
    Sampled {
        /// The keys.
        keys: Vec<[f64; 2]>,
    },
    /// Any other kind: pressure 0.
    #[serde(other)]
    Unknown,
}

impl Default for CurveSpec {
    fn default() -> Self {
        Self::Convex { exponent: 0.0 }
    }
}

/// An updater, tagged by `kind`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UpdaterSpec {
    /// Falls by `rate` per hour.
    LinearDecay {
        /// Units per hour.
        rate: f64,
    },
    /// Rises by `rate` per hour.
    LinearRegen {
        /// Units per hour.
        rate: f64,
    },
    /// Changed by events only.
    #[default]
    EventDriven,
    /// Read from perception.
    PerceptionDriven,
    /// Read from relationships.
    RelationshipDriven,
    /// Read from context aggregates.
    ContextAggregate,
}

/// A commitment.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct CommitmentSpec {
    /// Tags it forbids.
    #[serde(default)]
    pub forbid_tags: Vec<String>,
    /// Game hour it ends (absent: never).
    #[serde(default)]
    pub expires_at: Option<f64>,
}

/// The world.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(rename = "WorldSpec")]
pub struct WorldSpec<Providers = Vec<ProviderSpec>> {
    /// The game hour.
    #[serde(default)]
    pub now_hours: f64,
    /// Active contexts.
    #[serde(default)]
    pub contexts: Vec<ContextSpec>,
    /// Providers.
    pub providers: Providers,
    /// Values read by perception-driven considerations.
    #[serde(default)]
    pub perceptions: BTreeMap<String, f64>,
    /// Values read by relationship-driven considerations.
    #[serde(default)]
    pub relationships: BTreeMap<String, f64>,
    /// Values read by context-aggregate considerations.
    #[serde(default)]
    pub context_aggregates: BTreeMap<String, f64>,
}

/// A context.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct ContextSpec {
    /// Its name.
    pub name: String,
    /// Multiplier per tag (applied squared).
    #[serde(default)]
    pub tag_multipliers: BTreeMap<String, f64>,
}

/// A provider.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct ProviderSpec {
    /// Unique id.
    pub id: String,
    /// `[x, y]` or `[x, y, z]`.
    pub position: Vec<f64>,
    /// Slots; 0 = none.
    pub capacity: u32,
    /// Slots taken.
    #[serde(default)]
    pub occupants: u32,
    /// State for `provider_state` preconditions.
    #[serde(default)]
    pub state: Option<String>,
    /// Advertised actions.
    #[serde(default)]
    pub actions: Vec<ActionSpec>,
}

/// An advertised action.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct ActionSpec {
    /// Unique within the provider.
    pub id: String,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Domain.
    #[serde(default)]
    pub domain: Option<String>,
    /// Promised change per consideration.
    #[serde(default)]
    pub deltas: BTreeMap<String, f64>,
    /// Game hours; default 0.
    #[serde(default)]
    pub duration_hours: f64,
    /// Structural preference.
    #[serde(default)]
    pub intrinsic_priority: f64,
    /// Inclusive radius; absent = unlimited.
    #[serde(default)]
    pub radius: Option<f64>,
    /// Slots; 0 = unlimited.
    #[serde(default)]
    pub capacity: u32,
    /// Slots taken.
    #[serde(default)]
    pub occupancy: u32,
    /// Must all hold.
    #[serde(default)]
    pub preconditions: Vec<PreconditionSpec>,
    /// Cost per resource.
    #[serde(default)]
    pub costs: BTreeMap<String, f64>,
    /// Facts that hold after it (for planning).
    #[serde(default)]
    pub adds_facts: Vec<String>,
    /// Facts that no longer hold after it.
    #[serde(default)]
    pub removes_facts: Vec<String>,
    /// Resources it yields.
    #[serde(default)]
    pub yields: BTreeMap<String, f64>,
}

/// A precondition: exactly one of the forms below.
/// `{consideration, op, value}`, `{capability}`, `{resource, min}`, `{provider_state}`,
/// `{fact}`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
pub struct PreconditionSpec {
    /// Consideration form: its name.
    #[serde(default)]
    pub consideration: Option<String>,
    /// Consideration form: `lt`, `le`, `gt`, `ge`, `eq`, `ne`.
    #[serde(default)]
    pub op: Option<OpSpec>,
    /// Consideration form: compared with.
    #[serde(default)]
    pub value: Option<f64>,
    /// Capability form.
    #[serde(default)]
    pub capability: Option<String>,
    /// Resource form: its name.
    #[serde(default)]
    pub resource: Option<String>,
    /// Resource form: the minimum.
    #[serde(default)]
    pub min: Option<f64>,
    /// Provider-state form.
    #[serde(default)]
    pub provider_state: Option<String>,
    /// Fact form: the agent must hold this fact.
    #[serde(default)]
    pub fact: Option<String>,
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OpSpec {
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
