//! Affect dynamics: an NPC's feelings as a small, stable control
//! system that feeds its decisions.
//!
//! Every state (anger, stress, frustration, boredom, fear, hunger, fatigue, resentment… —
//! names are data) is the same integrator: it accumulates impulses and decays toward rest with
//! its own half-life. Events become impulses through per-channel filters (relational by who
//! did it, affinity by what it concerns, physiological unfiltered); states pull on each other
//! through sparse couplings. Each tick reads a frozen snapshot, so equation order never changes
//! the result, and clamps after the update.
//!
//! The optional outburst overlay (off by default) makes the loop a safety valve: couplings
//! escalate with the operating point, a burst latches only after anger and stress hold high
//! for several ticks, extinction drags it back down while latched, and a latched, very angry
//! agent lashes out at the tick's provoker — never at a sourceless event — with a refractory
//! edge that softens repeat hits on the same provoker.
//!
//! The tick is derived, not set (see [`model`]); a config whose linearised loops could grow
//! without bound is refused at load, naming the loop and its spectral radius.

pub mod config;
pub mod engine;
pub mod model;

pub use config::{AffectConfig, ChannelKind, merge_layers};
pub use engine::{AffectEvent, AffectState, AffectTick, Discharge};
pub use model::{AffectConfigError, AffectModel};
