//! The versioned JSON envelope of every bus message (DESIGN §10.2):
//! `{"v": 1, "type", "id", "zone", "game_time", ...payload}`.
//!
//! Owns the closed list of world events geppetto accepts (parsed with the type and JSON path of
//! the first problem), the intents it emits, the NPC lifecycle events and the dead-letter record.
//! It does not decide anything: the zone turns world events into intents; this module only
//! shapes and checks the JSON. Game time is an integer count of ticks.

use std::collections::BTreeMap;

use geppetto_core::wire::limits::{JsonLimits, check_json};
use serde::de::DeserializeOwned;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The envelope version this build reads and writes.
pub const ENVELOPE_VERSION: u64 = 1;

/// A world event that could not be accepted: its type (when readable), the JSON path and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind} event: {path}: {reason}")]
pub struct EnvelopeError {
    /// The `type` field, or `unknown` when it is missing or not a string.
    pub kind: String,
    /// JSON path of the offending value (`.` for the document).
    pub path: String,
    /// What is wrong.
    pub reason: String,
}

impl EnvelopeError {
    fn new(kind: &str, path: &str, reason: impl Into<String>) -> Self {
        Self {
            kind: kind.to_owned(),
            path: path.to_owned(),
            reason: reason.into(),
        }
    }
}

/// The common header of every envelope.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Schema version.
    pub v: u64,
    /// Message id, unique per stream; deterministic for intents and NPC events.
    pub id: String,
    /// The zone the message belongs to.
    pub zone: String,
    /// Game time in ticks.
    pub game_time: u64,
}

/// A world event as received: header plus the typed event.
#[derive(Clone, Debug, PartialEq)]
pub struct WorldMessage {
    /// Its header.
    pub header: Header,
    /// What happened.
    pub event: WorldEvent,
}

/// The world events the game (or geppetto's own clock and governor) writes to `world`.
#[derive(Clone, Debug, PartialEq)]
pub enum WorldEvent {
    /// Game time is now the envelope's `game_time`.
    TimeAdvanced,
    /// A player entered a room.
    PlayerEntered {
        /// Player id.
        player: String,
        /// Room id.
        room: String,
    },
    /// A player left the zone (or the room named).
    PlayerLeft {
        /// Player id.
        player: String,
    },
    /// A new NPC.
    NpcSpawned {
        /// Its spec as JSON — the decide-contract agent plus room, name, archetype; or
        /// `{"resident": {id, archetype, room, position, places?, overrides?}}` for an NPC
        /// built from an archetype — checked as a [`crate::content::world_file::SpawnRecord`] when parsed.
        npc: Value,
    },
    /// An NPC was removed by the game.
    NpcDespawned {
        /// NPC id.
        npc: String,
    },
    /// An NPC leaves this zone for another (it walked through a border): the zone removes it
    /// and hands it over through the target zone's world stream as [`WorldEvent::NpcArrived`].
    NpcTransfer {
        /// NPC id.
        npc: String,
        /// The zone it goes to.
        to_zone: String,
        /// The room it arrives in there.
        room: String,
    },
    /// An NPC handed over by another zone (written by geppetto, never by the game).
    NpcArrived(Box<Arrival>),
    /// A provider's state or capacity changed.
    ProviderUpdated {
        /// Provider id.
        provider: String,
        /// New state for `provider_state` preconditions.
        state: Option<String>,
        /// New slot count.
        capacity: Option<u32>,
    },
    /// Something social happened to an NPC (insult, gift, theft, …).
    SocialEvent {
        /// What kind.
        kind: String,
        /// Who did it.
        source: String,
        /// To whom (an NPC id).
        target: String,
        /// Changes to the target's considerations.
        deltas: BTreeMap<String, f64>,
        /// How it moves the target's mood (−1…1); absent: the archetype's `event_moods` for
        /// this kind.
        mood: Option<f64>,
        /// Whom it is about when that is not the target (a rumour's subject).
        about: Option<String>,
    },
    /// A temporary schedule block for one NPC (a festival, a summons, a curfew) that replaces
    /// its schedule until it expires.
    ScheduleOverride {
        /// NPC id.
        npc: String,
        /// What the NPC does meanwhile (`worship`, `guard`…).
        activity: String,
        /// Where: a provider id or a placeholder like `{home}`.
        location: Option<String>,
        /// Action tags the activity favours.
        tags: Vec<String>,
        /// Game hours it holds from the envelope's time.
        hours: f64,
    },
    /// The game finished carrying out an intent.
    ActionCompleted {
        /// NPC id.
        npc: String,
        /// The intent id, if known.
        intent: Option<String>,
    },
    /// The game could not carry out an intent; the NPC's action is dropped.
    ActionFailed {
        /// NPC id.
        npc: String,
        /// The intent id, if known.
        intent: Option<String>,
        /// Why.
        reason: String,
    },
    /// The weather changed; the world file maps it to contexts.
    WeatherChanged {
        /// The weather's name.
        weather: String,
    },
    /// Free text said in a room (for perception).
    Say {
        /// Who spoke.
        speaker: String,
        /// Where.
        room: Option<String>,
        /// What.
        text: String,
        /// The NPC spoken to, when the game knows.
        addressee: Option<String>,
    },
    /// A tick-budget governor decision, written by geppetto before it takes effect.
    GovernorDecision(GovernorDecision),
}

