//! The detector's history: the events its rules read over their windows, oldest first, each
//! with its keys (who it is between, where it happened) hashed once as it arrives.
//!
//! A rule that fires only on fresh evidence first notes the keys of its fresh events, then
//! passes over the window comparing numbers, reading an event's names only when its key is one
//! of those: on a long window of stale events the pass costs a compare each, not string
//! comparisons in maps. Two situations sharing a hash only cost time: the rule still decides
//! on the names it reads.
//!
//! The events of the newest batch (the last [`History::extend`]) are *fresh*: the evidence that
//! arrived since the detection before. Freshness is by arrival, not by game hour, so an event
//! stamped at the hour of the previous detection but buffered after it began is fresh once, and
//! one that a detection has read is never fresh again.
//!
//! It serialises as its events and how many of them are fresh; the keys are rebuilt when it is
//! read back. A plain event list (snapshots from before freshness was by arrival) still reads,
//! with no event fresh.

use std::collections::VecDeque;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::rng::{derive_seed, stable_hash};
use crate::social::chronicle::{StoryEvent, StoryEventKind};

/// Which kind of event it is, without its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventClass {
    /// [`StoryEventKind::Interaction`].
    Interaction,
    /// [`StoryEventKind::RelationshipChanged`].
    RelationshipChanged,
    /// [`StoryEventKind::RumourHeard`].
    RumourHeard,
    /// [`StoryEventKind::Witnessed`].
    Witnessed,
    /// [`StoryEventKind::Goal`].
    Goal,
    /// [`StoryEventKind::MoodChanged`].
    MoodChanged,
    /// [`StoryEventKind::Moved`].
    Moved,
    /// [`StoryEventKind::NeedLow`].
    NeedLow,
}

impl EventClass {
    /// The class of `kind`.
    pub fn of(kind: &StoryEventKind) -> Self {
        match kind {
            StoryEventKind::Interaction { .. } => Self::Interaction,
            StoryEventKind::RelationshipChanged { .. } => Self::RelationshipChanged,
            StoryEventKind::RumourHeard { .. } => Self::RumourHeard,
            StoryEventKind::Witnessed { .. } => Self::Witnessed,
            StoryEventKind::Goal { .. } => Self::Goal,
            StoryEventKind::MoodChanged { .. } => Self::MoodChanged,
            StoryEventKind::Moved { .. } => Self::Moved,
            StoryEventKind::NeedLow { .. } => Self::NeedLow,
        }
    }
}

/// What a rule asks of an event before reading it: when, what kind, between whom, where (the
/// names hashed with [`stable_hash`]). Kept beside the events, so a pass that skips most of
/// them touches only these few bytes each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EventKeys {
    /// Its game hour.
    pub at_hours: f64,
    /// Its kind.
    pub class: EventClass,
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
            at_hours: event.at_hours,
            class: EventClass::of(&event.kind),
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
    /// How many of the newest events came in the last batch.
    fresh: usize,
}

impl History {
    /// Appends a batch of `events`, hashing their keys: they are the fresh ones until the next
    /// batch.
    pub fn extend(&mut self, events: impl IntoIterator<Item = StoryEvent>) {
        let before = self.events.len();
        for event in events {
            self.keys.push_back(EventKeys::of(&event));
            self.events.push_back(event);
        }
        self.fresh = self.events.len() - before;
    }

    /// Whether `event` — a reference into this history, as the rules hold — came in the newest
    /// batch. An event held elsewhere is never fresh.
    pub fn is_fresh(&self, event: &StoryEvent) -> bool {
        let (front, back) = self.events.as_slices();
        // The newest `fresh` events: the tail of `back`, and of `front` when `back` is shorter.
        let in_back = self.fresh.min(back.len());
        let in_front = (self.fresh - in_back).min(front.len());
        let held_in =
            |events: &[StoryEvent]| events.as_ptr_range().contains(&std::ptr::from_ref(event));
        held_in(&back[back.len() - in_back..]) || held_in(&front[front.len() - in_front..])
    }

    /// Makes room for `incoming` more events in a history its owner trims to at most `bound`
    /// after each batch: the lists grow by doubling as usual, but never past the bound and the
    /// batch (a doubling past them would hold room for thousands of events never kept: at the
    /// default bound, 32,768 slots for 21,000 events).
    pub fn reserve_within(&mut self, incoming: usize, bound: usize) {
        let (len, room) = (self.events.len(), self.events.capacity());
        let needed = len + incoming;
        if needed <= room {
            return;
        }
        let target = (2 * room).min(bound.saturating_add(incoming)).max(needed);
        self.events.reserve_exact(target - len);
        self.keys.reserve_exact(target - self.keys.len());
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
        self.fresh = self.fresh.min(self.events.len());
    }

    /// The events, oldest first.
    pub fn events(&self) -> impl DoubleEndedIterator<Item = &StoryEvent> {
        self.events.iter()
    }

