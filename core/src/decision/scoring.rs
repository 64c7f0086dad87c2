//! Eligibility gates and the utility formula of record, with the
//! per-candidate breakdown the inspector shows.
//!
//! ```text
//! gain(c,x)     = min(delta(x,c), c.max − c.value)         caps positive gains only
//! benefit       = Σ_c weight_c · pressure(c) · gain(c,x)
//! score         = (benefit + intrinsic_priority · priority_weight + schedule)
//!                 · M_personality · M_context · M_distance · M_repeat · M_foresight
//!                 − weighted_cost
//! schedule      = the agent's schedule pull: its tag bonus if x carries a tag of the activity
//!                 in force, plus its place bonus if x is at the activity's place (both already
//!                 × adherence; 0 without a schedule — the decide contract has none)
//! M_personality = Π tag modifiers of x's tags · domain preference
//! M_context     = Π over the world's active contexts, over x's tags: m · m   (squared on
//!                 purpose: a ×2 context must double the observed frequency after the softmax)
//! M_distance    = 1 / (1 + distance / distance_reference)
//! M_repeat      = repeat_factor for the action the agent has just completed (unless it raises
//!                 a critical need), else 1
//! M_foresight   = Π over the agent's decaying needs that x does not raise, when x lasts
//!                 longer than the hours h_n left before need n falls critical (0 once it is):
//!                 max(foresight_floor, h_n / duration), the share of x done before then, else
//!                 1 — one eats before a night's sleep, and a starving NPC eats before it
//!                 works (1 without needs running out: the decide contract has none)
//! weighted_cost = Σ_r cost_r / max(1, available_r / cost_r)     (= cost²/available)
//! ```
//!
//! Gates run in a fixed order and the first failure is the reason kept: provider slot, action
//! slot, radius, preconditions, affordability, commitments. Failing a gate removes a candidate;
//! it never lowers its score.

use crate::decision::agent::{Agent, lookup};
use crate::decision::consideration::{Consideration, Updater};
use crate::decision::scored::Scored;
pub use crate::decision::scored::{Breakdown, Candidate};
use crate::decision::tuning::Tuning;
use crate::decision::world::{
    AdvertisedAction, Context, Precondition, Provider, World, context_multiplier,
};
use crate::rng::DetRng;
use crate::vocabulary::Symbol;

geppetto_wire_enum::wire_enum! {
    /// Why a candidate was removed, in gate order.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum IneligibleReason {
        /// The provider has no free slot.
        ProviderFull = "provider_full",
        /// The action's own capacity is used up.
        ActionFull = "action_full",
        /// The agent is farther than the action's radius.
        OutOfRadius = "out_of_radius",
        /// A precondition does not hold.
        Precondition = "precondition",
        /// The agent cannot pay a cost.
        Unaffordable = "unaffordable",
        /// An active commitment forbids one of the action's tags.
        Commitment = "commitment",
        /// A binding schedule activity is in force and the action neither fits it nor
        /// restores a critical need, or the action belongs to a binding activity not in force.
        OffSchedule = "off_schedule",
    }
}

/// A removed candidate and the first gate it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ineligible {
    /// Index of the provider in the world.
    pub provider: usize,
    /// Index of the action in its provider.
    pub action: usize,
    /// The first failed gate.
    pub reason: IneligibleReason,
}

/// One consideration as the scorer needs it: weighted pressure and headroom, precomputed once
/// per decision so the candidate loop only multiplies.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScoringTerm {
    pub(crate) weighted_pressure: f64,
    pub(crate) headroom: f64,
}

/// An agent prepared for scoring: a dense table by symbol of what each name means to this
/// agent (its consideration's term, from a noisy copy when perception noise is on — the agent
/// itself is never changed — its tag modifier, the contexts' multipliers, whether its schedule's
/// activity names it), so the candidate loop indexes instead of searching, and what holds for
/// every candidate alike (whether a commitment binds, whether goals or a completed action can
/// change a score), so the loop skips what cannot apply. The table lives in a buffer the
/// caller owns.
pub(crate) struct ScoringView<'a> {
    agent: &'a Agent,
    symbols: &'a [SymbolEntry],
    /// The commitments active at the world's hour that forbid any tag.
    binding_commitments: bool,
    /// Whether nothing about the agent but its terms, tag modifiers and the contexts can act
    /// on a score: no goal bonus, schedule, domain preference, binding commitment, action
    /// just completed or need running out. Its candidates are scored by a loop without those steps.
    plain: bool,
}

