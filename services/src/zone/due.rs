//! Who is due at a tick and in which order: the Active NPCs, then this tick's Nearby and
//! Background ones as the cadence gives them (never a pass over every resident), those with a
//! player first in each tier, isolation's held NPCs left out, the governor's slowed ones on
//! the Nearby cadence; and the read-ahead of a few due NPCs' records at a time, which the due
//! list and the preparing of it both use.

use std::cmp::Reverse;

use geppetto_core::life::simulator::SimulatedAgent;

use super::cadence::Cadence;
use super::status::{Roster, WithPlayer};
use super::{NpcMeta, Zone};
use crate::zone::tiers::Tier;

impl Zone {
    /// The NPCs due at `tick`, in priority order: by tier (Active first), those in a room with
    /// a player first, then by index. Only the due NPCs are looked at (see `cadence`); an
    /// Active NPC the governor has demoted keeps the Nearby cadence; one isolation holds is not
    /// due. Each tier's NPCs come from the cadence in ascending index, so the order is built as
    /// they come (see [`DueOrder`]), not sorted.
    pub(super) fn due_npcs(&mut self, tick: u64) -> Vec<Due> {
        let (nearby_every, background_every) = (
            self.config.tiers.nearby_every_ticks,
            self.config.tiers.background_every_ticks,
        );
        let cadence = (self.derived.cadence)
            .get_or_insert_with(|| Cadence::of(&self.meta, nearby_every, background_every));
        let (agents, meta, presence, isolation) =
            (&self.agents, &self.meta, &self.presence, &self.isolation);
        let (rooms, roster) = (self.room_names.len(), &mut self.derived.roster);
        let with_player = self.derived.with_player.get_or_insert_with(|| {
            let roster = roster.get_or_insert_with(|| Roster::of(meta, presence, rooms));
            WithPlayer::of(presence, roster, meta.len())
        });
        // Isolation and the governor hold no one in a healthy zone: then their look-ups by id
        // are skipped.
        let (holds_any, demotes_any) = (isolation.holds_any(), self.governor.demotes_any());
        let held = |index: usize| {
            holds_any
                && isolation.is_held(&agents[index].agent.id, meta[index].archetype.as_deref())
        };
        // Most due NPCs are the Active ones: the list is sized for them once.
        let mut order = DueOrder::with_capacity(cadence.active().len());
        let mut slowed = Vec::new();
        for &index in cadence.active() {
            if demotes_any && self.governor.is_demoted(&agents[index].agent.id) {
                if cadence.nearby_due(tick, meta[index].id_hash) {
                    slowed.push(index);
                }
            } else if !held(index) {
                order.push(Tier::Active, index, with_player.holds(index));
            }
        }
        order.end_tier();
        // The slower tiers' records are read ahead a few NPCs at a time (see `warm`): each
        // chunk as the loop reaches it. Active NPCs slowed to the Nearby cadence join the
        // Nearby ones in index order.
        let mut nearby = cadence.nearby_due_at(tick);
        if !slowed.is_empty() {
            slowed.extend_from_slice(nearby);
            slowed.sort_unstable();
            nearby = &slowed;
        }
        for (tier, indices) in [
            (Tier::Nearby, nearby),
            (Tier::Background, cadence.background_due_at(tick)),
        ] {
            for chunk in indices.chunks(WARM_AHEAD) {
                warm(agents, meta, chunk.iter().copied());
                for &index in chunk {
                    if !held(index) {
                        order.push(tier, index, with_player.holds(index));
                    }
                }
            }
            order.end_tier();
        }
        order.due
    }
}

/// A due NPC: its tier (highest first), whether no player is in its room, its index.
pub(super) type Due = (Reverse<Tier>, bool, usize);

/// The due list built in its order as the NPCs of each tier come, in ascending index: those
/// in a room with a player go straight on, the others wait until the tier ends — the order of
/// a sort by [`Due`], without sorting the tick's thousands of NPCs.
struct DueOrder {
    due: Vec<Due>,
    without_player: Vec<Due>,
}

impl DueOrder {
    fn with_capacity(capacity: usize) -> Self {
        Self {
            due: Vec::with_capacity(capacity),
            without_player: Vec::new(),
        }
    }

    /// NPC `index` of `tier` is due; indices of a tier must come in ascending order.
    fn push(&mut self, tier: Tier, index: usize, with_player: bool) {
        let list = if with_player {
            &mut self.due
        } else {
            &mut self.without_player
        };
        debug_assert!(
            list.last()
                .is_none_or(|last| last.0 != Reverse(tier) || last.2 < index)
        );
        list.push((Reverse(tier), !with_player, index));
    }

    /// The tier's NPCs are all pushed: those without a player follow those with one.
    fn end_tier(&mut self) {
        self.due.append(&mut self.without_player);
    }
}

/// Due NPCs whose records are read ahead at once (see [`warm`]): enough for their misses to
/// overlap, few enough that their records stay in cache until they are prepared.
pub(super) const WARM_AHEAD: usize = 64;

