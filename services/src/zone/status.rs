//! Views derived from the zone's state — tier counts, rooms with players, where the NPCs are,
//! rooms as social places — kept until what they count changes, and the [`ZoneStatus`] the
//! service loop reads after each batch. The state they derive from is changed elsewhere; the
//! moves that invalidate them go through here.

use std::collections::BTreeSet;
use std::sync::Arc;

use geppetto_core::ProviderIndex;
use geppetto_core::social::{SocialPlace, Whereabouts};

use super::cadence::{Cadence, insert_sorted, remove_sorted};
use super::living::Restorers;
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
    /// The NPCs in a room with a player, whom the due list puts first (cleared when a player
    /// moves or NPCs join or leave, kept as an NPC moves).
    pub(super) with_player: Option<WithPlayer>,
    /// The NPCs a tick's tier step looks at: those that may not be at their room's tier or
    /// have a demotion under way (an NPC that moved, the NPCs of a room whose tier changed),
    /// or every one after NPCs joined or left.
    pub(super) unsettled: Marked,
    /// The NPCs whose action started since the last social step (every start goes through
    /// `Zone::emit`), or every one after NPCs joined or left: the hostile acts the step looks
    /// for are among them.
    pub(super) started: Marked,
    /// The world's providers by id, in space and compiled (the zone's provider list never
    /// changes once built).
    pub(super) providers: Option<ProviderIndex>,
    /// What the world's actions restore, for the needs of NPCs that join (cleared when the
    /// actions' preconditions change).
    pub(super) restorers: Option<Restorers>,
}

/// Some of the zone's NPCs that a later step must look at, by index — or every one, when the
/// zone cannot tell which (just built or restored, or NPCs joined or left: indices moved).
/// What marks them is each use's: [`Derived::unsettled`], [`Derived::started`].
#[derive(Clone, Debug, Default)]
pub(super) enum Marked {
    /// Every NPC.
    #[default]
    Everyone,
    /// These, by index.
    These(BTreeSet<usize>),
}

impl Marked {
    /// NPC `index` is to be looked at.
    pub(super) fn mark(&mut self, index: usize) {
        if let Self::These(set) = self {
            set.insert(index);
        }
    }

    /// The NPCs marked, ascending (`None`: every one); none is marked afterwards.
    pub(super) fn take(&mut self) -> Option<BTreeSet<usize>> {
        match std::mem::replace(self, Self::These(BTreeSet::new())) {
            Self::Everyone => None,
            Self::These(set) => Some(set),
        }
    }
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
    /// The NPCs that take part in social life, by ascending index.
    pub(super) social_present: Vec<usize>,
    /// The names of the NPCs near players, in NPC order: what a narration is checked against
    /// (shared by every request until someone moves).
    pub(super) known_names: Arc<[String]>,
}

impl Roster {
    /// NPC `index` went from room `from` to room `to`. Returns whether that changed who takes
    /// part in social life.
    fn moved(&mut self, index: usize, (from, to): (usize, usize), presence: &Presence) -> bool {
        if let Some(list) = self.by_room.get_mut(from) {
            remove_sorted(list, index);
        };
        if let Some(list) = self.by_room.get_mut(to) {
            insert_sorted(list, index);
        };
        self.resocialise(index, to, presence)
    }

    /// NPC `index`, in `room`, takes part in social life there when the room has it now.
    /// Returns whether that changed who takes part at all.
    fn resocialise(&mut self, index: usize, room: usize, presence: &Presence) -> bool {
        let social = if presence.has_social_life(room) {
            room
        } else {
            usize::MAX
        };
        let Some(was) = self.social_at.get_mut(index) else {
            return false;
        };
        let was = std::mem::replace(was, social);
        if was == social {
            return false;
        }
        if let Some(list) = self.social_by_room.get_mut(was) {
            remove_sorted(list, index);
        };
        if let Some(list) = self.social_by_room.get_mut(social) {
            insert_sorted(list, index);
        };
        let membership = (was == usize::MAX) != (social == usize::MAX);
        if social == usize::MAX {
            remove_sorted(&mut self.social_present, index);
        } else if was == usize::MAX {
            insert_sorted(&mut self.social_present, index);
        }
        membership
    }

