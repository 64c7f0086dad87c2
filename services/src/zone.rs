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

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Instant;

use geppetto_core::affect::AffectEvent;
use geppetto_core::decision::world::{Context, Position, World};
use geppetto_core::life::action::DetailLevel;
use geppetto_core::life::catch_up::{CatchUpCache, CatchUpConfig, CatchUpRequest};
use geppetto_core::life::goal_registry::GoalPredicateRegistry;
use geppetto_core::life::schedule::{ScheduleBlock, ScheduleOverride};
use geppetto_core::life::simulator::{
    Prepared, ReactiveLayer, SimEvent, SimulatedAgent, Simulator, Stage, TickRequest, TickResult,
};
use geppetto_core::rng::{derive_seed, stable_hash};
use geppetto_core::social::{SocialPlace, SocialStep, Whereabouts};
use geppetto_core::story::{GoalChange, StoryEventKind};
use geppetto_core::vocabulary::Vocabulary;
use geppetto_core::wire::{self, compile};
use geppetto_core::{Decider, ProviderIndex, TuningPatch};
use geppetto_llm::{
    LlmConfig, LlmRequest, NarrationRequest, NpcRef, Participant, PerceptionContext,
    PerceptionRequest, Priority, TemplateProvider,
};
use serde::Deserialize;

mod state;
pub use state::{RestoreError, ZONE_STATE_SCHEMA_VERSION, ZoneState};

use crate::bus::StreamKind;
use crate::bus::envelope::{
    GovernorDecision, Header, Intent, NpcEvent, WorldEvent, WorldMessage, header, to_envelope,
};
use crate::content::affect::load_persona;
use crate::content::archetypes::ArchetypeLibrary;
use crate::content::profiles::{DEFAULT_PROFILE, ProfileLibrary};
use crate::content::sets::SetLibrary;
use crate::governor::{Governor, GovernorConfig, Verdict};
use crate::isolation::{Isolation, IsolationConfig, IsolationState};
use crate::social_life::SocialLife;
use crate::tiers::{NpcTier, Presence, RoomGraph, Tier, TierConfig};
use crate::world_file::{NpcSpec, ResidentSpec, SpawnRecord, WorldFile};
use geppetto_core::archetype::{CompiledArchetype, NpcRecord};
use geppetto_core::life::simulator::AffectLayer;

/// Tick durations kept for the metrics between two reads at most (older ones are dropped).
pub const MAX_BUFFERED_TICK_DURATIONS: usize = 4096;

/// Zone tick settings (`[tick]` in `geppetto.toml`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TickConfig {
    /// Ticks one `time_advanced` event may run at most; default 60. A longer jump (a server
    /// back after a night offline) brings every NPC over the rest analytically (seed 001
    /// §7.4: whole days in closed form, the remainder hourly) and ticks only the last ones.
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
    /// Scoring threads for the zone's batch decision (never changes the result).
    pub decision_workers: usize,
    /// Handovers from other zones remembered by id, so one handed over again (the other zone
    /// replaying its log after a failover) is recognised and not applied twice; default 4096.
    pub arrivals_remembered: usize,
}

impl Default for TickConfig {
    fn default() -> Self {
        Self {
            max_catch_up_ticks_per_event: 60,
            catch_up_max_hours: 168.0,
            max_decisions_per_tick: 1000,
            decision_trace_len: 32,
            decision_workers: 1,
            arrivals_remembered: 4096,
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

/// A fault injected into one NPC's update, for tests of isolation and the governor.
#[cfg(feature = "fault-injection")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Every update panics.
    Panic,
    /// Every update first sleeps this many milliseconds.
    SlowMs(u64),
}

/// What the zone knows about one NPC beside its simulated state.
#[derive(Clone, Debug)]
pub struct NpcMeta {
    /// Display name.
    pub name: String,
    /// Archetype.
    pub archetype: Option<String>,
    /// Room index.
    pub room: usize,
    /// Its tier.
    pub tier: NpcTier,
    /// The intent being carried out (id, kind), for `cancel`.
    pub current_intent: Option<(String, IntentKind)>,
    /// Id sequence within the current tick.
    seq: (u64, u32),
    /// `stable_hash` of its id, which staggers its steps and seeds its decisions (kept: the
    /// id never changes).
    id_hash: u64,
    /// Its most recent decisions, oldest first (at most `tick.decision_trace_len`).
    pub decisions: VecDeque<DecisionTrace>,
}

/// What kind of intent an NPC is carrying out (named in `intent_cancelled`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntentKind {
    /// An advertised action (`use`).
    Use,
    /// A reactive-set action.
    Reactive,
}

impl IntentKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Use => "use",
            Self::Reactive => "reactive",
        }
    }
}

/// One decision of an NPC as the inspector shows it (`GET /npcs/{id}/decisions`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DecisionTrace {
    /// Zone tick.
    pub tick: u64,
    /// Game time, ticks.
    pub game_time: u64,
    /// The chosen provider.
    pub provider: String,
    /// The chosen action.
    pub action: String,
    /// Its utility when chosen (4 decimals).
    pub utility: f64,
    /// Whether a player ordered it (else the NPC chose it, or its plan did).
    pub player_queued: bool,
}

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
    /// Names interned for this zone's agents and world.
    pub vocabulary: Vocabulary,
    simulator: Arc<Simulator>,
    nearby_simulator: Arc<Simulator>,
    /// The shared world (providers with occupancy).
    pub world: World,
    /// Room graph.
    pub rooms: RoomGraph,
    room_names: Vec<(String, String)>,
    /// Provider places by id.
    pub providers: BTreeMap<String, ProviderPlace>,
    weather: BTreeMap<String, Vec<Context>>,
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
    sets: SetLibrary,
    /// The shipped archetypes, compiled with this zone's vocabulary.
    archetypes: BTreeMap<String, CompiledArchetype>,
    /// Daily cycles for analytic catch-up, by archetype (or NPC id) and start hour.
    catch_up_cache: CatchUpCache,
    /// How goal predicates are written and read (brain view, snapshots).
    pub goal_predicates: GoalPredicateRegistry,
    /// Writes the placeholder line of a witnessed interaction (the narration templates).
    narrator: Arc<TemplateProvider>,
    /// Whether a player's `say` is handed to perception; off while replaying a log, whose
    /// perceived events are already in it.
    pub perceive_said: bool,
    /// The social fabric and story detector.
    pub social: SocialLife,
    /// The records of NPCs spawned by `npc_spawned` or handed over by another zone since the
    /// world file, by id (a snapshot rebuilds them from these; see `SpawnRecord`).
    spawned: BTreeMap<String, serde_json::Value>,
    /// The spec each archetype resident was built from (the world file's, or a traveller's),
    /// by id: what it is handed over as when it leaves for another zone.
    resident_specs: BTreeMap<String, ResidentSpec>,
    /// Ids of the latest handovers applied here, oldest first (`tick.arrivals_remembered`).
    arrivals: VecDeque<String>,
    /// Content NPCs that left at run time (despawned or handed over), so a snapshot restored
    /// over the content keeps them gone.
    departed: BTreeSet<String>,
    /// While replaying a log: the governor's logged decisions by tick, applied instead of the
    /// wall clock's (a tick with none processed every NPC). `None` when live.
    governor_script: Option<BTreeMap<u64, GovernorDecision>>,
    /// Who runs what where, while a tick's events are emitted (see `running_at`).
    running_by_provider: Option<BTreeMap<String, Vec<usize>>>,
    /// The world's providers by id while a tick's events are emitted (see `provider_position`).
    provider_index: Option<ProviderIndex>,
    /// Views derived from the zone's state for its status and its social step, kept until
    /// what they count changes.
    derived: Derived,
    /// Tick durations measured, milliseconds (drained by the service for metrics).
    pub tick_durations_ms: Vec<f64>,
    /// Where the load generator collects every tick duration, milliseconds (None in service).
    pub tick_sink: Option<Arc<std::sync::Mutex<Vec<f64>>>>,
    #[cfg(feature = "fault-injection")]
    faults: BTreeMap<String, Fault>,
}

/// A summary of a zone for the service loop, metrics and the admin API, answered with every
/// applied batch.
#[derive(Clone, Debug, Default)]
pub struct ZoneStatus {
    /// Game time in ticks.
    pub game_time: u64,
    /// Ticks run.
    pub tick: u64,
    /// NPCs per tier.
    pub tiers: Vec<(Tier, usize)>,
    /// Tick durations since the last status, milliseconds.
    pub tick_durations_ms: Vec<f64>,
    /// NPCs held back by isolation.
    pub held: usize,
    /// Rooms holding a player, by id (shared: rebuilt only when a player moves).
    pub rooms_with_players: Arc<BTreeSet<String>>,
}

/// What costs a pass over every NPC or room (for a [`ZoneStatus`] and the social step), kept
/// until what it counts changes: NPCs' tiers, rooms or membership; players' rooms.
#[derive(Clone, Debug, Default)]
struct Derived {
    tiers: Option<Vec<(Tier, usize)>>,
    rooms_with_players: Option<Arc<BTreeSet<String>>>,
    /// Where the NPCs are (cleared when one moves, joins or leaves).
    roster: Option<Roster>,
    /// Every room as a place of social life, with its players (cleared when a player moves).
    places: Option<Vec<SocialPlace>>,
}

/// Each NPC's room, and the NPCs of each room by index in ascending order (who meets and who
/// witnesses what happens there).
#[derive(Clone, Debug, Default)]
struct Roster {
    at: Vec<usize>,
    by_room: Vec<Vec<usize>>,
}

impl Roster {
    fn of(meta: &[NpcMeta], rooms: usize) -> Self {
        let at: Vec<usize> = meta.iter().map(|meta| meta.room).collect();
        Self {
            by_room: Whereabouts::group(rooms, &at),
            at,
        }
    }
}

/// Room `room` as a place of social life: its id and the players in it.
fn room_place(presence: &Presence, names: &[(String, String)], room: usize) -> SocialPlace {
    SocialPlace {
        location: room_key(names, room).to_owned(),
        players: presence.players_in(room).to_vec(),
    }
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
}

/// A goal event of the core as its NPC event, with the change and description the story
/// detector reads.
fn goal_message(npc: &str, event: &SimEvent) -> Option<(GoalChange, String, NpcEvent)> {
    let npc = npc.to_owned();
    Some(match event {
        SimEvent::GoalCreated { description } => (
            GoalChange::Created,
            description.clone(),
            NpcEvent::GoalCreated {
                npc,
                description: description.clone(),
            },
        ),
        SimEvent::GoalCompleted { description } => (
            GoalChange::Completed,
            description.clone(),
            NpcEvent::GoalCompleted {
                npc,
                description: description.clone(),
            },
        ),
        SimEvent::GoalFailed { description } => (
            GoalChange::Failed,
            description.clone(),
            NpcEvent::GoalFailed {
                npc,
                description: description.clone(),
            },
        ),
        SimEvent::GoalBlocked {
            description,
            reason,
        } => (
            GoalChange::Blocked,
            description.clone(),
            NpcEvent::GoalBlocked {
                npc,
                description: description.clone(),
                reason: (*reason).to_owned(),
            },
        ),
        _ => return None,
    })
}

/// The placeholder writer over the embedded narration templates.
fn default_narrator() -> Result<Arc<TemplateProvider>, ZoneError> {
    let assets =
        crate::llm_bridge::embedded_assets().map_err(|e| ZoneError::Spec(e.to_string()))?;
    Ok(crate::llm_bridge::placeholder_writer(
        &assets,
        &LlmConfig::default(),
    ))
}

fn room_key(zone_rooms: &[(String, String)], room: usize) -> &str {
    zone_rooms.get(room).map_or("", |(id, _)| id.as_str())
}

impl Zone {
    /// Builds a zone from a checked world file (residents from the shipped archetypes).
    pub fn new(
        world_file: &WorldFile,
        profiles: &ProfileLibrary,
        sets: &SetLibrary,
        config: ZoneConfig,
        isolation: IsolationState,
    ) -> Result<Self, ZoneError> {
        Self::over(world_file, profiles, sets, None, config, isolation, &[])
    }

