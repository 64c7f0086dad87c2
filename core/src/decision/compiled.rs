//! The world's actions compiled for a batch: one flat record per action, built once per
//! [`crate::decision::decider::Decider::decide_batch`] and shared by all its agents and worker
//! threads, holding what scoring a plain agent reads of an action (its radius, deltas and tags,
//! padded to a fixed length so the candidate loop has no loop of its own) and what depends only
//! on the world and the tuning (`M_context`, the weighted intrinsic priority), so scoring a
//! candidate is a few multiplications over contiguous memory.
//!
//! An action a record cannot stand for — one with an action slot limit, preconditions or
//! costs, or more deltas or tags than a record holds — is marked general and is gated and
//! scored from the world itself, as [`crate::decision::decider::Decider::decide`] does. The
//! records are only valid for the world and tuning they were built from.

use crate::decision::tuning::Tuning;
use crate::decision::world::{AdvertisedAction, World, context_multiplier};
use crate::vocabulary::Symbol;

/// Deltas a record holds; an action with more is general.
pub(crate) const RECORD_DELTAS: usize = 2;
/// Tags a record holds; an action with more is general.
pub(crate) const RECORD_TAGS: usize = 3;
/// The symbol index a record's unused delta or tag slot holds: beyond any symbol table (one
/// reaching it would hold 2³² entries), so it reads as a name the agent does not know (no term,
/// modifier 1), which adds nothing to a benefit and multiplies a product by exactly 1.
pub(crate) const PADDING: u32 = u32::MAX;

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
    /// Its deltas (symbol index, amount), in order, then padding.
    pub(crate) deltas: [(u32, f64); RECORD_DELTAS],
    /// Its tags' symbol indices, in order, then padding.
    pub(crate) tags: [u32; RECORD_TAGS],
}

/// Every provider's actions compiled, in the world's order.
pub(crate) struct CompiledActions {
    /// Per provider: where its records start and end in `actions`, and whether it has no free
    /// slot.
    providers: Vec<(usize, usize, bool)>,
    actions: Vec<CompiledAction>,
}

impl CompiledActions {
    /// Compiles the actions of `world` under `tuning`.
    pub(crate) fn new(world: &World, tuning: &Tuning) -> Self {
        let mut providers = Vec::with_capacity(world.providers.len());
        let mut actions = Vec::new();
        for provider in &world.providers {
            let start = actions.len();
            actions.extend(provider.actions.iter().map(|a| compile(a, world, tuning)));
            providers.push((start, actions.len(), provider.free_slots() == 0));
        }
        Self { providers, actions }
    }

    /// The records of provider `provider`'s actions, in order, unless it has no free slot
    /// (then, and beyond the world, none).
    #[inline(always)]
    pub(crate) fn of_free(&self, provider: usize) -> &[CompiledAction] {
        match self.providers.get(provider) {
            Some(&(start, end, false)) => self.actions.get(start..end).unwrap_or(&[]),
            _ => &[],
        }
    }
}

fn compile(action: &AdvertisedAction, world: &World, tuning: &Tuning) -> CompiledAction {
    let general = action.capacity != 0
        || !action.preconditions.is_empty()
        || !action.costs.is_empty()
        || action.deltas.len() > RECORD_DELTAS
        || action.tags.len() > RECORD_TAGS;
    let index = |symbol: Symbol| u32::try_from(symbol.index()).unwrap_or(PADDING);
    let mut deltas = [(PADDING, 0.0); RECORD_DELTAS];
    for (slot, (name, delta)) in deltas.iter_mut().zip(&action.deltas) {
        *slot = (index(*name), *delta);
    }
    let mut tags = [PADDING; RECORD_TAGS];
    for (slot, tag) in tags.iter_mut().zip(&action.tags) {
        *slot = index(*tag);
    }
    // The same products in the same order as the scoring loop's.
    let mut context = 1.0;
    for tag in &action.tags {
        context *= context_multiplier(&world.contexts, *tag);
    }
    // A plain agent has no goal bonus: its score adds a bonus of 0.
    let no_goal_bonus = 0.0;
    CompiledAction {
        general,
        radius: action.radius.unwrap_or(f64::INFINITY),
        priority: (action.intrinsic_priority + no_goal_bonus) * tuning.priority_weight,
        context,
        deltas,
        tags,
    }
}
