//! The fabric's numbers ([`FabricConfig`]), the names of the needs it moves ([`NeedNames`]) and
//! how one NPC takes part ([`SocialProfile`]), each a named default. Nothing here runs a step.

use crate::social::gossip::GossipConfig;
use crate::social::interaction::InteractionConfig;
use crate::social::relationships::RelationshipThresholds;

/// How one NPC takes part in social life (from its archetype).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SocialProfile {
    /// How readily it passes rumours on (0–1); default 0.5.
    pub gossip_tendency: f64,
    /// How readily it starts an interaction (0–1); default 0.5.
    pub social_initiative: f64,
    /// How much its word weighs (0–1): it raises the pull of its gossip and makes an
    /// influential NPC manipulate rather than defame; default 0.5.
    pub influence: f64,
    /// The faction it belongs to, if any.
    pub faction: Option<String>,
}

impl Default for SocialProfile {
    fn default() -> Self {
        Self {
            gossip_tendency: 0.5,
            social_initiative: 0.5,
            influence: 0.5,
            faction: None,
        }
    }
}

/// The names of the needs interactions touch, by role; defaults are the living-world needs.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NeedNames {
    /// Company; default `SOCIAL`.
    pub social: String,
    /// Money; default `ECONOMIC`.
    pub economic: String,
    /// Safety; default `SURVIVAL`.
    pub survival: String,
    /// Meaning; default `PURPOSE`.
    pub purpose: String,
    /// Advancement; default `AMBITION`.
    pub ambition: String,
}

impl Default for NeedNames {
    fn default() -> Self {
        Self {
            social: "SOCIAL".into(),
            economic: "ECONOMIC".into(),
            survival: "SURVIVAL".into(),
            purpose: "PURPOSE".into(),
            ambition: "AMBITION".into(),
        }
    }
}

/// Every number of the social step, each a named default.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FabricConfig {
    /// Gossip reception and telling.
    pub gossip: GossipConfig,
    /// Interaction rules and advertisement lines.
    pub interactions: InteractionConfig,
    /// Friend / rival / ally lines.
    pub thresholds: RelationshipThresholds,
    /// Need names by role.
    pub needs: NeedNames,
    /// Ticks between social steps; default 10.
    pub step_every_ticks: u64,
    /// Game hours an interaction reserves both sides; default 0.25.
    pub interaction_hours: f64,
    /// Game hours both sides wait before the next interaction; default 1.
    pub cooldown_hours: f64,
    /// Game days for how one NPC regards another to relax halfway back to neutral when
    /// nothing renews it (quarrels are forgiven, fondness fades unless kept up); default 7, 0
    /// never.
    pub regard_half_life_days: f64,
    /// Nearest NPCs in the same place that advertise to an initiator; default 8.
    pub max_partners_considered: usize,
    /// Interactions resolved per step at most (a zone spreads a step over its ticks, so 30
    /// over 10 ticks is at most 3 a tick); default 30.
    pub max_interactions_per_step: usize,
    /// Action tags whose start others may witness as a hostile act; default `[theft]`.
    pub hostile_act_tags: Vec<String>,
    /// Chance each NPC in the place sees a hostile act; default 0.7.
    pub witness_chance: f64,
    /// Confidence of a witness's rumour (what one saw oneself); default 1.
    pub witness_confidence: f64,
    /// Trust a witness loses in the actor; default 0.35.
    pub witness_trust_loss: f64,
    /// Respect a witness loses for the actor; default 0.1.
    pub witness_respect_loss: f64,
    /// Confidence of the grievance an argument or intimidation leaves its target with; default 0.8.
    pub grievance_confidence: f64,
    /// Confidence of the secret a scheme leaves its partner with; default 0.9.
    pub scheme_secret_confidence: f64,
    /// Confidence of the opportunity a trade makes known; default 0.7.
    pub trade_rumour_confidence: f64,
    /// The resource an acquire goal is about; default `gold`.
    pub acquire_resource: String,
    /// How much more of it an acquire goal wants; default 5.
    pub acquire_amount: f64,
    /// Game hours an acquire goal has; default 24.
    pub acquire_deadline_hours: f64,
    /// Priority bonus of an acquire goal (× the profile's priority weight, so 0.1 weighs like an
    /// empty need of weight 1 that an action half restores); default 0.1.
    pub acquire_bonus: f64,
    /// A mood shift at least this large is a story event; default 0.15.
    pub mood_change_min: f64,
    /// A need below this (0–1) is a story event; default 0.2.
    pub need_low_below: f64,
    /// Trust an NPC gains in a player who helped it (a quest done for it), and loses in one
    /// who harmed it; default 0.3.
    pub deed_trust: f64,
    /// Respect, likewise; default 0.15.
    pub deed_respect: f64,
    /// Affinity, likewise; default 0.2.
    pub deed_affinity: f64,
    /// The share of a harm's effects a failed quest has (trust lost in one who took the quest
    /// on and let it fail); default 0.25.
    pub deed_failed_share: f64,
    /// Confidence of the rumour an NPC holds about a deed done to it; default 1.
    pub deed_confidence: f64,
    /// How a deed feels to an NPC with a wellbeing layer: this mood for help, its negative for
    /// harm (a failure its `deed_failed_share`); default 0.5.
    pub deed_mood: f64,
    /// A player regarded this warmly or more (the mean of trust and affinity, 0–1) hears an
    /// NPC's warm replies; default 0.65.
    pub reply_warm_above: f64,
    /// At or below this, its cold ones; default 0.35.
    pub reply_cold_below: f64,
}

impl Default for FabricConfig {
    fn default() -> Self {
        Self {
            gossip: GossipConfig::default(),
            interactions: InteractionConfig::default(),
            thresholds: RelationshipThresholds::default(),
            needs: NeedNames::default(),
            step_every_ticks: 10,
            interaction_hours: 0.25,
            cooldown_hours: 1.0,
            regard_half_life_days: 7.0,
            max_partners_considered: 8,
            max_interactions_per_step: 30,
            hostile_act_tags: vec!["theft".into()],
            witness_chance: 0.7,
            witness_confidence: 1.0,
            witness_trust_loss: 0.35,
            witness_respect_loss: 0.1,
            grievance_confidence: 0.8,
            scheme_secret_confidence: 0.9,
            trade_rumour_confidence: 0.7,
            acquire_resource: "gold".into(),
            acquire_amount: 5.0,
            acquire_deadline_hours: 24.0,
            acquire_bonus: 0.1,
            mood_change_min: 0.15,
            need_low_below: 0.2,
            deed_trust: 0.3,
            deed_respect: 0.15,
            deed_affinity: 0.2,
            deed_failed_share: 0.25,
            deed_confidence: 1.0,
            deed_mood: 0.5,
            reply_warm_above: 0.65,
            reply_cold_below: 0.35,
        }
    }
}
