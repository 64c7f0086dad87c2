//! The common case of [`crate::decision::decider::CompiledWorld::decide_into`] as one tight
//! loop: a plain agent (see [`ScoringView::kind`]) over a compiled world with no general action
//! and tables that fit on the stack. The agent's terms and its tag sets' products are a few
//! entries on the stack; the distances of a run of providers are computed together before
//! their actions are scored (their square roots and divisions overlap rather than wait on one
//! another), and the run's records are then scored in one flat pass, each finding its
//! provider's distance by its place; and each candidate is kept without its breakdown
//! ([`Deferred`]: its place, utility, distance and benefit, the rest being its record's, its
//! provider's and its tag set's), written to its record's own slot, so the best few are then
//! found over 32-byte candidates rather than 104-byte ones. The candidates, once put together,
//! are those of `compiled_scoring`'s loop with the same bits, and so are the removed ones and
//! the draws; any other agent or world takes that path.

use crate::decision::agent::Agent;
use crate::decision::compiled::CompiledAction;
use crate::decision::compiled::CompiledActions;
use crate::decision::compiled_scoring::{NO_TERM, PADDING_TERM, STACK_MODIFIERS, STACK_TERMS};
use crate::decision::deferred::{Deferred, PlainCandidate, UNSCORED};
use crate::decision::scoring::{
    EMPTY_SUM, Ineligible, IneligibleReason, ScoringTerm, ScoringView, distance_factor,
    each_modifier, each_term, gain,
};
use crate::decision::tuning::Tuning;
use crate::decision::world::World;
use crate::rng::DetRng;
use crate::vocabulary::Symbol;

/// Providers whose distances are computed together.
const RUN: usize = 16;

/// Whether [`rank_plain`] can score `agent` over `compiled` (the actions of `world`).
pub(crate) fn plain_applies(agent: &Agent, world: &World, compiled: &CompiledActions) -> bool {
    compiled.needs.table_len() <= STACK_TERMS
        && compiled.tags.table_len() <= STACK_MODIFIERS
        && compiled.tag_sets().len() <= STACK_MODIFIERS
        // A place is kept in 32 bits.
        && u32::try_from(compiled.action_count().max(compiled.providers().len())).is_ok()
        && !compiled.any_general()
        && ScoringView::kind(agent, world.now_hours).1
}

/// Scores `agent` over `compiled` (the actions of `world` under the tuning of `weights`, which
/// [`plain_applies`] to) into `deferred` and `ineligible` (both empty).
pub(crate) fn rank_plain(
    agent: &Agent,
    (world, compiled): (&World, &CompiledActions),
    weights: (&Tuning, &[(Symbol, f64)]),
    rng: &mut DetRng,
    (deferred, ineligible): (&mut Deferred, &mut Vec<Ineligible>),
) {
    let names = compiled.needs.names().len();
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
    deferred
        .personalities
        .extend(sets.iter().take(compiled.tag_sets().len()));
    deferred
        .distance_factors
        .reserve(compiled.providers().len());
    let tables = (&terms, &sets);
    let out = (deferred, ineligible);
    // When the agent has a term for every name, no record's delta needs a check for one.
    if terms[..names].iter().all(|term| !term.headroom.is_nan()) {
        score::<true>(agent, (world, compiled), weights.0, tables, out);
    } else {
        score::<false>(agent, (world, compiled), weights.0, tables, out);
    }
}

