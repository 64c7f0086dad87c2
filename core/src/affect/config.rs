//! The affect configuration as authored (a persona: a preset over the calibration defaults)
//! and its compilation into per-tick coefficients: the derived tick, exact leaks, rates scaled
//! by the tick, windows scaled by resolution, and the stability check of every loop.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How the tick is derived: `dt = min(half_life) · time_scale / (nyquist_factor ·
/// resolution_factor)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TickDerivation {
    /// Ticks per shortest half-life (engineering Nyquist); default 10. Do not retime with it.
    pub nyquist_factor: f64,
    /// Relabels the clock: every half-life ×T, the per-tick trace bit-identical; default 1.
    pub time_scale: f64,
    /// Refines sampling: dt ÷R with real-time behaviour preserved; default 1.
    pub resolution_factor: f64,
}

impl Default for TickDerivation {
    fn default() -> Self {
        Self {
            nyquist_factor: 10.0,
            time_scale: 1.0,
            resolution_factor: 1.0,
        }
    }
}

/// One affect state: an integrator decaying toward `rest`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateConfig {
    /// Seconds for the distance to rest to halve (before `time_scale`).
    pub half_life_s: f64,
    /// Resting value; default 0.
    #[serde(default)]
    pub rest: f64,
    /// Signed states live in [−1, 1], others in [0, 1]; default false.
    #[serde(default)]
    pub signed: bool,
}

/// How an event's input is filtered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelKind {
    /// Filtered by who caused it (a respected superior's insult lands harder).
    Relational,
    /// Filtered by the object or place involved.
    Affinity,
    /// Unfiltered (hunger, fatigue, weather).
    Physiological,
}

/// What an event kind does: an impulse per state, through its channel's filter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelConfig {
    /// The filter that applies.
    pub kind: ChannelKind,
    /// Impulse per state for one event of magnitude 1 (invariant under resolution).
    pub targets: BTreeMap<String, f64>,
}

/// A continuous coupling: `to` gains `rate × from` per second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CouplingConfig {
    /// Source state.
    pub from: String,
    /// Target state.
    pub to: String,
    /// Per second (×dt per tick, so ×1/R under resolution).
    pub rate: f64,
}

/// Per-source and per-object gains; absent is 1 (neutral).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FilterConfig {
    /// Relational gain by source.
    pub sources: BTreeMap<String, f64>,
    /// Affinity gain by object or place.
    pub objects: BTreeMap<String, f64>,
}

/// The optional outburst overlay (off by default).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OutburstConfig {
    /// Turns the overlay on; default false.
    pub enabled: bool,
    /// The state that bursts; default `anger`.
    pub anger: String,
    /// Its partner in the loop; default `stress`.
    pub stress: String,
    /// `k_esc`: each coupling on a loop becomes `g·(1 + k_esc·target)`; default 5.
    pub escalation: f64,
    /// Anger above this (with stress above its threshold) counts toward the latch; default 0.75.
    pub latch_anger: f64,
    /// Stress above this counts toward the latch; default 0.5.
    pub latch_stress: f64,
    /// Consecutive ticks above both thresholds that set the latch (×R); default 4.
    pub confirm_ticks: u32,
    /// The latch releases when anger falls below this (hysteresis); default 0.35.
    pub exit_anger: f64,
    /// While latched, anger and stress lose this fraction per second; default 0.05.
    pub extinction_rate: f64,
    /// While latched and anger above this, the tick's provoker is lashed out at; default 0.8.
    pub discharge_anger: f64,
    /// Ticks after a discharge at a provoker during which another one is softened (×R);
    /// default 40.
    pub refractory_ticks: u32,
    /// Intensity multiplier of a repeat discharge inside the refractory window; default 0.3.
    pub refractory_softening: f64,
}

impl Default for OutburstConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            anger: "anger".into(),
            stress: "stress".into(),
            escalation: 5.0,
            latch_anger: 0.75,
            latch_stress: 0.5,
            confirm_ticks: 4,
            exit_anger: 0.35,
            extinction_rate: 0.05,
            discharge_anger: 0.8,
            refractory_ticks: 40,
            refractory_softening: 0.3,
        }
    }
}

/// A whole affect configuration (defaults merged with a persona).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AffectConfig {
    /// The persona's name.
    #[serde(default)]
    pub name: String,
    /// For humans.
    #[serde(default)]
    pub description: String,
    /// The derived tick.
    #[serde(default)]
    pub tick: TickDerivation,
    /// States by name.
    pub states: BTreeMap<String, StateConfig>,
    /// Event kinds by name.
    #[serde(default)]
    pub channels: BTreeMap<String, ChannelConfig>,
    /// Sparse couplings.
    #[serde(default)]
    pub couplings: Vec<CouplingConfig>,
    /// Relational and affinity filters.
    #[serde(default)]
    pub filters: FilterConfig,
    /// The outburst overlay.
    #[serde(default)]
    pub outburst: OutburstConfig,
}

/// Lays `overlay` over `base`: objects merge key by key, recursively; anything else in the
/// overlay replaces what the base had. This is how a persona is a preset over the calibration
/// defaults: it states only what differs.
pub fn merge_layers(base: &mut serde_json::Value, overlay: serde_json::Value) {
    match (base, overlay) {
        (serde_json::Value::Object(base), serde_json::Value::Object(overlay)) => {
            for (key, value) in overlay {
                match base.get_mut(&key) {
                    Some(existing) => merge_layers(existing, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, overlay) => *base = overlay,
    }
}

/// A configuration refused: where (a path such as `feelings.anger.half_life_hours`) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct AffectConfigError {
    /// Path of the offending value (`.` for the document itself).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl AffectConfig {
    /// Reads a configuration from a (merged) JSON value, naming the path of the first problem.
    pub fn from_value(value: serde_json::Value) -> Result<Self, AffectConfigError> {
        serde_path_to_error::deserialize(value).map_err(|error| AffectConfigError {
            path: error.path().to_string(),
            message: error.into_inner().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_persona_overrides_only_what_it_names() {
        let mut base = json!({"states": {"anger": {"half_life_s": 30}, "stress": {"half_life_s": 600}},
                               "couplings": [{"from": "anger", "to": "stress", "rate": 0.01}]});
        merge_layers(
            &mut base,
            json!({"states": {"anger": {"half_life_s": 20}}, "couplings": []}),
        );
        assert_eq!(base["states"]["anger"]["half_life_s"], json!(20));
        assert_eq!(base["states"]["stress"]["half_life_s"], json!(600));
        assert_eq!(
            base["couplings"],
            json!([]),
            "lists are replaced, not merged"
        );
        let config = AffectConfig::from_value(base).expect("valid");
        assert_eq!(config.states.len(), 2);
        let error = AffectConfig::from_value(json!({"states": {"anger": {"half_life": 3}}}))
            .expect_err("typo");
        assert!(error.path.starts_with("states.anger"), "{error}");
    }
}
