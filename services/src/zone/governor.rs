//! The tick-budget governor: soft and hard per-tick ceilings measured on the
//! wall clock. Past the soft ceiling the remaining lowest-priority Active NPCs are demoted to
//! Nearby processing; past the hard ceiling the remaining NPCs are skipped for the tick; after
//! `recovery_calm_ticks` ticks under the soft ceiling the demotions are lifted.
//!
//! Its decisions are non-deterministic inputs, so the zone records each one as a
//! `governor_decision` world event before the tick's outputs go out.
//! It owns only the decision state; the zone measures time and orders NPCs by priority.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// Governor settings (`[governor]` in `geppetto.toml`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct GovernorConfig {
    /// Past this, remaining Active NPCs are demoted to Nearby processing, milliseconds.
    pub tick_budget_ms_soft: f64,
    /// Past this, remaining NPCs are skipped for the tick, milliseconds.
    pub tick_budget_ms_hard: f64,
    /// Consecutive ticks under the soft ceiling before demotions are lifted.
    pub recovery_calm_ticks: u32,
}

impl Default for GovernorConfig {
    fn default() -> Self {
        Self {
            tick_budget_ms_soft: 4.0,
            tick_budget_ms_hard: 5.0,
            recovery_calm_ticks: 10,
        }
    }
}

/// What the governor says about the next NPC in a tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Update it.
    Process,
    /// Do not update it this tick; demote it to Nearby processing.
    Demote,
    /// Do not update it this tick.
    Skip,
}

/// The governor's state across ticks.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Governor {
    /// From config, never from a snapshot (see [`Governor::adopt_state`]).
    #[serde(skip)]
    config: GovernorConfig,
    demoted: BTreeSet<String>,
    calm_ticks: u32,
}

impl Governor {
    /// Takes `saved`'s demotions and calm count, keeping this governor's budgets.
    pub fn adopt_state(&mut self, saved: Governor) {
        let config = std::mem::take(&mut self.config);
        *self = Self { config, ..saved };
    }

    /// A governor with `config`.
    pub fn new(config: GovernorConfig) -> Self {
        Self {
            config,
            ..Self::default()
        }
    }

    /// Whether any NPC is held at Nearby processing (the common answer is no, and it is cheap).
    pub fn demotes_any(&self) -> bool {
        !self.demoted.is_empty()
    }

    /// Whether `npc` is held at Nearby processing by an earlier decision.
    pub fn is_demoted(&self, npc: &str) -> bool {
        self.demoted.contains(npc)
    }

    /// The verdict for the next NPC after `elapsed_ms` of the tick; `active` says whether it is
    /// an Active NPC (only those are demoted).
    pub fn verdict(&self, npc: &str, active: bool, elapsed_ms: f64) -> Verdict {
        if elapsed_ms >= self.config.tick_budget_ms_hard {
            Verdict::Skip
        } else if elapsed_ms >= self.config.tick_budget_ms_soft && active && !self.is_demoted(npc) {
            Verdict::Demote
        } else {
            Verdict::Process
        }
    }

    /// Applies a recorded decision: these NPCs are demoted.
    pub fn demote(&mut self, npcs: &[String]) {
        self.demoted.extend(npcs.iter().cloned());
    }

    /// Applies a recorded decision: these NPCs are restored.
    pub fn restore(&mut self, npcs: &[String]) {
        for npc in npcs {
            self.demoted.remove(npc);
        }
    }

    /// Whether a tick of `elapsed_ms` reached the hard ceiling.
    pub fn exceeded(&self, elapsed_ms: f64) -> bool {
        elapsed_ms >= self.config.tick_budget_ms_hard
    }

    /// Ends a tick of `elapsed_ms`: returns the NPCs to restore once the calm streak is long
    /// enough (the caller records, then applies them).
    pub fn end_tick(&mut self, elapsed_ms: f64) -> Vec<String> {
        if elapsed_ms < self.config.tick_budget_ms_soft {
            self.calm_ticks += 1;
            if self.calm_ticks >= self.config.recovery_calm_ticks {
                self.calm_ticks = 0;
                return self.demoted.iter().cloned().collect();
            }
        } else {
            self.calm_ticks = 0;
        }
        Vec::new()
    }

    /// Forgets an NPC that left the zone.
    pub fn forget(&mut self, npc: &str) {
        self.demoted.remove(npc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_ceilings() {
        let mut governor = Governor::new(GovernorConfig::default());
        let cases = [
            ("a", true, 1.0, Verdict::Process),
            ("a", true, 4.0, Verdict::Demote),
            ("a", false, 4.5, Verdict::Process),
            ("a", true, 5.0, Verdict::Skip),
            ("a", false, 9.0, Verdict::Skip),
        ];
        for (npc, active, elapsed, expected) in cases {
            assert_eq!(
                governor.verdict(npc, active, elapsed),
                expected,
                "{elapsed}"
            );
        }
        governor.demote(&["a".into()]);
        assert_eq!(governor.verdict("a", true, 4.5), Verdict::Process);
    }

    #[test]
    fn demotions_lift_after_ten_calm_ticks_in_a_row() {
        let mut governor = Governor::new(GovernorConfig::default());
        governor.demote(&["a".into(), "b".into()]);
        for _ in 0..9 {
            assert!(governor.end_tick(1.0).is_empty());
        }
        assert!(
            governor.end_tick(4.5).is_empty(),
            "a busy tick resets the streak"
        );
        for _ in 0..9 {
            assert!(governor.end_tick(1.0).is_empty());
        }
        let restored = governor.end_tick(1.0);
        assert_eq!(restored, ["a", "b"]);
        governor.restore(&restored);
        assert!(!governor.is_demoted("a"));
    }
}
