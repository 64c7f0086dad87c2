//! Eligibility gates and the utility formula of record (seed 000, DESIGN.md §4.1), with the
//! per-candidate breakdown the inspector shows.
//!
//! ```text
//! gain(c,x)     = min(delta(x,c), c.max − c.value)         caps positive gains only
//! benefit       = Σ_c weight_c · pressure(c) · gain(c,x)
//! score         = (benefit + intrinsic_priority · priority_weight)
//!                 · M_personality · M_context · M_distance − weighted_cost
//! M_personality = Π tag modifiers of x's tags · domain preference
//! M_context     = Π over active contexts, over x's tags: m · m   (squared on purpose: a ×2
//!                 context must double the observed frequency after the softmax); the agent's
//!                 own contexts count too, and its preferred provider's multiplier (once)
//! M_distance    = 1 / (1 + distance / distance_reference)
//! weighted_cost = Σ_r cost_r / max(1, available_r / cost_r)     (= cost²/available)
//! ```
//!
//! Gates run in a fixed order and the first failure is the reason kept: provider slot, action
//! slot, radius, preconditions, affordability, commitments. Failing a gate removes a candidate;
//! it never lowers its score.

use crate::agent::{Agent, lookup};
use crate::consideration::{Consideration, Updater};
use crate::rng::DetRng;
use crate::tuning::Tuning;
use crate::vocabulary::Symbol;
use crate::world::{AdvertisedAction, Context, Precondition, Provider, World};

/// Why a candidate was removed, in gate order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IneligibleReason {
    /// The provider has no free slot.
    ProviderFull,
    /// The action's own capacity is used up.
    ActionFull,
    /// The agent is farther than the action's radius.
    OutOfRadius,
    /// A precondition does not hold.
    Precondition,
    /// The agent cannot pay a cost.
    Unaffordable,
    /// An active commitment forbids one of the action's tags.
    Commitment,
}

impl IneligibleReason {
    /// The wire name (`provider_full`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ProviderFull => "provider_full",
            Self::ActionFull => "action_full",
            Self::OutOfRadius => "out_of_radius",
            Self::Precondition => "precondition",
            Self::Unaffordable => "unaffordable",
            Self::Commitment => "commitment",
        }
    }
}

/// Every factor of one candidate's utility.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Breakdown {
    /// `Σ weight · pressure · gain`.
    pub benefit: f64,
    /// `intrinsic_priority · priority_weight`.
    pub priority: f64,
    /// `M_personality`.
    pub personality: f64,
    /// `M_context`.
    pub context: f64,
    /// `M_distance`.
    pub distance: f64,
    /// `weighted_cost`.
    pub cost: f64,
}

/// An eligible candidate with its utility.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// Index of the provider in the world.
    pub provider: usize,
    /// Index of the action in its provider.
    pub action: usize,
    /// The score.
    pub utility: f64,
    /// World units from the agent to the provider.
    pub distance: f64,
    /// How the score was made.
    pub breakdown: Breakdown,
}

/// A removed candidate and the first gate it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ineligible {
    /// Index of the provider in the world.
    pub provider: usize,
    /// Index of the action in its provider.
    pub action: usize,
    /// The first failed gate.
    pub reason: IneligibleReason,
}

/// One consideration as the scorer needs it: weighted pressure and headroom, precomputed once
/// per decision so the candidate loop only multiplies.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScoringTerm {
    name: Symbol,
    weighted_pressure: f64,
    headroom: f64,
}

/// An agent prepared for scoring: the per-consideration terms (from a noisy copy when
/// perception noise is on; the agent itself is never changed).
pub(crate) struct ScoringView<'a> {
    agent: &'a Agent,
    terms: Terms,
}

/// One consideration's scoring term. Perception noise draws one Gaussian for a
/// perception-driven consideration, from `rng`.
fn term(
    c: &Consideration,
    tuning: &Tuning,
    profile_weights: &[(Symbol, f64)],
    rng: &mut DetRng,
) -> ScoringTerm {
    let mut value = c.value;
    if tuning.perception_noise > 0.0 && c.updater == Updater::PerceptionDriven {
        let noisy = value + tuning.perception_noise * rng.next_gaussian();
        value = if c.max > c.min {
            noisy.clamp(c.min, c.max)
        } else {
            noisy
        };
    }
    let pressure = c
        .curve
        .pressure(value, c.min, c.max, tuning.convex_exponent);
    let weight = c.weight * lookup(profile_weights, c.name).unwrap_or(1.0);
    ScoringTerm {
        name: c.name,
        weighted_pressure: weight * pressure,
        headroom: (c.max - value).max(0.0),
    }
}

