//! Candidates in and validated events out: a model's text read as candidate JSON, the strict
//! JSON schema offered to a provider, and the validator every candidate passes through (known
//! type and kind, NPCs of the speaker's zone, finite clamped magnitude, bounded strings, no
//! duplicates, at most the configured number of events).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::config::PerceptionLimits;
use crate::request::{NpcRef, PerceptionRequest};

use super::schema::{
    EventType, GossipTone, PerceivedEvent, PerceptionOutcome, Rejection, RejectionReason,
    SocialKind,
};

/// Where in a model's text a JSON value may start is tried at most this many times, so prose
/// full of braces costs bounded work.
const MAX_JSON_STARTS: usize = 32;

/// Extracts the candidate list from a model's text: `{"events": [...]}`, a bare array, or a
/// single event object — the whole text, or inside a Markdown code fence, or the first such
/// JSON value found in surrounding prose (a model answering in plain text). `None` when there
/// is none (the caller reports `MalformedOutput`).
#[must_use]
pub fn parse_model_output(text: &str) -> Option<Vec<Value>> {
    let trimmed = text.trim();
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|inner| inner.trim_end().strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim();
    if let Ok(value) = serde_json::from_str::<Value>(unfenced) {
        return candidates_in(value);
    }
    trimmed
        .match_indices(['{', '['])
        .take(MAX_JSON_STARTS)
        .find_map(|(at, _)| {
            let value = serde_json::Deserializer::from_str(&trimmed[at..])
                .into_iter::<Value>()
                .next()?
                .ok()?;
            candidates_in(value)
        })
}

/// The candidates a JSON value stands for, if it is one of the accepted shapes.
fn candidates_in(value: Value) -> Option<Vec<Value>> {
    match value {
        Value::Array(items) => Some(items),
        Value::Object(mut object) => match object.remove("events") {
            Some(Value::Array(items)) if object.is_empty() => Some(items),
            Some(_) => None,
            None if object.contains_key("type") => Some(vec![Value::Object(object)]),
            None => None,
        },
        _ => None,
    }
}

/// The JSON schema sent as `response_format` (strict): only known types and kinds, only NPC
/// ids of the speaker's zone. Providers may ignore it; `validate_candidates` never trusts it.
#[must_use]
pub fn candidate_json_schema(request: &PerceptionRequest, limits: &PerceptionLimits) -> Value {
    let ids: Vec<&str> = same_zone_npcs(request).map(|npc| npc.id.as_str()).collect();
    let npc_id = if ids.is_empty() {
        json!({ "type": "string", "maxLength": limits.max_id_chars })
    } else {
        json!({ "type": "string", "enum": ids })
    };
    let magnitude = json!({
        "type": "number",
        "minimum": limits.magnitude_min,
        "maximum": limits.magnitude_max
    });
    let summary = json!({ "type": "string", "maxLength": limits.max_summary_chars });
    let social = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["type", "kind", "target", "magnitude", "summary"],
        "properties": {
            "type": { "type": "string", "enum": [EventType::SocialEvent.as_str()] },
            "kind": { "type": "string", "enum": SocialKind::WIRE_NAMES },
            "target": npc_id,
            "magnitude": magnitude,
            "summary": summary
        }
    });
    let gossip = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["type", "kind", "listener", "subject", "magnitude", "summary"],
        "properties": {
            "type": { "type": "string", "enum": [EventType::GossipEvent.as_str()] },
            "kind": { "type": "string", "enum": GossipTone::WIRE_NAMES },
            "listener": npc_id,
            "subject": npc_id,
            "magnitude": magnitude,
            "summary": summary
        }
    });
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["events"],
        "properties": {
            "events": {
                "type": "array",
                "maxItems": limits.max_events_per_utterance,
                "items": { "anyOf": [social, gossip] }
            }
        }
    })
}

/// NPCs of the speaker's zone.
pub(crate) fn same_zone_npcs(request: &PerceptionRequest) -> impl Iterator<Item = &NpcRef> {
    request
        .context
        .npcs
        .iter()
        .filter(|npc| npc.zone == request.context.zone)
}

/// Validates candidates against the closed schema and the request's context.
#[must_use]
pub fn validate_candidates(
    candidates: &[Value],
    request: &PerceptionRequest,
    limits: &PerceptionLimits,
) -> PerceptionOutcome {
    let mut outcome = PerceptionOutcome::default();
    let mut seen = BTreeSet::new();
    for (index, candidate) in candidates.iter().enumerate() {
        let reject = |reason: RejectionReason, field: Option<&str>| Rejection {
            index: Some(index),
            reason,
            field: field.map(str::to_owned),
        };
        if index >= limits.max_candidates_examined {
            outcome
                .rejections
                .push(reject(RejectionReason::NotExamined, None));
            continue;
        }
        match validate_one(candidate, request, limits) {
            Err((reason, field)) => outcome.rejections.push(reject(reason, field)),
            Ok((event, clamped)) => {
                let identity = event.identity();
                let key = (
                    identity.0,
                    identity.1,
                    identity.2.to_owned(),
                    identity.3.to_owned(),
                );
                if seen.contains(&key) {
                    outcome
                        .rejections
                        .push(reject(RejectionReason::Duplicate, None));
                } else if outcome.events.len() >= limits.max_events_per_utterance {
                    outcome
                        .rejections
                        .push(reject(RejectionReason::TooManyEvents, None));
                } else {
                    seen.insert(key);
                    outcome.clamped += usize::from(clamped);
                    outcome.events.push(event);
                }
            }
        }
    }
    outcome
}

