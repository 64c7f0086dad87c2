//! The detector's numbers ([`DetectorConfig`]): windows, thresholds and capacities, each a
//! named default. Nothing here reads events.

/// The detector's numbers, each a named default.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DetectorConfig {
    /// Ticks between detections; default 30.
    pub every_ticks: u64,
    /// Events buffered between detections at most; default 1000.
    pub buffer_capacity: usize,
    /// Events kept for the rules' windows at most; default 20 000.
    pub history_capacity: usize,
    /// Live signals kept at most (the soonest to expire goes first); default 512.
    pub max_live_signals: usize,
    /// New signals raised in any 24 game hours at most, so a large or turbulent world tells a
    /// quest tool a day's worth of stories rather than every one; default 20 (0: no bound).
    /// Those past it are counted ([`super::StoryDetector::suppressed`]).
    pub max_signals_per_day: usize,
    /// Of those, the last ones go only to a type not raised in the same 24 hours, so a busy
    /// kind cannot crowd the others out; default 4.
    pub daily_slots_for_new_kinds: usize,
    /// A counted rule's importance reaches 1 at this multiple of its threshold; default 2.
    pub importance_saturation: f64,
    /// Importance of a power shift before its margin is added; default 0.5.
    pub power_shift_importance: f64,
    /// Game hours a signal lives after its last evidence; default 24.
    pub signal_ttl_hours: f64,
    /// A find of the same type, at the same place, naming an NPC a live signal names, within
    /// this many game hours of that signal's last evidence is the same incident and merges
    /// into it; default 2.
    pub incident_window_hours: f64,
    /// A live signal takes later evidence for this many game hours from when it was raised;
    /// after that the same situation is a new story and raises a new signal (a thief who
    /// plagues the market for a week is not one week-long threat); default 72.
    pub incident_max_hours: f64,
    /// NPCs a signal names at most: its core participants, those most of its evidence is
    /// about (the rest are counted in its `participants` context); default 6.
    pub max_named_npcs: usize,
    /// Window of most rules; default 6.
    pub pattern_window_hours: f64,
    /// Window of crisis, celebration and migration; default 2.
    pub gathering_window_hours: f64,
    /// Window of rivalry; default 48.
    pub rivalry_window_hours: f64,
    /// Trust fall that makes a rivalry; default 0.3.
    pub rivalry_trust_drop: f64,
    /// Conflicts between two factions that make tension; default 3.
    pub faction_min_conflicts: usize,
    /// A believed threat counts above this credibility; default 0.6.
    pub threat_credible_above: f64,
    /// Importance of a witnessed hostile act; default 0.9.
    pub witnessed_threat_importance: f64,
    /// NPCs short of one need that make scarcity; default 3.
    pub scarcity_min_npcs: usize,
    /// NPCs wanting trade that make an opportunity; default 2.
    pub trade_min_demand: usize,
    /// Loyalty above which two NPCs are allies; default 0.6.
    pub ally_loyalty_above: f64,
    /// Importance of an alliance; default 0.6.
    pub alliance_importance: f64,
    /// A believed rumour is a discovery from this credibility; default 0.7.
    pub discovery_credibility_above: f64,
    /// Importance of a first-hand discovery; default 0.7.
    pub discovery_importance: f64,
    /// Failures of one goal that make it blocked; default 2.
    pub goal_failures_blocked: usize,
    /// Importance of a goal no plan reaches; default 0.6.
    pub goal_blocked_importance: f64,
    /// Importance of a goal that keeps failing; default 0.5.
    pub goal_failing_importance: f64,
    /// Raters an NPC needs to rank in influence; default 2.
    pub power_min_raters: usize,
    /// Lead the new top NPC needs over the old one; default 0.05.
    pub power_shift_margin: f64,
    /// A refused suitor's affinity at least this…; default 0.65.
    pub unrequited_affinity_above: f64,
    /// …while the other's is at most this; default 0.4.
    pub unrequited_other_below: f64,
    /// Distressed NPCs that make a crisis; default 3.
    pub crisis_min_npcs: usize,
    /// Mood below this is distress; default −0.2.
    pub crisis_mood_below: f64,
    /// Stress above this is distress; default 0.7.
    pub crisis_stress_above: f64,
    /// NPCs a celebration gathers; default 4.
    pub celebration_min_npcs: usize,
    /// Friendly interactions a celebration has; default 3.
    pub celebration_min_positive: usize,
    /// Mean mood of a celebration; default 0.3.
    pub celebration_mood_above: f64,
    /// NPCs moving to or from one place that make a migration (above a daily schedule's
    /// evening gathering at the tavern); default 8.
    pub migration_min_npcs: usize,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        Self {
            every_ticks: 30,
            buffer_capacity: 1000,
            history_capacity: 20_000,
            max_live_signals: 512,
            max_signals_per_day: 20,
            daily_slots_for_new_kinds: 4,
            importance_saturation: 2.0,
            power_shift_importance: 0.5,
            signal_ttl_hours: 24.0,
            incident_window_hours: 2.0,
            incident_max_hours: 72.0,
            max_named_npcs: 6,
            pattern_window_hours: 6.0,
            gathering_window_hours: 2.0,
            rivalry_window_hours: 48.0,
            rivalry_trust_drop: 0.3,
            faction_min_conflicts: 3,
            threat_credible_above: 0.6,
            witnessed_threat_importance: 0.9,
            scarcity_min_npcs: 3,
            trade_min_demand: 2,
            ally_loyalty_above: 0.6,
            alliance_importance: 0.6,
            discovery_credibility_above: 0.7,
            discovery_importance: 0.7,
            goal_failures_blocked: 2,
            goal_blocked_importance: 0.6,
            goal_failing_importance: 0.5,
            power_min_raters: 2,
            power_shift_margin: 0.05,
            unrequited_affinity_above: 0.65,
            unrequited_other_below: 0.4,
            crisis_min_npcs: 3,
            crisis_mood_below: -0.2,
            crisis_stress_above: 0.7,
            celebration_min_npcs: 4,
            celebration_min_positive: 3,
            celebration_mood_above: 0.3,
            migration_min_npcs: 8,
        }
    }
}