/// What one symbol means to the agent being scored. Read by reference in the candidate loop:
/// a name the table does not reach reads [`NEUTRAL_SYMBOL`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct SymbolEntry {
    /// The term's weighted pressure (0 when the agent has no consideration of this name).
    weighted_pressure: f64,
    /// The term's headroom (never NaN).
    headroom: f64,
    /// The agent's tag modifier (1 when it has none).
    personality: f64,
    /// `Π m·m` over the world's contexts (1 when none names the tag).
    context: f64,
    /// Whether the agent has a consideration of this name.
    has_term: bool,
    /// Whether the activity the agent's schedule has in force names the tag.
    scheduled: bool,
}

impl SymbolEntry {
    /// The term of the agent's consideration of this name, if it has one.
    pub(crate) fn term(&self) -> Option<ScoringTerm> {
        self.has_term.then_some(ScoringTerm {
            weighted_pressure: self.weighted_pressure,
            headroom: self.headroom,
        })
    }

    /// The agent's tag modifier (1 when it has none).
    pub(crate) fn personality(&self) -> f64 {
        self.personality
    }
}

/// Where `Iterator::sum` of `f64` starts (the sum of nothing).
pub(crate) const EMPTY_SUM: f64 = -0.0;

const NEUTRAL_SYMBOL: SymbolEntry = SymbolEntry {
    weighted_pressure: 0.0,
    headroom: 0.0,
    personality: 1.0,
    context: 1.0,
    has_term: false,
    scheduled: false,
};

/// One consideration's scoring term. Perception noise draws one Gaussian for a
/// perception-driven consideration, from `rng`. Inlined into each table's preparation.
#[inline(always)]
fn term(
    c: &Consideration,
    tuning: &Tuning,
    profile_weights: &[(Symbol, f64)],
    rng: &mut DetRng,
) -> ScoringTerm {
    let mut value = c.value;
    if tuning.perception_noise > 0.0 && *c.updater() == Updater::PerceptionDriven {
        let noisy = value + tuning.perception_noise * rng.next_gaussian();
        value = if c.max() > c.min() {
            noisy.clamp(c.min(), c.max())
        } else {
            noisy
        };
    }
    let pressure = c
        .curve()
        .pressure(value, c.min(), c.max(), tuning.convex_exponent);
    let weight = c.weight * lookup(profile_weights, c.name).unwrap_or(1.0);
    ScoringTerm {
        weighted_pressure: weight * pressure,
        headroom: (c.max() - value).max(0.0),
    }
}

/// Calls `f` with each of `agent`'s consideration names and its term, in the agent's order:
/// every term is computed, so the noise draws depend neither on repeated names nor on who
/// reads them.
#[inline(always)]
pub(crate) fn each_term(
    agent: &Agent,
    (tuning, profile_weights): (&Tuning, &[(Symbol, f64)]),
    rng: &mut DetRng,
    mut f: impl FnMut(Symbol, ScoringTerm),
) {
    for c in &agent.considerations {
        f(c.name, term(c, tuning, profile_weights, rng));
    }
}

/// Calls `f` with each of `agent`'s tag modifiers, last first: where a tag repeats, the first
/// modifier of it is written last (as a search would find it).
pub(crate) fn each_modifier(agent: &Agent, mut f: impl FnMut(Symbol, f64)) {
    for (tag, modifier) in agent.tag_modifiers.iter().rev() {
        f(*tag, *modifier);
    }
}

