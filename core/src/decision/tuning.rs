//! Tuning: the engine's calibration numbers, their seed defaults, the zero-means-default rule,
//! and named profiles (social, open-world, tactical, survival) that override them.
//!
//! Layering: engine defaults ← profile ← request. A field that is absent *or zero* in a layer
//! does not override the layer below ("zero means use the default"); a non-positive temperature
//! likewise falls back. Profiles are data (`config/profiles/*.yaml`); this module only defines
//! their shape.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::vocabulary::{Symbol, Vocabulary};

/// The aggregated-event effects table: per event, deltas per consideration. Built from a
/// profile by [`Profile::aggregated_effects_in`]; the simulator applies it when an agent returns
/// to full detail.
pub type AggregatedEffects = Vec<(Symbol, Vec<(Symbol, f64)>)>;

/// The resolved calibration the engine runs with. `Default` is the seed's reference calibration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tuning {
    /// Exponent of convex curves whose own exponent is 0. Default 2.
    pub convex_exponent: f64,
    /// Multiplies an action's intrinsic priority before it joins the benefit. Default 5.
    pub priority_weight: f64,
    /// World units at which the distance multiplier halves: `1/(1 + d/reference)`. Default 10.
    pub distance_reference: f64,
    /// How many of the best candidates the softmax samples from; 1 is argmax. Default 3.
    pub selection_top_k: usize,
    /// Softmax temperature; lower is more competent. Default 1.
    pub temperature: f64,
    /// How many preferences each agent keeps for batch contention. Default 5.
    pub reconciliation_top_k: usize,
    /// A preempting action must beat this × the running action's frozen utility. Default 1.5.
    pub preemption_margin: f64,
    /// Probability of replacing the pick by a strictly worse eligible action. Default 0.
    pub convention_break_probability: f64,
    /// Standard deviation of the Gaussian noise on perception-driven values. Default 0.
    pub perception_noise: f64,
    /// Game hours one full-detail tick covers. Default 1/60 (one game minute).
    pub full_tick_hours: f64,
    /// Game hours one simplified tick covers. Default 1.
    pub simplified_tick_hours: f64,
    /// For a consideration without its own collapse threshold, the fraction of its range above
    /// `min` below which it is collapsing (and may interrupt a player-queued action). Default 0.05.
    pub imminent_collapse_fraction: f64,
    /// Multiplies the utility of the action an agent has just completed when it picks its
    /// next (`Agent::just_completed`), so below 1 an agent varies what it does rather than
    /// repeat one action for hours while another fits as well. Default 1 (no effect; a
    /// `decide` request's agent has completed nothing).
    pub repeat_factor: f64,
    /// The least `M_foresight` makes of an action for each need it lets run out: what an
    /// action is worth that outlasts a need already critical (one that lets several run out
    /// is worth this × this…). Default 0.1.
    pub foresight_floor: f64,
}

impl Default for Tuning {
    fn default() -> Self {
        Self {
            convex_exponent: 2.0,
            priority_weight: 5.0,
            distance_reference: 10.0,
            selection_top_k: 3,
            temperature: 1.0,
            reconciliation_top_k: 5,
            preemption_margin: 1.5,
            convention_break_probability: 0.0,
            perception_noise: 0.0,
            full_tick_hours: 1.0 / 60.0,
            simplified_tick_hours: 1.0,
            imminent_collapse_fraction: 0.05,
            repeat_factor: 1.0,
            foresight_floor: 0.1,
        }
    }
}

/// A partial tuning: what a profile or a request overrides. Absent or zero fields override
/// nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct TuningPatch {
    /// See [`Tuning::convex_exponent`].
    pub convex_exponent: Option<f64>,
    /// See [`Tuning::priority_weight`].
    pub priority_weight: Option<f64>,
    /// See [`Tuning::distance_reference`].
    pub distance_reference: Option<f64>,
    /// See [`Tuning::selection_top_k`].
    pub selection_top_k: Option<usize>,
    /// See [`Tuning::temperature`].
    pub temperature: Option<f64>,
    /// See [`Tuning::reconciliation_top_k`].
    pub reconciliation_top_k: Option<usize>,
    /// See [`Tuning::preemption_margin`].
    pub preemption_margin: Option<f64>,
    /// See [`Tuning::convention_break_probability`].
    pub convention_break_probability: Option<f64>,
    /// See [`Tuning::perception_noise`].
    pub perception_noise: Option<f64>,
    /// See [`Tuning::full_tick_hours`].
    pub full_tick_hours: Option<f64>,
    /// See [`Tuning::simplified_tick_hours`].
    pub simplified_tick_hours: Option<f64>,
    /// See [`Tuning::imminent_collapse_fraction`].
    pub imminent_collapse_fraction: Option<f64>,
    /// See [`Tuning::repeat_factor`].
    pub repeat_factor: Option<f64>,
    /// See [`Tuning::foresight_floor`].
    pub foresight_floor: Option<f64>,
}

