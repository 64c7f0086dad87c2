//! The scorecard of `geppetto simulate --world`: what a designer reads to tell a believable
//! world from a broken one, per NPC and for the world — scheduled-time adherence (a sleep block
//! kept only by sleeping), hours asleep and where, time with a critical need, needs over time
//! and the longest stretch each stayed unmet, the longest run in one non-sleep action, stress
//! held at its maximum, goals by category and how they ended, resources a day, interactions,
//! rumours and story signals — for the whole run and for each week of it with each mark's drift
//! from the first week to the last, and, over several seeds, the spread of the world's figures.
//!
//! It is counted from what any subscriber sees (the zone's messages) and from the NPCs' state
//! after each tick; it decides nothing. [`Scorecard::text`] is the glance, `--json` the whole.

mod marks;
mod npc;
mod seeds;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use crate::zone::Zone;
use marks::WEEK_HOURS;
pub use marks::{Drift, Target};
use npc::{DAY_MINUTES, Words};
pub use npc::{GoalCounts, NeedScore, NpcScore};
pub use seeds::{MAX_SEEDS, SeedSpread, Seeds, Spread, parse_seeds};

/// The whole world's figures over a run, or over one week of it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Scorecard {
    /// The world's seed.
    pub seed: u64,
    /// Game hours run.
    pub hours: f64,
    /// Share of all scheduled minutes spent on an action that fits the activity in force.
    pub adherence: Option<f64>,
    /// The largest share of time any NPC spent with a need critical.
    pub worst_critical: f64,
    /// The longest run in one non-sleep action of any NPC, game minutes.
    pub longest_action_minutes: u64,
    /// The longest stretch any NPC's stress stayed at its maximum, game minutes.
    pub stress_at_max_minutes: u64,
    /// Interactions by kind.
    pub interactions: BTreeMap<String, usize>,
    /// Interactions a player saw.
    pub witnessed: usize,
    /// Lines NPCs said aloud (barks: prompted and idle).
    pub lines: usize,
    /// Lines a player hears a game hour in a room that holds NPCs: the lines said over the
    /// hours rooms held an NPC (every NPC at full detail, as if a player stood in every room).
    pub lines_heard_per_hour: f64,
    /// Lines an NPC of each archetype that has lines says a game hour (asleep or awake), by
    /// archetype.
    pub lines_per_npc_hour: BTreeMap<String, f64>,
    /// Game minutes each room holding an NPC counts (rooms × minutes).
    #[serde(skip)]
    room_minutes: u64,
    /// Rumours heard.
    pub rumours_heard: usize,
    /// Rumours believed.
    pub rumours_believed: usize,
    /// Story signals by type.
    pub signals: BTreeMap<String, usize>,
    /// Story signals a game day.
    pub signals_per_day: f64,
    /// The most NPCs one story signal named.
    pub most_npcs_in_a_signal: usize,
    /// The most signals of one type one incident raised: signals of that type at one place,
    /// sharing an NPC, each raised within the detector's incident window of the one before.
    pub most_signals_in_an_incident: usize,
    /// Each signal raised: type, place, NPCs, game hour and its incident's count so far.
    #[serde(skip)]
    raised: Vec<(String, String, Vec<String>, f64, usize)>,
    /// Each NPC's figures.
    pub npcs: BTreeMap<String, NpcScore>,
    /// What a believable world reaches, and whether this run (in every week of it) did.
    pub targets: Vec<Target>,
    /// Each week's card, for a run longer than a week (the last may be shorter).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub weeks: Vec<Scorecard>,
    /// Each week mark from the first week to the last.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<Drift>,
    /// Game minutes counted so far.
    #[serde(skip)]
    minutes_run: u64,
    /// Whether this is one week's card (held to the week's marks only).
    #[serde(skip)]
    is_week: bool,
}

