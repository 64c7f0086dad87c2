//! One zone's NPCs and their tick: the state a `ZoneActor` owns. Synchronous and free of IO, so
//! it is tested directly; the actor and the bus loop wrap it.
//!
//! A tick: tier steps (promotions from Background at most `catch_up_per_tick`), then every due
//! NPC (Active each tick, Nearby every 10th, Background every 60th, staggered by id) is
//! prepared under `catch_unwind` in priority order under the governor's ceilings, then one
//! `Simulator::finish_zone` resolves contention for the whole zone, and its `SimEvent`s become
//! intents and NPC events with deterministic ids (`{zone}:{npc}:{tick}:{seq}`). Seeds derive
//! from (world seed, tick) and each NPC's id, so decisions never depend on scheduling.
//! Nearby NPCs run at full detail with a step of `nearby_every_ticks` minutes (a second
//! simulator whose full tick is that long); Background NPCs run simplified (one hour a step).
//!
//! This file owns the [`Zone`] itself — with what it runs with and never saves (its content:
//! simulators, sets, archetypes, weather, narration templates) and what it keeps of the NPCs
//! that came and went apart — what it records of each NPC beside its simulated state, its
//! outputs, and how it names and publishes a message (deterministic ids). Each job lives
//! in a module of its own, every one an `impl Zone` block over the state declared here:
//!
//! - `config`: the zone's settings and build errors;
//! - `build`: building a zone from a world file and adding NPCs and residents;
//! - `apply`: world events → state, one family of events a file (`apply/`);
//! - `tick`: the tick (tiers, governor, isolation, decision cap), the catch-up over a time
//!   jump, and what the tick is given ([`TickInputs`]: clock, replay script, hooks);
//! - `emit`: the core's events → intents and NPC events;
//! - `game`: the game's side of the integration contract — reported completions and failures,
//!   positions, orders, engagement, assigned goals, contexts, mood bands, relocation;
//! - `social`: the zone's share of social life and the story detector's signals;
//! - `travel`: spawns, despawns and hand-overs between zones;
//! - `llm`: narration and perception requests;
//! - `reply`: what an NPC says back to a player who speaks to it;
//! - `status`: views derived from the state, kept until what they count changes;
//! - `state`: snapshots (capture and restore); [`anchor`]: what ties a snapshot to its world
//!   file and log;
//! - [`tiers`], [`governor`], [`isolation`]: the tick's policies (who is processed how often,
//!   the per-tick budget, failing NPCs set aside);
//! - [`social_life`]: the social fabric and story detector as the zone drives them;
//! - [`brain`]: the debug-brain view of one NPC (read-only).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use geppetto_core::Decider;
use geppetto_core::decision::world::{Context, World};
use geppetto_core::life::catch_up::CatchUpCache;
use geppetto_core::life::goal_registry::GoalPredicateRegistry;
use geppetto_core::life::simulator::{SimulatedAgent, Simulator};
use geppetto_core::vocabulary::Vocabulary;
use geppetto_llm::{LlmRequest, TemplateProvider};
use thin_vec::ThinVec;

pub mod anchor;
mod apply;
pub mod brain;
mod build;
mod cadence;
mod config;
mod decision_trace;
pub mod detection;
mod due;
mod emit;
mod game;
pub mod governor;
pub mod isolation;
mod living;
mod llm;
mod recent_ids;
mod reply;
mod social;
pub mod social_life;
mod state;
mod status;
#[cfg(test)]
pub(crate) mod testing;
mod tick;
pub mod tiers;
mod travel;

pub use config::{Completion, IntegrationConfig, LivingConfig, TickConfig, ZoneConfig, ZoneError};
pub use decision_trace::DecisionTrace;
pub use emit::bark_for;
pub use game::WorldContexts;
pub use state::{RestoreError, ZONE_STATE_SCHEMA_VERSION, ZoneState};
pub use status::ZoneStatus;
#[cfg(feature = "fault-injection")]
pub use tick::Fault;
pub use tick::{
    Clock, GovernorScript, MAX_BUFFERED_TICK_DURATIONS, PhaseTimes, TICK_PHASES, TickInputs,
};

use crate::bus::StreamKind;
use crate::bus::envelope::{Header, header, to_envelope};
use crate::content::sets::SetLibrary;
use crate::content::world_file::ResidentSpec;
use crate::zone::governor::Governor;
use crate::zone::isolation::{Isolation, IsolationState};
use crate::zone::social_life::SocialLife;
use crate::zone::tiers::{NpcTier, Presence, RoomGraph};
use decision_trace::{ChoiceNames, TraceEntry};
use geppetto_core::archetype::CompiledArchetype;
use geppetto_core::decision::consideration::BehaviourSharing;
use status::Derived;