/// Up to this many considerations are kept on the stack when scoring one agent.
const INLINE_TERMS: usize = 12;

/// The scoring terms: on the stack for a single decision with few considerations, in a
/// reusable buffer for batches.
// The inline variant is large on purpose: it lives on the stack and saves a heap allocation
// per decision.
#[allow(clippy::large_enum_variant)]
enum Terms {
    Inline([ScoringTerm; INLINE_TERMS], usize),
    Heap(Vec<ScoringTerm>),
}

impl Terms {
    fn as_slice(&self) -> &[ScoringTerm] {
        match self {
            Self::Inline(terms, len) => &terms[..*len],
            Self::Heap(terms) => terms,
        }
    }
}

const EMPTY_TERM: ScoringTerm = ScoringTerm {
    name: Symbol::FIRST,
    weighted_pressure: 0.0,
    headroom: 0.0,
};

impl<'a> ScoringView<'a> {
    /// Prepares `agent`. Perception noise draws one Gaussian per perception-driven
    /// consideration, in the agent's order, from `rng`.
    pub(crate) fn new(
        agent: &'a Agent,
        tuning: &Tuning,
        profile_weights: &[(Symbol, f64)],
        rng: &mut DetRng,
    ) -> Self {
        if agent.considerations.len() > INLINE_TERMS {
            return Self::reusing(Vec::new(), agent, tuning, profile_weights, rng);
        }
        let mut inline = [EMPTY_TERM; INLINE_TERMS];
        for (slot, c) in inline.iter_mut().zip(&agent.considerations) {
            *slot = term(c, tuning, profile_weights, rng);
        }
        Self {
            agent,
            terms: Terms::Inline(inline, agent.considerations.len()),
        }
    }

    /// Like [`ScoringView::new`], filling `terms` (cleared first) so a batch reuses one buffer.
    pub(crate) fn reusing(
        mut terms: Vec<ScoringTerm>,
        agent: &'a Agent,
        tuning: &Tuning,
        profile_weights: &[(Symbol, f64)],
        rng: &mut DetRng,
    ) -> Self {
        terms.clear();
        terms.extend(
            agent
                .considerations
                .iter()
                .map(|c| term(c, tuning, profile_weights, rng)),
        );
        Self {
            agent,
            terms: Terms::Heap(terms),
        }
    }

    /// Gives the term buffer back for reuse.
    pub(crate) fn into_buffer(self) -> Vec<ScoringTerm> {
        match self.terms {
            Terms::Heap(terms) => terms,
            Terms::Inline(..) => Vec::new(),
        }
    }

    /// The first gate `action` of `provider` fails for this agent at `distance`, if any.
    pub(crate) fn gate(
        &self,
        provider: &Provider,
        action: &AdvertisedAction,
        distance: f64,
        now_hours: f64,
    ) -> Option<IneligibleReason> {
        let agent = self.agent;
        if provider.free_slots() == 0 {
            return Some(IneligibleReason::ProviderFull);
        }
        if action.free_slots() == Some(0) {
            return Some(IneligibleReason::ActionFull);
        }
        if action.radius.is_some_and(|radius| distance > radius) {
            return Some(IneligibleReason::OutOfRadius);
        }
        if !action
            .preconditions
            .iter()
            .all(|p| precondition_holds(p, agent, provider))
        {
            return Some(IneligibleReason::Precondition);
        }
        if action
            .costs
            .iter()
            .any(|(resource, cost)| agent.resource(*resource) < *cost)
        {
            return Some(IneligibleReason::Unaffordable);
        }
        let forbidden = agent
            .commitments
            .iter()
            .filter(|commitment| commitment.is_active(now_hours))
            .any(|commitment| {
                action
                    .tags
                    .iter()
                    .any(|tag| commitment.forbid_tags.contains(tag))
            });
        if forbidden {
            return Some(IneligibleReason::Commitment);
        }
        None
    }

