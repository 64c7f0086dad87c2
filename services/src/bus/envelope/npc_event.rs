//! The NPC lifecycle and service events geppetto writes to a zone's `npc_events` stream (an
//! action began or ended, a tier or level changed, an NPC arrived, failed, was demoted…).
//! Declared once as the internally tagged serde enum [`NpcEvent`]; [`super::to_envelope`] puts
//! the header in front.

use serde::Serialize;

use super::type_name;

/// NPC lifecycle and service events on `npc_events`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum NpcEvent {
    /// An action began.
    ActionStarted {
        /// NPC id.
        npc: String,
        /// Provider.
        provider: String,
        /// Action.
        action: String,
        /// Its utility.
        utility: f64,
        /// Room of the provider.
        room: String,
    },
    /// An action ended: its time was up, or the game reported it done.
    ActionCompleted {
        /// NPC id.
        npc: String,
        /// Provider.
        provider: String,
        /// Action.
        action: String,
        /// The `use` intent the game reported done, when it did.
        #[serde(skip_serializing_if = "Option::is_none")]
        intent: Option<String>,
        /// What came of it, as the game reported.
        #[serde(skip_serializing_if = "Option::is_none")]
        outcome: Option<String>,
    },
    /// An action was dropped for a better one.
    ActionPreempted {
        /// NPC id.
        npc: String,
        /// Dropped provider.
        provider: String,
        /// Dropped action.
        action: String,
        /// Replacement provider.
        by_provider: String,
        /// Replacement action.
        by_action: String,
    },
    /// A reactive set interrupted an action.
    ActionInterrupted {
        /// NPC id.
        npc: String,
        /// Dropped provider.
        provider: String,
        /// Dropped action.
        action: String,
        /// The set.
        by_set: String,
        /// The set's action.
        by_action: String,
    },
    /// The game reported an intent it could not carry out.
    ActionFailed {
        /// NPC id.
        npc: String,
        /// The failed intent, if known.
        #[serde(skip_serializing_if = "Option::is_none")]
        intent: Option<String>,
        /// Why.
        reason: String,
    },
    /// A queued action could not start.
    QueueEntryDropped {
        /// NPC id.
        npc: String,
        /// Provider.
        provider: String,
        /// Action.
        action: String,
        /// Why.
        reason: String,
    },
    /// A narrative commitment ended.
    CommitmentExpired {
        /// NPC id.
        npc: String,
        /// Tags it forbade.
        forbid_tags: Vec<String>,
    },
    /// A reactive emergency ended.
    ReactiveEnded {
        /// NPC id.
        npc: String,
        /// The set.
        set: String,
        /// The set action.
        action: String,
    },
    /// The core detail level changed (full / simplified).
    LevelChanged {
        /// NPC id.
        npc: String,
        /// Before.
        from: String,
        /// After.
        to: String,
    },
    /// Coarse events recorded while simplified were applied on return.
    AggregatedEventsApplied {
        /// NPC id.
        npc: String,
        /// How many.
        count: usize,
    },
    /// The processing tier changed.
    TierChanged {
        /// NPC id.
        npc: String,
        /// Before.
        from: String,
        /// After.
        to: String,
    },
    /// An NPC was demoted to Background for review (repeated failures or its archetype's breaker).
    NpcDemoted {
        /// NPC id.
        npc: String,
        /// Why.
        reason: String,
        /// Consecutive failures at the time.
        failures: u32,
    },
    /// An NPC update failed (panicked); it keeps its state from before the tick.
    NpcUpdateFailed {
        /// NPC id.
        npc: String,
        /// Consecutive failures so far.
        failures: u32,
        /// The panic message.
        reason: String,
    },
    /// Too many NPCs of one archetype failed: the whole archetype is held back.
    ArchetypeCircuitBreaker {
        /// The archetype.
        archetype: String,
        /// How many of its NPCs failed.
        failed_npc_count: u32,
    },
    /// The tick reached the governor's hard ceiling.
    TickBudgetExceeded {
        /// Zone tick.
        tick: u64,
        /// Measured time, milliseconds.
        elapsed_ms: f64,
        /// NPCs updated.
        npcs_processed: usize,
        /// NPCs skipped.
        npcs_skipped: usize,
    },
    /// An intent was cancelled before being replaced.
    IntentCancelled {
        /// NPC id.
        npc: String,
        /// The cancelled intent's type.
        cancelled_intent_type: String,
        /// Why.
        reason: String,
    },
    /// An NPC joined the zone.
    NpcSpawned {
        /// NPC id.
        npc: String,
        /// Room.
        room: String,
    },
    /// An NPC left the zone.
    NpcDespawned {
        /// NPC id.
        npc: String,
    },
    /// An NPC walked out of this zone into another (handed over through its world stream).
    NpcDeparted {
        /// NPC id.
        npc: String,
        /// Where it went.
        to_zone: String,
    },
    /// An NPC handed over by another zone arrived here.
    NpcArrived {
        /// NPC id.
        npc: String,
        /// Where it came from.
        from_zone: String,
        /// The room it arrived in.
        room: String,
    },
    /// The schedule's activity changed; `None` when no
    /// block is in force.
    ActivityChanged {
        /// NPC id.
        npc: String,
        /// The activity before.
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<String>,
        /// The activity now.
        #[serde(skip_serializing_if = "Option::is_none")]
        to: Option<String>,
    },
    /// Two NPCs interacted: chosen through the decision engine, resolved by
    /// the core's rules.
    Interaction {
        /// Who started it.
        npc: String,
        /// The partner.
        with: String,
        /// `gossip`, `trade`, `conversation`, `argument`, `favor`, `intimidation`,
        /// `scheming`, `mentoring`, `courtship`.
        kind: String,
        /// Whether it went the initiator's way.
        success: bool,
        /// Whether a player saw it (only then is it narrated).
        witnessed: bool,
        /// For a witnessed interaction, the placeholder line; model text may follow as
        /// `narrative_ready` under this event's id.
        #[serde(skip_serializing_if = "Option::is_none")]
        narration: Option<String>,
    },
    /// An NPC heard a rumour and believed it or not.
    RumourHeard {
        /// The listener.
        npc: String,
        /// Who told it.
        teller: String,
        /// Whom it is about.
        subject: String,
        /// `threat`, `opportunity`, `person`, `secret`.
        gossip: String,
        /// Whether its credibility passed the bar.
        believed: bool,
    },
    /// A time jump beyond the tick bound was caught up analytically.
    CaughtUp {
        /// NPC id.
        npc: String,
        /// Game hours caught up (after the cap).
        hours: f64,
        /// Whole days applied in closed form.
        closed_form_days: u32,
        /// Hours simulated one by one for the remainder.
        hourly_steps: u32,
    },
    /// Another core event, by name (published as it appears in the core).
    CoreEvent {
        /// NPC id.
        npc: String,
        /// The core event's snake_case name.
        event: String,
    },
    /// An NPC took on a goal (need-derived, or reactive to a social event).
    GoalCreated {
        /// NPC id.
        npc: String,
        /// The goal, as its archetype describes it.
        description: String,
        /// Which goal.
        #[serde(flatten)]
        goal: GoalFields,
    },
    /// A goal was met.
    GoalCompleted {
        /// NPC id.
        npc: String,
        /// The goal.
        description: String,
        /// Which goal.
        #[serde(flatten)]
        goal: GoalFields,
    },
    /// A goal failed: its deadline passed unmet, or nothing in the world could meet it.
    GoalFailed {
        /// NPC id.
        npc: String,
        /// The goal.
        description: String,
        /// `deadline` (it passed unmet) or `unreachable` (no action of the world adds the fact
        /// or yields the resource it needs: it fails as soon as it is seen).
        reason: String,
        /// Which goal.
        #[serde(flatten)]
        goal: GoalFields,
    },
    /// No plan reaches a goal (a story opportunity: the NPC needs help).
    GoalBlocked {
        /// NPC id.
        npc: String,
        /// The goal.
        description: String,
        /// `budget_exhausted` or `unreachable`.
        reason: String,
        /// Which goal.
        #[serde(flatten)]
        goal: GoalFields,
    },
    /// A player's order was queued.
    OrderAccepted {
        /// NPC id.
        npc: String,
        /// The order's id.
        order: String,
        /// Provider.
        provider: String,
        /// Action.
        action: String,
        /// Who gave it.
        by: String,
    },
    /// A player's order was not taken.
    OrderRefused {
        /// NPC id.
        npc: String,
        /// The order's id.
        order: String,
        /// `engaged`, `unknown_provider`, `not_advertised`.
        reason: String,
    },
    /// A player's order ended.
    OrderDone {
        /// NPC id.
        npc: String,
        /// The order's id.
        order: String,
        /// `completed`, `failed`, `cancelled`, `interrupted` or `dropped`.
        outcome: String,
        /// Why, when it did not complete.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// An NPC's mood crossed into another band.
    MoodChanged {
        /// NPC id.
        npc: String,
        /// The band it is in now (`miserable`, `low`, `even`, `cheerful`, `elated`).
        mood: String,
        /// The band it left.
        from: String,
        /// Its mood, −1…1.
        value: f64,
        /// The latest remembered event kind behind it, or `needs`.
        cause: String,
    },
    /// geppetto placed an NPC where its schedule and catch-up put it (promoted out of
    /// Background): the game moves the NPC object there, showing `leave` to the room it was
    /// in and `arrive` to the room it is in now.
    NpcRelocated {
        /// NPC id.
        npc: String,
        /// The room it was in.
        from: String,
        /// The room it is in now.
        to: String,
        /// Why: the activity its schedule has it at (`work`, `sleep`…), if it names one.
        #[serde(skip_serializing_if = "Option::is_none")]
        activity: Option<String>,
        /// The line for the room it leaves ("Pip leaves: time for work.").
        leave: String,
        /// The line for the room it arrives in ("Pip arrives: time for work.").
        arrive: String,
    },
    /// The game took an NPC over: it makes no decisions until released.
    NpcEngaged {
        /// NPC id.
        npc: String,
        /// Why.
        reason: String,
    },
    /// The game gave an engaged NPC back.
    NpcReleased {
        /// NPC id.
        npc: String,
    },
    /// An NPC held by isolation was given back (admin).
    NpcReinstated {
        /// NPC id.
        npc: String,
    },
    /// A goal the game assigned was refused (the `goal_assigned` also goes to `deadletter`).
    GoalRefused {
        /// NPC id, as the assignment named it.
        npc: String,
        /// The goal's id.
        goal_id: String,
        /// The field at fault and why (`goal.predicate: …`, `goal.id: … already pursues …`).
        reason: String,
    },
    /// An NPC remembers a player's deed (`quest_outcome`): its regard for the player before
    /// and after.
    DeedRemembered {
        /// NPC id.
        npc: String,
        /// The player.
        by: String,
        /// `helped`, `failed` or `harmed`.
        outcome: &'static str,
        /// The quest, when the game named it.
        #[serde(skip_serializing_if = "Option::is_none")]
        quest: Option<String>,
        /// Its regard for the player before.
        before: Regard,
        /// And after.
        after: Regard,
    },
    /// An archetype's circuit breaker was reset (admin).
    BreakerReset {
        /// The archetype.
        archetype: String,
    },
    /// A social event reached an NPC.
    SocialInteraction {
        /// The target NPC.
        npc: String,
        /// The kind.
        kind: String,
        /// Who did it.
        source: String,
    },
}

