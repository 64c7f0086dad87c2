//! # geppetto-core
//!
//! The deterministic engine behind geppetto's NPCs. Objects, places and actors *advertise*
//! actions; an agent scores those promises against its considerations and picks one. Adding a
//! new object adds an advertisement, not a branch in every NPC.
//!
//! This crate never does IO, never awaits, never reads a clock and never touches a global RNG:
//! time arrives as `now_hours`, randomness as an explicit seed. Same input and seed ⇒ the same
//! output, bit for bit, whatever the thread count.
//!
//! - [`affect`]: feelings as integrators with half-lives, channels, couplings and the outburst
//!   overlay.
//! - [`archetype`]: kinds of people as data with inheritance; NPCs as their differences.
//! - [`curve`], [`consideration`], [`agent`], [`world`]: the data a decision reads.
//! - [`agent_state`]: the changing state of an agent, as snapshots keep it.
//! - [`scoring`]: eligibility gates and the utility formula with its breakdown.
//! - [`selection`]: top-k softmax and convention breaking.
//! - [`decider`]: `rank`, `decide`, `decide_batch`; [`contention`] resolves batch disputes.
//! - [`schedule`]: daily blocks becoming personal contexts and preferred places.
//! - [`wellbeing`]: mood and stress derived from needs; [`bark`]: lines said aloud.
//! - [`catch_up`]: whole missed days in closed form, the rest hourly, capped at a week.
//! - [`social`]: relationships, gossip, NPC-to-NPC interactions chosen through the decision
//!   engine, reservations and the zone's social step.
//! - [`story`]: the story-signal detector over a bounded event buffer.
//! - [`simulator`]: an agent's life over time — updaters, gradual deltas, the action queue,
//!   preemption, simplified and full detail.
//! - [`goals`]: typed, capped, deduplicated goals that boost actions and seed plans;
//!   [`goal_registry`] writes and reads them as JSON by `predicate_type`.
//! - [`planner`]: bounded GOAP search turning a multi-step goal into queued actions.
//! - [`reactive`]: utility sets — the "which now?" layer with veto, selectors and inertia.
//! - [`tuning`]: calibration, defaults and profiles.
//! - [`wire`]: the JSON contract of `geppetto decide` / `decide-batch`.

pub mod affect;
pub mod agent;
pub mod agent_state;
pub mod archetype;
pub mod bark;
pub mod catch_up;
pub mod consideration;
pub mod contention;
pub mod curve;
pub mod decider;
pub mod goal_registry;
pub mod goals;
pub mod planner;
pub mod reactive;
pub mod rng;
pub mod scenario;
pub mod schedule;
pub mod scoring;
pub mod selection;
mod serde_pairs;
pub mod simulator;
pub mod social;
mod spatial;
pub mod story;
pub mod tuning;
pub mod vocabulary;
pub mod wellbeing;
pub mod wire;
pub mod world;

pub use agent::{Agent, Commitment};
pub use consideration::{Consideration, Updater};
pub use contention::{Preference, PreferenceLists};
pub use curve::{ResponseCurve, SampledCurve, Shape, ShapeParams};
pub use decider::{BatchDecision, Decider, Decision, Ranking, batch_agent_seed};
pub use scoring::{Breakdown, Candidate, Ineligible, IneligibleReason};
pub use simulator::{
    AffectLayer, AgentTick, DetailLevel, Prepared, ProviderIndex, QueuedAction, ReactiveLayer,
    RunningAction, SimEvent, SimulatedAgent, Simulator, Stage, TickRequest, TickResult,
    ValueSource, apply_occupancy, zone_agent_seed,
};
pub use tuning::{Profile, Tuning, TuningPatch};
pub use vocabulary::{Symbol, Vocabulary};
pub use world::{
    ActionEffects, AdvertisedAction, CompareOp, Context, Position, Precondition, Provider, World,
};
