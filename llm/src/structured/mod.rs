//! Structured output, and what a provider has learned about it. Perception asks for the
//! strongest mode a server accepts: `json_schema` (the closed schema enforced by the server),
//! then `json_object` (any JSON), then plain text with the JSON extracted from it. A server's
//! refusal of a mode is learned once and remembered for the provider's life, so no later call
//! pays for it again. Whatever the mode, the validator stays the gate. This module owns the
//! learned state (the modes are [`crate::structured_mode`]'s); it makes no calls.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::telemetry;

pub use crate::structured_mode::StructuredMode;

/// The strongest mode one provider is known to accept. It only ever weakens: a refusal is a
/// property of the server, not of one call.
#[derive(Debug)]
pub struct LearnedMode {
    provider: String,
    mode: AtomicU8,
}

impl LearnedMode {
    /// Starts at `first`, the strongest mode the config allows.
    #[must_use]
    pub fn new(provider: &str, first: StructuredMode) -> Self {
        telemetry::structured_mode(provider, first);
        Self {
            provider: provider.to_owned(),
            mode: AtomicU8::new(first.code()),
        }
    }

    /// The mode to ask for now.
    #[must_use]
    pub fn current(&self) -> StructuredMode {
        StructuredMode::from_code(self.mode.load(Ordering::Acquire))
    }

    /// Records that the server refused `refused` and answered `accepted` (weaker). Returns
    /// whether this call taught it (a concurrent call may have learned it first); only the
    /// call that teaches it counts it.
    pub fn learn(&self, refused: StructuredMode, accepted: StructuredMode) -> bool {
        if accepted.code() >= refused.code() {
            return false;
        }
        let mut current = self.mode.load(Ordering::Acquire);
        loop {
            if current <= accepted.code() {
                return false;
            }
            // The mode in force is stronger than `accepted`: lower it.
            match self.mode.compare_exchange(
                current,
                accepted.code(),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => current = now,
            }
        }
        telemetry::structured_mode(&self.provider, accepted);
        telemetry::structured_downgrade(&self.provider, refused, accepted);
        tracing::warn!(
            provider = %self.provider,
            refused = refused.as_str(),
            now = accepted.as_str(),
            "the server refuses this structured-output mode; perception asks for the weaker one from now on"
        );
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_weaken_in_order_and_end_at_text() {
        let mut mode = Some(StructuredMode::JsonSchema);
        let mut seen = Vec::new();
        while let Some(current) = mode {
            seen.push(current.as_str());
            mode = current.weaker();
        }
        assert_eq!(seen, ["json_schema", "json_object", "text"]);
    }

    #[test]
    fn a_provider_learns_a_weaker_mode_once_and_never_strengthens() {
        let learned = LearnedMode::new("p", StructuredMode::JsonSchema);
        assert_eq!(learned.current(), StructuredMode::JsonSchema);
        assert!(learned.learn(StructuredMode::JsonSchema, StructuredMode::JsonObject));
        assert!(
            !learned.learn(StructuredMode::JsonSchema, StructuredMode::JsonObject),
            "already known"
        );
        assert_eq!(learned.current(), StructuredMode::JsonObject);
        assert!(!learned.learn(StructuredMode::Text, StructuredMode::JsonSchema));
        assert_eq!(learned.current(), StructuredMode::JsonObject);
        assert!(learned.learn(StructuredMode::JsonObject, StructuredMode::Text));
        assert_eq!(learned.current(), StructuredMode::Text);
    }
}