impl<'a> ScoringView<'a> {
    /// Prepares `agent` against the world's `contexts` at `now_hours`, writing its table into
    /// `table` (a buffer a batch reuses from one agent to the next).
    /// Perception noise draws one Gaussian per perception-driven consideration, in the agent's
    /// order, from `rng`.
    pub(crate) fn new(
        table: &'a mut Vec<SymbolEntry>,
        agent: &'a Agent,
        (contexts, now_hours): (&[Context], f64),
        tuning: &Tuning,
        profile_weights: &[(Symbol, f64)],
        rng: &mut DetRng,
    ) -> Self {
        let scheduled_tags: &[Symbol] = agent.schedule.as_ref().map_or(&[], |pull| &pull.tags);
        let mut highest = None;
        let mut reach = |symbol: Symbol| highest = highest.max(Some(symbol.index()));
        agent.considerations.iter().for_each(|c| reach(c.name));
        agent.tag_modifiers.iter().for_each(|(tag, _)| reach(*tag));
        for context in contexts {
            context
                .tag_multipliers
                .iter()
                .for_each(|(tag, _)| reach(*tag));
        }
        scheduled_tags.iter().for_each(|tag| reach(*tag));
        table.clear();
        table.resize(highest.map_or(0, |index| index + 1), NEUTRAL_SYMBOL);
        // Where a name repeats, the first occurrence counts (as a search would find it).
        each_term(agent, (tuning, profile_weights), rng, |name, term| {
            if let Some(entry) = table.get_mut(name.index())
                && !entry.has_term
            {
                entry.weighted_pressure = term.weighted_pressure;
                entry.headroom = term.headroom;
                entry.has_term = true;
            }
        });
        each_modifier(agent, |tag, modifier| {
            if let Some(entry) = table.get_mut(tag.index()) {
                entry.personality = modifier;
            }
        });
        for tag in scheduled_tags {
            if let Some(entry) = table.get_mut(tag.index()) {
                entry.scheduled = true;
            }
        }
        for context in contexts {
            for (tag, _) in &context.tag_multipliers {
                if let Some(entry) = table.get_mut(tag.index()) {
                    entry.context = context_multiplier(contexts, *tag);
                }
            }
        }
        let (binding_commitments, plain) = Self::kind(agent, now_hours);
        Self {
            agent,
            symbols: table.as_slice(),
            binding_commitments,
            plain,
        }
    }

    /// A plain view of `agent` with an empty table: every name reads as neutral. Only for
    /// scoring records of a compiled world with no general action, which read no table.
    pub(crate) fn without_table(agent: &'a Agent) -> Self {
        Self {
            agent,
            symbols: &[],
            binding_commitments: false,
            plain: true,
        }
    }

    /// Whether a commitment of `agent` binds at `now_hours`, and whether the agent is plain
    /// (see [`ScoringView::plain`]).
    pub(crate) fn kind(agent: &Agent, now_hours: f64) -> (bool, bool) {
        let binding_commitments = agent
            .commitments
            .iter()
            .any(|c| !c.forbid_tags.is_empty() && c.is_active(now_hours));
        let plain = agent.goal_bonuses.is_empty()
            && agent.schedule.is_none()
            && agent.domain_preferences.is_empty()
            && !binding_commitments
            && agent.just_completed.is_none()
            && agent.running_out.is_empty();
        (binding_commitments, plain)
    }

    /// What `symbol` means to the agent.
    pub(crate) fn symbol(&self, symbol: Symbol) -> &SymbolEntry {
        self.symbols.get(symbol.index()).unwrap_or(&NEUTRAL_SYMBOL)
    }

