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

use std::borrow::Borrow;

use crate::decision::agent::Agent;
use crate::decision::order::ordered_bits;
use crate::decision::world::World;

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

    #[inline]
    pub(crate) fn push(&mut self, preference: Preference) {
        self.items.push(preference);
    }

    /// Closes the current agent's list.
    #[inline]
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
    #[inline]
    pub fn of(&self, agent: usize) -> &[Preference] {
        match (self.offsets.get(agent), self.offsets.get(agent + 1)) {
            (Some(&start), Some(&end)) => &self.items[start..end],
            _ => &[],
        }
    }
}

/// A claim on a provider, in the order the provider considers it.
#[derive(Clone, Copy, Debug, Default)]
struct Claim {
    /// The claimant's distance as order bits (`f64::total_cmp`'s order).
    distance: u64,
    agent: u32,
}

/// A round's claims grouped by provider, a counting sort: the providers in ascending order,
/// each with its arriving claims. The order within a group does not matter, since its
/// contenders are sorted by a total order.
#[derive(Default)]
struct ClaimGroups {
    /// `starts[p]..starts[p + 1]` indexes `claims` for provider `p`.
    starts: Vec<u32>,
    claims: Vec<Claim>,
    /// The providers with a claim, ascending.
    claimed: Vec<u32>,
    next: Vec<u32>,
}

impl ClaimGroups {
    /// Groups `claims` (provider index, claim) over `providers` providers; a claim on a
    /// provider beyond them is dropped.
    fn fill(&mut self, providers: usize, claims: &[(usize, Claim)]) {
        let claims = || {
            claims
                .iter()
                .copied()
                .filter(|&(provider, _)| provider < providers)
        };
        self.starts.clear();
        self.starts.resize(providers + 1, 0);
        for (provider, _) in claims() {
            self.starts[provider + 1] += 1;
        }
        self.claimed.clear();
        for provider in 0..providers {
            if self.starts[provider + 1] > 0 {
                self.claimed.push(provider as u32);
            }
            self.starts[provider + 1] += self.starts[provider];
        }
        self.claims.clear();
        self.claims
            .resize(self.starts[providers] as usize, Claim::default());
        self.next.clear();
        self.next.extend_from_slice(&self.starts);
        for (provider, claim) in claims() {
            self.claims[self.next[provider] as usize] = claim;
            self.next[provider] += 1;
        }
    }

    /// Each claimed provider with its claims, by ascending provider index.
    fn iter(&self) -> impl Iterator<Item = (usize, &[Claim])> {
        self.claimed.iter().map(|&provider| {
            let provider = provider as usize;
            let range = self.starts[provider] as usize..self.starts[provider + 1] as usize;
            (provider, &self.claims[range])
        })
    }
}