/// Reads a word from each cache line of NPC `indices`' records that their update reads — the
/// simulated agent, its needs, its layers, its running action, its zone record — and nothing
/// depends on the words read. A live zone idles between ticks and its records leave the caches
/// meanwhile, so every due NPC's are read from memory: read inside each update, every miss
/// waits alone (half of a 100,000-resident tick's own time, under `perf`); read here back to
/// back, the misses of a few NPCs overlap. Changes nothing.
pub(super) fn warm(
    agents: &[SimulatedAgent],
    meta: &[NpcMeta],
    indices: impl Iterator<Item = usize> + Clone,
) {
    let mut seen = 0usize;
    for index in indices.clone() {
        if let (Some(simulated), Some(meta)) = (agents.get(index), meta.get(index)) {
            let agent = &simulated.agent;
            seen ^= usize::from(simulated.running.is_some())
                ^ agent.id.len()
                ^ agent.considerations.len()
                ^ agent.commitments.len()
                ^ agent.running_out.len()
                ^ usize::from(agent.schedule.is_some())
                ^ usize::from(agent.just_completed.is_some())
                ^ agent.position.x.to_bits() as usize
                ^ simulated.queue.len()
                ^ simulated.aggregated_events.len()
                ^ usize::from(simulated.layers.carries_any())
                ^ simulated.level as usize
                ^ usize::from(meta.game.goals_announced)
                ^ meta.name.len()
                ^ usize::from(meta.current_intent.is_some())
                ^ meta.room
                ^ meta.id_hash as usize;
        }
    }
    // The heap parts, one kind a pass: a pass's loop is short, so the processor has the loads
    // of many NPCs under way at once (a loop doing all of an NPC's reads holds a few NPCs').
    for index in indices.clone() {
        if let Some(running) = agents.get(index).and_then(|s| s.running.as_deref()) {
            seen ^= running.elapsed_hours.to_bits() as usize
                ^ running.action.duration_hours.to_bits() as usize
                ^ usize::from(running.carried_by_game.is_some())
                ^ running.action.deltas.len();
        }
    }
    for index in indices.clone() {
        if let Some(simulated) = agents.get(index) {
            for need in &simulated.agent.considerations {
                seen ^= need.value.to_bits() as usize;
            }
        }
    }
    for index in indices {
        if let Some(simulated) = agents.get(index)
            && simulated.layers.carries_any()
        {
            let layers = &*simulated.layers;
            seen ^= usize::from(layers.wellbeing.is_some())
                ^ usize::from(layers.barks.is_some())
                ^ usize::from(layers.affect.is_some());
        }
    }
    std::hint::black_box(seen);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::profiles::ProfileLibrary;
    use crate::content::sets::SetLibrary;
    use crate::zone::ZoneOutput;
    use crate::zone::testing::live;

    #[test]
    fn the_due_list_is_every_due_npc_in_the_order_a_sort_by_priority_gives() {
        // The load generator's zone: 2,000 NPCs in 100 rooms, a player in 3 of them.
        let (profiles, sets) = (ProfileLibrary::embedded(), SetLibrary::embedded());
        let (profiles, sets) = (profiles.expect("profiles"), sets.expect("sets"));
        let built = crate::drive::load::build_zone("load", (2_000, Some(3)), &profiles, &sets);
        let mut zone = built.expect("load zone").zone;
        let time = crate::bus::envelope::WorldMessage {
            header: crate::bus::envelope::header("t-1", "load", 1),
            event: crate::bus::envelope::WorldEvent::TimeAdvanced,
        };
        zone.apply(&time, &live(), &mut ZoneOutput::default());
        let by_tier = |zone: &Zone, tier: Tier| {
            (0..zone.meta.len())
                .filter(|&i| zone.meta[i].tier.tier == tier)
                .collect::<Vec<_>>()
        };
        let (active, nearby) = (by_tier(&zone, Tier::Active), by_tier(&zone, Tier::Nearby));
        assert!(
            active.len() >= 4 && !nearby.is_empty() && !by_tier(&zone, Tier::Background).is_empty()
        );
        // The governor slows two Active NPCs; isolation holds one Active and one Nearby.
        let id = |zone: &Zone, index: usize| zone.agents[index].agent.id.clone();
        let slowed = [id(&zone, active[0]), id(&zone, active[2])];
        zone.governor.demote(&slowed);
        for index in [active[1], nearby[0]] {
            let (npc, archetype) = (id(&zone, index), zone.meta[index].archetype.clone());
            for _ in 0..zone.config.isolation.max_consecutive_failures {
                zone.isolation.failed(&npc, archetype.as_deref(), "test");
            }
        }
        let (nearby_every, background_every) = (
            zone.config.tiers.nearby_every_ticks,
            zone.config.tiers.background_every_ticks,
        );
        for tick in 1..=2 * background_every {
            let mut expected: Vec<Due> = Vec::new();
            for (index, meta) in zone.meta.iter().enumerate() {
                let npc = id(&zone, index);
                let due_every = |every: u64| (tick + meta.id_hash % every).is_multiple_of(every);
                let tier = match meta.tier.tier {
                    Tier::Active if !zone.governor.is_demoted(&npc) => Tier::Active,
                    Tier::Active | Tier::Nearby if due_every(nearby_every) => Tier::Nearby,
                    Tier::Background if due_every(background_every) => Tier::Background,
                    _ => continue,
                };
                if !zone.isolation.is_held(&npc, meta.archetype.as_deref()) {
                    expected.push((Reverse(tier), !zone.presence.player_in(meta.room), index));
                }
            }
            expected.sort_unstable();
            assert_eq!(zone.due_npcs(tick), expected, "tick {tick}");
        }
    }
}