/// What the zone knows about one NPC beside its simulated state.
#[derive(Clone, Debug)]
pub struct NpcMeta {
    /// Display name.
    pub name: Box<str>,
    /// Archetype (its name held once by the zone, see `archetype_names`).
    pub archetype: Option<Arc<str>>,
    /// Room index.
    pub room: usize,
    /// Its tier.
    pub tier: NpcTier,
    /// The intent being carried out (id, kind), for `cancel` (boxed: most residents of a
    /// large zone carry none).
    pub current_intent: Option<Box<(String, IntentKind)>>,
    /// Id sequence within the current tick.
    seq: (u64, u32),
    /// `stable_hash` of its id, which staggers its steps and seeds its decisions (kept: the
    /// id never changes).
    id_hash: u64,
    /// Its most recent decisions, oldest first (at most `tick.decision_trace_len`), their
    /// names in the zone's `choice_names`.
    decisions: ThinVec<TraceEntry>,
    /// What the game side of the contract tracks of it (see `game`).
    pub game: NpcGameState,
}

/// What the zone tracks of one NPC for the game: the order it carries out, its mood band and
/// what moved it last (saved in snapshots).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NpcGameState {
    /// Whether the goals it came with were announced (`goal_created`).
    #[serde(default)]
    pub goals_announced: bool,
    /// The player's order its running action carries out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Box<str>>,
    /// The band its mood was last reported in (index into `mood_band_names`; a byte, as
    /// `integration.mood_bands` holds at most `MAX_MOOD_BANDS` bounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mood_band: Option<u8>,
    /// The tick of its last `mood_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mood_reported_at: Option<u64>,
    /// The kind of the latest social event it felt since its last `mood_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub felt: Option<Box<str>>,
}

geppetto_core::wire_enum! {
    /// What kind of intent an NPC is carrying out (named in `intent_cancelled`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum IntentKind {
        /// An advertised action (`use`).
        Use = "use",
        /// A reactive-set action.
        Reactive = "reactive",
        /// A walk to a provider's room (`navigate`), while the game carries it out.
        Navigate = "navigate",
    }
}

impl IntentKind {}

/// A provider's place.
#[derive(Clone, Debug)]
pub struct ProviderPlace {
    /// Room index.
    pub room: usize,
    /// Display name.
    pub name: String,
}

/// One zone.
pub struct Zone {
    /// Zone name.
    pub name: String,
    seed: u64,
    config: ZoneConfig,
    /// What the zone runs with and never saves (see [`ZoneContent`]).
    content: ZoneContent,
    /// Names interned for this zone's agents and world.
    pub vocabulary: Vocabulary,
    /// Whether an NPC joined whose goals (innate ones, a traveller's) the game has not been
    /// told of yet: the next tick announces them (`goal_created`).
    goals_unannounced: bool,
    /// How many of them the content brought (the rest came with world events, bounded by
    /// `tick.max_event_names`).
    content_names: usize,
    /// The shared world (providers with occupancy).
    pub world: World,
    /// Room graph.
    pub rooms: RoomGraph,
    room_names: Vec<(String, String)>,
    /// Provider places by id.
    pub providers: BTreeMap<String, ProviderPlace>,
    /// The world's contexts by source: the weather's and those the game set.
    contexts: game::WorldContexts,
    /// Who ends actions and moves NPCs in this zone.
    completion: Completion,
    /// Simulated agents, sorted by id (parallel to `meta`).
    pub agents: Vec<SimulatedAgent>,
    /// NPC metadata (parallel to `agents`).
    pub meta: Vec<NpcMeta>,
    presence: Presence,
    governor: Governor,
    /// Failure counts and demotions.
    pub isolation: Isolation,
    /// Ticks run so far.
    pub tick: u64,
    /// Game time in ticks.
    pub game_time: u64,
    full_tick_hours: f64,
    /// Daily cycles for analytic catch-up, by archetype (or NPC id) and start hour.
    catch_up_cache: CatchUpCache,
    /// How goal predicates are written and read (brain view, snapshots).
    pub goal_predicates: GoalPredicateRegistry,
    /// The social fabric and story detector.
    pub social: SocialLife,
    /// What the zone keeps of the NPCs that came and went since the world file.
    records: NpcRecords,
    /// The (provider, action) pairs the NPCs' decision traces name.
    choice_names: ChoiceNames,
    /// The archetype names its NPCs carry, each held once.
    archetype_names: BTreeSet<Arc<str>>,
    /// The needs' behaviours its NPCs share: one copy of each ([`BehaviourSharing`]).
    behaviours: BehaviourSharing,
    /// Ids of the world events applied lately (`tick.event_ids_remembered`).
    recent_ids: recent_ids::RecentIds,
    /// The fingerprint of the world file the zone was built from (a snapshot's anchor).
    world_fingerprint: String,
    /// Who runs what where, while a tick's events are emitted (see `running_at`).
    running_by_provider: Option<BTreeMap<String, Vec<usize>>>,
    /// Views derived from the zone's state for its status and its social step, kept until
    /// what they count changes.
    derived: Derived,
    /// Tick durations measured, milliseconds (drained by the service for metrics).
    pub tick_durations_ms: Vec<f64>,
}

