//! Considerations: the bounded scalar signals an agent scores the world against (HUNGER,
//! ENERGY, THREAT, AMMO…). The engine treats them uniformly; the [`Updater`] says how a value
//! changes over time (applied by the simulator), the [`ResponseCurve`] how it becomes pressure.
//! Those two, the thresholds and the bounds are a consideration's [`ConsiderationBehaviour`],
//! which agents of one kind share ([`BehaviourSharing`]); the value and weight are each agent's
//! own.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::decision::curve::ResponseCurve;
use crate::vocabulary::Symbol;

/// How a consideration's value changes between ticks.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Updater {
    /// Subtracts `rate × hours` each tick.
    LinearDecay {
        /// Units per game hour.
        rate: f64,
    },
    /// Adds `rate × hours` each tick.
    LinearRegen {
        /// Units per game hour.
        rate: f64,
    },
    /// Moves `rate × hours` toward `baseline` each tick, never past it: a need nothing in
    /// the world restores drifts back to where it rests instead of emptying for good.
    TowardBaseline {
        /// Units per game hour.
        rate: f64,
        /// Where it rests.
        baseline: f64,
    },
    /// Untouched by ticks; only events and action effects change it.
    EventDriven,
    /// Read from the world's perception map each tick (kept when the map has no entry).
    PerceptionDriven,
    /// Read from the world's relationship map each tick (kept when absent).
    RelationshipDriven,
    /// Read from the world's context aggregate map each tick (kept when absent).
    ContextAggregate,
}

/// How a consideration behaves, beside its value: its bounds, how it becomes pressure, how it
/// changes over time and where it turns critical or collapsing. Every agent of an archetype has
/// the same, so agents hold it shared ([`Consideration::behaviour`], [`BehaviourSharing`]): a
/// million residents keep one copy of each instead of a million.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsiderationBehaviour {
    /// Lower bound.
    pub min: f64,
    /// Upper bound; `max <= min` makes the pressure 0.
    pub max: f64,
    /// Value → pressure.
    pub curve: ResponseCurve,
    /// Value over time.
    pub updater: Updater,
    /// Below this value the consideration is critical (enables preemption).
    pub critical_threshold: Option<f64>,
    /// Below this value the agent is about to collapse: the only thing that may interrupt a
    /// player-queued action. Absent: the tuning's `imminent_collapse_fraction` of the range
    /// above `min`.
    pub collapse_threshold: Option<f64>,
}

impl ConsiderationBehaviour {
    /// Bounds `[min, max]`, the profile's convex curve, event-driven, no thresholds.
    pub fn bounded(min: f64, max: f64) -> Self {
        Self {
            min,
            max,
            curve: ResponseCurve::Convex { exponent: 0.0 },
            updater: Updater::EventDriven,
            critical_threshold: None,
            collapse_threshold: None,
        }
    }
}

/// One bounded signal of an agent: its value and weight, and its bounds and behaviour, shared.
///
/// Serialized flat as [`ConsiderationFields`] says: name, value, bounds and weight, then the
/// behaviour's curve, updater and thresholds.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(from = "ConsiderationFields<'_>")]
pub struct Consideration {
    /// Its interned name.
    pub name: Symbol,
    /// The current value, kept within `[min, max]`.
    pub value: f64,
    /// Multiplies this consideration's share of the benefit; default 1.
    pub weight: f64,
    /// Its bounds, curve, updater and thresholds (change them with
    /// [`Consideration::behaviour_mut`]).
    pub behaviour: Arc<ConsiderationBehaviour>,
}

/// A consideration as it is written and read: every field flat, in this order (borrowed from
/// the consideration when written).
#[derive(serde::Serialize, serde::Deserialize)]
struct ConsiderationFields<'a> {
    name: Symbol,
    value: f64,
    min: f64,
    max: f64,
    weight: f64,
    curve: Cow<'a, ResponseCurve>,
    updater: Cow<'a, Updater>,
    critical_threshold: Option<f64>,
    collapse_threshold: Option<f64>,
}

impl serde::Serialize for Consideration {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let b = &*self.behaviour;
        ConsiderationFields {
            name: self.name,
            value: self.value,
            min: b.min,
            max: b.max,
            weight: self.weight,
            curve: Cow::Borrowed(&b.curve),
            updater: Cow::Borrowed(&b.updater),
            critical_threshold: b.critical_threshold,
            collapse_threshold: b.collapse_threshold,
        }
        .serialize(serializer)
    }
}