    /// The names of the NPCs near players, in NPC order.
    fn rename(&mut self, meta: &[NpcMeta]) {
        self.known_names = (self.social_present.iter())
            .filter_map(|&index| meta.get(index).map(|m| m.name.to_string()))
            .collect();
    }

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
            .map(|(_, meta)| meta.name.to_string())
            .collect();
        Self {
            by_room: Whereabouts::group(rooms, &at),
            social_by_room: Whereabouts::group(rooms, &social_at),
            social_present: Whereabouts::present_in(rooms, &social_at),
            social_at,
            known_names,
        }
    }
}

/// The NPCs in a room with a player, a bit each by index: found from the players' rooms, so
/// the due list reads no NPC's record to order its tiers (an Active NPC's room, read there, was
/// a cache miss each in a live zone, before the read-ahead reaches its records).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct WithPlayer(Vec<u64>);

impl WithPlayer {
    /// The NPCs `roster` places in the rooms of `presence`'s players, of `npcs`.
    pub(super) fn of(presence: &Presence, roster: &Roster, npcs: usize) -> Self {
        let mut with_player = Self(vec![0; npcs.div_ceil(64)]);
        for room in presence.occupied_rooms() {
            for &index in roster.by_room.get(room).map_or(&[][..], Vec::as_slice) {
                with_player.set(index, true);
            }
        }
        with_player
    }

    /// Whether NPC `index` is in a room with a player.
    pub(super) fn holds(&self, index: usize) -> bool {
        self.0
            .get(index / 64)
            .is_some_and(|word| word & (1 << (index % 64)) != 0)
    }

