//! The village scorecard of `geppetto simulate --world`: what a designer reads to tell a
//! believable village from a broken one, per NPC and for the world — scheduled-time adherence,
//! time with a critical need, the longest run in one non-sleep action, stress held at its
//! maximum, action switches per hour, goals by category and how they ended, interactions,
//! rumours and story signals — and, over several seeds, the spread of the world's figures.
//!
//! It is counted from what any subscriber sees (the zone's messages) and from the NPCs' state
//! after each tick; it decides nothing. [`Scorecard::text`] is the glance, `--json` the whole.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use crate::zone::Zone;

/// Stress at or above this counts as held at its maximum.
const STRESS_AT_MAX: f64 = 0.999;

/// One NPC's figures over a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NpcScore {
    /// Game minutes it was simulated.
    pub minutes: u64,
    /// Actions it started.
    pub actions: usize,
    /// Share of its scheduled minutes spent on an action that fits the activity in force — at
    /// its place or carrying one of its tags (`None`: no schedule).
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
    /// Goals by category: created, completed, failed (a deadline passed), blocked.
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
    scheduled: u64,
    #[serde(skip)]
    adherent: u64,
    #[serde(skip)]
    critical_minutes: u64,
    #[serde(skip)]
    run: Option<(String, u64)>,
    #[serde(skip)]
    stress_run: u64,
}

/// How the goals of one category fared.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GoalCounts {
    /// Taken on.
    pub created: usize,
    /// Met.
    pub completed: usize,
    /// Failed at their deadline.
    pub failed: usize,
    /// No plan reached them.
    pub blocked: usize,
}

/// The whole village's figures over a run.
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
    /// What a believable village reaches, and whether this run did.
    pub targets: Vec<Target>,
}

/// One mark a believable village reaches.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Target {
    /// What is measured.
    pub measure: &'static str,
    /// The mark, in words.
    pub target: &'static str,
    /// This run's value (the worst NPC's, for a per-NPC mark).
    pub value: f64,
    /// Whether the run reached it.
    pub met: bool,
}