/// What a zone runs with beside its state, built from the content and never saved (a
/// snapshot is laid over a zone built anew): the simulators under the profile's tuning, the
/// reactive sets, the archetypes, the weather table and the narration templates.
struct ZoneContent {
    /// Full-detail ticks (Active and Background NPCs).
    simulator: Arc<Simulator>,
    /// Nearby NPCs' ticks, each `nearby_every_ticks` ticks long.
    nearby_simulator: Arc<Simulator>,
    /// The reactive sets NPCs may carry.
    sets: SetLibrary,
    /// The shipped archetypes, compiled with this zone's vocabulary.
    archetypes: BTreeMap<String, CompiledArchetype>,
    /// Each weather's contexts.
    weather: BTreeMap<String, Vec<Context>>,
    /// Writes the placeholder line of a witnessed interaction (the narration templates).
    narrator: Arc<TemplateProvider>,
}

/// What a zone keeps of the NPCs that came and went since its world file: what a snapshot
/// rebuilds its roster from, and what a resident leaving for another zone is handed over as
/// (see `travel`; saved in snapshots).
#[derive(Default)]
struct NpcRecords {
    /// The records of NPCs spawned by `npc_spawned` or handed over by another zone, by id (a
    /// snapshot rebuilds them from these; see `SpawnRecord`).
    spawned: BTreeMap<String, serde_json::Value>,
    /// The spec each archetype resident was built from (the world file's, or a traveller's),
    /// by id: what it is handed over as when it leaves for another zone.
    resident_specs: BTreeMap<String, ResidentSpec>,
    /// Content NPCs that left at run time (despawned or handed over), so a snapshot restored
    /// over the content keeps them gone.
    departed: BTreeSet<String>,
}

/// The zone's outputs, in publication order.
#[derive(Debug, Default)]
pub struct ZoneOutput {
    /// (stream, envelope) in order: governor records (world) first.
    pub messages: Vec<(StreamKind, String)>,
    /// (zone, envelope) for other zones' world streams: NPCs handed over across a border.
    pub handovers: Vec<(String, String)>,
    /// Work for the LLM seams (narration of witnessed interactions, perception of `say`).
    pub llm: Vec<LlmRequest>,
    /// Set when isolation counts changed and should be persisted.
    pub isolation_changed: Option<IsolationState>,
    /// World messages the zone could not apply (an unknown NPC, room or provider, a spawn it
    /// refused): the loop dead-letters each with its reason.
    pub refused: Vec<Refusal>,
    /// World messages applied (neither refused nor duplicates).
    pub applied: u64,
    /// World messages not applied because the zone applied their id lately (the game's are in
    /// `refused` too, as `duplicate`).
    pub duplicates: u64,
    /// When set, the one stream whose intents, events and story messages are written: the
    /// others' are left unwritten (for a replay that prints one stream; ids are given as ever).
    pub only: Option<StreamKind>,
}

fn unknown_npc(zone: &str, npc: &str) -> String {
    format!("unknown NPC `{npc}` in zone `{zone}`")
}

/// A world message the zone refused when applying it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The message's envelope id.
    pub id: String,
    /// Its event type.
    pub kind: &'static str,
    /// The field at fault.
    pub path: String,
    /// Why.
    pub reason: String,
    /// Where the message stands in the batch it was applied with (0 when applied alone).
    pub position: usize,
}

pub(super) fn room_key(zone_rooms: &[(String, String)], room: usize) -> &str {
    zone_rooms.get(room).map_or("", |(id, _)| id.as_str())
}

impl Zone {
    pub(super) fn now_hours(&self) -> f64 {
        self.game_time as f64 * self.full_tick_hours
    }

    /// Game hours per tick.
    pub fn full_tick_hours(&self) -> f64 {
        self.full_tick_hours
    }

    /// A room's id and display name.
    pub fn room_name(&self, room: usize) -> (&str, &str) {
        self.room_names
            .get(room)
            .map_or(("", ""), |(id, name)| (id.as_str(), name.as_str()))
    }

