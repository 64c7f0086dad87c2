//! The marks of a believable world and how a run is held to them: each mark over the whole
//! run and, for a run longer than a week, in every week of it (a mark met overall but missed in
//! one week is missed), with each mark's drift from the first week to the last; story signal
//! types are counted over each four weeks.

use serde::Serialize;

use super::Scorecard;
use super::npc::NpcScore;

/// Game hours in a week.
pub const WEEK_HOURS: f64 = 24.0 * 7.0;

/// Fewest interactions in a period before one kind's share of them is judged.
const INTERACTIONS_FOR_A_SHARE: usize = 20;

/// One mark a believable world reaches.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Target {
    /// What is measured.
    pub measure: &'static str,
    /// The mark, in words.
    pub target: &'static str,
    /// This run's value (the worst NPC's, for a per-NPC mark; the first week that missed, for
    /// a mark held in every week).
    pub value: f64,
    /// Whether the run reached it.
    pub met: bool,
}

/// How one mark moved from the first week to the last.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Drift {
    /// What is measured.
    pub measure: &'static str,
    /// Its value in the first week.
    pub first_week: f64,
    /// Its value in the last week.
    pub last_week: f64,
}

/// The lowest (`lowest`) or highest value of an NPC figure over the NPCs that have it.
fn worst(card: &Scorecard, figure: impl Fn(&NpcScore) -> Option<f64>, lowest: bool) -> Option<f64> {
    let values = card.npcs.values().filter_map(figure);
    if lowest {
        values.reduce(f64::min)
    } else {
        values.reduce(f64::max)
    }
}

/// A mark that holds when nobody has the figure.
fn mark(
    measure: &'static str,
    target: &'static str,
    value: Option<f64>,
    met: impl Fn(f64) -> bool,
) -> Target {
    Target {
        measure,
        target,
        value: value.unwrap_or(f64::NAN),
        met: value.is_none_or(met),
    }
}

/// The marks one period of a run (a week, or the whole run) is held to.
pub(super) fn period_marks(card: &Scorecard) -> Vec<Target> {
    let interactions: usize = card.interactions.values().sum();
    let largest_share = (interactions >= INTERACTIONS_FOR_A_SHARE).then(|| {
        card.interactions.values().copied().max().unwrap_or(0) as f64 / interactions as f64
    });
    let mut marks = vec![
        mark(
            "scheduled-time adherence, whole world",
            ">= 80 %",
            card.adherence,
            |a| a >= 0.8,
        ),
        mark(
            "adherence of each NPC with a schedule",
            ">= 60 %",
            worst(card, |s| s.adherence, true),
            |a| a >= 0.6,
        ),
        mark(
            "time with a critical need, each NPC",
            "<= 5 %",
            Some(card.worst_critical),
            |c| c <= 0.05,
        ),
        mark(
            "longest run in one non-sleep action",
            "<= 2 game hours",
            Some(card.longest_action_minutes as f64 / 60.0),
            |h| h <= 2.0,
        ),
        mark(
            "stress at its maximum, in a row",
            "<= 2 game hours",
            Some(card.stress_at_max_minutes as f64 / 60.0),
            |h| h <= 2.0,
        ),
        mark(
            "any need below its threshold without a break",
            "<= 24 game hours",
            worst(
                card,
                |s| s.longest_unmet().map(|(_, minutes)| minutes as f64 / 60.0),
                false,
            ),
            |h| h <= 24.0,
        ),
        mark(
            "one interaction kind's share",
            "<= 40 %",
            largest_share,
            |s| s <= 0.4,
        ),
        mark(
            "story signals a game day",
            "5 to 25",
            Some(card.signals_per_day),
            |s| (5.0..=25.0).contains(&s),
        ),
        mark(
            "signals of one type raised by one incident",
            "1",
            Some(card.most_signals_in_an_incident as f64),
            |n| n <= 1.0,
        ),
        mark(
            "NPCs named by one signal",
            "<= 6",
            Some(card.most_npcs_in_a_signal as f64),
            |n| n <= 6.0,
        ),
    ];
    if card.hours >= 24.0 {
        marks.push(mark(
            "hours asleep a day, each NPC with a sleep block",
            ">= 5",
            worst(card, |s| s.sleep_hours_per_day, true),
            |h| h >= 5.0,
        ));
        marks.push(mark(
            "share of sleep at home or where the schedule says, each NPC",
            ">= 80 %",
            worst(card, |s| s.sleep_at_home, true),
            |s| s >= 0.8,
        ));
    }
    marks
}

/// The marks of a whole run: each period mark, held in every week when the run has weeks,
/// then the goals and the signal types.
pub(super) fn run_marks(card: &Scorecard) -> Vec<Target> {
    let mut marks = period_marks(card);
    for (i, mark) in marks.iter_mut().enumerate() {
        if let Some(missed) = card
            .weeks
            .iter()
            .filter_map(|week| week.targets.get(i))
            .find(|week| week.measure == mark.measure && !week.met)
        {
            mark.value = missed.value;
            mark.met = false;
        }
    }
    let (created, ended) = card.npcs.values().fold((0, 0), |(c, e), score| {
        score.goals.get("innate").map_or((c, e), |g| {
            (c + g.created, e + g.completed + g.failed + g.blocked)
        })
    });
    marks.push(mark(
        "innate goals completed, failed or blocked",
        "100 %",
        Some(if created > 0 {
            ended as f64 / created as f64
        } else {
            1.0
        }),
        |share| share >= 1.0,
    ));
    if let Some(types) = signal_types(card) {
        marks.push(mark(
            "signal types over each week (each four weeks in a longer run)",
            ">= 10",
            Some(types as f64),
            |n| n >= 10.0,
        ));
    }
    marks
}

/// The fewest distinct signal types any four weeks of the run raised (the week, for a run of
/// one to four weeks; none for a run shorter than a week).
fn signal_types(card: &Scorecard) -> Option<usize> {
    if card.hours < WEEK_HOURS {
        return None;
    }
    let whole: Vec<&Scorecard> = card
        .weeks
        .iter()
        .filter(|w| w.hours >= WEEK_HOURS)
        .collect();
    if whole.len() < 4 {
        return Some(card.signals.len());
    }
    whole
        .windows(4)
        .step_by(4)
        .map(|four| {
            let mut types: Vec<&String> = four.iter().flat_map(|w| w.signals.keys()).collect();
            types.sort();
            types.dedup();
            types.len()
        })
        .min()
}

/// Each week mark's value in the first week and in the last (none for a run of one week).
pub(super) fn drift(card: &Scorecard) -> Vec<Drift> {
    let (Some(first), Some(last)) = (card.weeks.first(), card.weeks.last()) else {
        return Vec::new();
    };
    if card.weeks.len() < 2 {
        return Vec::new();
    }
    first
        .targets
        .iter()
        .zip(&last.targets)
        .filter(|(a, b)| a.measure == b.measure)
        .map(|(a, b)| Drift {
            measure: a.measure,
            first_week: a.value,
            last_week: b.value,
        })
        .collect()
}
