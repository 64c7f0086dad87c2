//! Metric names and the helpers that record them through the `metrics` facade. This module
//! owns the names and labels; installing a recorder (Prometheus or other) is the service's job.

use std::time::Duration;

use crate::breaker::BreakerState;
use crate::request::{Priority, Seam};
use crate::structured_mode::StructuredMode;
use crate::usage::Usage;

/// Gauge: requests waiting in the queue.
pub const QUEUE_DEPTH: &str = "geppetto_llm_queue_depth";
/// Counter: requests dropped by the full queue, label `class`.
pub const QUEUE_DROPPED: &str = "geppetto_llm_queue_dropped_total";
/// Gauge: breaker state per provider (0 closed, 1 half-open, 2 open), label `provider`.
pub const BREAKER_STATE: &str = "geppetto_llm_breaker_state";
/// Histogram: provider call latency in seconds, labels `provider`, `seam`.
pub const CALL_DURATION: &str = "geppetto_llm_call_duration_seconds";
/// Counter: provider calls by outcome, labels `provider`, `seam`, `outcome`.
pub const CALLS: &str = "geppetto_llm_calls_total";
/// Counter: requests answered by the deterministic fallback, labels `seam`, `reason`.
pub const FALLBACKS: &str = "geppetto_llm_fallbacks_total";
/// Counter: narratives discarded by the delivery guard (no player left in the room).
pub const NARRATIVES_DISCARDED: &str = "geppetto_llm_narratives_discarded_total";
/// Counter: narratives delivered.
pub const NARRATIVES_DELIVERED: &str = "geppetto_llm_narratives_delivered_total";
/// Counter: perceived events accepted, label `type`.
pub const PERCEPTION_ACCEPTED: &str = "geppetto_llm_perception_accepted_total";
/// Counter: perception candidates rejected, label `reason`.
pub const PERCEPTION_REJECTED: &str = "geppetto_llm_perception_rejected_total";
/// Counter: accepted perceived events whose magnitude was clamped.
pub const PERCEPTION_CLAMPED: &str = "geppetto_llm_perception_clamped_total";
/// Gauge: the structured-output mode perception asks a provider for (2 `json_schema`,
/// 1 `json_object`, 0 text), label `provider`.
pub const STRUCTURED_MODE: &str = "geppetto_llm_structured_mode";
/// Counter: structured-output modes a provider refused and the weaker one it accepted,
/// labels `provider`, `from`, `to` (each learned once).
pub const STRUCTURED_DOWNGRADES: &str = "geppetto_llm_structured_mode_downgrades_total";
/// Counter: model narratives refused by the answer check (the template stands), label
/// `reason`.
pub const NARRATIVES_REJECTED: &str = "geppetto_llm_narratives_rejected_total";

/// Counter: tokens of model calls, labels `seam`, `direction` (`in` the prompt, `out` the
/// completion), `source` (`usage` as the server reported, `estimated` from the text).
pub const TOKENS: &str = "geppetto_llm_tokens_total";
/// Counter: cost of model calls in nanos (billionths) of the `[llm.prices]` unit, label
/// `seam`.
pub const COST_NANOS: &str = "geppetto_llm_cost_nanos_total";

pub(crate) fn queue_depth(depth: usize) {
    metrics::gauge!(QUEUE_DEPTH).set(depth as f64);
}

pub(crate) fn queue_dropped(class: Priority) {
    metrics::counter!(QUEUE_DROPPED, "class" => class.as_str()).increment(1);
}

pub(crate) fn breaker_state(provider: &str, state: BreakerState) {
    metrics::gauge!(BREAKER_STATE, "provider" => provider.to_owned()).set(state.metric_value());
}

pub(crate) fn call_finished(provider: &str, seam: Seam, outcome: &'static str, took: Duration) {
    metrics::histogram!(
        CALL_DURATION,
        "provider" => provider.to_owned(),
        "seam" => seam.as_str()
    )
    .record(took.as_secs_f64());
    metrics::counter!(
        CALLS,
        "provider" => provider.to_owned(),
        "seam" => seam.as_str(),
        "outcome" => outcome
    )
    .increment(1);
}

pub(crate) fn fallback(seam: Seam, reason: &'static str) {
    metrics::counter!(FALLBACKS, "seam" => seam.as_str(), "reason" => reason).increment(1);
}

pub(crate) fn narrative_discarded() {
    metrics::counter!(NARRATIVES_DISCARDED).increment(1);
}

pub(crate) fn narrative_delivered() {
    metrics::counter!(NARRATIVES_DELIVERED).increment(1);
}

pub(crate) fn perception_accepted(event_type: &'static str) {
    metrics::counter!(PERCEPTION_ACCEPTED, "type" => event_type).increment(1);
}

pub(crate) fn perception_rejected(reason: &'static str) {
    metrics::counter!(PERCEPTION_REJECTED, "reason" => reason).increment(1);
}

pub(crate) fn perception_clamped(count: usize) {
    metrics::counter!(PERCEPTION_CLAMPED).increment(count as u64);
}

pub(crate) fn structured_mode(provider: &str, mode: StructuredMode) {
    metrics::gauge!(STRUCTURED_MODE, "provider" => provider.to_owned()).set(mode.metric_value());
}

pub(crate) fn structured_downgrade(provider: &str, from: StructuredMode, to: StructuredMode) {
    metrics::counter!(
        STRUCTURED_DOWNGRADES,
        "provider" => provider.to_owned(),
        "from" => from.as_str(),
        "to" => to.as_str()
    )
    .increment(1);
}

pub(crate) fn narrative_rejected(reason: &'static str) {
    metrics::counter!(NARRATIVES_REJECTED, "reason" => reason).increment(1);
}

pub(crate) fn spend(seam: Seam, usage: &Usage, cost_nanos: u64) {
    let source = if usage.estimated {
        "estimated"
    } else {
        "usage"
    };
    for (direction, tokens) in [
        ("in", usage.prompt_tokens),
        ("out", usage.completion_tokens),
    ] {
        metrics::counter!(
            TOKENS,
            "seam" => seam.as_str(),
            "direction" => direction,
            "source" => source
        )
        .increment(tokens);
    }
    metrics::counter!(COST_NANOS, "seam" => seam.as_str()).increment(cost_nanos);
}
