//! Compiling an [`AffectConfig`] into per-tick coefficients, and refusing what would misbehave:
//! the derived tick, exact leaks, rates scaled by the tick, windows scaled by resolution, and
//! the stability check of every loop of the linearised update.
//!
//! `time_scale` relabels the clock: every coefficient is computed from time-scale-free
//! quantities (half-lives and rates are relabelled together), so the per-tick trace is
//! bit-identical and only the seconds a tick stands for change. `resolution_factor` R divides
//! the tick: leaks stay exact (`2^(−dt/half_life)`), continuous rates apply per tick ×dt (so
//! ×1/R), tick windows (latch confirmation, refractory) ×R, event impulses are invariant.

use super::config::{AffectConfig, ChannelKind};

/// Why a configuration was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AffectConfigError {
    /// A number that must be positive and finite is not.
    #[error("{field}: must be a positive, finite number (got {value})")]
    NotPositive {
        /// The field.
        field: String,
        /// Its value.
        value: f64,
    },
    /// A number that must be finite is not.
    #[error("{field}: must be a finite number")]
    NotFinite {
        /// The field.
        field: String,
    },
    /// A name refers to a state that is not declared.
    #[error("{field}: unknown state `{name}` (declared: {declared})")]
    UnknownState {
        /// Where.
        field: String,
        /// The name.
        name: String,
        /// The declared states.
        declared: String,
    },
    /// There are no states.
    #[error("states: at least one state is needed")]
    NoStates,
    /// A loop of the linearised update has a pole on or outside the unit circle.
    #[error(
        "unstable loop {states}: spectral radius {radius:.4} ≥ 1 at dt = {dt_s} s — lower its coupling rates"
    )]
    Unstable {
        /// The states of the loop, joined by " ↔ ".
        states: String,
        /// Its spectral radius per tick.
        radius: f64,
        /// The tick it was checked at.
        dt_s: f64,
    },
}

/// An event kind's effect, compiled.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Channel {
    pub(crate) name: String,
    pub(crate) kind: ChannelKind,
    /// `(state index, impulse)`.
    pub(crate) targets: Vec<(usize, f64)>,
}

/// The outburst overlay, compiled.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Outburst {
    pub(crate) anger: usize,
    pub(crate) stress: usize,
    pub(crate) escalation: f64,
    pub(crate) latch_anger: f64,
    pub(crate) latch_stress: f64,
    pub(crate) confirm_ticks: u64,
    pub(crate) exit_anger: f64,
    /// Fraction of anger and stress removed per tick while latched.
    pub(crate) extinction_per_tick: f64,
    pub(crate) discharge_anger: f64,
    pub(crate) refractory_ticks: u64,
    pub(crate) refractory_softening: f64,
}

/// A compiled affect model: what one tick does, in canonical (name-sorted) order.
#[derive(Clone, Debug, PartialEq)]
pub struct AffectModel {
    pub(crate) names: Vec<String>,
    pub(crate) rest: Vec<f64>,
    pub(crate) decay: Vec<f64>,
    pub(crate) signed: Vec<bool>,
    /// `(from, to, per-tick gain)`, sorted by (to, from) so sums run in one order.
    pub(crate) couplings: Vec<(usize, usize, f64)>,
    /// Parallel to `couplings`: whether the edge lies on a loop (both ends in one strongly
    /// connected group) — only loop edges escalate under the outburst overlay.
    pub(crate) on_loop: Vec<bool>,
    pub(crate) channels: Vec<Channel>,
    pub(crate) sources: Vec<(String, f64)>,
    pub(crate) objects: Vec<(String, f64)>,
    pub(crate) outburst: Option<Outburst>,
    dt_s: f64,
}

fn positive(field: &str, value: f64) -> Result<f64, AffectConfigError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(AffectConfigError::NotPositive {
            field: field.to_owned(),
            value,
        })
    }
}

fn finite(field: &str, value: f64) -> Result<f64, AffectConfigError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(AffectConfigError::NotFinite {
            field: field.to_owned(),
        })
    }
}

