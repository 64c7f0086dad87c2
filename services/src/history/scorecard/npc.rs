//! One NPC's figures on the scorecard, counted from its state after each tick: schedule
//! adherence (a sleep block kept only by sleeping, at home or where the block says), time
//! asleep and where, time with a critical need, need levels a day and the longest stretch each
//! need stayed below its threshold, the longest run in one action, stress held at its maximum,
//! and the resources it holds at the end of each day.

use std::collections::BTreeMap;

use geppetto_core::life::simulator::SimulatedAgent;
use geppetto_core::life::wellbeing::WellbeingLimits;
use geppetto_core::vocabulary::{Symbol, Vocabulary};
use serde::Serialize;

/// Stress at or above this counts as held at its maximum.
const STRESS_AT_MAX: f64 = 0.999;

/// Game minutes in a day.
pub const DAY_MINUTES: u64 = 24 * 60;

/// The words a tick's observation reads in the zone's vocabulary.
#[derive(Clone, Copy, Debug, Default)]
pub struct Words {
    /// The tag every sleeping action carries (`sleep`), if any content names it.
    pub sleep_tag: Option<Symbol>,
    /// The activity of a schedule's sleep block (`sleep`), if any content names it.
    pub sleep_activity: Option<Symbol>,
}

impl Words {
    /// The words as `vocabulary` knows them.
    pub fn of(vocabulary: &Vocabulary) -> Self {
        Self {
            sleep_tag: vocabulary.lookup("sleep"),
            sleep_activity: vocabulary.lookup("sleep"),
        }
    }
}

/// One NPC's figures over a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NpcScore {
    /// Its archetype (`None`: an NPC given inline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archetype: Option<String>,
    /// Whether it has lines to say (an archetype's; an NPC given inline has none).
    #[serde(skip)]
    pub(super) speaks: bool,
    /// Game minutes it was simulated.
    pub minutes: u64,
    /// Actions it started.
    pub actions: usize,
    /// Share of its scheduled minutes spent on an action that fits the activity in force — at
    /// its place or carrying one of its tags; a sleep block only asleep, at home or at the
    /// block's place (`None`: no schedule).
    pub adherence: Option<f64>,
    /// Share of its minutes with a need critical.
    pub critical: f64,
    /// Longest run in one action that is not sleep, game minutes (the same action again at
    /// once continues the run).
    pub longest_action_minutes: u64,
    /// The action of that run.
    pub longest_action: Option<String>,
    /// Longest stretch with stress at its maximum, game minutes.
    pub stress_at_max_minutes: u64,
    /// Actions started a game hour.
    pub switches_per_hour: f64,
    /// Hours asleep a game day, on average (`None`: its schedule has no sleep block).
    pub sleep_hours_per_day: Option<f64>,
    /// Share of its sleep spent at its home or at the place its sleep block names.
    pub sleep_at_home: Option<f64>,
    /// Hours asleep each whole game day (NPCs with a sleep block).
    pub sleep_by_day: Vec<f64>,
    /// Each need (a consideration with a weight): its level a day and its stretches below its
    /// threshold.
    pub needs: BTreeMap<String, NeedScore>,
    /// Each resource it holds, at the end of each whole game day.
    pub resources_by_day: BTreeMap<String, Vec<f64>>,
    /// Goals by category: created, completed, failed, blocked.
    pub goals: BTreeMap<String, GoalCounts>,
    /// Lines said.
    pub barks: usize,
    /// Interactions it took part in (started or was the partner of), by kind.
    pub interactions: BTreeMap<String, usize>,
    /// Rumours it heard.
    pub rumours_heard: usize,
    /// Rumours it believed.
    pub rumours_believed: usize,
    /// Story signals naming it, by type.
    pub signals: BTreeMap<String, usize>,
    #[serde(skip)]
    pub(super) scheduled: u64,
    #[serde(skip)]
    pub(super) adherent: u64,
    #[serde(skip)]
    pub(super) critical_minutes: u64,
    #[serde(skip)]
    pub(super) run: Option<(String, u64)>,
    #[serde(skip)]
    pub(super) stress_run: u64,
    #[serde(skip)]
    pub(super) sleeps: bool,
    #[serde(skip)]
    pub(super) asleep_minutes: u64,
    #[serde(skip)]
    pub(super) asleep_at_home_minutes: u64,
    #[serde(skip)]
    pub(super) asleep_today: u64,
}

/// How one need fared.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NeedScore {
    /// Below this level (0–1) it is unmet.
    pub threshold: f64,
    /// Its mean level (0–1) each whole game day.
    pub daily_mean: Vec<f64>,
    /// The longest stretch it stayed below its threshold without a break, game minutes.
    pub longest_below_minutes: u64,
    #[serde(skip)]
    below_run: u64,
    #[serde(skip)]
    day_sum: f64,
    #[serde(skip)]
    day_samples: u64,
}

/// How the goals of one category fared.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GoalCounts {
    /// Taken on.
    pub created: usize,
    /// Met.
    pub completed: usize,
    /// Failed: at their deadline, or at once when nothing in the world could meet them.
    pub failed: usize,
    /// No plan reached them.
    pub blocked: usize,
}

