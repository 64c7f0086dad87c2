//! Provider and action occupancy kept in step with the actions that start and stop
//! ([`apply_occupancy`]), and the by-id [`ProviderIndex`] a zone tick looks providers up with.
//! It reads [`SimEvent`]s only; it decides nothing.

use super::tick::SimEvent;
use crate::decision::world::World;

/// Keeps provider and action occupancy in step with actions that start and stop: a start
/// takes a slot of the provider and of the action, a completion, preemption or interruption
/// gives it back.
pub fn apply_occupancy(world: &mut World, events: &[SimEvent]) {
    occupy(world, events, |world, id| {
        world.providers.iter().position(|p| p.id == id)
    });
}

/// A world's providers by id: indices sorted by id, so a look-up is a binary search instead of
/// a scan (a zone tick looks up every action that starts or stops). Valid while the world's
/// provider list does not change; finds the first provider of an id, as a scan would.
#[derive(Clone, Debug, Default)]
pub struct ProviderIndex {
    sorted: Vec<usize>,
}

impl ProviderIndex {
    /// The index of `world`'s providers.
    pub fn new(world: &World) -> Self {
        let mut sorted: Vec<usize> = (0..world.providers.len()).collect();
        sorted.sort_by(|&a, &b| world.providers[a].id.cmp(&world.providers[b].id));
        Self { sorted }
    }

    /// The position in `world.providers` of the first provider with id `id`.
    pub fn find(&self, world: &World, id: &str) -> Option<usize> {
        let at = self
            .sorted
            .partition_point(|&p| world.providers.get(p).is_some_and(|p| p.id.as_str() < id));
        self.sorted
            .get(at)
            .copied()
            .filter(|&p| world.providers.get(p).is_some_and(|p| p.id == id))
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