impl AffectModel {
    /// Compiles and checks `config`.
    pub fn compile(config: &AffectConfig) -> Result<Self, AffectConfigError> {
        let tick = &config.tick;
        let nyquist = positive("tick.nyquist_factor", tick.nyquist_factor)?;
        let time_scale = positive("tick.time_scale", tick.time_scale)?;
        let resolution = positive("tick.resolution_factor", tick.resolution_factor)?;
        if config.states.is_empty() {
            return Err(AffectConfigError::NoStates);
        }
        // BTreeMap order: canonical, whatever order the file listed the states in.
        let names: Vec<String> = config.states.keys().cloned().collect();
        let declared = names.join(", ");
        let index = |field: &str, name: &str| {
            names
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| AffectConfigError::UnknownState {
                    field: field.to_owned(),
                    name: name.to_owned(),
                    declared: declared.clone(),
                })
        };
        let mut half_lives = Vec::with_capacity(names.len());
        let mut rest = Vec::with_capacity(names.len());
        let mut signed = Vec::with_capacity(names.len());
        for (name, state) in &config.states {
            half_lives.push(positive(
                &format!("states.{name}.half_life_s"),
                state.half_life_s,
            )?);
            rest.push(finite(&format!("states.{name}.rest"), state.rest)?);
            signed.push(state.signed);
        }
        let shortest = half_lives.iter().copied().fold(f64::INFINITY, f64::min);
        // The tick in base seconds (time-scale free): every coefficient derives from it.
        let base_dt = shortest / (nyquist * resolution);
        let decay = half_lives
            .iter()
            .map(|half_life| (-base_dt / half_life).exp2())
            .collect();
        let mut couplings = Vec::with_capacity(config.couplings.len());
        for (i, coupling) in config.couplings.iter().enumerate() {
            let field = format!("couplings[{i}]");
            let from = index(&format!("{field}.from"), &coupling.from)?;
            let to = index(&format!("{field}.to"), &coupling.to)?;
            couplings.push((
                from,
                to,
                finite(&format!("{field}.rate"), coupling.rate)? * base_dt,
            ));
        }
        couplings.sort_by(|a, b| (a.1, a.0).cmp(&(b.1, b.0)).then(a.2.total_cmp(&b.2)));
        let mut channels = Vec::with_capacity(config.channels.len());
        for (name, channel) in &config.channels {
            let mut targets = Vec::with_capacity(channel.targets.len());
            for (state, impulse) in &channel.targets {
                let field = format!("channels.{name}.targets.{state}");
                targets.push((index(&field, state)?, finite(&field, *impulse)?));
            }
            channels.push(Channel {
                name: name.clone(),
                kind: channel.kind,
                targets,
            });
        }
        let gains = |field: &str, map: &std::collections::BTreeMap<String, f64>| {
            map.iter()
                .map(|(key, gain)| Ok((key.clone(), finite(&format!("{field}.{key}"), *gain)?)))
                .collect::<Result<Vec<_>, AffectConfigError>>()
        };
        let sources = gains("filters.sources", &config.filters.sources)?;
        let objects = gains("filters.objects", &config.filters.objects)?;
        let o = &config.outburst;
        let outburst = if o.enabled {
            let windows = |ticks: u32| (f64::from(ticks) * resolution).round().max(1.0) as u64;
            Some(Outburst {
                anger: index("outburst.anger", &o.anger)?,
                stress: index("outburst.stress", &o.stress)?,
                escalation: finite("outburst.escalation", o.escalation)?,
                latch_anger: finite("outburst.latch_anger", o.latch_anger)?,
                latch_stress: finite("outburst.latch_stress", o.latch_stress)?,
                confirm_ticks: windows(o.confirm_ticks),
                exit_anger: finite("outburst.exit_anger", o.exit_anger)?,
                extinction_per_tick: finite("outburst.extinction_rate", o.extinction_rate)?
                    * base_dt,
                discharge_anger: finite("outburst.discharge_anger", o.discharge_anger)?,
                refractory_ticks: windows(o.refractory_ticks),
                refractory_softening: finite(
                    "outburst.refractory_softening",
                    o.refractory_softening,
                )?,
            })
        } else {
            None
        };
        let mut model = Self {
            names,
            rest,
            decay,
            signed,
            on_loop: Vec::new(),
            couplings,
            channels,
            sources,
            objects,
            outburst,
            dt_s: base_dt * time_scale,
        };
        let components = strongly_connected(&model.linear_matrix());
        let group = |state: usize| components.iter().position(|c| c.contains(&state));
        model.on_loop = model
            .couplings
            .iter()
            .map(|&(from, to, _)| group(from) == group(to))
            .collect();
        model.check_stability()?;
        Ok(model)
    }

    /// Seconds of game time one tick stands for (`time_scale` included).
    pub fn dt_s(&self) -> f64 {
        self.dt_s
    }

    /// The state names, in the model's (sorted) order.
    pub fn state_names(&self) -> &[String] {
        &self.names
    }

    /// Whether state `index` is signed (lives in [−1, 1]).
    pub fn is_signed(&self, index: usize) -> bool {
        self.signed.get(index).copied().unwrap_or(false)
    }

    /// The index of state `name`.
    pub fn state_index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The linearised one-tick update matrix `A = diag(decay) + couplings`, row = target.
    fn linear_matrix(&self) -> Vec<Vec<f64>> {
        let n = self.names.len();
        let mut matrix = vec![vec![0.0; n]; n];
        for (i, row) in matrix.iter_mut().enumerate() {
            row[i] = self.decay[i];
        }
        for &(from, to, gain) in &self.couplings {
            matrix[to][from] += gain;
        }
        matrix
    }

    /// Refuses a loop (a strongly connected group of states, including a self-coupled one)
    /// whose spectral radius per tick is ≥ 1. The radius is bounded from above by that of the
    /// loop's matrix of absolute values (Perron–Frobenius), found by power iteration — so a
    /// config accepted here is certified stable, including ones with inhibitory couplings.
    fn check_stability(&self) -> Result<(), AffectConfigError> {
        let matrix = self.linear_matrix();
        for component in strongly_connected(&matrix) {
            let self_loop = component.len() == 1
                && self
                    .couplings
                    .iter()
                    .any(|&(f, t, _)| f == t && f == component[0]);
            if component.len() < 2 && !self_loop {
                continue;
            }
            let radius = spectral_radius_bound(&matrix, &component);
            if radius >= 1.0 {
                let states: Vec<&str> = component.iter().map(|&i| self.names[i].as_str()).collect();
                return Err(AffectConfigError::Unstable {
                    states: states.join(" ↔ "),
                    radius,
                    dt_s: self.dt_s,
                });
            }
        }
        Ok(())
    }
}

