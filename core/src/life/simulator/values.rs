//! Where perception-, relationship- and context-driven considerations get their values: the
//! [`ValueSource`] seam and its default, [`WorldMaps`]. The updaters that call it are in
//! [`super::prepare`].

use crate::decision::agent::{Agent, lookup};
use crate::decision::consideration::Updater;
use crate::decision::world::World;
use crate::vocabulary::Symbol;

/// Where perception-, relationship- and context-driven considerations get their values.
/// The default reads the world's maps; an integration may read its own tables (per-NPC
/// relationships, say). `None` keeps the previous value.
pub trait ValueSource: Send + Sync {
    /// The new value of `consideration` (of kind `updater`) for `agent`, if known.
    fn value(
        &self,
        agent: &Agent,
        consideration: Symbol,
        updater: &Updater,
        world: &World,
    ) -> Option<f64>;
}

/// Reads `world.perceptions`, `world.relationships` and `world.context_aggregates`.
#[derive(Clone, Copy, Debug, Default)]
pub struct WorldMaps;

impl ValueSource for WorldMaps {
    fn value(
        &self,
        _agent: &Agent,
        consideration: Symbol,
        updater: &Updater,
        world: &World,
    ) -> Option<f64> {
        let map = match updater {
            Updater::PerceptionDriven => &world.perceptions,
            Updater::RelationshipDriven => &world.relationships,
            Updater::ContextAggregate => &world.context_aggregates,
            Updater::LinearDecay { .. }
            | Updater::LinearRegen { .. }
            | Updater::TowardBaseline { .. }
            | Updater::EventDriven => {
                return None;
            }
        };
        lookup(map, consideration)
    }
}
