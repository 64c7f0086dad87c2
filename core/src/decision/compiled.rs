//! The world's actions compiled: one flat record per action, built once per
//! [`crate::decision::decider::Decider::decide_batch`] (shared by all its agents and worker
//! threads), once per zone (see below) or per [`crate::decision::decider::Decider::compile`], holding what scoring a plain
//! agent reads of an action (its radius, deltas and tags, padded to a fixed length so the
//! candidate loop has no loop of its own, and its place, so a loop over many providers' records
//! knows whose each is) and what depends only on the world and the tuning (`M_context`, the
//! weighted intrinsic priority), so scoring a candidate is a few multiplications over
//! contiguous memory. The names the records read are numbered locally, so
//! an agent's tables of what they mean to it are as short as they are few, and their distinct
//! tag sets are listed, so an agent scoring them all multiplies each set's modifiers once.
//! A zone keeps its records between ticks ([`crate::life::simulator::ProviderIndex`]) and
//! brings them up to date when the world's contexts change ([`CompiledActions::reprice`]);
//! whether a provider is full is read from the world, never recorded.
//!
//! An action a record cannot stand for — one with an action slot limit, preconditions or
//! costs, or more deltas or tags than a record holds — is marked general and is gated and
//! scored from the world itself, as [`crate::decision::decider::Decider::decide`] does. The
//! records are only valid for the providers and actions they were built from.

use std::collections::BTreeMap;

use crate::decision::tuning::Tuning;
use crate::decision::world::{AdvertisedAction, Context, Position, World, context_multiplier};
use crate::vocabulary::Symbol;

/// Deltas a record holds; an action with more is general.
pub(crate) const RECORD_DELTAS: usize = 2;
/// Tags a record holds; an action with more is general.
pub(crate) const RECORD_TAGS: usize = 3;
/// What a symbol index with no local index maps to.
const NO_LOCAL: u32 = u32::MAX;
/// The amount of a padding delta: its gain is -0.0 under the padding term (see
/// `compiled_scoring`), and adding -0.0 leaves any sum as it is, bit for bit.
pub(crate) const PADDING_DELTA: f64 = -0.0;

/// One action as a plain agent's scoring reads it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CompiledAction {
    /// Whether the action must be gated and scored from the world (see the module comment).
    pub(crate) general: bool,
    /// Its radius; infinite when unlimited (no distance is farther).
    pub(crate) radius: f64,
    /// `intrinsic_priority · priority_weight`, as a plain agent's score computes it.
    pub(crate) priority: f64,
    /// `M_context` over the world's contexts.
    pub(crate) context: f64,
    /// Its deltas (local index of the name among the deltas' names, amount), in order, then
    /// padding: the index past the last name with an amount of -0.0, whose term makes it add
    /// exactly -0.0 to a benefit, which leaves every sum as it is.
    pub(crate) deltas: [(u32, f64); RECORD_DELTAS],
    /// Its tags' local indices among the tags, in order, then padding: the index past the last
    /// tag, which reads as modifier 1, so it multiplies a product by exactly 1.
    pub(crate) tags: [u32; RECORD_TAGS],
    /// The index of its tags among the distinct tag sets of the records.
    pub(crate) tag_set: u32,
    /// Its provider's index in the world and its own in the provider ([`NO_LOCAL`] past
    /// 2³² - 1), so a loop over the records of many providers knows whose each is.
    pub(crate) place: (u32, u32),
}

/// A provider as the compiled loop reads it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CompiledProvider {
    /// Where it is.
    pub(crate) position: Position,
    /// Where its records start and end in the actions.
    range: (usize, usize),
    /// Whether any of its actions is general.
    pub(crate) general: bool,
}

/// Names numbered in order of first use.
#[derive(Clone, Debug, Default)]
pub(crate) struct Numbering {
    /// Per symbol index (up to the highest numbered), its local index, or [`NO_LOCAL`].
    local_of: Vec<u32>,
    /// The symbols of the local indices, in order.
    names: Vec<Symbol>,
}

impl Numbering {
    /// The local index of `symbol`, if it is numbered.
    #[inline(always)]
    pub(crate) fn local(&self, symbol: Symbol) -> Option<usize> {
        match self.local_of.get(symbol.index()) {
            Some(&local) if local != NO_LOCAL => Some(local as usize),
            _ => None,
        }
    }