impl Scorecard {
    /// An empty card for a run of `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            ..Self::default()
        }
    }

    /// Counts one tick: the zone's messages, then every NPC's state after it — on the whole
    /// run's card and on the card of the week it falls in.
    pub fn tick(&mut self, zone: &Zone, messages: &[Value]) {
        let minutes = (zone.full_tick_hours() * 60.0).round().max(1.0) as u64;
        let week = (self.minutes_run / (WEEK_HOURS as u64 * 60)) as usize;
        if week >= self.weeks.len() {
            if let Some(last) = self.weeks.last_mut() {
                last.finish(WEEK_HOURS);
            }
            self.weeks.push(Scorecard {
                is_week: true,
                ..Scorecard::new(self.seed)
            });
        }
        self.observe(zone, messages, minutes);
        if let Some(week) = self.weeks.last_mut() {
            week.observe(zone, messages, minutes);
        }
    }

    /// Counts one tick on this card alone.
    fn observe(&mut self, zone: &Zone, messages: &[Value], minutes: u64) {
        let window = zone.social.detector_config().incident_window_hours;
        for message in messages {
            self.count(message);
            if message["type"] == "story_signal" {
                self.incident(
                    message,
                    zone.game_time as f64 * zone.full_tick_hours(),
                    window,
                );
            }
        }
        self.minutes_run += minutes;
        let day_ends = self.minutes_run % DAY_MINUTES < minutes;
        let words = Words::of(&zone.vocabulary);
        let mut rooms = std::collections::BTreeSet::new();
        for (agent, meta) in zone.agents.iter().zip(&zone.meta) {
            rooms.insert(meta.room);
            let score = self.npcs.entry(agent.agent.id.clone()).or_default();
            if score.archetype.is_none() {
                score.archetype = meta.archetype.as_deref().map(str::to_owned);
            }
            score.speaks |= agent.layers.barks.is_some();
            score.observe(agent, &zone.vocabulary, words, minutes, day_ends);
        }
        self.room_minutes += rooms.len() as u64 * minutes;
    }

    /// Places a raised signal in its incident: the latest earlier signal of its type at its
    /// place that shares an NPC with it and was raised within `window` game hours.
    fn incident(&mut self, message: &Value, at_hours: f64, window: f64) {
        let text = |field: &str| message[field].as_str().unwrap_or_default().to_owned();
        let (kind, location) = (text("signal_type"), text("location"));
        let npcs: Vec<String> = message["npcs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect();
        let count = self
            .raised
            .iter()
            .rev()
            .find(|(k, l, others, at, _)| {
                *k == kind
                    && *l == location
                    && at_hours - at <= window
                    && others.iter().any(|n| npcs.contains(n))
            })
            .map_or(1, |(.., count)| count + 1);
        self.most_signals_in_an_incident = self.most_signals_in_an_incident.max(count);
        self.raised.push((kind, location, npcs, at_hours, count));
    }

    fn count(&mut self, message: &Value) {
        let kind = message["type"].as_str().unwrap_or_default();
        let name = |field: &str| message[field].as_str().unwrap_or_default().to_owned();
        let believed = message["believed"] == true;
        match kind {
            "interaction" => {
                let what = name("kind");
                *self.interactions.entry(what.clone()).or_default() += 1;
                self.witnessed += usize::from(message["witnessed"] == true);
                for who in [name("npc"), name("with")] {
                    let score = self.npcs.entry(who).or_default();
                    *score.interactions.entry(what.clone()).or_default() += 1;
                }
            }
            "rumour_heard" => {
                self.rumours_heard += 1;
                self.rumours_believed += usize::from(believed);
            }
            "story_signal" => {
                let what = name("signal_type");
                *self.signals.entry(what.clone()).or_default() += 1;
                let named = message["npcs"].as_array().map_or(0, Vec::len);
                self.most_npcs_in_a_signal = self.most_npcs_in_a_signal.max(named);
                for who in message["npcs"].as_array().into_iter().flatten() {
                    if let Some(who) = who.as_str() {
                        let score = self.npcs.entry(who.to_owned()).or_default();
                        *score.signals.entry(what.clone()).or_default() += 1;
                    }
                }
            }
            _ => {}
        }
        let Some(npc) = message["npc"].as_str().filter(|npc| !npc.is_empty()) else {
            return;
        };
        let score = self.npcs.entry(npc.to_owned()).or_default();
        match kind {
            "action_started" => score.actions += 1,
            "bark" => {
                score.barks += 1;
                self.lines += 1;
            }
            "rumour_heard" => {
                score.rumours_heard += 1;
                score.rumours_believed += usize::from(believed);
            }
            "goal_created" | "goal_completed" | "goal_failed" | "goal_blocked" => {
                let counts = score.goals.entry(name("category")).or_default();
                match kind {
                    "goal_created" => counts.created += 1,
                    "goal_completed" => counts.completed += 1,
                    "goal_failed" => counts.failed += 1,
                    _ => counts.blocked += 1,
                }
            }
            _ => {}
        }
    }

    /// Closes the card after `hours` game hours: shares, rates and the marks (in every week,
    /// for a run longer than one).
    pub fn finish(&mut self, hours: f64) {
        self.hours = hours;
        if self.weeks.len() < 2 {
            self.weeks.clear();
        } else {
            let whole = (self.weeks.len() - 1) as f64 * WEEK_HOURS;
            if let Some(last) = self.weeks.last_mut() {
                last.finish(hours - whole);
            }
        }
        self.npcs.retain(|_, score| score.minutes > 0);
        let (mut scheduled, mut adherent) = (0, 0);
        for score in self.npcs.values_mut() {
            score.finish();
            scheduled += score.scheduled;
            adherent += score.adherent;
            self.worst_critical = self.worst_critical.max(score.critical);
            self.longest_action_minutes = self
                .longest_action_minutes
                .max(score.longest_action_minutes);
            self.stress_at_max_minutes =
                self.stress_at_max_minutes.max(score.stress_at_max_minutes);
        }
        self.adherence = (scheduled > 0).then(|| adherent as f64 / scheduled as f64);
        self.lines_heard_per_hour = if self.room_minutes > 0 {
            self.lines as f64 * 60.0 / self.room_minutes as f64
        } else {
            0.0
        };
        let mut by_archetype: BTreeMap<String, (usize, u64)> = BTreeMap::new();
        for score in self.npcs.values().filter(|score| score.speaks) {
            let kind = score.archetype.clone().unwrap_or_else(|| "-".to_owned());
            let (lines, minutes) = by_archetype.entry(kind).or_default();
            *lines += score.barks;
            *minutes += score.minutes;
        }
        self.lines_per_npc_hour = by_archetype
            .into_iter()
            .filter(|(_, (_, minutes))| *minutes > 0)
            .map(|(kind, (lines, minutes))| (kind, lines as f64 * 60.0 / minutes as f64))
            .collect();
        let days = hours / 24.0;
        let raised: usize = self.signals.values().sum();
        self.signals_per_day = if days > 0.0 {
            raised as f64 / days
        } else {
            0.0
        };
        self.targets = if self.is_week {
            marks::period_marks(self)
        } else {
            marks::run_marks(self)
        };
        self.drift = marks::drift(self);
    }

    /// The card at a glance: a line per NPC, then the world's figures, each week's for a run
    /// longer than one, and the marks.
    pub fn text(&self, zone: &str) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{zone} for {} game days ({} NPCs, every one at full detail), seed {}",
            self.hours / 24.0,
            self.npcs.len(),
            self.seed
        );
        let _ = writeln!(
            out,
            "{:<10} {:>7} {:>9} {:>8} {:>7} {:>8} {:>9} {:>9} {:>7} {:>7} {:>5}  {:<18} gold",
            "npc",
            "actions",
            "adherence",
            "critical",
            "sleep",
            "at home",
            "longest",
            "stress≥1",
            "goals+",
            "goals-",
            "barks",
            "longest unmet"
        );
        let (mut completed, mut failed) = (0, 0);
        for (npc, score) in &self.npcs {
            let done: usize = score.goals.values().map(|g| g.completed).sum();
            let lost: usize = score.goals.values().map(|g| g.failed).sum();
            completed += done;
            failed += lost;
            let unmet = score
                .longest_unmet()
                .filter(|(_, minutes)| *minutes > 0)
                .map_or_else(
                    || "-".to_owned(),
                    |(need, m)| format!("{need} {} h", m / 60),
                );
            let gold = score.resources_by_day.get("gold").map_or_else(
                || "-".to_owned(),
                |days| match (days.first(), days.last()) {
                    (Some(first), Some(last)) => format!("{first} → {last}"),
                    _ => "-".to_owned(),
                },
            );
            let _ = writeln!(
                out,
                "{npc:<10} {:>7} {:>9} {:>8} {:>7} {:>8} {:>7} h {:>7} h {:>7} {:>7} {:>5}  {unmet:<18} {gold}",
                score.actions,
                percent(score.adherence),
                percent(Some(score.critical)),
                score
                    .sleep_hours_per_day
                    .map_or_else(|| "-".to_owned(), |h| format!("{h:.1} h")),
                percent(score.sleep_at_home),
                score.longest_action_minutes / 60,
                score.stress_at_max_minutes / 60,
                done,
                lost,
                score.barks
            );
        }
        let _ = writeln!(
            out,
            "schedule adherence {} of scheduled time; goals completed {completed}, failed {failed}",
            percent(self.adherence)
        );
        let total: usize = self.interactions.values().sum();
        let _ = writeln!(
            out,
            "social life: {total} interactions ({}), {} seen by a player; {} rumours heard, {} believed",
            listed(&self.interactions, |n| n.to_string()),
            self.witnessed,
            self.rumours_heard,
            self.rumours_believed
        );
        let _ = writeln!(
            out,
            "lines a player hears: {:.1} a game hour in a room with NPCs ({} said; an NPC-hour: {})",
            self.lines_heard_per_hour,
            self.lines,
            listed(&self.lines_per_npc_hour, |rate| format!("{rate:.1}"))
        );
        let raised: usize = self.signals.values().sum();
        let _ = writeln!(
            out,
            "story signals: {raised} raised ({:.1} a day), {} distinct types: {}",
            self.signals_per_day,
            self.signals.len(),
            listed(&self.signals, |n| format!("×{n}"))
        );
        self.weeks_text(&mut out);
        let met = self.targets.iter().filter(|t| t.met).count();
        let every = if self.weeks.is_empty() {
            ""
        } else {
            " in every week"
        };
        let _ = write!(
            out,
            "a believable world{every}: {met} of {} marks met",
            self.targets.len()
        );
        for missed in self.targets.iter().filter(|t| !t.met) {
            let _ = write!(
                out,
                "\n  missed: {} {} (this run: {:.2})",
                missed.measure, missed.target, missed.value
            );
        }
        out
    }

    /// A line per week (adherence, the worst figures, the largest interaction kind, signals,
    /// marks met), then each mark's drift from the first week to the last.
    fn weeks_text(&self, out: &mut String) {
        if self.weeks.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "{:<5} {:>9} {:>8} {:>8} {:>8} {:>7} {:>24} {:>8} {:>6}",
            "week",
            "adherence",
            "critical",
            "stress≥1",
            "unmet",
            "sleep",
            "largest kind",
            "signals",
            "marks"
        );
        for (n, week) in self.weeks.iter().enumerate() {
            let total: usize = week.interactions.values().sum();
            let largest = week
                .interactions
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map_or_else(
                    || "-".to_owned(),
                    |(kind, count)| format!("{kind} {:.0} %", 100.0 * *count as f64 / total as f64),
                );
            let unmet = week
                .npcs
                .values()
                .filter_map(|s| s.longest_unmet().map(|(_, m)| m))
                .max()
                .unwrap_or(0);
            let sleep = week
                .npcs
                .values()
                .filter_map(|s| s.sleep_hours_per_day)
                .reduce(f64::min);
            let met = week.targets.iter().filter(|t| t.met).count();
            let _ = writeln!(
                out,
                "{:<5} {:>9} {:>8} {:>6} h {:>6} h {:>7} {largest:>24} {:>8.1} {:>6}",
                n + 1,
                percent(week.adherence),
                percent(Some(week.worst_critical)),
                week.stress_at_max_minutes / 60,
                unmet / 60,
                sleep.map_or_else(|| "-".to_owned(), |h| format!("{h:.1} h")),
                week.signals_per_day,
                format!("{met}/{}", week.targets.len())
            );
        }
        let moved: Vec<String> = self
            .drift
            .iter()
            .filter(|d| d.first_week.is_finite() && d.last_week.is_finite())
            .filter(|d| (d.first_week - d.last_week).abs() > f64::EPSILON)
            .map(|d| format!("{} {:.2} → {:.2}", d.measure, d.first_week, d.last_week))
            .collect();
        if !moved.is_empty() {
            let _ = writeln!(
                out,
                "drift, week 1 → week {}: {}",
                self.weeks.len(),
                moved.join("; ")
            );
        }
    }
}

