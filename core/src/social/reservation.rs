//! Reservations and social cooldowns: an NPC that sets out to talk to another
//! reserves it until the interaction is due to end, so a second NPC does not chase the same
//! partner; after an interaction both wait out a cooldown before the next one. Every query
//! ignores what has expired; the social step sweeps expired entries away once a step.
//!
//! Times are game hours passed in by the caller; nothing here reads a clock.

use std::collections::BTreeMap;

/// Who is engaged with whom, until when, and who is cooling down.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Reservations {
    /// NPC → (partner, game hour the reservation expires).
    engaged: BTreeMap<String, (String, f64)>,
    /// NPC → game hour its cooldown ends.
    cooldown_until: BTreeMap<String, f64>,
}

impl Reservations {
    /// The partner `npc` is engaged with at `now_hours`, if any.
    pub fn partner(&self, npc: &str, now_hours: f64) -> Option<&str> {
        self.engaged
            .get(npc)
            .filter(|(_, expires)| *expires > now_hours)
            .map(|(partner, _)| partner.as_str())
    }

    /// Whether `npc` is neither engaged nor cooling down at `now_hours`.
    pub fn is_available(&self, npc: &str, now_hours: f64) -> bool {
        self.partner(npc, now_hours).is_none() && !self.on_cooldown(npc, now_hours)
    }

    /// Reserves `target` for `initiator` (and the initiator with it) until
    /// `now_hours + duration_hours`. Refused — `false` — when either is already engaged with
    /// someone else; re-reserving the same pair extends it.
    pub fn reserve(
        &mut self,
        initiator: &str,
        target: &str,
        now_hours: f64,
        duration_hours: f64,
    ) -> bool {
        let taken = |npc: &str, other: &str| {
            self.partner(npc, now_hours)
                .is_some_and(|partner| partner != other)
        };
        if initiator == target || taken(initiator, target) || taken(target, initiator) {
            return false;
        }
        let expires = now_hours + duration_hours.max(0.0);
        self.engaged
            .insert(initiator.to_owned(), (target.to_owned(), expires));
        self.engaged
            .insert(target.to_owned(), (initiator.to_owned(), expires));
        true
    }

    /// Ends `npc`'s reservation and its partner's.
    pub fn release(&mut self, npc: &str) {
        if let Some((partner, _)) = self.engaged.remove(npc)
            && self
                .engaged
                .get(&partner)
                .is_some_and(|(back, _)| back == npc)
        {
            self.engaged.remove(&partner);
        }
    }

    /// Starts `npc`'s cooldown, ending at `until_hours`.
    pub fn cool_down(&mut self, npc: &str, until_hours: f64) {
        self.cooldown_until.insert(npc.to_owned(), until_hours);
    }

    /// Whether `npc` is cooling down at `now_hours`.
    pub fn on_cooldown(&self, npc: &str, now_hours: f64) -> bool {
        self.cooldown_until
            .get(npc)
            .is_some_and(|until| *until > now_hours)
    }

    /// Forgets expired reservations and cooldowns.
    pub fn sweep(&mut self, now_hours: f64) {
        self.engaged.retain(|_, (_, expires)| *expires > now_hours);
        self.cooldown_until.retain(|_, until| *until > now_hours);
    }

    /// How many NPCs are engaged (expired entries included until swept).
    pub fn engaged_count(&self) -> usize {
        self.engaged.len()
    }
}
