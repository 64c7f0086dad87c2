//! A zone's social life: the core's social fabric (NPCs meet, talk, trade, argue, scheme and
//! pass rumours on, choosing partners through the decision engine) and its story-signal
//! detector, run inside the zone's tick (a share of the social step every tick). This module
//! owns the glue: who takes part as what (an archetype's gossip tendency, initiative,
//! influence and faction), what NPCs see of the
//! game's hostile acts (a theft in their room becomes first-hand knowledge), the story events
//! the zone feeds the detector (a step's once published, goal changes) wherever it runs
//! ([`Detection`]), and the messages a step becomes:
//!
//! - `interaction` on `npc_events` (initiator, partner, kind, success, witnessed — with a
//!   placeholder line when a player saw it, whose narration request goes to the LLM seams);
//! - `rumour_heard` on `npc_events` (listener, teller, subject, whether it was believed);
//! - on `story`, for a quest generator: `story_signal` (type, importance, NPCs and players
//!   involved, location, context, expiry), then under the same `signal` id
//!   `story_signal_updated` (later evidence merged in, or a consumer took it),
//!   `story_signal_expired` (lapsed or displaced) or `story_signal_resolved` (a consumer
//!   resolved it).

use geppetto_core::Decider;
use geppetto_core::archetype::ArchetypeSpec;
use geppetto_core::life::simulator::SimulatedAgent;
use geppetto_core::rng::{derive_seed, stable_hash};
use geppetto_core::social::{
    Deed, FabricConfig, SocialFabric, SocialPlace, SocialProfile, SocialStep, StepAt, Whereabouts,
};
use geppetto_core::story::{
    DetectorConfig, GoalChange, SignalChange, SignalClaimError, StoryDetector, StoryEvent,
    StoryEventKind, StorySignal,
};
use geppetto_core::vocabulary::Vocabulary;
use serde::Serialize;

use super::detection::Detection;

/// The game's social events NPCs who see them take as hostile acts by the source (default
/// theft, assault, threat, insult): each NPC in the target's room but the source learns it
/// first-hand.
pub const DEFAULT_HOSTILE_ACTS: [&str; 4] = ["theft", "assault", "threat", "insult"];

/// The fabric and the detector of one zone.
#[derive(Debug)]
pub struct SocialLife {
    /// Relationships, rumours, reservations.
    pub fabric: SocialFabric,
    detector: Detection,
    seed: u64,
    /// Social-event kinds witnesses take as hostile acts.
    pub hostile_acts: Vec<String>,
}

/// A story signal's state as the `story` stream carries it.
#[derive(Clone, Debug, Serialize)]
pub struct SignalBody {
    /// The signal's id within the zone's detector: every message about it carries it.
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
    /// The same instant in the envelope's unit: the `game_time` it lapses at.
    pub expires_at: u64,
    /// Later detections of the same situation merged into it.
    pub merged: u32,
    /// The consumer that took it, if one did (a taken signal does not lapse).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taken_by: Option<String>,
}

impl SignalBody {
    /// `signal` on the wire, in a zone of `tick_hours` game hours a tick.
    pub fn of(signal: StorySignal, tick_hours: f64) -> Self {
        Self {
            signal: signal.id,
            signal_type: signal.signal_type.as_str(),
            importance: (signal.importance * 10_000.0).round() / 10_000.0,
            npcs: signal.involved_npcs,
            players: signal.involved_players,
            location: signal.location,
            context: signal.context,
            expires_at: (signal.expires_at_hours / tick_hours).round() as u64,
            expires_at_hours: signal.expires_at_hours,
            merged: signal.merged,
            taken_by: signal.taken_by,
        }
    }
}

/// A message of the `story` stream: what happens to a story signal, from raised to ended.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StoryMessage {
    /// A new signal.
    StorySignal(SignalBody),
    /// A live signal changed: evidence merged in, or a consumer took it.
    StorySignalUpdated(SignalBody),
    /// A signal left the live set without being resolved.
    StorySignalExpired {
        /// Its last state.
        #[serde(flatten)]
        signal: SignalBody,
        /// `lapsed` (no evidence for its time to live, nobody took it) or `displaced` (the
        /// live set was full).
        reason: &'static str,
    },
    /// A consumer resolved the signal.
    StorySignalResolved {
        /// Its last state.
        #[serde(flatten)]
        signal: SignalBody,
        /// Who resolved it.
        by: String,
        /// How, in the consumer's words (`completed`, `failed`, …).
        outcome: String,
    },
}

impl StoryMessage {
    /// The signal the message is about.
    pub fn signal(&self) -> &SignalBody {
        match self {
            Self::StorySignal(signal)
            | Self::StorySignalUpdated(signal)
            | Self::StorySignalExpired { signal, .. }
            | Self::StorySignalResolved { signal, .. } => signal,
        }
    }

    /// The message's id suffix after `{zone}:story:{signal}` (a signal's raise keeps the bare
    /// id; an update is one a game minute at most).
    pub fn id_suffix(&self, game_time: u64) -> String {
        match self {
            Self::StorySignal(_) => String::new(),
            Self::StorySignalUpdated(_) => format!(":updated:{game_time}"),
            Self::StorySignalExpired { .. } => ":expired".to_owned(),
            Self::StorySignalResolved { .. } => ":resolved".to_owned(),
        }
    }
}