/// What the governor decided for one tick, logged before it is applied.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GovernorDecision {
    /// The zone tick the decision belongs to.
    pub tick: u64,
    /// NPCs demoted from Active to Nearby processing from the next tick.
    #[serde(default)]
    pub demote: Vec<String>,
    /// NPCs given back their tier after calm ticks.
    #[serde(default)]
    pub restore: Vec<String>,
    /// NPCs skipped at the hard ceiling in this tick.
    #[serde(default)]
    pub skipped: Vec<String>,
}

impl WorldEvent {
    /// The `type` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::TimeAdvanced => "time_advanced",
            Self::PlayerEntered { .. } => "player_entered",
            Self::PlayerLeft { .. } => "player_left",
            Self::NpcSpawned { .. } => "npc_spawned",
            Self::NpcDespawned { .. } => "npc_despawned",
            Self::NpcTransfer { .. } => "npc_transfer",
            Self::NpcArrived(_) => "npc_arrived",
            Self::ProviderUpdated { .. } => "provider_updated",
            Self::SocialEvent { .. } => "social_event",
            Self::ScheduleOverride { .. } => "schedule_override",
            Self::ActionCompleted { .. } => "action_completed",
            Self::ActionFailed { .. } => "action_failed",
            Self::WeatherChanged { .. } => "weather_changed",
            Self::Say { .. } => "say",
            Self::GovernorDecision(_) => "governor_decision",
        }
    }

    /// The payload fields as JSON (without the header).
    fn payload(&self) -> Value {
        match self {
            Self::TimeAdvanced => serde_json::json!({}),
            Self::PlayerEntered { player, room } => {
                serde_json::json!({"player": player, "room": room})
            }
            Self::PlayerLeft { player } => serde_json::json!({"player": player}),
            Self::NpcSpawned { npc } => serde_json::json!({"npc": npc}),
            Self::NpcDespawned { npc } => serde_json::json!({"npc": npc}),
            Self::NpcTransfer { npc, to_zone, room } => {
                serde_json::json!({"npc": npc, "to_zone": to_zone, "room": room})
            }
            Self::NpcArrived(arrival) => serde_json::to_value(arrival).unwrap_or(Value::Null),
            Self::ProviderUpdated {
                provider,
                state,
                capacity,
            } => serde_json::json!({"provider": provider, "state": state, "capacity": capacity}),
            Self::SocialEvent {
                kind,
                source,
                target,
                deltas,
                mood,
                about,
            } => serde_json::json!({
                "kind": kind, "source": source, "target": target, "deltas": deltas, "mood": mood,
                "about": about
            }),
            Self::ScheduleOverride {
                npc,
                activity,
                location,
                tags,
                hours,
            } => serde_json::json!({
                "npc": npc, "activity": activity, "location": location, "tags": tags,
                "hours": hours
            }),
            Self::ActionCompleted { npc, intent } => {
                serde_json::json!({"npc": npc, "intent": intent})
            }
            Self::ActionFailed {
                npc,
                intent,
                reason,
            } => serde_json::json!({"npc": npc, "intent": intent, "reason": reason}),
            Self::WeatherChanged { weather } => serde_json::json!({"weather": weather}),
            Self::Say {
                speaker,
                room,
                text,
                addressee,
            } => serde_json::json!({
                "speaker": speaker, "room": room, "text": text, "addressee": addressee
            }),
            Self::GovernorDecision(decision) => {
                serde_json::to_value(decision).unwrap_or(Value::Null)
            }
        }
    }
}

