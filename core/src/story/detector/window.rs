//! How a rule reads the history: the events of some classes within a window of hours, all of
//! them or the fresh batch alone ([`Reading`]), chosen by their keys so unread events are never
//! touched.

use super::detecting::StoryDetector;
use crate::social::chronicle::StoryEvent;
use crate::story::history::{EventClass, EventKeys};

/// What of the history a rule reads.
#[derive(Clone, Copy)]
pub(super) enum Reading {
    /// Every event.
    All,
    /// The newest batch alone: the fresh evidence.
    Fresh,
}

impl StoryDetector {
    /// The events of `classes` within `hours` of `now_hours` in `reading`, with their keys,
    /// oldest first; chosen by their keys alone, so the events a rule does not read are never
    /// touched.
    pub(super) fn keyed_within(
        &self,
        reading: Reading,
        now_hours: f64,
        hours: f64,
        classes: &'static [EventClass],
    ) -> impl Iterator<Item = (EventKeys, &StoryEvent)> {
        let from = match reading {
            Reading::All => 0,
            Reading::Fresh => self.history.fresh_start(),
        };
        let after_hours = now_hours - hours;
        self.history
            .keyed_from(from)
            .filter(move |(keys, _)| keys.at_hours > after_hours && classes.contains(&keys.class))
    }

    pub(super) fn within(
        &self,
        reading: Reading,
        now_hours: f64,
        hours: f64,
        classes: &'static [EventClass],
    ) -> impl Iterator<Item = &StoryEvent> {
        self.keyed_within(reading, now_hours, hours, classes)
            .map(|(_, e)| e)
    }

    /// The pattern window's events of `classes` in `reading`. A rule whose every event is a
    /// situation of its own reads the fresh ones alone (a stale one could not fire).
    pub(super) fn pattern(
        &self,
        reading: Reading,
        now_hours: f64,
        classes: &'static [EventClass],
    ) -> impl Iterator<Item = &StoryEvent> {
        self.within(
            reading,
            now_hours,
            self.config.pattern_window_hours,
            classes,
        )
    }
}
