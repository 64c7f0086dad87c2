//! Story signals: narrative opportunities a quest generator can pick up — a
//! type, an importance in [0, 1], the NPCs and players involved, where, signal-specific
//! context, and when it was raised and expires. Signals are ephemeral: nothing is persisted,
//! and one the world does not act on simply expires.

use std::collections::BTreeMap;

crate::wire_enum! {
    /// The fifteen kinds of story signal.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum SignalType {
        /// Two NPCs' tension is rising.
        RivalryEscalation = "rivalry_escalation",
        /// Conflict between factions is brewing.
        FactionTension = "faction_tension",
        /// NPCs are aware of a danger.
        ThreatDetected = "threat_detected",
        /// NPCs are short of the same thing.
        ResourceScarcity = "resource_scarcity",
        /// Demand meets supply.
        TradeOpportunity = "trade_opportunity",
        /// NPCs are bonding (against a common threat or a common enemy).
        AllianceForming = "alliance_forming",
        /// An NPC learned something significant.
        Discovery = "discovery",
        /// An NPC cannot achieve a goal alone.
        GoalBlocked = "goal_blocked",
        /// An NPC acted against an ally.
        Betrayal = "betrayal",
        /// Hidden information became gossip.
        SecretRevealed = "secret_revealed",
        /// The social influence hierarchy changed.
        PowerShift = "power_shift",
        /// One-sided affection.
        Unrequited = "unrequited",
        /// Several NPCs are distressed.
        Crisis = "crisis",
        /// A collective happy moment.
        Celebration = "celebration",
        /// NPCs change places en masse.
        Migration = "migration",
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