    /// Builds a zone over a snapshot's `vocabulary`: its names keep their symbols, and names
    /// the content adds since come after them — so the snapshot lays over the zone even when
    /// the content changed (`POST /content/reload`, a restart on edited files). Residents come
    /// from `archetypes` when given, else the shipped ones.
    pub fn over(
        world_file: &WorldFile,
        profiles: &ProfileLibrary,
        sets: &SetLibrary,
        archetypes: Option<&ArchetypeLibrary>,
        config: ZoneConfig,
        isolation: IsolationState,
        vocabulary: &[String],
    ) -> Result<Self, ZoneError> {
        let profile_name = world_file.profile.as_deref().unwrap_or(DEFAULT_PROFILE);
        let profile = profiles
            .get(profile_name)
            .ok_or_else(|| ZoneError::UnknownProfile(profile_name.to_owned()))?;
        let mut vocabulary = Vocabulary::from_names(vocabulary)
            .map_err(|e| ZoneError::Spec(format!("saved vocabulary: {e}")))?;
        let decider = wire::decider_for(&TuningPatch::default(), profile, &mut vocabulary)
            .map_err(|e| ZoneError::Spec(e.to_string()))?;
        let tuning = decider.tuning().clone();
        let weights = profile.weights_in(&mut vocabulary);
        let effects = profile.aggregated_effects_in(&mut vocabulary);
        let mut nearby_tuning = tuning.clone();
        nearby_tuning.full_tick_hours =
            tuning.full_tick_hours * config.tiers.nearby_every_ticks.max(1) as f64;
        let nearby = Decider::new(nearby_tuning).with_consideration_weights(weights);
        let simulator = Arc::new(Simulator::new(decider).with_aggregated_effects(effects.clone()));
        let nearby_simulator = Arc::new(Simulator::new(nearby).with_aggregated_effects(effects));
        let rooms = RoomGraph::new(
            world_file
                .rooms
                .iter()
                .map(|r| (r.id.as_str(), r.neighbours.as_slice())),
        );
        let room_names = world_file
            .rooms
            .iter()
            .map(|r| (r.id.clone(), r.name.clone().unwrap_or_else(|| r.id.clone())))
            .collect();
        let mut providers = BTreeMap::new();
        let mut world = World::default();
        for (i, placed) in world_file.providers.iter().enumerate() {
            let provider =
                compile::provider(&format!("providers[{i}]"), &placed.spec, &mut vocabulary)
                    .map_err(|e| ZoneError::Spec(e.to_string()))?;
            let room = rooms
                .room(&placed.room)
                .ok_or_else(|| ZoneError::Spec(format!("providers[{i}].room: unknown room")))?;
            providers.insert(
                provider.id.clone(),
                ProviderPlace {
                    room,
                    name: placed.name.clone().unwrap_or_else(|| provider.id.clone()),
                },
            );
            world.providers.push(provider);
        }
        let mut weather = BTreeMap::new();
        for (name, contexts) in &world_file.weather {
            let compiled = contexts
                .iter()
                .map(|c| Context {
                    name: vocabulary.intern(&c.name),
                    tag_multipliers: c
                        .tag_multipliers
                        .iter()
                        .map(|(tag, m)| (vocabulary.intern(tag), *m))
                        .collect(),
                })
                .collect();
            weather.insert(name.clone(), compiled);
        }
        let presence = Presence::new(config.tiers.clone(), &rooms);
        let social = SocialLife::new(&mut vocabulary, world_file.seed);
        let mut zone = Self {
            name: world_file.zone.clone(),
            seed: world_file.seed,
            governor: Governor::new(config.governor.clone()),
            isolation: Isolation::new(config.isolation.clone(), isolation),
            config,
            vocabulary,
            simulator,
            nearby_simulator,
            world,
            rooms,
            room_names,
            providers,
            weather,
            agents: Vec::new(),
            meta: Vec::new(),
            presence,
            tick: 0,
            game_time: world_file.start_game_time,
            full_tick_hours: tuning.full_tick_hours,
            sets: sets.clone(),
            archetypes: BTreeMap::new(),
            catch_up_cache: CatchUpCache::default(),
            goal_predicates: GoalPredicateRegistry::default(),
            narrator: default_narrator()?,
            social,
            spawned: BTreeMap::new(),
            resident_specs: BTreeMap::new(),
            arrivals: VecDeque::new(),
            departed: BTreeSet::new(),
            governor_script: None,
            running_by_provider: None,
            provider_index: None,
            perceive_said: true,
            derived: Derived::default(),
            tick_durations_ms: Vec::new(),
            tick_sink: None,
            #[cfg(feature = "fault-injection")]
            faults: BTreeMap::new(),
        };
        zone.world.now_hours = zone.now_hours();
        for (i, npc) in world_file.npcs.iter().enumerate() {
            zone.add_npc(&format!("npcs[{i}]"), npc)?;
        }
        if !world_file.residents.is_empty() {
            let embedded;
            let library = match archetypes {
                Some(library) => library,
                None => {
                    embedded =
                        ArchetypeLibrary::embedded().map_err(|e| ZoneError::Spec(e.to_string()))?;
                    &embedded
                }
            };
            zone.archetypes = library.compile_all(&mut zone.vocabulary);
        }
        for (i, resident) in world_file.residents.iter().enumerate() {
            zone.add_resident(&format!("residents[{i}]"), resident)?;
        }
        Ok(zone)
    }

    /// Replays a log from here on: the governor applies `script` (its logged decisions by
    /// tick) instead of measuring time, a `say` is not handed to perception (its perceived
    /// events are in the log), and nothing new is written to the world stream.
    pub fn begin_replay(&mut self, script: BTreeMap<u64, GovernorDecision>) {
        self.governor_script = Some(script);
        self.perceive_said = false;
    }

    /// Back to live processing after a replay.
    pub fn end_replay(&mut self) {
        self.governor_script = None;
        self.perceive_said = true;
    }

    fn scripted_verdict(logged: Option<&GovernorDecision>, npc: &str) -> Verdict {
        match logged {
            Some(d) if d.skipped.iter().any(|id| id == npc) => Verdict::Skip,
            Some(d) if d.demote.iter().any(|id| id == npc) => Verdict::Demote,
            _ => Verdict::Process,
        }
    }

    /// Injects a fault into an NPC's updates.
    #[cfg(feature = "fault-injection")]
    pub fn inject_fault(&mut self, npc: &str, fault: Fault) {
        self.faults.insert(npc.to_owned(), fault);
    }

