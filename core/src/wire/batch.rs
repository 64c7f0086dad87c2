//! `decide-batch`: many agents' request from text to answer, in the steps of `decide`
//! ([`parse_decide_batch`], [`BatchInput::compile`], [`CompiledBatch::decide`],
//! [`DecidedBatch::answer`]): the agents, like the providers, are compiled one at a time from
//! the text, and the answer is written from the batch decision as it is serialized.

use serde::Serialize;
use serde_json::value::RawValue;

use super::compile::{self, SeenIds};
use super::limits::{DecideLimits, check_json};
use super::read::{self, Counted, Elements};
use super::request::{AgentSpec, DecideBatchRequest, ProviderSpec, WorldSpec};
use super::response::{AssignmentOut, BatchAnswer, Streamed, StreamedMap, round4};
use super::{WireError, check_world_counts, decider_for, finite_utility, ids, parse};
use crate::decision::agent::Agent;
use crate::decision::decider::{BatchDecision, Decider};
use crate::decision::tuning::Profile;
use crate::decision::world::World;
use crate::vocabulary::Vocabulary;

/// A `decide-batch` request whose text passed every check but the semantic ones: its
/// profile's name, and the text it is compiled from.
#[derive(Clone, Debug)]
pub struct BatchInput<'a> {
    text: &'a str,
    profile: Option<String>,
    /// How many agents the check pass counted: their list is sized once (grown by doubling,
    /// a large batch's agents would take up to twice their room while it is compiled).
    agents: usize,
}

/// Checks a `decide-batch` request from outside, like [`super::parse_decide`], with its agent
/// count and its work (agents × providers).
pub fn parse_decide_batch<'a>(
    json: &'a str,
    limits: &DecideLimits,
) -> Result<BatchInput<'a>, WireError> {
    check_json(json, &limits.json())?;
    limits.check_counts_while_reading(json, true)?;
    let checked: DecideBatchRequest<Counted<AgentSpec>, WorldSpec<Counted<ProviderSpec>>> =
        parse(json)?;
    let agents = checked.agents.len;
    limits.check_count("max_agents", "agents", agents, limits.max_agents)?;
    check_world_counts(&checked.world.providers, limits)?;
    limits.check_work(agents, checked.world.providers.len)?;
    Ok(BatchInput {
        text: json,
        profile: checked.profile,
        agents,
    })
}

impl BatchInput<'_> {
    /// The profile the request names (`None`: the default).
    pub fn profile(&self) -> Option<&str> {
        self.profile.as_deref()
    }

    /// Compiles the request under `profile`: its tuning over the profile's, the agents one at
    /// a time (ids unique), then the world a provider at a time. The result no longer needs
    /// the text.
    pub fn compile(self, profile: &Profile) -> Result<CompiledBatch, WireError> {
        let request: DecideBatchRequest<&RawValue, WorldSpec<&RawValue>> = read::again(self.text)?;
        let mut vocabulary = Vocabulary::new();
        let decider = decider_for(&request.tuning, profile, &mut vocabulary)?;
        let mut seen = SeenIds::default();
        let mut agents: Vec<Agent> = Vec::with_capacity(self.agents);
        request.agents.each("agents", |i, spec: &AgentSpec| {
            if seen.repeats(&spec.id, agents.iter().map(|a| a.id.as_str())) {
                return Err(WireError::at(
                    &format!("agents[{i}].id"),
                    format!("duplicate agent `{}`", spec.id),
                ));
            }
            agents.push(compile::agent(
                &format!("agents[{i}]"),
                spec,
                &mut vocabulary,
            )?);
            Ok(())
        })?;
        drop(seen);
        let world = compile::world("world", &request.world, &mut vocabulary)?;
        Ok(CompiledBatch {
            decider,
            agents,
            world,
            seed: request.seed,
        })
    }
}

/// A compiled `decide-batch` request.
#[derive(Clone, Debug)]
pub struct CompiledBatch {
    decider: Decider,
    agents: Vec<Agent>,
    world: World,
    seed: u64,
}

impl CompiledBatch {
    /// Decides for every agent and resolves their contention, scoring on `workers` threads;
    /// refuses an answer whose utility overflowed.
    pub fn decide(self, workers: usize) -> Result<DecidedBatch, WireError> {
        let batch = self
            .decider
            .decide_batch(&self.agents, &self.world, self.seed, workers);
        for index in 0..self.agents.len() {
            for p in batch.preferences.of(index) {
                finite_utility(p.provider, p.action, p.utility)?;
            }
        }
        Ok(DecidedBatch {
            agents: self.agents,
            world: self.world,
            batch,
        })
    }
}

/// A batch decision, the agents it was made for and the world it names.
#[derive(Clone, Debug)]
pub struct DecidedBatch {
    agents: Vec<Agent>,
    world: World,
    batch: BatchDecision,
}

impl DecidedBatch {
    /// The answer of the contract, its lists written from the decision as it is serialized.
    pub fn answer(&self) -> BatchAnswer<impl Serialize + '_, impl Serialize + '_> {
        let (agents, world, batch) = (&self.agents, &self.world, &self.batch);
        let assignments = || {
            agents
                .iter()
                .zip(&batch.assignments)
                .map(|(agent, assignment)| match assignment {
                    Some(p) => {
                        let (provider, action) = ids(world, p.provider, p.action);
                        AssignmentOut {
                            agent: agent.id.clone(),
                            provider: Some(provider),
                            action: Some(action),
                        }
                    }
                    None => AssignmentOut {
                        agent: agent.id.clone(),
                        provider: None,
                        action: None,
                    },
                })
        };
        let preferences = || {
            agents.iter().enumerate().map(|(index, agent)| {
                let list: Vec<_> = batch
                    .preferences
                    .of(index)
                    .iter()
                    .map(|p| {
                        let (provider, action) = ids(world, p.provider, p.action);
                        (provider, action, round4(p.utility))
                    })
                    .collect();
                (agent.id.as_str(), list)
            })
        };
        BatchAnswer {
            assignments: Streamed(assignments),
            preferences: StreamedMap(preferences),
            rounds: batch.rounds,
        }
    }
}
