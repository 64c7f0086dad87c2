//! A consumer's claims on the zone's story signals: `story_signal_taken` (it holds the
//! signal, which no longer lapses) and `story_signal_resolved` (the signal ends, and the
//! `story` stream says how). A claim on a signal that is not live, or that another consumer
//! holds, is refused with the field at fault.

use crate::bus::envelope::{WorldEvent, WorldMessage};
use crate::zone::{Zone, ZoneOutput};

impl Zone {
    /// Applies `story_signal_taken` or `story_signal_resolved`.
    pub(super) fn apply_story(&mut self, message: &WorldMessage, out: &mut ZoneOutput) {
        let claimed = match &message.event {
            WorldEvent::StorySignalTaken { signal, by } => self.social.take_signal(signal, by),
            WorldEvent::StorySignalResolved {
                signal,
                by,
                outcome,
            } => {
                let tick_hours = self.full_tick_hours;
                (self.social)
                    .resolve_signal(signal, (by, outcome), tick_hours)
                    .map(|resolved| self.push_story(&resolved, out))
            }
            _ => return,
        };
        if let Err(refused) = claimed {
            out.refuse(message, "signal", refused.to_string());
        }
    }
}
