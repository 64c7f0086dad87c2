//! The answer side of the `decide` / `decide-batch` JSON contract. Numbers are rounded to four
//! decimals for the wire (ordering was decided on full precision before rounding).

use schemars::JsonSchema;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::decision::scoring::IneligibleReason;

/// Rounds to four decimals (and turns -0 into 0) for display on the wire. A value so large
/// that scaling it would overflow has no fraction left to round and is kept as it is (scaling
/// `f64::MAX` made an infinity, which JSON writes as `null`).
pub fn round4(value: f64) -> f64 {
    let scaled = value * 10_000.0;
    if !scaled.is_finite() {
        return value;
    }
    let rounded = scaled.round() / 10_000.0;
    if rounded == 0.0 { 0.0 } else { rounded }
}

/// `geppetto decide` output.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct DecideAnswer {
    /// The pick, or null when nothing is eligible.
    pub selected: Option<SelectedOut>,
    /// Present (true) only when convention breaking replaced the pick.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub convention_broken: bool,
    /// Every eligible candidate by descending utility.
    pub ranked: Vec<RankedOut>,
    /// Every removed candidate with its first failed gate.
    pub ineligible: Vec<IneligibleOut>,
}

/// The selected candidate.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SelectedOut {
    /// Provider id.
    pub provider: String,
    /// Action id.
    pub action: String,
    /// Utility.
    pub utility: f64,
}

/// One ranked candidate.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct RankedOut {
    /// Provider id.
    pub provider: String,
    /// Action id.
    pub action: String,
    /// Utility.
    pub utility: f64,
    /// Its factors.
    pub breakdown: BreakdownOut,
}

/// The factors of a utility.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct BreakdownOut {
    /// `Σ weight · pressure · gain`.
    pub benefit: f64,
    /// `intrinsic_priority · priority_weight`.
    pub priority: f64,
    /// `M_personality`.
    pub personality: f64,
    /// `M_context`.
    pub context: f64,
    /// The bonus of the NPC's schedule (a running NPC's view only; a `decide` request has no
    /// schedule, and its answer leaves the field out).
    #[serde(skip_serializing_if = "is_zero")]
    #[schemars(default)]
    pub schedule: f64,
    /// `M_repeat`: below 1 for the action the NPC has just completed (a running NPC's view
    /// only; left out when 1).
    #[serde(skip_serializing_if = "is_one")]
    #[schemars(default = "one")]
    pub repeat: f64,
    /// `M_distance`.
    pub distance: f64,
    /// `weighted_cost`.
    pub cost: f64,
}

fn is_one(value: &f64) -> bool {
    *value == 1.0
}

fn one() -> f64 {
    1.0
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

/// A removed candidate.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct IneligibleOut {
    /// Provider id.
    pub provider: String,
    /// Action id.
    pub action: String,
    /// `provider_full`, `action_full`, `out_of_radius`, `precondition`, `unaffordable` or
    /// `commitment`.
    pub reason: IneligibleReason,
}

/// `geppetto decide-batch` output.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct BatchAnswer {
    /// One per agent, in input order.
    pub assignments: Vec<AssignmentOut>,
    /// Each agent's retained preferences, keyed by agent id in input order.
    pub preferences: AgentPreferences,
    /// Contention rounds it took.
    pub rounds: usize,
}

/// An agent's assignment; `provider` is null (and `action` absent) when it got nothing.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct AssignmentOut {
    /// Agent id.
    pub agent: String,
    /// Provider id or null.
    pub provider: Option<String>,
    /// Action id, when assigned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

/// One retained preference on the wire: `[provider, action, utility]`.
pub type PreferenceRow = (String, String, f64);

/// `{agent: [[provider, action, utility], …]}`, in agent input order.
pub type AgentPreferences = OrderedMap<Vec<PreferenceRow>>;

/// A JSON object whose keys keep the order they were given in (input order), unlike a
/// sorted map.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OrderedMap<V>(pub Vec<(String, V)>);

impl<V: JsonSchema> JsonSchema for OrderedMap<V> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("OrderedMap_of_{}", V::schema_name()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "additionalProperties": generator.subschema_for::<V>(),
        })
    }
}

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::round4;

    #[test]
    fn rounding_keeps_every_finite_value_finite() {
        assert_eq!(round4(81.519_999), 81.52);
        assert_eq!(round4(-0.000_01), 0.0);
        assert!(round4(-0.000_01).is_sign_positive());
        // The proptest's find: a cost of f64::MAX against as much gold.
        assert_eq!(round4(-f64::MAX), -f64::MAX);
        assert_eq!(round4(f64::MAX), f64::MAX);
        assert_eq!(round4(1e305), 1e305);
    }
}
