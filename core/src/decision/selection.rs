//! Stochastic selection over a ranked list: top-k softmax (max-subtracted, so it never
//! overflows) and convention breaking. Imperfection is a design principle: always taking the
//! maximum makes NPCs predictable and exploitable.

use std::borrow::Borrow;

use crate::decision::scored::Scored;
use crate::decision::tuning::Tuning;
use crate::rng::DetRng;

/// The outcome of sampling a ranked list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pick {
    /// Index into the ranked list.
    pub index: usize,
    /// Whether convention breaking replaced the softmax pick.
    pub convention_broken: bool,
}

/// Samples the candidates `all` (in any order) given `ranked`, the best of them in the order of
/// record (by descending utility; at least the first `selection_top_k`, or all): the pick's
/// index is its place in that order, which may lie beyond `ranked` only when convention
/// breaking chose it. Draw order is fixed: one uniform for the
/// softmax when more than one candidate competes, then, when convention breaking is on, one
/// uniform for the roll and one for the replacement. The action the agent has just completed
/// (its `M_repeat` below 1) takes no part in the softmax while another of the top k has a
/// positive utility: near zero, a softmax weighs every candidate almost alike, so a penalty
/// alone would still repeat it now and then.
pub(crate) fn pick<C: Borrow<S>, S: Scored>(
    ranked: &[C],
    all: &[S],
    tuning: &Tuning,
    rng: &mut DetRng,
) -> Option<Pick> {
    let best = ranked.first()?.borrow().compact().utility;
    let top_k = tuning.selection_top_k.max(1).min(all.len());
    let mut index = 0;
    if top_k > 1 {
        let alternative = ranked[..top_k]
            .iter()
            .map(|c| c.borrow().compact())
            .any(|c| !c.held_back && c.utility > 0.0);
        let weight = |c: &S| {
            let c = c.compact();
            if alternative && c.held_back {
                return 0.0;
            }
            let exponent = (c.utility - best) / tuning.temperature;
            // e^0 is exactly 1: the best, and any tied with it, need no `exp`.
            let w = if exponent == 0.0 { 1.0 } else { exponent.exp() };
            if w.is_finite() { w } else { 0.0 }
        };
        // The first weights are kept on the stack so each `exp` runs once.
        const KEPT: usize = 16;
        let mut kept = [0.0f64; KEPT];
        let total: f64 = ranked[..top_k]
            .iter()
            .map(Borrow::borrow)
            .enumerate()
            .map(|(i, c)| {
                let w = weight(c);
                if let Some(slot) = kept.get_mut(i) {
                    *slot = w;
                }
                w
            })
            .sum();
        let mut remaining = rng.next_unit() * total;
        index = top_k - 1;
        for (i, candidate) in ranked[..top_k].iter().map(Borrow::borrow).enumerate() {
            remaining -= kept.get(i).copied().unwrap_or_else(|| weight(candidate));
            if remaining < 0.0 {
                index = i;
                break;
            }
        }
        if total <= 0.0 {
            index = 0;
        }
    }
    let mut convention_broken = false;
    if tuning.convention_break_probability > 0.0
        && rng.next_unit() < tuning.convention_break_probability
    {
        // Those as good as the best lead the order of record.
        let first_lower = all.iter().filter(|c| c.compact().utility >= best).count();
        if first_lower < all.len() {
            index = first_lower + rng.next_index(all.len() - first_lower);
            convention_broken = true;
        }
    }
    Some(Pick {
        index,
        convention_broken,
    })
}