impl From<ConsiderationFields<'_>> for Consideration {
    fn from(fields: ConsiderationFields<'_>) -> Self {
        Self {
            name: fields.name,
            value: fields.value,
            weight: fields.weight,
            behaviour: Arc::new(ConsiderationBehaviour {
                min: fields.min,
                max: fields.max,
                curve: fields.curve.into_owned(),
                updater: fields.updater.into_owned(),
                critical_threshold: fields.critical_threshold,
                collapse_threshold: fields.collapse_threshold,
            }),
        }
    }
}

impl Consideration {
    /// A consideration with weight 1, the profile's convex curve, event-driven and no
    /// critical threshold.
    pub fn new(name: Symbol, value: f64, min: f64, max: f64) -> Self {
        Self {
            name,
            value,
            weight: 1.0,
            behaviour: Arc::new(ConsiderationBehaviour::bounded(min, max)),
        }
    }

    /// Lower bound.
    #[inline]
    pub fn min(&self) -> f64 {
        self.behaviour.min
    }

    /// Upper bound; `max <= min` makes the pressure 0.
    #[inline]
    pub fn max(&self) -> f64 {
        self.behaviour.max
    }

    /// Value → pressure.
    #[inline]
    pub fn curve(&self) -> &ResponseCurve {
        &self.behaviour.curve
    }

    /// Value over time.
    #[inline]
    pub fn updater(&self) -> &Updater {
        &self.behaviour.updater
    }

    /// Below this value the consideration is critical.
    #[inline]
    pub fn critical_threshold(&self) -> Option<f64> {
        self.behaviour.critical_threshold
    }

    /// Its behaviour to change: this consideration's own copy once it is changed, the
    /// other agents' untouched.
    pub fn behaviour_mut(&mut self) -> &mut ConsiderationBehaviour {
        Arc::make_mut(&mut self.behaviour)
    }

    /// Room left to gain before the maximum (never negative).
    pub fn headroom(&self) -> f64 {
        (self.max() - self.value).max(0.0)
    }

    /// Whether the value is below its collapse threshold, or, without one, below
    /// `min + default_fraction × (max − min)`.
    pub fn is_collapsing(&self, default_fraction: f64) -> bool {
        let threshold = self
            .behaviour
            .collapse_threshold
            .unwrap_or(self.min() + default_fraction * (self.max() - self.min()));
        self.value < threshold
    }

    /// Clamps the value into `[min, max]` (left alone when the range is empty).
    pub fn clamp_value(&mut self) {
        let (min, max) = (self.min(), self.max());
        if max > min {
            self.value = self.value.clamp(min, max);
        }
    }

    /// Game hours until the value, changing by `per_hour` (negative: falling), drops below its
    /// critical threshold, unless `floor` stops it first: 0 while it is critical already and
    /// falling, `None` when it has no threshold or does not fall that far.
    pub fn hours_until_critical(&self, per_hour: f64, floor: f64) -> Option<f64> {
        let threshold = self.behaviour.critical_threshold?;
        (per_hour < 0.0 && floor < threshold)
            .then(|| ((self.value - threshold) / -per_hour).max(0.0))
            .filter(|hours| hours.is_finite())
    }

    /// Whether the value is below its critical threshold.
    pub fn is_critical(&self) -> bool {
        self.behaviour
            .critical_threshold
            .is_some_and(|threshold| self.value < threshold)
    }
}

/// Gives equal behaviours one shared allocation: a zone passes every agent it builds or restores
/// through one, so agents of an archetype hold one [`ConsiderationBehaviour`] between them.
/// Sharing changes no answer (equal behaviours are interchangeable); it is memory.
#[derive(Debug, Default)]
pub struct BehaviourSharing {
    /// The behaviours seen, by a hash of their parts (equal ones hash alike; a bucket may hold
    /// unequal ones, told apart by `==`).
    seen: HashMap<u64, Vec<Arc<ConsiderationBehaviour>>>,
}

impl BehaviourSharing {
    /// Points each of `considerations` at the one shared copy of its behaviour (its own
    /// becomes that copy when it is the first seen).
    pub fn share(&mut self, considerations: &mut [Consideration]) {
        for consideration in considerations {
            let bucket = self
                .seen
                .entry(behaviour_hash(&consideration.behaviour))
                .or_default();
            match bucket.iter().find(|seen| **seen == consideration.behaviour) {
                Some(seen) => consideration.behaviour = Arc::clone(seen),
                None => bucket.push(Arc::clone(&consideration.behaviour)),
            }
        }
    }

