//! Response curves: how a consideration's raw value becomes *pressure*, and the six shapes
//! that utility sets (and considerations that ask for them) evaluate on a normalised
//! input in [0, 1].
//!
//! The needs-style curves (`Convex`, `Linear`) read the normalised distance from the maximum,
//! `d = clamp((max − value)/(max − min), 0, 1)`: an empty need presses hardest. `Step` and
//! `Logistic` read the raw value. The [`Shape`]s read the normalised value `x = 1 − d` and are
//! clamped to [0, 1]; normalising is the input's job, never the curve's. An unknown curve kind
//! evaluates to 0 — never an implicit rule.

use serde::{Deserialize, Serialize};

/// The parameters every shape shares: `m` (slope), `k` (exponent or steepness or
/// width), `c` (x shift) and `b` (y shift).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ShapeParams {
    /// `m`; default 1.
    pub slope: f64,
    /// `k`: the polynomial exponent, the logistic/logit steepness, or the gaussian width;
    /// default 1.
    pub exponent: f64,
    /// `c`, the input shift; default 0.
    pub x_shift: f64,
    /// `b`, the output shift; default 0.
    pub y_shift: f64,
}

impl Default for ShapeParams {
    fn default() -> Self {
        Self {
            slope: 1.0,
            exponent: 1.0,
            x_shift: 0.0,
            y_shift: 0.0,
        }
    }
}

/// A piecewise-linear curve through authored keys, sorted by input at load.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SampledCurve {
    keys: Vec<(f64, f64)>,
}

/// Why a curve's parameters were refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CurveError {
    /// A sampled curve needs at least one key.
    #[error("a sampled curve needs at least one key")]
    NoKeys,
    /// Two keys share an input.
    #[error("two keys share the input {0}")]
    DuplicateKey(f64),
    /// A key or parameter is not a finite number.
    #[error("{0} must be a finite number")]
    NotFinite(&'static str),
    /// A parameter that divides must not be zero.
    #[error("{0} must not be zero")]
    Zero(&'static str),
}

impl SampledCurve {
    /// Sorts the keys by input and checks them.
    pub fn new(mut keys: Vec<(f64, f64)>) -> Result<Self, CurveError> {
        if keys.is_empty() {
            return Err(CurveError::NoKeys);
        }
        if keys.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
            return Err(CurveError::NotFinite("every key"));
        }
        keys.sort_by(|a, b| a.0.total_cmp(&b.0));
        if let Some(pair) = keys.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return Err(CurveError::DuplicateKey(pair[0].0));
        }
        Ok(Self { keys })
    }

    /// The keys, sorted by input.
    pub fn keys(&self) -> &[(f64, f64)] {
        &self.keys
    }

    fn sample(&self, x: f64) -> f64 {
        let keys = &self.keys;
        let upper = keys.partition_point(|(key_x, _)| *key_x <= x);
        match (
            upper.checked_sub(1).and_then(|i| keys.get(i)),
            keys.get(upper),
        ) {
            (Some(&(x0, y0)), Some(&(x1, y1))) => y0 + (y1 - y0) * (x - x0) / (x1 - x0),
            (Some(&(_, y)), None) | (None, Some(&(_, y))) => y,
            (None, None) => 0.0,
        }
    }
}

/// The six shapes, evaluated on a normalised input and clamped to [0, 1].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// `m(x − c) + b`.
    Linear(ShapeParams),
    /// `m(x − c)^k + b`.
    Polynomial(ShapeParams),
    /// `m / (1 + e^(−k(x − c))) + b`.
    Logistic(ShapeParams),
    /// The logistic's inverse with the same parameters: `c + ln(r/(1 − r))/k` with
    /// `r = (x − b)/m`. At the edges (`r ≤ 0`, `r ≥ 1`) it takes its limits, so after clamping
    /// it is 0 at `r = 0` and 1 at `r = 1` for `k > 0` (reversed for `k < 0`).
    Logit(ShapeParams),
    /// `m·e^(−(x − c)²/2k²) + b`: a sweet spot of width `k` around `c`.
    Gaussian(ShapeParams),
    /// Authored keys, piecewise linear, flat beyond the first and last key.
    Sampled(SampledCurve),
}

