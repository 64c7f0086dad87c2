//! The detector's history: the events its rules read over their windows, oldest first, each
//! with its keys (who it is between, where it happened) hashed once as it arrives.
//!
//! A rule that fires only on fresh evidence first notes the keys of its fresh events, then
//! passes over the window comparing numbers, reading an event's names only when its key is one
//! of those: on a long window of stale events the pass costs a compare each, not string
//! comparisons in maps. Two situations sharing a hash only cost time: the rule still decides
//! on the names it reads.
//!
//! It serialises as the plain list of events (snapshots stay as they were); the keys are
//! rebuilt when it is read back.

use std::collections::VecDeque;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::event::{StoryEvent, StoryEventKind};
use crate::rng::{derive_seed, stable_hash};

/// An event's keys, hashed with [`stable_hash`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EventKeys {
    /// The two NPCs of an interaction or a relationship change, in either order; 0 for other
    /// kinds.
    pub pair: u64,
    /// Its location.
    pub place: u64,
}

impl EventKeys {
    /// `event`'s keys.
    pub fn of(event: &StoryEvent) -> Self {
        let pair = match &event.kind {
            StoryEventKind::Interaction {
                initiator, target, ..
            } => pair_key(initiator, target),
            StoryEventKind::RelationshipChanged { from, to, .. } => pair_key(from, to),
            _ => 0,
        };
        Self {
            pair,
            place: place_key(&event.location),
        }
    }
}

/// The key of the pair `a`, `b` (the same either way round).
pub fn pair_key(a: &str, b: &str) -> u64 {
    let (a, b) = (stable_hash(a), stable_hash(b));
    derive_seed(a.min(b), a.max(b))
}

/// The key of place `location`.
pub fn place_key(location: &str) -> u64 {
    stable_hash(location)
}

/// Events in arrival order with their keys.
#[derive(Clone, Debug, Default)]
pub struct History {
    events: VecDeque<StoryEvent>,
    keys: VecDeque<EventKeys>,
}

impl History {
    /// Appends `events`, hashing their keys.
    pub fn extend(&mut self, events: impl IntoIterator<Item = StoryEvent>) {
        for event in events {
            self.keys.push_back(EventKeys::of(&event));
            self.events.push_back(event);
        }
    }

    /// Drops the oldest events while `drop` says so of the oldest.
    pub fn trim_front(&mut self, mut drop: impl FnMut(&StoryEvent, usize) -> bool) {
        while let Some(oldest) = self.events.front() {
            if !drop(oldest, self.events.len()) {
                break;
            }
            self.events.pop_front();
            self.keys.pop_front();
        }
    }

    /// The events, oldest first.
    pub fn events(&self) -> impl DoubleEndedIterator<Item = &StoryEvent> {
        self.events.iter()
    }

    /// The events with their keys, oldest first.
    pub fn keyed(&self) -> impl Iterator<Item = (EventKeys, &StoryEvent)> {
        self.keys.iter().copied().zip(&self.events)
    }

    /// How many events it holds.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

impl From<VecDeque<StoryEvent>> for History {
    fn from(events: VecDeque<StoryEvent>) -> Self {
        let keys = events.iter().map(EventKeys::of).collect();
        Self { events, keys }
    }
}

impl Serialize for History {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.events.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for History {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        VecDeque::<StoryEvent>::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(location: &str, kind: StoryEventKind) -> StoryEvent {
        StoryEvent {
            at_hours: 1.0,
            location: location.into(),
            players: Vec::new(),
            kind,
        }
    }

    fn moved(npc: &str) -> StoryEventKind {
        StoryEventKind::Moved {
            npc: npc.into(),
            from: "gate".into(),
        }
    }

    #[test]
    fn a_pair_has_one_key_either_way_round_and_places_theirs() {
        assert_eq!(pair_key("ada", "bo"), pair_key("bo", "ada"));
        assert_ne!(pair_key("ada", "bo"), pair_key("ada", "cy"));
        let keys = EventKeys::of(&event("market", moved("ada")));
        assert_eq!((keys.pair, keys.place), (0, place_key("market")));
    }

    #[test]
    fn keys_follow_their_events_through_trimming_and_a_round_trip() -> serde_json::Result<()> {
        let mut history = History::default();
        history.extend(["gate", "market", "well"].map(|l| event(l, moved("ada"))));
        history.trim_front(|e, _| e.location == "gate");
        let places: Vec<u64> = history.keyed().map(|(k, _)| k.place).collect();
        assert_eq!(places, [place_key("market"), place_key("well")]);
        let json = serde_json::to_string(&history)?;
        assert!(
            json.starts_with("[{"),
            "serialised as the plain event list: {json}"
        );
        let back: History = serde_json::from_str(&json)?;
        assert_eq!(
            back.keyed().map(|(k, _)| k).collect::<Vec<_>>(),
            history.keyed().map(|(k, _)| k).collect::<Vec<_>>()
        );
        assert_eq!(back.len(), 2);
        Ok(())
    }
}
