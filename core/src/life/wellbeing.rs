//! Mood and stress derived from needs: needs are considerations whose weights
//! are the agent's personality — the single source of priority — and mood and stress are read
//! from them, never set by hand.
//!
//! - Satisfaction is the weighted mean of the needs' normalised values, in [0, 1].
//! - Mood is `2·satisfaction − 1` plus a bounded modifier from remembered events (a gift
//!   lifts it, an insult sinks it; each memory fades with a half-life), clamped to [−1, 1].
//! - Stress accumulates while needs are unmet, at `stress_gain_per_hour` per unit of weighted
//!   shortfall (each need's weight times how far it is below the threshold), and recovers at
//!   `stress_recovery_per_hour × (1 − shortfall / stress_tolerance)` — fully with every need
//!   met, not at all once the shortfall reaches the tolerance — clamped to [0, 1]. So a mild
//!   shortfall (one low-weight need a little below its level) is borne and stress settles
//!   where the two balance, while a serious one (a heavy need far below) drives stress up; a
//!   single unmet need can no longer pin stress at its maximum for weeks. Asleep (running an
//!   action carrying `sleep_tag`), stress recovers at the full rate whatever is unmet: a night
//!   is restful even for one who went to bed lonely.
//! - An unmet need grows urgent: while a need is below its threshold its weight in decisions
//!   is its personality weight × `(1 + stress_urgency · stress)` × `(1 + min(hours unmet /
//!   need_patience_hours, need_urgency_cap))` (back to the personality weight once it is met),
//!   so a stressed NPC sees to what it lacks before its trade — a thief at stress 1 weighs its
//!   loneliness three times. A need left unmet also weighs at least the NPC's heaviest need ×
//!   `min(hours unmet / need_overdue_hours, 1 + need_urgency_cap)` (× the same stress factor):
//!   personality orders what is seen to first, not what is never seen to, so a light need (an
//!   innkeeper's ambition, weight 0.3 beside trade's 1.8) left half a day is as pressing as the
//!   heaviest, and more so after, and wins an hour even from a full working day.
//! - External changes to a need (events, not the need's own decay) are damped to at most
//!   `max_need_delta_per_tick` per tick, so one event cannot swing a need across its range.

use crate::decision::agent::Agent;
use crate::vocabulary::Symbol;
use thin_vec::ThinVec;

/// The numbers behind mood and stress, each a named default.
#[derive(Clone, Debug, PartialEq)]
pub struct WellbeingConfig {
    /// Per-need weight (personality); needs not listed weigh 1.
    pub weights: Vec<(Symbol, f64)>,
    /// Below this normalised value a need is unmet and feeds stress; default 0.3.
    pub unmet_threshold: f64,
    /// Stress gained per game hour per unit of weighted shortfall; default 0.5.
    pub stress_gain_per_hour: f64,
    /// Stress lost per game hour when no need is unmet; default 0.2.
    pub stress_recovery_per_hour: f64,
    /// Weighted shortfall at which stress stops recovering; default 0.1.
    pub stress_tolerance: f64,
    /// How much stress raises an unmet need's weight in decisions (× `1 + this · stress`);
    /// default 2.
    pub stress_urgency: f64,
    /// Game hours unmet that add the need's own weight again in decisions; default 12.
    pub need_patience_hours: f64,
    /// The most that time unmet multiplies a need's weight by, less one; default 3.
    pub need_urgency_cap: f64,
    /// Game hours unmet after which a need weighs at least as much as the agent's heaviest
    /// need (in proportion to the time unmet, up to `1 + need_urgency_cap` times it); default
    /// 12.
    pub need_overdue_hours: f64,
    /// Largest share of mood remembered events may move; default 0.2.
    pub memory_bound: f64,
    /// Game hours for a remembered event's effect to halve; default 6.
    pub memory_half_life_hours: f64,
    /// Largest external change to a need per tick, in normalised units; default 0.15.
    pub max_need_delta_per_tick: f64,
    /// How a social event of each kind moves mood (−1…1), remembered and fading; kinds not
    /// listed leave mood alone. Default: none (archetypes name theirs in `event_moods`).
    pub event_moods: Vec<(String, f64)>,
    /// The tag of the actions that sleep (stress recovers fully while one runs); none: no
    /// action is restful.
    pub sleep_tag: Option<Symbol>,
}

impl Default for WellbeingConfig {
    fn default() -> Self {
        Self::with_limits(Vec::new(), Vec::new(), &WellbeingLimits::default())
    }
}

