//! A zone's social life: the core's social fabric (NPCs meet, talk, trade, argue, scheme and
//! pass rumours on, choosing partners through the decision engine) and its story-signal
//! detector, run inside the zone's tick (a share of the social step every tick). This module
//! owns the glue: who takes part as what (an archetype's gossip tendency, initiative,
//! influence and faction), what NPCs see of the
//! game's hostile acts (a theft in their room becomes first-hand knowledge), the story events
//! the zone feeds the detector (goal changes), and the messages a step becomes:
//!
//! - `interaction` on `npc_events` (initiator, partner, kind, success, witnessed — with a
//!   placeholder line when a player saw it, whose narration request goes to the LLM seams);
//! - `rumour_heard` on `npc_events` (listener, teller, subject, whether it was believed);
//! - `story_signal` on `story` (type, importance, NPCs and players involved, location,
//!   context, expiry) for a quest generator.

use geppetto_core::Decider;
use geppetto_core::archetype::ArchetypeSpec;
use geppetto_core::life::simulator::SimulatedAgent;
use geppetto_core::rng::{derive_seed, stable_hash};
use geppetto_core::social::{
    FabricConfig, SocialFabric, SocialPlace, SocialProfile, SocialStep, StepAt, Whereabouts,
};
use geppetto_core::story::{
    DetectorConfig, GoalChange, StoryDetector, StoryEventKind, StorySignal,
};
use geppetto_core::vocabulary::Vocabulary;
use serde::Serialize;

/// The game's social events NPCs who see them take as hostile acts by the source (default
/// theft, assault, threat, insult): each NPC in the target's room but the source learns it
/// first-hand.
pub const DEFAULT_HOSTILE_ACTS: [&str; 4] = ["theft", "assault", "threat", "insult"];

/// The fabric and the detector of one zone.
#[derive(Clone, Debug)]
pub struct SocialLife {
    /// Relationships, rumours, reservations.
    pub fabric: SocialFabric,
    detector: StoryDetector,
    seed: u64,
    /// Social-event kinds witnesses take as hostile acts.
    pub hostile_acts: Vec<String>,
}

/// A story signal as it goes out on the `story` stream.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename = "story_signal")]
pub struct SignalMessage {
    /// The signal's id within the zone's detector.
    pub signal: String,
    /// Its type (`rivalry_escalation`…).
    pub signal_type: &'static str,
    /// 0–1.
    pub importance: f64,
    /// NPCs involved.
    pub npcs: Vec<String>,
    /// Players present where it happened.
    pub players: Vec<String>,
    /// Where.
    pub location: String,
    /// Signal-specific data.
    pub context: std::collections::BTreeMap<String, String>,
    /// Game hour it lapses if nobody acts on it.
    pub expires_at_hours: f64,
    /// Later detections of the same situation merged into it.
    pub merged: u32,
}

impl From<StorySignal> for SignalMessage {
    fn from(signal: StorySignal) -> Self {
        Self {
            signal: signal.id,
            signal_type: signal.signal_type.as_str(),
            importance: (signal.importance * 10_000.0).round() / 10_000.0,
            npcs: signal.involved_npcs,
            players: signal.involved_players,
            location: signal.location,
            context: signal.context,
            expires_at_hours: signal.expires_at_hours,
            merged: signal.merged,
        }
    }
}

impl SocialLife {
    /// The detector (what a snapshot keeps of it).
    pub fn detector(&self) -> &StoryDetector {
        &self.detector
    }

    /// Lays saved fabric and detector state over this zone's (built from current content).
    pub fn adopt_state(&mut self, fabric: SocialFabric, detector: StoryDetector) {
        self.fabric.adopt_state(fabric);
        self.detector.adopt_state(detector);
    }

    /// An empty social life for a zone seeded `world_seed`, with the fabric's and the story
    /// detector's settings.
    pub fn new(
        vocabulary: &mut Vocabulary,
        world_seed: u64,
        fabric: FabricConfig,
        detector: DetectorConfig,
    ) -> Self {
        Self {
            fabric: SocialFabric::new(fabric, vocabulary),
            detector: StoryDetector::new(detector),
            seed: derive_seed(world_seed, stable_hash("social")),
            hostile_acts: DEFAULT_HOSTILE_ACTS.map(str::to_owned).to_vec(),
        }
    }

    /// Lets `npc` take part as its archetype says (its faction: the archetype's, else the
    /// archetype's name); an NPC without one takes the defaults.
    pub fn join(&mut self, npc: &str, archetype: Option<(&str, &ArchetypeSpec)>) {
        let profile = match archetype {
            Some((name, spec)) => SocialProfile {
                gossip_tendency: spec.gossip_tendency,
                social_initiative: spec.social_initiative,
                influence: spec.social_influence,
                faction: Some(spec.faction.clone().unwrap_or_else(|| name.to_owned())),
            },
            None => SocialProfile::default(),
        };
        self.fabric.set_profile(npc, profile);
    }

    /// The share of the social step due at zone tick `tick`: the step is spread over its
    /// `step_every_ticks` ticks (see [`SocialFabric::step_slice`]), so no tick carries a whole
    /// step.
    pub fn step(
        &mut self,
        agents: &mut [SimulatedAgent],
        whereabouts: Whereabouts<'_>,
        now_hours: f64,
        tick: u64,
        decider: &Decider,
    ) -> SocialStep {
        let step = self.fabric.step_slice(
            agents,
            whereabouts,
            now_hours,
            tick,
            derive_seed(self.seed, tick),
            decider,
        );
        for event in &step.events {
            self.detector.push(event.clone());
        }
        step
    }

    /// The NPCs at `witnesses` (indices into `agents`) see `actor` commit `act` at `place`
    /// when `act` is hostile; returns what they made of it.
    pub fn witness(
        &mut self,
        agents: &mut [SimulatedAgent],
        witnesses: &[usize],
        actor: &str,
        act: &str,
        place: &SocialPlace,
        now_hours: f64,
    ) -> SocialStep {
        let mut out = SocialStep::default();
        if !self.hostile_acts.iter().any(|a| a == act) {
            return out;
        }
        let at = &mut StepAt::new(place, now_hours, &mut out);
        for &witness in witnesses {
            self.fabric.witness(agents, witness, actor, act, at);
        }
        for event in &out.events {
            self.detector.push(event.clone());
        }
        out
    }

    /// Tells the detector a goal of `npc` changed.
    pub fn goal_changed(
        &mut self,
        npc: &str,
        description: &str,
        change: GoalChange,
        place: &SocialPlace,
        now_hours: f64,
    ) {
        self.detector.push(place.event(
            now_hours,
            StoryEventKind::Goal {
                npc: npc.to_owned(),
                description: description.to_owned(),
                change,
            },
        ));
    }

    /// The signals due at this tick (the detector runs every `every_ticks`).
    pub fn signals(&mut self, now_hours: f64) -> Vec<SignalMessage> {
        self.detector
            .tick(now_hours)
            .into_iter()
            .map(SignalMessage::from)
            .collect()
    }
}
