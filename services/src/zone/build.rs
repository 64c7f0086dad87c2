//! Building a zone: [`Zone::new`]/[`Zone::over`] from a checked world file (simulators, rooms,
//! providers, weather, NPCs and archetype residents), and adding one NPC or resident. What
//! happens to an NPC once it lives in the zone is elsewhere (`apply`, `tick`, `travel`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use thin_vec::ThinVec;

use geppetto_core::archetype::NpcRecord;
use geppetto_core::decision::consideration::BehaviourSharing;
use geppetto_core::decision::world::{Context, World};
use geppetto_core::life::action::DetailLevel;
use geppetto_core::life::catch_up::CatchUpCache;
use geppetto_core::life::goal_registry::GoalPredicateRegistry;
use geppetto_core::life::simulator::{AffectLayer, ReactiveLayer, SimulatedAgent, Simulator};
use geppetto_core::rng::stable_hash;
use geppetto_core::vocabulary::Vocabulary;
use geppetto_core::wire::{self, compile};
use geppetto_core::{Decider, Profile, TuningPatch};

use super::decision_trace::ChoiceNames;
use super::game::WorldContexts;
use super::living::Restorers;
use super::llm::default_narrator;
use super::status::Derived;
use super::{
    NpcGameState, NpcMeta, NpcRecords, ProviderPlace, Zone, ZoneConfig, ZoneContent, ZoneError,
    living,
};
use crate::content::affect::load_persona;
use crate::content::archetypes::ArchetypeLibrary;
use crate::content::profiles::{DEFAULT_PROFILE, ProfileLibrary};
use crate::content::sets::SetLibrary;
use crate::content::world_file::{NpcSpec, ResidentSpec, WorldFile};
use crate::zone::governor::Governor;
use crate::zone::isolation::{Isolation, IsolationState};
use crate::zone::social_life::SocialLife;
use crate::zone::tiers::{NpcTier, Presence, RoomGraph, Tier};

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
        let (simulator, nearby_simulator) = simulators(profile, &mut vocabulary, &config)?;
        let full_tick_hours = simulator.decider().tuning().full_tick_hours;
        let completion = config.integration.completion_in(&world_file.zone);
        let (rooms, room_names) = rooms(world_file);
        let (mut world, providers) = place_providers(world_file, &rooms, &mut vocabulary)?;
        living::mark_sleep(&mut world, &mut vocabulary, &config.living);
        let weather = compile_weather(world_file, &mut vocabulary);
        let presence = Presence::new(config.tiers.clone(), &rooms);
        let social = SocialLife::new(
            &mut vocabulary,
            world_file.seed,
            config.social.clone(),
            config.story.clone(),
        );
        let contexts = WorldContexts::from_weather(world.contexts.clone());
        let content = ZoneContent {
            simulator,
            nearby_simulator,
            sets: sets.clone(),
            archetypes: BTreeMap::new(),
            weather,
            narrator: default_narrator()?,
        };
        let mut zone = Self {
            name: world_file.zone.clone(),
            content,
            seed: world_file.seed,
            governor: Governor::new(config.governor.clone()),
            isolation: Isolation::new(config.isolation.clone(), isolation),
            config,
            vocabulary,
            content_names: 0,
            goals_unannounced: false,
            world,
            rooms,
            room_names,
            providers,
            contexts,
            completion,
            agents: Vec::new(),
            meta: Vec::new(),
            presence,
            tick: 0,
            game_time: world_file.start_game_time,
            full_tick_hours,
            catch_up_cache: CatchUpCache::default(),
            goal_predicates: GoalPredicateRegistry::default(),
            social,
            records: NpcRecords::default(),
            choice_names: ChoiceNames::default(),
            archetype_names: BTreeSet::new(),
            behaviours: BehaviourSharing::default(),
            recent_ids: super::recent_ids::RecentIds::default(),
            world_fingerprint: world_file.fingerprint.clone(),
            running_by_provider: None,
            derived: Derived::default(),
            tick_durations_ms: Vec::new(),
        };
        zone.world.now_hours = zone.now_hours();
        zone.set_completion(completion);
        zone.add_content_npcs(world_file, archetypes)?;
        zone.content_names = zone.vocabulary.len();
        Ok(zone)
    }

    /// Adds the world file's NPCs and its residents (built from `archetypes` when given, else
    /// the shipped ones), and keeps the residents' homes private when `[living]` says so.
    fn add_content_npcs(
        &mut self,
        world_file: &WorldFile,
        archetypes: Option<&ArchetypeLibrary>,
    ) -> Result<(), ZoneError> {
        self.reserve_npcs(world_file.npcs.len() + world_file.residents.len());
        for (i, npc) in world_file.npcs.iter().enumerate() {
            self.add_npc(&format!("npcs[{i}]"), npc)?;
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
            self.content.archetypes = library.compile_all(&mut self.vocabulary);
        }
        for (i, resident) in world_file.residents.iter().enumerate() {
            self.add_resident(&format!("residents[{i}]"), resident)?;
        }
        if self.config.living.private_homes {
            let homes = world_file
                .residents
                .iter()
                .filter_map(|r| r.places.get("home").map(String::as_str));
            living::keep_homes_private(&mut self.world, &mut self.vocabulary, homes);
            self.derived.restorers = None;
        }
        Ok(())
    }

    /// Makes room for `additional` more NPCs at once, so a large build does not copy the NPCs
    /// it holds each time their lists grow.
    pub fn reserve_npcs(&mut self, additional: usize) {
        self.agents.reserve_exact(additional);
        self.meta.reserve_exact(additional);
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
            simulated.layers.make_mut().reactive =
                Some(self.reactive_layer(&format!("{path}.reactive_set"), set)?);
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
            .content
            .archetypes
            .get(&spec.archetype)
            .cloned()
            .ok_or_else(|| {
                let known: Vec<&str> = self.content.archetypes.keys().map(String::as_str).collect();
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
        if self.config.living.private_homes
            && let Some(home) = spec.places.get("home")
        {
            living::move_in(&mut simulated.agent, &mut self.vocabulary, home);
        }
        living::keep_sleep_to_its_hours(&mut simulated, &self.config.living);
        if let Some(set) = &archetype.spec.reactive_set {
            simulated.layers.make_mut().reactive =
                Some(self.reactive_layer(&format!("{path}.archetype.reactive_set"), set)?);
        }
        if let Some(persona) = &archetype.spec.affect_persona {
            let (_, model) = load_persona(persona, None)
                .map_err(|e| ZoneError::Spec(format!("{path}.archetype.affect_persona: {e}")))?;
            simulated.layers.make_mut().affect = Some(Box::new(AffectLayer::new(
                Arc::new(model),
                &mut self.vocabulary,
            )));
        }
        let name = spec.name.clone().unwrap_or_else(|| spec.id.clone());
        self.insert_npc(path, simulated, name, Some(spec.archetype.clone()), room)?;
        self.records
            .resident_specs
            .insert(spec.id.clone(), spec.clone());
        Ok(())
    }

    pub(super) fn reactive_layer(
        &mut self,
        path: &str,
        set: &str,
    ) -> Result<Box<ReactiveLayer>, ZoneError> {
        let loaded = self
            .content
            .sets
            .resolve(set)
            .map_err(|e| ZoneError::Spec(format!("{path}: {e}")))?;
        Ok(Box::new(ReactiveLayer::new(Arc::new(
            loaded.compile(&mut self.vocabulary),
        ))))
    }

    pub(super) fn insert_npc(
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
        if self.config.living.needs_find_their_way_back {
            let world = &self.world;
            let restorers = (self.derived.restorers).get_or_insert_with(|| Restorers::of(world));
            living::give_needs_a_way_back(&mut simulated.agent, restorers);
        }
        self.behaviours.share(&mut simulated.agent.considerations);
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
            .and_then(|name| self.content.archetypes.get(name).map(|c| (name, &c.spec)));
        self.social.join(&simulated.agent.id, profile);
        self.roster_changed();
        self.agents.insert(index, simulated);
        self.goals_unannounced = true;
        let archetype = archetype.map(|name| self.archetype_name(name));
        self.meta.insert(
            index,
            NpcMeta {
                name: name.into(),
                archetype,
                room,
                tier: NpcTier::new(tier),
                current_intent: None,
                seq: (u64::MAX, 0),
                id_hash: stable_hash(&self.agents[index].agent.id),
                decisions: ThinVec::new(),
                game: NpcGameState::default(),
            },
        );
        Ok(())
    }

    /// The zone's copy of archetype name `name`, made the first time it is asked for.
    fn archetype_name(&mut self, name: String) -> Arc<str> {
        match self.archetype_names.get(name.as_str()) {
            Some(held) => Arc::clone(held),
            None => {
                let held: Arc<str> = name.into();
                self.archetype_names.insert(Arc::clone(&held));
                held
            }
        }
    }
}

/// The zone's two simulators under `profile`: the full tick's, and the Nearby tier's, whose
/// full tick is `nearby_every_ticks` ticks long.
fn simulators(
    profile: &Profile,
    vocabulary: &mut Vocabulary,
    config: &ZoneConfig,
) -> Result<(Arc<Simulator>, Arc<Simulator>), ZoneError> {
    let decider = wire::decider_for(&TuningPatch::default(), profile, vocabulary)
        .map_err(|e| ZoneError::Spec(e.to_string()))?;
    let tuning = decider.tuning().clone();
    let weights = profile.weights_in(vocabulary);
    let effects = profile.aggregated_effects_in(vocabulary);
    let mut nearby_tuning = tuning.clone();
    nearby_tuning.full_tick_hours =
        tuning.full_tick_hours * config.tiers.nearby_every_ticks.max(1) as f64;
    let nearby = Decider::new(nearby_tuning).with_consideration_weights(weights);
    let simulator = Arc::new(Simulator::new(decider).with_aggregated_effects(effects.clone()));
    let nearby_simulator = Arc::new(Simulator::new(nearby).with_aggregated_effects(effects));
    Ok((simulator, nearby_simulator))
}

/// The world file's room graph, and each room's id and display name.
fn rooms(world_file: &WorldFile) -> (RoomGraph, Vec<(String, String)>) {
    let graph = RoomGraph::new(
        world_file
            .rooms
            .iter()
            .map(|r| (r.id.as_str(), r.neighbours.as_slice())),
    );
    let names = world_file
        .rooms
        .iter()
        .map(|r| (r.id.clone(), r.name.clone().unwrap_or_else(|| r.id.clone())))
        .collect();
    (graph, names)
}

/// The world file's providers compiled into a world, with their places by id.
fn place_providers(
    world_file: &WorldFile,
    rooms: &RoomGraph,
    vocabulary: &mut Vocabulary,
) -> Result<(World, BTreeMap<String, ProviderPlace>), ZoneError> {
    let mut providers = BTreeMap::new();
    let mut world = World::default();
    for (i, placed) in world_file.providers.iter().enumerate() {
        let provider = compile::provider(&format!("providers[{i}]"), &placed.spec, vocabulary)
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
    Ok((world, providers))
}

/// The world file's weather table: each weather's contexts, compiled.
fn compile_weather(
    world_file: &WorldFile,
    vocabulary: &mut Vocabulary,
) -> BTreeMap<String, Vec<Context>> {
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
    weather
}
