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

use rustc_hash::FxHashMap;

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

/// A round's claims grouped by provider: the providers in ascending order, each with its
/// arriving claims. The order within a group does not matter, since its contenders are sorted
/// by a total order. A round with few claims for the world's providers sorts them, so it costs
/// what its claims do; one with many counts them into place over every provider.
#[derive(Default)]
struct ClaimGroups {
    /// The claims, grouped by provider.
    claims: Vec<Claim>,
    /// Each claimed provider, ascending, with the end of its group in `claims` (a group starts
    /// where the one before it ends).
    groups: Vec<(u32, u32)>,
    /// Scratch: the claims with their providers, put in provider order.
    sorted: Vec<(usize, Claim)>,
    /// Scratch of the counting sort: claims per provider, then where the next one goes.
    counts: Vec<u32>,
}

/// A round sorts its claims when there are fewer than the world's providers over this; with
/// more it counts them over every provider (a linear pass, cheaper for a large batch).
const SORT_BELOW_PROVIDERS_OVER: usize = 8;

impl ClaimGroups {
    /// Groups `claims` (provider index, claim) over `providers` providers; a claim on a
    /// provider beyond them is dropped.
    fn fill(&mut self, providers: usize, claims: &[(usize, Claim)]) {
        self.claims.clear();
        self.groups.clear();
        let claims = claims.iter().filter(|&&(provider, _)| provider < providers);
        if claims.clone().count() < providers / SORT_BELOW_PROVIDERS_OVER {
            self.fill_sorted(claims);
        } else {
            self.fill_counted(providers, claims);
        }
    }

    /// Groups the claims by sorting them by provider.
    fn fill_sorted<'a>(&mut self, claims: impl Iterator<Item = &'a (usize, Claim)>) {
        self.sorted.clear();
        self.sorted.extend(claims);
        self.sorted.sort_unstable_by_key(|&(provider, _)| provider);
        for &(provider, claim) in &self.sorted {
            if self
                .groups
                .last()
                .is_none_or(|&(last, _)| last as usize != provider)
            {
                self.groups
                    .push((provider as u32, self.claims.len() as u32));
            }
            self.claims.push(claim);
            if let Some(group) = self.groups.last_mut() {
                group.1 += 1;
            }
        }
    }

    /// Groups the claims by counting them over every one of `providers`.
    fn fill_counted<'a>(
        &mut self,
        providers: usize,
        claims: impl Iterator<Item = &'a (usize, Claim)> + Clone,
    ) {
        self.counts.clear();
        self.counts.resize(providers, 0);
        for &(provider, _) in claims.clone() {
            self.counts[provider] += 1;
        }
        let mut end = 0;
        for (provider, count) in self.counts.iter_mut().enumerate() {
            if *count > 0 {
                end += *count;
                self.groups.push((provider as u32, end));
                // From here on, where the provider's claims go, filled from the end.
                *count = end;
            }
        }
        self.claims.resize(end as usize, Claim::default());
        for &(provider, claim) in claims {
            self.counts[provider] -= 1;
            self.claims[self.counts[provider] as usize] = claim;
        }
    }

    /// Each claimed provider with its claims, by ascending provider index.
    fn iter(&self) -> impl Iterator<Item = (usize, &[Claim])> {
        let starts = std::iter::once(0).chain(self.groups.iter().map(|&(_, end)| end));
        self.groups
            .iter()
            .zip(starts)
            .map(|(&(provider, end), start)| {
                (
                    provider as usize,
                    &self.claims[start as usize..end as usize],
                )
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
    // Each claimed provider's provisional winners, as the claims they won with (by provider
    // index: only the claimed ones, not the world's every provider).
    let mut holders: FxHashMap<usize, Vec<Claim>> = FxHashMap::default();
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
            let Some(provider) = world.providers.get(provider_index) else {
                continue;
            };
            let held = holders.entry(provider_index).or_default();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each provider's claims as (agent, distance) pairs, sorted: a group's order does not
    /// matter.
    fn grouped(groups: &ClaimGroups) -> Vec<(usize, Vec<(u32, u64)>)> {
        groups
            .iter()
            .map(|(provider, claims)| {
                let mut claims: Vec<_> = claims.iter().map(|c| (c.agent, c.distance)).collect();
                claims.sort_unstable();
                (provider, claims)
            })
            .collect()
    }

    #[test]
    fn sorting_and_counting_group_the_same_claims_under_the_same_providers() {
        let providers = 500;
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for count in [0usize, 1, 7, 60, 400, 3_000] {
            let claims: Vec<(usize, Claim)> = (0..count as u32)
                .map(|agent| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    // A few claims fall beyond the providers and are dropped.
                    let provider = (state >> 33) as usize % (providers + 5);
                    (
                        provider,
                        Claim {
                            distance: state >> 40,
                            agent,
                        },
                    )
                })
                .collect();
            let kept = || claims.iter().filter(|&&(provider, _)| provider < providers);
            let (mut sorted, mut counted) = (ClaimGroups::default(), ClaimGroups::default());
            sorted.fill_sorted(kept());
            counted.fill_counted(providers, kept());
            let expected = grouped(&sorted);
            assert_eq!(expected, grouped(&counted), "{count} claims");
            assert_eq!(
                expected.iter().map(|(_, c)| c.len()).sum::<usize>(),
                kept().count()
            );
            assert!(
                expected.windows(2).all(|w| w[0].0 < w[1].0),
                "providers ascend"
            );
            let mut either = ClaimGroups::default();
            either.fill(providers, &claims);
            assert_eq!(expected, grouped(&either), "{count} claims");
        }
    }
}
