//! The common case of [`crate::decision::decider::CompiledWorld::decide_into`] as one tight
//! loop: a plain agent (see [`ScoringView::kind`]) over a compiled world with no general action
//! and tables that fit on the stack. The agent's terms and its tag sets' products are a few
//! entries on the stack; the distances of a run of providers are computed together before
//! their actions are scored (their square roots and divisions overlap rather than wait on one
//! another); and the best few are kept as the candidates are scored
//! ([`BestInPlaceOrder`]), without a second pass over them. It writes the same candidates, with
//! the same bits, the same removed ones and the same draws as `compiled_scoring`'s loop
//! followed by `order::best_few_in_place_order`; any other agent or world takes that path.

use crate::decision::agent::Agent;
use crate::decision::compiled::CompiledActions;
use crate::decision::compiled_scoring::{NO_TERM, PADDING_TERM, STACK_MODIFIERS, STACK_TERMS};
use crate::decision::order::BestInPlaceOrder;
use crate::decision::scored::{Breakdown, Candidate};
use crate::decision::scoring::{
    EMPTY_SUM, Ineligible, IneligibleReason, ScoringTerm, ScoringView, distance_factor,
    each_modifier, each_term, gain, utility,
};
use crate::decision::tuning::Tuning;
use crate::decision::world::World;
use crate::rng::DetRng;
use crate::vocabulary::Symbol;

/// Providers whose distances are computed together.
const RUN: usize = 16;

/// Scores `agent` over `compiled` (the actions of `world` under the tuning of `weights`) into
/// `scored` and `ineligible` (both empty), offering each candidate's utility to `best`, when
/// this loop can (see the module comment): `true` then; `false`, with nothing written and
/// nothing drawn from `rng`, otherwise.
pub(crate) fn rank_plain(
    agent: &Agent,
    (world, compiled): (&World, &CompiledActions),
    weights: (&Tuning, &[(Symbol, f64)]),
    rng: &mut DetRng,
    (scored, ineligible): (&mut Vec<Candidate>, &mut Vec<Ineligible>),
    best: &mut BestInPlaceOrder,
) -> bool {
    let names = compiled.needs.names().len();
    let fits = compiled.needs.table_len() <= STACK_TERMS
        && compiled.tags.table_len() <= STACK_MODIFIERS
        && compiled.tag_sets().len() <= STACK_MODIFIERS;
    if !fits || compiled.any_general() || !ScoringView::kind(agent, world.now_hours).1 {
        return false;
    }
    // The first term and modifier of a name count, as in the table by symbol.
    let mut terms = [NO_TERM; STACK_TERMS];
    each_term(agent, weights, rng, |name, term| {
        if let Some(slot) = compiled.needs.local(name).and_then(|i| terms.get_mut(i))
            && slot.headroom.is_nan()
        {
            *slot = term;
        }
    });
    terms[names] = PADDING_TERM;
    let mut modifiers = [1.0; STACK_MODIFIERS];
    each_modifier(agent, |tag, modifier| {
        if let Some(slot) = compiled.tags.local(tag).and_then(|i| modifiers.get_mut(i)) {
            *slot = modifier;
        }
    });
    // Each set's modifiers multiplied in order, from 1, as a record's tags would be.
    let mut sets = [1.0; STACK_MODIFIERS];
    for (product, tags) in sets.iter_mut().zip(compiled.tag_sets()) {
        for &tag in tags {
            *product *= modifiers[tag as usize % STACK_MODIFIERS];
        }
    }
    scored.reserve(compiled.action_count());
    let tables = (&terms, &sets);
    let out = (scored, ineligible, best);
    // When the agent has a term for every name, no record's delta needs a check for one.
    if terms[..names].iter().all(|term| !term.headroom.is_nan()) {
        score::<true>(agent, (world, compiled), weights.0, tables, out);
    } else {
        score::<false>(agent, (world, compiled), weights.0, tables, out);
    }
    true
}

/// [`rank_plain`]'s loop; `EVERY_TERM`: the agent has a term for every name of the records'
/// deltas.
#[inline(always)]
fn score<const EVERY_TERM: bool>(
    agent: &Agent,
    (world, compiled): (&World, &CompiledActions),
    tuning: &Tuning,
    (terms, sets): (&[ScoringTerm; STACK_TERMS], &[f64; STACK_MODIFIERS]),
    (scored, ineligible, best): (
        &mut Vec<Candidate>,
        &mut Vec<Ineligible>,
        &mut BestInPlaceOrder,
    ),
) {
    let mut first = 0;
    for run in compiled.providers().chunks(RUN) {
        let mut placed = [(0.0, 0.0); RUN];
        for (slot, provider) in placed.iter_mut().zip(run) {
            let distance = agent.position.distance_to(&provider.position);
            *slot = (distance, distance_factor(distance, tuning));
        }
        for (provider_index, (provider, &(distance, factor))) in
            (first..).zip(run.iter().zip(&placed))
        {
            let records = compiled.records(provider);
            let remove = |action, reason| Ineligible {
                provider: provider_index,
                action,
                reason,
            };
            if world
                .providers
                .get(provider_index)
                .is_none_or(|p| p.free_slots() == 0)
            {
                // Every action of a full provider fails its first gate.
                let full = (0..records.len()).map(|a| remove(a, IneligibleReason::ProviderFull));
                ineligible.extend(full);
                continue;
            }
            for (action_index, record) in records.iter().enumerate() {
                // A record has no action slot limit, precondition or cost: its radius is the
                // only gate it can fail.
                if distance > record.radius {
                    ineligible.push(remove(action_index, IneligibleReason::OutOfRadius));
                    continue;
                }
                let mut benefit = EMPTY_SUM;
                for &(index, delta) in &record.deltas {
                    let term = terms[index as usize % STACK_TERMS];
                    if EVERY_TERM || !term.headroom.is_nan() {
                        benefit += term.weighted_pressure * gain(delta, term.headroom);
                    }
                }
                // A plain agent has no schedule, no action held back, no foresight and no cost.
                let breakdown = Breakdown {
                    benefit,
                    priority: record.priority,
                    personality: sets[record.tag_set as usize % STACK_MODIFIERS],
                    context: record.context,
                    schedule: 0.0,
                    repeat: 1.0,
                    distance: factor,
                    foresight: 1.0,
                    cost: EMPTY_SUM,
                };
                let utility = utility(&breakdown);
                best.offer(utility);
                scored.push(Candidate {
                    provider: provider_index,
                    action: action_index,
                    utility,
                    distance,
                    breakdown,
                });
            }
        }
        first += run.len();
    }
}
