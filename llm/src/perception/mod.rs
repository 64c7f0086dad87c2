//! The perception seam's closed event schema and its validator. Whatever produced the
//! candidates (a model, the keyword rules), nothing leaves this module unless it is one of the
//! known event types with a known kind, names existing NPCs of the speaker's zone, carries a
//! finite magnitude clamped to the configured bounds and strings within their length bounds.
//! Every refused candidate is reported with a reason. The speaker always becomes the actor:
//! candidates cannot name one. This module neither calls providers nor applies events.
//!
//! [`schema`] declares the closed schema (event types, kinds, validated events, refusals and
//! their reasons); [`validate`] reads a provider's output, states the schema for a provider and
//! checks candidates against it.

mod schema;
mod validate;

pub use schema::{
    EventType, GossipTone, PerceivedEvent, PerceptionOutcome, Rejection, RejectionReason,
    SocialKind, kind_is_known,
};
pub(crate) use validate::same_zone_npcs;
pub use validate::{
    candidate_json_schema, parse_model_output, truncate_chars, validate_candidates,
};

#[cfg(test)]
mod tests;