/// Strongly connected components of the graph with an edge j → i where `matrix[i][j] != 0`
/// (Kosaraju, iterative), each sorted, in ascending order of their first state.
fn strongly_connected(matrix: &[Vec<f64>]) -> Vec<Vec<usize>> {
    let n = matrix.len();
    let edge = |from: usize, to: usize| from != to && matrix[to][from] != 0.0;
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for start in 0..n {
        if seen[start] {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        seen[start] = true;
        while let Some((node, next)) = stack.pop() {
            if let Some(to) = (next..n).find(|&to| edge(node, to) && !seen[to]) {
                stack.push((node, to + 1));
                seen[to] = true;
                stack.push((to, 0));
            } else {
                order.push(node);
            }
        }
    }
    let mut assigned = vec![false; n];
    let mut components = Vec::new();
    for &start in order.iter().rev() {
        if assigned[start] {
            continue;
        }
        let mut component = vec![start];
        assigned[start] = true;
        let mut cursor = 0;
        while cursor < component.len() {
            let node = component[cursor];
            cursor += 1;
            for (from, taken) in assigned.iter_mut().enumerate() {
                if !*taken && edge(from, node) {
                    *taken = true;
                    component.push(from);
                }
            }
        }
        component.sort_unstable();
        components.push(component);
    }
    components.sort();
    components
}

/// An upper bound of the spectral radius of `matrix` restricted to `component`: the Perron
/// root of the absolute-value matrix, by power iteration from the all-ones vector (the
/// Collatz–Wielandt maximum ratio bounds it from above at every step).
fn spectral_radius_bound(matrix: &[Vec<f64>], component: &[usize]) -> f64 {
    const ITERATIONS: usize = 500;
    let mut vector = vec![1.0; component.len()];
    let mut bound = f64::INFINITY;
    for _ in 0..ITERATIONS {
        let next: Vec<f64> = component
            .iter()
            .map(|&row| {
                component
                    .iter()
                    .zip(&vector)
                    .map(|(&col, v)| matrix[row][col].abs() * v)
                    .sum()
            })
            .collect();
        let ratio = next
            .iter()
            .zip(&vector)
            .map(|(n, v)| if *v > 0.0 { n / v } else { 0.0 })
            .fold(0.0, f64::max);
        bound = bound.min(ratio);
        let norm = next.iter().copied().fold(0.0, f64::max);
        if norm <= 0.0 {
            return 0.0;
        }
        vector = next.iter().map(|v| v / norm).collect();
    }
    bound
}
