//! The dead-letter record: a world message geppetto refused, written to the zone's `deadletter`
//! stream with the event type, the JSON path and the reason of the refusal, and the message as
//! received.

use serde::Serialize;

use super::{Header, flat_envelope};

/// A refused world message, as written to `deadletter`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeadLetter {
    /// The stream entry id it arrived with.
    pub source_id: String,
    /// The event type, if readable.
    pub event_type: String,
    /// JSON path of the problem.
    pub path: String,
    /// Why it was refused.
    pub reason: String,
    /// The message as received.
    pub original: String,
}

/// The dead-letter envelope for a refused message.
pub fn dead_letter_envelope(header: &Header, letter: &DeadLetter) -> String {
    flat_envelope(
        header,
        "dead_letter",
        serde_json::to_value(letter).unwrap_or(serde_json::Value::Null),
    )
}
