//! The perception seam's closed event schema and its validator. Whatever produced the
//! candidates (a model, the keyword rules), nothing leaves this module unless it is one of the
//! known event types with a known kind, names existing NPCs of the speaker's zone, carries a
//! finite magnitude clamped to the configured bounds and strings within their length bounds.
//! Every refused candidate is reported with a reason. The speaker always becomes the actor:
//! candidates cannot name one. This module neither calls providers nor applies events.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::config::PerceptionLimits;
use crate::request::{NpcRef, PerceptionRequest};
use crate::telemetry;

geppetto_core::wire_enum! {
    /// The event types a perception may produce.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum EventType {
        /// The speaker did something social to an NPC (`target`).
        SocialEvent = "social_event",
        /// The speaker told an NPC (`listener`) something about another NPC (`subject`).
        GossipEvent = "gossip_event",
    }
}

impl EventType {
    /// The kinds this type accepts.
    #[must_use]
    pub fn kinds(self) -> &'static [&'static str] {
        match self {
            EventType::SocialEvent => SocialKind::WIRE_NAMES,
            EventType::GossipEvent => GossipTone::WIRE_NAMES,
        }
    }
}

/// Whether `kind` is one of `event_type`'s kinds.
#[must_use]
pub fn kind_is_known(event_type: EventType, kind: &str) -> bool {
    event_type.kinds().contains(&kind)
}

geppetto_core::wire_enum! {
    /// What the speaker did to the target.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum SocialKind {
        /// Words meant to hurt.
        Insult = "insult",
        /// Something given.
        Gift = "gift",
        /// Something taken.
        Theft = "theft",
        /// Harm promised.
        Threat = "threat",
        /// Words meant to please.
        Praise = "praise",
        /// Assistance offered or given.
        Help = "help",
    }
}

geppetto_core::wire_enum! {
    /// What the speaker said about the subject.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum GossipTone {
        /// Good things.
        Praise = "praise",
        /// Bad things.
        Slander = "slander",
    }
}

/// A validated event, ready for the caller to log and apply like any world event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PerceivedEvent {
    /// The speaker did something social to an NPC.
    SocialEvent {
        /// What.
        kind: SocialKind,
        /// The speaking player (from the request, never from a candidate).
        actor: String,
        /// The NPC it was aimed at.
        target: String,
        /// Intensity, within the configured bounds.
        magnitude: f64,
        /// Short description, bounded and free of control characters.
        summary: String,
    },
    /// The speaker told an NPC something about another NPC.
    GossipEvent {
        /// Praise or slander.
        kind: GossipTone,
        /// The speaking player (from the request, never from a candidate).
        speaker: String,
        /// The NPC who heard it.
        listener: String,
        /// The NPC it was about.
        subject: String,
        /// Intensity, within the configured bounds.
        magnitude: f64,
        /// Short description, bounded and free of control characters.
        summary: String,
    },
}

impl PerceivedEvent {
    /// The event's type.
    #[must_use]
    pub fn event_type(&self) -> EventType {
        match self {
            PerceivedEvent::SocialEvent { .. } => EventType::SocialEvent,
            PerceivedEvent::GossipEvent { .. } => EventType::GossipEvent,
        }
    }

    fn identity(&self) -> (EventType, &'static str, &str, &str) {
        match self {
            PerceivedEvent::SocialEvent { kind, target, .. } => {
                (EventType::SocialEvent, kind.as_str(), target, "")
            }
            PerceivedEvent::GossipEvent {
                kind,
                listener,
                subject,
                ..
            } => (EventType::GossipEvent, kind.as_str(), listener, subject),
        }
    }
}

