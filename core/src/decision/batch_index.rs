//! A world's providers indexed for batch decisions and kept between them: the spatial grid of
//! every provider and their actions compiled (see [`crate::decision::compiled`]). Both depend
//! only on the providers' places, radii and actions, which a zone's tick never changes, so a
//! zone builds them once and a tick's batch costs what its deciding agents cost, however many
//! providers the zone holds. What does change is read where it is used: a provider's free
//! slots from the world while scoring, the world's contexts by
//! [`crate::decision::compiled::CompiledActions::reprice`] before each batch.

use crate::decision::compiled::CompiledActions;
use crate::decision::spatial::ProviderGrid;
use crate::decision::tuning::Tuning;
use crate::decision::world::World;

/// The grid of every provider and the compiled actions of a world (see the module comment).
/// Valid while the world's providers, their places and their actions stay as they are.
#[derive(Clone, Debug)]
pub struct BatchIndex {
    /// Every provider with actions, full or not.
    pub(crate) grid: ProviderGrid,
    /// The actions as flat records.
    pub(crate) compiled: CompiledActions,
}

impl BatchIndex {
    /// The index of `world`'s providers under `tuning`.
    pub fn new(world: &World, tuning: &Tuning) -> Self {
        Self {
            grid: ProviderGrid::of_all(world),
            compiled: CompiledActions::new(world, tuning),
        }
    }

    /// The grid of every provider.
    pub(crate) fn grid(&self) -> &ProviderGrid {
        &self.grid
    }
}
