//! Per-NPC error isolation: consecutive failures per NPC, demotion to
//! Background (held for review) after `max_consecutive_failures`, and the archetype circuit
//! breaker once `archetype_failure_threshold` NPCs of one archetype have been demoted.
//!
//! Owns the counts and their serialisable form, which the service persists through a
//! `SnapshotStore` so a known-bad NPC does not get a fresh budget on every restart. A despawned
//! NPC is forgotten, never counted as a failure. It does not catch panics (the zone does).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::bus::envelope::NpcEvent;

/// Isolation settings (`[isolation]` in `geppetto.toml`).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct IsolationConfig {
    /// Consecutive failures that demote an NPC.
    pub max_consecutive_failures: u32,
    /// Demoted NPCs of one archetype that trip its breaker.
    pub archetype_failure_threshold: u32,
}

impl Default for IsolationConfig {
    fn default() -> Self {
        Self {
            max_consecutive_failures: 3,
            archetype_failure_threshold: 3,
        }
    }
}

/// The persisted state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IsolationState {
    /// Consecutive failures per NPC (absent = 0).
    pub failure_counts: BTreeMap<String, u32>,
    /// NPCs demoted for review.
    pub demoted_npcs: BTreeSet<String>,
    /// Demoted NPCs per archetype.
    pub archetype_failures: BTreeMap<String, BTreeSet<String>>,
    /// Archetypes whose breaker tripped.
    pub demoted_archetypes: BTreeSet<String>,
}

/// Isolation rules over an [`IsolationState`].
#[derive(Clone, Debug, Default)]
pub struct Isolation {
    config: IsolationConfig,
    /// The counts (public for persistence and inspection).
    pub state: IsolationState,
}

impl Isolation {
    /// Rules `config` over a restored `state`.
    pub fn new(config: IsolationConfig, state: IsolationState) -> Self {
        Self { config, state }
    }

    /// Whether any NPC or archetype is held at all (the common answer is no, and it is cheap).
    pub fn holds_any(&self) -> bool {
        !(self.state.demoted_npcs.is_empty() && self.state.demoted_archetypes.is_empty())
    }

    /// Whether `npc` (of `archetype`) is held back from updates.
    pub fn is_held(&self, npc: &str, archetype: Option<&str>) -> bool {
        self.state.demoted_npcs.contains(npc)
            || archetype.is_some_and(|a| self.state.demoted_archetypes.contains(a))
    }

    /// A successful update: the count starts again. Returns whether the state changed.
    pub fn succeeded(&mut self, npc: &str) -> bool {
        // Every update of a healthy zone lands here: no count to look an id up in.
        !self.state.failure_counts.is_empty() && self.state.failure_counts.remove(npc).is_some()
    }

    /// Consecutive failures of an NPC so far.
    pub fn failures(&self, npc: &str) -> u32 {
        self.state.failure_counts.get(npc).copied().unwrap_or(0)
    }

    /// A failed update; returns the events it causes.
    pub fn failed(&mut self, npc: &str, archetype: Option<&str>, reason: &str) -> Vec<NpcEvent> {
        let count = self.state.failure_counts.entry(npc.to_owned()).or_insert(0);
        *count += 1;
        let failures = *count;
        let mut events = vec![NpcEvent::NpcUpdateFailed {
            npc: npc.to_owned(),
            failures,
            reason: reason.to_owned(),
        }];
        if failures >= self.config.max_consecutive_failures
            && self.state.demoted_npcs.insert(npc.to_owned())
        {
            events.push(NpcEvent::NpcDemoted {
                npc: npc.to_owned(),
                reason: "repeated_failures".into(),
                failures,
            });
            if let Some(archetype) = archetype {
                let failed = self
                    .state
                    .archetype_failures
                    .entry(archetype.to_owned())
                    .or_default();
                failed.insert(npc.to_owned());
                let failed_npc_count = u32::try_from(failed.len()).unwrap_or(u32::MAX);
                if failed_npc_count >= self.config.archetype_failure_threshold
                    && self.state.demoted_archetypes.insert(archetype.to_owned())
                {
                    events.push(NpcEvent::ArchetypeCircuitBreaker {
                        archetype: archetype.to_owned(),
                        failed_npc_count,
                    });
                }
            }
        }
        events
    }

    /// Gives a held NPC back (admin): its failures are forgotten, and it no longer counts
    /// towards its archetype's breaker. Returns whether it was held.
    pub fn reinstate(&mut self, npc: &str) -> bool {
        self.state.failure_counts.remove(npc);
        for failed in self.state.archetype_failures.values_mut() {
            failed.remove(npc);
        }
        self.state.demoted_npcs.remove(npc)
    }

    /// Resets an archetype's breaker (admin): its NPCs run again, and its count of failed
    /// NPCs starts again (NPCs held on their own stay held). Returns whether it was tripped.
    pub fn reset_breaker(&mut self, archetype: &str) -> bool {
        self.state.archetype_failures.remove(archetype);
        self.state.demoted_archetypes.remove(archetype)
    }

    /// Forgets a despawned NPC (a deletion is not a failure).
    pub fn forget(&mut self, npc: &str) {
        self.state.failure_counts.remove(npc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_failures_demote_and_three_demoted_npcs_trip_the_archetype() {
        let mut isolation = Isolation::new(IsolationConfig::default(), IsolationState::default());
        let kinds = |events: Vec<NpcEvent>| events.iter().map(NpcEvent::kind).collect::<Vec<_>>();
        assert_eq!(
            kinds(isolation.failed("a", Some("smith"), "boom")),
            ["npc_update_failed"]
        );
        assert!(isolation.succeeded("a"), "a success resets the count");
        for _ in 0..2 {
            isolation.failed("a", Some("smith"), "boom");
        }
        assert!(!isolation.is_held("a", Some("smith")));
        assert_eq!(
            kinds(isolation.failed("a", Some("smith"), "boom")),
            ["npc_update_failed", "npc_demoted"]
        );
        assert!(isolation.is_held("a", Some("smith")));
        for npc in ["b", "c"] {
            let mut last = Vec::new();
            for _ in 0..3 {
                last = kinds(isolation.failed(npc, Some("smith"), "boom"));
            }
            if npc == "c" {
                assert_eq!(
                    last,
                    [
                        "npc_update_failed",
                        "npc_demoted",
                        "archetype_circuit_breaker"
                    ]
                );
            }
        }
        assert!(isolation.is_held("healthy", Some("smith")));
        assert!(!isolation.is_held("healthy", Some("baker")));
        isolation.forget("b");
        assert!(!isolation.state.failure_counts.contains_key("b"));
    }
}
