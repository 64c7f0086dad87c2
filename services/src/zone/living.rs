//! The living world's rules a zone lays over any world's content (`[living]`): which actions
//! are sleep — those tagged `sleep`, and any `rest`-domain action of `sleep_min_hours` or
//! more, which gets the tag — homes that only the residents who live there sleep in (a
//! provider named as some resident's `places.home` admits its sleep actions to the holders of
//! its `home:<provider>` capability, which each of its residents is given), and needs with a
//! way back: a decaying need of an NPC that no action of the world it could do restores
//! drifts back toward the level it started at instead of emptying for good. A night's sleep
//! (a sleep action of `sleep_min_hours` or more) keeps to the hours a binding schedule block
//! gives it; a nap does not need to.

use std::collections::{BTreeMap, BTreeSet};

use geppetto_core::decision::agent::Agent;
use geppetto_core::decision::consideration::Updater;
use geppetto_core::decision::world::{Precondition, World};
use geppetto_core::life::simulator::SimulatedAgent;
use geppetto_core::vocabulary::{Symbol, Vocabulary};

use super::config::LivingConfig;

/// The tag every sleeping action carries.
pub const SLEEP_TAG: &str = "sleep";

/// The capability that lets an NPC sleep in `home`.
fn home_capability(home: &str) -> String {
    format!("home:{home}")
}

/// Tags `sleep` every action of `world` in the `rest` domain lasting `sleep_min_hours` or more.
pub(super) fn mark_sleep(world: &mut World, vocabulary: &mut Vocabulary, config: &LivingConfig) {
    let sleep = vocabulary.intern(SLEEP_TAG);
    let Some(rest) = vocabulary.lookup("rest") else {
        return;
    };
    for action in world
        .providers
        .iter_mut()
        .flat_map(|p| p.actions.iter_mut())
    {
        if action.domain == Some(rest)
            && action.duration_hours >= config.sleep_min_hours
            && !action.tags.contains(&sleep)
        {
            action.tags.push(sleep);
        }
    }
}

/// Lets only those who live in each of `homes` sleep there: its sleep actions need its home
/// capability.
pub(super) fn keep_homes_private<'a>(
    world: &mut World,
    vocabulary: &mut Vocabulary,
    homes: impl IntoIterator<Item = &'a str>,
) {
    let sleep = vocabulary.intern(SLEEP_TAG);
    let homes: BTreeSet<&str> = homes.into_iter().collect();
    for provider in world
        .providers
        .iter_mut()
        .filter(|p| homes.contains(p.id.as_str()))
    {
        let key = Precondition::Capability(vocabulary.intern(&home_capability(&provider.id)));
        for action in provider
            .actions
            .iter_mut()
            .filter(|a| a.tags.contains(&sleep))
        {
            if !action.preconditions.contains(&key) {
                action.preconditions.push(key.clone());
            }
        }
    }
}

/// Keeps `agent`'s night's sleep to the hours its schedule binds it to: outside them a
/// sleep action of `sleep_min_hours` or more is held back (a nap is not).
pub(super) fn keep_sleep_to_its_hours(agent: &mut SimulatedAgent, config: &LivingConfig) {
    if let Some(layer) = agent
        .layers
        .get_mut()
        .and_then(|layers| layers.schedule.as_mut())
    {
        layer.reserve_from_hours = config.sleep_min_hours;
    }
}

/// Gives `agent` the key to `home`, where it lives.
pub(super) fn move_in(agent: &mut Agent, vocabulary: &mut Vocabulary, home: &str) {
    let key = vocabulary.intern(&home_capability(home));
    if !agent.capabilities.contains(&key) {
        agent.capabilities.push(key);
    }
}

/// What the world's actions an NPC could simply do restore, grouped by the capabilities they
/// ask for: an action it could simply do asks only for capabilities it has and need levels
/// (not a fact, a resource held or a provider's state, which only a plan would bring about).
/// Built once from the world's actions (a zone keeps it while they stay as they are), so giving
/// an NPC its ways back costs what the few distinct capability sets cost, not every action.
#[derive(Clone, Debug, Default)]
pub(super) struct Restorers {
    /// Each distinct set of capabilities actions ask for (sorted), with the needs they raise.
    by_capabilities: Vec<(Vec<Symbol>, BTreeSet<Symbol>)>,
}

impl Restorers {
    /// The restorers of `world`'s actions.
    pub(super) fn of(world: &World) -> Self {
        let mut groups: BTreeMap<Vec<Symbol>, BTreeSet<Symbol>> = BTreeMap::new();
        for action in world.providers.iter().flat_map(|p| &p.actions) {
            let mut needed = Vec::new();
            let simple = action.preconditions.iter().all(|p| match p {
                Precondition::Capability(capability) => {
                    needed.push(*capability);
                    true
                }
                Precondition::Consideration { .. } => true,
                _ => false,
            });
            if !simple {
                continue;
            }
            needed.sort_unstable();
            needed.dedup();
            let raised = action
                .deltas
                .iter()
                .filter(|(_, d)| *d > 0.0)
                .map(|(need, _)| *need);
            groups.entry(needed).or_default().extend(raised);
        }
        Self {
            by_capabilities: groups.into_iter().collect(),
        }
    }

    /// The needs some action `agent` could simply do raises.
    fn for_agent(&self, agent: &Agent) -> BTreeSet<Symbol> {
        let mut restorable = BTreeSet::new();
        for (needed, raised) in &self.by_capabilities {
            if needed.iter().all(|c| agent.capabilities.contains(c)) {
                restorable.extend(raised.iter().copied());
            }
        }
        restorable
    }
}

/// Turns each decaying need of `agent` that no action of the world it could simply do raises
/// (as `restorers` lists them) into one that drifts back toward its present level at its decay
/// rate.
pub(super) fn give_needs_a_way_back(agent: &mut Agent, restorers: &Restorers) {
    let restorable = restorers.for_agent(agent);
    for need in agent
        .considerations
        .iter_mut()
        .filter(|c| c.weight > 0.0 && !restorable.contains(&c.name))
    {
        if let Updater::LinearDecay { rate } = *need.updater() {
            need.behaviour_mut().updater = Updater::TowardBaseline {
                rate,
                baseline: need.value,
            };
        }
    }
}
