//! Where a zone's NPCs are for a step: a [`SocialPlace`] (location and players present) and the
//! [`Whereabouts`] of everyone, grouped by place. It decides nothing.

use crate::social::chronicle::{StoryEvent, StoryEventKind};

/// Where an NPC is this step and which players are there.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SocialPlace {
    /// Room or area id.
    pub location: String,
    /// Players present.
    pub players: Vec<String>,
}

/// The place of an NPC whose place index is out of range: nowhere, seen by nobody.
static NOWHERE: SocialPlace = SocialPlace {
    location: String::new(),
    players: Vec::new(),
};

/// Where a zone's NPCs are for a step: the distinct places, each NPC's place among them
/// (`at`, parallel to the agents), and the same grouped by place (`by_place`, as
/// [`Whereabouts::group`] makes it; a zone keeps it between steps) and those at any place.
/// NPCs at the same place index meet; an index out of range is nowhere.
#[derive(Clone, Copy, Debug)]
pub struct Whereabouts<'a> {
    /// The distinct places (a zone's rooms).
    pub places: &'a [SocialPlace],
    /// Each NPC's index into `places`.
    pub at: &'a [usize],
    /// The NPCs at each place, by ascending index.
    pub by_place: &'a [Vec<usize>],
    /// The NPCs at one of the places, by ascending index (as [`Whereabouts::present_in`]
    /// lists them). One at none (a zone's NPC nobody is near, say) takes no part in a step:
    /// it is not observed, starts nothing and witnesses nothing, and costs the step nothing.
    pub present: &'a [usize],
    /// The NPCs whose running action may have started since the previous step, by ascending
    /// index, when the caller keeps them (a zone does: every start goes through it); the step
    /// looks only at these for hostile acts instead of at every NPC present. Each must hold
    /// every NPC whose action did start since then; `None`: any present NPC may have.
    pub started: Option<&'a [usize]>,
}

impl Whereabouts<'_> {
    /// `at` grouped by place: the NPCs at each of `places` places, by ascending index (an NPC
    /// whose place is out of range is in none).
    pub fn group(places: usize, at: &[usize]) -> Vec<Vec<usize>> {
        let mut by_place = vec![Vec::new(); places];
        for (npc, &place) in at.iter().enumerate() {
            if let Some(here) = by_place.get_mut(place) {
                here.push(npc);
            }
        }
        by_place
    }

    /// The NPCs of `at` at one of `places` places, by ascending index.
    pub fn present_in(places: usize, at: &[usize]) -> Vec<usize> {
        (0..at.len()).filter(|&npc| at[npc] < places).collect()
    }

    /// NPC `npc`'s place.
    pub fn of(&self, npc: usize) -> &SocialPlace {
        self.at
            .get(npc)
            .and_then(|&place| self.places.get(place))
            .unwrap_or(&NOWHERE)
    }

    /// NPC `npc`'s place index (`usize::MAX` when it has none).
    pub(super) fn index(&self, npc: usize) -> usize {
        self.at.get(npc).copied().unwrap_or(usize::MAX)
    }
}

impl SocialPlace {
    /// A story event that happened here at game hour `at_hours` (its players witnessed it).
    pub fn event(&self, at_hours: f64, kind: StoryEventKind) -> StoryEvent {
        StoryEvent {
            at_hours,
            location: self.location.clone(),
            players: self.players.clone(),
            kind,
        }
    }
}