    /// The events with their keys, oldest first.
    pub fn keyed(&self) -> impl Iterator<Item = (EventKeys, &StoryEvent)> {
        self.keyed_from(0)
    }

    /// The events from the `from`-th on (0 is the oldest) with their keys, oldest first.
    pub fn keyed_from(&self, from: usize) -> impl Iterator<Item = (EventKeys, &StoryEvent)> {
        let from = from.min(self.events.len());
        self.keys
            .range(from..)
            .copied()
            .zip(self.events.range(from..))
    }

    /// Where the newest batch begins: [`History::keyed_from`] that index gives the fresh events
    /// alone, so a rule that needs fresh evidence reads what is new rather than the whole
    /// history.
    pub fn fresh_start(&self) -> usize {
        self.events.len() - self.fresh
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
    /// A history of `events` with none of them fresh.
    fn from(events: VecDeque<StoryEvent>) -> Self {
        let keys = events.iter().map(EventKeys::of).collect();
        Self {
            events,
            keys,
            fresh: 0,
        }
    }
}

/// How a history is written: its events and how many of the newest are fresh.
#[derive(Serialize)]
struct Written<'h> {
    events: &'h VecDeque<StoryEvent>,
    fresh: usize,
}

/// What a history is read from: the written form, or the plain event list of older snapshots.
#[derive(Deserialize)]
#[serde(untagged)]
enum Read {
    Written {
        events: VecDeque<StoryEvent>,
        fresh: usize,
    },
    Plain(VecDeque<StoryEvent>),
}

impl Serialize for History {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Written {
            events: &self.events,
            fresh: self.fresh,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for History {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Read::deserialize(deserializer)? {
            Read::Written { events, fresh } => Self {
                fresh: fresh.min(events.len()),
                ..Self::from(events)
            },
            Read::Plain(events) => Self::from(events),
        })
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
    fn keys_and_freshness_follow_their_events_through_trimming_and_a_round_trip()
    -> serde_json::Result<()> {
        let mut history = History::default();
        history.extend(["gate", "market"].map(|l| event(l, moved("ada"))));
        history.extend(["well"].map(|l| event(l, moved("bo"))));
        history.trim_front(|e, _| e.location == "gate");
        let places: Vec<u64> = history.keyed().map(|(k, _)| k.place).collect();
        assert_eq!(places, [place_key("market"), place_key("well")]);
        let fresh = |h: &History| h.events().map(|e| h.is_fresh(e)).collect::<Vec<_>>();
        assert_eq!(fresh(&history), [false, true]);
        let json = serde_json::to_string(&history)?;
        let back: History = serde_json::from_str(&json)?;
        assert_eq!(
            back.keyed().map(|(k, _)| k).collect::<Vec<_>>(),
            history.keyed().map(|(k, _)| k).collect::<Vec<_>>()
        );
        assert_eq!(fresh(&back), [false, true]);
        Ok(())
    }

    #[test]
    fn a_bounded_history_grows_no_further_than_its_bound_and_a_batch() {
        let (bound, batch) = (50, 7);
        let mut history = History::default();
        for round in 0..40 {
            history.reserve_within(batch, bound);
            history.extend((0..batch).map(|i| event(&format!("{round}.{i}"), moved("ada"))));
            history.trim_front(|_, len| len > bound);
            assert!(history.events.capacity() <= bound + batch, "round {round}");
            assert!(history.keys.capacity() <= bound + batch, "round {round}");
        }
        assert_eq!(history.len(), bound);
    }

    #[test]
    fn only_the_newest_batch_is_fresh_wherever_the_ring_wraps() {
        let mut history = History::default();
        let mut wrapped = 0;
        for batch in 0..40 {
            let size = batch % 4;
            history.extend((0..size).map(|i| event(&format!("{batch}.{i}"), moved("ada"))));
            // Trimming from the front makes the ring wrap around its storage.
            history.trim_front(|_, len| len > 5);
            wrapped += usize::from(!history.events.as_slices().1.is_empty());
            let newest = size.min(history.len());
            let flags: Vec<bool> = history.events().map(|e| history.is_fresh(e)).collect();
            let expected: Vec<bool> = (0..history.len())
                .map(|i| i >= history.len() - newest)
                .collect();
            assert_eq!(flags, expected, "after batch {batch}");
        }
        assert!(wrapped > 0, "the ring wrapped at least once");
        let elsewhere = event("0.0", moved("ada"));
        assert!(
            !history.is_fresh(&elsewhere),
            "a copy held elsewhere is not fresh"
        );
    }

    #[test]
    fn a_plain_event_list_from_an_older_snapshot_reads_with_none_fresh() -> serde_json::Result<()> {
        let events = vec![event("gate", moved("ada")), event("well", moved("bo"))];
        let back: History = serde_json::from_str(&serde_json::to_string(&events)?)?;
        assert_eq!(back.len(), 2);
        assert!(back.events().all(|e| !back.is_fresh(e)));
        Ok(())
    }
}