impl NpcScore {
    /// Counts `minutes` of `agent`'s state as it stands after a tick; `day_ends` closes a
    /// whole game day's figures.
    pub(super) fn observe(
        &mut self,
        agent: &SimulatedAgent,
        vocabulary: &Vocabulary,
        words: Words,
        minutes: u64,
        day_ends: bool,
    ) {
        self.minutes += minutes;
        if agent.agent.considerations.iter().any(|c| c.is_critical()) {
            self.critical_minutes += minutes;
        }
        let running = agent.running.as_ref();
        let asleep = running.is_some_and(|r| {
            words
                .sleep_tag
                .is_some_and(|sleep| r.action.tags.contains(&sleep))
        });
        let layer = agent.layers.schedule.as_deref();
        self.sleeps |= layer.is_some_and(|layer| {
            words
                .sleep_activity
                .is_some_and(|sleep| layer.schedule.blocks.iter().any(|b| b.activity == sleep))
        });
        let home = layer.and_then(|layer| {
            layer
                .places
                .iter()
                .find(|(name, _)| name == "home")
                .map(|(_, place)| place.as_str())
        });
        let pull = agent.agent.schedule.as_ref();
        let at_home = running.is_some_and(|r| {
            Some(r.provider.as_str()) == home
                || pull.is_some_and(|p| p.place.as_deref() == Some(r.provider.as_str()))
        });
        if asleep {
            self.asleep_minutes += minutes;
            self.asleep_today += minutes;
            self.asleep_at_home_minutes += if at_home { minutes } else { 0 };
        }
        if let Some(pull) = pull {
            self.scheduled += minutes;
            let sleep_block = words.sleep_activity.is_some()
                && layer.and_then(|l| l.current) == words.sleep_activity;
            let fits = if sleep_block {
                asleep && at_home
            } else {
                running.is_some_and(|r| {
                    pull.place.as_deref() == Some(r.provider.as_str())
                        || r.action.tags.iter().any(|tag| pull.tags.contains(tag))
                })
            };
            if fits {
                self.adherent += minutes;
            }
        }
        let doing = running
            .filter(|r| !asleep && !r.action.id.contains("sleep"))
            .map(|r| format!("{}/{}", r.provider, r.action.id));
        self.run = match (self.run.take(), doing) {
            (Some((was, length)), Some(now)) if was == now => Some((was, length + minutes)),
            (_, Some(now)) => Some((now, minutes)),
            (_, None) => None,
        };
        if let Some((action, length)) = &self.run
            && *length > self.longest_action_minutes
        {
            self.longest_action_minutes = *length;
            self.longest_action = Some(action.clone());
        }
        let (stressed, threshold) = agent.layers.wellbeing.as_deref().map_or(
            (false, WellbeingLimits::default().unmet_threshold),
            |(config, w)| (w.stress >= STRESS_AT_MAX, config.unmet_threshold),
        );
        self.stress_run = if stressed {
            self.stress_run + minutes
        } else {
            0
        };
        self.stress_at_max_minutes = self.stress_at_max_minutes.max(self.stress_run);
        for need in agent
            .agent
            .considerations
            .iter()
            .filter(|c| c.weight > 0.0 && c.max() > c.min())
        {
            let level = (need.value - need.min()) / (need.max() - need.min());
            let score = self
                .needs
                .entry(vocabulary.name(need.name).to_owned())
                .or_default();
            score.threshold = threshold;
            score.below_run = if level < threshold {
                score.below_run + minutes
            } else {
                0
            };
            score.longest_below_minutes = score.longest_below_minutes.max(score.below_run);
            score.day_sum += level * minutes as f64;
            score.day_samples += minutes;
        }
        if day_ends {
            self.close_day(agent, vocabulary);
        }
    }

    /// Closes a whole game day: its sleep, its need levels and what it holds.
    fn close_day(&mut self, agent: &SimulatedAgent, vocabulary: &Vocabulary) {
        if self.sleeps {
            self.sleep_by_day
                .push(round(self.asleep_today as f64 / 60.0));
        }
        self.asleep_today = 0;
        for need in self.needs.values_mut() {
            if need.day_samples > 0 {
                need.daily_mean
                    .push(round(need.day_sum / need.day_samples as f64));
            }
            need.day_sum = 0.0;
            need.day_samples = 0;
        }
        for (name, amount) in &agent.agent.resources {
            self.resources_by_day
                .entry(vocabulary.name(*name).to_owned())
                .or_default()
                .push(round(*amount));
        }
    }

    /// Closes the figures: shares and rates.
    pub(super) fn finish(&mut self) {
        let share = |part: u64, whole: u64| (whole > 0).then(|| part as f64 / whole as f64);
        self.adherence = share(self.adherent, self.scheduled);
        self.critical = share(self.critical_minutes, self.minutes).unwrap_or(0.0);
        self.switches_per_hour = self.actions as f64 / (self.minutes as f64 / 60.0);
        let days = self.minutes as f64 / DAY_MINUTES as f64;
        self.sleep_hours_per_day =
            (self.sleeps && days > 0.0).then(|| self.asleep_minutes as f64 / 60.0 / days);
        self.sleep_at_home = if self.sleeps {
            share(self.asleep_at_home_minutes, self.asleep_minutes).or(Some(0.0))
        } else {
            None
        };
    }

    /// The need that stayed below its threshold longest, and for how many game minutes.
    pub fn longest_unmet(&self) -> Option<(&str, u64)> {
        self.needs
            .iter()
            .map(|(name, need)| (name.as_str(), need.longest_below_minutes))
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
    }
}

/// `value` to three decimals, so the JSON stays readable.
fn round(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}
