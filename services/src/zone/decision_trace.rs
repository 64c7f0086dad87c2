//! What a zone keeps of each NPC's recent decisions for the inspector (`GET
//! /npcs/{id}/decisions`) and its snapshots: per NPC, a bounded list of [`TraceEntry`]s, each
//! naming its (provider, action) pair by a number; and the zone's [`ChoiceNames`], the pairs
//! those numbers stand for. An entry is 32 bytes and owns nothing, where the [`DecisionTrace`]
//! it is shown as holds two strings (112 bytes with their allocations): a resident keeps up to
//! `tick.decision_trace_len` of them, its largest holding once it has run a while.

use std::collections::VecDeque;

use thin_vec::ThinVec;

use rustc_hash::FxHashMap;

/// One decision of an NPC as the inspector shows it and snapshots save it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DecisionTrace {
    /// Zone tick.
    pub tick: u64,
    /// Game time, ticks.
    pub game_time: u64,
    /// The chosen provider.
    pub provider: String,
    /// The chosen action.
    pub action: String,
    /// Its utility when chosen (4 decimals).
    pub utility: f64,
    /// Whether a player ordered it (else the NPC chose it, or its plan did).
    pub player_queued: bool,
}

/// A decision as it is made, borrowing its names: what [`ChoiceNames::record`] keeps.
#[derive(Clone, Copy, Debug)]
pub struct Choice<'a> {
    /// Zone tick.
    pub tick: u64,
    /// Game time, ticks.
    pub game_time: u64,
    /// The chosen provider.
    pub provider: &'a str,
    /// The chosen action.
    pub action: &'a str,
    /// Its utility when chosen (4 decimals).
    pub utility: f64,
    /// Whether a player ordered it.
    pub player_queued: bool,
}

impl DecisionTrace {
    /// The decision, borrowing its names.
    fn choice(&self) -> Choice<'_> {
        Choice {
            tick: self.tick,
            game_time: self.game_time,
            provider: &self.provider,
            action: &self.action,
            utility: self.utility,
            player_queued: self.player_queued,
        }
    }
}

/// One decision as an NPC keeps it: a [`DecisionTrace`] with its provider and action named by
/// their number in the zone's [`ChoiceNames`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceEntry {
    tick: u64,
    game_time: u64,
    utility: f64,
    choice: u32,
    player_queued: bool,
}

/// The (provider, action) pairs a zone's NPCs have chosen, numbered in the order first chosen.
/// Bounded by the world's content: the providers and actions an NPC can choose. Looked up by
/// a fast hash of short ids (a number is asked for at every action started; the map is never
/// iterated, so its order cannot reach an answer).
#[derive(Debug, Default)]
pub struct ChoiceNames {
    pairs: Vec<(Box<str>, Box<str>)>,
    numbers: FxHashMap<Box<str>, FxHashMap<Box<str>, u32>>,
}

impl ChoiceNames {
    /// The number of (`provider`, `action`), given one if it has none; `None` only once four
    /// billion pairs have been numbered.
    fn number(&mut self, provider: &str, action: &str) -> Option<u32> {
        if let Some(&number) = self.numbers.get(provider).and_then(|a| a.get(action)) {
            return Some(number);
        }
        let number = u32::try_from(self.pairs.len()).ok()?;
        self.pairs.push((provider.into(), action.into()));
        self.numbers
            .entry(provider.into())
            .or_default()
            .insert(action.into(), number);
        Some(number)
    }

    /// The pair numbered `choice`.
    fn pair(&self, choice: u32) -> Option<&(Box<str>, Box<str>)> {
        self.pairs.get(choice as usize)
    }

    /// `trace` as the inspector shows it, oldest first.
    pub fn show(&self, trace: &[TraceEntry]) -> VecDeque<DecisionTrace> {
        trace
            .iter()
            .filter_map(|entry| {
                let (provider, action) = self.pair(entry.choice)?;
                Some(DecisionTrace {
                    tick: entry.tick,
                    game_time: entry.game_time,
                    provider: provider.to_string(),
                    action: action.to_string(),
                    utility: entry.utility,
                    player_queued: entry.player_queued,
                })
            })
            .collect()
    }

    /// `saved` (a snapshot's) as an NPC keeps it, its pairs numbered here.
    pub fn keep(&mut self, saved: VecDeque<DecisionTrace>) -> ThinVec<TraceEntry> {
        saved
            .into_iter()
            .filter_map(|trace| self.entry(&trace.choice()))
            .collect()
    }

    /// `choice` as an NPC keeps it.
    fn entry(&mut self, choice: &Choice<'_>) -> Option<TraceEntry> {
        Some(TraceEntry {
            tick: choice.tick,
            game_time: choice.game_time,
            utility: choice.utility,
            choice: self.number(choice.provider, choice.action)?,
            player_queued: choice.player_queued,
        })
    }

    /// Appends `decision` to `trace`, dropping its oldest beyond `keep` (none kept when 0).
    pub fn record(&mut self, trace: &mut ThinVec<TraceEntry>, keep: usize, decision: &Choice<'_>) {
        if keep == 0 {
            return;
        }
        let Some(entry) = self.entry(decision) else {
            return;
        };
        if trace.len() >= keep {
            trace.drain(..=trace.len() - keep);
        }
        trace.push(entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(tick: u64, provider: &str, action: &str) -> DecisionTrace {
        DecisionTrace {
            tick,
            game_time: tick * 60,
            provider: provider.into(),
            action: action.into(),
            utility: 0.1234,
            player_queued: tick.is_multiple_of(2),
        }
    }

    #[test]
    fn a_trace_shows_what_was_recorded_newest_kept() {
        let mut names = ChoiceNames::default();
        let mut trace = ThinVec::new();
        let all: Vec<DecisionTrace> = (0..10)
            .map(|t| {
                decision(
                    t,
                    ["well", "inn"][t as usize % 2],
                    ["drink", "eat", "sleep"][t as usize % 3],
                )
            })
            .collect();
        for d in &all {
            names.record(&mut trace, 4, &d.choice());
        }
        assert_eq!(names.show(&trace), all[6..].to_vec());
        assert_eq!(names.pairs.len(), 6, "each pair named once");
        let restored = names.keep(names.show(&trace));
        assert_eq!(restored, trace);
        let mut fresh = ChoiceNames::default();
        let elsewhere = fresh.keep(names.show(&trace));
        assert_eq!(
            fresh.show(&elsewhere),
            all[6..].to_vec(),
            "a zone built anew reads a snapshot's trace"
        );
    }

    #[test]
    fn nothing_is_kept_when_no_trace_is_asked_for() {
        let mut names = ChoiceNames::default();
        let mut trace = ThinVec::new();
        names.record(&mut trace, 0, &decision(1, "well", "drink").choice());
        assert!(trace.is_empty());
    }

    #[test]
    fn an_entry_is_small() {
        assert_eq!(std::mem::size_of::<TraceEntry>(), 32);
    }
}
