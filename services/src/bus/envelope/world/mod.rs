//! The world events geppetto accepts on a zone's `world` stream, declared once as the serde enum
//! [`WorldEvent`], and their one parser ([`parse_world_within`]).
//!
//! On the wire an event is flat — `{"v", "type", "id", "zone", "game_time", ...payload}` — and
//! serde reads it as its externally tagged enum `{type: payload}`: the parser hands the derived
//! `Deserialize` the object under its `type` (an internally tagged derive would buffer the
//! payload first and lose the path). A well-formed message is read straight from its text; any
//! other is read again through a JSON tree, where `serde_path_to_error` follows the derive into
//! the payload and a refusal names the event type, the JSON path and what is wrong. What serde
//! cannot say — a mood out of range, a non-positive duration, an NPC spec the content layer
//! refuses — is checked after, with its path. [`WorldMessage::to_json`] writes the same flat
//! object back, straight from the derive (`write`), keys in the order a JSON tree keeps them.

use std::cell::Cell;
use std::collections::BTreeMap;

use geppetto_core::wire::limits::{JsonLimits, check_json};
use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, VariantAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_path_to_error::Segment;

use super::{ENVELOPE_VERSION, Header, flat_envelope, type_name};
use crate::content::world_file::{SpawnRecord, field_path};

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

/// A world event as received: header plus the typed event.
#[derive(Clone, Debug, PartialEq)]
pub struct WorldMessage {
    /// Its header.
    pub header: Header,
    /// What happened.
    pub event: WorldEvent,
}