    /// Distinct behaviours held.
    pub fn len(&self) -> usize {
        self.seen.values().map(Vec::len).sum()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

/// A hash of `behaviour`'s bounds, updater, thresholds and curve kind (floats by their bits): equal
/// behaviours hash alike.
fn behaviour_hash(behaviour: &ConsiderationBehaviour) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    std::mem::discriminant(&behaviour.curve).hash(&mut hasher);
    std::mem::discriminant(&behaviour.updater).hash(&mut hasher);
    let (rate, baseline) = match behaviour.updater {
        Updater::LinearDecay { rate } | Updater::LinearRegen { rate } => (rate, 0.0),
        Updater::TowardBaseline { rate, baseline } => (rate, baseline),
        _ => (0.0, 0.0),
    };
    for number in [
        behaviour.min,
        behaviour.max,
        rate,
        baseline,
        behaviour.critical_threshold.unwrap_or(f64::NAN),
        behaviour.collapse_threshold.unwrap_or(f64::NAN),
    ] {
        number.to_bits().hash(&mut hasher);
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn need(name: &str, rate: f64) -> Consideration {
        let mut vocabulary = crate::vocabulary::Vocabulary::default();
        let mut need = Consideration::new(vocabulary.intern(name), 50.0, 0.0, 100.0);
        need.behaviour_mut().updater = Updater::LinearDecay { rate };
        need.behaviour_mut().critical_threshold = Some(20.0);
        need
    }

    #[test]
    fn equal_behaviours_share_one_allocation_and_unequal_ones_do_not() {
        let mut sharing = BehaviourSharing::default();
        let mut first = vec![need("HUNGER", 2.0), need("ENERGY", 3.0)];
        let mut second = vec![need("HUNGER", 2.0), need("ENERGY", 4.0)];
        sharing.share(&mut first);
        sharing.share(&mut second);
        assert!(Arc::ptr_eq(&first[0].behaviour, &second[0].behaviour));
        assert!(!Arc::ptr_eq(&first[1].behaviour, &second[1].behaviour));
        assert_eq!(sharing.len(), 3);
        assert_eq!(first[0], second[0]);
    }

    #[test]
    fn changing_a_shared_behaviour_changes_only_that_consideration() {
        let mut sharing = BehaviourSharing::default();
        let mut agents = vec![vec![need("HUNGER", 2.0)], vec![need("HUNGER", 2.0)]];
        for considerations in &mut agents {
            sharing.share(considerations);
        }
        agents[0][0].behaviour_mut().critical_threshold = Some(5.0);
        assert_eq!(agents[0][0].critical_threshold(), Some(5.0));
        assert_eq!(agents[1][0].critical_threshold(), Some(20.0));
    }

    /// An agent holds one per need, read at each of its turns: its value and weight are its
    /// own, the rest is shared.
    #[test]
    fn a_consideration_is_its_value_and_weight_and_a_pointer() {
        assert!(std::mem::size_of::<Consideration>() <= 32);
    }

    #[test]
    fn bounds_are_shared_with_the_behaviour_and_kept_apart_when_they_differ() {
        let mut sharing = BehaviourSharing::default();
        let narrow = |max| {
            let mut need = need("HUNGER", 2.0);
            need.behaviour_mut().max = max;
            need
        };
        let mut agents = vec![vec![narrow(80.0)], vec![narrow(80.0)], vec![narrow(90.0)]];
        for considerations in &mut agents {
            sharing.share(considerations);
        }
        assert!(Arc::ptr_eq(
            &agents[0][0].behaviour,
            &agents[1][0].behaviour
        ));
        assert!(!Arc::ptr_eq(
            &agents[0][0].behaviour,
            &agents[2][0].behaviour
        ));
        assert_eq!((agents[2][0].min(), agents[2][0].max()), (0.0, 90.0));
    }

    #[test]
    fn serialized_flat_as_before() {
        let text = serde_json::to_string(&need("HUNGER", 2.0)).expect("serializes");
        assert_eq!(
            text,
            r#"{"name":0,"value":50.0,"min":0.0,"max":100.0,"weight":1.0,"curve":{"convex":{"exponent":0.0}},"updater":{"linear_decay":{"rate":2.0}},"critical_threshold":20.0,"collapse_threshold":null}"#
        );
        let back: Consideration = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, need("HUNGER", 2.0));
    }
}
