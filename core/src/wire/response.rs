//! The answer side of the `decide` / `decide-batch` JSON contract. Numbers are rounded to four
//! decimals for the wire (ordering was decided on full precision before rounding).
//!
//! An answer's long lists are type parameters: the contract is the defaults (arrays, an
//! ordered map), and an answer is written as it is read from the decision ([`Streamed`],
//! [`StreamedMap`]), the same bytes without building the lists.

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
#[schemars(rename = "DecideAnswer")]
pub struct DecideAnswer<Ranked = Vec<RankedOut>, Ineligible = Vec<IneligibleOut>> {
    /// The pick, or null when nothing is eligible.
    pub selected: Option<SelectedOut>,
    /// Present (true) only when convention breaking replaced the pick.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub convention_broken: bool,
    /// Every eligible candidate by descending utility.
    pub ranked: Ranked,
    /// Every removed candidate with its first failed gate.
    pub ineligible: Ineligible,
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
    /// `M_foresight`: below 1 for an action that outlasts a need the NPC lets run out (a
    /// running NPC's view only; left out when 1).
    #[serde(skip_serializing_if = "is_one")]
    #[schemars(default = "one")]
    pub foresight: f64,
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
#[schemars(rename = "BatchAnswer")]
pub struct BatchAnswer<Assignments = Vec<AssignmentOut>, Preferences = AgentPreferences> {
    /// One per agent, in input order.
    pub assignments: Assignments,
    /// Each agent's retained preferences, keyed by agent id in input order.
    pub preferences: Preferences,
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

/// A JSON array written from the items `items` makes, one at a time, rather than from a built
/// list: the same bytes as the `Vec` of those items.
pub struct Streamed<F>(pub F);

impl<F, I> Serialize for Streamed<F>
where
    F: Fn() -> I,
    I: IntoIterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}

/// A JSON object written from the `(key, value)` entries `entries` makes, in that order: the
/// same bytes as the [`OrderedMap`] of those entries.
pub struct StreamedMap<F>(pub F);

impl<F, I, K, V> Serialize for StreamedMap<F>
where
    F: Fn() -> I,
    I: IntoIterator<Item = (K, V)>,
    K: Serialize,
    V: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map((self.0)())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::scoring::IneligibleReason;

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

    fn both_ways<T: Serialize, U: Serialize>(built: &T, streamed: &U) {
        let compact = serde_json::to_string(built).expect("json");
        assert_eq!(serde_json::to_string(streamed).expect("json"), compact);
        let pretty = serde_json::to_string_pretty(built).expect("json");
        assert_eq!(
            serde_json::to_string_pretty(streamed).expect("json"),
            pretty
        );
    }

    /// A streamed answer is written in exactly the bytes of the built one, compact and pretty,
    /// with no, one or several items in each list.
    #[test]
    fn a_streamed_answer_has_the_bytes_of_the_built_one() {
        let ranked = |n: usize| -> Vec<RankedOut> {
            (0..n)
                .map(|i| RankedOut {
                    provider: format!("p{i}"),
                    action: "eat".into(),
                    utility: 1.5 / (i as f64 + 1.0),
                    breakdown: BreakdownOut {
                        benefit: 2.0,
                        priority: 0.0,
                        personality: 1.2,
                        context: -0.0,
                        schedule: 0.0,
                        repeat: 1.0,
                        foresight: 1.0,
                        distance: 0.6667,
                        cost: 1e300,
                    },
                })
                .collect()
        };
        let ineligible = |n: usize| -> Vec<IneligibleOut> {
            (0..n)
                .map(|i| IneligibleOut {
                    provider: format!("far{i}"),
                    action: "rest".into(),
                    reason: IneligibleReason::OutOfRadius,
                })
                .collect()
        };
        for (n, broken) in [(0, false), (1, true), (3, false)] {
            let built = DecideAnswer {
                selected: ranked(n).first().map(|r| SelectedOut {
                    provider: r.provider.clone(),
                    action: r.action.clone(),
                    utility: r.utility,
                }),
                convention_broken: broken,
                ranked: ranked(n),
                ineligible: ineligible(n),
            };
            let streamed = DecideAnswer {
                selected: built.selected.clone(),
                convention_broken: broken,
                ranked: Streamed(|| ranked(n)),
                ineligible: Streamed(|| ineligible(n)),
            };
            both_ways(&built, &streamed);
            let assignments = |n: usize| -> Vec<AssignmentOut> {
                (0..n)
                    .map(|i| AssignmentOut {
                        agent: format!("a{i}"),
                        provider: (i % 2 == 0).then(|| format!("p{i}")),
                        action: (i % 2 == 0).then(|| "eat".to_owned()),
                    })
                    .collect()
            };
            let preferences = |n: usize| -> Vec<(String, Vec<PreferenceRow>)> {
                (0..n)
                    .map(|i| {
                        let rows = (0..i)
                            .map(|r| (format!("p{r}"), "eat".into(), 0.5))
                            .collect();
                        (format!("a{i}"), rows)
                    })
                    .collect()
            };
            let built = BatchAnswer {
                assignments: assignments(n),
                preferences: OrderedMap(preferences(n)),
                rounds: n,
            };
            let streamed = BatchAnswer {
                assignments: Streamed(|| assignments(n)),
                preferences: StreamedMap(|| preferences(n)),
                rounds: n,
            };
            both_ways(&built, &streamed);
        }
    }
}