/// The world events the game (or geppetto's own clock and governor) writes to `world`. Each
/// variant's snake_case name is its envelope `type`; its fields are the envelope's other
/// fields. Unknown fields are ignored; absent options are `None`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
        /// The room it left: when given, the player leaves only if it is still there (a game
        /// that reports the next room's `player_entered` first keeps its player).
        room: Option<String>,
    },
    /// A new NPC.
    NpcSpawned {
        /// Its spec as JSON — the decide-contract agent plus room, name, archetype; or
        /// `{"resident": {id, archetype, room, position, places?, overrides?}}` for an NPC
        /// built from an archetype — checked as a [`crate::content::world_file::SpawnRecord`] when parsed.
        #[serde(default)]
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
        #[serde(default)]
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
        #[serde(default)]
        tags: Vec<String>,
        /// Game hours it holds from the envelope's time.
        hours: f64,
    },
    /// The game finished carrying out an intent: the NPC's action completes.
    ActionCompleted {
        /// NPC id.
        npc: String,
        /// The intent id (absent: the NPC's current one).
        intent: Option<String>,
        /// What came of it, in the game's words (echoed on `npc_events`).
        outcome: Option<String>,
        /// What it changed of what the NPC holds (`{"gold": 3, "bread": -1}`): in `game`
        /// completion mode the game settles an action's costs and yields and says so here
        /// (or in a `resources_changed`); geppetto never invents money there.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        resources: BTreeMap<String, f64>,
    },
    /// What an NPC holds changed in the game (wages paid, a purse stolen, a reward, a
    /// purchase): the changes are added to its resources (an amount never goes below 0).
    ResourcesChanged {
        /// NPC id.
        npc: String,
        /// The change of each resource (`{"gold": -5}`).
        changes: BTreeMap<String, f64>,
        /// Why, in the game's words.
        reason: Option<String>,
    },
    /// The game could not carry out an intent (a walk or an action); the NPC's action is
    /// dropped and it decides again.
    ActionFailed {
        /// NPC id.
        npc: String,
        /// The intent id (absent: the NPC's current one).
        intent: Option<String>,
        /// Why (`unspecified` when absent or null).
        #[serde(default = "unspecified", deserialize_with = "or_unspecified")]
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
    /// The game moved an NPC into a room: where an NPC is, is the game's to say.
    NpcMoved {
        /// NPC id.
        npc: String,
        /// Room id.
        room: String,
    },
    /// A player orders an NPC to use an action; the envelope's id is the order's.
    Order {
        /// NPC id.
        npc: String,
        /// Provider id.
        provider: String,
        /// Action id.
        action: String,
        /// Who gave the order (a player id).
        by: String,
    },
    /// A player withdraws an order.
    OrderCancelled {
        /// NPC id.
        npc: String,
        /// The order's id (its envelope id).
        order: String,
    },
    /// The game takes an NPC over (a fight, a dialogue, a cutscene): no autonomy until
    /// `npc_released`.
    NpcEngaged {
        /// NPC id.
        npc: String,
        /// Why (the reason its intent is cancelled with).
        reason: String,
    },
    /// The game gives an engaged NPC back.
    NpcReleased {
        /// NPC id.
        npc: String,
    },
    /// The game gives an NPC a goal (a quest).
    GoalAssigned {
        /// NPC id.
        npc: String,
        /// The goal.
        goal: AssignedGoal,
    },
    /// A world context (a season, a festival, a curfew) until game time `until` or until
    /// cleared; it stands beside the weather's.
    ContextSet {
        /// Its name.
        name: String,
        /// Multiplier per action tag (applied squared, as the weather's).
        tag_multipliers: BTreeMap<String, f64>,
        /// Game time (ticks) it ends at, if it ends by itself.
        until: Option<u64>,
    },
    /// A context set by `context_set` ends.
    ContextCleared {
        /// Its name.
        name: String,
    },
    /// An NPC held by isolation is given back (written by geppetto for the admin API).
    NpcReinstated {
        /// NPC id.
        npc: String,
    },
    /// An archetype's circuit breaker is reset (written by geppetto for the admin API).
    BreakerReset {
        /// The archetype.
        archetype: String,
    },
    /// Facts now hold for an NPC (a reward, a clue learned, a key handed over): what a goal's
    /// `has_fact` condition, a plan or an action's precondition reads.
    FactsGranted {
        /// NPC id.
        npc: String,
        /// The facts (`has:purse`).
        facts: Vec<String>,
    },
    /// Facts no longer hold for an NPC.
    FactsRevoked {
        /// NPC id.
        npc: String,
        /// The facts.
        facts: Vec<String>,
    },
    /// The game takes back a goal it assigned (a quest withdrawn): the NPC drops it
    /// (`goal_failed` with reason `withdrawn`).
    GoalWithdrawn {
        /// NPC id.
        npc: String,
        /// The goal's id, as `goal_assigned` gave it.
        goal: String,
    },
    /// How a player's quest ended for the NPCs it was about: each remembers the player's deed
    /// — its regard for the player, its mood, a rumour it tells on (`deed_remembered`).
    QuestOutcome {
        /// The player.
        by: String,
        /// `helped`, `failed` or `harmed`.
        outcome: geppetto_core::social::Deed,
        /// The quest, for the record (the rumour's origin).
        quest: Option<String>,
        /// The NPCs it was about; absent: the live story signal `signal`'s NPCs (but those its
        /// context names as the wrongdoer: `subject`, `traitor`, `against`), or the NPCs
        /// pursuing goal `goal`.
        npcs: Option<Vec<String>>,
        /// The story signal the quest came from.
        signal: Option<String>,
        /// The assigned goal the quest gave an NPC.
        goal: Option<String>,
    },
    /// A consumer (a quest board) takes a live story signal: it no longer lapses, and the
    /// `story` stream says who holds it (`story_signal_updated` with `taken_by`).
    StorySignalTaken {
        /// The signal's id (`signal` on the `story` stream).
        signal: String,
        /// The consumer.
        by: String,
    },
    /// A consumer resolves a story signal: it leaves the live set, and the `story` stream
    /// says so (`story_signal_resolved`).
    StorySignalResolved {
        /// The signal's id.
        signal: String,
        /// The consumer (the one that took it, if one did).
        by: String,
        /// How it ended, in the consumer's words (`completed`, `failed`, `withdrawn`, …).
        outcome: String,
    },
    /// The settings a zone runs with from here on (written by geppetto as the zone starts), so
    /// a replay or a recovery reads them from the log like any input.
    ZoneSettings {
        /// Who ends actions and moves NPCs.
        completion: Completion,
    },
}

geppetto_core::wire_enum! {
    /// Who ends the actions NPCs carry out.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub enum Completion {
        /// The game: it reports arrivals (`npc_moved`) and ends (`action_completed`,
        /// `action_failed`); geppetto never moves an NPC itself.
        #[default]
        Game = "game",
        /// geppetto's own timer, moving NPCs itself (the demo, offline runs).
        Simulated = "simulated",
    }
}

/// A goal the game assigns (`goal_assigned`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssignedGoal {
    /// Its id, the `goal_id` of its events.
    pub id: String,
    /// For humans.
    pub description: String,
    /// When it is met, as goals are written (`{"predicate_type": "has_fact", "fact": …}`).
    pub predicate: Value,
    /// Game hours from now until it fails, if it can.
    pub deadline_hours: Option<f64>,
    /// Priority bonus of the actions that advance it (default 2).
    pub priority: Option<f64>,
}