    fn now_hours(&self) -> f64 {
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

    /// The decider of full-detail ticks (for the inspector).
    pub fn decider(&self) -> &Decider {
        self.simulator.decider()
    }

    /// Adds an NPC; `path` names it in errors.
    pub fn add_npc(&mut self, path: &str, spec: &NpcSpec) -> Result<(), ZoneError> {
        let room = self
            .rooms
            .room(&spec.room)
            .ok_or_else(|| ZoneError::Spec(format!("{path}.room: unknown room `{}`", spec.room)))?;
        let agent = compile::agent(path, &spec.agent, &mut self.vocabulary)
            .map_err(|e| ZoneError::Spec(e.to_string()))?;
        let mut simulated = SimulatedAgent::new(agent);
        if let Some(set) = &spec.reactive_set {
            simulated.reactive = Some(self.reactive_layer(&format!("{path}.reactive_set"), set)?);
        }
        let name = spec
            .name
            .clone()
            .unwrap_or_else(|| simulated.agent.id.clone());
        self.insert_npc(path, simulated, name, spec.archetype.clone(), room)
    }

    /// Adds an NPC built from its archetype — needs, personality, schedule, goals, barks,
    /// mood, its reactive set and its affect persona — with its own places and overrides.
    pub fn add_resident(&mut self, path: &str, spec: &ResidentSpec) -> Result<(), ZoneError> {
        let room = self
            .rooms
            .room(&spec.room)
            .ok_or_else(|| ZoneError::Spec(format!("{path}.room: unknown room `{}`", spec.room)))?;
        let archetype = self
            .archetypes
            .get(&spec.archetype)
            .cloned()
            .ok_or_else(|| {
                let known: Vec<&str> = self.archetypes.keys().map(String::as_str).collect();
                ZoneError::Spec(format!(
                    "{path}.archetype: unknown archetype `{}` (known: {})",
                    spec.archetype,
                    known.join(", ")
                ))
            })?;
        let record = NpcRecord {
            id: spec.id.clone(),
            archetype: spec.archetype.clone(),
            position: spec.position,
            places: spec.places.clone(),
            overrides: spec.overrides.clone(),
        };
        let mut simulated = archetype
            .instantiate(&record, &mut self.vocabulary)
            .map_err(|e| ZoneError::Spec(format!("{path}: {e}")))?;
        if let Some(set) = &archetype.spec.reactive_set {
            simulated.reactive =
                Some(self.reactive_layer(&format!("{path}.archetype.reactive_set"), set)?);
        }
        if let Some(persona) = &archetype.spec.affect_persona {
            let (_, model) = load_persona(persona, None)
                .map_err(|e| ZoneError::Spec(format!("{path}.archetype.affect_persona: {e}")))?;
            simulated.affect = Some(AffectLayer::new(Arc::new(model), &mut self.vocabulary));
        }
        let name = spec.name.clone().unwrap_or_else(|| spec.id.clone());
        self.insert_npc(path, simulated, name, Some(spec.archetype.clone()), room)?;
        self.resident_specs.insert(spec.id.clone(), spec.clone());
        Ok(())
    }

    fn reactive_layer(&mut self, path: &str, set: &str) -> Result<ReactiveLayer, ZoneError> {
        let loaded = self
            .sets
            .resolve(set)
            .map_err(|e| ZoneError::Spec(format!("{path}: {e}")))?;
        Ok(ReactiveLayer::new(Arc::new(
            loaded.compile(&mut self.vocabulary),
        )))
    }

    fn insert_npc(
        &mut self,
        path: &str,
        mut simulated: SimulatedAgent,
        name: String,
        archetype: Option<String>,
        room: usize,
    ) -> Result<(), ZoneError> {
        if self.npc_index(&simulated.agent.id).is_some() {
            return Err(ZoneError::Spec(format!(
                "{path}.id: NPC `{}` already exists",
                simulated.agent.id
            )));
        }
        let index = self
            .agents
            .partition_point(|a| a.agent.id < simulated.agent.id);
        let tier = self.presence.room_tier(room);
        simulated.level = if tier == Tier::Background {
            DetailLevel::Simplified
        } else {
            DetailLevel::Full
        };
        let profile = archetype
            .as_deref()
            .and_then(|name| self.archetypes.get(name).map(|c| (name, &c.spec)));
        self.social.join(&simulated.agent.id, profile);
        self.derived.tiers = None;
        self.derived.roster = None;
        self.agents.insert(index, simulated);
        self.meta.insert(
            index,
            NpcMeta {
                name,
                archetype,
                room,
                tier: NpcTier::new(tier),
                current_intent: None,
                seq: (u64::MAX, 0),
                id_hash: stable_hash(&self.agents[index].agent.id),
                decisions: VecDeque::new(),
            },
        );
        Ok(())
    }

    /// NPC `index` is now in `room`.
    fn move_npc(&mut self, index: usize, room: usize) {
        if self.meta[index].room != room {
            self.meta[index].room = room;
            self.derived.roster = None;
        }
    }

    /// The NPCs in `room`, by index.
    fn npcs_in(&mut self, room: usize) -> &[usize] {
        let (meta, rooms) = (&self.meta, self.room_names.len());
        let roster = (self.derived.roster).get_or_insert_with(|| Roster::of(meta, rooms));
        roster.by_room.get(room).map_or(&[], Vec::as_slice)
    }

    /// A player entered or left a room.
    fn players_moved(&mut self) {
        self.derived.rooms_with_players = None;
        self.derived.places = None;
    }

    fn next_id(&mut self, index: usize) -> String {
        let tick = self.tick;
        let meta = &mut self.meta[index];
        if meta.seq.0 != tick {
            meta.seq = (tick, 0);
        }
        let seq = meta.seq.1;
        meta.seq.1 += 1;
        format!("{}:{}:{tick}:{seq}", self.name, self.agents[index].agent.id)
    }

    fn header_for(&mut self, index: usize) -> Header {
        let id = self.next_id(index);
        header(id, &self.name, self.game_time)
    }

    /// Publishes `body` on `stream` under a fresh header for NPC `index`; returns the header
    /// (its id names an intent for a later cancel).
    fn publish<T: serde::Serialize>(
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

    fn zone_header(&self, seq: &mut u32) -> Header {
        let id = format!("{}:-:{}:{}", self.name, self.tick, *seq);
        *seq += 1;
        header(id, &self.name, self.game_time)
    }

    /// Applies one world message; one naming what this zone does not hold is refused into
    /// `out.refused`.
    pub fn apply(&mut self, message: &WorldMessage, out: &mut ZoneOutput) {
        let refuse = |out: &mut ZoneOutput, path: &str, reason: String| {
            out.refused.push(Refusal {
                id: message.header.id.clone(),
                kind: message.event.kind(),
                path: path.to_owned(),
                reason,
            });
        };
        match &message.event {
            WorldEvent::TimeAdvanced => {
                let target = message.header.game_time;
                if target <= self.game_time {
                    return;
                }
                let max = self.config.tick.max_catch_up_ticks_per_event.max(1);
                if target - self.game_time > max {
                    self.catch_up_all(target - max, out);
                }
                while self.game_time < target {
                    self.game_time += 1;
                    self.run_tick(out);
                }
            }
            WorldEvent::PlayerEntered { player, room } => match self.rooms.room(room) {
                Some(room) => {
                    self.presence.player_entered(&self.rooms, player, room);
                    self.players_moved();
                }
                None => refuse(out, "room", format!("unknown room `{room}`")),
            },
            WorldEvent::PlayerLeft { player } => {
                self.presence.player_left(&self.rooms, player);
                self.players_moved();
            }
            WorldEvent::NpcSpawned { npc } => match self.spawn_from_record("npc", npc) {
                Ok(index) => {
                    let event = NpcEvent::NpcSpawned {
                        npc: self.agents[index].agent.id.clone(),
                        room: room_key(&self.room_names, self.meta[index].room).to_owned(),
                    };
                    self.publish(index, StreamKind::NpcEvents, &event, out);
                }
                Err(error) => refuse(out, "npc", error.to_string()),
            },
            WorldEvent::NpcDespawned { npc } => {
                if self.npc_index(npc).is_none() {
                    refuse(out, "npc", unknown_npc(&self.name, npc));
                }
                self.despawn(npc, "despawned", out);
            }
            WorldEvent::NpcTransfer { npc, to_zone, room } => {
                if let Err((path, reason)) = self.hand_over(npc, to_zone, room, out) {
                    refuse(out, path, reason);
                }
            }
            WorldEvent::NpcArrived(arrival) => {
                let id = match SpawnRecord::parse(&arrival.npc) {
                    Ok(record) => record.id().to_owned(),
                    Err((path, reason)) => {
                        refuse(out, &crate::world_file::field_path("npc", &path), reason);
                        return;
                    }
                };
                // A zone recovering from its log hands its travellers over again: the first
                // arrival stands.
                if self.arrivals.contains(&message.header.id) {
                    return;
                }
                if self.npc_index(&id).is_some() {
                    refuse(
                        out,
                        "npc",
                        format!("an NPC `{id}` already lives in zone `{}`", self.name),
                    );
                    return;
                }
                match self.spawn_from_record("npc", &arrival.npc) {
                    Ok(index) => {
                        self.arrivals.push_back(message.header.id.clone());
                        while self.arrivals.len() > self.config.tick.arrivals_remembered {
                            self.arrivals.pop_front();
                        }
                        self.settle_traveller(index, arrival, out);
                    }
                    Err(error) => refuse(out, "npc", error.to_string()),
                }
            }
            WorldEvent::ProviderUpdated {
                provider,
                state,
                capacity,
            } => {
                let Some(p) = self.world.providers.iter_mut().find(|p| &p.id == provider) else {
                    refuse(out, "provider", format!("unknown provider `{provider}`"));
                    return;
                };
                if let Some(state) = state {
                    p.state = Some(self.vocabulary.intern(state));
                }
                if let Some(capacity) = capacity {
                    p.capacity = *capacity;
                }
            }
            WorldEvent::SocialEvent {
                kind,
                source,
                target,
                deltas,
                mood,
                about: _,
            } => {
                if self.npc_index(target).is_none() {
                    refuse(out, "target", unknown_npc(&self.name, target));
                }
                if let Some(index) = self.npc_index(target) {
                    let now_hours = self.now_hours();
                    let npc = &mut self.agents[index];
                    for (name, delta) in deltas {
                        let symbol = self.vocabulary.intern(name);
                        match &mut npc.wellbeing {
                            // An NPC with a wellbeing layer takes external changes damped
                            // (`max_need_delta_per_tick`) and remembers how the event felt.
                            Some((config, _)) => {
                                config.nudge(&mut npc.agent, symbol, *delta);
                            }
                            None => {
                                if let Some(c) = npc
                                    .agent
                                    .considerations
                                    .iter_mut()
                                    .find(|c| c.name == symbol)
                                {
                                    c.value = (c.value + delta).clamp(c.min, c.max.max(c.min));
                                }
                            }
                        }
                    }
                    if let Some((config, wellbeing)) = &mut npc.wellbeing {
                        let felt = mood.unwrap_or_else(|| config.event_mood(kind));
                        if felt != 0.0 {
                            config.remember(wellbeing, felt, now_hours);
                        }
                    }
                    self.publish(
                        index,
                        StreamKind::NpcEvents,
                        &NpcEvent::SocialInteraction {
                            npc: target.clone(),
                            kind: kind.clone(),
                            source: source.clone(),
                        },
                        out,
                    );
                    // An NPC with a temper feels it too: the event joins its affect layer's
                    // queue under the same kind (its persona's channels decide what it moves).
                    if let Some(affect) = &mut self.agents[index].affect {
                        affect
                            .pending
                            .push(AffectEvent::new(kind.clone()).from_source(source.clone()));
                    }
                    // …and an archetype NPC may take on a reactive goal about it.
                    if let Some(book) = &mut self.agents[index].goals {
                        let created: Vec<SimEvent> = book
                            .react(kind, source, now_hours)
                            .into_iter()
                            .map(|description| SimEvent::GoalCreated { description })
                            .collect();
                        self.emit(index, &created, out);
                    }
                    // Whoever is in the room sees a hostile act first-hand (and will talk).
                    let room = self.meta[index].room;
                    let mut witnesses = self.npcs_in(room).to_vec();
                    witnesses.retain(|&i| self.agents[i].agent.id != *source);
                    let place = self.social_place(index);
                    let seen = self.social.witness(
                        &mut self.agents,
                        &witnesses,
                        source,
                        kind,
                        &place,
                        now_hours,
                    );
                    self.publish_social(seen, out);
                }
            }
            WorldEvent::ScheduleOverride {
                npc,
                activity,
                location,
                tags,
                hours,
            } => {
                let Some(index) = self.npc_index(npc) else {
                    refuse(out, "npc", unknown_npc(&self.name, npc));
                    return;
                };
                let now_hours = self.now_hours();
                let block = ScheduleBlock {
                    start_hour: 0.0,
                    end_hour: 24.0,
                    activity: self.vocabulary.intern(activity),
                    tags: tags.iter().map(|t| self.vocabulary.intern(t)).collect(),
                    location: location.clone(),
                    priority: 0.0,
                    conditions: Vec::new(),
                    coarse_event: None,
                };
                match &mut self.agents[index].schedule {
                    Some(layer) => layer.overrides.push(ScheduleOverride {
                        block,
                        expires_at_hours: now_hours + hours,
                    }),
                    None => refuse(out, "npc", format!("NPC `{npc}` has no schedule")),
                }
            }
            WorldEvent::Say {
                speaker,
                room,
                text,
                addressee,
            } => {
                if self.perceive_said {
                    let request = self.perception_request(message, speaker, room, text, addressee);
                    out.llm.push(LlmRequest::Perception(request));
                }
            }
            WorldEvent::ActionCompleted { npc, .. } => {
                if self.npc_index(npc).is_none() {
                    refuse(out, "npc", unknown_npc(&self.name, npc));
                }
            }
            WorldEvent::ActionFailed {
                npc,
                intent,
                reason,
            } => {
                if self.npc_index(npc).is_none() {
                    refuse(out, "npc", unknown_npc(&self.name, npc));
                }
                if let Some(index) = self.npc_index(npc) {
                    self.release_running(index);
                    self.meta[index].current_intent = None;
                    self.publish(
                        index,
                        StreamKind::NpcEvents,
                        &NpcEvent::ActionFailed {
                            npc: npc.clone(),
                            intent: intent.clone(),
                            reason: reason.clone(),
                        },
                        out,
                    );
                }
            }
            WorldEvent::WeatherChanged { weather } => {
                self.world.contexts = self.weather.get(weather).cloned().unwrap_or_default();
            }
            // Recorded by this zone when it decided; a replay (issue 10) applies it by tick.
            WorldEvent::GovernorDecision(_) => {}
        }
    }

    /// The NPCs running an action of `provider`, by index. Built once per emit pass (a social
    /// start asks it; scanning every NPC each time made a tick of many starts quadratic).
    fn running_at(&mut self, provider: &str) -> Vec<usize> {
        let agents = &self.agents;
        let by_provider = self.running_by_provider.get_or_insert_with(|| {
            let mut map: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for (index, agent) in agents.iter().enumerate() {
                if let Some(running) = &agent.running {
                    map.entry(running.provider.clone()).or_default().push(index);
                }
            }
            map
        });
        by_provider.get(provider).cloned().unwrap_or_default()
    }

    /// Where provider `id` stands: through the tick's index during its emit pass (a tick of
    /// many starts would otherwise scan every provider for each), else by a scan.
    fn provider_position(&self, id: &str) -> Option<Position> {
        let at = match &self.provider_index {
            Some(index) => index.find(&self.world, id),
            None => self.world.providers.iter().position(|p| p.id == id),
        };
        at.map(|p| self.world.providers[p].position)
    }

    /// Ends NPC `index`'s running action without completing it, freeing its slot.
    fn release_running(&mut self, index: usize) {
        if let Some(running) = self.agents[index].running.take() {
            geppetto_core::apply_occupancy(
                &mut self.world,
                &[SimEvent::ActionCompleted {
                    provider: running.provider,
                    action: running.action.id,
                }],
            );
        }
    }

    /// Uses `narrator` for placeholder lines (narration templates loaded from elsewhere than
    /// the embedded ones).
    pub fn set_narrator(&mut self, narrator: Arc<TemplateProvider>) {
        self.narrator = narrator;
    }

    fn display_name(&self, id: &str) -> String {
        self.npc_index(id)
            .map_or_else(|| id.to_owned(), |index| self.meta[index].name.clone())
    }

    /// The narration request of an interaction `interaction_id` of NPC `index` with `other`
    /// in `room`, named after the action that brought them together (`chat at the well`;
    /// the templates are keyed by such names).
    fn narration_request(
        &self,
        interaction_id: &str,
        index: usize,
        other: &str,
        room: usize,
        action: &str,
    ) -> NarrationRequest {
        let id = &self.agents[index].agent.id;
        NarrationRequest {
            interaction_id: interaction_id.to_owned(),
            zone: self.name.clone(),
            room: room_key(&self.room_names, room).to_owned(),
            initiator: Participant {
                id: id.clone(),
                name: self.meta[index].name.clone(),
            },
            target: Participant {
                id: other.to_owned(),
                name: self.display_name(other),
            },
            interaction: action.replace('_', " "),
            priority: Priority::Witnessed,
            seed: derive_seed(self.seed, stable_hash(interaction_id)),
        }
    }

    /// What perception needs to read a player's line: the NPCs of the room spoken in (all of
    /// the zone's when the game names no room), by id and name.
    fn perception_request(
        &self,
        message: &WorldMessage,
        speaker: &str,
        room: &Option<String>,
        text: &str,
        addressee: &Option<String>,
    ) -> PerceptionRequest {
        let room_index = room.as_deref().and_then(|r| self.rooms.room(r));
        let npcs = self
            .agents
            .iter()
            .zip(&self.meta)
            .filter(|(_, meta)| room_index.is_none_or(|r| meta.room == r))
            .map(|(agent, meta)| NpcRef {
                id: agent.agent.id.clone(),
                name: meta.name.clone(),
                zone: self.name.clone(),
            })
            .collect();
        PerceptionRequest {
            utterance_id: message.header.id.clone(),
            speaker: speaker.to_owned(),
            text: text.to_owned(),
            context: PerceptionContext {
                zone: self.name.clone(),
                room: room.clone().unwrap_or_default(),
                addressee: addressee.clone(),
                npcs,
            },
            priority: Priority::Witnessed,
            seed: derive_seed(self.seed, stable_hash(&message.header.id)),
        }
    }

    /// The rooms holding a player now, by id.
    pub fn rooms_with_players(&mut self) -> Arc<BTreeSet<String>> {
        let (presence, names) = (&self.presence, &self.room_names);
        let rooms = self.derived.rooms_with_players.get_or_insert_with(|| {
            Arc::new(
                (0..names.len())
                    .filter(|room| presence.player_in(*room))
                    .map(|room| room_key(names, room).to_owned())
                    .collect(),
            )
        });
        Arc::clone(rooms)
    }

    /// The zone's status; drains the tick durations measured since the last one.
    pub fn status(&mut self) -> ZoneStatus {
        ZoneStatus {
            game_time: self.game_time,
            tick: self.tick,
            tiers: self.tier_counts(),
            tick_durations_ms: std::mem::take(&mut self.tick_durations_ms),
            held: if self.isolation.holds_any() {
                self.held_npcs().len()
            } else {
                0
            },
            rooms_with_players: self.rooms_with_players(),
        }
    }

    /// Brings every NPC (not held by isolation) from now to game time `to` in one analytic
    /// step, then sets the zone's clock there. Running actions end (their intents are
    /// cancelled with reason `caught_up`); each NPC ends where its schedule puts it and reports
    /// `caught_up`; goals past their deadline fail.
    fn catch_up_all(&mut self, to: u64, out: &mut ZoneOutput) {
        let from_hours = self.now_hours();
        let to_hours = to as f64 * self.full_tick_hours;
        let config = CatchUpConfig {
            max_hours: self.config.tick.catch_up_max_hours,
        };
        tracing::info!(zone = %self.name, from_hours, to_hours, "time jump: catching NPCs up");
        self.world.now_hours = to_hours;
        for index in 0..self.agents.len() {
            let id = self.agents[index].agent.id.clone();
            if self
                .isolation
                .is_held(&id, self.meta[index].archetype.as_deref())
            {
                continue;
            }
            self.cancel(index, "caught_up", out);
            self.release_running(index);
            let request = CatchUpRequest {
                from_hours,
                to_hours,
                archetype: self.meta[index].archetype.as_deref().unwrap_or(&id),
                seed: derive_seed(self.seed, stable_hash(&id) ^ to),
            };
            let report = self.simulator.catch_up(
                &mut self.agents[index],
                &self.world,
                &request,
                &mut self.catch_up_cache,
                &config,
            );
            let place = self.agents[index]
                .schedule
                .as_ref()
                .and_then(|s| s.location_at(&self.world, to_hours))
                .and_then(|place| self.providers.get(&place));
            if let Some(place) = place {
                self.move_npc(index, place.room);
            }
            let failed: Vec<SimEvent> = report
                .events
                .into_iter()
                .filter(|e| matches!(e, SimEvent::GoalFailed { .. }))
                .collect();
            self.emit(index, &failed, out);
            let body = NpcEvent::CaughtUp {
                npc: id,
                hours: report.hours,
                closed_form_days: report.closed_form_days,
                hourly_steps: report.hourly_steps,
            };
            self.publish(index, StreamKind::NpcEvents, &body, out);
        }
        self.game_time = to;
    }

    /// Builds an NPC from a spawn record (see [`SpawnRecord`]) and keeps the record for
    /// snapshots; returns its index.
    pub fn spawn_from_record(
        &mut self,
        path: &str,
        record: &serde_json::Value,
    ) -> Result<usize, ZoneError> {
        let parsed = SpawnRecord::parse(record).map_err(|(at, reason)| {
            ZoneError::Spec(format!(
                "{}: {reason}",
                crate::world_file::field_path(path, &at)
            ))
        })?;
        match &parsed {
            SpawnRecord::Npc(spec) => self.add_npc(path, spec)?,
            SpawnRecord::Resident(spec) => self.add_resident(path, spec)?,
        }
        let id = parsed.id().to_owned();
        self.spawned.insert(id.clone(), record.clone());
        self.departed.remove(&id);
        self.npc_index(&id)
            .ok_or_else(|| ZoneError::Spec(format!("{path}: `{id}` was not added")))
    }

    /// Hands NPC `npc` over to zone `to_zone`, arriving in `room`: the arrival (how to build
    /// it, its needs, its rumours) goes to that zone's world stream with an id derived from
    /// this zone, the NPC and the tick — so a replay hands it over again under the same id —
    /// and the NPC leaves this zone. Refused (path, reason) when it cannot travel.
    fn hand_over(
        &mut self,
        npc: &str,
        to_zone: &str,
        room: &str,
        out: &mut ZoneOutput,
    ) -> Result<(), (&'static str, String)> {
        let index = self
            .npc_index(npc)
            .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))?;
        if to_zone == self.name {
            return Err(("to_zone", format!("`{npc}` is already in zone `{to_zone}`")));
        }
        let mut record = match (self.spawned.get(npc), self.resident_specs.get(npc)) {
            (Some(record), _) => record.clone(),
            (None, Some(resident)) => serde_json::json!({ "resident": resident }),
            (None, None) => {
                return Err((
                    "npc",
                    format!(
                        "`{npc}` is an inline NPC of the world file; archetype residents and \
                         spawned NPCs can move between zones"
                    ),
                ));
            }
        };
        let target = match record.get_mut("resident") {
            Some(resident) => resident,
            None => &mut record,
        };
        target["room"] = serde_json::Value::String(room.to_owned());
        let agent = &self.agents[index].agent;
        let needs = agent
            .considerations
            .iter()
            .map(|c| (self.vocabulary.name(c.name).to_owned(), c.value))
            .collect();
        let arrival = crate::bus::envelope::Arrival {
            from_zone: self.name.clone(),
            npc: record,
            needs,
            rumours: self.social.fabric.rumours(npc).to_vec(),
        };
        let message = WorldMessage {
            header: header(
                format!("{}:{npc}:{}:handover", self.name, self.tick),
                to_zone,
                self.game_time,
            ),
            event: WorldEvent::NpcArrived(Box::new(arrival)),
        };
        out.handovers.push((to_zone.to_owned(), message.to_json()));
        let departed = NpcEvent::NpcDeparted {
            npc: npc.to_owned(),
            to_zone: to_zone.to_owned(),
        };
        self.publish(index, StreamKind::NpcEvents, &departed, out);
        self.despawn(npc, "transferred", out);
        Ok(())
    }

