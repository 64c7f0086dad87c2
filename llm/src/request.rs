//! The requests a service hands to the LLM seams: immutable, owned data carrying everything a
//! provider may see (names, ids, the utterance, a seed) and nothing that can reach NPC state.
//! Results travel back as messages (see `worker::LlmOutput`), never as references.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

geppetto_wire_enum::wire_enum! {
    /// Importance class of a request. The queue serves higher classes first and, when full, drops
    /// the lowest class first.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Priority {
        /// Ambient flavour nobody is waiting for.
        Routine = "routine",
        /// Text that may feed a story signal or quest hook.
        StoryRelevant = "story_relevant",
        /// A player saw it happen or is waiting for the answer.
        Witnessed = "witnessed",
    }
}

impl Priority {
    /// Every class, lowest first (the order in which the queue drops).
    pub const LOWEST_FIRST: [Priority; 3] = [
        Priority::Routine,
        Priority::StoryRelevant,
        Priority::Witnessed,
    ];

    pub(crate) fn index(self) -> usize {
        match self {
            Priority::Routine => 0,
            Priority::StoryRelevant => 1,
            Priority::Witnessed => 2,
        }
    }
}

/// What a request's spend is filed under besides its seam and zone: the NPC it is about (the
/// narration's initiator, the perceived line's addressee), where the caller knows it. Budget
/// shares (`[llm.budget.classes]`, `[llm.budget.tiers]`) are matched against these names.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SpendTags {
    /// The NPC's class (its archetype).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// The NPC's simulation tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
}

/// One side of an interaction, as the narrator may name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Participant {
    /// Stable id (an NPC id or a player id).
    pub id: String,
    /// Display name used in text.
    pub name: String,
}

/// Write flavour text for an interaction that already happened (its outcome is decided).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NarrationRequest {
    /// The interaction's id; the `NarrativeReady` message carries it back.
    pub interaction_id: String,
    /// Zone of the room.
    pub zone: String,
    /// Room where it happened; the delivery guard asks whether a player is still there.
    pub room: String,
    /// Who started it.
    pub initiator: Participant,
    /// Who it was aimed at.
    pub target: Participant,
    /// Interaction kind in words the templates are keyed by: `argue`, `trade`, `gossip`…
    pub interaction: String,
    /// The initiator's mood in a word or two (`cheerful`, `calm`, `gloomy`).
    pub mood: String,
    /// Names of the zone's NPCs near players, one list shared by every request until they
    /// move: a model's text naming one of them who is not `present` is refused and the
    /// template stands.
    #[serde(default)]
    pub known: Arc<[String]>,
    /// Names of the NPCs in the room.
    #[serde(default)]
    pub present: Vec<String>,
    /// Importance class.
    pub priority: Priority,
    /// Seed for every deterministic choice made for this request.
    pub seed: u64,
    /// The initiator's class and tier, for accounting and budget shares.
    #[serde(default)]
    pub tags: SpendTags,
}

impl NarrationRequest {
    /// The values of the narration placeholders (`crate::assets::NARRATION_PLACEHOLDERS`).
    #[must_use]
    pub fn placeholder_values(&self) -> [(&'static str, &str); 5] {
        [
            ("initiator", self.initiator.name.as_str()),
            ("target", self.target.name.as_str()),
            ("interaction", self.interaction.as_str()),
            ("room", self.room.as_str()),
            ("mood", self.mood.as_str()),
        ]
    }
}

/// An NPC the perceiver may name in a candidate event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NpcRef {
    /// The NPC's id.
    pub id: String,
    /// Its display name (used by the keyword rules and in the prompt).
    pub name: String,
    /// The zone it is in.
    pub zone: String,
}

/// What the perceiver may know about the situation of an utterance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerceptionContext {
    /// Zone of the speaker; only NPCs of this zone may appear in accepted events.
    pub zone: String,
    /// Room of the speaker.
    pub room: String,
    /// NPC the player addressed, if the game knows (a `say` aimed at someone).
    pub addressee: Option<String>,
    /// NPCs the caller knows of; ids outside this list are refused.
    pub npcs: Vec<NpcRef>,
}

/// Turn free text a player said into candidate world events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerceptionRequest {
    /// The utterance's id; the result carries it back.
    pub utterance_id: String,
    /// The player who spoke; it becomes the actor of accepted events (a provider cannot set it).
    pub speaker: String,
    /// What they said, verbatim. Never logged above debug level.
    pub text: String,
    /// Who and where.
    pub context: PerceptionContext,
    /// Importance class (a player is usually waiting: `Witnessed`).
    pub priority: Priority,
    /// Seed for every deterministic choice made for this request.
    pub seed: u64,
    /// The addressee's class and tier, for accounting and budget shares.
    #[serde(default)]
    pub tags: SpendTags,
}

geppetto_wire_enum::wire_enum! {
    /// Which of the two seams a request uses.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Seam {
        /// Events → text.
        Narration = "narration",
        /// Text → candidate events.
        Perception = "perception",
    }
}

/// A queued unit of LLM work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "seam", rename_all = "snake_case")]
pub enum LlmRequest {
    /// Events → text.
    Narration(NarrationRequest),
    /// Text → candidate events.
    Perception(PerceptionRequest),
}

impl LlmRequest {
    /// The request's importance class.
    #[must_use]
    pub fn priority(&self) -> Priority {
        match self {
            LlmRequest::Narration(request) => request.priority,
            LlmRequest::Perception(request) => request.priority,
        }
    }

    /// The interaction id or utterance id.
    #[must_use]
    pub fn id(&self) -> &str {
        match self {
            LlmRequest::Narration(request) => &request.interaction_id,
            LlmRequest::Perception(request) => &request.utterance_id,
        }
    }

    /// The zone it belongs to.
    #[must_use]
    pub fn zone(&self) -> &str {
        match self {
            LlmRequest::Narration(request) => &request.zone,
            LlmRequest::Perception(request) => &request.context.zone,
        }
    }

    /// What its spend is filed under.
    #[must_use]
    pub fn tags(&self) -> &SpendTags {
        match self {
            LlmRequest::Narration(request) => &request.tags,
            LlmRequest::Perception(request) => &request.tags,
        }
    }

    /// Which seam it uses.
    #[must_use]
    pub fn seam(&self) -> Seam {
        match self {
            LlmRequest::Narration(_) => Seam::Narration,
            LlmRequest::Perception(_) => Seam::Perception,
        }
    }
}
