//! Scoring over a world's compiled actions ([`crate::decision::compiled`]): an agent that is
//! plain (see [`ScoringView`]) gets two short tables of what the records' names mean to it (its
//! terms by delta name, its modifiers by tag; then, for a decide, the product of each tag set),
//! and its candidates are scored off the records with them; general actions and other agents
//! are gated and scored from the world as [`crate::decision::scoring`] does. Either way the
//! candidates, their bits, the removed ones and the draws are those of scoring the world.

use crate::decision::agent::Agent;
use crate::decision::compiled::{CompiledAction, CompiledActions, CompiledProvider, RECORD_TAGS};
use crate::decision::scored::{Breakdown, Scored};
use crate::decision::scoring::{
    EMPTY_SUM, Ineligible, IneligibleReason, ScoringTerm, ScoringView, SymbolEntry,
    distance_factor, each_modifier, each_term, gain, utility,
};
use crate::decision::tuning::Tuning;
use crate::decision::world::World;
use crate::rng::DetRng;
use crate::vocabulary::Symbol;

/// Where the candidates a compiled evaluation removes are recorded: a list (as a ranking reports
/// them), or nowhere (`()`: a batch never reports them, and its loop has no step for them).
pub(crate) trait Removals {
    /// The list to record them in, if any.
    fn list(&mut self) -> Option<&mut Vec<Ineligible>>;
}

impl Removals for Vec<Ineligible> {
    #[inline(always)]
    fn list(&mut self) -> Option<&mut Vec<Ineligible>> {
        Some(self)
    }
}

impl Removals for () {
    #[inline(always)]
    fn list(&mut self) -> Option<&mut Vec<Ineligible>> {
        None
    }
}

/// The term of a name no consideration of the agent's has: a NaN headroom, which a real term's
/// never is (`max(0.0)` made it), marks it.
pub(crate) const NO_TERM: ScoringTerm = ScoringTerm {
    weighted_pressure: 0.0,
    headroom: f64::NAN,
};

/// The term of the padding index: a padding delta
/// ([`crate::decision::compiled::PADDING_DELTA`], -0.0) gains -0.0 under
/// an infinite headroom, times 1 is -0.0, which added leaves a benefit as it is: a record with
/// fewer deltas than it holds is scored by the same steps as a full one.
pub(crate) const PADDING_TERM: ScoringTerm = ScoringTerm {
    weighted_pressure: 1.0,
    headroom: f64::INFINITY,
};

/// A table read by local index: a slice, or a whole array of the stack, read at the index
/// modulo its length (a power of two: a mask, and no bounds check). An array is only read for a
/// compiled world whose table fits in it, so every index it is read at is below its length.
trait Table<T> {
    /// The entry at `index`.
    fn at(&self, index: u32) -> T;
}

impl<T: Copy> Table<T> for [T] {
    #[inline(always)]
    fn at(&self, index: u32) -> T {
        self[index as usize]
    }
}

impl<T: Copy, const N: usize> Table<T> for [T; N] {
    #[inline(always)]
    fn at(&self, index: u32) -> T {
        self[index as usize % N]
    }
}

/// How the compiled loop finds a record's `M_personality` (its tags' modifiers multiplied in
/// order, from 1; no domain preference).
trait Personality {
    /// The personality of `record`.
    fn of(&self, record: &CompiledAction) -> f64;
}

/// Each tag's modifier by local index (padding reads 1), multiplied per record.
struct ByTag<'t, M: ?Sized>(&'t M);

impl<M: Table<f64> + ?Sized> ByTag<'_, M> {
    /// The product of the modifiers of `tags`, in order, from 1.
    #[inline(always)]
    fn of_tags(&self, tags: &[u32; RECORD_TAGS]) -> f64 {
        let mut product = 1.0;
        for &tag in tags {
            product *= self.0.at(tag);
        }
        product
    }
}

impl<M: Table<f64> + ?Sized> Personality for ByTag<'_, M> {
    #[inline(always)]
    fn of(&self, record: &CompiledAction) -> f64 {
        self.of_tags(&record.tags)
    }
}

/// Each tag set's product, computed as [`ByTag`] computes it, by set.
struct BySet<'t, S: ?Sized>(&'t S);

impl<S: Table<f64> + ?Sized> Personality for BySet<'_, S> {
    #[inline(always)]
    fn of(&self, record: &CompiledAction) -> f64 {
        self.0.at(record.tag_set)
    }
}

/// Up to this many names of deltas (with padding), a compiled world's table of them is kept on
/// the stack.
pub(crate) const STACK_TERMS: usize = 16;
/// Up to this many tags (with padding) or tag sets, a compiled world's tables of them are kept
/// on the stack.
pub(crate) const STACK_MODIFIERS: usize = 32;
const _: () = assert!(STACK_TERMS.is_power_of_two() && STACK_MODIFIERS.is_power_of_two());

/// Where a compiled world's tables go when they outgrow the stack (a batch reuses them from
/// one agent to the next).
#[derive(Default)]
pub(crate) struct CompiledBuffers {
    terms: Vec<ScoringTerm>,
    modifiers: Vec<f64>,
    sets: Vec<f64>,
}