/// What names a goal in its events: a quest tool matches `goal_created` to `goal_completed`
/// by `goal_id`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GoalFields {
    /// Stable for the goal's life; the game's id for an assigned goal.
    pub goal_id: String,
    /// `innate`, `need_derived`, `reactive` or `assigned`.
    pub category: String,
    /// Who or what caused it (`archetype:smith`, `need`, `event:theft`, `game`).
    pub source: String,
    /// Whom or what it is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// When it is met, as goals are written (`{"predicate_type": …}`).
    pub predicate: serde_json::Value,
    /// Game hour it fails at if unmet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_hours: Option<f64>,
}

impl NpcEvent {
    /// The `type` tag (see [`type_name`]).
    pub fn kind(&self) -> String {
        type_name(self).into_owned()
    }
}

/// How one NPC regards another, as `deed_remembered` shows it (each 0–1, 0.5 neutral).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Regard {
    /// Trust.
    pub trust: f64,
    /// Respect.
    pub respect: f64,
    /// Loyalty.
    pub loyalty: f64,
    /// Affinity.
    pub affinity: f64,
}

impl From<&geppetto_core::social::Relationship> for Regard {
    fn from(r: &geppetto_core::social::Relationship) -> Self {
        let round = |v: f64| (v * 10_000.0).round() / 10_000.0;
        Self {
            trust: round(r.trust),
            respect: round(r.respect),
            loyalty: round(r.loyalty),
            affinity: round(r.affinity),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_names_its_type_as_serde_writes_it() {
        let event = NpcEvent::TierChanged {
            npc: "a".into(),
            from: "background".into(),
            to: "active".into(),
        };
        assert_eq!(event.kind(), "tier_changed");
        let value = serde_json::to_value(&event).expect("json");
        assert_eq!(value["type"], "tier_changed");
    }
}
