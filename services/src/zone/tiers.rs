//! Processing tiers from player presence over the room graph: Active (a player's
//! room and its neighbours), Nearby (up to `nearby_radius_rooms` steps), Background (the rest).
//!
//! Owns the room graph, the per-room tier (recomputed only when a player moves, so tier work is
//! proportional to players and rooms, never to NPCs) and the per-NPC transition rule: promotion
//! at once (from Background at most `catch_up_per_tick` a tick), demotion only after
//! `demotion_hysteresis_ticks` consecutive ticks out of range. It does not run NPCs.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

geppetto_core::wire_enum! {
    /// A processing tier; higher is more detailed.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Tier {
        /// No player nearby: simplified, every `background_every_ticks`.
        Background = "background",
        /// A few rooms from a player: full detail at a coarser step, every `nearby_every_ticks`.
        Nearby = "nearby",
        /// With or next to a player: full detail every tick.
        Active = "active",
    }
}

/// Tier settings (`[tiers]` in `geppetto.toml`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TierConfig {
    /// Rooms from a player that are Active (1: the room and its neighbours).
    pub active_radius_rooms: u32,
    /// Rooms from a player that are at least Nearby.
    pub nearby_radius_rooms: u32,
    /// Consecutive ticks out of range before a demotion.
    pub demotion_hysteresis_ticks: u32,
    /// Background NPCs promoted (and caught up) per tick at most.
    pub catch_up_per_tick: usize,
    /// A Nearby NPC is updated once every this many ticks.
    pub nearby_every_ticks: u64,
    /// A Background NPC is updated once every this many ticks.
    pub background_every_ticks: u64,
    /// Whether the NPCs of Background rooms (no player near) take part in social life —
    /// observed, meeting, witnessing, named in narration checks; default false: they cost a
    /// tick nothing.
    pub background_social_life: bool,
}

impl Default for TierConfig {
    fn default() -> Self {
        Self {
            active_radius_rooms: 1,
            nearby_radius_rooms: 5,
            demotion_hysteresis_ticks: 3,
            catch_up_per_tick: 5,
            nearby_every_ticks: 10,
            background_every_ticks: 60,
            background_social_life: false,
        }
    }
}

/// Rooms and their neighbours (undirected).
#[derive(Clone, Debug, Default)]
pub struct RoomGraph {
    index: BTreeMap<String, usize>,
    names: Vec<String>,
    neighbours: Vec<Vec<usize>>,
}

impl RoomGraph {
    /// Builds the graph; unknown neighbours are ignored (the world file loader refuses them).
    pub fn new<'a>(rooms: impl IntoIterator<Item = (&'a str, &'a [String])>) -> Self {
        let rooms: Vec<(&str, &[String])> = rooms.into_iter().collect();
        let mut graph = Self::default();
        for (name, _) in &rooms {
            graph.index.insert((*name).to_owned(), graph.names.len());
            graph.names.push((*name).to_owned());
            graph.neighbours.push(Vec::new());
        }
        for (name, neighbours) in &rooms {
            let Some(&from) = graph.index.get(*name) else {
                continue;
            };
            for neighbour in *neighbours {
                if let Some(&to) = graph.index.get(neighbour) {
                    if !graph.neighbours[from].contains(&to) {
                        graph.neighbours[from].push(to);
                    }
                    if !graph.neighbours[to].contains(&from) {
                        graph.neighbours[to].push(from);
                    }
                }
            }
        }
        graph
    }

    /// The index of a room.
    pub fn room(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// Number of rooms.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no rooms.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Rooms within `radius` steps of `start`, with their distance (breadth first).
    fn ball(&self, start: usize, radius: u32) -> Vec<(usize, u32)> {
        let mut seen = vec![false; self.len()];
        let mut out = Vec::new();
        let mut queue = VecDeque::from([(start, 0u32)]);
        if let Some(flag) = seen.get_mut(start) {
            *flag = true;
        }
        while let Some((room, distance)) = queue.pop_front() {
            out.push((room, distance));
            if distance == radius {
                continue;
            }
            for &next in &self.neighbours[room] {
                if !seen[next] {
                    seen[next] = true;
                    queue.push_back((next, distance + 1));
                }
            }
        }
        out
    }
}

