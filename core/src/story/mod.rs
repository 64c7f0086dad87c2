//! Story signals: the detector that turns what NPCs do into typed,
//! scored, expiring narrative opportunities for a quest generator.
//!
//! - [`event`]: the events the detector reads and their bounded buffer (atomic swap).
//! - [`signal`]: the fifteen signal types and the signal itself.
//! - [`history`]: the events the rules read over their windows, with their keys hashed.
//! - [`detector`]: the detection rules, their named thresholds, cadence and merging.

pub mod detector;
pub mod event;
pub mod history;
pub mod signal;

pub use detector::{DetectorConfig, StoryDetector};
pub use event::{EventBuffer, GoalChange, StoryEvent, StoryEventKind};
pub use signal::{SignalType, StorySignal};
