//! A ranking's candidates as a plain agent's decide over a compiled world scores them
//! ([`crate::decision::compiled_decide`]): each kept without its breakdown ([`Deferred`]),
//! with what the breakdowns are made of kept once (the records, shared with the compiled world,
//! each provider's `M_distance` and each tag set's `M_personality`), so a decide writes a
//! quarter of the bytes a full candidate takes and the breakdowns are put together only for
//! the pick and for a caller that reads the ranking. The candidates put together are those the
//! scoring loop would have written, bit for bit: every factor is copied, none recomputed.

use std::sync::Arc;

use crate::decision::compiled::CompiledActions;
use crate::decision::scored::{Breakdown, Candidate, Compact, Scored};
use crate::decision::scoring::EMPTY_SUM;

/// A candidate of a plain agent scored off a record, without the factors its record, its
/// provider and its tag set give.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PlainCandidate {
    /// Index of the provider in the world.
    pub(crate) provider: u32,
    /// Index of the action in its provider.
    pub(crate) action: u32,
    /// The score.
    pub(crate) utility: f64,
    /// World units from the agent to the provider.
    pub(crate) distance: f64,
    /// `Σ weight · pressure · gain`.
    pub(crate) benefit: f64,
}

impl Scored for PlainCandidate {
    #[inline(always)]
    fn at(place: (usize, usize), distance: f64, (utility, breakdown): (f64, Breakdown)) -> Self {
        Self {
            provider: place.0 as u32,
            action: place.1 as u32,
            utility,
            distance,
            benefit: breakdown.benefit,
        }
    }

    #[inline(always)]
    fn compact(&self) -> Compact {
        Compact {
            provider: self.provider as usize,
            action: self.action as usize,
            utility: self.utility,
            distance: self.distance,
            // A plain agent holds no action back.
            held_back: false,
        }
    }
}

/// Candidates kept as [`PlainCandidate`]s, with what their breakdowns are made of. Its buffers
/// are reused from one decide to the next.
#[derive(Clone, Debug, Default)]
pub(crate) struct Deferred {
    /// The records the candidates were scored off (the same the compiled world holds).
    records: Option<Arc<CompiledActions>>,
    /// Each provider's `M_distance`, by provider index.
    pub(crate) distance_factors: Vec<f64>,
    /// Each tag set's `M_personality`, by tag set.
    pub(crate) personalities: Vec<f64>,
    /// One slot for each record, written in scoring order (a removed candidate as
    /// [`UNSCORED`]) and then the eligible ones moved to the front ([`Deferred::keep_scored`]):
    /// a decide writes each slot where it lies, with no length to keep.
    pub(crate) slots: Vec<PlainCandidate>,
    /// How many of `slots` are eligible candidates.
    eligible: usize,
}

/// What a slot no eligible candidate holds: a NaN utility, which no scored candidate has (a
/// NaN score ranks last as -∞).
pub(crate) const UNSCORED: PlainCandidate = PlainCandidate {
    provider: 0,
    action: 0,
    utility: f64::NAN,
    distance: 0.0,
    benefit: 0.0,
};

impl Deferred {
    /// Empties it for candidates scored off `records` (a slot for each of them), keeping its
    /// buffers.
    pub(crate) fn refill(&mut self, records: &Arc<CompiledActions>) {
        if !self
            .records
            .as_ref()
            .is_some_and(|kept| Arc::ptr_eq(kept, records))
        {
            self.records = Some(Arc::clone(records));
        }
        self.distance_factors.clear();
        self.personalities.clear();
        self.slots.resize(records.action_count(), UNSCORED);
        self.eligible = 0;
    }

    /// Ends a decide that wrote every slot: the eligible candidates are moved to the front, in
    /// order, past those `UNSCORED` when `any_removed`.
    pub(crate) fn keep_scored(&mut self, any_removed: bool) {
        self.eligible = self.slots.len();
        if any_removed {
            let mut kept = 0;
            for at in 0..self.slots.len() {
                let candidate = self.slots[at];
                if !candidate.utility.is_nan() {
                    self.slots[kept] = candidate;
                    kept += 1;
                }
            }
            self.eligible = kept;
        }
    }

    /// The eligible candidates in scoring order.
    pub(crate) fn candidates(&self) -> &[PlainCandidate] {
        &self.slots[..self.eligible]
    }

    /// `candidate` with its breakdown, as the scoring loop would have written it (inlined, so
    /// a decision's pick is written where it goes rather than copied there).
    #[inline(always)]
    pub(crate) fn full(&self, candidate: &PlainCandidate) -> Candidate {
        let (provider, action) = (candidate.provider as usize, candidate.action as usize);
        let records = self
            .records
            .as_ref()
            .expect("deferred candidates keep their records");
        let record = &records.records(&records.providers()[provider])[action];
        Candidate {
            provider,
            action,
            utility: candidate.utility,
            distance: candidate.distance,
            breakdown: Breakdown {
                benefit: candidate.benefit,
                priority: record.priority,
                personality: self.personalities[record.tag_set as usize],
                context: record.context,
                // A plain agent has no schedule, no action held back, no foresight and no cost.
                schedule: 0.0,
                repeat: 1.0,
                distance: self.distance_factors[provider],
                foresight: 1.0,
                cost: EMPTY_SUM,
            },
        }
    }

    /// Every candidate with its breakdown, in scoring order, appended to `into`.
    pub(crate) fn extend_full(&self, into: &mut Vec<Candidate>) {
        into.extend(self.candidates().iter().map(|c| self.full(c)));
    }
}