    /// The first gate `action` of `provider` (full or not) fails for this agent at `distance`,
    /// if any (`PLAIN`: the view is plain).
    #[inline(always)]
    pub(crate) fn gate<const PLAIN: bool>(
        &self,
        (provider, provider_full): (&Provider, bool),
        action: &AdvertisedAction,
        distance: f64,
        now_hours: f64,
    ) -> Option<IneligibleReason> {
        let agent = self.agent;
        if provider_full {
            return Some(IneligibleReason::ProviderFull);
        }
        if action.free_slots() == Some(0) {
            return Some(IneligibleReason::ActionFull);
        }
        if action.radius.is_some_and(|radius| distance > radius) {
            return Some(IneligibleReason::OutOfRadius);
        }
        // A binding activity's own actions are done when it says, whatever the needs.
        let bound = !PLAIN && agent.schedule.as_ref().is_some_and(|pull| pull.binding);
        let waived = bound && self.fits_schedule(provider, action);
        if !action.preconditions.is_empty()
            && !action.preconditions.iter().all(|p| {
                let own_need = matches!(p, Precondition::Consideration { name, .. }
                    if agent.consideration(*name).is_some());
                (waived && own_need) || precondition_holds(p, agent, provider)
            })
        {
            return Some(IneligibleReason::Precondition);
        }
        if !action.costs.is_empty()
            && action
                .costs
                .iter()
                .any(|(resource, cost)| agent.resource(*resource) < *cost)
        {
            return Some(IneligibleReason::Unaffordable);
        }
        let forbidden = !PLAIN
            && self.binding_commitments
            && !action.tags.is_empty()
            && agent
                .commitments
                .iter()
                .filter(|commitment| commitment.is_active(now_hours))
                .any(|commitment| {
                    action
                        .tags
                        .iter()
                        .any(|tag| commitment.forbid_tags.contains(tag))
                });
        if forbidden {
            return Some(IneligibleReason::Commitment);
        }
        let reserved = !PLAIN
            && agent.schedule.as_ref().is_some_and(|pull| {
                !pull.reserved.is_empty()
                    && action.duration_hours >= pull.reserved_from_hours
                    && action.tags.iter().any(|t| pull.reserved.contains(t))
            });
        if ((bound && !waived) || reserved) && !self.raises_a_critical_need(action) {
            return Some(IneligibleReason::OffSchedule);
        }
        None
    }

    /// Whether `action` of `provider` does what the binding activity in force asks: it carries
    /// one of its tags (the activity's place only tells where, unless it names no tag).
    fn fits_schedule(&self, provider: &Provider, action: &AdvertisedAction) -> bool {
        self.agent.schedule.as_ref().is_some_and(|pull| {
            if pull.tags.is_empty() {
                pull.place.as_deref() == Some(provider.id.as_str())
            } else {
                action.tags.iter().any(|tag| self.symbol(*tag).scheduled)
            }
        })
    }

    /// The utility of an eligible action and its breakdown, given the provider's `M_distance`,
    /// the schedule's bonus for being there (its place bonus, else 0) and `M_repeat`. Context
    /// multipliers are those the view was prepared with (`PLAIN`: the view is plain).
    #[inline(always)]
    pub(crate) fn score<const PLAIN: bool>(
        &self,
        action: &AdvertisedAction,
        (distance_factor, place_bonus, repeat): (f64, f64, f64),
        tuning: &Tuning,
    ) -> (f64, Breakdown) {
        let agent = self.agent;
        // This runs for every candidate, so the sums are written out; each starts where
        // `Iterator::sum` starts and adds in the same order, so the bits are the same.
        let mut benefit = EMPTY_SUM;
        for_each_short(&action.deltas, |(name, delta)| {
            let entry = self.symbol(*name);
            if entry.has_term {
                benefit += entry.weighted_pressure * gain(*delta, entry.headroom);
            }
        });
        // Actions that produce what the agent's goals pursue gain priority.
        let goal_bonus: f64 = if PLAIN || agent.goal_bonuses.is_empty() {
            0.0
        } else {
            let produces = |symbol: Symbol| {
                action.effects.adds.contains(&symbol)
                    || action.effects.yields.iter().any(|(r, _)| *r == symbol)
            };
            agent
                .goal_bonuses
                .iter()
                .filter(|(symbol, _)| produces(*symbol))
                .map(|(_, bonus)| bonus)
                .sum()
        };
        let priority = (action.intrinsic_priority + goal_bonus) * tuning.priority_weight;
        let mut tag_product = 1.0;
        let mut context = 1.0;
        let mut fits_schedule = false;
        for_each_short(&action.tags, |tag| {
            let entry = self.symbol(*tag);
            tag_product *= entry.personality;
            context *= entry.context;
            fits_schedule |= !PLAIN && entry.scheduled;
        });
        let schedule = match &agent.schedule {
            Some(pull) if !PLAIN && fits_schedule => pull.tag_bonus + place_bonus,
            _ => place_bonus,
        };
        let domain = match action.domain {
            Some(domain) if !PLAIN && !agent.domain_preferences.is_empty() => {
                lookup(&agent.domain_preferences, domain).unwrap_or(1.0)
            }
            _ => 1.0,
        };
        let personality = tag_product * domain;
        let mut cost = EMPTY_SUM;
        for (resource, amount) in &action.costs {
            if *amount > 0.0 {
                cost += amount / (agent.resource(*resource) / amount).max(1.0);
            }
        }
        let foresight = if PLAIN || agent.running_out.is_empty() {
            1.0
        } else {
            self.foresight(action, tuning.foresight_floor)
        };
        let breakdown = Breakdown {
            benefit,
            priority,
            personality,
            context,
            schedule,
            repeat,
            distance: distance_factor,
            foresight,
            cost,
        };
        (utility(&breakdown), breakdown)
    }

