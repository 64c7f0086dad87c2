//! Story signals: the detector that turns what NPCs do into typed,
//! scored, expiring narrative opportunities for a quest generator.
//!
//! The events the detector reads are the social fabric's chronicle
//! ([`crate::social::chronicle`]), re-exported here.
//!
//! - [`signal`]: the fifteen signal types and the signal itself.
//! - [`history`]: the events the rules read over their windows, with their keys hashed.
//! - [`detector`]: the detection rules, their named thresholds, cadence and merging.

pub mod detector;
pub mod history;
pub mod signal;

pub use crate::social::chronicle::{EventBuffer, GoalChange, StoryEvent, StoryEventKind};
pub use detector::{DetectorConfig, StoryDetector};
pub use signal::{SignalChange, SignalClaimError, SignalEnd, SignalType, StorySignal};