/// Serialises `header` + `kind` + `payload` (an object) into one envelope line.
fn envelope_json(header: &Header, kind: &str, payload: Value) -> String {
    let mut object = serde_json::Map::new();
    object.insert("v".into(), Value::from(header.v));
    object.insert("type".into(), Value::from(kind));
    object.insert("id".into(), Value::from(header.id.clone()));
    object.insert("zone".into(), Value::from(header.zone.clone()));
    object.insert("game_time".into(), Value::from(header.game_time));
    if let Value::Object(fields) = payload {
        for (key, value) in fields {
            if !value.is_null() {
                object.insert(key, value);
            }
        }
    }
    Value::Object(object).to_string()
}

impl WorldMessage {
    /// The envelope as one JSON line.
    pub fn to_json(&self) -> String {
        envelope_json(&self.header, self.event.kind(), self.event.payload())
    }
}

/// Reads a payload struct from the whole envelope object, naming the path of the first problem.
fn payload<T: DeserializeOwned>(kind: &str, value: &Value) -> Result<T, EnvelopeError> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        EnvelopeError::new(kind, &path, error.into_inner().to_string())
    })
}

#[derive(Deserialize)]
struct PlayerEntered {
    player: String,
    room: String,
}
#[derive(Deserialize)]
struct PlayerLeft {
    player: String,
}
#[derive(Deserialize)]
struct NpcOnly {
    npc: String,
}
#[derive(Deserialize)]
struct NpcTransfer {
    npc: String,
    to_zone: String,
    room: String,
}

/// A traveller handed from one zone to another: how to build it, and what it brings along.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Arrival {
    /// The zone it left.
    pub from_zone: String,
    /// How to build it (see [`crate::content::world_file::SpawnRecord`]): a decide-contract NPC, or
    /// `{"resident": …}` for an archetype resident.
    pub npc: Value,
    /// Its needs as it left, by consideration name.
    #[serde(default)]
    pub needs: BTreeMap<String, f64>,
    /// The rumours it carries (it may tell them in its new zone: gossip crossing a border).
    #[serde(default)]
    pub rumours: Vec<geppetto_core::social::Gossip>,
}
#[derive(Deserialize)]
struct ProviderUpdated {
    provider: String,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    capacity: Option<u32>,
}
#[derive(Deserialize)]
struct SocialEvent {
    kind: String,
    source: String,
    target: String,
    #[serde(default)]
    deltas: BTreeMap<String, f64>,
    #[serde(default)]
    mood: Option<f64>,
    #[serde(default)]
    about: Option<String>,
}
#[derive(Deserialize)]
struct ScheduleOverride {
    npc: String,
    activity: String,
    #[serde(default)]
    location: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    hours: f64,
}
#[derive(Deserialize)]
struct ActionReport {
    npc: String,
    #[serde(default)]
    intent: Option<String>,
    #[serde(default)]
    reason: Option<String>,
}
#[derive(Deserialize)]
struct WeatherChanged {
    weather: String,
}
#[derive(Deserialize)]
struct Say {
    speaker: String,
    #[serde(default)]
    room: Option<String>,
    text: String,
    #[serde(default)]
    addressee: Option<String>,
}

/// Limits on one world-stream message (`[consumer.limits]` in `geppetto.toml`), checked on the
/// raw text before it is parsed.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct EnvelopeLimits {
    /// Largest message, bytes. Default 1 MiB (a governor record naming thousands of NPCs fits).
    pub max_bytes: usize,
    /// Deepest nesting of objects and arrays. Default 16 (an `npc_spawned` spec needs 7).
    pub max_depth: usize,
    /// Longest id, name, tag or key, bytes. Default 256.
    pub max_id_bytes: usize,
    /// Longest free text (`text` of a `say`, `reason` of an `action_failed`), bytes. Default
    /// 4096.
    pub max_text_bytes: usize,
}

