//! Story signals (seed 001 §4.6): narrative opportunities a quest generator can pick up — a
//! type, an importance in [0, 1], the NPCs and players involved, where, signal-specific
//! context, and when it was raised and expires. Signals are ephemeral: nothing is persisted,
//! and one the world does not act on simply expires.

use std::collections::BTreeMap;

/// The fifteen kinds of story signal.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum SignalType {
    /// Two NPCs' tension is rising.
    RivalryEscalation,
    /// Conflict between factions is brewing.
    FactionTension,
    /// NPCs are aware of a danger.
    ThreatDetected,
    /// NPCs are short of the same thing.
    ResourceScarcity,
    /// Demand meets supply.
    TradeOpportunity,
    /// NPCs are bonding (against a common threat or a common enemy).
    AllianceForming,
    /// An NPC learned something significant.
    Discovery,
    /// An NPC cannot achieve a goal alone.
    GoalBlocked,
    /// An NPC acted against an ally.
    Betrayal,
    /// Hidden information became gossip.
    SecretRevealed,
    /// The social influence hierarchy changed.
    PowerShift,
    /// One-sided affection.
    Unrequited,
    /// Several NPCs are distressed.
    Crisis,
    /// A collective happy moment.
    Celebration,
    /// NPCs change places en masse.
    Migration,
}

impl SignalType {
    /// All fifteen, in declaration order.
    pub const ALL: [Self; 15] = [
        Self::RivalryEscalation,
        Self::FactionTension,
        Self::ThreatDetected,
        Self::ResourceScarcity,
        Self::TradeOpportunity,
        Self::AllianceForming,
        Self::Discovery,
        Self::GoalBlocked,
        Self::Betrayal,
        Self::SecretRevealed,
        Self::PowerShift,
        Self::Unrequited,
        Self::Crisis,
        Self::Celebration,
        Self::Migration,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RivalryEscalation => "rivalry_escalation",
            Self::FactionTension => "faction_tension",
            Self::ThreatDetected => "threat_detected",
            Self::ResourceScarcity => "resource_scarcity",
            Self::TradeOpportunity => "trade_opportunity",
            Self::AllianceForming => "alliance_forming",
            Self::Discovery => "discovery",
            Self::GoalBlocked => "goal_blocked",
            Self::Betrayal => "betrayal",
            Self::SecretRevealed => "secret_revealed",
            Self::PowerShift => "power_shift",
            Self::Unrequited => "unrequited",
            Self::Crisis => "crisis",
            Self::Celebration => "celebration",
            Self::Migration => "migration",
        }
    }
}

/// A detected narrative opportunity.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StorySignal {
    /// Deterministic id: `{type}:{sequence}` within its detector.
    pub id: String,
    /// What kind.
    pub signal_type: SignalType,
    /// 0–1.
    pub importance: f64,
    /// NPCs involved, sorted.
    pub involved_npcs: Vec<String>,
    /// Players involved (present where it happened), sorted.
    pub involved_players: Vec<String>,
    /// Where.
    pub location: String,
    /// Signal-specific data.
    pub context: BTreeMap<String, String>,
    /// Game hour raised.
    pub created_at_hours: f64,
    /// Game hour it lapses if not acted on.
    pub expires_at_hours: f64,
    /// How many later detections of the same situation were merged into it.
    pub merged: u32,
}
