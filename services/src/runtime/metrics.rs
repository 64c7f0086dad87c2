//! Prometheus metrics (via the `metrics` facade): tick duration histogram, NPCs per tier,
//! world events in, messages out per stream, bus drops and errors, dead letters, demotions,
//! and the LLM spend by NPC class and tier (the seams count tokens, cost and fallbacks by seam
//! and reason themselves: `geppetto_llm::telemetry`). The admin API renders them; without an
//! installed recorder every call is a no-op.

use geppetto_llm::{SpendCounts, SpendTotals};
use metrics::{counter, gauge, histogram};

use crate::bus::StreamKind;
use crate::runtime::actor::ZoneStatus;

/// A world event was accepted.
pub fn event_in(kind: &'static str) {
    counter!("geppetto_world_events_in_total", "type" => kind).increment(1);
}

/// A message was published.
pub fn event_out(stream: StreamKind) {
    counter!("geppetto_messages_out_total", "stream" => stream.as_str()).increment(1);
}

/// A world event was refused.
pub fn dead_letter() {
    counter!("geppetto_dead_letters_total").increment(1);
}

/// World events not applied because their zone applied their id lately.
pub fn world_duplicates(count: u64) {
    counter!("geppetto_world_duplicates_total").increment(count);
}

/// A bus read, write or ack failed.
pub fn bus_error() {
    counter!("geppetto_bus_errors_total").increment(1);
}

/// Bus drops so far (absolute).
pub fn bus_dropped(total: u64) {
    counter!("geppetto_bus_dropped_total").absolute(total);
}

/// Messages the bus did not write because the zone's lease was no longer this instance's.
pub fn bus_fenced(total: u64) {
    counter!("geppetto_bus_fenced_total").absolute(total);
}

/// Bytes of the messages the bus keeps in this process (the in-process bus's streams).
pub fn bus_held_bytes(bytes: u64) {
    gauge!("geppetto_bus_held_bytes").set(bytes as f64);
}

/// A zone's status after a batch: tick durations, tiers, held NPCs.
pub fn zone_status(zone: &str, status: &ZoneStatus) {
    let zone = zone.to_owned();
    for duration in &status.tick_durations_ms {
        histogram!("geppetto_tick_duration_ms", "zone" => zone.clone()).record(*duration);
    }
    for (tier, count) in &status.tiers {
        gauge!("geppetto_npcs", "zone" => zone.clone(), "tier" => tier.as_str()).set(*count as f64);
    }
    gauge!("geppetto_npcs_demoted", "zone" => zone).set(status.held as f64);
}

/// The LLM spend so far by zone, NPC class and tier (absolute):
/// `geppetto_llm_{zone,class,tier}_tokens_total` with `direction` (`in`, `out`), and
/// `geppetto_llm_{zone,class,tier}_cost_nanos_total` in nanos (billionths) of the
/// `[llm.prices]` unit.
pub fn llm_spend(spend: &SpendCounts) {
    let by = |totals: &SpendTotals,
              tokens: &'static str,
              cost: &'static str,
              label: &'static str,
              name: &str| {
        for (direction, value) in [("in", totals.tokens_in), ("out", totals.tokens_out)] {
            counter!(tokens, label => name.to_owned(), "direction" => direction).absolute(value);
        }
        counter!(cost, label => name.to_owned()).absolute(totals.cost_nanos);
    };
    for (zone, totals) in &spend.by_zone {
        by(
            totals,
            "geppetto_llm_zone_tokens_total",
            "geppetto_llm_zone_cost_nanos_total",
            "zone",
            zone,
        );
    }
    for (class, totals) in &spend.by_class {
        by(
            totals,
            "geppetto_llm_class_tokens_total",
            "geppetto_llm_class_cost_nanos_total",
            "class",
            class,
        );
    }
    for (tier, totals) in &spend.by_tier {
        by(
            totals,
            "geppetto_llm_tier_tokens_total",
            "geppetto_llm_tier_cost_nanos_total",
            "tier",
            tier,
        );
    }
}
