//! A zone's settings (`[tick]` and the sections it shares with tiers, the governor and
//! isolation) and why a zone could not be built. Plain data; nothing here runs.

use serde::Deserialize;

use crate::zone::governor::GovernorConfig;
use crate::zone::isolation::IsolationConfig;
use crate::zone::tiers::TierConfig;

/// Zone tick settings (`[tick]` in `geppetto.toml`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TickConfig {
    /// Ticks one `time_advanced` event may run at most; default 60. A longer jump (a server
    /// back after a night offline) brings every NPC over the rest analytically
    /// (whole days in closed form, the remainder hourly) and ticks only the last ones.
    pub max_catch_up_ticks_per_event: u64,
    /// Longest jump caught up analytically, game hours; default 168 (a week). Older time is
    /// gone.
    pub catch_up_max_hours: f64,
    /// Recent decisions kept per NPC for the inspector (`GET /npcs/{id}/decisions`); default
    /// 32, 0 keeps none.
    pub decision_trace_len: usize,
    /// Fresh decisions (idle NPCs choosing an action) one tick makes at most; default 1000.
    /// When more NPCs are idle at once (a crowd spawned together, a shift ending), the
    /// lowest-priority ones wait a tick, so such a tick costs no more than a thousand
    /// decisions.
    pub max_decisions_per_tick: usize,
    /// Scoring threads for the zone's batch decision (never changes the result).
    pub decision_workers: usize,
    /// Handovers from other zones remembered by id, so one handed over again (the other zone
    /// replaying its log after a failover) is recognised and not applied twice; default 4096.
    pub arrivals_remembered: usize,
}

impl Default for TickConfig {
    fn default() -> Self {
        Self {
            max_catch_up_ticks_per_event: 60,
            catch_up_max_hours: 168.0,
            max_decisions_per_tick: 1000,
            decision_trace_len: 32,
            decision_workers: 1,
            arrivals_remembered: 4096,
        }
    }
}

/// Everything a zone is configured with.
#[derive(Clone, Debug, Default)]
pub struct ZoneConfig {
    /// Tick settings.
    pub tick: TickConfig,
    /// Tier settings.
    pub tiers: TierConfig,
    /// Governor settings.
    pub governor: GovernorConfig,
    /// Isolation settings.
    pub isolation: IsolationConfig,
}

/// Why a zone could not be built or an NPC spawned.
#[derive(Debug, thiserror::Error)]
pub enum ZoneError {
    /// The world file names an unknown profile.
    #[error("profile: unknown profile `{0}`")]
    UnknownProfile(String),
    /// A spec did not compile.
    #[error("{0}")]
    Spec(String),
}