    /// `M_foresight` of `action`: for each of the agent's needs running out that it does not
    /// raise and outlasts, the share of it done before the need falls critical, at least the
    /// tuning's `foresight_floor`.
    fn foresight(&self, action: &AdvertisedAction, floor: f64) -> f64 {
        let duration = action.duration_hours;
        let mut factor = 1.0;
        for &(need, hours) in &self.agent.running_out {
            let raises = || action.deltas.iter().any(|(n, d)| *n == need && *d > 0.0);
            if duration > hours && !raises() {
                factor *= (hours / duration).max(floor);
            }
        }
        factor
    }

    /// Gates then scores every action of the providers `placed` gives (index in the world and
    /// distance from the agent, in that order), appending to the outputs.
    pub(crate) fn evaluate_providers<C: Scored>(
        &self,
        world: &World,
        placed: impl IntoIterator<Item = (usize, f64)>,
        tuning: &Tuning,
        ranked: &mut Vec<C>,
        ineligible: Option<&mut Vec<Ineligible>>,
    ) {
        if self.plain {
            self.evaluate::<C, true>(world, placed, tuning, ranked, ineligible);
        } else {
            self.evaluate::<C, false>(world, placed, tuning, ranked, ineligible);
        }
    }

    /// Whether `action` raises one of the agent's needs that is critical.
    fn raises_a_critical_need(&self, action: &AdvertisedAction) -> bool {
        action.deltas.iter().any(|(need, delta)| {
            *delta > 0.0
                && self
                    .agent
                    .consideration(*need)
                    .is_some_and(Consideration::is_critical)
        })
    }