    /// The utility of an eligible action and its breakdown, given the provider's `M_distance`
    /// and the agent's pull toward it (its preferred provider's multiplier, else 1).
    pub(crate) fn score(
        &self,
        action: &AdvertisedAction,
        (distance_factor, location_factor): (f64, f64),
        contexts: &[Context],
        tuning: &Tuning,
    ) -> (f64, Breakdown) {
        let agent = self.agent;
        let benefit: f64 = action
            .deltas
            .iter()
            .filter_map(|(name, delta)| {
                let term = self
                    .terms
                    .as_slice()
                    .iter()
                    .find(|term| term.name == *name)?;
                Some(term.weighted_pressure * delta.min(term.headroom))
            })
            .sum();
        // Actions that produce what the agent's goals pursue gain priority.
        let goal_bonus: f64 = if agent.goal_bonuses.is_empty() {
            0.0
        } else {
            let produces = |symbol: Symbol| {
                action.effects.adds.contains(&symbol)
                    || action.effects.yields.iter().any(|(r, _)| *r == symbol)
            };
            agent
                .goal_bonuses
                .iter()
                .filter(|(symbol, _)| produces(*symbol))
                .map(|(_, bonus)| bonus)
                .sum()
        };
        let priority = (action.intrinsic_priority + goal_bonus) * tuning.priority_weight;
        // Plain loops (not iterator chains): this runs for every candidate, and the products
        // multiply in the same order either way.
        let mut tag_product = 1.0;
        for tag in &action.tags {
            tag_product *= lookup(&agent.tag_modifiers, *tag).unwrap_or(1.0);
        }
        let domain = action
            .domain
            .and_then(|domain| lookup(&agent.domain_preferences, domain))
            .unwrap_or(1.0);
        let personality = tag_product * domain;
        let mut context = 1.0;
        for active in contexts.iter().chain(&agent.contexts) {
            for tag in &action.tags {
                if let Some(multiplier) = lookup(&active.tag_multipliers, *tag) {
                    context *= multiplier * multiplier;
                }
            }
        }
        let context = context * location_factor;
        let cost: f64 = action
            .costs
            .iter()
            .filter(|(_, cost)| *cost > 0.0)
            .map(|(resource, cost)| cost / (agent.resource(*resource) / cost).max(1.0))
            .sum();
        let utility = (benefit + priority) * personality * context * distance_factor - cost;
        // A NaN can only come from overflowing inputs; rank it last rather than first.
        let utility = if utility.is_nan() {
            f64::NEG_INFINITY
        } else {
            utility
        };
        let breakdown = Breakdown {
            benefit,
            priority,
            personality,
            context,
            distance: distance_factor,
            cost,
        };
        (utility, breakdown)
    }

    /// Gates then scores every action of the providers at `indices` (in that order),
    /// appending to the outputs. Distances are computed a chunk of providers at a time: each
    /// is a square root and two divisions in a chain, and a tight loop lets the CPU overlap the
    /// chains of several providers instead of waiting on each.
    pub(crate) fn evaluate_providers(
        &self,
        world: &World,
        indices: impl IntoIterator<Item = usize>,
        tuning: &Tuning,
        ranked: &mut Vec<Candidate>,
        mut ineligible: Option<&mut Vec<Ineligible>>,
    ) {
        const CHUNK: usize = 16;
        let mut chunk = [(0usize, 0.0f64, 0.0f64); CHUNK];
        let mut indices = indices
            .into_iter()
            .filter(|&index| index < world.providers.len());
        loop {
            let mut filled = 0;
            for (slot, index) in chunk.iter_mut().zip(indices.by_ref()) {
                let distance = self
                    .agent
                    .position
                    .distance_to(&world.providers[index].position);
                *slot = (
                    index,
                    distance,
                    1.0 / (1.0 + distance / tuning.distance_reference),
                );
                filled += 1;
            }
            if filled == 0 {
                return;
            }
            for &placed in &chunk[..filled] {
                self.evaluate_provider(world, placed, tuning, ranked, ineligible.as_deref_mut());
            }
        }
    }

    /// Gates then scores every action of one provider; `placed` is its index, distance and
    /// `M_distance`.
    fn evaluate_provider(
        &self,
        world: &World,
        (provider_index, distance, distance_factor): (usize, f64, f64),
        tuning: &Tuning,
        ranked: &mut Vec<Candidate>,
        mut ineligible: Option<&mut Vec<Ineligible>>,
    ) {
        let Some(provider) = world.providers.get(provider_index) else {
            return;
        };
        let (now_hours, contexts) = (world.now_hours, &world.contexts);
        let location_factor = match &self.agent.preferred_provider {
            Some((preferred, multiplier)) if *preferred == provider.id => *multiplier,
            _ => 1.0,
        };
        for (action_index, action) in provider.actions.iter().enumerate() {
            match self.gate(provider, action, distance, now_hours) {
                Some(reason) => {
                    if let Some(list) = ineligible.as_deref_mut() {
                        list.push(Ineligible {
                            provider: provider_index,
                            action: action_index,
                            reason,
                        });
                    }
                }
                None => {
                    let (utility, breakdown) =
                        self.score(action, (distance_factor, location_factor), contexts, tuning);
                    ranked.push(Candidate {
                        provider: provider_index,
                        action: action_index,
                        utility,
                        distance,
                        breakdown,
                    });
                }
            }
        }
    }
}

