//! Views derived from the zone's state — tier counts, rooms with players, where the NPCs are,
//! rooms as social places — kept until what they count changes, and the [`ZoneStatus`] the
//! service loop reads after each batch. The state they derive from is changed elsewhere; the
//! moves that invalidate them go through here.

use std::collections::BTreeSet;
use std::sync::Arc;

use geppetto_core::ProviderIndex;
use geppetto_core::social::{SocialPlace, Whereabouts};

use super::cadence::Cadence;
use super::{NpcMeta, Zone, room_key};
use crate::zone::tiers::{Presence, Tier};

/// A summary of a zone for the service loop, metrics and the admin API, answered with every
/// applied batch.
#[derive(Clone, Debug, Default)]
pub struct ZoneStatus {
    /// Game time in ticks.
    pub game_time: u64,
    /// Ticks run.
    pub tick: u64,
    /// NPCs per tier.
    pub tiers: Vec<(Tier, usize)>,
    /// Tick durations since the last status, milliseconds.
    pub tick_durations_ms: Vec<f64>,
    /// NPCs held back by isolation.
    pub held: usize,
    /// Rooms holding a player, by id (shared: rebuilt only when a player moves).
    pub rooms_with_players: Arc<BTreeSet<String>>,
}

/// What costs a pass over every NPC or room (for a [`ZoneStatus`] and the social step), kept
/// until what it counts changes: NPCs' tiers, rooms or membership; players' rooms.
#[derive(Clone, Debug, Default)]
pub(super) struct Derived {
    pub(super) tiers: Option<Vec<(Tier, usize)>>,
    pub(super) rooms_with_players: Option<Arc<BTreeSet<String>>>,
    /// Where the NPCs are (cleared when one moves, joins or leaves).
    pub(super) roster: Option<Roster>,
    /// Every room as a place of social life, with its players (cleared when a player moves).
    pub(super) places: Option<Vec<SocialPlace>>,
    /// Who is due at which tick (cleared when a tier or the roster changes).
    pub(super) cadence: Option<Cadence>,
    /// Whether every NPC is at its room's tier with no demotion under way, so a tick's tier
    /// step has nothing to do (cleared when a player or an NPC moves, or one joins).
    pub(super) tiers_settled: bool,
    /// The world's providers by id (the zone's provider list never changes once built).
    pub(super) providers: Option<ProviderIndex>,
}

/// Each NPC's room, and the NPCs of each room by index in ascending order (who witnesses what
/// the game reports there); the same for social life, which only the NPCs of rooms near a
/// player take part in unless `[tiers] background_social_life` (one in a Background room is
/// at no place: not observed, never meeting, never witnessing).
#[derive(Clone, Debug, Default)]
pub(super) struct Roster {
    pub(super) by_room: Vec<Vec<usize>>,
    pub(super) social_at: Vec<usize>,
    pub(super) social_by_room: Vec<Vec<usize>>,
    /// The names of the NPCs near players, in NPC order: what a narration is checked against
    /// (shared by every request until someone moves).
    pub(super) known_names: Arc<[String]>,
}

impl Roster {
    pub(super) fn of(meta: &[NpcMeta], presence: &Presence, rooms: usize) -> Self {
        let at: Vec<usize> = meta.iter().map(|meta| meta.room).collect();
        let social_at: Vec<usize> = at
            .iter()
            .map(|&room| {
                if presence.has_social_life(room) {
                    room
                } else {
                    usize::MAX
                }
            })
            .collect();
        let known_names = social_at
            .iter()
            .zip(meta)
            .filter(|(room, _)| **room != usize::MAX)
            .map(|(_, meta)| meta.name.clone())
            .collect();
        Self {
            by_room: Whereabouts::group(rooms, &at),
            social_by_room: Whereabouts::group(rooms, &social_at),
            social_at,
            known_names,
        }
    }
}

/// Room `room` as a place of social life: its id and the players in it.
pub(super) fn room_place(
    presence: &Presence,
    names: &[(String, String)],
    room: usize,
) -> SocialPlace {
    SocialPlace {
        location: room_key(names, room).to_owned(),
        players: presence.players_in(room).to_vec(),
    }
}

impl Zone {
    /// NPC `index` is now in `room`.
    pub(super) fn move_npc(&mut self, index: usize, room: usize) {
        if self.meta[index].room != room {
            self.meta[index].room = room;
            self.derived.roster = None;
            self.derived.tiers_settled = false;
        }
    }

