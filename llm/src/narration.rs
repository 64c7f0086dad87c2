//! The narration seam's messages and its delivery guard. Narration turns an interaction that
//! already happened into text; the text is only ever delivered as a `NarrativeReady` message,
//! and only while a player is still in the room to read it. This module owns those types and
//! the cleaning of model text; it does not decide when to call a provider.

use serde::{Deserialize, Serialize};

use crate::perception::truncate_chars;
use crate::queue::PushOutcome;

/// Answers "does this room still hold a player?" at delivery time. The service implements
/// it over its presence map; it must be cheap and must not block.
pub trait DeliveryGuard: Send + Sync {
    /// Whether at least one player is in `room` of `zone` now.
    fn room_has_player(&self, zone: &str, room: &str) -> bool;
}

impl<F> DeliveryGuard for F
where
    F: Fn(&str, &str) -> bool + Send + Sync,
{
    fn room_has_player(&self, zone: &str, room: &str) -> bool {
        self(zone, room)
    }
}

/// The model's text for an interaction, ready to show to the players in the room.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NarrativeReady {
    /// The interaction's id (from the request).
    pub interaction_id: String,
    /// Zone of the room.
    pub zone: String,
    /// The room whose players should see it.
    pub room: String,
    /// The text: trimmed, bounded, free of control characters.
    pub text: String,
    /// The provider that wrote it.
    pub provider: String,
}

/// What `LlmHandle::narrate` gives the caller at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NarrationTicket {
    /// Deterministic template text to show now (for the intent); the real text, if any,
    /// arrives later as `NarrativeReady`.
    pub placeholder: String,
    /// Whether the request was queued, and what the full queue dropped.
    pub queued: PushOutcome,
}

/// Cleans model text for delivery: control characters become spaces, surrounding whitespace
/// and quotes go, and the result is cut to `max_chars`. `None` when nothing is left.
#[must_use]
pub fn clean_narrative(text: &str, max_chars: usize) -> Option<String> {
    let flattened: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let trimmed = flattened.trim().trim_matches('"').trim();
    let cut = truncate_chars(trimmed, max_chars).trim_end();
    (!cut.is_empty()).then(|| cut.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleaning_bounds_and_flattens_text() {
        let cases: [(&str, usize, Option<&str>); 5] = [
            ("  \"Mira glares.\"  ", 100, Some("Mira glares.")),
            ("line one\nline two", 100, Some("line one line two")),
            ("abcdef", 3, Some("abc")),
            ("   ", 10, None),
            ("\u{7}\u{1b}", 10, None),
        ];
        for (text, max, expected) in cases {
            assert_eq!(clean_narrative(text, max).as_deref(), expected, "{text:?}");
        }
    }

    #[test]
    fn closures_are_guards() {
        let guard = |_zone: &str, room: &str| room == "tavern";
        assert!(guard.room_has_player("z", "tavern"));
        assert!(!guard.room_has_player("z", "forge"));
    }
}