impl Default for EnvelopeLimits {
    fn default() -> Self {
        Self {
            max_bytes: 1024 * 1024,
            max_depth: 16,
            max_id_bytes: 256,
            max_text_bytes: 4096,
        }
    }
}

impl EnvelopeLimits {
    /// The raw-text limits of a message.
    pub fn json(&self) -> JsonLimits<'static> {
        JsonLimits {
            prefix: "consumer.limits",
            max_bytes: self.max_bytes,
            max_depth: self.max_depth,
            max_id_bytes: self.max_id_bytes,
            max_text_bytes: self.max_text_bytes,
            text_fields: &["text", "reason"],
        }
    }
}

/// Parses one world-stream message under the default [`EnvelopeLimits`].
pub fn parse_world(text: &str) -> Result<WorldMessage, EnvelopeError> {
    parse_world_within(text, &EnvelopeLimits::default())
}

/// Parses one world-stream message. A message over `limits` is refused before it is parsed,
/// naming the limit. Unknown fields are ignored; a missing or mistyped field, an unknown type,
/// a number out of range or a newer version is refused with the type and the JSON path.
pub fn parse_world_within(
    text: &str,
    limits: &EnvelopeLimits,
) -> Result<WorldMessage, EnvelopeError> {
    check_json(text, &limits.json())
        .map_err(|e| EnvelopeError::new("unknown", ".", e.to_string()))?;
    let value: Value = serde_json::from_str(text)
        .map_err(|e| EnvelopeError::new("unknown", ".", format!("not JSON: {e}")))?;
    let Some(object) = value.as_object() else {
        return Err(EnvelopeError::new("unknown", ".", "expected a JSON object"));
    };
    let kind = match object.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(_) => return Err(EnvelopeError::new("unknown", "type", "expected a string")),
        None => return Err(EnvelopeError::new("unknown", "type", "missing field")),
    };
    let header: Header = payload(&kind, &value)?;
    if header.v != ENVELOPE_VERSION {
        return Err(EnvelopeError::new(
            &kind,
            "v",
            format!(
                "unsupported version {} (this build reads {ENVELOPE_VERSION})",
                header.v
            ),
        ));
    }
    let event = match kind.as_str() {
        "time_advanced" => WorldEvent::TimeAdvanced,
        "player_entered" => {
            let p: PlayerEntered = payload(&kind, &value)?;
            WorldEvent::PlayerEntered {
                player: p.player,
                room: p.room,
            }
        }
        "player_left" => {
            let p: PlayerLeft = payload(&kind, &value)?;
            WorldEvent::PlayerLeft { player: p.player }
        }
        "npc_spawned" => {
            let npc = value.get("npc").cloned().unwrap_or(Value::Null);
            crate::content::world_file::SpawnRecord::parse(&npc).map_err(|(path, reason)| {
                EnvelopeError::new(
                    &kind,
                    &crate::content::world_file::field_path("npc", &path),
                    reason,
                )
            })?;
            WorldEvent::NpcSpawned { npc }
        }
        "npc_despawned" => {
            let p: NpcOnly = payload(&kind, &value)?;
            WorldEvent::NpcDespawned { npc: p.npc }
        }
        "npc_transfer" => {
            let p: NpcTransfer = payload(&kind, &value)?;
            WorldEvent::NpcTransfer {
                npc: p.npc,
                to_zone: p.to_zone,
                room: p.room,
            }
        }
        "npc_arrived" => {
            let arrival: Arrival = payload(&kind, &value)?;
            crate::content::world_file::SpawnRecord::parse(&arrival.npc).map_err(
                |(path, reason)| {
                    EnvelopeError::new(
                        &kind,
                        &crate::content::world_file::field_path("npc", &path),
                        reason,
                    )
                },
            )?;
            WorldEvent::NpcArrived(Box::new(arrival))
        }
        "provider_updated" => {
            let p: ProviderUpdated = payload(&kind, &value)?;
            WorldEvent::ProviderUpdated {
                provider: p.provider,
                state: p.state,
                capacity: p.capacity,
            }
        }
        "social_event" => {
            let p: SocialEvent = payload(&kind, &value)?;
            if p.mood.is_some_and(|mood| !(-1.0..=1.0).contains(&mood)) {
                return Err(EnvelopeError::new(
                    &kind,
                    "mood",
                    "must be between -1 and 1",
                ));
            }
            WorldEvent::SocialEvent {
                kind: p.kind,
                source: p.source,
                target: p.target,
                deltas: p.deltas,
                mood: p.mood,
                about: p.about,
            }
        }
        "schedule_override" => {
            let p: ScheduleOverride = payload(&kind, &value)?;
            if !(p.hours.is_finite() && p.hours > 0.0) {
                return Err(EnvelopeError::new(
                    &kind,
                    "hours",
                    "must be a positive number of game hours",
                ));
            }
            WorldEvent::ScheduleOverride {
                npc: p.npc,
                activity: p.activity,
                location: p.location,
                tags: p.tags,
                hours: p.hours,
            }
        }
        "action_completed" => {
            let p: ActionReport = payload(&kind, &value)?;
            WorldEvent::ActionCompleted {
                npc: p.npc,
                intent: p.intent,
            }
        }
        "action_failed" => {
            let p: ActionReport = payload(&kind, &value)?;
            WorldEvent::ActionFailed {
                npc: p.npc,
                intent: p.intent,
                reason: p.reason.unwrap_or_else(|| "unspecified".into()),
            }
        }
        "weather_changed" => {
            let p: WeatherChanged = payload(&kind, &value)?;
            WorldEvent::WeatherChanged { weather: p.weather }
        }
        "say" => {
            let p: Say = payload(&kind, &value)?;
            WorldEvent::Say {
                speaker: p.speaker,
                room: p.room,
                text: p.text,
                addressee: p.addressee,
            }
        }
        "governor_decision" => WorldEvent::GovernorDecision(payload(&kind, &value)?),
        other => {
            return Err(EnvelopeError::new(
                other,
                "type",
                format!("unknown world event type `{other}`"),
            ));
        }
    };
    Ok(WorldMessage { header, event })
}