/// Why a tuning value was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct TuningError {
    /// The offending field.
    pub field: &'static str,
    /// What is wrong with it.
    pub reason: &'static str,
}

fn positive_or(value: Option<f64>, fallback: f64) -> f64 {
    value.filter(|v| *v > 0.0).unwrap_or(fallback)
}

fn nonzero_or<T: PartialEq + Default + Copy>(value: Option<T>, fallback: T) -> T {
    value.filter(|v| *v != T::default()).unwrap_or(fallback)
}

impl TuningPatch {
    /// Refuses values no layer may hold: negatives where only non-negatives make sense, a
    /// probability outside [0, 1], non-finite numbers. (A non-positive temperature is allowed:
    /// it means "the default".)
    pub fn validate(&self) -> Result<(), TuningError> {
        let non_negative = [
            ("convex_exponent", self.convex_exponent),
            ("priority_weight", self.priority_weight),
            ("distance_reference", self.distance_reference),
            ("preemption_margin", self.preemption_margin),
            ("perception_noise", self.perception_noise),
            ("full_tick_hours", self.full_tick_hours),
            ("simplified_tick_hours", self.simplified_tick_hours),
            (
                "imminent_collapse_fraction",
                self.imminent_collapse_fraction,
            ),
            ("repeat_factor", self.repeat_factor),
            ("foresight_floor", self.foresight_floor),
        ];
        for (field, value) in non_negative {
            match value {
                Some(v) if !v.is_finite() => {
                    return Err(TuningError {
                        field,
                        reason: "must be finite",
                    });
                }
                Some(v) if v < 0.0 => {
                    return Err(TuningError {
                        field,
                        reason: "must not be negative",
                    });
                }
                _ => {}
            }
        }
        if self.temperature.is_some_and(|t| !t.is_finite()) {
            return Err(TuningError {
                field: "temperature",
                reason: "must be finite",
            });
        }
        if self
            .convention_break_probability
            .is_some_and(|p| !(0.0..=1.0).contains(&p))
        {
            return Err(TuningError {
                field: "convention_break_probability",
                reason: "must be between 0 and 1",
            });
        }
        Ok(())
    }

    /// This patch laid over `below`: each field present and non-zero here wins.
    pub fn over(&self, below: &TuningPatch) -> TuningPatch {
        fn pick<T: PartialEq + Default + Copy>(top: Option<T>, bottom: Option<T>) -> Option<T> {
            top.filter(|v| *v != T::default()).or(bottom)
        }
        TuningPatch {
            convex_exponent: pick(self.convex_exponent, below.convex_exponent),
            priority_weight: pick(self.priority_weight, below.priority_weight),
            distance_reference: pick(self.distance_reference, below.distance_reference),
            selection_top_k: pick(self.selection_top_k, below.selection_top_k),
            temperature: self.temperature.filter(|t| *t > 0.0).or(below.temperature),
            reconciliation_top_k: pick(self.reconciliation_top_k, below.reconciliation_top_k),
            preemption_margin: pick(self.preemption_margin, below.preemption_margin),
            convention_break_probability: pick(
                self.convention_break_probability,
                below.convention_break_probability,
            ),
            perception_noise: pick(self.perception_noise, below.perception_noise),
            full_tick_hours: pick(self.full_tick_hours, below.full_tick_hours),
            simplified_tick_hours: pick(self.simplified_tick_hours, below.simplified_tick_hours),
            imminent_collapse_fraction: pick(
                self.imminent_collapse_fraction,
                below.imminent_collapse_fraction,
            ),
            repeat_factor: pick(self.repeat_factor, below.repeat_factor),
            foresight_floor: pick(self.foresight_floor, below.foresight_floor),
        }
    }

    /// The full tuning: this patch over the engine defaults.
    pub fn resolve(&self) -> Tuning {
        let d = Tuning::default();
        Tuning {
            convex_exponent: nonzero_or(self.convex_exponent, d.convex_exponent),
            priority_weight: nonzero_or(self.priority_weight, d.priority_weight),
            distance_reference: nonzero_or(self.distance_reference, d.distance_reference),
            selection_top_k: nonzero_or(self.selection_top_k, d.selection_top_k),
            temperature: positive_or(self.temperature, d.temperature),
            reconciliation_top_k: nonzero_or(self.reconciliation_top_k, d.reconciliation_top_k),
            preemption_margin: nonzero_or(self.preemption_margin, d.preemption_margin),
            convention_break_probability: nonzero_or(
                self.convention_break_probability,
                d.convention_break_probability,
            ),
            perception_noise: nonzero_or(self.perception_noise, d.perception_noise),
            full_tick_hours: nonzero_or(self.full_tick_hours, d.full_tick_hours),
            simplified_tick_hours: nonzero_or(self.simplified_tick_hours, d.simplified_tick_hours),
            imminent_collapse_fraction: nonzero_or(
                self.imminent_collapse_fraction,
                d.imminent_collapse_fraction,
            ),
            repeat_factor: nonzero_or(self.repeat_factor, d.repeat_factor),
            foresight_floor: nonzero_or(self.foresight_floor, d.foresight_floor),
        }
    }
}