/// [`rank_plain`]'s loop; `EVERY_TERM`: the agent has a term for every name of the records'
/// deltas. A run's records are scored in one pass, each finding its provider's distance and
/// whether it is full by its place, and written to its own slot (see [`Deferred::slots`]); the
/// removed ones are listed after the pass, so the pass calls nothing and keeps its values in
/// registers.
#[inline(always)]
fn score<const EVERY_TERM: bool>(
    agent: &Agent,
    (world, compiled): (&World, &CompiledActions),
    tuning: &Tuning,
    (terms, sets): (&[ScoringTerm; STACK_TERMS], &[f64; STACK_MODIFIERS]),
    (deferred, ineligible): (&mut Deferred, &mut Vec<Ineligible>),
) {
    let (slots, distance_factors) = (&mut deferred.slots, &mut deferred.distance_factors);
    let mut any_removed = false;
    let mut scored = 0;
    for (first, run) in (0..).step_by(RUN).zip(compiled.providers().chunks(RUN)) {
        let mut placed = [(0.0, 0.0); RUN];
        for (slot, provider) in placed.iter_mut().zip(run) {
            let distance = agent.position.distance_to(&provider.position);
            *slot = (distance, distance_factor(distance, tuning));
        }
        distance_factors.extend(placed[..run.len()].iter().map(|&(_, factor)| factor));
        // A provider the world does not hold counts as full.
        let mut full = [true; RUN];
        for (full, provider) in full
            .iter_mut()
            .zip(world.providers.get(first..).unwrap_or(&[]))
        {
            *full = provider.free_slots() == 0;
        }
        let records = compiled.run_records(run);
        let mut removed = false;
        for (slot, record) in slots[scored..].iter_mut().zip(records) {
            let (provider, action) = record.place;
            let (distance, factor) = placed[provider as usize % RUN];
            if removal(record, (&placed, &full)).is_some() {
                removed = true;
                *slot = UNSCORED;
                continue;
            }
            let mut benefit = EMPTY_SUM;
            for &(index, delta) in &record.deltas {
                let term = terms[index as usize % STACK_TERMS];
                if EVERY_TERM || !term.headroom.is_nan() {
                    benefit += term.weighted_pressure * gain(delta, term.headroom);
                }
            }
            let personality = sets[record.tag_set as usize % STACK_MODIFIERS];
            *slot = PlainCandidate {
                provider,
                action,
                utility: plain_utility(benefit, record, personality, factor),
                distance,
                benefit,
            };
        }
        if removed {
            let removals = records.iter().filter_map(|record| {
                let (provider, action) = record.place;
                let reason = removal(record, (&placed, &full))?;
                Some(Ineligible {
                    provider: provider as usize,
                    action: action as usize,
                    reason,
                })
            });
            ineligible.extend(removals);
        }
        any_removed |= removed;
        scored += records.len();
    }
    deferred.keep_scored(any_removed);
}

/// The first gate `record` fails, given its run's distances and factors and which of its
/// providers are full (by provider index modulo [`RUN`]: a run starts at a multiple of its
/// length), if any. Every action of a full provider fails its first gate; a record has no
/// action slot limit, precondition or cost, so otherwise its radius is the only gate it can
/// fail.
#[inline(always)]
fn removal(
    record: &CompiledAction,
    (placed, full): (&[(f64, f64); RUN], &[bool; RUN]),
) -> Option<IneligibleReason> {
    let at = record.place.0 as usize % RUN;
    if full[at] {
        Some(IneligibleReason::ProviderFull)
    } else if placed[at].0 > record.radius {
        Some(IneligibleReason::OutOfRadius)
    } else {
        None
    }
}

/// `scoring::utility` of a plain agent's candidate scored off `record`, bit for bit: its
/// breakdown's schedule (0), `M_repeat` and `M_foresight` (1) and cost (-0.0) act as nothing
/// but the cost's subtraction, which turns a -0.0 product into +0.0. Multiplying by 1 is
/// exact, and so is adding the schedule's 0 but to a -0.0 sum, which only changes the sign of
/// a zero product, which the cost's subtraction then makes +0.0 either way (an infinite or NaN
/// factor makes both NaN); so neither is computed. A NaN utility ranks last, as -∞.
#[inline(always)]
fn plain_utility(benefit: f64, record: &CompiledAction, personality: f64, factor: f64) -> f64 {
    let utility = (benefit + record.priority) * personality * record.context * factor - EMPTY_SUM;
    if utility.is_nan() {
        nan_utility()
    } else {
        utility
    }
}

/// The utility of a NaN score (out of line: only overflowing inputs give one).
#[cold]
#[inline(never)]
fn nan_utility() -> f64 {
    f64::NEG_INFINITY
}