    /// A traveller just built here takes on the needs it left with and the rumours it
    /// carries (told on here like any other: gossip crossing the border).
    fn settle_traveller(
        &mut self,
        index: usize,
        arrival: &crate::bus::envelope::Arrival,
        out: &mut ZoneOutput,
    ) {
        let npc = self.agents[index].agent.id.clone();
        for (name, value) in &arrival.needs {
            let Some(symbol) = self.vocabulary.lookup(name) else {
                continue;
            };
            if let Some(c) = self.agents[index]
                .agent
                .considerations
                .iter_mut()
                .find(|c| c.name == symbol)
            {
                c.value = value.clamp(c.min, c.max.max(c.min));
            }
        }
        for rumour in &arrival.rumours {
            let mut rumour = rumour.clone();
            rumour.holder = npc.clone();
            self.social.fabric.learn(&npc, rumour);
        }
        let event = NpcEvent::NpcArrived {
            npc,
            from_zone: arrival.from_zone.clone(),
            room: room_key(&self.room_names, self.meta[index].room).to_owned(),
        };
        self.publish(index, StreamKind::NpcEvents, &event, out);
    }

    fn despawn(&mut self, npc: &str, reason: &str, out: &mut ZoneOutput) {
        let Some(index) = self.npc_index(npc) else {
            return;
        };
        let h = self.header_for(index);
        if let Some((cancelled, _)) = self.meta[index].current_intent.take() {
            out.push(
                StreamKind::Intents,
                &h,
                &Intent::Cancel {
                    npc: npc.to_owned(),
                    cancelled,
                    reason: reason.to_owned(),
                },
            );
        }
        self.release_running(index);
        self.derived.tiers = None;
        self.derived.roster = None;
        self.agents.remove(index);
        self.meta.remove(index);
        if self.spawned.remove(npc).is_none() {
            self.departed.insert(npc.to_owned());
        }
        self.resident_specs.remove(npc);
        self.isolation.forget(npc);
        self.governor.forget(npc);
        let h = header(
            format!("{}:{npc}:{}:despawn", self.name, self.tick),
            &self.name,
            self.game_time,
        );
        out.push(
            StreamKind::NpcEvents,
            &h,
            &NpcEvent::NpcDespawned {
                npc: npc.to_owned(),
            },
        );
    }