/// The events only geppetto writes to a world stream (see [`super::Header::origin`]).
pub const GEPPETTO_ONLY: &[&str] = &[
    "npc_arrived",
    "governor_decision",
    "npc_reinstated",
    "breaker_reset",
    "zone_settings",
];

/// The largest tag multiplier a `context_set` may give (the weather's are of order 1).
const MAX_TAG_MULTIPLIER: f64 = 100.0;

/// The reason of an `action_failed` that gives none.
fn unspecified() -> String {
    "unspecified".into()
}

/// An `action_failed` reason, `null` read as none given.
fn or_unspecified<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(deserializer)?.unwrap_or_else(unspecified))
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
    /// NPCs whose update took longer than `tick.npc_budget_ms` (each counts a failure).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over_budget: Vec<String>,
}

impl WorldEvent {
    /// The `type` tag (see [`type_name`]).
    pub fn kind(&self) -> &'static str {
        match type_name(self) {
            std::borrow::Cow::Borrowed(name) => name,
            // A variant name is always static; never reached.
            std::borrow::Cow::Owned(_) => "",
        }
    }

    /// What serde cannot check: the JSON path and reason of the first problem.
    fn check(&self) -> Result<(), (String, String)> {
        let spawn = |npc: &Value| {
            SpawnRecord::parse(npc)
                .map(drop)
                .map_err(|(path, reason)| (field_path("npc", &path), reason))
        };
        match self {
            Self::NpcSpawned { npc } => spawn(npc),
            Self::NpcArrived(arrival) => spawn(&arrival.npc),
            Self::SocialEvent {
                mood: Some(mood), ..
            } if !(-1.0..=1.0).contains(mood) => {
                Err(("mood".into(), "must be between -1 and 1".into()))
            }
            Self::ResourcesChanged { changes, .. }
            | Self::ActionCompleted {
                resources: changes, ..
            } if changes.values().any(|c| !c.is_finite()) => {
                let (name, _) = changes
                    .iter()
                    .find(|(_, c)| !c.is_finite())
                    .expect("a change that is not finite");
                let field = if matches!(self, Self::ResourcesChanged { .. }) {
                    "changes"
                } else {
                    "resources"
                };
                Err((format!("{field}.{name}"), "must be a finite number".into()))
            }
            Self::ScheduleOverride { hours, .. } if !(hours.is_finite() && *hours > 0.0) => Err((
                "hours".into(),
                "must be a positive number of game hours".into(),
            )),
            Self::ContextSet {
                tag_multipliers, ..
            } => match tag_multipliers
                .iter()
                .find(|(_, m)| !(m.is_finite() && **m >= 0.0 && **m <= MAX_TAG_MULTIPLIER))
            {
                Some((tag, _)) => Err((
                    format!("tag_multipliers.{tag}"),
                    format!("must be a number from 0 to {MAX_TAG_MULTIPLIER}"),
                )),
                None => Ok(()),
            },
            Self::GoalAssigned { goal, .. } => {
                if goal
                    .deadline_hours
                    .is_some_and(|h| !(h.is_finite() && h > 0.0))
                {
                    Err((
                        "goal.deadline_hours".into(),
                        "must be a positive number of game hours".into(),
                    ))
                } else if goal.priority.is_some_and(|p| !p.is_finite()) {
                    Err(("goal.priority".into(), "must be a finite number".into()))
                } else {
                    Ok(())
                }
            }
            _ => Ok(()),
        }
    }
}

impl WorldMessage {
    /// The envelope as one JSON line.
    pub fn to_json(&self) -> String {
        write::write_direct(&self.header, self.event.kind(), &self.event)
            .unwrap_or_else(|| self.to_json_through_tree())
    }

    /// [`WorldMessage::to_json`] through a JSON tree: what it writes for an event whose shape
    /// the direct write does not know, and what it is held to.
    fn to_json_through_tree(&self) -> String {
        // Serde writes the event as `{type: payload}` (or `"type"` for a unit variant): the
        // payload's fields go beside the header.
        let payload = match serde_json::to_value(&self.event) {
            Ok(Value::Object(tagged)) => tagged.into_iter().next().map(|(_, p)| p),
            _ => None,
        };
        flat_envelope(
            &self.header,
            self.event.kind(),
            payload.unwrap_or(Value::Null),
        )
    }
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
    /// Longest free text (`text` of a `say`, `reason` of an `action_failed`, `outcome` of an
    /// `action_completed`), bytes. Default 4096.
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
            text_fields: &["text", "reason", "outcome"],
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
    let (header, event) = match direct::read_direct(text) {
        Some(read) => read,
        None => read_tree(text)?,
    };
    let kind = event.kind();
    event
        .check()
        .map_err(|(path, reason)| EnvelopeError::new(kind, &path, reason))?;
    if GEPPETTO_ONLY.contains(&kind) && !header.is_geppetto() {
        return Err(EnvelopeError::new(
            kind,
            "type",
            format!("`{kind}` is written by geppetto only, never by the game"),
        ));
    }
    Ok(WorldMessage { header, event })
}

