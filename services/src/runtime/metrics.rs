//! Prometheus metrics (via the `metrics` facade): tick duration histogram, NPCs per tier,
//! world events in, messages out per stream, bus drops and errors, dead letters, demotions.
//! The admin API renders them; without an installed recorder every call is a no-op.

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