/// A named genre calibration, authored as a YAML file in `config/profiles/`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The name requests select it by (`"profile": "social"`).
    pub name: String,
    /// What the profile is for, for humans.
    #[serde(default)]
    pub description: String,
    /// The tuning it overrides.
    #[serde(default)]
    pub tuning: TuningPatch,
    /// Per-consideration weight multipliers (e.g. survival: HUNGER 1.5); absent means 1.
    #[serde(default)]
    pub consideration_weights: BTreeMap<String, f64>,
    /// What each coarse event recorded while an agent was simplified does to its
    /// considerations when it returns to full detail (`meal: {HUNGER: 40}`). Events not listed
    /// reconstruct nothing.
    #[serde(default)]
    pub aggregated_event_effects: BTreeMap<String, BTreeMap<String, f64>>,
}

impl Profile {
    /// The profile's consideration weights as symbols of `vocabulary`.
    pub fn weights_in(&self, vocabulary: &mut Vocabulary) -> Vec<(Symbol, f64)> {
        self.consideration_weights
            .iter()
            .map(|(name, weight)| (vocabulary.intern(name), *weight))
            .collect()
    }

    /// The profile's aggregated-event effects table as symbols of `vocabulary`.
    pub fn aggregated_effects_in(&self, vocabulary: &mut Vocabulary) -> AggregatedEffects {
        self.aggregated_event_effects
            .iter()
            .map(|(event, deltas)| {
                let deltas = deltas
                    .iter()
                    .map(|(name, delta)| (vocabulary.intern(name), *delta))
                    .collect();
                (vocabulary.intern(event), deltas)
            })
            .collect()
    }

    /// Refuses a bad tuning or a negative / non-finite weight.
    pub fn validate(&self) -> Result<(), TuningError> {
        self.tuning.validate()?;
        let mut effects = self
            .aggregated_event_effects
            .values()
            .flat_map(BTreeMap::values);
        if effects.any(|delta| !delta.is_finite()) {
            return Err(TuningError {
                field: "aggregated_event_effects",
                reason: "every effect must be a finite number",
            });
        }
        if self
            .consideration_weights
            .values()
            .any(|w| !w.is_finite() || *w < 0.0)
        {
            return Err(TuningError {
                field: "consideration_weights",
                reason: "every weight must be a finite, non-negative number",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_patch_resolves_to_the_seed_defaults() {
        let tuning = TuningPatch::default().resolve();
        assert_eq!(tuning, Tuning::default());
        assert_eq!(tuning.convex_exponent, 2.0);
        assert_eq!(tuning.priority_weight, 5.0);
        assert_eq!(tuning.distance_reference, 10.0);
        assert_eq!(tuning.selection_top_k, 3);
        assert_eq!(tuning.temperature, 1.0);
        assert_eq!(tuning.reconciliation_top_k, 5);
        assert_eq!(tuning.preemption_margin, 1.5);
        assert_eq!(tuning.convention_break_probability, 0.0);
        assert_eq!(tuning.perception_noise, 0.0);
    }

    #[test]
    fn zero_means_default_and_non_positive_temperature_falls_back() {
        let patch = TuningPatch {
            priority_weight: Some(0.0),
            selection_top_k: Some(0),
            temperature: Some(-3.0),
            distance_reference: Some(20.0),
            ..TuningPatch::default()
        };
        let tuning = patch.resolve();
        assert_eq!(tuning.priority_weight, 5.0);
        assert_eq!(tuning.selection_top_k, 3);
        assert_eq!(tuning.temperature, 1.0);
        assert_eq!(tuning.distance_reference, 20.0);
    }

    #[test]
    fn a_request_overrides_its_profile_but_its_zeros_do_not() {
        let profile = TuningPatch {
            temperature: Some(1.5),
            preemption_margin: Some(2.0),
            ..Default::default()
        };
        let request = TuningPatch {
            temperature: Some(0.0),
            preemption_margin: Some(1.2),
            ..Default::default()
        };
        let tuning = request.over(&profile).resolve();
        assert_eq!(tuning.temperature, 1.5);
        assert_eq!(tuning.preemption_margin, 1.2);
    }

    #[test]
    fn impossible_values_are_refused() {
        let negative = TuningPatch {
            distance_reference: Some(-1.0),
            ..Default::default()
        };
        assert_eq!(
            negative.validate().map_err(|e| e.field),
            Err("distance_reference")
        );
        let probability = TuningPatch {
            convention_break_probability: Some(1.5),
            ..Default::default()
        };
        assert_eq!(
            probability.validate().map_err(|e| e.field),
            Err("convention_break_probability")
        );
        let cold = TuningPatch {
            temperature: Some(-1.0),
            ..Default::default()
        };
        assert_eq!(cold.validate(), Ok(()));
    }
}