/// Clamps to [0, 1], sending NaN to 0 so no curve can leak a NaN into a score.
fn unit_clamp(y: f64) -> f64 {
    if y.is_nan() { 0.0 } else { y.clamp(0.0, 1.0) }
}

impl Shape {
    /// Evaluates the shape at `x` (expected in [0, 1]) and clamps the result to [0, 1].
    pub fn evaluate(&self, x: f64) -> f64 {
        let y = match self {
            Self::Linear(p) => p.slope * (x - p.x_shift) + p.y_shift,
            Self::Polynomial(p) => p.slope * (x - p.x_shift).powf(p.exponent) + p.y_shift,
            Self::Logistic(p) => {
                p.slope / (1.0 + (-p.exponent * (x - p.x_shift)).exp()) + p.y_shift
            }
            Self::Logit(p) => {
                let r = ((x - p.y_shift) / p.slope).clamp(0.0, 1.0);
                p.x_shift + (r / (1.0 - r)).ln() / p.exponent
            }
            Self::Gaussian(p) => {
                let offset = x - p.x_shift;
                p.slope * (-(offset * offset) / (2.0 * p.exponent * p.exponent)).exp() + p.y_shift
            }
            Self::Sampled(curve) => curve.sample(x),
        };
        unit_clamp(y)
    }

    /// Checks the parameters once, at load: finite numbers, and no zero divisor.
    pub fn validate(&self) -> Result<(), CurveError> {
        let params = match self {
            Self::Sampled(_) => return Ok(()),
            Self::Linear(p) | Self::Polynomial(p) | Self::Logistic(p) => p,
            Self::Logit(p) => {
                if p.slope == 0.0 {
                    return Err(CurveError::Zero("slope"));
                }
                if p.exponent == 0.0 {
                    return Err(CurveError::Zero("exponent"));
                }
                p
            }
            Self::Gaussian(p) => {
                if p.exponent == 0.0 {
                    return Err(CurveError::Zero("exponent"));
                }
                p
            }
        };
        for (name, value) in [
            ("slope", params.slope),
            ("exponent", params.exponent),
            ("x_shift", params.x_shift),
            ("y_shift", params.y_shift),
        ] {
            if !value.is_finite() {
                return Err(CurveError::NotFinite(name));
            }
        }
        Ok(())
    }
}

/// `base^exponent`, by repeated multiplication for the small whole exponents profiles use (the
/// common square is several times cheaper than `powf`, and one multiplication inline: `powi`
/// squares by multiplying `1 · (base · base)`, the same bits), by `powf` otherwise.
fn power(base: f64, exponent: f64) -> f64 {
    if exponent == 2.0 {
        base * base
    } else if exponent.fract() == 0.0 && (0.0..=8.0).contains(&exponent) {
        base.powi(exponent as i32)
    } else {
        base.powf(exponent)
    }
}

/// How a consideration turns its value into pressure.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseCurve {
    /// `d^exponent`; an exponent of 0 takes the tuning's `convex_exponent` (normally 2).
    Convex {
        /// The exponent; 0 means "the profile's".
        exponent: f64,
    },
    /// `d`.
    Linear,
    /// `below` if `value < threshold`, else `above`.
    Step {
        /// The switching value (raw).
        threshold: f64,
        /// Output below the threshold.
        below: f64,
        /// Output at or above the threshold.
        above: f64,
    },
    /// `1/(1 + exp(−steepness·(value − midpoint)))` on the raw value; a steepness of 0 means 1,
    /// a negative steepness rises as the value falls.
    Logistic {
        /// The steepness; 0 means 1.
        steepness: f64,
        /// The raw value at which the output is one half.
        midpoint: f64,
    },
    /// A shape on the normalised value `(value − min)/(max − min)`.
    Shape(Shape),
    /// A kind this version does not know: always 0.
    Unknown,
}