geppetto_core::wire_enum! {
    /// Why a candidate was refused.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum RejectionReason {
        /// The provider's output as a whole is not candidate JSON.
        MalformedOutput = "malformed_output",
        /// A candidate is not a JSON object.
        NotAnObject = "not_an_object",
        /// A required field is absent.
        MissingField = "missing_field",
        /// A field has the wrong JSON type (e.g. a magnitude given as the string "NaN").
        WrongType = "wrong_type",
        /// A field the schema does not have (e.g. an `actor` or `gold` a model invented).
        UnknownField = "unknown_field",
        /// `type` is not a known event type.
        UnknownType = "unknown_type",
        /// `kind` is not a kind of that type.
        UnknownKind = "unknown_kind",
        /// An NPC id the caller did not supply.
        UnknownNpc = "unknown_npc",
        /// An NPC of another zone.
        NpcInOtherZone = "npc_in_other_zone",
        /// Gossip whose listener is its subject.
        SameNpcTwice = "same_npc_twice",
        /// A string over its length bound.
        StringTooLong = "string_too_long",
        /// A magnitude that is not a finite number.
        NotFinite = "not_finite",
        /// The same event (type, kind, NPCs) as an accepted one.
        Duplicate = "duplicate",
        /// Valid, but the utterance already produced the maximum number of events.
        TooManyEvents = "too_many_events",
        /// Past the number of candidates examined per utterance.
        NotExamined = "not_examined",
    }
}

/// One refused candidate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rejection {
    /// Position of the candidate in the provider's list (none when the whole output failed).
    pub index: Option<usize>,
    /// Why.
    pub reason: RejectionReason,
    /// The field at fault, when one is.
    pub field: Option<String>,
}

/// Validated events and refused candidates of one utterance.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct PerceptionOutcome {
    /// Accepted events, in candidate order.
    pub events: Vec<PerceivedEvent>,
    /// Refused candidates, in candidate order.
    pub rejections: Vec<Rejection>,
    /// Accepted events whose magnitude was clamped into bounds.
    pub clamped: usize,
}

impl PerceptionOutcome {
    /// The outcome of output that is not candidate JSON at all.
    #[must_use]
    pub fn malformed() -> Self {
        Self {
            events: Vec::new(),
            rejections: vec![Rejection {
                index: None,
                reason: RejectionReason::MalformedOutput,
                field: None,
            }],
            clamped: 0,
        }
    }

    pub(crate) fn record_metrics(&self) {
        for event in &self.events {
            telemetry::perception_accepted(event.event_type().as_str());
        }
        for rejection in &self.rejections {
            telemetry::perception_rejected(rejection.reason.as_str());
        }
        if self.clamped > 0 {
            telemetry::perception_clamped(self.clamped);
        }
    }
}