    /// An NPC joined, left or changed tier: what counts NPCs by tier or place is stale.
    pub(super) fn roster_changed(&mut self) {
        self.derived.tiers = None;
        self.derived.roster = None;
        self.derived.cadence = None;
        self.derived.tiers_settled = false;
    }

    /// The NPCs in `room`, by index.
    pub(super) fn npcs_in(&mut self, room: usize) -> &[usize] {
        let (meta, presence, rooms) = (&self.meta, &self.presence, self.room_names.len());
        let roster = (self.derived.roster).get_or_insert_with(|| Roster::of(meta, presence, rooms));
        roster.by_room.get(room).map_or(&[], Vec::as_slice)
    }

    /// A player entered or left a room.
    pub(super) fn players_moved(&mut self) {
        self.derived.rooms_with_players = None;
        self.derived.places = None;
        self.derived.roster = None;
        self.derived.tiers_settled = false;
    }

    /// The rooms holding a player now, by id.
    pub fn rooms_with_players(&mut self) -> Arc<BTreeSet<String>> {
        let (presence, names) = (&self.presence, &self.room_names);
        let rooms = self.derived.rooms_with_players.get_or_insert_with(|| {
            Arc::new(
                (0..names.len())
                    .filter(|room| presence.player_in(*room))
                    .map(|room| room_key(names, room).to_owned())
                    .collect(),
            )
        });
        Arc::clone(rooms)
    }

    /// The zone's status; drains the tick durations measured since the last one.
    pub fn status(&mut self) -> ZoneStatus {
        ZoneStatus {
            game_time: self.game_time,
            tick: self.tick,
            tiers: self.tier_counts(),
            tick_durations_ms: std::mem::take(&mut self.tick_durations_ms),
            held: if self.isolation.holds_any() {
                self.held_npcs().len()
            } else {
                0
            },
            rooms_with_players: self.rooms_with_players(),
        }
    }

    /// How many NPCs each tier holds (Background, Nearby, Active).
    pub fn tier_counts(&mut self) -> Vec<(Tier, usize)> {
        let meta = &self.meta;
        self.derived
            .tiers
            .get_or_insert_with(|| {
                [Tier::Background, Tier::Nearby, Tier::Active]
                    .into_iter()
                    .map(|tier| (tier, meta.iter().filter(|m| m.tier.tier == tier).count()))
                    .collect()
            })
            .clone()
    }

    /// The ids of NPCs held back by isolation.
    pub fn held_npcs(&self) -> BTreeSet<String> {
        self.agents
            .iter()
            .zip(&self.meta)
            .filter(|(a, m)| self.isolation.is_held(&a.agent.id, m.archetype.as_deref()))
            .map(|(a, _)| a.agent.id.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::envelope::{WorldEvent, WorldMessage, header};
    use crate::zone::ZoneOutput;
    use crate::zone::testing::*;

    #[test]
    fn the_status_follows_players_and_npcs_as_they_come_and_go() {
        let mut zone = village();
        let npcs = zone.agents.len();
        let total = |status: &ZoneStatus| status.tiers.iter().map(|(_, n)| n).sum::<usize>();
        let status = zone.status();
        assert!(status.rooms_with_players.is_empty());
        assert_eq!(total(&status), npcs);
        enter(&mut zone, "market");
        assert_eq!(
            *zone.status().rooms_with_players,
            BTreeSet::from(["market".to_owned()])
        );
        advance(&mut zone, 1);
        let active = |zone: &mut Zone| {
            let status = zone.status();
            status
                .tiers
                .iter()
                .find(|(t, _)| *t == Tier::Active)
                .map(|(_, n)| *n)
        };
        assert!(
            active(&mut zone).is_some_and(|n| n > 0),
            "{:?}",
            zone.status().tiers
        );
        let gone = zone.agents[0].agent.id.clone();
        let mut out = ZoneOutput::default();
        zone.apply(
            &WorldMessage {
                header: header(fresh_id("d"), "village", zone.game_time),
                event: WorldEvent::NpcDespawned { npc: gone },
            },
            &live(),
            &mut out,
        );
        assert_eq!(total(&zone.status()), npcs - 1);
        zone.apply(
            &WorldMessage {
                header: header(fresh_id("l"), "village", zone.game_time),
                event: WorldEvent::PlayerLeft {
                    player: "ann".into(),
                    room: None,
                },
            },
            &live(),
            &mut out,
        );
        assert!(zone.status().rooms_with_players.is_empty());
        // Its tiers fall back after the hysteresis, and the counts follow.
        advance(&mut zone, 10);
        assert_eq!(active(&mut zone), Some(0), "{:?}", zone.status().tiers);
    }
}
