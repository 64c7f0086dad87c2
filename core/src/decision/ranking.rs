//! One agent's ranking: its eligible candidates as they were scored (providers in input order,
//! then their actions) and the removed ones, with the order of record (descending utility, ties
//! in scoring order) sorted on first access, so a decision that only samples the best few does
//! not order the rest unless someone reads them. A plain agent's decide over a compiled world
//! keeps its candidates without their breakdowns ([`Deferred`]), put together on first access.

use std::sync::{Arc, OnceLock};

use crate::decision::compiled::CompiledActions;
use crate::decision::deferred::Deferred;
use crate::decision::order::sort_by_utility;
use crate::decision::scoring::{Candidate, Ineligible};

/// Every candidate of one agent, scored or removed.
#[derive(Clone, Debug, Default)]
pub struct Ranking {
    /// Eligible candidates in scoring order (empty while `deferring`).
    scored: Vec<Candidate>,
    /// The eligible candidates without their breakdowns, when `deferring` (boxed: a ranking
    /// that never defers stays as small as it was, and one that does keeps the buffers).
    deferred: Option<Box<Deferred>>,
    /// Whether the eligible candidates are `deferred`'s rather than `scored`.
    deferring: bool,
    /// `scored` in the order of record, once asked for.
    ranked: OnceLock<Vec<Candidate>>,
    /// Whether `scored` itself has been put in the order of record ([`Ranking::order_in_place`]).
    in_order: bool,
    /// Removed candidates with the first gate they failed, in input order.
    pub ineligible: Vec<Ineligible>,
}

impl Ranking {
    /// A ranking of candidates scored over the providers in input order.
    pub(crate) fn new(scored: Vec<Candidate>, ineligible: Vec<Ineligible>) -> Self {
        Self {
            scored,
            deferred: None,
            deferring: false,
            ranked: OnceLock::new(),
            in_order: false,
            ineligible,
        }
    }

    /// Eligible candidates by descending utility (ties in input order); ordered on the first
    /// call.
    pub fn ranked(&self) -> &[Candidate] {
        if self.in_order {
            return &self.scored;
        }
        self.ranked.get_or_init(|| {
            let mut ranked = if let Some(deferred) = self.deferred() {
                let mut full = Vec::with_capacity(deferred.candidates().len());
                deferred.extend_full(&mut full);
                full
            } else {
                self.scored.clone()
            };
            sort_by_utility(&mut ranked);
            ranked
        })
    }

    /// Puts the eligible candidates in the order of record where they lie, without the copy
    /// [`Ranking::ranked`] makes: for a caller about to read them all once, such as an answer
    /// being written (a request of a million candidates would otherwise hold them twice).
    pub fn order_in_place(&mut self) {
        if self.in_order {
            return;
        }
        match self.ranked.take() {
            Some(ranked) => self.scored = ranked,
            None => {
                if self.deferring
                    && let Some(deferred) = &self.deferred
                {
                    self.scored.clear();
                    deferred.extend_full(&mut self.scored);
                }
                sort_by_utility(&mut self.scored)
            }
        }
        self.deferring = false;
        self.in_order = true;
    }

    /// Empties it for another ranking, scored into the buffers it gives (eligible candidates in
    /// scoring order, removed ones in input order), whose allocations it keeps.
    pub(crate) fn refill(&mut self) -> (&mut Vec<Candidate>, &mut Vec<Ineligible>) {
        self.scored.clear();
        self.ineligible.clear();
        self.ranked = OnceLock::new();
        self.in_order = false;
        self.deferring = false;
        (&mut self.scored, &mut self.ineligible)
    }

    /// [`Ranking::refill`] for candidates kept without their breakdowns, scored off `records`.
    pub(crate) fn refill_deferred(
        &mut self,
        records: &Arc<CompiledActions>,
    ) -> (&mut Deferred, &mut Vec<Ineligible>) {
        self.refill();
        let deferred = self.deferred.get_or_insert_with(Box::default);
        deferred.refill(records);
        self.deferring = true;
        (deferred, &mut self.ineligible)
    }

    /// Eligible candidates in scoring order (in the order of record once ordered in place), or
    /// `None` while they are kept without their breakdowns (see [`Ranking::deferred`]).
    pub(crate) fn scored(&self) -> Option<&[Candidate]> {
        (!self.deferring).then_some(self.scored.as_slice())
    }

    /// The eligible candidates kept without their breakdowns, if they are.
    pub(crate) fn deferred(&self) -> Option<&Deferred> {
        self.deferred.as_deref().filter(|_| self.deferring)
    }
}

/// Two rankings are equal when they rank and remove the same candidates, whether or not either
/// has been ordered yet.
impl PartialEq for Ranking {
    fn eq(&self, other: &Self) -> bool {
        self.ranked() == other.ranked() && self.ineligible == other.ineligible
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::scoring::Breakdown;

    fn candidate(provider: usize, utility: f64) -> Candidate {
        Candidate {
            provider,
            action: 0,
            utility,
            distance: 0.0,
            breakdown: Breakdown::default(),
        }
    }

    /// Ordered in place or through a copy, a ranking reads the same order (ties in scoring
    /// order), before or after the copy was made.
    #[test]
    fn ordering_in_place_reads_as_the_copy_does() {
        let scored = vec![
            candidate(0, 1.0),
            candidate(1, 3.0),
            candidate(2, 1.0),
            candidate(3, 2.0),
        ];
        let order = |ranking: &Ranking| -> Vec<usize> {
            ranking.ranked().iter().map(|c| c.provider).collect()
        };
        let copied = Ranking::new(scored.clone(), Vec::new());
        assert_eq!(order(&copied), [1, 3, 0, 2]);
        let mut in_place = Ranking::new(scored.clone(), Vec::new());
        in_place.order_in_place();
        assert_eq!(order(&in_place), [1, 3, 0, 2]);
        assert_eq!(in_place.scored().map(<[Candidate]>::len), Some(4));
        let mut after_copy = Ranking::new(scored, Vec::new());
        assert_eq!(order(&after_copy), [1, 3, 0, 2]);
        after_copy.order_in_place();
        assert_eq!(order(&after_copy), [1, 3, 0, 2]);
        assert_eq!(copied, in_place);
        assert_eq!(in_place, after_copy);
    }
}