    /// Runs one tick at the current game time.
    pub fn run_tick(&mut self, out: &mut ZoneOutput) {
        let started = Instant::now();
        self.tick += 1;
        let tick = self.tick;
        self.world.now_hours = self.now_hours();
        let _span =
            tracing::debug_span!("tick", zone = %self.name, tick, game_time = self.game_time)
                .entered();
        let mut zone_seq = 0u32;
        // 1. Tiers. Every NPC steps towards its room's tier; promotions out of Background (a
        // catch-up each) are limited per tick and go to those near a player first (Active
        // targets, then Nearby), by id.
        let hysteresis = self.config.tiers.demotion_hysteresis_ticks;
        let mut promotions_left = self.config.tiers.catch_up_per_tick;
        let mut tier_events = Vec::new();
        let mut catching_up: Vec<(std::cmp::Reverse<Tier>, usize)> = Vec::new();
        for (index, meta) in self.meta.iter_mut().enumerate() {
            let target = self.presence.room_tier(meta.room);
            let current = meta.tier.tier;
            if current == Tier::Background && target > current {
                catching_up.push((std::cmp::Reverse(target), index));
            } else if let Some(new) = meta.tier.step(target, true, hysteresis) {
                tier_events.push((index, current, new));
            }
        }
        catching_up.sort_unstable();
        for (std::cmp::Reverse(target), index) in catching_up {
            let tier = &mut self.meta[index].tier;
            if let Some(new) = tier.step(target, promotions_left > 0, hysteresis) {
                promotions_left -= 1;
                tier_events.push((index, Tier::Background, new));
            }
        }
        if !tier_events.is_empty() {
            self.derived.tiers = None;
        }
        tier_events.sort_by_key(|(index, _, _)| *index);
        for (index, from, to) in tier_events {
            let h = self.header_for(index);
            let npc = self.agents[index].agent.id.clone();
            out.push(
                StreamKind::NpcEvents,
                &h,
                &NpcEvent::TierChanged {
                    npc,
                    from: from.as_str().into(),
                    to: to.as_str().into(),
                },
            );
        }
        // 2. Who is due, in priority order: by tier (Active first), those in a room with a
        // player first, then by id.
        let mut due: Vec<(std::cmp::Reverse<Tier>, bool, usize)> = Vec::new();
        for index in 0..self.agents.len() {
            let meta = &self.meta[index];
            let id = &self.agents[index].agent.id;
            if self.isolation.is_held(id, meta.archetype.as_deref()) {
                continue;
            }
            let mut tier = meta.tier.tier;
            if tier == Tier::Active && self.governor.is_demoted(id) {
                tier = Tier::Nearby;
            }
            let every = match tier {
                Tier::Active => 1,
                Tier::Nearby => self.config.tiers.nearby_every_ticks.max(1),
                Tier::Background => self.config.tiers.background_every_ticks.max(1),
            };
            if every == 1 || tick.wrapping_add(meta.id_hash).is_multiple_of(every) {
                let with_player = self.presence.player_in(meta.room);
                due.push((std::cmp::Reverse(tier), !with_player, index));
            }
        }
        due.sort_unstable();
        // 3. Prepare each due NPC in isolation, under the governor.
        let zone_seed = derive_seed(self.seed, tick);
        let mut prepared: Vec<Prepared> = (0..self.agents.len())
            .map(|_| Prepared {
                stage: Stage::Settled,
                result: TickResult::default(),
            })
            .collect();
        let mut decision = GovernorDecision {
            tick,
            ..GovernorDecision::default()
        };
        let mut failures = Vec::new();
        let mut processed = 0usize;
        let mut isolation_changed = false;
        for &(std::cmp::Reverse(tier), _, index) in &due {
            let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
            let id = &self.agents[index].agent.id;
            let verdict = match &self.governor_script {
                Some(script) => Self::scripted_verdict(script.get(&tick), id),
                None => self.governor.verdict(id, tier == Tier::Active, elapsed_ms),
            };
            match verdict {
                Verdict::Process => {}
                Verdict::Demote => {
                    decision.demote.push(id.clone());
                    continue;
                }
                Verdict::Skip => {
                    decision.skipped.push(id.clone());
                    continue;
                }
            }
            let (simulator, level) = match tier {
                Tier::Active => (&self.simulator, DetailLevel::Full),
                Tier::Nearby => (&self.nearby_simulator, DetailLevel::Full),
                Tier::Background => (&self.simulator, DetailLevel::Simplified),
            };
            let request = TickRequest {
                now_hours: self.world.now_hours,
                world: &self.world,
                level,
                simplified_event: None,
            };
            #[cfg(feature = "fault-injection")]
            let (fault, id) = (self.faults.get(id).copied(), id.clone());
            let agent = &mut self.agents[index];
            // `zone_agent_seed`, with the id's hash kept.
            let seed = derive_seed(zone_seed, self.meta[index].id_hash);
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                #[cfg(feature = "fault-injection")]
                match fault {
                    Some(Fault::Panic) => panic!("injected fault in {id}"),
                    Some(Fault::SlowMs(ms)) => {
                        std::thread::sleep(std::time::Duration::from_millis(ms))
                    }
                    None => {}
                }
                simulator.prepare(agent, &request, seed)
            }));
            processed += 1;
            match outcome {
                Ok(result) => {
                    prepared[index] = result;
                    isolation_changed |= self.isolation.succeeded(&self.agents[index].agent.id);
                }
                Err(panic) => {
                    let reason = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_else(|| "panic".into());
                    failures.push((index, reason));
                }
            }
        }
        // 3b. At most `max_decisions_per_tick` fresh decisions, by the priority order above;
        // the rest stay idle and decide next tick (a count, so deterministic: no log needed).
        let cap = self.config.tick.max_decisions_per_tick.max(1);
        let mut deciding = 0usize;
        for &(_, _, index) in &due {
            if prepared[index].stage == Stage::Idle && self.agents[index].queue.is_empty() {
                deciding += 1;
                if deciding > cap {
                    prepared[index].stage = Stage::Settled;
                }
            }
        }
        if deciding > cap {
            tracing::debug!(zone = %self.name, tick, deferred = deciding - cap, "decisions deferred to the next tick");
        }
        // 4. One contention-resolving finish for the whole zone.
        let now_hours = self.world.now_hours;
        let results = self.simulator.finish_zone(
            &mut self.agents,
            prepared,
            now_hours,
            &mut self.world,
            zone_seed,
            self.config.tick.decision_workers.max(1),
        );
        // 5. Governor record first (logged before the outputs it shapes), then isolation. A
        // replay applies the logged record instead and writes none.
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        let restore = self.governor.end_tick(elapsed_ms);
        if let Some(script) = &self.governor_script {
            if let Some(logged) = script.get(&tick) {
                self.governor.demote(&logged.demote);
                self.governor.restore(&logged.restore);
            }
        } else {
            decision.restore = restore;
            if !(decision.demote.is_empty()
                && decision.restore.is_empty()
                && decision.skipped.is_empty())
            {
                let h = self.zone_header(&mut zone_seq);
                out.messages.push((
                    StreamKind::World,
                    WorldMessage {
                        header: h,
                        event: WorldEvent::GovernorDecision(decision.clone()),
                    }
                    .to_json(),
                ));
                self.governor.demote(&decision.demote);
                self.governor.restore(&decision.restore);
            }
            if self.governor.exceeded(elapsed_ms) {
                let h = self.zone_header(&mut zone_seq);
                out.push(
                    StreamKind::NpcEvents,
                    &h,
                    &NpcEvent::TickBudgetExceeded {
                        tick,
                        elapsed_ms: (elapsed_ms * 1000.0).round() / 1000.0,
                        npcs_processed: processed,
                        npcs_skipped: decision.skipped.len() + decision.demote.len(),
                    },
                );
            }
        }
        for (index, reason) in failures {
            let id = self.agents[index].agent.id.clone();
            let archetype = self.meta[index].archetype.clone();
            isolation_changed = true;
            for event in self.isolation.failed(&id, archetype.as_deref(), &reason) {
                let h = self.header_for(index);
                out.push(StreamKind::NpcEvents, &h, &event);
            }
        }
        if isolation_changed {
            out.isolation_changed = Some(self.isolation.state.clone());
        }
        // 6. Intents and events.
        self.running_by_provider = None;
        self.provider_index = Some(ProviderIndex::new(&self.world));
        for (index, result) in results.into_iter().enumerate() {
            if !result.events.is_empty() {
                self.emit(index, &result.events, out);
            }
        }
        self.running_by_provider = None;
        self.provider_index = None;
        // 7. Social life: this tick's share of the social step, then story signals.
        self.social_tick(out);
        let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        if self.tick_durations_ms.len() < MAX_BUFFERED_TICK_DURATIONS {
            self.tick_durations_ms.push(duration_ms);
        }
        if let Some(Ok(mut sink)) = self.tick_sink.as_ref().map(|s| s.lock()) {
            sink.push(duration_ms);
        }
    }

    /// NPC `index`'s place for the story detector.
    fn social_place(&self, index: usize) -> SocialPlace {
        self.room_place(self.meta[index].room)
    }

    /// Room `room` as a place of social life: its id and the players in it.
    fn room_place(&self, room: usize) -> SocialPlace {
        room_place(&self.presence, &self.room_names, room)
    }

    fn social_tick(&mut self, out: &mut ZoneOutput) {
        let now_hours = self.now_hours();
        // A share of the step every tick: the rooms' places (one per room, not per NPC) and
        // where each NPC is, both kept between ticks until someone moves.
        let (meta, presence, names) = (&self.meta, &self.presence, &self.room_names);
        let roster = (self.derived.roster).get_or_insert_with(|| Roster::of(meta, names.len()));
        let places = self.derived.places.get_or_insert_with(|| {
            (0..names.len())
                .map(|room| room_place(presence, names, room))
                .collect()
        });
        let step = self.social.step(
            &mut self.agents,
            Whereabouts {
                places,
                at: &roster.at,
                by_place: &roster.by_room,
            },
            now_hours,
            self.tick,
            self.simulator.decider(),
        );
        self.publish_social(step, out);
        for signal in self.social.signals(now_hours) {
            let h = header(
                format!("{}:story:{}", self.name, signal.signal),
                &self.name,
                self.game_time,
            );
            out.push(StreamKind::Story, &h, &signal);
        }
    }

    /// A social step's interactions (narrated when witnessed), rumours and goals as messages.
    fn publish_social(&mut self, step: SocialStep, out: &mut ZoneOutput) {
        for interaction in step.interactions {
            let Some(index) = self.npc_index(&interaction.initiator) else {
                continue;
            };
            let h = self.header_for(index);
            let kind = interaction.kind.as_str();
            let narration = interaction.witnessed.then(|| {
                let room = self.meta[index].room;
                let request = self.narration_request(&h.id, index, &interaction.target, room, kind);
                let placeholder = self.narrator.narrate_now(&request);
                out.llm.push(LlmRequest::Narration(request));
                placeholder
            });
            let body = NpcEvent::Interaction {
                npc: interaction.initiator,
                with: interaction.target,
                kind: kind.to_owned(),
                success: interaction.success,
                witnessed: interaction.witnessed,
                narration,
            };
            out.push(StreamKind::NpcEvents, &h, &body);
        }
        for event in step.events {
            if let StoryEventKind::RumourHeard {
                listener,
                teller,
                subject,
                gossip,
                accepted,
                ..
            } = event.kind
            {
                let Some(index) = self.npc_index(&listener) else {
                    continue;
                };
                let body = NpcEvent::RumourHeard {
                    npc: listener,
                    teller,
                    subject,
                    gossip: gossip.as_str().to_owned(),
                    believed: accepted,
                };
                self.publish(index, StreamKind::NpcEvents, &body, out);
            }
        }
        for (npc, description) in step.goals_created {
            if let Some(index) = self.npc_index(&npc) {
                let body = NpcEvent::GoalCreated { npc, description };
                self.publish(index, StreamKind::NpcEvents, &body, out);
            }
        }
    }

    fn emit(&mut self, index: usize, events: &[SimEvent], out: &mut ZoneOutput) {
        let npc = self.agents[index].agent.id.clone();
        for event in events {
            match event {
                SimEvent::ActionStarted {
                    provider,
                    action,
                    utility,
                    player_queued,
                } => {
                    let keep = self.config.tick.decision_trace_len;
                    let trace = &mut self.meta[index].decisions;
                    if keep > 0 {
                        if trace.len() >= keep {
                            trace.pop_front();
                        }
                        trace.push_back(DecisionTrace {
                            tick: self.tick,
                            game_time: self.game_time,
                            provider: provider.clone(),
                            action: action.clone(),
                            utility: (utility * 10_000.0).round() / 10_000.0,
                            player_queued: *player_queued,
                        });
                    }
                    let provider_room = self
                        .providers
                        .get(provider)
                        .map_or(self.meta[index].room, |p| p.room);
                    if provider_room != self.meta[index].room {
                        let h = self.header_for(index);
                        let from_room =
                            room_key(&self.room_names, self.meta[index].room).to_owned();
                        let to_room = room_key(&self.room_names, provider_room).to_owned();
                        out.push(
                            StreamKind::Intents,
                            &h,
                            &Intent::Navigate {
                                npc: npc.clone(),
                                from_room,
                                to_room,
                                provider: provider.clone(),
                            },
                        );
                        self.move_npc(index, provider_room);
                    }
                    let (duration_hours, tags) = self.agents[index]
                        .running
                        .as_ref()
                        .map(|r| (r.action.duration_hours, r.action.tags.clone()))
                        .unwrap_or_default();
                    if let Some(position) = self.provider_position(provider) {
                        self.agents[index].agent.position = position;
                    }
                    let h = self.header_for(index);
                    let duration_ticks =
                        (duration_hours / self.full_tick_hours).round().max(0.0) as u64;
                    out.push(
                        StreamKind::Intents,
                        &h,
                        &Intent::Use {
                            npc: npc.clone(),
                            provider: provider.clone(),
                            action: action.clone(),
                            duration_ticks,
                            player_queued: *player_queued,
                        },
                    );
                    self.meta[index].current_intent = Some((h.id.clone(), IntentKind::Use));
                    let social = self.vocabulary.intern("social");
                    if tags.contains(&social) {
                        let with: Vec<String> = self
                            .running_at(provider)
                            .into_iter()
                            .filter(|&other| other != index)
                            .map(|other| self.agents[other].agent.id.clone())
                            .collect();
                        if !with.is_empty() {
                            let h = self.header_for(index);
                            let witnessed = self.presence.player_in(provider_room);
                            let narration = witnessed.then(|| {
                                let request = self.narration_request(
                                    &h.id,
                                    index,
                                    &with[0],
                                    provider_room,
                                    action,
                                );
                                let placeholder = self.narrator.narrate_now(&request);
                                out.llm.push(LlmRequest::Narration(request));
                                placeholder
                            });
                            out.push(
                                StreamKind::Intents,
                                &h,
                                &Intent::Social {
                                    npc: npc.clone(),
                                    with,
                                    action: action.clone(),
                                    provider: provider.clone(),
                                    witnessed,
                                    narration,
                                },
                            );
                        }
                    }
                    let h = self.header_for(index);
                    let room = room_key(&self.room_names, provider_room).to_owned();
                    out.push(
                        StreamKind::NpcEvents,
                        &h,
                        &NpcEvent::ActionStarted {
                            npc: npc.clone(),
                            provider: provider.clone(),
                            action: action.clone(),
                            utility: (utility * 10_000.0).round() / 10_000.0,
                            room,
                        },
                    );
                }
                SimEvent::ActionCompleted { provider, action } => {
                    self.meta[index].current_intent = None;
                    self.publish(
                        index,
                        StreamKind::NpcEvents,
                        &NpcEvent::ActionCompleted {
                            npc: npc.clone(),
                            provider: provider.clone(),
                            action: action.clone(),
                        },
                        out,
                    );
                }
                SimEvent::ActionPreempted {
                    provider,
                    action,
                    by_provider,
                    by_action,
                } => {
                    self.cancel(index, "preempted", out);
                    self.publish(
                        index,
                        StreamKind::NpcEvents,
                        &NpcEvent::ActionPreempted {
                            npc: npc.clone(),
                            provider: provider.clone(),
                            action: action.clone(),
                            by_provider: by_provider.clone(),
                            by_action: by_action.clone(),
                        },
                        out,
                    );
                }
                SimEvent::ActionInterrupted {
                    provider,
                    action,
                    by_set,
                    by_action,
                } => {
                    self.cancel(index, "interrupted", out);
                    self.publish(
                        index,
                        StreamKind::NpcEvents,
                        &NpcEvent::ActionInterrupted {
                            npc: npc.clone(),
                            provider: provider.clone(),
                            action: action.clone(),
                            by_set: by_set.clone(),
                            by_action: by_action.clone(),
                        },
                        out,
                    );
                }
                SimEvent::ReactiveStarted { set, action, .. } => {
                    let h = self.publish(
                        index,
                        StreamKind::Intents,
                        &Intent::Reactive {
                            npc: npc.clone(),
                            set: set.clone(),
                            action: action.clone(),
                        },
                        out,
                    );
                    self.meta[index].current_intent = Some((h.id.clone(), IntentKind::Reactive));
                    self.publish(
                        index,
                        StreamKind::Intents,
                        &Intent::Bark {
                            npc: npc.clone(),
                            text: bark_for(action),
                        },
                        out,
                    );
                }
                SimEvent::ReactiveEnded { set, action } => {
                    self.meta[index].current_intent = None;
                    self.publish(
                        index,
                        StreamKind::NpcEvents,
                        &NpcEvent::ReactiveEnded {
                            npc: npc.clone(),
                            set: set.clone(),
                            action: action.clone(),
                        },
                        out,
                    );
                }
                SimEvent::QueueEntryDropped {
                    provider,
                    action,
                    reason,
                } => {
                    self.publish(
                        index,
                        StreamKind::NpcEvents,
                        &NpcEvent::QueueEntryDropped {
                            npc: npc.clone(),
                            provider: provider.clone(),
                            action: action.clone(),
                            reason: (*reason).to_owned(),
                        },
                        out,
                    );
                }
                SimEvent::CommitmentExpired { forbid_tags, .. } => {
                    let forbid_tags = forbid_tags
                        .iter()
                        .map(|t| self.vocabulary.name(*t).to_owned())
                        .collect();
                    self.publish(
                        index,
                        StreamKind::NpcEvents,
                        &NpcEvent::CommitmentExpired {
                            npc: npc.clone(),
                            forbid_tags,
                        },
                        out,
                    );
                }
                SimEvent::LevelChanged { from, to } => {
                    self.publish(
                        index,
                        StreamKind::NpcEvents,
                        &NpcEvent::LevelChanged {
                            npc: npc.clone(),
                            from: from.as_str().into(),
                            to: to.as_str().into(),
                        },
                        out,
                    );
                }
                SimEvent::AggregatedEventsApplied { count } => {
                    self.publish(
                        index,
                        StreamKind::NpcEvents,
                        &NpcEvent::AggregatedEventsApplied {
                            npc: npc.clone(),
                            count: *count,
                        },
                        out,
                    );
                }
                SimEvent::Bark { text, .. } => {
                    self.publish(
                        index,
                        StreamKind::Intents,
                        &Intent::Bark {
                            npc: npc.clone(),
                            text: text.clone(),
                        },
                        out,
                    );
                }
                SimEvent::GoalCreated { .. }
                | SimEvent::GoalCompleted { .. }
                | SimEvent::GoalFailed { .. }
                | SimEvent::GoalBlocked { .. } => {
                    if let Some((change, description, body)) = goal_message(&npc, event) {
                        self.publish(index, StreamKind::NpcEvents, &body, out);
                        // The detector hears of it too (a blocked goal is a story).
                        let place = self.social_place(index);
                        let now_hours = self.now_hours();
                        self.social
                            .goal_changed(&npc, &description, change, &place, now_hours);
                    }
                }
                SimEvent::ActivityChanged { from, to } => {
                    let name = |activity: &Option<_>| {
                        activity.map(|symbol| self.vocabulary.name(symbol).to_owned())
                    };
                    let body = NpcEvent::ActivityChanged {
                        npc: npc.clone(),
                        from: name(from),
                        to: name(to),
                    };
                    self.publish(index, StreamKind::NpcEvents, &body, out);
                }
                // Events the core adds over time (affect bursts, reactive layers…) go out
                // under their own snake_case name until they get a dedicated payload.
                other => {
                    self.publish(
                        index,
                        StreamKind::NpcEvents,
                        &NpcEvent::CoreEvent {
                            npc: npc.clone(),
                            event: core_event_name(other),
                        },
                        out,
                    );
                }
            }
        }
    }

    /// Cancels the current intent first (a `cancel` naming its id, and `intent_cancelled`).
    fn cancel(&mut self, index: usize, reason: &str, out: &mut ZoneOutput) {
        let Some((cancelled, kind)) = self.meta[index].current_intent.take() else {
            return;
        };
        let npc = self.agents[index].agent.id.clone();
        self.publish(
            index,
            StreamKind::Intents,
            &Intent::Cancel {
                npc: npc.clone(),
                cancelled,
                reason: reason.to_owned(),
            },
            out,
        );
        self.publish(
            index,
            StreamKind::NpcEvents,
            &NpcEvent::IntentCancelled {
                npc,
                cancelled_intent_type: kind.as_str().to_owned(),
                reason: reason.to_owned(),
            },
            out,
        );
    }

    /// How many NPCs each tier holds (Background, Nearby, Active).
    pub fn tier_counts(&mut self) -> Vec<(Tier, usize)> {
        let meta = &self.meta;
        self.derived
            .tiers
            .get_or_insert_with(|| {
                [Tier::Background, Tier::Nearby, Tier::Active]
                    .into_iter()
                    .map(|tier| (tier, meta.iter().filter(|m| m.tier.tier == tier).count()))
                    .collect()
            })
            .clone()
    }

    /// The ids of NPCs held back by isolation.
    pub fn held_npcs(&self) -> BTreeSet<String> {
        self.agents
            .iter()
            .zip(&self.meta)
            .filter(|(a, m)| self.isolation.is_held(&a.agent.id, m.archetype.as_deref()))
            .map(|(a, _)| a.agent.id.clone())
            .collect()
    }
}

