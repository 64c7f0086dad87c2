//! Timed simulation: an agent's life over time — ticks, preemption and simulation
//! detail. The [`Decider`] stays stateless; the [`Simulator`] advances a mutable
//! [`SimulatedAgent`] one tick at a time, deterministically from the request and a seed.
//!
//! Order within one [`Simulator::advance`]:
//! 1. expire commitments whose `expires_at` is at or before `now_hours`;
//! 2. at simplified level: record the optional coarse event, let the considerations' updaters
//!    run over the simplified tick, and stop — actions are frozen while simplified;
//! 3. at full level, returning from simplified: apply the profile's aggregated-event effects
//!    (clamped) for every recorded event at or before now, then drop the log;
//! 4. update considerations by updater kind, and note the needs their decay will take critical
//!    (`Agent::running_out`, which scoring's foresight reads);
//! 5. apply the running action's gradual deltas (its promised deltas spread evenly over its
//!    duration, clamped; unknown considerations ignored) and complete it when its time is up;
//! 6. if idle, start the next FIFO queue entry, or select autonomously;
//! 7. a continuing action is considered for preemption: only when some consideration is
//!    critical; a player-queued action only when one is collapsing; the replacement comes from
//!    the normal stochastic pipeline and must strictly beat `preemption_margin ×` the running
//!    action's utility frozen when it started. Preempted work is abandoned; the queue stays.
//!
//! Between 5 and 6, an agent carrying a reactive utility set re-scores it (each decision
//! interval). When the set's pick is in an emergency bucket, that reactive action interrupts the
//! needs-driven one (abandoned, queue kept) and holds the agent until the set picks something
//! else — the way combat preempts daily life. Set inputs read the agent's considerations by
//! name, then the world's perceptions, else the input's minimum.
//!
//! A completed action's symbolic effects (facts added and removed) apply to the agent, so a
//! planned sequence can run through the queue; its costs and yields apply only when the
//! simulator is told to settle resources (a game usually debits costs itself).
//!
//! A newly started action therefore gets its first gradual delta on the following tick.
//! Randomness: the autonomous pick draws from `derive_seed(seed, 1)`, the preemption pick from
//! `derive_seed(seed, 2)`, the reactive set from `derive_seed(seed, 3)`, the schedule's
//! adherence roll from `derive_seed(seed, 4)`, the bark choice from `derive_seed(seed, 5)`,
//! idle chatter (when no bark was said) from `derive_seed(seed, 6)`, queue-entry ranking from `seed` (it only matters for perception noise). Mood and stress
//! (when tracked) are derived after the running action's deltas, and a bark may follow.
//!
//! A schedule, when the agent has one, is applied after the updaters: its block in force
//! becomes the agent's personal context and preferred provider for the decisions of the tick.
//!
//! The folder is laid out by job, each file importing only those above it in this list:
//! [`tick`] (an advance's inputs and outputs), [`agent`] (what an agent carries through time),
//! [`values`] (where world-driven considerations read), [`occupancy`] (provider slots taken
//! and given back), [`advance`] (the [`Simulator`] and one agent's advance), [`prepare`] (the
//! steps before a new action is chosen), [`start`] (queue, autonomous pick and preemption),
//! [`zone`] (a whole zone's tick, with contested slots decided in one batch) and, with the
//! feature `apart` (the actor benchmark's), `apart` (the same tick with each agent owned apart
//! from the zone's world — an actor each, say).

mod advance;
mod agent;
#[cfg(feature = "apart")]
mod apart;
mod occupancy;
mod prepare;
mod start;
mod tick;
mod values;
mod zone;

pub use advance::Simulator;
pub use agent::{
    AffectLayer, DEFAULT_MAX_AFFECT_TICKS_PER_ADVANCE, LayerSet, Layers, ReactiveLayer,
    SimulatedAgent,
};
#[cfg(feature = "apart")]
pub use apart::{Bid, ZoneView};
pub use occupancy::{ProviderIndex, apply_occupancy};
pub use tick::{Prepared, SimEvent, SimEventKind, Stage, TickRequest, TickResult};
pub use values::{ValueSource, WorldMaps};
pub use zone::{AgentTick, zone_agent_seed};