/// Where players are and the tier each room has because of them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Presence {
    /// From config, never from a snapshot (see [`Presence::adopt_state`]).
    #[serde(skip)]
    config: TierConfig,
    players: BTreeMap<String, usize>,
    /// Players per room, by id (so "is anyone here?" and "who?" are one index, asked per
    /// NPC every tick).
    by_room: Vec<Vec<String>>,
    room_tiers: Vec<Tier>,
}

impl Presence {
    /// Whether the NPCs in `room` take part in social life: those near a player, or every
    /// one with `background_social_life`.
    pub fn has_social_life(&self, room: usize) -> bool {
        self.config.background_social_life || self.room_tier(room) != Tier::Background
    }

    /// How many rooms it tracks.
    pub fn room_count(&self) -> usize {
        self.room_tiers.len()
    }

    /// Takes `saved`'s players and room tiers, keeping this presence's settings (a snapshot
    /// restored under the current config).
    pub fn adopt_state(&mut self, saved: Presence) {
        let config = std::mem::take(&mut self.config);
        *self = Self { config, ..saved };
    }

    /// No players yet: every room Background.
    pub fn new(config: TierConfig, graph: &RoomGraph) -> Self {
        Self {
            config,
            players: BTreeMap::new(),
            by_room: vec![Vec::new(); graph.len()],
            room_tiers: vec![Tier::Background; graph.len()],
        }
    }

    /// The tier of a room.
    pub fn room_tier(&self, room: usize) -> Tier {
        self.room_tiers
            .get(room)
            .copied()
            .unwrap_or(Tier::Background)
    }

    /// Moves (or adds) a player; returns the rooms whose tier changed.
    pub fn player_entered(&mut self, graph: &RoomGraph, player: &str, room: usize) -> Vec<usize> {
        if let Some(previous) = self.players.insert(player.to_owned(), room) {
            self.count(previous, player, false);
        }
        self.count(room, player, true);
        self.recompute(graph)
    }

    /// The room player `player` is in, if it is in the zone.
    pub fn room_of(&self, player: &str) -> Option<usize> {
        self.players.get(player).copied()
    }

    /// Removes a player; returns the rooms whose tier changed.
    pub fn player_left(&mut self, graph: &RoomGraph, player: &str) -> Vec<usize> {
        let Some(room) = self.players.remove(player) else {
            return Vec::new();
        };
        self.count(room, player, false);
        self.recompute(graph)
    }

    /// The players in `room`, by id in order.
    pub fn players_in(&self, room: usize) -> &[String] {
        self.by_room.get(room).map_or(&[], Vec::as_slice)
    }

    /// The rooms with a player in them, ascending.
    pub fn occupied_rooms(&self) -> impl Iterator<Item = usize> + '_ {
        (self.by_room.iter().enumerate())
            .filter(|(_, players)| !players.is_empty())
            .map(|(room, _)| room)
    }

    /// Whether any player is in `room`.
    pub fn player_in(&self, room: usize) -> bool {
        !self.players_in(room).is_empty()
    }

    fn count(&mut self, room: usize, player: &str, entered: bool) {
        if let Some(list) = self.by_room.get_mut(room) {
            let at = list.partition_point(|p| p.as_str() < player);
            let present = list.get(at).is_some_and(|p| p == player);
            match (entered, present) {
                (true, false) => list.insert(at, player.to_owned()),
                (false, true) => {
                    list.remove(at);
                }
                _ => {}
            }
        }
    }

    fn recompute(&mut self, graph: &RoomGraph) -> Vec<usize> {
        let mut tiers = vec![Tier::Background; graph.len()];
        for &room in self.players.values() {
            for (near, distance) in graph.ball(room, self.config.nearby_radius_rooms) {
                let tier = if distance <= self.config.active_radius_rooms {
                    Tier::Active
                } else {
                    Tier::Nearby
                };
                tiers[near] = tiers[near].max(tier);
            }
        }
        let changed = (0..tiers.len())
            .filter(|&room| tiers[room] != self.room_tiers[room])
            .collect();
        self.room_tiers = tiers;
        changed
    }
}

/// One NPC's tier and its pending demotion count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NpcTier {
    /// The current tier.
    pub tier: Tier,
    /// Consecutive ticks the target has been below `tier`.
    pub below_ticks: u32,
}