/// The numbers of mood and stress an archetype may set (`wellbeing:` in its file, inherited
/// like the rest); each a named default.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WellbeingLimits {
    /// Below this normalised value a need is unmet and feeds stress; default 0.3.
    pub unmet_threshold: f64,
    /// Stress gained per game hour per unit of weighted shortfall; default 0.5.
    pub stress_gain_per_hour: f64,
    /// Stress lost per game hour when no need is unmet; default 0.2.
    pub stress_recovery_per_hour: f64,
    /// Weighted shortfall at which stress stops recovering; default 0.1.
    pub stress_tolerance: f64,
    /// How much stress raises an unmet need's weight in decisions (× `1 + this · stress`);
    /// default 2.
    pub stress_urgency: f64,
    /// Game hours unmet that add the need's own weight again in decisions; default 12.
    pub need_patience_hours: f64,
    /// The most that time unmet multiplies a need's weight by, less one; default 3.
    pub need_urgency_cap: f64,
    /// Game hours unmet after which a need weighs at least as much as the agent's heaviest
    /// need (in proportion to the time unmet, up to `1 + need_urgency_cap` times it); default
    /// 12.
    pub need_overdue_hours: f64,
    /// Largest share of mood remembered events may move; default 0.2.
    pub memory_bound: f64,
    /// Game hours for a remembered event's effect to halve; default 6.
    pub memory_half_life_hours: f64,
    /// Largest external change to a need per tick, in normalised units; default 0.15.
    pub max_need_delta_per_tick: f64,
}

impl Default for WellbeingLimits {
    fn default() -> Self {
        Self {
            unmet_threshold: 0.3,
            stress_gain_per_hour: 0.5,
            stress_recovery_per_hour: 0.2,
            stress_tolerance: 0.1,
            stress_urgency: 2.0,
            need_patience_hours: 12.0,
            need_urgency_cap: 3.0,
            need_overdue_hours: 12.0,
            memory_bound: 0.2,
            memory_half_life_hours: 6.0,
            max_need_delta_per_tick: 0.15,
        }
    }
}

impl WellbeingConfig {
    /// A config of need `weights` and `event_moods` under `limits`.
    pub fn with_limits(
        weights: Vec<(Symbol, f64)>,
        event_moods: Vec<(String, f64)>,
        limits: &WellbeingLimits,
    ) -> Self {
        Self {
            weights,
            unmet_threshold: limits.unmet_threshold,
            stress_gain_per_hour: limits.stress_gain_per_hour,
            stress_recovery_per_hour: limits.stress_recovery_per_hour,
            stress_tolerance: limits.stress_tolerance,
            stress_urgency: limits.stress_urgency,
            need_patience_hours: limits.need_patience_hours,
            need_urgency_cap: limits.need_urgency_cap,
            need_overdue_hours: limits.need_overdue_hours,
            memory_bound: limits.memory_bound,
            memory_half_life_hours: limits.memory_half_life_hours,
            max_need_delta_per_tick: limits.max_need_delta_per_tick,
            event_moods,
            sleep_tag: None,
        }
    }
}

/// A remembered event's effect on mood.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Memory {
    /// Mood change when it happened (−1..1).
    pub mood_delta: f64,
    /// Game hour it happened.
    pub at_hours: f64,
}

/// An agent's mood and stress and the memories behind them.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Wellbeing {
    /// −1 (miserable) … 1 (content).
    pub mood: f64,
    /// 0 (calm) … 1 (overwhelmed).
    pub stress: f64,
    /// Recent events that colour mood.
    pub memories: ThinVec<Memory>,
    /// Each need below its threshold and the game hour it fell there.
    #[serde(default)]
    pub unmet_since: ThinVec<(Symbol, f64)>,
}

/// Most memories an agent keeps (the oldest is forgotten first).
pub const MEMORY_CAPACITY: usize = 16;