/// Resolves the lists against the world's capacities. Returns each agent's granted
/// preference (in input order) and how many rounds it took.
///
/// Only providers that receive a new claim in a round are re-decided: a provider whose
/// claimants did not change keeps exactly the winners it had, so this gives the same result
/// as re-sorting every claim every round, at a fraction of the cost.
pub(crate) fn resolve<A: Borrow<Agent>>(
    lists: &PreferenceLists,
    agents: &[A],
    world: &World,
) -> (Vec<Option<Preference>>, usize) {
    let agent_count = lists.len().min(agents.len());
    let mut places = Places::new(lists, agent_count);
    // Each provider's provisional winners, as the claims they won with.
    let mut holders: Vec<Vec<Claim>> = vec![Vec::new(); world.providers.len()];
    // Each arriving claim with its provider. A claim is made from the agent's preference
    // where it stands, which does not move while the claim arrives or is held.
    let mut arriving = Vec::new();
    for agent in 0..agent_count as u32 {
        places.claim(agent, &mut arriving);
    }
    let mut next_arriving = Vec::new();
    let mut groups = ClaimGroups::default();
    let mut contenders: Vec<Claim> = Vec::new();
    let mut action_use: Vec<(usize, u32)> = Vec::new();
    let mut rounds = 0;
    loop {
        rounds += 1;
        groups.fill(world.providers.len(), &arriving);
        let mut displaced = false;
        next_arriving.clear();
        for (provider_index, group) in groups.iter() {
            let (Some(provider), Some(held)) = (
                world.providers.get(provider_index),
                holders.get_mut(provider_index),
            ) else {
                continue;
            };
            contenders.clear();
            contenders.extend_from_slice(held);
            contenders.extend_from_slice(group);
            // Distance first; ids (then input order) only break exact ties, so strings are
            // compared only between equal distances.
            let order = |a: &Claim, b: &Claim| {
                a.distance.cmp(&b.distance).then_with(|| {
                    let (a, b) = (a.agent as usize, b.agent as usize);
                    agents[a]
                        .borrow()
                        .id
                        .cmp(&agents[b].borrow().id)
                        .then(a.cmp(&b))
                })
            };
            let mut provider_slots = provider.free_slots();
            // Only the first `provider_slots` can win, unless a full action turns one of them
            // down; the losers' order does not matter. So only those are put in order, and the
            // rest only if a full action makes the walk reach them while slots are left.
            let mut ordered = order_first(&mut contenders, provider_slots as usize, order);
            held.clear();
            action_use.clear();
            let mut at = 0;
            while at < contenders.len() && provider_slots > 0 {
                if at == ordered {
                    contenders[at..].sort_unstable_by(order);
                    ordered = contenders.len();
                }
                let claim = contenders[at];
                at += 1;
                let Some(preference) = places.current(claim.agent) else {
                    continue;
                };
                let slot = match action_use.iter().position(|(a, _)| *a == preference.action) {
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
                if action_has_slot {
                    provider_slots -= 1;
                    action_use[slot].1 += 1;
                    held.push(claim);
                } else {
                    displaced = true;
                    places.advance(claim.agent, &mut next_arriving);
                }
            }
            // No slot is left: every other claim loses, whatever its action.
            for claim in &contenders[at..] {
                displaced = true;
                places.advance(claim.agent, &mut next_arriving);
            }
        }
        if !displaced {
            break;
        }
        std::mem::swap(&mut arriving, &mut next_arriving);
    }
    let granted = (0..agent_count as u32)
        .map(|agent| places.current(agent).copied())
        .collect();
    (granted, rounds)
}

/// Where each agent stands in its list: the index in the lists' items of its current
/// preference, its list's end once it has none left.
struct Places<'l> {
    lists: &'l PreferenceLists,
    at: Vec<usize>,
}

impl<'l> Places<'l> {
    /// Every one of the first `agent_count` agents at the head of its list.
    fn new(lists: &'l PreferenceLists, agent_count: usize) -> Self {
        Self {
            lists,
            at: lists.offsets.iter().take(agent_count).copied().collect(),
        }
    }

    /// The preference `agent` stands at, if any is left.
    #[inline]
    fn current(&self, agent: u32) -> Option<&'l Preference> {
        let agent = agent as usize;
        let at = *self.at.get(agent)?;
        let end = *self.lists.offsets.get(agent + 1)?;
        if at < end {
            self.lists.items.get(at)
        } else {
            None
        }
    }

    /// Adds `agent`'s claim on the preference it stands at, if any, to `arriving`.
    #[inline]
    fn claim(&self, agent: u32, arriving: &mut Vec<(usize, Claim)>) {
        if let Some(preference) = self.current(agent) {
            let claim = Claim {
                distance: ordered_bits(preference.distance),
                agent,
            };
            arriving.push((preference.provider, claim));
        }
    }

    /// Moves `agent` on to its next preference and, if it has one, adds its claim on it to
    /// `arriving`.
    #[inline]
    fn advance(&mut self, agent: u32, arriving: &mut Vec<(usize, Claim)>) {
        if let Some(at) = self.at.get_mut(agent as usize) {
            *at += 1;
        }
        self.claim(agent, arriving);
    }
}

/// Up to this many first claims are put in order by insertion; more are sorted.
const ORDERED_BY_INSERTION: usize = 8;

/// Puts the first `count` of `items` by `order` at the front, in order, leaving the rest in
/// any order; returns how many lead in order (all of them when they are sorted).
fn order_first<T>(
    items: &mut [T],
    count: usize,
    order: impl Fn(&T, &T) -> std::cmp::Ordering,
) -> usize {
    let before = |a: &T, b: &T| order(a, b) == std::cmp::Ordering::Less;
    if count >= items.len() || count > ORDERED_BY_INSERTION {
        items.sort_unstable_by(order);
        return items.len();
    }
    if count == 0 {
        return 0;
    }
    items[..count].sort_unstable_by(&order);
    let last = count - 1;
    for next in count..items.len() {
        if before(&items[next], &items[last]) {
            items.swap(next, last);
            let mut at = last;
            while at > 0 && before(&items[at], &items[at - 1]) {
                items.swap(at, at - 1);
                at -= 1;
            }
        }
    }
    count
}
