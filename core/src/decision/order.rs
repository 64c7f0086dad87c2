//! The order of record of scored candidates — descending utility in `f64::total_cmp`'s order,
//! ties by provider then action — as a full sort ([`sort_by_utility`], what a ranking reports,
//! of candidates scored in provider order; [`sort_scored_in_any_order`] otherwise) or as only
//! its first few ([`best`], what a batch agent's pick and fallbacks read, of candidates in any
//! order), of full or compact candidates alike (see [`crate::decision::scored`]).

use crate::decision::scored::Scored;

/// Maps a float to an integer with the same total order as `f64::total_cmp`.
pub(crate) fn ordered_bits(value: f64) -> u64 {
    let bits = value.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// Up to this many candidates are sorted with keys on the stack (no allocation).
const STACK_SORT_LIMIT: usize = 64;

/// Sorts `candidates` in place by descending utility; ties keep their order. It sorts one
/// `u64` key per candidate (on the stack for the few dozen candidates a decision usually sees)
/// and then moves each large candidate once, straight to its place, following the cycles of
/// the permutation.
///
/// A key is the utility's order bits (inverted, for descending) with the lowest bits replaced
/// by the input index: the keys are unique, so the standard library's unstable sort (a
/// branch-free sorting network for small inputs of `u64`) gives a stable order, exact except
/// where two utilities agree in every bit but the replaced ones. Those meet in one run of
/// equal high bits, and only such runs are sorted again by the full utility bits.
pub(crate) fn sort_by_utility<C: Scored>(candidates: &mut [C]) {
    let Some(last) = candidates.len().checked_sub(1) else {
        return;
    };
    // Enough low bits for every input index (at least one).
    let index_bits = (usize::BITS - last.leading_zeros()).max(1);
    let mask = u64::MAX >> (u64::BITS - index_bits);
    let full = |c: &C| !ordered_bits(c.compact().utility);
    let key = |(i, c): (usize, &C)| (full(c) & !mask) | i as u64;
    let mut stack = [0u64; STACK_SORT_LIMIT];
    let mut heap = Vec::new();
    let keys = if candidates.len() <= STACK_SORT_LIMIT {
        let keys = &mut stack[..candidates.len()];
        for (slot, k) in keys.iter_mut().zip(candidates.iter().enumerate().map(key)) {
            *slot = k;
        }
        keys
    } else {
        heap.extend(candidates.iter().enumerate().map(key));
        heap.as_mut_slice()
    };
    keys.sort_unstable();
    let source = |k: u64| (k & mask) as usize;
    let same_high_bits = |a: u64, b: u64| (a ^ b) & !mask == 0;
    if keys.windows(2).any(|pair| same_high_bits(pair[0], pair[1])) {
        for run in keys.chunk_by_mut(|&a, &b| same_high_bits(a, b)) {
            if run.len() > 1 {
                run.sort_unstable_by_key(|&k| (full(&candidates[source(k)]), source(k)));
            }
        }
    }
    // Place `at` takes the candidate at `source(keys[at])`; a placed key is rewritten to point
    // at its own place, which marks it done.
    let placed = |k: u64, at: usize| (k & !mask) | at as u64;
    for start in 0..keys.len() {
        let mut from = source(keys[start]);
        if from == start {
            continue;
        }
        let held = candidates[start];
        let mut at = start;
        while from != start {
            candidates[at] = candidates[from];
            keys[at] = placed(keys[at], at);
            at = from;
            from = source(keys[at]);
        }
        candidates[at] = held;
        keys[at] = placed(keys[at], at);
    }
}

/// Up to this many best candidates are kept on the stack while the rest are passed over; more
/// are read off a full sort.
pub(crate) const KEPT_ON_STACK: usize = 16;

/// Sorts candidates scored in any order into the order of record: by place (provider, then
/// action), which is the order they are scored in over providers in order, then by utility.
pub(crate) fn sort_scored_in_any_order<C: Scored>(candidates: &mut [C]) {
    candidates.sort_unstable_by_key(|c| c.compact().place());
    sort_by_utility(candidates);
}

/// Appends to `ranked` the first `count` of `scored` (in any order) in the order of record (all
/// of them when there are no more), without ordering the rest (see [`best_few`]).
pub(crate) fn best<C: Scored>(scored: &[C], count: usize, ranked: &mut Vec<C>) {
    let mut kept = [(0, 0); KEPT_ON_STACK];
    match best_few(scored, count, &mut kept) {
        Some(best) => ranked.extend(best.iter().map(|&(_, index)| scored[index])),
        None => {
            let from = ranked.len();
            ranked.extend_from_slice(scored);
            sort_scored_in_any_order(&mut ranked[from..]);
            ranked.truncate(from + count);
        }
    }
}

/// The first `count` of `scored` (in any order) in the order of record, as their indices in
/// `scored` (each with its sort key), written to `kept`, when there are more than `count` and
/// `count` fits in it (else `None`): each
/// candidate is compared with the worst of the best so far, and the few that beat it are
/// inserted in place by shifting the worse ones down. Of two equal utilities the earlier place
/// (provider, then action) goes first, compared only when the utilities tie. Always inlined: a
/// decision runs it once, and called it costs the call and the spills of its loop.
#[inline(always)]
pub(crate) fn best_few<'k, C: Scored>(
    scored: &[C],
    count: usize,
    kept: &'k mut [(u64, usize); KEPT_ON_STACK],
) -> Option<&'k [(u64, usize)]> {
    let place = |index: usize| scored[index].compact().place();
    let before = |(key, index): (u64, usize), (other_key, other): (u64, usize)| {
        key < other_key || (key == other_key && place(index) < place(other))
    };
    // The first `count` fill the keys; each later one only enters by beating the worst kept.
    let (keys, rest) = keep_first(scored, count, kept, before)?;
    let Some(last) = count.checked_sub(1) else {
        return Some(keys);
    };
    for (index, candidate) in rest.iter().enumerate() {
        let entry = (descending_key(candidate), count + index);
        if before(entry, keys[last]) {
            insert(keys, entry, before);
        }
    }
    Some(keys)
}