fn normalised(value: f64, min: f64, max: f64) -> f64 {
    if max > min {
        ((value - min) / (max - min)).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

impl WellbeingConfig {
    fn weight(&self, need: Symbol) -> f64 {
        self.weights
            .iter()
            .find(|(n, _)| *n == need)
            .map_or(1.0, |(_, w)| *w)
    }

    /// Weighted mean of normalised need values (1 with no needs).
    pub fn satisfaction(&self, agent: &Agent) -> f64 {
        let (sum, total) = agent
            .considerations
            .iter()
            .fold((0.0, 0.0), |(sum, total), c| {
                let w = self.weight(c.name);
                (sum + w * normalised(c.value, c.min(), c.max()), total + w)
            });
        if total > 0.0 { sum / total } else { 1.0 }
    }

    /// Whether an action carrying `tags` sleeps.
    pub fn sleeps(&self, tags: &[Symbol]) -> bool {
        self.sleep_tag.is_some_and(|sleep| tags.contains(&sleep))
    }

    /// Updates mood and stress after `hours` of game time at `now_hours` (`asleep`: the agent
    /// slept through them).
    pub fn update(
        &self,
        wellbeing: &mut Wellbeing,
        agent: &Agent,
        (now_hours, hours): (f64, f64),
        asleep: bool,
    ) {
        let half_life = self.memory_half_life_hours.max(f64::MIN_POSITIVE);
        wellbeing
            .memories
            .retain(|m| now_hours - m.at_hours < 10.0 * half_life);
        let remembered: f64 = wellbeing
            .memories
            .iter()
            .map(|m| m.mood_delta * (-(now_hours - m.at_hours).max(0.0) / half_life).exp2())
            .sum();
        let modifier = remembered.clamp(-self.memory_bound, self.memory_bound);
        wellbeing.mood = (2.0 * self.satisfaction(agent) - 1.0 + modifier).clamp(-1.0, 1.0);
        let shortfall: f64 = agent
            .considerations
            .iter()
            .map(|c| {
                self.weight(c.name)
                    * (self.unmet_threshold - normalised(c.value, c.min(), c.max())).max(0.0)
            })
            .sum();
        let change = if asleep {
            -self.stress_recovery_per_hour * hours
        } else {
            let recovery =
                (1.0 - shortfall / self.stress_tolerance.max(f64::MIN_POSITIVE)).max(0.0);
            (shortfall * self.stress_gain_per_hour - recovery * self.stress_recovery_per_hour)
                * hours
        };
        wellbeing.stress = (wellbeing.stress + change).clamp(0.0, 1.0);
        let unmet = |c: &crate::decision::consideration::Consideration| {
            normalised(c.value, c.min(), c.max()) < self.unmet_threshold
        };
        wellbeing.unmet_since.retain(|(need, _)| {
            agent
                .considerations
                .iter()
                .any(|c| c.name == *need && unmet(c))
        });
        for c in agent.considerations.iter().filter(|c| unmet(c)) {
            if !wellbeing
                .unmet_since
                .iter()
                .any(|(need, _)| *need == c.name)
            {
                wellbeing.unmet_since.push((c.name, now_hours));
            }
        }
    }

    /// Sets the weight of each need the config weighs: its personality weight, raised by stress
    /// while the need is unmet (see the module documentation).
    pub fn weigh_needs(&self, wellbeing: &Wellbeing, agent: &mut Agent, now_hours: f64) {
        let stressed = 1.0 + self.stress_urgency.max(0.0) * wellbeing.stress;
        let patience = self.need_patience_hours.max(f64::MIN_POSITIVE);
        let overdue = self.need_overdue_hours.max(f64::MIN_POSITIVE);
        let heaviest = self.weights.iter().map(|(_, w)| *w).fold(0.0, f64::max);
        for c in agent.considerations.iter_mut() {
            let Some(&(_, base)) = self.weights.iter().find(|(n, _)| *n == c.name) else {
                continue;
            };
            c.weight = match wellbeing.unmet_since.iter().find(|(n, _)| *n == c.name) {
                Some((_, since)) => {
                    let hours = (now_hours - since).max(0.0);
                    let waited = (hours / patience).min(self.need_urgency_cap);
                    let floor = heaviest * (hours / overdue).min(1.0 + self.need_urgency_cap);
                    stressed * (base * (1.0 + waited)).max(floor)
                }
                None => base,
            };
        }
    }

    /// Remembers an event's effect on mood (the oldest memory goes when full).
    pub fn remember(&self, wellbeing: &mut Wellbeing, mood_delta: f64, now_hours: f64) {
        if wellbeing.memories.len() >= MEMORY_CAPACITY {
            wellbeing.memories.remove(0);
        }
        wellbeing.memories.push(Memory {
            mood_delta: mood_delta.clamp(-1.0, 1.0),
            at_hours: now_hours,
        });
    }

    /// How an event of `kind` moves mood by this configuration (0 for a kind it does not name).
    pub fn event_mood(&self, kind: &str) -> f64 {
        self.event_moods
            .iter()
            .find(|(k, _)| k == kind)
            .map_or(0.0, |(_, mood)| *mood)
    }

    /// Applies an external change to a need, damped to `max_need_delta_per_tick` of its range.
    /// Returns the change actually applied.
    pub fn nudge(&self, agent: &mut Agent, need: Symbol, delta: f64) -> f64 {
        let Some(c) = agent.considerations.iter_mut().find(|c| c.name == need) else {
            return 0.0;
        };
        let limit = self.max_need_delta_per_tick * (c.max() - c.min()).abs();
        let applied = delta.clamp(-limit, limit);
        let before = c.value;
        c.value += applied;
        c.clamp_value();
        c.value - before
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::consideration::Consideration;
    use crate::decision::world::Position;
    use crate::vocabulary::Vocabulary;

    fn agent(v: &mut Vocabulary, needs: &[(&str, f64)]) -> Agent {
        let mut agent = Agent::new("a", Position::default());
        for (name, value) in needs {
            agent
                .considerations
                .push(Consideration::new(v.intern(name), *value, 0.0, 1.0));
        }
        agent
    }

    #[test]
    fn mood_follows_weighted_satisfaction() {
        let mut v = Vocabulary::new();
        let content = agent(&mut v, &[("hunger", 0.9), ("social", 0.9)]);
        let lonely = agent(&mut v, &[("hunger", 0.9), ("social", 0.1)]);
        let config = WellbeingConfig {
            weights: vec![(v.intern("social"), 3.0)],
            ..Default::default()
        };
        let (mut a, mut b) = (Wellbeing::default(), Wellbeing::default());
        config.update(&mut a, &content, (0.0, 1.0), false);
        config.update(&mut b, &lonely, (0.0, 1.0), false);
        assert!((a.mood - 0.8).abs() < 1e-12);
        assert!(
            (b.mood - (2.0 * (0.9 + 0.3) / 4.0 - 1.0)).abs() < 1e-12,
            "social weighs 3: {}",
            b.mood
        );
    }

    #[test]
    fn remembered_events_move_mood_within_a_bound_and_fade() {
        let mut v = Vocabulary::new();
        let neutral = agent(&mut v, &[("hunger", 0.5)]);
        let config = WellbeingConfig::default();
        let mut w = Wellbeing::default();
        for _ in 0..5 {
            config.remember(&mut w, 0.4, 10.0);
        }
        config.update(&mut w, &neutral, (10.0, 0.0), false);
        assert!((w.mood - 0.2).abs() < 1e-12, "bounded: {}", w.mood);
        config.update(&mut w, &neutral, (10.0 + 6.0 * 4.0, 0.0), false);
        assert!(w.mood < 0.15 && w.mood > 0.0, "fading: {}", w.mood);
    }

    #[test]
    fn unmet_needs_build_stress_and_met_ones_let_it_go() {
        let mut v = Vocabulary::new();
        let starving = agent(&mut v, &[("hunger", 0.1), ("rest", 0.8)]);
        let fine = agent(&mut v, &[("hunger", 0.8), ("rest", 0.8)]);
        let config = WellbeingConfig::default();
        let mut w = Wellbeing::default();
        config.update(&mut w, &starving, (0.0, 2.0), false);
        assert!(
            (w.stress - 0.2).abs() < 1e-12,
            "0.2 shortfall × 0.5/h × 2 h: {}",
            w.stress
        );
        config.update(&mut w, &fine, (2.0, 0.5), false);
        assert!((w.stress - 0.1).abs() < 1e-12);
    }

    #[test]
    fn external_changes_are_damped_per_tick() {
        let mut v = Vocabulary::new();
        let mut a = agent(&mut v, &[("hunger", 0.5)]);
        let hunger = v.intern("hunger");
        let applied = WellbeingConfig::default().nudge(&mut a, hunger, -0.9);
        assert!((applied + 0.15).abs() < 1e-12);
        assert!((a.considerations[0].value - 0.35).abs() < 1e-12);
    }

    #[test]
    fn a_mild_shortfall_is_borne_and_a_serious_one_drives_stress_up() {
        let mut v = Vocabulary::new();
        let config = WellbeingConfig {
            weights: vec![(v.intern("ambition"), 0.3), (v.intern("survival"), 1.5)],
            ..Default::default()
        };
        // Ambition (weight 0.3) at 0.1: a weighted shortfall of 0.06, under the tolerance.
        let mild = agent(&mut v, &[("ambition", 0.1), ("survival", 0.9)]);
        let mut w = Wellbeing {
            stress: 1.0,
            ..Wellbeing::default()
        };
        for hour in 0..24 {
            config.update(&mut w, &mild, (f64::from(hour), 1.0), false);
        }
        assert!(
            w.stress < 0.01,
            "recovers while one light need is low: {}",
            w.stress
        );
        // Survival (weight 1.5) at 0.1: 0.3 of shortfall, three times the tolerance.
        let serious = agent(&mut v, &[("ambition", 0.9), ("survival", 0.1)]);
        for hour in 0..8 {
            config.update(&mut w, &serious, (f64::from(hour), 1.0), false);
        }
        assert!(w.stress > 0.99, "{}", w.stress);
        for hour in 8..13 {
            config.update(&mut w, &serious, (f64::from(hour), 1.0), true);
        }
        assert!(w.stress < 1e-9, "a night's sleep is restful: {}", w.stress);
    }

    #[test]
    fn stress_makes_an_unmet_need_weigh_more_until_it_is_met() {
        let mut v = Vocabulary::new();
        let social = v.intern("social");
        let config = WellbeingConfig {
            weights: vec![(social, 0.8)],
            ..Default::default()
        };
        let mut lonely = agent(&mut v, &[("social", 0.0), ("hunger", 0.1)]);
        let stressed = Wellbeing {
            stress: 1.0,
            ..Wellbeing::default()
        };
        let mut stressed = stressed;
        config.update(&mut stressed, &lonely, (10.0, 0.0), false);
        stressed.stress = 1.0;
        config.weigh_needs(&stressed, &mut lonely, 10.0);
        assert!((lonely.considerations[0].weight - 0.8 * 3.0).abs() < 1e-12);
        assert_eq!(
            lonely.considerations[1].weight, 1.0,
            "a need it does not weigh"
        );
        stressed.stress = 0.0;
        config.weigh_needs(&stressed, &mut lonely, 10.0 + 12.0);
        assert!(
            (lonely.considerations[0].weight - 0.8 * 2.0).abs() < 1e-12,
            "half a day unmet weighs it twice"
        );
        config.weigh_needs(&stressed, &mut lonely, 10.0 + 240.0);
        assert!(
            (lonely.considerations[0].weight - 0.8 * 4.0).abs() < 1e-12,
            "capped"
        );
        lonely.considerations[0].value = 0.5;
        config.update(&mut stressed, &lonely, (300.0, 0.0), false);
        config.weigh_needs(&stressed, &mut lonely, 300.0);
        assert_eq!(
            lonely.considerations[0].weight, 0.8,
            "met again: its own weight"
        );
    }

    #[test]
    fn a_light_need_left_half_a_day_weighs_as_much_as_the_heaviest() {
        let mut v = Vocabulary::new();
        let (ambition, economic) = (v.intern("ambition"), v.intern("economic"));
        let config = WellbeingConfig {
            weights: vec![(ambition, 0.3), (economic, 1.8)],
            ..Default::default()
        };
        let mut innkeeper = agent(&mut v, &[("ambition", 0.2), ("economic", 0.9)]);
        let mut calm = Wellbeing::default();
        config.update(&mut calm, &innkeeper, (0.0, 0.0), false);
        let weight_after = |hours: f64, innkeeper: &mut Agent| {
            config.weigh_needs(&calm, innkeeper, hours);
            innkeeper.considerations[0].weight
        };
        assert!((weight_after(0.0, &mut innkeeper) - 0.3).abs() < 1e-12);
        assert!(
            (weight_after(6.0, &mut innkeeper) - 0.9).abs() < 1e-12,
            "a quarter day: the heaviest's half (0.9) beats its own 1.5 times (0.45)"
        );
        assert!(
            (weight_after(12.0, &mut innkeeper) - 1.8).abs() < 1e-12,
            "half a day: as heavy as trade"
        );
        assert!((weight_after(24.0, &mut innkeeper) - 3.6).abs() < 1e-12);
        assert!(
            (weight_after(240.0, &mut innkeeper) - 1.8 * 4.0).abs() < 1e-12,
            "capped"
        );
        assert_eq!(innkeeper.considerations[1].weight, 1.8, "met: its own");
    }
}