/// The snake_case name of a core event variant (`LashOut { .. }` → `lash_out`).
fn core_event_name(event: &SimEvent) -> String {
    let debug = format!("{event:?}");
    let variant: String = debug
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let mut name = String::with_capacity(variant.len() + 4);
    for (i, c) in variant.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                name.push('_');
            }
            name.push(c.to_ascii_lowercase());
        } else {
            name.push(c);
        }
    }
    name
}

/// A line for a reactive action (the deterministic fallback of the narration seam).
pub fn bark_for(action: &str) -> String {
    match action {
        "flee" => "Run! Run for your lives!".into(),
        "call_the_guard" => "Guards! Guards!".into(),
        "gawk" => "What's going on over there?".into(),
        other => format!("*{}*", other.replace('_', " ")),
    }
}

impl ZoneOutput {
    /// Appends an envelope for `body` on `stream`.
    pub fn push<T: serde::Serialize>(&mut self, stream: StreamKind, header: &Header, body: &T) {
        self.messages.push((stream, to_envelope(header, body)));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::world_file::embedded_village;

    pub(crate) fn village() -> Zone {
        village_named("village")
    }

    /// The village as zone `name`.
    fn village_named(name: &str) -> Zone {
        let mut world = embedded_village().expect("village");
        world.zone = name.to_owned();
        // The governor's wall-clock budget is out of the way here: these tests are about the
        // engine's determinism, and an unoptimised test build can run over 5 ms a tick.
        let mut config = ZoneConfig::default();
        config.governor.tick_budget_ms_soft = 60_000.0;
        config.governor.tick_budget_ms_hard = 60_000.0;
        Zone::new(
            &world,
            &ProfileLibrary::embedded().expect("profiles"),
            &SetLibrary::embedded().expect("sets"),
            config,
            IsolationState::default(),
        )
        .expect("zone")
    }

    fn advance(zone: &mut Zone, ticks: u64) -> Vec<(StreamKind, String)> {
        let mut out = ZoneOutput::default();
        let target = zone.game_time + ticks;
        while zone.game_time < target {
            let message = WorldMessage {
                header: header("t", "village", (zone.game_time + 60).min(target)),
                event: WorldEvent::TimeAdvanced,
            };
            zone.apply(&message, &mut out);
        }
        out.messages
    }

    fn enter(zone: &mut Zone, room: &str) {
        let message = WorldMessage {
            header: header("p", "village", zone.game_time),
            event: WorldEvent::PlayerEntered {
                player: "ann".into(),
                room: room.into(),
            },
        };
        zone.apply(&message, &mut ZoneOutput::default());
    }

    #[test]
    fn a_resident_walks_into_another_zone_with_its_needs_and_rumours_and_arrives_once() {
        use geppetto_core::social::{Gossip, GossipIntent, RumourTopic};
        let mut here = village();
        let mut there = village_named("hamlet");
        there.despawn("vex", "despawned", &mut ZoneOutput::default());
        let rumour = Gossip {
            subject: "bjorn".into(),
            kind: RumourTopic::Person,
            intent: GossipIntent::Defame,
            about_person: true,
            confidence: 0.9,
            origin_event: "village:theft:1".into(),
            depth: 0,
            holder: "vex".into(),
        };
        assert!(here.social.fabric.learn("vex", rumour.clone()));
        let index = here.npc_index("vex").expect("vex");
        let first = &mut here.agents[index].agent.considerations[0];
        let level = first.min + 0.37 * (first.max - first.min);
        first.value = level;
        let need = here
            .vocabulary
            .name(here.agents[index].agent.considerations[0].name)
            .to_owned();
        let transfer = |npc: &str| WorldMessage {
            header: header(format!("move-{npc}"), "village", here_time()),
            event: WorldEvent::NpcTransfer {
                npc: npc.into(),
                to_zone: "hamlet".into(),
                room: "woods".into(),
            },
        };
        fn here_time() -> u64 {
            420
        }

        let mut out = ZoneOutput::default();
        here.apply(&transfer("vex"), &mut out);
        assert!(out.refused.is_empty(), "{:?}", out.refused);
        assert!(here.npc_index("vex").is_none(), "vex left the village");
        assert!(
            out.messages.iter().any(|(s, m)| *s == StreamKind::NpcEvents
                && m.contains("\"type\":\"npc_departed\"")
                && m.contains("\"to_zone\":\"hamlet\"")),
            "the departure is an NPC event"
        );
        assert_eq!(out.handovers.len(), 1);
        let (target, body) = &out.handovers[0];
        assert_eq!(target, "hamlet");
        let arrival = crate::bus::envelope::parse_world(body).expect("an arrival parses");
        assert_eq!(arrival.header.zone, "hamlet");
        assert_eq!(
            arrival.header.id,
            format!("village:vex:{}:handover", here.tick)
        );

        let mut arrived = ZoneOutput::default();
        there.apply(&arrival, &mut arrived);
        assert!(arrived.refused.is_empty(), "{:?}", arrived.refused);
        let index = there.npc_index("vex").expect("vex is in the hamlet");
        let symbol = there.vocabulary.lookup(&need).expect("need");
        let value = there.agents[index]
            .agent
            .considerations
            .iter()
            .find(|c| c.name == symbol)
            .map(|c| c.value);
        assert_eq!(value, Some(level), "the need travelled");
        assert_eq!(
            there.social.fabric.rumours("vex"),
            &[rumour],
            "the rumour travelled: vex can tell it here"
        );
        assert!(
            arrived
                .messages
                .iter()
                .any(|(s, m)| *s == StreamKind::NpcEvents
                    && m.contains("\"type\":\"npc_arrived\"")
                    && m.contains("\"from_zone\":\"village\"")
                    && m.contains("\"room\":\"woods\""))
        );

        // A zone where an NPC of that id already lives refuses the traveller.
        let mut crowded = ZoneOutput::default();
        village_named("crowded").apply(&arrival, &mut crowded);
        assert!(
            crowded
                .refused
                .iter()
                .any(|r| r.reason.contains("already lives")),
            "{:?}",
            crowded.refused
        );

        // The same handover again (the village replaying its log after a failover): ignored.
        let npcs = there.agents.len();
        let mut again = ZoneOutput::default();
        there.apply(&arrival, &mut again);
        assert_eq!(there.agents.len(), npcs);
        assert!(again.messages.is_empty() && again.refused.is_empty());

        // A snapshot of the hamlet keeps the traveller, needs and all.
        let restored = Zone::restored(village_named("hamlet"), there.capture()).expect("restores");
        let index = restored.npc_index("vex").expect("vex restored");
        assert_eq!(
            restored.agents[index]
                .agent
                .considerations
                .iter()
                .find(|c| c.name == symbol)
                .map(|c| c.value),
            Some(level)
        );

        // An inline NPC of the world file cannot travel; an unknown one is refused.
        for (npc, reason) in [("bram", "inline NPC"), ("nobody", "unknown NPC")] {
            let mut refused = ZoneOutput::default();
            here.apply(&transfer(npc), &mut refused);
            assert!(refused.handovers.is_empty());
            assert!(
                refused.refused.iter().any(|r| r.reason.contains(reason)),
                "{npc}: {:?}",
                refused.refused
            );
        }
    }

    #[test]
    fn a_village_morning_produces_use_intents_and_is_deterministic() {
        let mut a = village();
        enter(&mut a, "square");
        let first = advance(&mut a, 120);
        let mut b = village();
        enter(&mut b, "square");
        let second = advance(&mut b, 120);
        let strip = |m: &Vec<(StreamKind, String)>| {
            m.iter()
                .filter(|(s, _)| *s != StreamKind::World)
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&first), strip(&second));
        let uses = first
            .iter()
            .filter(|(s, m)| *s == StreamKind::Intents && m.contains("\"type\":\"use\""))
            .count();
        assert!(uses >= 5, "{uses} use intents");
        let ids: BTreeSet<&str> = first
            .iter()
            .filter_map(|(_, m)| m.split("\"id\":\"").nth(1)?.split('"').next())
            .collect();
        assert_eq!(ids.len(), first.len(), "ids are unique");
    }