/// [`best_few`] of candidates in the order of their places (scored over providers in order, as
/// a decision scores them): a later candidate ties behind every earlier one, so it enters the
/// best only with a strictly greater utility, and one comparison of floats passes over most of
/// them (a float at least the worst kept is a superset of one above it in `total_cmp`'s
/// order, which only the exact keys then decide).
#[inline(always)]
pub(crate) fn best_few_in_place_order<'k, C: Scored>(
    scored: &[C],
    count: usize,
    kept: &'k mut [(u64, usize); KEPT_ON_STACK],
) -> Option<&'k [(u64, usize)]> {
    // Behind every equal key: the later place.
    let before = |(key, _): (u64, usize), (other_key, _): (u64, usize)| key < other_key;
    let (keys, rest) = keep_first(scored, count, kept, before)?;
    let Some(last) = count.checked_sub(1) else {
        return Some(keys);
    };
    let utility = |index: usize| scored[index].compact().utility;
    let mut worst = utility(keys[last].1);
    for (index, candidate) in rest.iter().enumerate() {
        if candidate.compact().utility >= worst {
            let key = descending_key(candidate);
            if key < keys[last].0 {
                insert(keys, (key, count + index), before);
                worst = utility(keys[last].1);
            }
        }
    }
    Some(keys)
}

/// A kept candidate: its key in descending order of utility and its index.
type SortKey = (u64, usize);

/// The keys of the first `count` of `scored`, in order by `before`, written to `kept`, and the
/// candidates after them; `None` when there are no more than `count` or `count` does not fit in
/// `kept` (the best few are then read off a full sort).
#[inline(always)]
fn keep_first<'k, 's, C: Scored>(
    scored: &'s [C],
    count: usize,
    kept: &'k mut [(u64, usize); KEPT_ON_STACK],
    before: impl Fn(SortKey, SortKey) -> bool + Copy,
) -> Option<(&'k mut [SortKey], &'s [C])> {
    if count >= scored.len() || count > KEPT_ON_STACK {
        return None;
    }
    let keys = &mut kept[..count];
    let (first, rest) = scored.split_at(count);
    for (index, candidate) in first.iter().enumerate() {
        insert(
            &mut keys[..=index],
            (descending_key(candidate), index),
            before,
        );
    }
    Some((keys, rest))
}

/// Puts `entry` in order among `keys` (in order but for the last, which it replaces): ahead
/// of every key it is `before`.
#[inline(always)]
fn insert<K: Copy>(keys: &mut [K], entry: K, before: impl Fn(K, K) -> bool) {
    let mut at = keys.len() - 1;
    while at > 0 && before(entry, keys[at - 1]) {
        keys[at] = keys[at - 1];
        at -= 1;
    }
    keys[at] = entry;
}