    /// [`Self::evaluate_providers`] (`PLAIN`: the view is plain).
    pub(crate) fn evaluate<C: Scored, const PLAIN: bool>(
        &self,
        world: &World,
        placed: impl IntoIterator<Item = (usize, f64)>,
        tuning: &Tuning,
        ranked: &mut Vec<C>,
        mut ineligible: Option<&mut Vec<Ineligible>>,
    ) {
        let now_hours = world.now_hours;
        let first = ranked.len();
        let mut off_schedule = Vec::new();
        let mut fitting = false;
        for (provider_index, distance) in placed {
            let Some(provider) = world.providers.get(provider_index) else {
                continue;
            };
            let distance_factor = distance_factor(distance, tuning);
            let place_bonus = match &self.agent.schedule {
                Some(pull) if !PLAIN && pull.place.as_deref() == Some(provider.id.as_str()) => {
                    pull.place_bonus
                }
                _ => 0.0,
            };
            let just_completed_here = match self.agent.just_completed.as_deref() {
                Some((done_at, action)) if !PLAIN && **done_at == *provider.id => Some(&**action),
                _ => None,
            };
            // Read once: the loop's stores could otherwise be taken to change it.
            let provider_full = provider.free_slots() == 0;
            for (action_index, action) in provider.actions.iter().enumerate() {
                let gated = (provider, provider_full);
                let gate = self.gate::<PLAIN>(gated, action, distance, now_hours);
                if gate == Some(IneligibleReason::OffSchedule) {
                    off_schedule.push((ranked.len(), provider_index, action_index));
                } else if gate.is_none() && !PLAIN {
                    fitting |= self.agent.schedule.as_ref().is_some_and(|p| p.binding);
                }
                if let Some(reason) = gate.filter(|r| *r != IneligibleReason::OffSchedule) {
                    if let Some(list) = ineligible.as_deref_mut() {
                        list.push(Ineligible {
                            provider: provider_index,
                            action: action_index,
                            reason,
                        });
                    }
                    continue;
                }
                // An action that raises a critical need is never held back (a starving NPC
                // eats again).
                let repeat = if !PLAIN
                    && just_completed_here == Some(action.id.as_str())
                    && !self.raises_a_critical_need(action)
                {
                    tuning.repeat_factor
                } else {
                    1.0
                };
                let placed = (distance_factor, place_bonus, repeat);
                let scored = self.score::<PLAIN>(action, placed, tuning);
                ranked.push(C::at((provider_index, action_index), distance, scored));
            }
        }
        // A binding activity with nothing to do binds nothing: the actions it would have
        // removed stay when none that fits it (or restores a critical need) is left. Outside
        // a binding activity only another's reserved actions are off schedule; they go.
        let bound = self.agent.schedule.as_ref().is_some_and(|p| p.binding);
        if (fitting || !bound) && !off_schedule.is_empty() {
            let mut position = first;
            let mut removed = off_schedule.iter().map(|(at, ..)| *at).peekable();
            ranked.retain(|_| {
                let drop = removed.peek() == Some(&position);
                if drop {
                    removed.next();
                }
                position += 1;
                !drop
            });
            if let Some(list) = ineligible {
                list.extend(
                    off_schedule
                        .into_iter()
                        .map(|(_, provider, action)| Ineligible {
                            provider,
                            action,
                            reason: IneligibleReason::OffSchedule,
                        }),
                );
            }
        }
    }
}

/// The lesser of `delta` and `headroom` (a headroom is never NaN: `max(0.0)` made it), as one
/// `minsd`: of equal values (signed zeros) the delta is kept, as `delta.min(headroom)` keeps
/// it, and a NaN delta — which no parsed content holds (deltas are checked finite) — gives a
/// NaN gain, so the candidate ranks last as every NaN utility does, rather than `min`'s headroom.
#[inline(always)]
pub(crate) fn gain(delta: f64, headroom: f64) -> f64 {
    if headroom < delta { headroom } else { delta }
}

/// `M_distance` at `distance`.
#[inline(always)]
pub(crate) fn distance_factor(distance: f64, tuning: &Tuning) -> f64 {
    1.0 / (1.0 + distance / tuning.distance_reference)
}

/// The utility of record of a breakdown's factors (a NaN, which only overflowing inputs can
/// give, ranks last rather than first).
#[inline(always)]
pub(crate) fn utility(b: &Breakdown) -> f64 {
    let utility = (b.benefit + b.priority + b.schedule)
        * b.personality
        * b.context
        * b.distance
        * b.repeat
        * b.foresight
        - b.cost;
    if utility.is_nan() {
        f64::NEG_INFINITY
    } else {
        utility
    }
}

/// Calls `f` on each of `items` in order, the two or three an action usually carries without a
/// loop: a loop's set-up costs more than its two or three turns. Two compares pick the case (a
/// jump table over every short length costs more), and any other length loops.
#[inline(always)]
fn for_each_short<T>(items: &[T], mut f: impl FnMut(&T)) {
    match items {
        [a, b] => {
            f(a);
            f(b);
        }
        [a, b, c] => {
            f(a);
            f(b);
            f(c);
        }
        _ => items.iter().for_each(f),
    }
}

