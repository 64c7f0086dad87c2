//! Batch contention: turning every agent's ranked preferences into assignments that never
//! over-fill a provider or an action.
//!
//! Rounds: every open agent claims its current preference; claims are grouped by provider and
//! ordered by distance, then agent id, then input index — proximity, not utility, wins (the
//! agent who can reach the resource first gets it). A claim is granted only if both the
//! provider (capacity − occupants) and the action (capacity − occupancy; 0 = unlimited) have a
//! slot left. A loser moves to its next preference, which may displace a provisional winner
//! elsewhere, so rounds repeat until one has no displacement. Cursors only move forward
//! through finite lists, so it terminates. No state survives the call.

use crate::agent::Agent;
use crate::world::World;

/// One retained option of an agent in a batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preference {
    /// Index of the provider in the world.
    pub provider: usize,
    /// Index of the action in its provider.
    pub action: usize,
    /// The candidate's utility.
    pub utility: f64,
    /// World units from the agent to the provider (the contention order).
    pub distance: f64,
}

/// Every agent's preference list, stored flat (one allocation for the whole batch).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PreferenceLists {
    offsets: Vec<usize>,
    items: Vec<Preference>,
}

impl PreferenceLists {
    pub(crate) fn with_capacity(agents: usize, per_agent: usize) -> Self {
        let mut offsets = Vec::with_capacity(agents + 1);
        offsets.push(0);
        Self {
            offsets,
            items: Vec::with_capacity(agents * per_agent),
        }
    }

    pub(crate) fn push(&mut self, preference: Preference) {
        self.items.push(preference);
    }

    /// Closes the current agent's list.
    pub(crate) fn end_agent(&mut self) {
        self.offsets.push(self.items.len());
    }

    /// Appends another batch's lists after these.
    pub(crate) fn append(&mut self, other: PreferenceLists) {
        let base = self.items.len();
        self.offsets
            .extend(other.offsets.iter().skip(1).map(|offset| offset + base));
        self.items.extend(other.items);
    }

    /// How many agents have a list.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether no agent has a list.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The list of agent `agent` (input index): the stochastic pick first, then fallbacks by
    /// descending utility.
    pub fn of(&self, agent: usize) -> &[Preference] {
        match (self.offsets.get(agent), self.offsets.get(agent + 1)) {
            (Some(&start), Some(&end)) => &self.items[start..end],
            _ => &[],
        }
    }
}

/// A claim in one round, in the order the provider considers it.
#[derive(Clone, Copy, Debug)]
struct Claim {
    provider: u32,
    distance: f64,
    id_rank: u32,
    agent: u32,
}

/// Resolves the lists against the world's capacities. Returns each agent's granted
/// preference (in input order) and how many rounds it took.
pub(crate) fn resolve(
    lists: &PreferenceLists,
    agents: &[Agent],
    world: &World,
) -> (Vec<Option<Preference>>, usize) {
    let agent_count = lists.len().min(agents.len());
    // Rank agents by (id, input index) once, so a round sorts integers, not strings.
    let mut by_id: Vec<usize> = (0..agent_count).collect();
    by_id.sort_by(|&a, &b| agents[a].id.cmp(&agents[b].id).then(a.cmp(&b)));
    let mut id_rank = vec![0u32; agent_count];
    for (rank, &agent) in by_id.iter().enumerate() {
        id_rank[agent] = rank as u32;
    }

    let mut cursor = vec![0usize; agent_count];
    let mut claims: Vec<Claim> = Vec::with_capacity(agent_count);
    let mut action_use: Vec<(usize, u32)> = Vec::new();
    let mut rounds = 0;
    loop {
        rounds += 1;
        claims.clear();
        for agent in 0..agent_count {
            if let Some(preference) = lists.of(agent).get(cursor[agent]) {
                claims.push(Claim {
                    provider: preference.provider as u32,
                    distance: preference.distance,
                    id_rank: id_rank[agent],
                    agent: agent as u32,
                });
            }
        }
        claims.sort_unstable_by(|a, b| {
            a.provider
                .cmp(&b.provider)
                .then(a.distance.total_cmp(&b.distance))
                .then(a.id_rank.cmp(&b.id_rank))
        });
        let mut displaced = false;
        for group in claims.chunk_by(|a, b| a.provider == b.provider) {
            let Some(provider) = world.providers.get(group[0].provider as usize) else {
                continue;
            };
            let mut provider_slots = provider.free_slots();
            action_use.clear();
            for claim in group {
                let agent = claim.agent as usize;
                let Some(preference) = lists.of(agent).get(cursor[agent]) else {
                    continue;
                };
                let slot = match action_use
                    .iter()
                    .position(|(action, _)| *action == preference.action)
                {
                    Some(slot) => slot,
                    None => {
                        action_use.push((preference.action, 0));
                        action_use.len() - 1
                    }
                };
                let used = action_use[slot].1;
                let action_has_slot = provider
                    .actions
                    .get(preference.action)
                    .is_some_and(|action| action.free_slots().is_none_or(|free| free > used));
                if provider_slots > 0 && action_has_slot {
                    provider_slots -= 1;
                    action_use[slot].1 += 1;
                } else {
                    cursor[agent] += 1;
                    displaced = true;
                }
            }
        }
        if !displaced {
            break;
        }
    }
    let assignments = (0..agent_count)
        .map(|agent| lists.of(agent).get(cursor[agent]).copied())
        .collect();
    (assignments, rounds)
}