/// What geppetto tells the game an NPC now does.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Intent {
    /// Walk to a room (to reach a provider).
    Navigate {
        /// NPC id.
        npc: String,
        /// Room it is in.
        from_room: String,
        /// Room to reach.
        to_room: String,
        /// The provider it is heading for.
        provider: String,
    },
    /// Use an advertised action of a provider.
    Use {
        /// NPC id.
        npc: String,
        /// Provider id.
        provider: String,
        /// Action id.
        action: String,
        /// How long it lasts, in ticks.
        duration_ticks: u64,
        /// Whether a player ordered it.
        player_queued: bool,
    },
    /// Interact with other NPCs at the same place.
    Social {
        /// NPC id.
        npc: String,
        /// The others.
        with: Vec<String>,
        /// The action that brings them together.
        action: String,
        /// Where.
        provider: String,
        /// Whether a player is in the room to see it (only then is it narrated).
        witnessed: bool,
        /// For a witnessed interaction, the placeholder line to show now; model text may
        /// follow as `narrative_ready` on the narrative stream, under this intent's id.
        #[serde(skip_serializing_if = "Option::is_none")]
        narration: Option<String>,
    },
    /// Say a line aloud.
    Bark {
        /// NPC id.
        npc: String,
        /// The line.
        text: String,
    },
    /// Stop carrying out an earlier intent.
    Cancel {
        /// NPC id.
        npc: String,
        /// The id of the cancelled intent.
        cancelled: String,
        /// Why (`preempted`, `interrupted`, `failed`, `demoted`, `despawned`).
        reason: String,
    },
    /// A reactive set's action (flee, call the guard…).
    Reactive {
        /// NPC id.
        npc: String,
        /// The set.
        set: String,
        /// The set's action.
        action: String,
    },
}