/// The first `len` of `stack` (all `neutral`) when they fit, else `heap` holding `len`
/// `neutral`s.
fn neutral_buffer<'b, T: Copy, const N: usize>(
    stack: &'b mut [T; N],
    heap: &'b mut Vec<T>,
    len: usize,
    neutral: T,
) -> &'b mut [T] {
    match stack.get_mut(..len) {
        Some(buffer) => buffer,
        None => {
            heap.clear();
            heap.resize(len, neutral);
            heap
        }
    }
}

/// Gates then scores, for `agent`, every action of the providers `placed` gives (index in the
/// world, compiled provider and distance from the agent, in that order), reading the actions of a plain agent
/// from `compiled` (the records of the same world, under the same tuning): the same
/// candidates, with the same bits, and the same removed ones with the same reasons, as
/// [`ScoringView::evaluate_providers`] over the view [`ScoringView::new`] prepares (in
/// `table`), with the same draws from `rng`. `EVERY`: `placed` is every provider (a decide), so
/// each tag set's product is computed once rather than per record.
pub(crate) fn evaluate_compiled<'c, C: Scored, const EVERY: bool>(
    (table, heap): (&mut Vec<SymbolEntry>, &mut CompiledBuffers),
    (agent, rng): (&Agent, &mut DetRng),
    (world, compiled): (&World, &'c CompiledActions),
    weights: (&Tuning, &[(Symbol, f64)]),
    placed: impl IntoIterator<Item = (usize, &'c CompiledProvider, f64)>,
    (ranked, removals): (&mut Vec<C>, &mut impl Removals),
) {
    let contexts = (world.contexts.as_slice(), world.now_hours);
    let (_, plain) = ScoringView::kind(agent, world.now_hours);
    if !plain {
        let view = ScoringView::new(table, agent, contexts, weights.0, weights.1, rng);
        let placed = placed
            .into_iter()
            .map(|(index, _, distance)| (index, distance));
        view.evaluate::<C, false>(world, placed, weights.0, ranked, removals.list());
        return;
    }
    let mut stack_terms = [NO_TERM; STACK_TERMS];
    let mut stack_modifiers = [1.0; STACK_MODIFIERS];
    let terms_len = compiled.needs.table_len();
    let modifiers_len = compiled.tags.table_len();
    let (view, every_term) = {
        let terms = neutral_buffer(&mut stack_terms, &mut heap.terms, terms_len, NO_TERM);
        let modifiers = neutral_buffer(
            &mut stack_modifiers,
            &mut heap.modifiers,
            modifiers_len,
            1.0,
        );
        let view = if compiled.any_general() {
            // General actions read the table by symbol; the records read theirs off it.
            let view = ScoringView::new(table, agent, contexts, weights.0, weights.1, rng);
            for (slot, name) in terms.iter_mut().zip(compiled.needs.names()) {
                if let Some(term) = view.symbol(*name).term() {
                    *slot = term;
                }
            }
            for (slot, tag) in modifiers.iter_mut().zip(compiled.tags.names()) {
                *slot = view.symbol(*tag).personality();
            }
            view
        } else {
            // The first term and modifier of a name count, as in the table by symbol.
            each_term(agent, weights, rng, |name, term| {
                if let Some(slot) = compiled.needs.local(name).and_then(|i| terms.get_mut(i))
                    && slot.headroom.is_nan()
                {
                    *slot = term;
                }
            });
            each_modifier(agent, |tag, modifier| {
                if let Some(slot) = compiled.tags.local(tag).and_then(|i| modifiers.get_mut(i)) {
                    *slot = modifier;
                }
            });
            ScoringView::without_table(agent)
        };
        let names = compiled.needs.names().len();
        if let Some(padding) = terms.get_mut(names) {
            *padding = PADDING_TERM;
        }
        // When the agent has a term for every name, no record's delta needs a check for one.
        let every_term = terms[..names.min(terms.len())]
            .iter()
            .all(|term| !term.headroom.is_nan());
        (view, every_term)
    };
    // The tables as `neutral_buffer` placed them.
    let terms_fit = terms_len <= STACK_TERMS;
    let terms: &[ScoringTerm] = if terms_fit { &stack_terms } else { &heap.terms };
    let modifiers_fit = modifiers_len <= STACK_MODIFIERS;
    let modifiers: &[f64] = if modifiers_fit {
        &stack_modifiers
    } else {
        &heap.modifiers
    };
    let tuning = weights.0;
    if EVERY {
        let mut stack_sets = [1.0; STACK_MODIFIERS];
        let sets_len = compiled.tag_sets().len();
        let sets = neutral_buffer(&mut stack_sets, &mut heap.sets, sets_len, 1.0);
        for (product, tags) in sets.iter_mut().zip(compiled.tag_sets()) {
            *product = ByTag(modifiers).of_tags(tags);
        }
        if terms_fit && sets_len <= STACK_MODIFIERS {
            let tables = (compiled, (&stack_terms, every_term), &BySet(&stack_sets));
            view.evaluate_records(world, tables, placed, tuning, (ranked, removals));
        } else {
            let tables = (compiled, (terms, every_term), &BySet(&*sets));
            view.evaluate_records(world, tables, placed, tuning, (ranked, removals));
        }
    } else if terms_fit && modifiers_fit {
        let tables = (
            compiled,
            (&stack_terms, every_term),
            &ByTag(&stack_modifiers),
        );
        view.evaluate_records(world, tables, placed, tuning, (ranked, removals));
    } else {
        let tables = (compiled, (terms, every_term), &ByTag(modifiers));
        view.evaluate_records(world, tables, placed, tuning, (ranked, removals));
    }
}

impl ScoringView<'_> {
    /// [`ScoringView::evaluate_providers`] for a plain view, reading the actions from
    /// `compiled` with `tables` (see [`evaluate_compiled`]): the terms with whether the agent
    /// has one for every name of the records' deltas, and the personality.
    fn evaluate_records<'c, C: Scored>(
        &self,
        world: &World,
        (compiled, (terms, every_term), personality): (
            &CompiledActions,
            (&(impl Table<ScoringTerm> + ?Sized), bool),
            &impl Personality,
        ),
        placed: impl IntoIterator<Item = (usize, &'c CompiledProvider, f64)>,
        tuning: &Tuning,
        out: (&mut Vec<C>, &mut impl Removals),
    ) {
        let tables = (compiled, terms, personality);
        if every_term {
            self.score_records::<C, true>(world, tables, placed, tuning, out);
        } else {
            self.score_records::<C, false>(world, tables, placed, tuning, out);
        }
    }

    /// [`ScoringView::evaluate_records`]; `EVERY_TERM`: the agent has a term for every name of
    /// the records' deltas, so none is checked for one.
    #[inline(always)]
    fn score_records<'c, C: Scored, const EVERY_TERM: bool>(
        &self,
        world: &World,
        (compiled, terms, personality): (
            &CompiledActions,
            &(impl Table<ScoringTerm> + ?Sized),
            &impl Personality,
        ),
        placed: impl IntoIterator<Item = (usize, &'c CompiledProvider, f64)>,
        tuning: &Tuning,
        (ranked, removals): (&mut Vec<C>, &mut impl Removals),
    ) {
        let mut remove = |provider: usize, action: usize, reason: IneligibleReason| {
            if let Some(list) = removals.list() {
                list.push(Ineligible {
                    provider,
                    action,
                    reason,
                });
            }
        };
        // Every local index of a record (padding included) is within the table, which is built
        // to the length `compiled` gives.
        let term = |index: u32| terms.at(index);
        for (provider_index, provider, distance) in placed {
            let records = compiled.records(provider);
            if world
                .providers
                .get(provider_index)
                .is_none_or(|p| p.free_slots() == 0)
            {
                // Every action of a full provider fails its first gate.
                for action_index in 0..records.len() {
                    remove(provider_index, action_index, IneligibleReason::ProviderFull);
                }
                continue;
            }
            let distance_factor = distance_factor(distance, tuning);
            // A plain view has no place bonus and no action held back.
            let (place_bonus, repeat) = (0.0, 1.0);
            // A record has no action slot limit, precondition or cost: its radius is the only
            // gate it can fail, checked before this.
            let score_record = |record: &CompiledAction| {
                let mut benefit = EMPTY_SUM;
                for &(index, delta) in &record.deltas {
                    let term = term(index);
                    if EVERY_TERM || !term.headroom.is_nan() {
                        benefit += term.weighted_pressure * gain(delta, term.headroom);
                    }
                }
                let breakdown = Breakdown {
                    benefit,
                    priority: record.priority,
                    personality: personality.of(record),
                    context: record.context,
                    schedule: place_bonus,
                    repeat,
                    distance: distance_factor,
                    foresight: 1.0,
                    // No cost: the sum of nothing.
                    cost: EMPTY_SUM,
                };
                (utility(&breakdown), breakdown)
            };
            let at = |action_index, scored| C::at((provider_index, action_index), distance, scored);
            if !provider.general {
                for (action_index, record) in records.iter().enumerate() {
                    if distance > record.radius {
                        remove(provider_index, action_index, IneligibleReason::OutOfRadius);
                    } else {
                        ranked.push(at(action_index, score_record(record)));
                    }
                }
                continue;
            }
            for (action_index, record) in records.iter().enumerate() {
                let scored = if record.general {
                    let provider = world.providers.get(provider_index);
                    let Some((provider, action)) =
                        provider.and_then(|p| Some((p, p.actions.get(action_index)?)))
                    else {
                        continue;
                    };
                    let gated = (provider, false);
                    if let Some(reason) =
                        self.gate::<true>(gated, action, distance, world.now_hours)
                    {
                        remove(provider_index, action_index, reason);
                        continue;
                    }
                    self.score::<true>(action, (distance_factor, place_bonus, repeat), tuning)
                } else if distance > record.radius {
                    remove(provider_index, action_index, IneligibleReason::OutOfRadius);
                    continue;
                } else {
                    score_record(record)
                };
                ranked.push(at(action_index, scored));
            }
        }
    }
}