impl SocialLife {
    /// A copy of the detector (what a snapshot keeps of it).
    pub fn detector_state(&self) -> StoryDetector {
        self.detector.state()
    }

    /// The detector's numbers.
    pub fn detector_config(&self) -> &DetectorConfig {
        self.detector.config()
    }

    /// Runs the story detector on a thread of its own beside the zone, which then publishes no
    /// story messages (see [`Detection`]): for a caller that reads no `story` stream.
    pub fn detect_beside(&mut self) {
        self.detector.move_beside();
    }

    /// Brings the story detector back to the zone's thread, its work done (a panic there is
    /// the caller's again).
    pub fn detect_here(&mut self) {
        self.detector.move_here();
    }

    /// Lays saved fabric and detector state over this zone's (built from current content).
    pub fn adopt_state(&mut self, fabric: SocialFabric, detector: StoryDetector) {
        self.fabric.adopt_state(fabric);
        self.detector.ask(move |own| own.adopt_state(detector));
    }

    /// Hands `events` to the detector for its next detection (a step's, once the zone has
    /// published it).
    pub fn feed(&mut self, events: Vec<StoryEvent>) {
        self.detector.feed(events);
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
            detector: Detection::Here(StoryDetector::new(detector)),
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
    /// step. Its story events are the detector's once the zone has published them
    /// ([`SocialLife::feed`]).
    pub fn step(
        &mut self,
        agents: &mut [SimulatedAgent],
        whereabouts: Whereabouts<'_>,
        now_hours: f64,
        tick: u64,
        decider: &Decider,
    ) -> SocialStep {
        self.fabric.step_slice(
            agents,
            whereabouts,
            now_hours,
            tick,
            derive_seed(self.seed, tick),
            decider,
        )
    }

    /// The NPCs at `witnesses` (indices into `agents`) see `actor` commit `act` at `place`
    /// when `act` is hostile; returns what they made of it (its story events for
    /// [`SocialLife::feed`], like a step's).
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
        self.feed(vec![place.event(
            now_hours,
            StoryEventKind::Goal {
                npc: npc.to_owned(),
                description: description.to_owned(),
                change,
            },
        )]);
    }

    /// The story messages due at this tick in a zone of `tick_hours` game hours a tick: new
    /// signals (the detector runs every `every_ticks`), then what became of live ones.
    pub fn signals(&mut self, now_hours: f64, tick_hours: f64) -> Vec<StoryMessage> {
        let (raised, changes) = self.detector.signals(now_hours);
        let mut messages: Vec<StoryMessage> = (raised.into_iter())
            .map(|s| StoryMessage::StorySignal(SignalBody::of(s, tick_hours)))
            .collect();
        messages.extend(changes.into_iter().map(|change| match change {
            SignalChange::Updated(s) => {
                StoryMessage::StorySignalUpdated(SignalBody::of(s, tick_hours))
            }
            SignalChange::Ended(s, end) => StoryMessage::StorySignalExpired {
                signal: SignalBody::of(s, tick_hours),
                reason: end.as_str(),
            },
        }));
        messages
    }

    /// The NPCs live signal `id` is about, but those its context names as the wrongdoer
    /// (`subject`, `traitor`, `against`): whom a quest about it helped. `None`: not live.
    pub fn signal_npcs(&mut self, id: &str) -> Option<Vec<String>> {
        let id = id.to_owned();
        self.detector.ask(move |detector| {
            let signal = detector.live().find(|s| s.id == id)?;
            let wrongdoers: Vec<&String> = ["subject", "traitor", "against"]
                .iter()
                .filter_map(|key| signal.context.get(*key))
                .collect();
            Some(
                (signal.involved_npcs.iter())
                    .filter(|npc| !wrongdoers.contains(npc))
                    .cloned()
                    .collect(),
            )
        })
    }

    /// `npc` at `place` remembers `by`'s deed (see [`SocialFabric::remember_deed`]); the
    /// detector reads what changed.
    pub fn remember_deed(
        &mut self,
        npc: &str,
        by: &str,
        deed: (Deed, &str),
        (place, now_hours): (&SocialPlace, f64),
    ) {
        let mut step = SocialStep::default();
        let at = &mut StepAt::new(place, now_hours, &mut step);
        self.fabric.remember_deed(npc, by, deed, at);
        self.feed(step.events);
    }

    /// Consumer `by` takes signal `id`; its update goes out with the next tick's messages.
    pub fn take_signal(&mut self, id: &str, by: &str) -> Result<(), SignalClaimError> {
        let (id, by) = (id.to_owned(), by.to_owned());
        (self.detector).ask(move |detector| detector.take(&id, &by).map(|_| ()))
    }

    /// Consumer `by` resolves signal `id` with `outcome`: the message that says so.
    pub fn resolve_signal(
        &mut self,
        id: &str,
        (by, outcome): (&str, &str),
        tick_hours: f64,
    ) -> Result<StoryMessage, SignalClaimError> {
        let (id, consumer) = (id.to_owned(), by.to_owned());
        let signal = (self.detector).ask(move |detector| detector.resolve(&id, &consumer))?;
        Ok(StoryMessage::StorySignalResolved {
            signal: SignalBody::of(signal, tick_hours),
            by: by.to_owned(),
            outcome: outcome.to_owned(),
        })
    }
}