impl Intent {
    /// The NPC the intent is for.
    pub fn npc(&self) -> &str {
        match self {
            Self::Navigate { npc, .. }
            | Self::Use { npc, .. }
            | Self::Social { npc, .. }
            | Self::Bark { npc, .. }
            | Self::Cancel { npc, .. }
            | Self::Reactive { npc, .. } => npc,
        }
    }
}

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
    /// An action ran its full duration.
    ActionCompleted {
        /// NPC id.
        npc: String,
        /// Provider.
        provider: String,
        /// Action.
        action: String,
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
    /// An intent was cancelled before being replaced (seed 001 §6.5 `IntentCancelledEvent`).
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
    /// The schedule's activity changed (seed 001 §6.5 `ActivityChangedEvent`); `None` when no
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
    /// Two NPCs interacted (seed 001 §4.4): chosen through the decision engine, resolved by
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
    /// A time jump beyond the tick bound was caught up analytically (seed 001 §7.4).
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
    },
    /// A goal was met.
    GoalCompleted {
        /// NPC id.
        npc: String,
        /// The goal.
        description: String,
    },
    /// A goal's deadline passed unmet.
    GoalFailed {
        /// NPC id.
        npc: String,
        /// The goal.
        description: String,
    },
    /// No plan reaches a goal (a story opportunity: the NPC needs help).
    GoalBlocked {
        /// NPC id.
        npc: String,
        /// The goal.
        description: String,
        /// `budget_exhausted` or `unreachable`.
        reason: String,
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

impl NpcEvent {
    /// The `type` tag.
    pub fn kind(&self) -> String {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            _ => String::new(),
        }
    }
}

/// A refused world message, as written to `deadletter`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeadLetter {
    /// The stream entry id it arrived with.
    pub source_id: String,
    /// The event type, if readable.
    pub event_type: String,
    /// JSON path of the problem.
    pub path: String,
    /// Why it was refused.
    pub reason: String,
    /// The message as received.
    pub original: String,
}

/// Bytes reserved for an envelope line up front: most intents and events fit.
const ENVELOPE_CAPACITY_HINT: usize = 256;

