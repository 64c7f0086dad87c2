//! Considerations: the bounded scalar signals an agent scores the world against (HUNGER,
//! ENERGY, THREAT, AMMO…). The engine treats them uniformly; the [`Updater`] says how a value
//! changes over time (applied by the simulator), the [`ResponseCurve`] how it becomes pressure.

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

/// One bounded signal of an agent.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Consideration {
    /// Its interned name.
    pub name: Symbol,
    /// The current value, kept within `[min, max]`.
    pub value: f64,
    /// Lower bound.
    pub min: f64,
    /// Upper bound; `max <= min` makes the pressure 0.
    pub max: f64,
    /// Multiplies this consideration's share of the benefit; default 1.
    pub weight: f64,
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

impl Consideration {
    /// A consideration with weight 1, the profile's convex curve, event-driven and no
    /// critical threshold.
    pub fn new(name: Symbol, value: f64, min: f64, max: f64) -> Self {
        Self {
            name,
            value,
            min,
            max,
            weight: 1.0,
            curve: ResponseCurve::Convex { exponent: 0.0 },
            updater: Updater::EventDriven,
            critical_threshold: None,
            collapse_threshold: None,
        }
    }

    /// Room left to gain before the maximum (never negative).
    pub fn headroom(&self) -> f64 {
        (self.max - self.value).max(0.0)
    }

    /// Whether the value is below its collapse threshold, or, without one, below
    /// `min + default_fraction × (max − min)`.
    pub fn is_collapsing(&self, default_fraction: f64) -> bool {
        let threshold = self
            .collapse_threshold
            .unwrap_or(self.min + default_fraction * (self.max - self.min));
        self.value < threshold
    }

    /// Clamps the value into `[min, max]` (left alone when the range is empty).
    pub fn clamp_value(&mut self) {
        if self.max > self.min {
            self.value = self.value.clamp(self.min, self.max);
        }
    }

    /// Game hours until the value, changing by `per_hour` (negative: falling), drops below its
    /// critical threshold, unless `floor` stops it first: 0 while it is critical already and
    /// falling, `None` when it has no threshold or does not fall that far.
    pub fn hours_until_critical(&self, per_hour: f64, floor: f64) -> Option<f64> {
        let threshold = self.critical_threshold?;
        (per_hour < 0.0 && floor < threshold)
            .then(|| ((self.value - threshold) / -per_hour).max(0.0))
            .filter(|hours| hours.is_finite())
    }

    /// Whether the value is below its critical threshold.
    pub fn is_critical(&self) -> bool {
        self.critical_threshold
            .is_some_and(|threshold| self.value < threshold)
    }
}
