//! Serialises a map whose keys are not strings (tuples, symbols) as a list of `[key, value]`
//! pairs, since JSON object keys must be strings. Used with `#[serde(with = "…")]` on state
//! that snapshots hold.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Writes `map` as `[[key, value], …]` in key order.
pub fn serialize<K, V, S>(map: &BTreeMap<K, V>, serializer: S) -> Result<S::Ok, S::Error>
where
    K: Serialize,
    V: Serialize,
    S: Serializer,
{
    serializer.collect_seq(map.iter())
}

/// Reads `[[key, value], …]` back into a map (a repeated key keeps the last value).
pub fn deserialize<'de, K, V, D>(deserializer: D) -> Result<BTreeMap<K, V>, D::Error>
where
    K: Deserialize<'de> + Ord,
    V: Deserialize<'de>,
    D: Deserializer<'de>,
{
    Vec::<(K, V)>::deserialize(deserializer).map(|pairs| pairs.into_iter().collect())
}