/// Serialises a tagged payload (an [`Intent`] or [`NpcEvent`]) into an envelope line.
pub fn to_envelope<T: Serialize>(header: &Header, body: &T) -> String {
    // The header goes first, then the body serialises straight into the same buffer and its
    // opening brace becomes the comma after the header: one allocation, no intermediate JSON
    // tree (this runs for every intent and event). Bodies are tagged structs (`{"type": …, …}`)
    // whose absent options are skipped, as the schemas expect.
    let mut out: Vec<u8> = Vec::with_capacity(ENVELOPE_CAPACITY_HINT);
    out.extend_from_slice(b"{\"v\":");
    out.extend_from_slice(header.v.to_string().as_bytes());
    out.extend_from_slice(b",\"id\":");
    let header_written = serde_json::to_writer(&mut out, &header.id)
        .and_then(|()| {
            out.extend_from_slice(b",\"zone\":");
            serde_json::to_writer(&mut out, &header.zone)
        })
        .is_ok();
    out.extend_from_slice(b",\"game_time\":");
    out.extend_from_slice(header.game_time.to_string().as_bytes());
    let body_at = out.len();
    let body_written = header_written && serde_json::to_writer(&mut out, body).is_ok();
    match out.get(body_at..) {
        // `{…}` with fields: its brace becomes the separator, its closing brace ours.
        Some([b'{', rest @ ..]) if body_written && rest.len() > 1 && rest.ends_with(b"}") => {
            out[body_at] = b',';
        }
        // `{}`, or a body that did not serialise: the header alone.
        _ => {
            out.truncate(body_at);
            out.push(b'}');
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

/// The dead-letter envelope for a refused message.
pub fn dead_letter_envelope(header: &Header, letter: &DeadLetter) -> String {
    envelope_json(
        header,
        "dead_letter",
        serde_json::to_value(letter).unwrap_or(Value::Null),
    )
}

/// A header with the current version.
pub fn header(id: impl Into<String>, zone: &str, game_time: u64) -> Header {
    Header {
        v: ENVELOPE_VERSION,
        id: id.into(),
        zone: zone.to_owned(),
        game_time,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_is_the_header_then_the_body_with_absent_options_left_out() {
        let h = header("village:bram:3:0", "vill\"age", 42);
        let text = to_envelope(
            &h,
            &NpcEvent::ActivityChanged {
                npc: "bram".into(),
                from: None,
                to: Some("work".into()),
            },
        );
        let value: Value = serde_json::from_str(&text).expect(&text);
        assert_eq!(
            value,
            serde_json::json!({"v": 1, "id": "village:bram:3:0", "zone": "vill\"age",
                "game_time": 42, "type": "activity_changed", "npc": "bram", "to": "work"})
        );
        #[derive(Serialize)]
        struct Empty {}
        let bare: Value = serde_json::from_str(&to_envelope(&h, &Empty {})).expect("json");
        assert_eq!(bare["game_time"], 42);
    }

    fn check_refused(text: &str, kind: &str, path: &str) {
        let error = parse_world(text).expect_err("refused");
        assert_eq!(
            (error.kind.as_str(), error.path.as_str()),
            (kind, path),
            "{error}"
        );
    }

    #[test]
    fn world_events_parse_and_round_trip() {
        let text = r#"{"v":1,"type":"player_entered","id":"e1","zone":"village","game_time":420,"player":"ann","room":"square","extra":true}"#;
        let message = parse_world(text).expect("parses");
        assert_eq!(message.header.game_time, 420);
        assert_eq!(
            message.event,
            WorldEvent::PlayerEntered {
                player: "ann".into(),
                room: "square".into()
            }
        );
        let again = parse_world(&message.to_json()).expect("round trip");
        assert_eq!(again, message);
        let tick =
            parse_world(r#"{"v":1,"type":"time_advanced","id":"t","zone":"z","game_time":5}"#)
                .expect("parses");
        assert_eq!(tick.event, WorldEvent::TimeAdvanced);
    }

    #[test]
    fn bad_world_events_name_type_and_path() {
        check_refused("not json", "unknown", ".");
        check_refused("[1]", "unknown", ".");
        check_refused(
            r#"{"v":1,"id":"a","zone":"z","game_time":1}"#,
            "unknown",
            "type",
        );
        check_refused(
            r#"{"v":1,"type":"player_entered","id":"a","zone":"z","game_time":1,"player":"p"}"#,
            "player_entered",
            ".",
        );
        check_refused(
            r#"{"v":1,"type":"player_entered","id":"a","zone":"z","game_time":1,"player":"p","room":3}"#,
            "player_entered",
            "room",
        );
        check_refused(
            r#"{"v":1,"type":"time_advanced","id":"a","zone":"z","game_time":-1}"#,
            "time_advanced",
            "game_time",
        );
        check_refused(
            r#"{"v":2,"type":"time_advanced","id":"a","zone":"z","game_time":1}"#,
            "time_advanced",
            "v",
        );
        check_refused(
            r#"{"v":1,"type":"dance","id":"a","zone":"z","game_time":1}"#,
            "dance",
            "type",
        );
        check_refused(
            r#"{"v":1,"type":"social_event","id":"a","zone":"z","game_time":1,"kind":"theft","source":"p","target":"n","deltas":{"THREAT":"lots"}}"#,
            "social_event",
            "deltas.THREAT",
        );
    }

    #[test]
    fn intents_carry_the_envelope_header_and_type() {
        let line = to_envelope(
            &header("village:bram:7:0", "village", 7),
            &Intent::Cancel {
                npc: "bram".into(),
                cancelled: "village:bram:3:1".into(),
                reason: "preempted".into(),
            },
        );
        let value: Value = serde_json::from_str(&line).expect("json");
        assert_eq!(value["v"], 1);
        assert_eq!(value["type"], "cancel");
        assert_eq!(value["zone"], "village");
        assert_eq!(value["game_time"], 7);
        assert_eq!(value["cancelled"], "village:bram:3:1");
        let event = NpcEvent::TierChanged {
            npc: "a".into(),
            from: "background".into(),
            to: "active".into(),
        };
        assert_eq!(event.kind(), "tier_changed");
    }
}