impl NpcTier {
    /// Whether it is at `target` with no demotion under way: stepping it changes nothing.
    pub fn is_settled_at(&self, target: Tier) -> bool {
        self.tier == target && self.below_ticks == 0
    }

    /// Starts at `tier`.
    pub fn new(tier: Tier) -> Self {
        Self {
            tier,
            below_ticks: 0,
        }
    }

    /// One tick's step towards `target`: promotes at once when `may_promote`, demotes after the
    /// hysteresis. Returns the new tier when it changed.
    pub fn step(&mut self, target: Tier, may_promote: bool, hysteresis_ticks: u32) -> Option<Tier> {
        if target > self.tier {
            self.below_ticks = 0;
            if may_promote {
                self.tier = target;
                return Some(target);
            }
            return None;
        }
        if target == self.tier {
            self.below_ticks = 0;
            return None;
        }
        self.below_ticks += 1;
        if self.below_ticks >= hysteresis_ticks {
            self.below_ticks = 0;
            self.tier = target;
            return Some(target);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n: usize) -> RoomGraph {
        let names: Vec<String> = (0..n).map(|i| format!("r{i}")).collect();
        let neighbours: Vec<Vec<String>> = (0..n)
            .map(|i| {
                if i + 1 < n {
                    vec![names[i + 1].clone()]
                } else {
                    vec![]
                }
            })
            .collect();
        RoomGraph::new(
            names
                .iter()
                .zip(&neighbours)
                .map(|(name, n)| (name.as_str(), n.as_slice())),
        )
    }

    #[test]
    fn occupancy_follows_players_in_and_out_and_between_rooms() {
        let graph = line(4);
        let mut presence = Presence::new(TierConfig::default(), &graph);
        presence.player_entered(&graph, "ann", 1);
        presence.player_entered(&graph, "bob", 1);
        presence.player_left(&graph, "ann");
        assert!(presence.player_in(1), "bob is still there");
        presence.player_entered(&graph, "bob", 3);
        assert!(!presence.player_in(1), "bob moved on");
        assert!(presence.player_in(3));
        presence.player_left(&graph, "bob");
        presence.player_left(&graph, "bob");
        assert!((0..4).all(|room| !presence.player_in(room)));
        assert!(!presence.player_in(99), "an unknown room holds nobody");
    }

    #[test]
    fn rooms_take_the_highest_tier_any_player_gives() {
        let graph = line(10);
        let mut presence = Presence::new(TierConfig::default(), &graph);
        let changed = presence.player_entered(&graph, "ann", 0);
        assert_eq!(changed, [0, 1, 2, 3, 4, 5]);
        let tiers: Vec<Tier> = (0..10).map(|r| presence.room_tier(r)).collect();
        use Tier::*;
        assert_eq!(
            tiers,
            [
                Active, Active, Nearby, Nearby, Nearby, Nearby, Background, Background, Background,
                Background
            ]
        );
        presence.player_entered(&graph, "bob", 7);
        assert_eq!(presence.room_tier(6), Active);
        assert_eq!(presence.room_tier(5), Nearby);
        let changed = presence.player_left(&graph, "ann");
        assert!(changed.contains(&0) && !changed.contains(&7));
        assert_eq!(presence.room_tier(0), Background);
        assert!(presence.player_left(&graph, "nobody").is_empty());
    }

    #[test]
    fn demotion_waits_for_the_hysteresis_and_promotion_does_not() {
        let mut npc = NpcTier::new(Tier::Background);
        assert_eq!(npc.step(Tier::Active, false, 3), None);
        assert_eq!(npc.step(Tier::Active, true, 3), Some(Tier::Active));
        assert_eq!(npc.step(Tier::Nearby, true, 3), None);
        assert_eq!(npc.step(Tier::Nearby, true, 3), None);
        // Back in range: the count starts again.
        assert_eq!(npc.step(Tier::Active, true, 3), None);
        assert_eq!(npc.step(Tier::Nearby, true, 3), None);
        assert_eq!(npc.step(Tier::Nearby, true, 3), None);
        assert_eq!(npc.step(Tier::Nearby, true, 3), Some(Tier::Nearby));
    }
}
