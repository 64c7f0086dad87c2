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
    /// Removed candidates with the first gate they failed, in input order.
    pub ineligible: Vec<Ineligible>,
}

impl Ranking {
    /// A ranking of candidates scored over the providers in input order.
    pub(crate) fn new(scored: Vec<Candidate>, ineligible: Vec<Ineligible>) -> Self {
        Self {
            scored,
            ranked: OnceLock::new(),
            ineligible,
        }
    }

    /// Eligible candidates by descending utility (ties in input order); ordered on the first
    /// call.
    pub fn ranked(&self) -> &[Candidate] {
        self.ranked.get_or_init(|| {
            let mut ranked = self.scored.clone();
            sort_by_utility(&mut ranked);
            ranked
        })
    }

    /// Eligible candidates in scoring order.
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
