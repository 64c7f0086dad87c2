//! The chronicle of what NPCs' lives produce — interactions, relationship changes, rumours,
//! witnessed acts, goal lifecycle, mood, moves, needs running low — which the story detector
//! reads, and the bounded buffer the events accumulate in between detections. It sits with
//! the social fabric, its main writer (the zone adds its NPCs' goals, moods and moves), below
//! the story layer that reads it.
//!
//! The buffer holds at most `capacity` events (default 1000); past that the oldest is dropped
//! and counted. [`EventBuffer::take`] swaps the buffer for an empty one in one step, so no event
//! appended between "read" and "clear" can be lost (with `&mut` access the swap is also the
//! only way to read it).

use std::collections::VecDeque;

use super::gossip::{GossipIntent, RumourTopic};
use super::interaction::InteractionKind;
use super::relationships::Facet;

/// Something that happened, where, when, and which players saw it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoryEvent {
    /// Game hour.
    pub at_hours: f64,
    /// Room or area id.
    pub location: String,
    /// Players present (they become a signal's involved players).
    pub players: Vec<String>,
    /// What happened.
    pub kind: StoryEventKind,
}

/// The kinds of event the detector reads.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoryEventKind {
    /// Two NPCs interacted (`NPCSocialInteractionEvent`).
    Interaction {
        /// Who started it.
        initiator: String,
        /// With whom.
        target: String,
        /// What kind.
        interaction: InteractionKind,
        /// Whether it succeeded (for an argument: the initiator prevailed).
        success: bool,
        /// A scheme's victim.
        against: Option<String>,
        /// The initiator's faction.
        initiator_faction: Option<String>,
        /// The target's faction.
        target_faction: Option<String>,
        /// The target's loyalty to the initiator before it (betrayal of an ally).
        target_loyalty_before: f64,
        /// A scheme victim's loyalty to the initiator before it.
        victim_loyalty_before: Option<f64>,
        /// The initiator's affinity for the target after it.
        initiator_affinity: f64,
        /// The target's affinity for the initiator after it.
        target_affinity: f64,
        /// The initiator's mood after it (−1…1).
        initiator_mood: f64,
        /// The target's mood after it.
        target_mood: f64,
        /// Whether a player saw it (the narrator may be asked for flavour text).
        witnessed: bool,
    },
    /// One NPC's regard for another changed.
    RelationshipChanged {
        /// Whose regard.
        from: String,
        /// For whom.
        to: String,
        /// Which facet.
        facet: Facet,
        /// The change applied.
        delta: f64,
        /// The value after it.
        value: f64,
        /// What caused it (`argument`, `gossip`, `witnessed:theft`…).
        cause: String,
    },
    /// An NPC heard a rumour.
    RumourHeard {
        /// Who heard it.
        listener: String,
        /// Who told it.
        teller: String,
        /// Its subject.
        subject: String,
        /// What kind.
        gossip: RumourTopic,
        /// Why it was told.
        intent: GossipIntent,
        /// The teller's depth.
        depth: u32,
        /// Its credibility to the listener.
        credibility: f64,
        /// Whether it was believed.
        accepted: bool,
    },
    /// An NPC saw another do something hostile (first-hand knowledge).
    Witnessed {
        /// Who saw it.
        witness: String,
        /// Who did it.
        actor: String,
        /// What (`theft`).
        act: String,
    },
    /// A goal changed (`NPCGoalCreatedEvent` and its siblings).
    Goal {
        /// Whose.
        npc: String,
        /// Its description.
        description: String,
        /// What happened to it.
        change: GoalChange,
    },
    /// An NPC's mood shifted significantly (`NPCMoodChangedEvent`).
    MoodChanged {
        /// Whose.
        npc: String,
        /// Mood before (−1…1).
        previous: f64,
        /// Mood now.
        mood: f64,
        /// Stress now (0…1).
        stress: f64,
    },
    /// An NPC changed location (`location` is where it arrived).
    Moved {
        /// Who.
        npc: String,
        /// Where it came from.
        from: String,
    },
    /// One of an NPC's needs fell below the low line.
    NeedLow {
        /// Whose.
        npc: String,
        /// Which need.
        need: String,
        /// Its level (0–1).
        level: f64,
    },
}

impl StoryEvent {
    /// The NPCs it is about.
    pub fn npcs(&self) -> Vec<&str> {
        match &self.kind {
            StoryEventKind::Interaction {
                initiator,
                target,
                against,
                ..
            } => [Some(initiator), Some(target), against.as_ref()]
                .into_iter()
                .flatten()
                .map(String::as_str)
                .collect(),
            StoryEventKind::RelationshipChanged { from, to, .. } => vec![from, to],
            StoryEventKind::RumourHeard {
                listener,
                teller,
                subject,
                ..
            } => vec![listener, teller, subject],
            StoryEventKind::Witnessed { witness, actor, .. } => vec![witness, actor],
            StoryEventKind::Goal { npc, .. }
            | StoryEventKind::MoodChanged { npc, .. }
            | StoryEventKind::Moved { npc, .. }
            | StoryEventKind::NeedLow { npc, .. } => vec![npc],
        }
    }
}

/// What happened to a goal.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum GoalChange {
    /// It was added.
    Created,
    /// It was met.
    Completed,
    /// Its deadline passed.
    Failed,
    /// No plan reaches it.
    Blocked,
}

/// Events gathered between two detections; bounded, oldest dropped first.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EventBuffer {
    events: VecDeque<StoryEvent>,
    capacity: usize,
    /// Events dropped because the buffer was full, ever.
    pub dropped: u64,
}

impl EventBuffer {
    /// A buffer holding at most `capacity` events (at least one).
    pub fn new(capacity: usize) -> Self {
        Self {
            events: VecDeque::new(),
            capacity: capacity.max(1),
            dropped: 0,
        }
    }

    /// Appends an event, dropping the oldest when full.
    pub fn push(&mut self, event: StoryEvent) {
        if self.events.len() >= self.capacity {
            self.events.pop_front();
            self.dropped += 1;
        }
        self.events.push_back(event);
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether none wait.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Everything gathered, oldest first; the buffer is left empty (one swap).
    pub fn take(&mut self) -> Vec<StoryEvent> {
        Vec::from(std::mem::take(&mut self.events))
    }
}