    /// NPC `index` is (or is not) in a room with a player.
    fn set(&mut self, index: usize, with_player: bool) {
        if let Some(word) = self.0.get_mut(index / 64) {
            if with_player {
                *word |= 1 << (index % 64);
            } else {
                *word &= !(1 << (index % 64));
            }
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
    /// NPC `index` is now in `room`: the roster follows, and its tier is stepped next tick.
    pub(super) fn move_npc(&mut self, index: usize, room: usize) {
        let from = self.meta[index].room;
        if from == room {
            return;
        }
        self.meta[index].room = room;
        if let Some(with_player) = &mut self.derived.with_player {
            with_player.set(index, self.presence.player_in(room));
        }
        if let Some(roster) = &mut self.derived.roster
            && roster.moved(index, (from, room), &self.presence)
        {
            roster.rename(&self.meta);
        }
        self.derived.unsettled.mark(index);
    }

    /// NPC `index` went from tier `from` to `to`: the counts and the cadence follow.
    pub(super) fn tier_changed(&mut self, index: usize, from: Tier, to: Tier) {
        if let Some(counts) = &mut self.derived.tiers {
            for (tier, count) in counts.iter_mut() {
                if *tier == from {
                    *count = count.saturating_sub(1);
                } else if *tier == to {
                    *count += 1;
                }
            }
        }
        if let Some(cadence) = &mut self.derived.cadence {
            cadence.retier(index, self.meta[index].id_hash, from, to);
        }
    }

    /// An NPC joined or left (the indices after it moved): what counts NPCs by tier or place
    /// is stale.
    pub(super) fn roster_changed(&mut self) {
        self.derived.tiers = None;
        self.derived.roster = None;
        self.derived.cadence = None;
        self.derived.with_player = None;
        self.derived.unsettled = Marked::Everyone;
        self.derived.started = Marked::Everyone;
    }

    /// The NPCs in `room`, by index.
    pub(super) fn npcs_in(&mut self, room: usize) -> &[usize] {
        let (meta, presence, rooms) = (&self.meta, &self.presence, self.room_names.len());
        let roster = (self.derived.roster).get_or_insert_with(|| Roster::of(meta, presence, rooms));
        roster.by_room.get(room).map_or(&[], Vec::as_slice)
    }

    /// A player entered or left a room, and the rooms `changed` changed tier: their NPCs are
    /// stepped next tick, and take part in social life as their room now has it.
    pub(super) fn players_moved(&mut self, changed: &[usize]) {
        self.derived.rooms_with_players = None;
        self.derived.places = None;
        self.derived.with_player = None;
        let Some(roster) = &mut self.derived.roster else {
            self.derived.unsettled = Marked::Everyone;
            return;
        };
        let mut renamed = false;
        for &room in changed {
            let here = roster.by_room.get(room).cloned().unwrap_or_default();
            for index in here {
                renamed |= roster.resocialise(index, room, &self.presence);
                self.derived.unsettled.mark(index);
            }
        }
        if renamed {
            roster.rename(&self.meta);
        }
    }

    /// The rooms holding a player now, by id.
    pub fn rooms_with_players(&mut self) -> Arc<BTreeSet<String>> {
        let (presence, names) = (&self.presence, &self.room_names);
        let rooms = self.derived.rooms_with_players.get_or_insert_with(|| {
            Arc::new(
                (presence.occupied_rooms())
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
    use geppetto_core::rng::DetRng;

    /// The status names the rooms with a player, as players come and go.
    #[test]
    fn the_status_names_the_rooms_with_a_player() {
        let mut zone = village();
        let names = |zone: &mut Zone| -> Vec<String> {
            zone.status().rooms_with_players.iter().cloned().collect()
        };
        assert!(names(&mut zone).is_empty());
        enter(&mut zone, "market");
        assert_eq!(names(&mut zone), ["market"]);
        enter(&mut zone, "forge");
        assert_eq!(names(&mut zone), ["forge"]);
        send(
            &mut zone,
            WorldEvent::PlayerLeft {
                player: "ann".into(),
                room: None,
            },
        );
        assert!(names(&mut zone).is_empty());
    }

    /// What a zone keeps up to date as NPCs and players move is what it would build afresh,
    /// and every NPC its tier step leaves out is settled at its room's tier.
    #[test]
    fn what_is_kept_as_npcs_and_players_move_is_what_a_rebuild_finds() {
        let mut zone = village();
        let rooms: Vec<String> = zone.room_names.iter().map(|(id, _)| id.clone()).collect();
        let mut rng = DetRng::new(11);
        let mut pick = |n: usize| (rng.next_u64() % n as u64) as usize;
        for step in 0..300 {
            match step % 6 {
                0 => {
                    let player = ["ann", "bob"][pick(2)];
                    let event = if pick(3) == 0 {
                        WorldEvent::PlayerLeft {
                            player: player.into(),
                            room: None,
                        }
                    } else {
                        WorldEvent::PlayerEntered {
                            player: player.into(),
                            room: rooms[pick(rooms.len())].clone(),
                        }
                    };
                    send(&mut zone, event);
                }
                1 => {
                    advance(&mut zone, 1);
                }
                _ => {
                    let (npc, room) = (pick(zone.meta.len()), pick(rooms.len()));
                    zone.move_npc(npc, room);
                }
            }
            zone.npcs_in(0);
            zone.due_npcs(zone.tick + 1);
            zone.tier_counts();
            let kept = zone.derived.roster.clone().expect("roster");
            let fresh = Roster::of(&zone.meta, &zone.presence, rooms.len());
            assert_eq!(kept.by_room, fresh.by_room, "step {step}");
            assert_eq!(kept.social_at, fresh.social_at, "step {step}");
            assert_eq!(kept.social_by_room, fresh.social_by_room, "step {step}");
            assert_eq!(kept.social_present, fresh.social_present, "step {step}");
            assert_eq!(kept.known_names, fresh.known_names, "step {step}");
            let with_player = zone.derived.with_player.clone().expect("with a player");
            let npcs = zone.meta.len();
            let rebuilt = WithPlayer::of(&zone.presence, &fresh, npcs);
            assert_eq!(with_player, rebuilt, "step {step}");
            let counts = zone.derived.tiers.clone().expect("counts");
            zone.derived.tiers = None;
            assert_eq!(counts, zone.tier_counts(), "step {step}");
            if let Some(cadence) = &zone.derived.cadence {
                let (nearby, background) = (
                    zone.config.tiers.nearby_every_ticks,
                    zone.config.tiers.background_every_ticks,
                );
                assert_eq!(
                    *cadence,
                    Cadence::of(&zone.meta, nearby, background),
                    "step {step}"
                );
            }
            if let Marked::These(unsettled) = &zone.derived.unsettled {
                for (index, meta) in zone.meta.iter().enumerate() {
                    let target = zone.presence.room_tier(meta.room);
                    assert!(
                        unsettled.contains(&index) || meta.tier.is_settled_at(target),
                        "step {step}: NPC {index} is left out unsettled"
                    );
                }
            }
        }
    }

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