impl Scorecard {
    /// An empty card for a run of `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            ..Self::default()
        }
    }

    /// Counts one tick: the zone's messages, then every NPC's state after it.
    pub fn tick(&mut self, zone: &Zone, messages: &[Value]) {
        let window = zone.social.detector().config.incident_window_hours;
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
        let tick_hours = zone.full_tick_hours();
        let minutes = (tick_hours * 60.0).round().max(1.0) as u64;
        for agent in &zone.agents {
            let score = self.npcs.entry(agent.agent.id.clone()).or_default();
            score.minutes += minutes;
            if agent.agent.considerations.iter().any(|c| c.is_critical()) {
                score.critical_minutes += minutes;
            }
            if let Some(pull) = &agent.agent.schedule {
                score.scheduled += minutes;
                let fits = agent.running.as_ref().is_some_and(|r| {
                    pull.place.as_deref() == Some(r.provider.as_str())
                        || r.action.tags.iter().any(|tag| pull.tags.contains(tag))
                });
                if fits {
                    score.adherent += minutes;
                }
            }
            let doing = agent
                .running
                .as_ref()
                .filter(|r| !r.action.id.contains("sleep"))
                .map(|r| format!("{}/{}", r.provider, r.action.id));
            score.run = match (score.run.take(), doing) {
                (Some((was, length)), Some(now)) if was == now => Some((was, length + minutes)),
                (_, Some(now)) => Some((now, minutes)),
                (_, None) => None,
            };
            if let Some((action, length)) = &score.run
                && *length > score.longest_action_minutes
            {
                score.longest_action_minutes = *length;
                score.longest_action = Some(action.clone());
            }
            let stressed = agent
                .wellbeing
                .as_ref()
                .is_some_and(|(_, w)| w.stress >= STRESS_AT_MAX);
            score.stress_run = if stressed {
                score.stress_run + minutes
            } else {
                0
            };
            score.stress_at_max_minutes = score.stress_at_max_minutes.max(score.stress_run);
        }
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
            "bark" => score.barks += 1,
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

    /// Closes the card after `hours` game hours: shares and rates.
    pub fn finish(&mut self, hours: f64) {
        self.hours = hours;
        self.npcs.retain(|_, score| score.minutes > 0);
        let share = |part: u64, whole: u64| (whole > 0).then(|| part as f64 / whole as f64);
        let (mut scheduled, mut adherent) = (0, 0);
        for score in self.npcs.values_mut() {
            score.adherence = share(score.adherent, score.scheduled);
            score.critical = share(score.critical_minutes, score.minutes).unwrap_or(0.0);
            score.switches_per_hour = score.actions as f64 / (score.minutes as f64 / 60.0);
            scheduled += score.scheduled;
            adherent += score.adherent;
            self.worst_critical = self.worst_critical.max(score.critical);
            self.longest_action_minutes = self
                .longest_action_minutes
                .max(score.longest_action_minutes);
            self.stress_at_max_minutes =
                self.stress_at_max_minutes.max(score.stress_at_max_minutes);
        }
        self.adherence = share(adherent, scheduled);
        let days = hours / 24.0;
        let raised: usize = self.signals.values().sum();
        self.signals_per_day = if days > 0.0 {
            raised as f64 / days
        } else {
            0.0
        };
        self.targets = self.marks();
    }

    /// The marks of a believable village against this run: the village's adherence, every
    /// scheduled NPC's, time critical, the longest non-sleep run, stress held at its maximum,
    /// innate goals ended, signals a day and how many NPCs one names (signal types over a week
    /// or longer).
    fn marks(&self) -> Vec<Target> {
        let worst = |figure: fn(&NpcScore) -> Option<f64>, lowest: bool| {
            let values = self.npcs.values().filter_map(figure);
            if lowest {
                values.fold(f64::INFINITY, f64::min)
            } else {
                values.fold(0.0, f64::max)
            }
        };
        let (created, ended) = self.npcs.values().fold((0, 0), |(c, e), score| {
            score.goals.get("innate").map_or((c, e), |g| {
                (c + g.created, e + g.completed + g.failed + g.blocked)
            })
        });
        let innate_ended = if created > 0 {
            ended as f64 / created as f64
        } else {
            1.0
        };
        let npc_adherence = worst(|s| s.adherence, true);
        let mut marks = vec![
            Target {
                measure: "scheduled-time adherence, whole village",
                target: ">= 80 %",
                value: self.adherence.unwrap_or(1.0),
                met: self.adherence.is_none_or(|a| a >= 0.8),
            },
            Target {
                measure: "adherence of each NPC with a schedule",
                target: ">= 60 %",
                value: if npc_adherence.is_finite() {
                    npc_adherence
                } else {
                    1.0
                },
                met: !npc_adherence.is_finite() || npc_adherence >= 0.6,
            },
            Target {
                measure: "time with a critical need, each NPC",
                target: "<= 5 %",
                value: self.worst_critical,
                met: self.worst_critical <= 0.05,
            },
            Target {
                measure: "longest run in one non-sleep action",
                target: "<= 2 game hours",
                value: self.longest_action_minutes as f64 / 60.0,
                met: self.longest_action_minutes <= 120,
            },
            Target {
                measure: "stress at its maximum, in a row",
                target: "<= 2 game hours",
                value: self.stress_at_max_minutes as f64 / 60.0,
                met: self.stress_at_max_minutes <= 120,
            },
            Target {
                measure: "innate goals completed, failed or blocked",
                target: "100 %",
                value: innate_ended,
                met: innate_ended >= 1.0,
            },
            Target {
                measure: "story signals a game day",
                target: "5 to 25",
                value: self.signals_per_day,
                met: (5.0..=25.0).contains(&self.signals_per_day),
            },
            Target {
                measure: "signals of one type raised by one incident",
                target: "1",
                value: self.most_signals_in_an_incident as f64,
                met: self.most_signals_in_an_incident <= 1,
            },
            Target {
                measure: "NPCs named by one signal",
                target: "<= 6",
                value: self.most_npcs_in_a_signal as f64,
                met: self.most_npcs_in_a_signal <= 6,
            },
        ];
        if self.hours >= 24.0 * 7.0 {
            marks.push(Target {
                measure: "signal types over the week",
                target: ">= 10",
                value: self.signals.len() as f64,
                met: self.signals.len() >= 10,
            });
        }
        marks
    }

    /// The card at a glance: a line per NPC, then the world's figures.
    pub fn text(&self, zone: &str) -> String {
        let percent = |share: Option<f64>| {
            share.map_or_else(|| "-".to_owned(), |s| format!("{:.0} %", 100.0 * s))
        };
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
            "{:<10} {:>7} {:>9} {:>8} {:>9} {:>9} {:>7} {:>7} {:>5}",
            "npc",
            "actions",
            "adherence",
            "critical",
            "longest",
            "stress≥1",
            "goals+",
            "goals-",
            "barks"
        );
        let (mut completed, mut failed) = (0, 0);
        for (npc, score) in &self.npcs {
            let done: usize = score.goals.values().map(|g| g.completed).sum();
            let lost: usize = score.goals.values().map(|g| g.failed).sum();
            completed += done;
            failed += lost;
            let _ = writeln!(
                out,
                "{npc:<10} {:>7} {:>9} {:>8} {:>7} h {:>7} h {:>7} {:>7} {:>5}",
                score.actions,
                percent(score.adherence),
                percent(Some(score.critical)),
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
        let raised: usize = self.signals.values().sum();
        let _ = writeln!(
            out,
            "story signals: {raised} raised ({:.1} a day), {} distinct types: {}",
            self.signals_per_day,
            self.signals.len(),
            listed(&self.signals, |n| format!("×{n}"))
        );
        let met = self.targets.iter().filter(|t| t.met).count();
        let _ = write!(
            out,
            "a believable village: {met} of {} marks met",
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
}

/// `name count` pairs joined by commas (`count` written by `show`).
fn listed(counts: &BTreeMap<String, usize>, show: impl Fn(usize) -> String) -> String {
    counts
        .iter()
        .map(|(name, n)| format!("{name} {}", show(*n)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Most seeds one `--seeds` may name.
pub const MAX_SEEDS: usize = 1000;

/// The seeds `--seeds` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seeds(pub Vec<u64>);

/// The seeds of `--seeds`: `A..B` (inclusive) or `A,B,C`.
pub fn parse_seeds(text: &str) -> Result<Seeds, String> {
    let number = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| format!("`{s}` is not a seed (a whole number)"))
    };
    let seeds: Vec<u64> = match text.split_once("..") {
        Some((from, to)) => {
            let (from, to) = (number(from)?, number(to)?);
            if to < from {
                return Err(format!("`{text}`: the range ends before it starts"));
            }
            if to - from >= MAX_SEEDS as u64 {
                return Err(format!("`{text}`: at most {MAX_SEEDS} seeds"));
            }
            (from..=to).collect()
        }
        None => text.split(',').map(number).collect::<Result<_, _>>()?,
    };
    if seeds.len() > MAX_SEEDS {
        return Err(format!("at most {MAX_SEEDS} seeds"));
    }
    Ok(Seeds(seeds))
}

/// The spread of one figure over several seeds.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Spread {
    /// The lowest.
    pub min: f64,
    /// The median (the lower middle of an even count).
    pub median: f64,
    /// The highest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (none when there are none).
    pub fn of(mut values: Vec<f64>) -> Option<Self> {
        values.retain(|v| v.is_finite());
        values.sort_by(f64::total_cmp);
        Some(Self {
            min: *values.first()?,
            median: values[(values.len() - 1) / 2],
            max: *values.last()?,
        })
    }
}

/// One of the world's figures, read off a card.
type Figure = fn(&Scorecard) -> f64;

/// Several seeds' cards and the spread of the world's figures over them.
#[derive(Clone, Debug, Serialize)]
pub struct SeedSpread {
    /// Each seed's card.
    pub runs: Vec<Scorecard>,
    /// The world's figures over the seeds, by name.
    pub spread: BTreeMap<&'static str, Spread>,
}

impl SeedSpread {
    /// The spread of `runs`.
    pub fn of(runs: Vec<Scorecard>) -> Self {
        let figures: [(&'static str, Figure); 9] = [
            ("adherence", |c| c.adherence.unwrap_or(f64::NAN)),
            ("worst_critical", |c| c.worst_critical),
            ("longest_action_minutes", |c| {
                c.longest_action_minutes as f64
            }),
            ("stress_at_max_minutes", |c| c.stress_at_max_minutes as f64),
            ("signals_per_day", |c| c.signals_per_day),
            ("signal_types", |c| c.signals.len() as f64),
            ("signals_in_an_incident", |c| {
                c.most_signals_in_an_incident as f64
            }),
            ("npcs_in_a_signal", |c| c.most_npcs_in_a_signal as f64),
            ("worst_npc_adherence", |c| {
                c.npcs
                    .values()
                    .filter_map(|s| s.adherence)
                    .fold(f64::NAN, f64::min)
            }),
        ];
        let spread = figures
            .into_iter()
            .filter_map(|(name, figure)| {
                Spread::of(runs.iter().map(figure).collect()).map(|s| (name, s))
            })
            .collect();
        Self { runs, spread }
    }

    /// The spread at a glance, a line per figure.
    pub fn text(&self) -> String {
        let seeds: Vec<String> = self.runs.iter().map(|r| r.seed.to_string()).collect();
        let mut out = format!("over seeds {}: min / median / max", seeds.join(", "));
        for (name, s) in &self.spread {
            let _ = write!(
                out,
                "\n  {name:<24} {:>9.3} {:>9.3} {:>9.3}",
                s.min, s.median, s.max
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_is_the_lowest_the_middle_and_the_highest() {
        assert_eq!(
            Spread::of(vec![3.0, 1.0, 2.0, f64::NAN]),
            Some(Spread {
                min: 1.0,
                median: 2.0,
                max: 3.0
            })
        );
        assert_eq!(Spread::of(vec![]), None);
    }

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
        assert_eq!(card.targets.len(), 10, "with the week's signal types");
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

    #[test]
    fn seeds_are_a_range_or_a_list() {
        assert_eq!(parse_seeds("1..3"), Ok(Seeds(vec![1, 2, 3])));
        assert_eq!(parse_seeds("4, 9"), Ok(Seeds(vec![4, 9])));
        assert!(parse_seeds("3..1").is_err());
        assert!(parse_seeds("0..5000").is_err());
        assert!(parse_seeds("one").is_err());
    }
}