fn precondition_holds(precondition: &Precondition, agent: &Agent, provider: &Provider) -> bool {
    match precondition {
        Precondition::Consideration { name, op, value } => agent
            .consideration(*name)
            .is_some_and(|c| op.holds(c.value, *value)),
        Precondition::Capability(capability) => agent.capabilities.contains(capability),
        Precondition::Resource { name, min } => agent.resource(*name) >= *min,
        Precondition::ProviderState(state) => provider.state == Some(*state),
        Precondition::Fact(fact) => agent.facts.contains(fact),
    }
}

/// Maps a float to an integer with the same total order as `f64::total_cmp`.
fn ordered_bits(value: f64) -> u64 {
    let bits = value.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// Up to this many candidates are sorted with keys on the stack (no allocation).
const STACK_SORT_LIMIT: usize = 64;

/// Sorts by descending utility; ties keep input order. It sorts compact integer keys (on the
/// stack for the few dozen candidates a decision usually sees) and then moves each large
/// candidate once, by following the permutation's cycles in place — several times faster than
/// a stable sort of the candidates themselves, and allocation-free.
pub(crate) fn sort_by_utility(ranked: &mut [Candidate]) {
    // One integer per candidate: the utility's order bits (inverted for descending) above the
    // input index, so a plain integer sort is the stable descending sort.
    let key =
        |(i, c): (usize, &Candidate)| (u128::from(!ordered_bits(c.utility)) << 32) | i as u128;
    if ranked.len() <= STACK_SORT_LIMIT {
        let mut keys = [0u128; STACK_SORT_LIMIT];
        let keys = &mut keys[..ranked.len()];
        // Insertion sort while filling: for a few dozen keys it beats a general sort.
        for (filled, k) in ranked.iter().enumerate().map(key).enumerate() {
            let mut at = filled;
            while at > 0 && keys[at - 1] > k {
                keys[at] = keys[at - 1];
                at -= 1;
            }
            keys[at] = k;
        }
        permute(ranked, keys);
    } else {
        let mut keys: Vec<u128> = ranked.iter().enumerate().map(key).collect();
        keys.sort_unstable();
        permute(ranked, &mut keys);
    }
}

/// Marks a key whose move is done.
const DONE: u128 = u128::MAX;

/// Reorders `items` so position `j` holds what was at the index in the low 32 bits of
/// `order[j]`; consumes `order` (each visited entry is marked [`DONE`]).
fn permute(items: &mut [Candidate], order: &mut [u128]) {
    for start in 0..items.len() {
        if order[start] == DONE {
            continue;
        }
        let held = items[start];
        let mut at = start;
        loop {
            let from = (order[at] & u128::from(u32::MAX)) as usize;
            order[at] = DONE;
            if from == start {
                items[at] = held;
                break;
            }
            items[at] = items[from];
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_bits_agree_with_total_cmp() {
        let values = [
            f64::NEG_INFINITY,
            -3.5,
            -0.0,
            0.0,
            1e-300,
            2.0,
            81.52,
            f64::INFINITY,
        ];
        for a in values {
            for b in values {
                assert_eq!(
                    ordered_bits(a).cmp(&ordered_bits(b)),
                    a.total_cmp(&b),
                    "{a} vs {b}"
                );
            }
        }
    }

    fn candidate(action: usize, utility: f64) -> Candidate {
        Candidate {
            provider: 0,
            action,
            utility,
            distance: 0.0,
            breakdown: Breakdown::default(),
        }
    }

    #[test]
    fn sorting_is_descending_and_stable_on_both_paths() {
        for len in [0, 1, 2, 7, 64, 65, 300] {
            let mut items: Vec<Candidate> = (0..len)
                .map(|i| candidate(i, ((i * 7919) % 13) as f64))
                .collect();
            let mut expected = items.clone();
            expected.sort_by(|a, b| b.utility.total_cmp(&a.utility));
            sort_by_utility(&mut items);
            assert_eq!(items, expected, "len {len}");
        }
    }
}
