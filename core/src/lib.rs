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
//! The crate is laid out by layer:
//!
//! - [`decision`]: one point-in-time decision — the data it reads (agent, world,
//!   considerations, curves), eligibility and scoring, selection, the [`Decider`], batch
//!   contention and the tuning it is calibrated by.
//! - [`life`]: an agent's life over time — the [`Simulator`] and its action types, goals and
//!   plans, schedules, wellbeing, barks, reactive sets, catch-up, snapshot state and scenarios.
//! - [`social`] and [`story`]: the living world of a zone — relationships, gossip, interactions,
//!   reservations and the social step; story signals detected over its events.
//! - [`affect`]: feelings as integrators with half-lives, channels, couplings and the outburst
//!   overlay.
//! - [`archetype`]: kinds of people as data with inheritance; NPCs as their differences.
//! - [`wire`]: the JSON contract of `geppetto decide` / `decide-batch`; [`wire_enum!`] (from
//!   `geppetto-wire-enum`, re-exported) declares an enum's wire names once.
//! - [`rng`] and [`vocabulary`]: the foundations — seeded randomness and interned names.

pub mod affect;
pub mod archetype;
pub mod decision;
pub mod life;
pub mod rng;
mod serde_pairs;
pub mod social;
pub mod story;
pub mod vocabulary;
pub mod wire;

pub use geppetto_wire_enum::{assert_wire_names_agree, wire_enum};

pub use decision::agent::{Agent, Commitment};
pub use decision::consideration::{Consideration, Updater};
pub use decision::contention::{Preference, PreferenceLists};
pub use decision::curve::{ResponseCurve, SampledCurve, Shape, ShapeParams};
pub use decision::decider::{BatchDecision, CompiledWorld, Decider, Decision, batch_agent_seed};
pub use decision::ranking::Ranking;
pub use decision::scoring::{Breakdown, Candidate, Ineligible, IneligibleReason};
pub use decision::tuning::{Profile, Tuning, TuningPatch};
pub use decision::world::{
    ActionEffects, AdvertisedAction, CompareOp, Context, Position, Precondition, Provider, World,
};
pub use life::action::{DetailLevel, GameCarried, QueuedAction, RunningAction};
pub use life::simulator::{
    AffectLayer, AgentTick, Prepared, ProviderIndex, ReactiveLayer, SimEvent, SimulatedAgent,
    Simulator, Stage, TickRequest, TickResult, ValueSource, apply_occupancy, zone_agent_seed,
};
pub use vocabulary::{Symbol, Vocabulary};