/// Reads a message through a JSON tree, following every value's path: slower than
/// [`direct::read_direct`], and the read that names the type, the path and the reason of a
/// refusal. Where the direct read answers, this one answers the same: both read the same
/// fields through the same serde derives
/// (`tests::the_direct_read_answers_as_the_tree_read_wherever_it_answers`).
fn read_tree(text: &str) -> Result<(Header, WorldEvent), EnvelopeError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| EnvelopeError::new("unknown", ".", format!("not JSON: {e}")))?;
    let Some(object) = value.as_object() else {
        return Err(EnvelopeError::new("unknown", ".", "expected a JSON object"));
    };
    let kind = match object.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(_) => return Err(EnvelopeError::new("unknown", "type", "expected a string")),
        None => return Err(EnvelopeError::new("unknown", "type", "missing field")),
    };
    let refused = |error: serde_path_to_error::Error<serde_json::Error>| {
        EnvelopeError::new(
            kind,
            &payload_path(error.path()),
            error.into_inner().to_string(),
        )
    };
    let header: Header = serde_path_to_error::deserialize(&value).map_err(refused)?;
    // A newer version is refused before its event is read: its fields may mean other things.
    if header.v != ENVELOPE_VERSION {
        return Err(EnvelopeError::new(
            kind,
            "v",
            format!(
                "unsupported version {} (this build reads {ENVELOPE_VERSION})",
                header.v
            ),
        ));
    }
    let unknown_type = Cell::new(false);
    let tagged = Tagged {
        kind,
        payload: &value,
        unknown_type: &unknown_type,
    };
    let event: WorldEvent = serde_path_to_error::deserialize(tagged).map_err(|error| {
        if unknown_type.get() {
            EnvelopeError::new(kind, "type", format!("unknown world event type `{kind}`"))
        } else {
            refused(error)
        }
    })?;
    Ok((header, event))
}

/// A fault's path inside the payload: `serde_path_to_error`'s, without the variant (the `type`)
/// it starts with when it comes from inside [`WorldEvent`]; `.` for the document.
fn payload_path(path: &serde_path_to_error::Path) -> String {
    let mut text = String::new();
    let segments = path
        .iter()
        .skip_while(|s| matches!(s, Segment::Enum { .. }));
    for segment in segments {
        if !text.is_empty() && !matches!(segment, Segment::Seq { .. }) {
            text.push('.');
        }
        text.push_str(&segment.to_string());
    }
    if text.is_empty() { ".".into() } else { text }
}

/// The flat envelope object seen as serde's externally tagged enum: the variant is its `type`,
/// the variant's content the whole object (whose header fields the payload ignores). The
/// object is read from `D`: its text, or its JSON tree.
struct Tagged<'a, D> {
    /// The `type` field.
    kind: &'a str,
    /// The envelope object.
    payload: D,
    /// Set when `kind` names no variant.
    unknown_type: &'a Cell<bool>,
}

impl<'de, D: Deserializer<'de, Error = serde_json::Error>> Deserializer<'de> for Tagged<'_, D> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

impl<'de, D: Deserializer<'de, Error = serde_json::Error>> EnumAccess<'de> for Tagged<'_, D> {
    type Error = serde_json::Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self), Self::Error> {
        let name = de::value::StrDeserializer::<serde_json::Error>::new(self.kind);
        match seed.deserialize(name) {
            Ok(variant) => Ok((variant, self)),
            Err(error) => {
                self.unknown_type.set(true);
                Err(error)
            }
        }
    }
}

impl<'de, D: Deserializer<'de, Error = serde_json::Error>> VariantAccess<'de> for Tagged<'_, D> {
    type Error = serde_json::Error;

    fn unit_variant(self) -> Result<(), Self::Error> {
        // The object holds the header and nothing this event reads.
        de::IgnoredAny::deserialize(self.payload).map(drop)
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<S::Value, Self::Error> {
        seed.deserialize(self.payload)
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.payload.deserialize_tuple(len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.payload
            .deserialize_struct("WorldEvent", fields, visitor)
    }
}

mod direct;
#[cfg(test)]
mod tests;
mod write;
