//! Provider and action occupancy kept in step with the actions that start and stop
//! ([`apply_occupancy`]), and the [`ProviderIndex`] a zone tick looks providers up with.
//! It reads [`SimEvent`]s only; it decides nothing.

use super::tick::SimEvent;
use crate::decision::batch_index::BatchIndex;
use crate::decision::tuning::Tuning;
use crate::decision::world::World;
use crate::rng::stable_hash;

/// Keeps provider and action occupancy in step with actions that start and stop: a start
/// takes a slot of the provider and of the action, a completion, preemption or interruption
/// gives it back.
pub fn apply_occupancy(world: &mut World, events: &[SimEvent]) {
    occupy(world, events, |world, id| {
        world.providers.iter().position(|p| p.id == id)
    });
}

/// A world's providers indexed for a zone's ticks. By id: each id's [`stable_hash`] with the
/// provider's position, sorted, so a look-up is a binary search over a flat list of numbers
/// and one comparison of ids instead of a scan (a zone tick looks up every action that starts
/// or stops); finds the first provider of an id, as a scan would. In space, with their actions
/// compiled: the [`BatchIndex`] a tick's batch decision and its preemptions read, built at the
/// first decision. Valid while the world's providers, their places and actions do not change.
#[derive(Clone, Debug, Default)]
pub struct ProviderIndex {
    /// (hash of the id, position in `world.providers`), by hash then position.
    by_hash: Vec<(u64, usize)>,
    /// The providers in space and their actions compiled, once a tick has needed them.
    batch: Option<BatchIndex>,
}

impl ProviderIndex {
    /// The index of `world`'s providers.
    pub fn new(world: &World) -> Self {
        let mut by_hash: Vec<(u64, usize)> = world
            .providers
            .iter()
            .enumerate()
            .map(|(at, provider)| (stable_hash(&provider.id), at))
            .collect();
        by_hash.sort_unstable();
        Self {
            by_hash,
            batch: None,
        }
    }

    /// The providers in space and their actions compiled under `tuning` (built on first use).
    pub(super) fn batch(&mut self, world: &World, tuning: &Tuning) -> &mut BatchIndex {
        self.batch
            .get_or_insert_with(|| BatchIndex::new(world, tuning))
    }

    /// The batch index, if a tick has built it.
    pub(super) fn built_batch(&self) -> Option<&BatchIndex> {
        self.batch.as_ref()
    }

    /// The position in `world.providers` of the first provider with id `id`.
    pub fn find(&self, world: &World, id: &str) -> Option<usize> {
        let hash = stable_hash(id);
        let from = self.by_hash.partition_point(|&(h, _)| h < hash);
        // Ids that share a hash follow one another, by position: the first that matches.
        self.by_hash[from..]
            .iter()
            .take_while(|&&(h, _)| h == hash)
            .map(|&(_, at)| at)
            .find(|&at| world.providers.get(at).is_some_and(|p| p.id == id))
    }
}

/// [`apply_occupancy`] with the provider look-up `find`.
pub(super) fn occupy(
    world: &mut World,
    events: &[SimEvent],
    find: impl Fn(&World, &str) -> Option<usize>,
) {
    let mut change = |provider_id: &str, action_id: &str, up: bool| {
        let Some(provider) = find(world, provider_id).and_then(|p| world.providers.get_mut(p))
        else {
            return;
        };
        let bump = |count: &mut u32| {
            *count = if up {
                count.saturating_add(1)
            } else {
                count.saturating_sub(1)
            }
        };
        bump(&mut provider.occupants);
        if let Some(action) = provider.actions.iter_mut().find(|a| a.id == action_id) {
            bump(&mut action.occupancy);
        }
    };
    for event in events {
        match event {
            SimEvent::ActionStarted {
                provider, action, ..
            } => change(provider, action, true),
            SimEvent::ActionCompleted { provider, action }
            | SimEvent::ActionPreempted {
                provider, action, ..
            }
            | SimEvent::ActionInterrupted {
                provider, action, ..
            }
            | SimEvent::ActionTimedOut {
                provider, action, ..
            } => change(provider, action, false),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::world::{Position, Provider};

    fn world(ids: &[&str]) -> World {
        let providers = ids
            .iter()
            .map(|id| Provider {
                id: (*id).to_owned(),
                position: Position::default(),
                capacity: 1,
                occupants: 0,
                state: None,
                actions: Vec::new(),
            })
            .collect();
        World {
            providers,
            ..World::default()
        }
    }

    #[test]
    fn the_index_finds_what_a_scan_finds() {
        let ids = ["well", "bench", "well", "forge", "", "bench"];
        let world = world(&ids);
        let index = ProviderIndex::new(&world);
        for id in ["well", "bench", "forge", "", "tavern", "wel"] {
            let scanned = world.providers.iter().position(|p| p.id == id);
            assert_eq!(index.find(&world, id), scanned, "{id:?}");
        }
    }
}