    /// The symbols of the local indices, in order.
    pub(crate) fn names(&self) -> &[Symbol] {
        &self.names
    }

    /// How long a table of the names and the padding entry after them is.
    pub(crate) fn table_len(&self) -> usize {
        self.names.len() + 1
    }

    /// The local index of `symbol`, numbering it if it is new ([`NO_LOCAL`] past `u32`).
    fn number(&mut self, symbol: Symbol) -> u32 {
        let index = symbol.index();
        if self.local_of.len() <= index {
            self.local_of.resize(index + 1, NO_LOCAL);
        }
        if self.local_of[index] == NO_LOCAL
            && let Ok(local) = u32::try_from(self.names.len())
            && local != NO_LOCAL
        {
            self.local_of[index] = local;
            self.names.push(symbol);
        }
        self.local_of[index]
    }

    /// The padding index: the one past the last name.
    fn padding(&self) -> u32 {
        u32::try_from(self.names.len()).unwrap_or(NO_LOCAL)
    }
}

/// Every provider's actions compiled, in the world's order, with the names their records read
/// numbered (the deltas' names and the tags apart), so an agent's tables of what they mean to
/// it are as short as they are few, whatever the vocabulary's size.
#[derive(Clone, Debug)]
pub(crate) struct CompiledActions {
    providers: Vec<CompiledProvider>,
    actions: Vec<CompiledAction>,
    /// The names the records' deltas read.
    pub(crate) needs: Numbering,
    /// The tags the records read.
    pub(crate) tags: Numbering,
    /// The distinct tags of records (padded local indices), in order of first use: actions
    /// share a few sets, so an agent that scores them all multiplies each set's modifiers once.
    tag_sets: Vec<[u32; RECORD_TAGS]>,
    /// Whether any action is general.
    any_general: bool,
    /// The contexts and the priority weight `context` and `priority` were computed under.
    priced_under: (Vec<Context>, f64),
}

impl CompiledActions {
    /// Compiles the actions of `world` under `tuning`.
    pub(crate) fn new(world: &World, tuning: &Tuning) -> Self {
        let mut compiled = Self {
            providers: Vec::with_capacity(world.providers.len()),
            actions: Vec::new(),
            needs: Numbering::default(),
            tags: Numbering::default(),
            tag_sets: Vec::new(),
            any_general: false,
            priced_under: (world.contexts.clone(), tuning.priority_weight),
        };
        let number = |index: usize| u32::try_from(index).unwrap_or(NO_LOCAL);
        for (provider_index, provider) in world.providers.iter().enumerate() {
            let start = compiled.actions.len();
            for (action_index, action) in provider.actions.iter().enumerate() {
                let mut record = compiled.compile(action, world, tuning);
                record.place = (number(provider_index), number(action_index));
                compiled.actions.push(record);
            }
            compiled.providers.push(CompiledProvider {
                position: provider.position,
                range: (start, compiled.actions.len()),
                general: false,
            });
        }
        // The padding indices are those past the last names, known only now, and so are the
        // tag sets.
        let (need_padding, tag_padding) = (compiled.needs.padding(), compiled.tags.padding());
        let mut sets = BTreeMap::new();
        for record in &mut compiled.actions {
            for (index, _) in &mut record.deltas {
                if *index == NO_LOCAL {
                    *index = need_padding;
                }
            }
            for index in &mut record.tags {
                if *index == NO_LOCAL {
                    *index = tag_padding;
                }
            }
            let next = u32::try_from(compiled.tag_sets.len()).unwrap_or(NO_LOCAL);
            record.tag_set = *sets.entry(record.tags).or_insert(next);
            if record.tag_set == next {
                compiled.tag_sets.push(record.tags);
            }
            // Past 2³² - 1 sets a record cannot number its own.
            record.general |= record.tag_set == NO_LOCAL;
        }
        for provider in &mut compiled.providers {
            let (start, end) = provider.range;
            provider.general = compiled.actions[start..end].iter().any(|r| r.general);
            compiled.any_general |= provider.general;
        }
        compiled
    }

