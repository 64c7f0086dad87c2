//! The closed schema of what a perception may produce: the event types and their kinds, a
//! validated [`PerceivedEvent`], a refused candidate's [`Rejection`] and the [`PerceptionOutcome`]
//! of one utterance. It checks nothing; [`super::validate`] does.

use serde::{Deserialize, Serialize};

use crate::telemetry;

geppetto_wire_enum::wire_enum! {
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

geppetto_wire_enum::wire_enum! {
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

geppetto_wire_enum::wire_enum! {
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

    pub(super) fn identity(&self) -> (EventType, &'static str, &str, &str) {
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

geppetto_wire_enum::wire_enum! {
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
