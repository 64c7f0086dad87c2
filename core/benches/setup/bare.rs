//! The baseline of R1: the same formula over the same candidates as a plain loop over flat
//! arrays, with none of the engine's generality (no gates but the radius, no breakdowns, no
//! removed candidates, no ranking kept), shared by `benches/decide.rs` and
//! `examples/decide_count.rs`. What only the world decides (the actions' deltas, tags, radius,
//! weighted priority and `M_context`) is laid out once, as a caller hand-writing R1 would; what
//! the agent decides (its terms, tag modifiers and distances) is computed every decide, as the
//! engine computes it. [`BareR1::new`] checks that it picks exactly what
//! `CompiledWorld::decide` picks, so the baseline cannot drift from the formula.

use geppetto_core::rng::DetRng;
use geppetto_core::{Agent, CompiledWorld, Position, Symbol, Tuning, World};

/// One action of R1, flat.
struct BareAction {
    /// Its provider's index (in `BareR1::positions`).
    provider: usize,
    /// Its index in its provider.
    action: usize,
    /// Its deltas: the index of the need in `BareR1::needs`, and the amount.
    deltas: [(usize, f64); 2],
    /// Its tags' indices in `BareR1::tags`.
    tags: [usize; 3],
    /// `intrinsic_priority · priority_weight`.
    priority: f64,
    /// `M_context`: `Π m·m` over the contexts of its tags.
    context: f64,
    /// Its radius.
    radius: f64,
}

/// R1's world laid out for a plain loop.
pub struct BareR1 {
    tuning: Tuning,
    /// The providers' positions.
    positions: Vec<Position>,
    actions: Vec<BareAction>,
    /// The names the deltas read, by index.
    needs: Vec<Symbol>,
    /// The tags the actions carry, by index.
    tags: Vec<Symbol>,
}

/// A pick: provider index, action index, utility.
pub type BarePick = (usize, usize, f64);

impl BareR1 {
    /// R1's `world` laid out flat for `agent`, checked against `compiled` (the same world
    /// compiled by a decider with `tuning`) over a few seeds.
    pub fn new(tuning: &Tuning, agent: &Agent, world: &World, compiled: &CompiledWorld) -> Self {
        let mut needs = Vec::new();
        let mut tags = Vec::new();
        let index_of =
            |names: &mut Vec<Symbol>, name: Symbol| match names.iter().position(|&n| n == name) {
                Some(index) => index,
                None => {
                    names.push(name);
                    names.len() - 1
                }
            };
        let mut actions = Vec::new();
        for (p, provider) in world.providers.iter().enumerate() {
            for (a, action) in provider.actions.iter().enumerate() {
                assert!(action.deltas.len() == 2 && action.tags.len() == 3);
                let delta = |i: usize| action.deltas[i];
                let deltas = [0, 1].map(|i| (index_of(&mut needs, delta(i).0), delta(i).1));
                let tag_indices = [0, 1, 2].map(|i| index_of(&mut tags, action.tags[i]));
                let mut context = 1.0;
                for &tag in &action.tags {
                    for c in &world.contexts {
                        if let Some(&(_, m)) = c.tag_multipliers.iter().find(|(t, _)| *t == tag) {
                            context *= m * m;
                        }
                    }
                }
                actions.push(BareAction {
                    provider: p,
                    action: a,
                    deltas,
                    tags: tag_indices,
                    priority: (action.intrinsic_priority + 0.0) * tuning.priority_weight,
                    context,
                    radius: action.radius.unwrap_or(f64::INFINITY),
                });
            }
        }
        let bare = Self {
            tuning: tuning.clone(),
            positions: world.providers.iter().map(|p| p.position).collect(),
            actions,
            needs,
            tags,
        };
        for seed in 0..64 {
            let engine = compiled.decide(agent, seed).selected;
            let engine = engine.map(|c| (c.provider, c.action, c.utility.to_bits()));
            let bare_pick = bare
                .decide(agent, seed)
                .map(|(p, a, u)| (p, a, u.to_bits()));
            assert_eq!(
                bare_pick, engine,
                "the bare loop picks otherwise (seed {seed})"
            );
        }
        bare
    }

    /// The pick of `agent` with `seed`: every action scored, the best 3 kept (ties to the
    /// earlier), one softmax draw among them.
    pub fn decide(&self, agent: &Agent, seed: u64) -> Option<BarePick> {
        let tuning = &self.tuning;
        // The agent's terms (weighted pressure, headroom) and tag modifiers, by index.
        let mut terms = [(0.0, 0.0); 8];
        for (slot, &name) in terms.iter_mut().zip(&self.needs) {
            if let Some(c) = agent.considerations.iter().find(|c| c.name == name) {
                let pressure =
                    c.curve()
                        .pressure(c.value, c.min(), c.max(), tuning.convex_exponent);
                *slot = (c.weight * pressure, (c.max() - c.value).max(0.0));
            }
        }
        let mut modifiers = [1.0; 8];
        for (slot, &tag) in modifiers.iter_mut().zip(&self.tags) {
            if let Some(&(_, m)) = agent.tag_modifiers.iter().find(|(t, _)| *t == tag) {
                *slot = m;
            }
        }
        let mut distances = [(0.0, 0.0); 16];
        for (slot, position) in distances.iter_mut().zip(&self.positions) {
            let distance = agent.position.distance_to(position);
            *slot = (distance, 1.0 / (1.0 + distance / tuning.distance_reference));
        }
        // The best 3 (utility, action index), best first.
        let mut best = [(f64::NEG_INFINITY, usize::MAX); 3];
        for (i, action) in self.actions.iter().enumerate() {
            let (distance, distance_factor) = distances[action.provider];
            if distance > action.radius {
                continue;
            }
            let mut benefit = -0.0;
            for &(need, delta) in &action.deltas {
                let (weighted_pressure, headroom) = terms[need];
                benefit += weighted_pressure * if headroom < delta { headroom } else { delta };
            }
            let [t0, t1, t2] = action.tags;
            let personality = modifiers[t0] * modifiers[t1] * modifiers[t2];
            let utility =
                (benefit + action.priority) * personality * action.context * distance_factor;
            if utility > best[2].0 {
                let mut at = 2;
                while at > 0 && utility > best[at - 1].0 {
                    best[at] = best[at - 1];
                    at -= 1;
                }
                best[at] = (utility, i);
            }
        }
        let kept = best.iter().take_while(|(_, i)| *i != usize::MAX).count();
        let top = best[0].0;
        let weights = best.map(|(u, _)| ((u - top) / tuning.temperature).exp());
        let total: f64 = weights[..kept].iter().sum();
        let mut remaining = DetRng::new(seed).next_unit() * total;
        let mut pick = kept.checked_sub(1)?;
        for (i, w) in weights[..kept].iter().enumerate() {
            remaining -= w;
            if remaining < 0.0 {
                pick = i;
                break;
            }
        }
        let (utility, index) = best[pick];
        let action = &self.actions[index];
        Some((action.provider, action.action, utility))
    }
}
