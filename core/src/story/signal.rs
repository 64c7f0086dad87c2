//! Story signals: narrative opportunities a quest generator can pick up — a
//! type, an importance in [0, 1], the NPCs and players involved, where, signal-specific
//! context, and when it was raised and expires — and what becomes of one after it was raised
//! ([`SignalChange`]): later evidence merged into it, a consumer taking it, its end (lapsed,
//! displaced, resolved). Signals are ephemeral: one the world does not act on simply expires.

use std::collections::BTreeMap;

geppetto_wire_enum::wire_enum! {
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
    /// The consumer (a quest board) that took it, if one did: a taken signal does not lapse;
    /// it stays live until that consumer resolves it.
    #[serde(default)]
    pub taken_by: Option<String>,
}

geppetto_wire_enum::wire_enum! {
    /// Why a signal left the live set.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum SignalEnd {
        /// No evidence for `signal_ttl_hours` and nobody took it.
        Lapsed = "lapsed",
        /// The live set was full and a newer signal took its place.
        Displaced = "displaced",
    }
}

/// What became of a live signal since the detector was last asked
/// ([`crate::story::StoryDetector::take_changes`]).
#[derive(Clone, Debug, PartialEq)]
pub enum SignalChange {
    /// Later evidence merged into it, or a consumer took it: its state now.
    Updated(StorySignal),
    /// It left the live set, as it last was.
    Ended(StorySignal, SignalEnd),
}

/// Why a consumer's claim on a signal was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SignalClaimError {
    /// No live signal has this id (it never existed, ended, or was resolved).
    #[error("no live story signal `{0}` (it ended or never was)")]
    NotLive(String),
    /// Another consumer took it first.
    #[error("story signal `{signal}` was taken by `{by}`")]
    TakenByAnother {
        /// The signal.
        signal: String,
        /// Who holds it.
        by: String,
    },
}
