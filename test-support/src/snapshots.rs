//! Sample snapshots for the storage tests and benchmarks: zone names, and snapshots whose
//! payload tells which write a reader got back.

use geppetto_storage::{Snapshot, ZoneName};

pub fn zone(name: &str) -> ZoneName {
    ZoneName::new(name).expect("test zone names are valid")
}

/// A snapshot whose payload and event id are derived from its sequence, so a reader can tell
/// exactly which write it got back.
pub fn snapshot(zone: &ZoneName, sequence: u64, schema_version: u32) -> Snapshot {
    Snapshot {
        zone: zone.clone(),
        sequence,
        last_event_id: format!("1700000000000-{sequence}"),
        game_time_ticks: sequence * 60,
        schema_version,
        payload: payload_for(sequence, 256),
    }
}

/// `len` bytes of JSON-looking text that depend on `sequence`.
pub fn payload_for(sequence: u64, len: usize) -> Vec<u8> {
    let unit = format!(
        "{{\"seq\":{sequence},\"npc\":\"smith\",\"hunger\":{}}},",
        sequence % 97
    );
    unit.as_bytes().iter().copied().cycle().take(len).collect()
}
