//! A zone's settings (`[tick]`, `[integration]`, `[living]` and the sections it shares with
//! tiers, the governor and isolation) and why a zone could not be built. Plain data; nothing
//! here runs.

use std::collections::BTreeMap;

use serde::Deserialize;

pub use crate::bus::envelope::Completion;

use crate::zone::governor::GovernorConfig;
use crate::zone::isolation::IsolationConfig;
use crate::zone::tiers::TierConfig;

/// The most bounds `[integration] mood_bands` may hold (a band is kept in a byte).
pub const MAX_MOOD_BANDS: usize = 254;

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
    /// World events remembered by envelope id, so one delivered again (a game retrying a send,
    /// a hand-over replayed by the other zone's recovery) is recognised and not applied twice;
    /// default 16,384 (0 remembers none). Kept in snapshots.
    #[serde(alias = "arrivals_remembered")]
    pub event_ids_remembered: usize,
    /// How long, in game ticks, an applied event's id is remembered; default 1,440 (a game
    /// day). An id is forgotten when it is this old or when `event_ids_remembered` newer ones
    /// came after it.
    pub event_ids_max_age_ticks: u64,
    /// Longest jump one `time_advanced` may make, ticks; default 525,600 (a game year). A
    /// longer one — or time going backwards — is refused (dead-lettered), never applied: a
    /// game clock gone wrong would otherwise cut the zone off from every later tick.
    pub max_time_jump_ticks: u64,
    /// Names world events may add to the zone's vocabulary beyond its content (provider
    /// states, activities, contexts, goal facts the game makes up); default 4096. Past it such
    /// an event is refused naming the name, so made-up names cannot grow a zone without end.
    pub max_event_names: usize,
    /// Longest one NPC's update may take, milliseconds; default 2. A slower update counts as
    /// a failure for isolation, like a panic (logged in the governor's record, so a replay
    /// counts it alike).
    pub npc_budget_ms: f64,
}

impl Default for TickConfig {
    fn default() -> Self {
        Self {
            max_catch_up_ticks_per_event: 60,
            catch_up_max_hours: 168.0,
            max_decisions_per_tick: 1000,
            decision_trace_len: 32,
            event_ids_remembered: 16_384,
            event_ids_max_age_ticks: 1_440,
            max_time_jump_ticks: 525_600,
            max_event_names: 4096,
            npc_budget_ms: 2.0,
        }
    }
}

/// How the game and geppetto share the world (`[integration]` in `geppetto.toml`; see
/// docs/integration.md).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct IntegrationConfig {
    /// Who ends actions in every zone; default `game`.
    pub completion: Completion,
    /// Zones that differ from `completion`, by name.
    pub zones: BTreeMap<String, Completion>,
    /// Game minutes (ticks) the game has to report an NPC in the provider's room after its
    /// `navigate`; default 60.
    pub arrival_timeout_ticks: u64,
    /// An action not reported done within `duration × timeout_factor + timeout_grace_ticks`
    /// of its `use` fails with reason `timeout`; default 2.
    pub timeout_factor: f64,
    /// See `timeout_factor`; default 10 ticks.
    pub timeout_grace_ticks: u64,
    /// Mood values (−1…1, ascending) between the bands `mood_changed` reports, at most
    /// [`MAX_MOOD_BANDS`]; default `[-0.5, -0.15, 0.15, 0.5]`.
    pub mood_bands: Vec<f64>,
    /// The bands' names, one more than `mood_bands`; default `miserable`, `low`, `even`,
    /// `cheerful`, `elated`.
    pub mood_band_names: Vec<String>,
    /// Fewest ticks between two `mood_changed` of one NPC; default 30.
    pub mood_event_min_ticks: u64,
    /// Priority bonus of a goal the game assigns without one; default 2.
    pub assigned_goal_priority: f64,
}

impl Default for IntegrationConfig {
    fn default() -> Self {
        Self {
            completion: Completion::Game,
            zones: BTreeMap::new(),
            arrival_timeout_ticks: 60,
            timeout_factor: 2.0,
            timeout_grace_ticks: 10,
            mood_bands: vec![-0.5, -0.15, 0.15, 0.5],
            mood_band_names: ["miserable", "low", "even", "cheerful", "elated"]
                .map(str::to_owned)
                .to_vec(),
            mood_event_min_ticks: 30,
            assigned_goal_priority: 2.0,
        }
    }
}

impl IntegrationConfig {
    /// Who ends actions in `zone`.
    pub fn completion_in(&self, zone: &str) -> Completion {
        self.zones.get(zone).copied().unwrap_or(self.completion)
    }

    /// Settings where geppetto's timer ends every action (the demo, offline runs).
    pub fn simulated() -> Self {
        Self {
            completion: Completion::Simulated,
            ..Self::default()
        }
    }

    /// What is wrong with these settings, if anything.
    pub fn check(&self) -> Result<(), String> {
        if self.mood_band_names.len() != self.mood_bands.len() + 1 {
            return Err(format!(
                "integration.mood_band_names: {} names for {} bands (one more name than bounds)",
                self.mood_band_names.len(),
                self.mood_bands.len()
            ));
        }
        if self.mood_bands.len() > MAX_MOOD_BANDS {
            return Err(format!(
                "integration.mood_bands: {} bounds, at most {MAX_MOOD_BANDS} (an NPC's band is kept in a byte)",
                self.mood_bands.len()
            ));
        }
        if !self.mood_bands.windows(2).all(|w| w[0] < w[1]) {
            return Err("integration.mood_bands: must ascend".into());
        }
        if !(self.timeout_factor.is_finite() && self.timeout_factor >= 1.0) {
            return Err("integration.timeout_factor: must be at least 1".into());
        }
        Ok(())
    }
}

/// The living world's rules a zone lays over its content (`[living]` in `geppetto.toml`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LivingConfig {
    /// An action of the `rest` domain lasting at least this many game hours is sleep: it
    /// carries the `sleep` tag (added when its content does not say so), which is what keeps
    /// a schedule's sleep block; default 3.
    pub sleep_min_hours: f64,
    /// Whether a provider some resident calls home (`places.home`) lets only the residents
    /// who live there sleep in it; default true.
    pub private_homes: bool,
    /// Whether a decaying need that no action of the world an NPC could do restores drifts
    /// back toward the level the NPC started with, at its decay rate, instead of emptying
    /// for good; default true.
    pub needs_find_their_way_back: bool,
}

impl Default for LivingConfig {
    fn default() -> Self {
        Self {
            sleep_min_hours: 3.0,
            private_homes: true,
            needs_find_their_way_back: true,
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
    /// How the game and geppetto share the world.
    pub integration: IntegrationConfig,
    /// The living world's rules over content (`[living]`).
    pub living: LivingConfig,
    /// The social fabric's settings (`[social]`).
    pub social: geppetto_core::social::FabricConfig,
    /// The story detector's settings (`[story]`).
    pub story: geppetto_core::story::DetectorConfig,
    /// Every zone an NPC may walk into (`npc_transfer`): the zones of the service's config.
    /// `None` (a zone on its own, in tests and offline runs) takes any name.
    pub zones: Option<std::collections::BTreeSet<String>>,
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