    /// The index of an NPC.
    pub fn npc_index(&self, id: &str) -> Option<usize> {
        self.agents
            .binary_search_by(|a| a.agent.id.as_str().cmp(id))
            .ok()
    }

    /// NPC `index`'s most recent decisions, oldest first (for the inspector).
    pub fn decisions(&self, index: usize) -> VecDeque<DecisionTrace> {
        self.meta
            .get(index)
            .map(|meta| self.choice_names.show(&meta.decisions))
            .unwrap_or_default()
    }

    /// The decider of full-detail ticks (for the inspector).
    pub fn decider(&self) -> &Decider {
        self.content.simulator.decider()
    }

    pub(super) fn next_id(&mut self, index: usize) -> String {
        let tick = self.tick;
        let meta = &mut self.meta[index];
        if meta.seq.0 != tick {
            meta.seq = (tick, 0);
        }
        let seq = meta.seq.1;
        meta.seq.1 += 1;
        // Written piece by piece rather than by `format!`: this runs for every intent and
        // event, and the formatting machinery cost more than the rest of the header.
        let (zone, npc) = (&self.name, &self.agents[index].agent.id);
        let mut decimal = itoa::Buffer::new();
        let mut id = String::with_capacity(zone.len() + npc.len() + 24);
        id.push_str(zone);
        id.push(':');
        id.push_str(npc);
        id.push(':');
        id.push_str(decimal.format(tick));
        id.push(':');
        id.push_str(decimal.format(seq));
        id
    }

    pub(super) fn header_for(&mut self, index: usize) -> Header {
        let id = self.next_id(index);
        header(id, &self.name, self.game_time)
    }

    /// Publishes `body` on `stream` under a fresh header for NPC `index`; returns the header
    /// (its id names an intent for a later cancel).
    pub(super) fn publish<T: serde::Serialize>(
        &mut self,
        index: usize,
        stream: StreamKind,
        body: &T,
        out: &mut ZoneOutput,
    ) -> Header {
        let header = self.header_for(index);
        out.push(stream, &header, body);
        header
    }

    pub(super) fn zone_header(&self, seq: &mut u32) -> Header {
        let id = format!("{}:-:{}:{}", self.name, self.tick, *seq);
        *seq += 1;
        header(id, &self.name, self.game_time)
    }
}

impl ZoneOutput {
    /// Appends an envelope for `body` on `stream`.
    pub fn push<T: serde::Serialize>(&mut self, stream: StreamKind, header: &Header, body: &T) {
        if self.only.is_some_and(|only| only != stream) {
            return;
        }
        self.messages.push((stream, to_envelope(header, body)));
    }
}

#[cfg(test)]
mod tests {
    use super::{NpcMeta, ZoneOutput};
    use crate::bus::StreamKind;
    use crate::bus::envelope::{WorldEvent, WorldMessage, header};
    use crate::zone::testing::{enter, live, village};

    /// A day of the village with a player in the market, into an output for `only`.
    fn a_day(only: Option<StreamKind>) -> Vec<(StreamKind, String)> {
        let mut zone = village();
        enter(&mut zone, "market");
        let mut out = ZoneOutput {
            only,
            ..ZoneOutput::default()
        };
        for hour in 1..=24 {
            let message = WorldMessage {
                header: header(format!("t{hour}"), "village", zone.game_time + 60),
                event: WorldEvent::TimeAdvanced,
            };
            zone.apply(&message, &live(), &mut out);
        }
        out.messages
    }

    #[test]
    fn an_output_for_one_stream_holds_what_that_stream_would_have() {
        let all = a_day(None);
        for stream in [
            StreamKind::Intents,
            StreamKind::NpcEvents,
            StreamKind::Story,
        ] {
            let of = |messages: &[(StreamKind, String)]| -> Vec<(StreamKind, String)> {
                (messages.iter())
                    .filter(|(s, _)| *s == stream)
                    .cloned()
                    .collect()
            };
            let only = a_day(Some(stream));
            assert!(
                !of(&all).is_empty(),
                "a day in the village writes {stream:?}"
            );
            assert_eq!(of(&only), of(&all), "{stream:?}, ids and all");
            assert!(
                (only.iter()).all(|(s, _)| *s == stream || *s == StreamKind::World),
                "{stream:?} alone (and the log's own records)"
            );
        }
    }

    /// Every resident has one, read at each of its turns: what it may lack takes a pointer.
    #[test]
    fn a_zone_record_is_small() {
        assert!(std::mem::size_of::<NpcMeta>() <= 144);
    }
}
