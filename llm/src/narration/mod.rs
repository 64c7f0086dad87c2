//! The narration seam's messages and its delivery guard. Narration turns an interaction that
//! already happened into text; the text is only ever delivered as a `NarrativeReady` message,
//! only after it passed [`check`], and only while a player is still in the room to read it.
//! This module owns those types; it does not decide when to call a provider.

mod check;

use serde::{Deserialize, Serialize};

pub use check::{NarrativeCheck, NarrativeRejection};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closures_are_guards() {
        let guard = |_zone: &str, room: &str| room == "tavern";
        assert!(guard.room_has_player("z", "tavern"));
        assert!(!guard.room_has_player("z", "forge"));
    }
}
