//! One agent's ranking: its eligible candidates as they were scored (providers in input order,
//! then their actions) and the removed ones, with the order of record (descending utility, ties
//! in scoring order) sorted on first access, so a decision that only samples the best few does
//! not order the rest unless someone reads them.

use std::sync::OnceLock;

use crate::decision::order::sort_by_utility;
use crate::decision::scoring::{Candidate, Ineligible};

/// Every candidate of one agent, scored or removed.
#[derive(Clone, Debug, Default)]
pub struct Ranking {
    /// Eligible candidates in scoring order.
    scored: Vec<Candidate>,
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
            let mut ranked = self.scored.clone();
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
            None => sort_by_utility(&mut self.scored),
        }
        self.in_order = true;
    }

    /// Empties it for another ranking, scored into the buffers it gives (eligible candidates in
    /// scoring order, removed ones in input order), whose allocations it keeps.
    pub(crate) fn refill(&mut self) -> (&mut Vec<Candidate>, &mut Vec<Ineligible>) {
        self.scored.clear();
        self.ineligible.clear();
        self.ranked = OnceLock::new();
        self.in_order = false;
        (&mut self.scored, &mut self.ineligible)
    }

    /// Eligible candidates in scoring order (in the order of record once ordered in place).
    pub(crate) fn scored(&self) -> &[Candidate] {
        &self.scored
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
        assert_eq!(in_place.scored().len(), 4);
        let mut after_copy = Ranking::new(scored, Vec::new());
        assert_eq!(order(&after_copy), [1, 3, 0, 2]);
        after_copy.order_in_place();
        assert_eq!(order(&after_copy), [1, 3, 0, 2]);
        assert_eq!(copied, in_place);
        assert_eq!(in_place, after_copy);
    }
}
