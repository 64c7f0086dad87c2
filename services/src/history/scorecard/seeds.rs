//! Several seeds of one world: `--seeds` (a range or a list) and the spread — lowest, median,
//! highest — of the world's figures over the seeds' scorecards.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::Scorecard;

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
    fn seeds_are_a_range_or_a_list() {
        assert_eq!(parse_seeds("1..3"), Ok(Seeds(vec![1, 2, 3])));
        assert_eq!(parse_seeds("4, 9"), Ok(Seeds(vec![4, 9])));
        assert!(parse_seeds("3..1").is_err());
        assert!(parse_seeds("0..5000").is_err());
        assert!(parse_seeds("one").is_err());
    }
}
