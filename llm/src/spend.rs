//! What the model calls spent, added up: every call's tokens (the estimated share apart) and
//! cost, in all and by seam, zone, NPC class and tier, and the most recent calls one by one
//! (with latency and outcome), readable while the worker runs. This module owns the totals and
//! the per-call record; the limits are `spend_budget`'s.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde::Serialize;

use crate::request::{Seam, SpendTags};
use crate::usage::{Usage, money};

/// One model call, as it is accounted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord<'a> {
    /// The provider called.
    pub provider: &'a str,
    /// Narration or perception.
    pub seam: Seam,
    /// The zone of the request.
    pub zone: &'a str,
    /// NPC class and tier, where the request knows them.
    pub tags: &'a SpendTags,
    /// What the call read and wrote.
    pub usage: Usage,
    /// Its price, in nanos of the price table's unit.
    pub cost_nanos: u64,
    /// How long it took.
    pub latency: Duration,
    /// `ok` or the provider error's name.
    pub outcome: &'static str,
}

/// One call as kept in [`SpendCounts::recent`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallSummary {
    /// The provider called.
    pub provider: String,
    /// Narration or perception.
    pub seam: Seam,
    /// The zone of the request.
    pub zone: String,
    /// NPC class and tier, where the request knew them.
    pub tags: SpendTags,
    /// Tokens read and written.
    pub usage: Usage,
    /// Cost in nanos.
    pub cost_nanos: u64,
    /// Latency in milliseconds.
    pub latency_ms: u64,
    /// `ok` or the provider error's name.
    pub outcome: &'static str,
}

impl From<&CallRecord<'_>> for CallSummary {
    fn from(call: &CallRecord<'_>) -> Self {
        Self {
            provider: call.provider.to_owned(),
            seam: call.seam,
            zone: call.zone.to_owned(),
            tags: call.tags.clone(),
            usage: call.usage,
            cost_nanos: call.cost_nanos,
            latency_ms: u64::try_from(call.latency.as_millis()).unwrap_or(u64::MAX),
            outcome: call.outcome,
        }
    }
}

/// Totals of a set of calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SpendTotals {
    /// Model calls made.
    pub calls: u64,
    /// Prompt tokens.
    pub tokens_in: u64,
    /// Completion tokens.
    pub tokens_out: u64,
    /// The part of `tokens_in` estimated from the text (the server reported no usage).
    pub estimated_tokens_in: u64,
    /// The part of `tokens_out` estimated from the text.
    pub estimated_tokens_out: u64,
    /// Cost in nanos (billionths) of the price table's unit.
    pub cost_nanos: u64,
}

impl SpendTotals {
    fn add(&mut self, usage: &Usage, cost_nanos: u64) {
        self.calls += 1;
        self.tokens_in = self.tokens_in.saturating_add(usage.prompt_tokens);
        self.tokens_out = self.tokens_out.saturating_add(usage.completion_tokens);
        if usage.estimated {
            self.estimated_tokens_in = self.estimated_tokens_in.saturating_add(usage.prompt_tokens);
            self.estimated_tokens_out = self
                .estimated_tokens_out
                .saturating_add(usage.completion_tokens);
        }
        self.cost_nanos = self.cost_nanos.saturating_add(cost_nanos);
    }

    /// Cost in the price table's unit.
    #[must_use]
    pub fn cost(&self) -> f64 {
        money(self.cost_nanos)
    }
}

/// A snapshot of what was spent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SpendCounts {
    /// Every call.
    pub total: SpendTotals,
    /// By seam (both, in declaration order).
    pub by_seam: Vec<(Seam, SpendTotals)>,
    /// By zone.
    pub by_zone: BTreeMap<String, SpendTotals>,
    /// By NPC class (archetype); calls of requests naming none are only in the totals.
    pub by_class: BTreeMap<String, SpendTotals>,
    /// By NPC tier; likewise.
    pub by_tier: BTreeMap<String, SpendTotals>,
    /// The last calls (`[llm] recent_calls` of them), oldest first.
    pub recent: VecDeque<CallSummary>,
}

