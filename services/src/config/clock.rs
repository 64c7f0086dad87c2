//! `[clock]`: who advances game time, and how fast geppetto's own clock runs.

use serde::Deserialize;

/// Clock settings (`[clock]` in `geppetto.toml`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ClockConfig {
    /// `internal` (geppetto writes `time_advanced`) or `external` (the game does).
    pub kind: ClockKind,
    /// Game minutes (ticks) per wall-clock second of the internal clock.
    pub speed_minutes_per_second: f64,
    /// How often the internal clock publishes, milliseconds.
    pub publish_every_ms: u64,
}

geppetto_core::wire_enum! {
    /// Who advances game time.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum ClockKind {
        /// geppetto's own clock.
        Internal = "internal",
        /// The game's `time_advanced` events.
        External = "external",
    }
}

impl Default for ClockConfig {
    fn default() -> Self {
        Self {
            kind: ClockKind::Internal,
            speed_minutes_per_second: 1.0,
            publish_every_ms: 20,
        }
    }
}