/// A share as a whole percentage (`-` for none).
fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "-".to_owned(), |s| format!("{:.0} %", 100.0 * s))
}

/// `name count` pairs joined by commas (`count` written by `show`).
fn listed<T: Copy>(counts: &BTreeMap<String, T>, show: impl Fn(T) -> String) -> String {
    counts
        .iter()
        .map(|(name, n)| format!("{name} {}", show(*n)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_village_that_keeps_every_mark_meets_them_and_one_that_slips_is_named() {
        let mut card = Scorecard::new(1);
        let calm = NpcScore {
            minutes: 60 * 24 * 7,
            scheduled: 1000,
            adherent: 900,
            critical_minutes: 100,
            longest_action_minutes: 90,
            goals: BTreeMap::from([(
                "innate".to_owned(),
                GoalCounts {
                    created: 1,
                    completed: 1,
                    ..GoalCounts::default()
                },
            )]),
            ..NpcScore::default()
        };
        card.npcs.insert("ann".into(), calm);
        card.signals = (0..10).map(|i| (format!("type{i}"), 7)).collect();
        card.most_npcs_in_a_signal = 4;
        card.finish(24.0 * 7.0);
        assert!(card.targets.iter().all(|t| t.met), "{:#?}", card.targets);
        assert_eq!(card.targets.len(), 14, "with the week's signal types");
        card.most_npcs_in_a_signal = 17;
        card.finish(24.0 * 7.0);
        let missed: Vec<&str> = card
            .targets
            .iter()
            .filter(|t| !t.met)
            .map(|t| t.measure)
            .collect();
        assert_eq!(missed, ["NPCs named by one signal"]);
        assert!(
            card.text("v")
                .contains("missed: NPCs named by one signal <= 6")
        );
    }

    #[test]
    fn signals_of_one_type_at_one_place_sharing_an_npc_within_the_window_are_one_incident() {
        let signal = |kind: &str, place: &str, npcs: &[&str]| {
            serde_json::json!({"type": "story_signal", "signal_type": kind, "location": place,
                "npcs": npcs})
        };
        let mut card = Scorecard::new(1);
        card.incident(
            &signal("rivalry_escalation", "market", &["ann", "vex"]),
            10.0,
            2.0,
        );
        card.incident(&signal("discovery", "market", &["bob", "vex"]), 10.5, 2.0);
        card.incident(
            &signal("rivalry_escalation", "tavern", &["bob", "vex"]),
            10.5,
            2.0,
        );
        card.incident(
            &signal("rivalry_escalation", "market", &["cid", "dot"]),
            11.0,
            2.0,
        );
        card.incident(
            &signal("rivalry_escalation", "market", &["ann", "eve"]),
            15.0,
            2.0,
        );
        assert_eq!(
            card.most_signals_in_an_incident, 1,
            "another type, place, cast or time"
        );
        card.incident(
            &signal("rivalry_escalation", "market", &["eve", "fay"]),
            16.0,
            2.0,
        );
        assert_eq!(card.most_signals_in_an_incident, 2);
    }
}
