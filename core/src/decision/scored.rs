//! What ordering and selection read of a scored candidate ([`Scored`], as a [`Compact`]): its
//! place, utility and distance and whether it is held back as just completed. A full
//! [`Candidate`] carries its breakdown for the inspector; a batch keeps [`Compact`] candidates
//! instead, as its answer never shows a breakdown, so its candidate loop stores and its top-k
//! copies far fewer bytes.

use crate::decision::scoring::{Breakdown, Candidate};

/// A scored candidate as ordering and selection read it.
pub(crate) trait Scored: Copy {
    /// Action `place` (provider index, action index) at `distance`, scored as `scored`.
    fn at(place: (usize, usize), distance: f64, scored: (f64, Breakdown)) -> Self;
    /// What ordering and selection read of it.
    fn compact(&self) -> Compact;
}

/// A candidate without its breakdown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Compact {
    /// Index of the provider in the world.
    pub(crate) provider: usize,
    /// Index of the action in its provider.
    pub(crate) action: usize,
    /// The score.
    pub(crate) utility: f64,
    /// World units from the agent to the provider.
    pub(crate) distance: f64,
    /// Whether it is the action the agent has just completed (its `M_repeat` below 1).
    pub(crate) held_back: bool,
}

impl Compact {
    /// Provider index, then action index: the order of record's tie-break.
    #[inline(always)]
    pub(crate) fn place(&self) -> (usize, usize) {
        (self.provider, self.action)
    }
}

impl Scored for Candidate {
    #[inline(always)]
    fn at(place: (usize, usize), distance: f64, (utility, breakdown): (f64, Breakdown)) -> Self {
        Self {
            provider: place.0,
            action: place.1,
            utility,
            distance,
            breakdown,
        }
    }

    #[inline(always)]
    fn compact(&self) -> Compact {
        Compact {
            provider: self.provider,
            action: self.action,
            utility: self.utility,
            distance: self.distance,
            held_back: self.breakdown.repeat < 1.0,
        }
    }
}

impl Scored for Compact {
    #[inline(always)]
    fn at(place: (usize, usize), distance: f64, scored: (f64, Breakdown)) -> Self {
        Candidate::at(place, distance, scored).compact()
    }

    #[inline(always)]
    fn compact(&self) -> Compact {
        *self
    }
}