impl SpendCounts {
    /// One seam's totals.
    #[must_use]
    pub fn seam(&self, seam: Seam) -> SpendTotals {
        self.by_seam
            .iter()
            .find_map(|(s, totals)| (*s == seam).then_some(*totals))
            .unwrap_or_default()
    }
}

/// The shared totals; clones add to the same ones.
#[derive(Debug, Clone)]
pub struct SpendLedger {
    counts: Arc<Mutex<SpendCounts>>,
    recent_calls: usize,
}

impl SpendLedger {
    /// Empty totals that keep the last `recent_calls` calls one by one.
    #[must_use]
    pub fn new(recent_calls: usize) -> Self {
        Self {
            counts: Arc::default(),
            recent_calls,
        }
    }

    fn lock(&self) -> MutexGuard<'_, SpendCounts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds one call.
    pub fn record(&self, call: &CallRecord<'_>) {
        let mut counts = self.lock();
        counts.total.add(&call.usage, call.cost_nanos);
        match counts
            .by_seam
            .iter_mut()
            .find(|(seam, _)| *seam == call.seam)
        {
            Some((_, totals)) => totals.add(&call.usage, call.cost_nanos),
            None => {
                let mut totals = SpendTotals::default();
                totals.add(&call.usage, call.cost_nanos);
                counts.by_seam.push((call.seam, totals));
                counts.by_seam.sort_by_key(|(seam, _)| seam_order(*seam));
            }
        }
        add_to(&mut counts.by_zone, Some(call.zone), call);
        add_to(&mut counts.by_class, call.tags.class.as_deref(), call);
        add_to(&mut counts.by_tier, call.tags.tier.as_deref(), call);
        counts.recent.push_back(CallSummary::from(call));
        while counts.recent.len() > self.recent_calls {
            counts.recent.pop_front();
        }
    }

    /// Current totals.
    #[must_use]
    pub fn snapshot(&self) -> SpendCounts {
        self.lock().clone()
    }
}

fn seam_order(seam: Seam) -> usize {
    Seam::VARIANTS
        .iter()
        .position(|s| *s == seam)
        .unwrap_or_default()
}

fn add_to(map: &mut BTreeMap<String, SpendTotals>, key: Option<&str>, call: &CallRecord<'_>) {
    if let Some(key) = key {
        map.entry(key.to_owned())
            .or_default()
            .add(&call.usage, call.cost_nanos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_add_up_by_seam_class_and_tier_with_the_estimated_share_apart() {
        let ledger = SpendLedger::new(1);
        let guard = SpendTags {
            class: Some("guard".to_owned()),
            tier: Some("active".to_owned()),
        };
        let call = |seam, tags, usage| CallRecord {
            provider: "p",
            seam,
            zone: "village",
            tags,
            usage,
            cost_nanos: 7,
            latency: Duration::ZERO,
            outcome: "ok",
        };
        ledger.record(&call(Seam::Perception, &guard, Usage::reported(10, 5)));
        ledger.record(&call(
            Seam::Narration,
            &SpendTags::default(),
            Usage::estimated(8, 4, 4.0),
        ));
        let counts = ledger.snapshot();
        assert_eq!(counts.total.calls, 2);
        assert_eq!((counts.total.tokens_in, counts.total.tokens_out), (12, 6));
        assert_eq!(
            (
                counts.total.estimated_tokens_in,
                counts.total.estimated_tokens_out
            ),
            (2, 1)
        );
        assert_eq!(counts.total.cost_nanos, 14);
        assert_eq!(counts.seam(Seam::Perception).tokens_in, 10);
        assert_eq!(counts.by_seam[0].0, Seam::Narration, "declaration order");
        assert_eq!(counts.by_class["guard"].calls, 1);
        assert_eq!(counts.by_tier["active"].tokens_out, 5);
        assert_eq!(counts.by_zone["village"].calls, 2);
        // One call kept: the last.
        assert_eq!(counts.recent.len(), 1);
        let last = &counts.recent[0];
        assert_eq!(
            (last.seam, last.zone.as_str(), last.outcome),
            (Seam::Narration, "village", "ok")
        );
        assert_eq!(last.usage, Usage::estimated(8, 4, 4.0));
    }
}
