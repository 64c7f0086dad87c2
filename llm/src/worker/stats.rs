//! The worker's counters: calls, fallbacks by reason, deliveries, latency percentiles over
//! the recent answered calls, and the spend ledger — readable while the worker runs.

use super::*;

/// Counters of what the worker did, readable while it runs.
#[derive(Debug, Clone)]
pub struct WorkerStats {
    pub(super) counters: Arc<Counters>,
    pub(super) ledger: SpendLedger,
}

/// Answered calls whose latency is kept for the percentiles (the most recent ones).
const LATENCY_SAMPLES: usize = 4096;

#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) calls_succeeded: AtomicU64,
    pub(super) calls_failed: AtomicU64,
    pub(super) calls_rate_limited: AtomicU64,
    pub(super) fallbacks: [AtomicU64; FallbackReason::VARIANTS.len()],
    pub(super) narratives_delivered: AtomicU64,
    pub(super) narratives_discarded: AtomicU64,
    pub(super) narrations_skipped: AtomicU64,
    pub(super) perceptions: AtomicU64,
    pub(super) answered_ms: Mutex<VecDeque<u64>>,
}

/// A snapshot of `WorkerStats`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct WorkerCounts {
    /// Provider calls that succeeded.
    pub calls_succeeded: u64,
    /// Provider calls that failed or timed out.
    pub calls_failed: u64,
    /// Provider calls answered HTTP 429 (neither success nor failure: the breaker ignores
    /// them, a back-off follows).
    pub calls_rate_limited: u64,
    /// Requests the templates or keyword rules served instead of a model, in all.
    pub fallbacks: u64,
    /// The same, by reason (every reason, in declaration order).
    pub fallbacks_by_reason: Vec<(FallbackReason, u64)>,
    /// Narratives delivered.
    pub narratives_delivered: u64,
    /// Narratives discarded by the delivery guard (before or after the call).
    pub narratives_discarded: u64,
    /// Narrations that got no model text.
    pub narrations_skipped: u64,
    /// Perception results emitted.
    pub perceptions: u64,
    /// Median latency of the answered calls, in milliseconds (none before the first).
    pub latency_p50_ms: Option<u64>,
    /// 99th percentile of the same.
    pub latency_p99_ms: Option<u64>,
    /// Tokens and cost of the model calls: in all, by seam, zone, NPC class and tier.
    pub spend: SpendCounts,
}

impl WorkerStats {
    /// Zeroed counters whose spend keeps the last `recent_calls` calls one by one.
    #[must_use]
    pub fn new(recent_calls: usize) -> Self {
        Self {
            counters: Arc::default(),
            ledger: SpendLedger::new(recent_calls),
        }
    }

    /// Current values.
    #[must_use]
    pub fn snapshot(&self) -> WorkerCounts {
        let c = &self.counters;
        let read = |counter: &AtomicU64| counter.load(Ordering::Acquire);
        let fallbacks_by_reason: Vec<(FallbackReason, u64)> = FallbackReason::VARIANTS
            .iter()
            .map(|reason| (*reason, read(&c.fallbacks[reason.index()])))
            .collect();
        let mut answered: Vec<u64> = lock(&c.answered_ms).iter().copied().collect();
        answered.sort_unstable();
        WorkerCounts {
            calls_succeeded: read(&c.calls_succeeded),
            calls_failed: read(&c.calls_failed),
            calls_rate_limited: read(&c.calls_rate_limited),
            fallbacks: fallbacks_by_reason.iter().map(|(_, n)| n).sum(),
            fallbacks_by_reason,
            narratives_delivered: read(&c.narratives_delivered),
            narratives_discarded: read(&c.narratives_discarded),
            narrations_skipped: read(&c.narrations_skipped),
            perceptions: read(&c.perceptions),
            latency_p50_ms: percentile(&answered, 50),
            latency_p99_ms: percentile(&answered, 99),
            spend: self.ledger.snapshot(),
        }
    }

    pub(super) fn fallback(&self, seam: Seam, reason: FallbackReason) {
        bump(&self.counters.fallbacks[reason.index()]);
        telemetry::fallback(seam, reason.as_str());
    }

    pub(super) fn answered(&self, took: Duration) {
        let mut answered = lock(&self.counters.answered_ms);
        if answered.len() == LATENCY_SAMPLES {
            answered.pop_front();
        }
        answered.push_back(u64::try_from(took.as_millis()).unwrap_or(u64::MAX));
    }
}

/// The `pct`th percentile (nearest rank) of sorted values.
fn percentile(sorted: &[u64], pct: usize) -> Option<u64> {
    let rank = (sorted.len() * pct).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}