/// The key of `candidate` in descending order of utility (`total_cmp`'s order reversed).
#[inline(always)]
fn descending_key<C: Scored>(candidate: &C) -> u64 {
    !ordered_bits(candidate.compact().utility)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::scoring::{Breakdown, Candidate};

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
            let items: Vec<Candidate> = (0..len)
                .map(|i| candidate(i, ((i * 7919) % 13) as f64))
                .collect();
            let mut expected = items.clone();
            expected.sort_by(|a, b| b.utility.total_cmp(&a.utility));
            let mut sorted = items.clone();
            sort_by_utility(&mut sorted);
            assert_eq!(sorted, expected, "len {len}");
        }
    }

    /// Utilities that differ only in their lowest bits (where the sort keys hold the index),
    /// signed zeros and infinities still sort exactly as `total_cmp` orders them, ties stably.
    #[test]
    fn sorting_is_exact_for_utilities_that_differ_in_the_last_bits() {
        let base = 81.52f64.to_bits();
        for len in [2, 5, 32, 33, 64, 65, 200] {
            let items: Vec<Candidate> = (0..len)
                .map(|i| {
                    let utility = match i % 11 {
                        0 => -0.0,
                        1 => 0.0,
                        2 => f64::NEG_INFINITY,
                        3 => f64::INFINITY,
                        4 => 81.52,
                        _ => f64::from_bits(base + ((i * 37) % 19) as u64),
                    };
                    candidate(i, utility)
                })
                .collect();
            let mut expected = items.clone();
            expected.sort_by(|a, b| b.utility.total_cmp(&a.utility));
            let mut sorted = items.clone();
            sort_by_utility(&mut sorted);
            assert_eq!(sorted, expected, "len {len}");
        }
    }

    /// Over candidates in place order, [`best_few_in_place_order`] keeps exactly what
    /// [`best_few`] keeps, for every count, with ties, signed zeros, infinities and utilities
    /// that differ only in their last bits.
    #[test]
    fn the_best_few_in_place_order_are_the_best_few() {
        let base = 81.52f64.to_bits();
        for len in [0, 1, 2, 5, 17, 40, 100] {
            for spread in [3, 7, 9] {
                let items: Vec<Candidate> = (0..len)
                    .map(|i| {
                        let utility = match (i * spread) % 9 {
                            0 => -0.0,
                            1 => 0.0,
                            2 => f64::NEG_INFINITY,
                            3 => f64::INFINITY,
                            4 => 3.0,
                            5 => -2.5,
                            _ => f64::from_bits(base + ((i * 37) % 5) as u64),
                        };
                        candidate(i, utility)
                    })
                    .collect();
                for count in 0..=len + 1 {
                    let (mut general, mut in_order) =
                        ([(0, 0); KEPT_ON_STACK], [(0, 0); KEPT_ON_STACK]);
                    assert_eq!(
                        best_few_in_place_order(&items, count, &mut in_order),
                        best_few(&items, count, &mut general),
                        "len {len}, spread {spread}, count {count}"
                    );
                }
            }
        }
    }

    /// The first few by [`best`] are the first few of the full sort, for every count, with
    /// ties, signed zeros, infinities and utilities that differ only in their last bits.
    #[test]
    fn the_best_few_are_the_head_of_the_full_order() {
        let base = 81.52f64.to_bits();
        for len in [0, 1, 2, 5, 17, 40] {
            let items: Vec<Candidate> = (0..len)
                .map(|i| {
                    let utility = match (i * 7) % 9 {
                        0 => -0.0,
                        1 => 0.0,
                        2 => f64::NEG_INFINITY,
                        3 => f64::INFINITY,
                        4 => 3.0,
                        _ => f64::from_bits(base + ((i * 37) % 5) as u64),
                    };
                    candidate(i, utility)
                })
                .collect();
            let mut sorted = items.clone();
            sort_by_utility(&mut sorted);
            for count in 0..=len + 1 {
                let mut head = Vec::new();
                best(&items, count, &mut head);
                assert_eq!(head, sorted[..count.min(len)], "len {len}, count {count}");
            }
        }
    }
}