type Refusal = (RejectionReason, Option<&'static str>);

fn validate_one(
    candidate: &Value,
    request: &PerceptionRequest,
    limits: &PerceptionLimits,
) -> Result<(PerceivedEvent, bool), Refusal> {
    let object = candidate
        .as_object()
        .ok_or((RejectionReason::NotAnObject, None))?;
    let type_name = string_field(object, "type", usize::MAX)?;
    let event_type =
        EventType::from_wire(type_name).ok_or((RejectionReason::UnknownType, Some("type")))?;
    let allowed: &[&str] = match event_type {
        EventType::SocialEvent => &["type", "kind", "target", "magnitude", "summary"],
        EventType::GossipEvent => &[
            "type",
            "kind",
            "listener",
            "subject",
            "magnitude",
            "summary",
        ],
    };
    // The unknown field's name is the model's text, unbounded: report only that one was there.
    if object.keys().any(|key| !allowed.contains(&key.as_str())) {
        return Err((RejectionReason::UnknownField, None));
    }
    let kind = string_field(object, "kind", usize::MAX)?;
    let (magnitude, clamped) = magnitude_field(object, limits)?;
    let summary = summary_field(object, limits)?;
    let actor = request.speaker.clone();
    match event_type {
        EventType::SocialEvent => {
            let kind =
                SocialKind::from_wire(kind).ok_or((RejectionReason::UnknownKind, Some("kind")))?;
            let target = npc_field(object, "target", request, limits)?;
            Ok((
                PerceivedEvent::SocialEvent {
                    kind,
                    actor,
                    target,
                    magnitude,
                    summary,
                },
                clamped,
            ))
        }
        EventType::GossipEvent => {
            let kind =
                GossipTone::from_wire(kind).ok_or((RejectionReason::UnknownKind, Some("kind")))?;
            let listener = npc_field(object, "listener", request, limits)?;
            let subject = npc_field(object, "subject", request, limits)?;
            if listener == subject {
                return Err((RejectionReason::SameNpcTwice, Some("subject")));
            }
            Ok((
                PerceivedEvent::GossipEvent {
                    kind,
                    speaker: actor,
                    listener,
                    subject,
                    magnitude,
                    summary,
                },
                clamped,
            ))
        }
    }
}

fn string_field<'a>(
    object: &'a Map<String, Value>,
    field: &'static str,
    max_chars: usize,
) -> Result<&'a str, Refusal> {
    let value = object
        .get(field)
        .ok_or((RejectionReason::MissingField, Some(field)))?;
    let text = value
        .as_str()
        .ok_or((RejectionReason::WrongType, Some(field)))?;
    if text.chars().count() > max_chars {
        return Err((RejectionReason::StringTooLong, Some(field)));
    }
    Ok(text)
}

fn npc_field(
    object: &Map<String, Value>,
    field: &'static str,
    request: &PerceptionRequest,
    limits: &PerceptionLimits,
) -> Result<String, Refusal> {
    let id = string_field(object, field, limits.max_id_chars)?;
    let npc = request
        .context
        .npcs
        .iter()
        .find(|npc| npc.id == id)
        .ok_or((RejectionReason::UnknownNpc, Some(field)))?;
    if npc.zone != request.context.zone {
        return Err((RejectionReason::NpcInOtherZone, Some(field)));
    }
    Ok(npc.id.clone())
}

fn magnitude_field(
    object: &Map<String, Value>,
    limits: &PerceptionLimits,
) -> Result<(f64, bool), Refusal> {
    const FIELD: &str = "magnitude";
    let value = object
        .get(FIELD)
        .ok_or((RejectionReason::MissingField, Some(FIELD)))?;
    let number = value
        .as_f64()
        .ok_or((RejectionReason::WrongType, Some(FIELD)))?;
    if !number.is_finite() {
        return Err((RejectionReason::NotFinite, Some(FIELD)));
    }
    let clamped = number.clamp(limits.magnitude_min, limits.magnitude_max);
    Ok((clamped, clamped != number))
}

fn summary_field(
    object: &Map<String, Value>,
    limits: &PerceptionLimits,
) -> Result<String, Refusal> {
    const FIELD: &str = "summary";
    match object.get(FIELD) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(_) => {
            let text = string_field(object, FIELD, limits.max_summary_chars)?;
            Ok(text
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect())
        }
    }
}

/// Cuts `text` to at most `max_chars` characters, at a character boundary.
#[must_use]
pub fn truncate_chars(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((byte, _)) => &text[..byte],
        None => text,
    }
}
