//! One affect tick: read a frozen snapshot, turn the tick's events into per-channel impulses,
//! run one synchronous update of every state, clamp, then run the outburst overlay's latch
//! and displaced discharge. Equation order never matters: every term reads the snapshot, and
//! sums run in the model's canonical order.

use super::config::ChannelKind;
use super::model::AffectModel;

/// Something that happened to the agent this tick.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AffectEvent {
    /// Its kind, looked up in the model's channels (`insult`, `hunger_pang`…); unknown kinds
    /// do nothing.
    pub kind: String,
    /// Who caused it (relational filter; the target of a displaced discharge). `None` for
    /// sourceless events such as weather.
    pub source: Option<String>,
    /// What object or place it concerns (affinity filter).
    pub object: Option<String>,
    /// Scales the impulse; 1 for an ordinary event.
    pub magnitude: f64,
}

impl AffectEvent {
    /// An event of magnitude 1 with no source or object.
    pub fn new(kind: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            source: None,
            object: None,
            magnitude: 1.0,
        }
    }

    /// The same event caused by `source`.
    pub fn from_source(mut self, source: impl Into<String>) -> Self {
        self.source = Some(source.into());
        self
    }
}

/// An agent's affect: one value per state of its model, and the overlay's memory.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AffectState {
    /// Values in the model's state order.
    pub values: Vec<f64>,
    /// Whether a burst is latched.
    pub latched: bool,
    /// Consecutive ticks anger and stress have held above their latch thresholds.
    pub above_ticks: u64,
    /// Ticks run.
    pub tick: u64,
    /// Per provoker, the tick of the last discharge at them (for the refractory edge).
    pub last_discharge: Vec<(String, u64)>,
}

/// A lash-out at the provoker in front of the agent while a burst is latched.
#[derive(Clone, Debug, PartialEq)]
pub struct Discharge {
    /// Who it is aimed at.
    pub target: String,
    /// How hard: anger, softened when the same provoker was hit within the refractory window.
    pub intensity: f64,
    /// Whether the refractory edge softened it.
    pub softened: bool,
}

/// What one tick produced beyond the new values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AffectTick {
    /// A burst latched this tick.
    pub burst_started: bool,
    /// A burst released this tick.
    pub burst_ended: bool,
    /// A displaced discharge, if the gate opened.
    pub discharge: Option<Discharge>,
}

impl AffectModel {
    /// Every state at rest, no burst.
    pub fn initial_state(&self) -> AffectState {
        AffectState {
            values: self.rest.clone(),
            latched: false,
            above_ticks: 0,
            tick: 0,
            last_discharge: Vec::new(),
        }
    }

    fn clamp(&self, index: usize, value: f64) -> f64 {
        let low = if self.signed[index] { -1.0 } else { 0.0 };
        if value.is_nan() {
            self.rest[index]
        } else {
            value.clamp(low, 1.0)
        }
    }

    fn filter_gain(&self, kind: ChannelKind, event: &AffectEvent) -> f64 {
        let lookup = |table: &[(String, f64)], key: &Option<String>| {
            key.as_ref()
                .and_then(|key| table.iter().find(|(k, _)| k == key))
                .map_or(1.0, |(_, gain)| *gain)
        };
        match kind {
            ChannelKind::Relational => lookup(&self.sources, &event.source),
            ChannelKind::Affinity => lookup(&self.objects, &event.object),
            ChannelKind::Physiological => 1.0,
        }
    }

    /// Runs one tick with `events`.
    pub fn step(&self, state: &mut AffectState, events: &[AffectEvent]) -> AffectTick {
        let snapshot = state.values.clone();
        let mut next: Vec<f64> = snapshot
            .iter()
            .enumerate()
            .map(|(i, x)| self.rest[i] + (x - self.rest[i]) * self.decay[i])
            .collect();
        let escalation = self.outburst.as_ref().map_or(0.0, |o| o.escalation);
        for (&(from, to, gain), &on_loop) in self.couplings.iter().zip(&self.on_loop) {
            // Under the overlay a loop edge escalates with the operating point of its target.
            let escalated = if on_loop {
                1.0 + escalation * snapshot[to]
            } else {
                1.0
            };
            next[to] += gain * escalated * snapshot[from];
        }
        for event in events {
            let Some(channel) = self.channels.iter().find(|c| c.name == event.kind) else {
                continue;
            };
            let gain = self.filter_gain(channel.kind, event)
                * if event.magnitude.is_finite() {
                    event.magnitude
                } else {
                    0.0
                };
            for &(target, impulse) in &channel.targets {
                next[target] += impulse * gain;
            }
        }
        let mut tick = AffectTick::default();
        if let Some(o) = self.outburst.as_ref().filter(|_| state.latched) {
            next[o.anger] -= o.extinction_per_tick * snapshot[o.anger];
            next[o.stress] -= o.extinction_per_tick * snapshot[o.stress];
        }
        for (i, value) in next.iter_mut().enumerate() {
            *value = self.clamp(i, *value);
        }
        state.values = next;
        state.tick += 1;
        if let Some(o) = &self.outburst {
            let (anger, stress) = (state.values[o.anger], state.values[o.stress]);
            if state.latched {
                if anger < o.exit_anger {
                    state.latched = false;
                    state.above_ticks = 0;
                    tick.burst_ended = true;
                }
            } else if anger > o.latch_anger && stress > o.latch_stress {
                state.above_ticks += 1;
                if state.above_ticks >= o.confirm_ticks {
                    state.latched = true;
                    tick.burst_started = true;
                }
            } else {
                state.above_ticks = 0;
            }
            if state.latched && anger > o.discharge_anger {
                // Only an event with a source opens the gate: you cannot kick the rain.
                if let Some(source) = events.iter().find_map(|e| e.source.clone()) {
                    let now = state.tick;
                    let recent = state.last_discharge.iter().any(|(who, at)| {
                        *who == source && now.saturating_sub(*at) <= o.refractory_ticks
                    });
                    let intensity = if recent {
                        anger * o.refractory_softening
                    } else {
                        anger
                    };
                    state.last_discharge.retain(|(who, _)| *who != source);
                    state.last_discharge.push((source.clone(), now));
                    tick.discharge = Some(Discharge {
                        target: source,
                        intensity,
                        softened: recent,
                    });
                }
            }
        }
        tick
    }
}
