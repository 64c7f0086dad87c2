//! Provider and action occupancy kept in step with the actions that start and stop
//! ([`apply_occupancy`]), and the [`ProviderIndex`] a zone tick looks providers up with (and
//! takes its running actions' shared advertisements from). It reads [`SimEvent`]s only; it
//! decides nothing.

use std::sync::{Arc, OnceLock};

use super::tick::SimEvent;
use crate::decision::batch_index::BatchIndex;
use crate::decision::tuning::Tuning;
use crate::decision::world::{AdvertisedAction, World};
use crate::life::action::RunningAction;
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
/// first decision. The copy of each advertised action its running actions hold
/// ([`RunningAction::copy_of`]), made at the first start of it and shared by every later
/// one: a start takes a reference, not a copy of the action's id, tags and deltas, and the
/// zone's running actions read those from a few shared lines. Valid while the world's
/// providers, their places and actions do not change.
#[derive(Clone, Debug, Default)]
pub struct ProviderIndex {
    /// (hash of the id, position in `world.providers`), by hash then position.
    by_hash: Vec<(u64, usize)>,
    /// The providers in space and their actions compiled, once a tick has needed them.
    batch: Option<BatchIndex>,
    /// The running copies of the actions, once an action has started.
    running: OnceLock<RunningCopies>,
}

/// The running copy of every advertised action, each made at its first start.
#[derive(Clone, Debug)]
struct RunningCopies {
    /// Where each provider's actions begin in `copies`, by position in `world.providers`,
    /// and where the last one's end.
    first: Box<[usize]>,
    /// Provider after provider, action after action.
    copies: Box<[OnceLock<Arc<AdvertisedAction>>]>,
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
            running: OnceLock::new(),
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

    /// The copy of `world`'s action `action` of provider `provider` a running action holds,
    /// shared with every other start of it; `None` for a position `world` lacks, and a copy
    /// of its own for an action the index was not built with.
    pub(super) fn running_copy(
        &self,
        world: &World,
        provider: usize,
        action: usize,
    ) -> Option<Arc<AdvertisedAction>> {
        let advertised = world.providers.get(provider)?.actions.get(action)?;
        let copies = self.running.get_or_init(|| {
            let mut first = Vec::with_capacity(world.providers.len() + 1);
            let mut total = 0;
            for provider in &world.providers {
                first.push(total);
                total += provider.actions.len();
            }
            first.push(total);
            RunningCopies {
                first: first.into_boxed_slice(),
                copies: (0..total).map(|_| OnceLock::new()).collect(),
            }
        });
        let slot = match copies.first.get(provider..provider + 2) {
            Some(&[first, end]) if first + action < end => copies.copies.get(first + action),
            _ => None,
        };
        Some(match slot {
            Some(slot) => Arc::clone(slot.get_or_init(|| RunningAction::copy_of(advertised))),
            None => RunningAction::copy_of(advertised),
        })
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

    #[test]
    fn every_start_of_an_action_shares_one_running_copy_without_its_users() {
        let mut world = world(&["well", "forge"]);
        for (provider, names) in world
            .providers
            .iter_mut()
            .zip([["draw", "rest"], ["smith", "sell"]])
        {
            provider.actions = names.into_iter().map(AdvertisedAction::new).collect();
        }
        world.providers[0].actions[0].occupancy = 3;
        world.providers[0].actions[0].duration_hours = 2.0;
        let index = ProviderIndex::new(&world);
        let first = index.running_copy(&world, 0, 0).expect("a copy");
        let again = index.running_copy(&world, 0, 0).expect("a copy");
        assert!(Arc::ptr_eq(&first, &again), "one copy for every start");
        assert_eq!(
            *first,
            *RunningAction::copy_of(&world.providers[0].actions[0])
        );
        assert_eq!(
            (first.id.as_str(), first.occupancy, first.duration_hours),
            ("draw", 0, 2.0)
        );
        let smith = index.running_copy(&world, 1, 0).expect("a copy");
        assert_eq!(smith.id, "smith");
        assert!(
            index.running_copy(&world, 2, 0).is_none(),
            "no such provider"
        );
        assert!(index.running_copy(&world, 0, 2).is_none(), "no such action");
        // An action the index was not built with is copied, never another's taken.
        world.providers[0]
            .actions
            .push(AdvertisedAction::new("wash"));
        let wash = index.running_copy(&world, 0, 2).expect("a fresh copy");
        assert_eq!(wash.id, "wash");
    }
}
