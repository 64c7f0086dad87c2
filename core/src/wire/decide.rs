//! `decide`: one agent's request from text to answer, in steps that each hold only what they
//! need. [`parse_decide`] checks the text (its limits, then every value's type, the large parts
//! read and dropped); [`DecideInput::compile`] reads it again into engine values, a provider
//! at a time, after which the text may go; [`Compiled::decide`] runs the decider; and
//! [`Decided::answer`] writes the answer from the decision as it is serialized.

use serde::Serialize;
use serde_json::value::RawValue;

use super::compile;
use super::limits::{DecideLimits, check_json};
use super::read::{self, Counted};
use super::request::{AgentSpec, DecideRequest, ProviderSpec, WorldSpec};
use super::response::{DecideAnswer, SelectedOut, Streamed, round4};
use super::{WireError, check_world_counts, decider_for, finite_utility, ids};
use super::{ineligible_out, parse, ranked_out};
use crate::decision::agent::Agent;
use crate::decision::decider::{Decider, Decision};
use crate::decision::tuning::Profile;
use crate::decision::world::World;
use crate::vocabulary::Vocabulary;

/// A `decide` request whose text passed every check but the semantic ones (those need the
/// profile): its profile's name, and the text it is compiled from.
#[derive(Clone, Debug)]
pub struct DecideInput<'a> {
    text: &'a str,
    profile: Option<String>,
}

/// Checks a `decide` request from outside: its raw text against `limits` first, then every
/// value's type (refused with its JSON path), then its counts.
pub fn parse_decide<'a>(
    json: &'a str,
    limits: &DecideLimits,
) -> Result<DecideInput<'a>, WireError> {
    check_json(json, &limits.json())?;
    limits.check_counts_while_reading(json, false)?;
    let checked: DecideRequest<AgentSpec, WorldSpec<Counted<ProviderSpec>>> = parse(json)?;
    check_world_counts(&checked.world.providers, limits)?;
    Ok(DecideInput {
        text: json,
        profile: checked.profile,
    })
}

impl DecideInput<'_> {
    /// The profile the request names (`None`: the default).
    pub fn profile(&self) -> Option<&str> {
        self.profile.as_deref()
    }

    /// Compiles the request under `profile`: its tuning over the profile's, the agent, then
    /// the world a provider at a time. The result no longer needs the text.
    pub fn compile(self, profile: &Profile) -> Result<Compiled, WireError> {
        let request: DecideRequest<AgentSpec, WorldSpec<&RawValue>> = read::again(self.text)?;
        let DecideRequest {
            seed,
            tuning,
            agent: spec,
            world,
            ..
        } = request;
        let mut vocabulary = Vocabulary::new();
        let decider = decider_for(&tuning, profile, &mut vocabulary)?;
        let agent = compile::agent("agent", &spec, &mut vocabulary)?;
        drop(spec);
        let world = compile::world("world", &world, &mut vocabulary)?;
        Ok(Compiled {
            decider,
            agent,
            world,
            seed,
        })
    }
}

/// A compiled `decide` request.
#[derive(Clone, Debug)]
pub struct Compiled {
    decider: Decider,
    agent: Agent,
    world: World,
    seed: u64,
}

impl Compiled {
    /// Decides; refuses an answer whose utility overflowed.
    pub fn decide(self) -> Result<Decided, WireError> {
        let mut decision = self.decider.decide(&self.agent, &self.world, self.seed);
        // The answer reads every candidate in order once: ordered where they lie.
        decision.ranking.order_in_place();
        for candidate in decision.ranking.ranked() {
            finite_utility(candidate.provider, candidate.action, candidate.utility)?;
        }
        Ok(Decided {
            world: self.world,
            decision,
        })
    }
}

/// A decision and the world it names.
#[derive(Clone, Debug)]
pub struct Decided {
    world: World,
    decision: Decision,
}

impl Decided {
    /// The answer of the contract, its lists written from the decision as it is serialized.
    pub fn answer(&self) -> DecideAnswer<impl Serialize + '_, impl Serialize + '_> {
        let world = &self.world;
        let ranking = &self.decision.ranking;
        DecideAnswer {
            selected: self.decision.selected.map(|candidate| {
                let (provider, action) = ids(world, candidate.provider, candidate.action);
                SelectedOut {
                    provider,
                    action,
                    utility: round4(candidate.utility),
                }
            }),
            convention_broken: self.decision.convention_broken,
            ranked: Streamed(|| ranking.ranked().iter().map(|c| ranked_out(world, c))),
            ineligible: Streamed(|| ranking.ineligible.iter().map(|i| ineligible_out(world, i))),
        }
    }
}