/// Extracts the candidate list from a model's text: `{"events": [...]}`, a bare array, or a
/// single event object, optionally inside a Markdown code fence. `None` when it is none of
/// these (the caller reports `MalformedOutput`).
#[must_use]
pub fn parse_model_output(text: &str) -> Option<Vec<Value>> {
    let trimmed = text.trim();
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|inner| inner.trim_end().strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim();
    match serde_json::from_str::<Value>(unfenced).ok()? {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{PerceptionContext, Priority};

    fn request() -> PerceptionRequest {
        PerceptionRequest {
            utterance_id: "u1".to_owned(),
            speaker: "player-1".to_owned(),
            text: "irrelevant here".to_owned(),
            context: PerceptionContext {
                zone: "village".to_owned(),
                room: "square".to_owned(),
                addressee: Some("mira".to_owned()),
                npcs: vec![
                    NpcRef {
                        id: "mira".to_owned(),
                        name: "Mira".to_owned(),
                        zone: "village".to_owned(),
                    },
                    NpcRef {
                        id: "gundren".to_owned(),
                        name: "Gundren".to_owned(),
                        zone: "village".to_owned(),
                    },
                    NpcRef {
                        id: "far-guard".to_owned(),
                        name: "Guard".to_owned(),
                        zone: "citadel".to_owned(),
                    },
                ],
            },
            priority: Priority::Witnessed,
            seed: 9,
        }
    }

    fn check(candidate: Value, expected: Result<(), RejectionReason>) {
        let outcome = validate_candidates(
            std::slice::from_ref(&candidate),
            &request(),
            &PerceptionLimits::default(),
        );
        match expected {
            Ok(()) => {
                assert_eq!(
                    outcome.events.len(),
                    1,
                    "{candidate} should pass: {outcome:?}"
                );
                assert!(outcome.rejections.is_empty());
            }
            Err(reason) => {
                assert!(outcome.events.is_empty(), "{candidate} should fail");
                assert_eq!(
                    outcome
                        .rejections
                        .iter()
                        .map(|r| r.reason)
                        .collect::<Vec<_>>(),
                    [reason],
                    "{candidate}"
                );
            }
        }
    }

    #[test]
    fn table_of_candidates() {
        use RejectionReason as R;
        let cases = [
            (
                json!({"type": "social_event", "kind": "insult", "target": "mira", "magnitude": 0.4}),
                Ok(()),
            ),
            (
                json!({"type": "social_event", "kind": "help", "target": "gundren", "magnitude": 0.1, "summary": "offers a hand"}),
                Ok(()),
            ),
            (
                json!({"type": "gossip_event", "kind": "slander", "listener": "mira", "subject": "gundren", "magnitude": 0.3, "summary": "s"}),
                Ok(()),
            ),
            (json!("social_event"), Err(R::NotAnObject)),
            (
                json!({"kind": "insult", "target": "mira", "magnitude": 0.4}),
                Err(R::MissingField),
            ),
            (
                json!({"type": "give_gold", "target": "mira", "amount": 1000}),
                Err(R::UnknownType),
            ),
            (
                json!({"type": "social_event", "kind": "bribe", "target": "mira", "magnitude": 0.4}),
                Err(R::UnknownKind),
            ),
            (
                json!({"type": "social_event", "kind": "insult", "target": "nobody", "magnitude": 0.4}),
                Err(R::UnknownNpc),
            ),
            (
                json!({"type": "social_event", "kind": "insult", "target": "far-guard", "magnitude": 0.4}),
                Err(R::NpcInOtherZone),
            ),
            (
                json!({"type": "social_event", "kind": "insult", "target": "mira", "magnitude": "NaN"}),
                Err(R::WrongType),
            ),
            (
                json!({"type": "social_event", "kind": "insult", "target": "mira", "magnitude": 0.4, "actor": "mira"}),
                Err(R::UnknownField),
            ),
            (
                json!({"type": "social_event", "kind": "insult", "target": "mira", "magnitude": 0.4, "summary": "x".repeat(161)}),
                Err(R::StringTooLong),
            ),
            (
                json!({"type": "social_event", "kind": "insult", "target": "m".repeat(65), "magnitude": 0.4}),
                Err(R::StringTooLong),
            ),
            (
                json!({"type": "gossip_event", "kind": "praise", "listener": "mira", "subject": "mira", "magnitude": 0.3}),
                Err(R::SameNpcTwice),
            ),
            (
                json!({"type": "gossip_event", "kind": "insult", "listener": "mira", "subject": "gundren", "magnitude": 0.3}),
                Err(R::UnknownKind),
            ),
        ];
        for (candidate, expected) in cases {
            check(candidate, expected);
        }
    }

    #[test]
    fn magnitudes_are_clamped_and_counted() {
        let outcome = validate_candidates(
            &[
                json!({"type": "social_event", "kind": "gift", "target": "mira", "magnitude": 1000}),
                json!({"type": "social_event", "kind": "theft", "target": "mira", "magnitude": -5}),
                json!({"type": "social_event", "kind": "help", "target": "mira", "magnitude": 0.5}),
            ],
            &request(),
            &PerceptionLimits::default(),
        );
        let magnitudes: Vec<f64> = outcome
            .events
            .iter()
            .map(|event| match event {
                PerceivedEvent::SocialEvent { magnitude, .. }
                | PerceivedEvent::GossipEvent { magnitude, .. } => *magnitude,
            })
            .collect();
        assert_eq!(magnitudes, [1.0, 0.0, 0.5]);
        assert_eq!(outcome.clamped, 2);
    }

    #[test]
    fn duplicates_and_excess_events_are_refused() {
        let insult =
            json!({"type": "social_event", "kind": "insult", "target": "mira", "magnitude": 0.4});
        let limits = PerceptionLimits {
            max_events_per_utterance: 2,
            max_candidates_examined: 4,
            ..PerceptionLimits::default()
        };
        let outcome = validate_candidates(
            &[
                insult.clone(),
                insult,
                json!({"type": "social_event", "kind": "insult", "target": "gundren", "magnitude": 0.4}),
                json!({"type": "social_event", "kind": "praise", "target": "gundren", "magnitude": 0.4}),
                json!({"type": "social_event", "kind": "help", "target": "gundren", "magnitude": 0.4}),
            ],
            &request(),
            &limits,
        );
        assert_eq!(outcome.events.len(), 2);
        let reasons: Vec<_> = outcome
            .rejections
            .iter()
            .map(|r| (r.index, r.reason))
            .collect();
        assert_eq!(
            reasons,
            [
                (Some(1), RejectionReason::Duplicate),
                (Some(3), RejectionReason::TooManyEvents),
                (Some(4), RejectionReason::NotExamined),
            ]
        );
    }

    #[test]
    fn the_actor_is_always_the_speaker() {
        let outcome = validate_candidates(
            &[
                json!({"type": "social_event", "kind": "threat", "target": "gundren", "magnitude": 0.9}),
            ],
            &request(),
            &PerceptionLimits::default(),
        );
        assert!(matches!(
            &outcome.events[..],
            [PerceivedEvent::SocialEvent { actor, .. }] if actor == "player-1"
        ));
    }

    #[test]
    fn model_output_shapes() {
        let cases: [(&str, Option<usize>); 7] = [
            (r#"{"events": [{"type": "x"}, {"type": "y"}]}"#, Some(2)),
            (r#"[{"type": "x"}]"#, Some(1)),
            ("```json\n{\"events\": []}\n```", Some(0)),
            (r#"{"type": "social_event"}"#, Some(1)),
            (r#"{"events": "none", "extra": 1}"#, None),
            ("Sure! Here are the events: none", None),
            ("42", None),
        ];
        for (text, expected) in cases {
            assert_eq!(
                parse_model_output(text).map(|items| items.len()),
                expected,
                "{text}"
            );
        }
    }

    #[test]
    fn schema_lists_only_same_zone_npcs_and_known_kinds() {
        let schema = candidate_json_schema(&request(), &PerceptionLimits::default());
        let text = schema.to_string();
        assert!(text.contains("\"mira\"") && text.contains("\"gundren\""));
        assert!(!text.contains("far-guard"));
        assert!(text.contains("\"threat\"") && text.contains("\"slander\""));
    }

    /// Serde and `as_str` agree for every variant of every wire enum of this crate.
    #[test]
    fn wire_names_agree_with_serde() {
        fn check<T>(variants: &[T], names: &[&str], as_str: fn(T) -> &'static str)
        where
            T: Copy + PartialEq + std::fmt::Debug + Serialize + for<'de> Deserialize<'de>,
        {
            assert_eq!(variants.len(), names.len());
            for (variant, name) in variants.iter().zip(names) {
                assert_eq!(as_str(*variant), *name);
                assert_eq!(
                    serde_json::to_value(variant).expect("serialises"),
                    json!(name)
                );
                let back: T = serde_json::from_value(json!(name)).expect("deserialises");
                assert_eq!(back, *variant);
            }
        }
        check(
            EventType::VARIANTS,
            EventType::WIRE_NAMES,
            EventType::as_str,
        );
        check(
            SocialKind::VARIANTS,
            SocialKind::WIRE_NAMES,
            SocialKind::as_str,
        );
        check(
            GossipTone::VARIANTS,
            GossipTone::WIRE_NAMES,
            GossipTone::as_str,
        );
        check(
            RejectionReason::VARIANTS,
            RejectionReason::WIRE_NAMES,
            RejectionReason::as_str,
        );
        use crate::breaker::BreakerState;
        use crate::request::{Priority, Seam};
        use crate::worker::FallbackReason;
        check(
            BreakerState::VARIANTS,
            BreakerState::WIRE_NAMES,
            BreakerState::as_str,
        );
        check(Priority::VARIANTS, Priority::WIRE_NAMES, Priority::as_str);
        check(Seam::VARIANTS, Seam::WIRE_NAMES, Seam::as_str);
        check(
            FallbackReason::VARIANTS,
            FallbackReason::WIRE_NAMES,
            FallbackReason::as_str,
        );
    }

    #[test]
    fn truncation_respects_character_boundaries() {
        assert_eq!(truncate_chars("héllo", 2), "hé");
        assert_eq!(truncate_chars("abc", 10), "abc");
    }
}