fn precondition_holds(precondition: &Precondition, agent: &Agent, provider: &Provider) -> bool {
    match precondition {
        Precondition::Consideration { name, op, value } => agent
            .consideration(*name)
            .is_some_and(|c| op.holds(c.value, *value)),
        Precondition::Capability(capability) => agent.capabilities.contains(capability),
        Precondition::Resource { name, min } => agent.resource(*name) >= *min,
        Precondition::ProviderState(state) => provider.state == Some(*state),
        Precondition::Fact(fact) => agent.facts.contains(fact),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For every delta but NaN, `gain` is `min`; a NaN delta's gain is NaN.
    #[test]
    fn a_gain_is_the_lesser_of_delta_and_headroom_as_min_gives_it() {
        let values = [
            f64::NEG_INFINITY,
            -40.0,
            -1e-300,
            1e-300,
            0.5,
            35.0,
            f64::INFINITY,
        ];
        for headroom in [0.0, 1e-300, 0.5, 35.0, 80.0, f64::INFINITY] {
            assert!(gain(f64::NAN, headroom).is_nan());
            for delta in values {
                let expected = delta.min(headroom);
                assert_eq!(
                    gain(delta, headroom).to_bits(),
                    expected.to_bits(),
                    "{delta} {headroom}"
                );
            }
        }
    }

    #[test]
    fn sums_start_where_iterator_sums_start() {
        let empty: f64 = std::iter::empty::<f64>().sum();
        assert_eq!(EMPTY_SUM.to_bits(), empty.to_bits());
    }

    /// The table a view builds must read names exactly as a search of the agent's lists
    /// would: the first of repeated names (considerations, modifiers, multipliers) counts, and
    /// names beyond the table are neutral.
    #[test]
    fn symbol_table_reads_names_as_a_search_would() {
        use crate::decision::agent::Agent;
        use crate::decision::consideration::Consideration;
        use crate::decision::world::{AdvertisedAction, Position};
        use crate::vocabulary::Vocabulary;

        let mut vocabulary = Vocabulary::new();
        let hunger = vocabulary.intern("HUNGER");
        let food = vocabulary.intern("food");
        let storm = vocabulary.intern("storm");
        let fillers: Vec<Symbol> = (0..70)
            .map(|i| vocabulary.intern(&format!("N{i}")))
            .collect();
        let unknown_tag = vocabulary.intern("never_named");

        let mut agent = Agent::new("a", Position::new(0.0, 0.0));
        agent
            .considerations
            .push(Consideration::new(hunger, 20.0, 0.0, 100.0));
        // A repeated name: the first consideration of it counts.
        agent
            .considerations
            .push(Consideration::new(hunger, 90.0, 0.0, 100.0));
        agent.tag_modifiers = thin_vec::thin_vec![(food, 1.5), (food, 9.0)];
        let contexts = [Context {
            name: storm,
            tag_multipliers: vec![(food, 2.0), (food, 7.0)],
        }];
        let mut action = AdvertisedAction::new("eat");
        action.deltas = thin_vec::thin_vec![(hunger, 40.0)];
        action.tags = thin_vec::thin_vec![food, unknown_tag];

        let tuning = Tuning::default();
        let score_of = |agent: &Agent| {
            let mut rng = DetRng::new(1);
            let mut table = Vec::new();
            let view =
                ScoringView::new(&mut table, agent, (&contexts, 8.0), &tuning, &[], &mut rng);
            view.score::<false>(&action, (1.0, 0.0, 1.0), &tuning)
        };
        let (utility, breakdown) = score_of(&agent);
        assert_eq!(breakdown.personality, 1.5, "first tag modifier wins");
        assert_eq!(
            breakdown.context, 4.0,
            "first multiplier of a context wins, squared"
        );
        assert!(
            (breakdown.benefit - 25.6).abs() < 1e-9,
            "{}",
            breakdown.benefit
        );

        // Seventy more considerations (a longer table) change nothing for this action.
        for filler in &fillers {
            agent
                .considerations
                .push(Consideration::new(*filler, 50.0, 0.0, 100.0));
        }
        assert_eq!(score_of(&agent), (utility, breakdown));
    }
}