    /// Brings the records up to `world`'s contexts and `tuning`'s priority weight — the only
    /// inputs of a record that change while the world's providers and actions do not (a
    /// provider's free slots are read from the world when scoring). Costs nothing unless one
    /// of them changed since the records were built or last brought up to date.
    pub(crate) fn reprice(&mut self, world: &World, tuning: &Tuning) {
        let (contexts, priority_weight) = &self.priced_under;
        if *contexts == world.contexts
            && priority_weight.to_bits() == tuning.priority_weight.to_bits()
        {
            return;
        }
        let actions = world.providers.iter().flat_map(|p| &p.actions);
        for (record, action) in self.actions.iter_mut().zip(actions) {
            (record.context, record.priority) = Self::price(action, world, tuning);
        }
        self.priced_under = (world.contexts.clone(), tuning.priority_weight);
    }

    /// An action's `M_context` over `world`'s contexts and its weighted intrinsic priority.
    fn price(action: &AdvertisedAction, world: &World, tuning: &Tuning) -> (f64, f64) {
        // The same products in the same order as the scoring loop's.
        let mut context = 1.0;
        for tag in &action.tags {
            context *= context_multiplier(&world.contexts, *tag);
        }
        // A plain agent has no goal bonus: its score adds a bonus of 0.
        let no_goal_bonus = 0.0;
        let priority = (action.intrinsic_priority + no_goal_bonus) * tuning.priority_weight;
        (context, priority)
    }

    /// The providers, in the world's order.
    pub(crate) fn providers(&self) -> &[CompiledProvider] {
        &self.providers
    }

    /// The records of `provider`'s actions, in order.
    #[inline(always)]
    pub(crate) fn records(&self, provider: &CompiledProvider) -> &[CompiledAction] {
        // Every provider's range lies within the actions, as `new` builds them.
        let (start, end) = provider.range;
        &self.actions[start..end]
    }

    /// The records of the actions of `run`, consecutive providers of [`Self::providers`], in
    /// order: those of the first, then the next, and so on.
    #[inline(always)]
    pub(crate) fn run_records(&self, run: &[CompiledProvider]) -> &[CompiledAction] {
        match (run.first(), run.last()) {
            (Some(first), Some(last)) => &self.actions[first.range.0..last.range.1],
            _ => &[],
        }
    }

    /// The distinct tag sets of the records, by [`CompiledAction::tag_set`].
    pub(crate) fn tag_sets(&self) -> &[[u32; RECORD_TAGS]] {
        &self.tag_sets
    }

    /// How many actions the world has.
    pub(crate) fn action_count(&self) -> usize {
        self.actions.len()
    }

    /// Whether any action must be gated and scored from the world.
    pub(crate) fn any_general(&self) -> bool {
        self.any_general
    }

    fn compile(
        &mut self,
        action: &AdvertisedAction,
        world: &World,
        tuning: &Tuning,
    ) -> CompiledAction {
        let mut general = action.capacity != 0
            || !action.preconditions.is_empty()
            || !action.costs.is_empty()
            || action.deltas.len() > RECORD_DELTAS
            || action.tags.len() > RECORD_TAGS;
        let mut deltas = [(NO_LOCAL, PADDING_DELTA); RECORD_DELTAS];
        let mut tags = [NO_LOCAL; RECORD_TAGS];
        if !general {
            for (slot, (name, delta)) in deltas.iter_mut().zip(&action.deltas) {
                *slot = (self.needs.number(*name), *delta);
            }
            for (slot, tag) in tags.iter_mut().zip(&action.tags) {
                *slot = self.tags.number(*tag);
            }
            // Past 2³² - 1 names a record cannot number them all.
            let unnumbered = |count: usize| count == NO_LOCAL as usize;
            general = unnumbered(self.needs.names.len()) || unnumbered(self.tags.names.len());
        }
        let (context, priority) = Self::price(action, world, tuning);
        CompiledAction {
            general,
            radius: action.radius.unwrap_or(f64::INFINITY),
            priority,
            context,
            deltas,
            tags,
            tag_set: 0,
            place: (NO_LOCAL, NO_LOCAL),
        }
    }
}
