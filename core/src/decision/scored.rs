//! A scored candidate: the full [`Candidate`] with the [`Breakdown`] of its utility (what the
//! inspector shows), and what ordering and selection read of any candidate ([`Scored`], as a
//! [`Compact`]): its place, utility and distance and whether it is held back as just
//! completed. A batch keeps [`Compact`] candidates, as its answer never shows a breakdown, so
//! its candidate loop stores and its top-k copies far fewer bytes. The scoring that makes them
//! is `scoring`'s.

/// Every factor of one candidate's utility.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Breakdown {
    /// `Σ weight · pressure · gain`.
    pub benefit: f64,
    /// `intrinsic_priority · priority_weight`.
    pub priority: f64,
    /// `M_personality`.
    pub personality: f64,
    /// `M_context`.
    pub context: f64,
    /// The schedule's bonus.
    pub schedule: f64,
    /// `M_repeat`.
    pub repeat: f64,
    /// `M_distance`.
    pub distance: f64,
    /// `M_foresight`.
    pub foresight: f64,
    /// `weighted_cost`.
    pub cost: f64,
}

/// An eligible candidate with its utility.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// Index of the provider in the world.
    pub provider: usize,
    /// Index of the action in its provider.
    pub action: usize,
    /// The score.
    pub utility: f64,
    /// World units from the agent to the provider.
    pub distance: f64,
    /// How the score was made.
    pub breakdown: Breakdown,
}

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