impl ResponseCurve {
    /// The pressure for `value` in `[min, max]`. `max <= min` gives 0; so does an unknown kind.
    #[inline]
    pub fn pressure(&self, value: f64, min: f64, max: f64, default_convex_exponent: f64) -> f64 {
        // Written so a NaN bound also lands here.
        if max.partial_cmp(&min) != Some(std::cmp::Ordering::Greater) {
            return 0.0;
        }
        let distance_from_max = ((max - value) / (max - min)).clamp(0.0, 1.0);
        match self {
            Self::Convex { exponent } => {
                let exponent = if *exponent == 0.0 {
                    default_convex_exponent
                } else {
                    *exponent
                };
                power(distance_from_max, exponent)
            }
            Self::Linear => distance_from_max,
            Self::Step {
                threshold,
                below,
                above,
            } => {
                if value < *threshold {
                    *below
                } else {
                    *above
                }
            }
            Self::Logistic {
                steepness,
                midpoint,
            } => {
                let steepness = if *steepness == 0.0 { 1.0 } else { *steepness };
                1.0 / (1.0 + (-steepness * (value - midpoint)).exp())
            }
            Self::Shape(shape) => shape.evaluate(1.0 - distance_from_max),
            Self::Unknown => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inline square is `powi`'s square, bit for bit, wherever the base is.
    #[test]
    fn the_square_is_powi_bit_for_bit() {
        let mut rng = crate::rng::DetRng::new(3);
        let specials = [
            0.0,
            -0.0,
            1e-160,
            5e-324,
            1e200,
            f64::INFINITY,
            f64::NAN,
            -3.5,
        ];
        let randoms = (0..10_000).map(|_| rng.next_unit() * 2.0 - 0.5);
        for base in specials.into_iter().chain(randoms) {
            let squared = base.powi(std::hint::black_box(2));
            assert_eq!(power(base, 2.0).to_bits(), squared.to_bits(), "{base}");
        }
    }

    fn params(slope: f64, exponent: f64, x_shift: f64, y_shift: f64) -> ShapeParams {
        ShapeParams {
            slope,
            exponent,
            x_shift,
            y_shift,
        }
    }

    fn close(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() < 1e-9
    }

    #[test]
    fn needs_curves_read_the_distance_from_the_maximum() {
        // (curve, value, min, max, default exponent, expected pressure)
        let cases = [
            (
                ResponseCurve::Convex { exponent: 0.0 },
                20.0,
                0.0,
                100.0,
                2.0,
                0.64,
            ),
            (
                ResponseCurve::Convex { exponent: 3.0 },
                20.0,
                0.0,
                100.0,
                2.0,
                0.512,
            ),
            (
                ResponseCurve::Convex { exponent: 0.0 },
                100.0,
                0.0,
                100.0,
                2.0,
                0.0,
            ),
            (
                ResponseCurve::Convex { exponent: 0.0 },
                -50.0,
                0.0,
                100.0,
                2.0,
                1.0,
            ),
            (ResponseCurve::Linear, 25.0, 0.0, 100.0, 2.0, 0.75),
            (ResponseCurve::Linear, 150.0, 0.0, 100.0, 2.0, 0.0),
            (ResponseCurve::Linear, 50.0, 100.0, 100.0, 2.0, 0.0),
            (ResponseCurve::Linear, 50.0, 100.0, 0.0, 2.0, 0.0),
            (ResponseCurve::Unknown, 0.0, 0.0, 100.0, 2.0, 0.0),
        ];
        for (curve, value, min, max, exponent, expected) in cases {
            let actual = curve.pressure(value, min, max, exponent);
            assert!(
                close(actual, expected),
                "{curve:?} at {value}: {actual} != {expected}"
            );
        }
    }

    #[test]
    fn step_and_logistic_read_the_raw_value() {
        let step = ResponseCurve::Step {
            threshold: 30.0,
            below: 1.0,
            above: 0.2,
        };
        assert_eq!(step.pressure(29.9, 0.0, 100.0, 2.0), 1.0);
        assert_eq!(step.pressure(30.0, 0.0, 100.0, 2.0), 0.2);
        let rising = ResponseCurve::Logistic {
            steepness: 0.0,
            midpoint: 50.0,
        };
        assert!(close(rising.pressure(50.0, 0.0, 100.0, 2.0), 0.5));
        assert!(close(
            rising.pressure(51.0, 0.0, 100.0, 2.0),
            1.0 / (1.0 + (-1.0f64).exp())
        ));
        let need_style = ResponseCurve::Logistic {
            steepness: -0.2,
            midpoint: 30.0,
        };
        assert!(need_style.pressure(10.0, 0.0, 100.0, 2.0) > 0.95);
        assert!(need_style.pressure(90.0, 0.0, 100.0, 2.0) < 0.01);
    }

    #[test]
    fn shapes_follow_their_formulas_and_clamp() {
        let cases = [
            (Shape::Linear(params(1.0, 1.0, 0.0, 0.0)), 0.3, 0.3),
            (Shape::Linear(params(-1.0, 1.0, 0.0, 1.0)), 0.3, 0.7),
            (Shape::Linear(params(2.0, 1.0, 0.0, 0.0)), 0.9, 1.0),
            (Shape::Polynomial(params(1.0, 2.0, 0.0, 0.0)), 0.5, 0.25),
            (Shape::Polynomial(params(1.0, 0.5, 0.0, 0.0)), 0.25, 0.5),
            (Shape::Logistic(params(1.0, 10.0, 0.5, 0.0)), 0.5, 0.5),
            (Shape::Gaussian(params(1.0, 0.1, 0.5, 0.0)), 0.5, 1.0),
            (
                Shape::Gaussian(params(1.0, 0.1, 0.5, 0.0)),
                0.6,
                (-0.5f64).exp(),
            ),
            (Shape::Logit(params(1.0, 10.0, 0.5, 0.0)), 0.5, 0.5),
            (Shape::Logit(params(1.0, 10.0, 0.5, 0.0)), 0.0, 0.0),
            (Shape::Logit(params(1.0, 10.0, 0.5, 0.0)), 1.0, 1.0),
            (Shape::Logit(params(1.0, -10.0, 0.5, 0.0)), 0.0, 1.0),
            (Shape::Logit(params(1.0, -10.0, 0.5, 0.0)), 1.0, 0.0),
            // A fractional power of a negative base is NaN before the clamp; never after.
            (Shape::Polynomial(params(1.0, 0.5, 0.5, 0.0)), 0.2, 0.0),
        ];
        for (shape, x, expected) in cases {
            let actual = shape.evaluate(x);
            assert!(
                close(actual, expected),
                "{shape:?} at {x}: {actual} != {expected}"
            );
        }
    }

    #[test]
    fn logit_inverts_logistic_inside_the_range() {
        let p = params(1.0, 8.0, 0.4, 0.0);
        let logistic = Shape::Logistic(p);
        let logit = Shape::Logit(p);
        for x in [0.2, 0.35, 0.4, 0.5, 0.6] {
            let y = logistic.evaluate(x);
            assert!(close(logit.evaluate(y), x), "x={x}");
        }
    }

    #[test]
    fn sampled_curves_interpolate_and_hold_their_edges() {
        let curve = SampledCurve::new(vec![(1.0, 1.0), (0.0, 0.0), (0.5, 0.0)]).expect("valid");
        assert_eq!(curve.keys()[1], (0.5, 0.0));
        let shape = Shape::Sampled(curve);
        let cases = [
            (-1.0, 0.0),
            (0.0, 0.0),
            (0.25, 0.0),
            (0.75, 0.5),
            (1.0, 1.0),
            (2.0, 1.0),
        ];
        for (x, expected) in cases {
            assert!(close(shape.evaluate(x), expected), "x={x}");
        }
        let single = Shape::Sampled(SampledCurve::new(vec![(0.3, 0.8)]).expect("valid"));
        assert!(close(single.evaluate(0.0), 0.8) && close(single.evaluate(1.0), 0.8));
    }

    #[test]
    fn bad_parameters_are_refused_at_load() {
        assert_eq!(SampledCurve::new(vec![]), Err(CurveError::NoKeys));
        assert_eq!(
            SampledCurve::new(vec![(0.5, 0.0), (0.5, 1.0)]),
            Err(CurveError::DuplicateKey(0.5))
        );
        assert_eq!(
            Shape::Gaussian(params(1.0, 0.0, 0.5, 0.0)).validate(),
            Err(CurveError::Zero("exponent"))
        );
        assert_eq!(
            Shape::Logit(params(0.0, 1.0, 0.0, 0.0)).validate(),
            Err(CurveError::Zero("slope"))
        );
        assert_eq!(
            Shape::Linear(params(f64::INFINITY, 1.0, 0.0, 0.0)).validate(),
            Err(CurveError::NotFinite("slope"))
        );
        assert_eq!(Shape::Linear(ShapeParams::default()).validate(), Ok(()));
    }
}