    #[test]
    fn a_social_event_stirs_the_targets_temper() {
        let anger_after = |insulted: bool| {
            let mut zone = village();
            enter(&mut zone, "lane");
            if insulted {
                let message = WorldMessage {
                    header: header("s", "village", zone.game_time),
                    event: WorldEvent::SocialEvent {
                        kind: "insult".into(),
                        source: "stranger".into(),
                        target: "roderick".into(),
                        deltas: BTreeMap::new(),
                        mood: None,
                        about: None,
                    },
                };
                zone.apply(&message, &mut ZoneOutput::default());
            }
            advance(&mut zone, 2);
            let index = zone.npc_index("roderick").expect("roderick");
            let affect = zone.agents[index]
                .affect
                .as_ref()
                .expect("a guard has a temper");
            let anger = affect.model.state_index("anger").expect("anger");
            affect.state.values[anger]
        };
        let calm = anger_after(false);
        let insulted = anger_after(true);
        assert!(
            insulted > calm,
            "anger {insulted} after an insult, {calm} without"
        );
    }

    #[test]
    fn a_theft_gives_a_trader_a_reactive_goal_that_sends_them_to_the_watch() {
        let mut zone = village();
        enter(&mut zone, "market");
        advance(&mut zone, 60);
        let theft = |zone: &mut Zone| {
            let message = WorldMessage {
                header: header("s", "village", zone.game_time),
                event: WorldEvent::SocialEvent {
                    kind: "theft".into(),
                    source: "vex".into(),
                    target: "piet".into(),
                    deltas: BTreeMap::new(),
                    mood: None,
                    about: None,
                },
            };
            let mut out = ZoneOutput::default();
            zone.apply(&message, &mut out);
            out.messages
        };
        let first = theft(&mut zone);
        assert!(
            first
                .iter()
                .any(|(_, m)| m.contains("\"type\":\"goal_created\"")
                    && m.contains("\"description\":\"report the theft by vex\"")),
            "{first:?}"
        );
        let piet = zone.npc_index("piet").expect("piet");
        let goals = |zone: &Zone| {
            zone.agents[piet]
                .goals
                .as_ref()
                .expect("an archetype NPC has goals")
                .goals
                .iter()
                .filter(|g| g.category == geppetto_core::life::goals::GoalCategory::Reactive)
                .map(|g| (g.description.clone(), g.target.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            goals(&zone),
            vec![("report the theft by vex".to_owned(), Some("vex".to_owned()))]
        );
        let brain = crate::brain::Brain::of(&zone, "piet", 3).expect("piet");
        let brain = serde_json::to_value(&brain).expect("json");
        let shown = brain["goals"].as_array().expect("goals");
        let goal = shown
            .iter()
            .find(|g| g["description"] == "report the theft by vex")
            .expect("the reactive goal is shown");
        assert_eq!(goal["category"], "reactive");
        assert_eq!(
            goal["predicate"],
            serde_json::json!({"predicate_type": "has_fact", "fact": "theft_reported"}),
            "goals are shown as records: {goal}"
        );
        let again = theft(&mut zone);
        assert!(!again.iter().any(|(_, m)| m.contains("goal_created")));
        assert_eq!(goals(&zone).len(), 1, "the same theft is one goal");
        let day = advance(&mut zone, 6 * 60);
        let reported = day
            .iter()
            .any(|(_, m)| m.contains("\"npc\":\"piet\"") && m.contains("report_a_theft"));
        assert!(reported, "piet goes to the watch");
        assert!(goals(&zone).is_empty(), "and the goal is met");
    }

    fn send(zone: &mut Zone, event: WorldEvent) -> Vec<(StreamKind, String)> {
        let now = zone.game_time;
        send_at(zone, now, event)
    }

    fn send_at(zone: &mut Zone, game_time: u64, event: WorldEvent) -> Vec<(StreamKind, String)> {
        let message = WorldMessage {
            header: header("e", "village", game_time),
            event,
        };
        let mut out = ZoneOutput::default();
        zone.apply(&message, &mut out);
        out.messages
    }

    fn social(kind: &str, target: &str, deltas: &[(&str, f64)], mood: Option<f64>) -> WorldEvent {
        WorldEvent::SocialEvent {
            kind: kind.into(),
            source: "stranger".into(),
            target: target.into(),
            deltas: deltas.iter().map(|(n, d)| ((*n).to_owned(), *d)).collect(),
            mood,
            about: None,
        }
    }

    #[test]
    fn social_events_are_remembered_by_archetype_and_external_need_changes_are_damped() {
        let mut zone = village();
        advance(&mut zone, 60);
        let last_memory = |zone: &Zone, npc: &str| {
            let index = zone.npc_index(npc).expect("npc");
            let (_, wellbeing) = zone.agents[index].wellbeing.as_ref().expect("wellbeing");
            wellbeing.memories.last().map(|m| m.mood_delta)
        };
        send(&mut zone, social("insult", "piet", &[], None));
        assert_eq!(last_memory(&zone, "piet"), Some(-0.3), "villager default");
        send(&mut zone, social("insult", "roderick", &[], None));
        assert_eq!(
            last_memory(&zone, "roderick"),
            Some(-0.1),
            "the guard's own"
        );
        send(&mut zone, social("theft", "roderick", &[], None));
        assert_eq!(
            last_memory(&zone, "roderick"),
            Some(-0.6),
            "guard overrides theft too"
        );
        send(&mut zone, social("gift", "sela", &[], Some(0.7)));
        assert_eq!(
            last_memory(&zone, "sela"),
            Some(0.7),
            "the event's own mood wins"
        );
        let memories = |zone: &Zone, npc: &str| {
            let index = zone.npc_index(npc).expect("npc");
            zone.agents[index]
                .wellbeing
                .as_ref()
                .expect("wellbeing")
                .1
                .memories
                .len()
        };
        let before = memories(&zone, "hilda");
        send(&mut zone, social("wave", "hilda", &[], None));
        assert_eq!(
            memories(&zone, "hilda"),
            before,
            "kinds not named leave mood alone"
        );

        // The remembered insult lowers mood against an identical village without it.
        let mut calm = village();
        enter(&mut calm, "market");
        advance(&mut calm, 60);
        let mut insulted = village();
        enter(&mut insulted, "market");
        advance(&mut insulted, 60);
        send(&mut insulted, social("insult", "marla", &[], None));
        advance(&mut calm, 1);
        advance(&mut insulted, 1);
        let mood = |zone: &Zone| {
            let index = zone.npc_index("marla").expect("marla");
            zone.agents[index]
                .wellbeing
                .as_ref()
                .expect("wellbeing")
                .1
                .mood
        };
        assert!(
            mood(&insulted) < mood(&calm),
            "{} vs {}",
            mood(&insulted),
            mood(&calm)
        );

        // A blow to comfort is damped to a quarter of the range in one event.
        let ulla = zone.npc_index("ulla").expect("ulla");
        let comfort = zone.vocabulary.intern("COMFORT");
        let value = |zone: &Zone| {
            zone.agents[ulla]
                .agent
                .consideration(comfort)
                .expect("comfort")
                .value
        };
        let before = value(&zone);
        send(
            &mut zone,
            social("insult", "ulla", &[("COMFORT", -1.0)], None),
        );
        let drop = before - value(&zone);
        assert!(
            (drop - 0.25f64.min(before)).abs() < 1e-9,
            "damped: {before} -> {}",
            value(&zone)
        );
    }

    #[test]
    fn a_schedule_override_holds_until_it_expires_and_activity_changes_are_events() {
        let mut zone = village();
        enter(&mut zone, "market");
        advance(&mut zone, 10 * 60);
        let activities = |messages: &[(StreamKind, String)]| {
            messages
                .iter()
                .filter(|(_, m)| {
                    m.contains("\"type\":\"activity_changed\"") && m.contains("\"npc\":\"piet\"")
                })
                .map(|(_, m)| {
                    let value: serde_json::Value = serde_json::from_str(m).expect("json");
                    value["to"].as_str().unwrap_or("none").to_owned()
                })
                .collect::<Vec<_>>()
        };
        let summons = WorldEvent::ScheduleOverride {
            npc: "piet".into(),
            activity: "worship".into(),
            location: Some("chapel".into()),
            tags: vec!["rest".into()],
            hours: 2.0,
        };
        send(&mut zone, summons);
        let first_hour = advance(&mut zone, 60);
        assert_eq!(activities(&first_hour), vec!["worship"]);
        let later = advance(&mut zone, 2 * 60);
        let after = activities(&later);
        assert_eq!(after.len(), 1, "back to the schedule once: {after:?}");
        assert_ne!(after[0], "worship");
    }

    #[test]
    fn a_time_jump_beyond_the_tick_bound_is_caught_up_analytically() {
        let mut zone = village();
        enter(&mut zone, "square");
        advance(&mut zone, 60);
        let start = zone.game_time;
        let day = (24.0 / zone.full_tick_hours()) as u64;
        let caught_up = |messages: &[(StreamKind, String)]| {
            messages
                .iter()
                .filter(|(_, m)| m.contains("\"type\":\"caught_up\""))
                .map(|(_, m)| serde_json::from_str::<serde_json::Value>(m).expect("json"))
                .collect::<Vec<_>>()
        };
        // Two days and ninety ticks: all but the last 60 ticks are caught up in one step.
        let target = start + 2 * day + 90;
        let messages = send_at(&mut zone, target, WorldEvent::TimeAdvanced);
        assert_eq!(zone.game_time, target);
        let reports = caught_up(&messages);
        assert_eq!(reports.len(), zone.agents.len(), "every NPC reports");
        for report in &reports {
            assert_eq!(report["closed_form_days"], 2, "{report}");
            assert_eq!(report["hours"].as_f64(), Some(48.5), "{report}");
        }
        assert!(
            messages.iter().any(|(_, m)| m.contains("\"type\":\"use\"")),
            "the last ticks run as usual"
        );
        // A jump of ten days is capped at a week.
        let target = zone.game_time + 10 * day + 60;
        let reports = caught_up(&send_at(&mut zone, target, WorldEvent::TimeAdvanced));
        assert_eq!(reports[0]["hours"].as_f64(), Some(168.0));
        assert_eq!(reports[0]["closed_form_days"], 7);
    }

    #[test]
    fn a_said_line_asks_perception_about_the_npcs_of_its_room_unless_replaying() {
        let mut zone = village();
        let said = || WorldEvent::Say {
            speaker: "p1".into(),
            room: Some("forge".into()),
            text: "Bram, lend me your hammer".into(),
            addressee: Some("bram".into()),
        };
        let message = WorldMessage {
            header: header("say-1", "village", zone.game_time),
            event: said(),
        };
        let mut out = ZoneOutput::default();
        zone.apply(&message, &mut out);
        let [LlmRequest::Perception(request)] = &out.llm[..] else {
            panic!("one perception request: {:?}", out.llm);
        };
        assert_eq!(request.utterance_id, "say-1");
        assert_eq!(request.context.addressee.as_deref(), Some("bram"));
        let forge = zone.rooms.room("forge").expect("forge");
        let expected: Vec<&str> = zone
            .agents
            .iter()
            .zip(&zone.meta)
            .filter(|(_, meta)| meta.room == forge)
            .map(|(agent, _)| agent.agent.id.as_str())
            .collect();
        let named: Vec<&str> = request.context.npcs.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(named, expected);
        assert!(named.contains(&"bram"));

        zone.perceive_said = false;
        let mut out = ZoneOutput::default();
        zone.apply(&message, &mut out);
        assert!(out.llm.is_empty(), "a replayed say is not perceived again");
    }

    #[test]
    fn a_theft_in_the_market_is_seen_talked_about_and_becomes_a_story() {
        let mut zone = village();
        enter(&mut zone, "market");
        advance(&mut zone, 60);
        let market = zone.rooms.room("market").expect("market");
        let piet = zone.npc_index("piet").expect("piet");
        zone.move_npc(piet, market);
        let witnesses: Vec<String> = (0..zone.agents.len())
            .filter(|&i| zone.meta[i].room == market && zone.agents[i].agent.id != "vex")
            .map(|i| zone.agents[i].agent.id.clone())
            .collect();
        assert!(witnesses.len() >= 2, "{witnesses:?}");
        send(&mut zone, social("theft", "piet", &[], None));
        // The thief is "stranger" in `social`; the witnesses now distrust them first-hand.
        for witness in &witnesses {
            let trust = zone
                .social
                .fabric
                .relationships
                .get(witness, "stranger")
                .trust;
            assert!(trust < 0.5, "{witness} trusts the thief {trust}");
        }
        let brain = crate::brain::Brain::of(&zone, &witnesses[0], 3).expect("witness");
        let text = brain.to_string();
        assert!(
            text.contains("rumour: threat about stranger"),
            "the brain view shows what the witness knows: {text}"
        );
        let day = advance(&mut zone, 12 * 60);
        let of = |kind: &str| {
            day.iter()
                .filter(|(_, m)| m.contains(&format!("\"type\":\"{kind}\"")))
                .map(|(stream, m)| {
                    (
                        *stream,
                        serde_json::from_str::<serde_json::Value>(m).expect("json"),
                    )
                })
                .collect::<Vec<_>>()
        };
        let interactions = of("interaction");
        assert!(!interactions.is_empty(), "villagers meet");
        assert!(
            interactions
                .iter()
                .all(|(s, _)| *s == StreamKind::NpcEvents)
        );
        for (_, m) in &interactions {
            assert_eq!(
                m["witnessed"] == true,
                m.get("narration").is_some(),
                "narrated exactly when witnessed: {m}"
            );
        }
        let rumours = of("rumour_heard");
        assert!(
            rumours.iter().any(|(_, m)| m["subject"] == "stranger"),
            "the theft is talked about"
        );
        let signals = of("story_signal");
        assert!(!signals.is_empty(), "the detector raises signals");
        assert!(signals.iter().all(|(s, m)| {
            *s == StreamKind::Story
                && m["importance"]
                    .as_f64()
                    .is_some_and(|i| (0.0..=1.0).contains(&i))
                && m["expires_at_hours"].as_f64().is_some()
        }));
    }

    #[test]
    fn a_crowd_idle_at_once_decides_at_most_the_cap_per_tick() {
        let started_per_tick = |cap: usize| {
            let world = embedded_village().expect("village");
            let mut config = ZoneConfig::default();
            config.governor.tick_budget_ms_soft = 60_000.0;
            config.governor.tick_budget_ms_hard = 60_000.0;
            config.tick.max_decisions_per_tick = cap;
            let mut zone = Zone::new(
                &world,
                &ProfileLibrary::embedded().expect("profiles"),
                &SetLibrary::embedded().expect("sets"),
                config,
                IsolationState::default(),
            )
            .expect("zone");
            for room in ["square", "forge", "market", "farm", "tavern"] {
                enter(&mut zone, room);
            }
            (0..5)
                .map(|_| {
                    advance(&mut zone, 1)
                        .iter()
                        .filter(|(_, m)| m.contains("\"type\":\"action_started\""))
                        .count()
                })
                .collect::<Vec<_>>()
        };
        let free = started_per_tick(1000);
        assert!(free[0] > 3, "many start at once without a cap: {free:?}");
        let capped = started_per_tick(3);
        assert!(capped.iter().all(|&n| n <= 3), "{capped:?}");
        let later: usize = capped[1..].iter().sum();
        assert!(
            later >= 4,
            "the rest follow on the next ticks: {capped:?} (free: {free:?})"
        );
    }

    #[test]
    fn each_npc_keeps_its_recent_decisions_bounded_and_in_order() {
        let mut zone = village();
        enter(&mut zone, "square");
        let day = advance(&mut zone, 24 * 60);
        let bram = zone.npc_index("bram").expect("bram");
        let trace = &zone.meta[bram].decisions;
        let started = day
            .iter()
            .filter(|(_, m)| {
                m.contains("\"type\":\"action_started\"") && m.contains("\"npc\":\"bram\"")
            })
            .count();
        assert_eq!(trace.len(), started.min(32), "a full day keeps the last 32");
        assert!(
            trace
                .iter()
                .zip(trace.iter().skip(1))
                .all(|(a, b)| a.tick <= b.tick)
        );
        let last = day
            .iter()
            .rev()
            .find(|(_, m)| {
                m.contains("\"type\":\"action_started\"") && m.contains("\"npc\":\"bram\"")
            })
            .map(|(_, m)| serde_json::from_str::<serde_json::Value>(m).expect("json"))
            .expect("bram did something");
        let newest = trace.back().expect("a decision");
        assert_eq!(last["action"], newest.action.as_str());
        assert_eq!(last["provider"], newest.provider.as_str());
    }

    #[test]
    fn the_status_follows_players_and_npcs_as_they_come_and_go() {
        let mut zone = village();
        let npcs = zone.agents.len();
        let total = |status: &ZoneStatus| status.tiers.iter().map(|(_, n)| n).sum::<usize>();
        let status = zone.status();
        assert!(status.rooms_with_players.is_empty());
        assert_eq!(total(&status), npcs);
        enter(&mut zone, "market");
        assert_eq!(
            *zone.status().rooms_with_players,
            BTreeSet::from(["market".to_owned()])
        );
        advance(&mut zone, 1);
        let active = |zone: &mut Zone| {
            let status = zone.status();
            status
                .tiers
                .iter()
                .find(|(t, _)| *t == Tier::Active)
                .map(|(_, n)| *n)
        };
        assert!(
            active(&mut zone).is_some_and(|n| n > 0),
            "{:?}",
            zone.status().tiers
        );
        let gone = zone.agents[0].agent.id.clone();
        let mut out = ZoneOutput::default();
        zone.apply(
            &WorldMessage {
                header: header("d", "village", zone.game_time),
                event: WorldEvent::NpcDespawned { npc: gone },
            },
            &mut out,
        );
        assert_eq!(total(&zone.status()), npcs - 1);
        zone.apply(
            &WorldMessage {
                header: header("l", "village", zone.game_time),
                event: WorldEvent::PlayerLeft {
                    player: "ann".into(),
                },
            },
            &mut out,
        );
        assert!(zone.status().rooms_with_players.is_empty());
        // Its tiers fall back after the hysteresis, and the counts follow.
        advance(&mut zone, 10);
        assert_eq!(active(&mut zone), Some(0), "{:?}", zone.status().tiers);
    }

    #[test]
    fn tiers_follow_the_player_with_hysteresis() {
        let mut zone = village();
        assert!(zone.tier_counts().contains(&(Tier::Active, 0)));
        enter(&mut zone, "woods");
        advance(&mut zone, 1);
        let wren = zone.npc_index("wren").expect("wren");
        let bram = zone.npc_index("bram").expect("bram");
        assert_eq!(zone.meta[wren].tier.tier, Tier::Active);
        assert_eq!(zone.meta[bram].tier.tier, Tier::Background);
        let woods = zone.rooms.room("woods").expect("room");
        zone.move_npc(wren, woods);
        enter(&mut zone, "square");
        advance(&mut zone, 2);
        assert_eq!(
            zone.meta[wren].tier.tier,
            Tier::Active,
            "hysteresis holds it"
        );
        advance(&mut zone, 1);
        assert_ne!(zone.meta[wren].tier.tier, Tier::Active);
    }
}
