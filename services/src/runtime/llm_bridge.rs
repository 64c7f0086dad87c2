//! The service's side of the LLM seams: starts `geppetto-llm` with the
//! configured provider (or only the deterministic templates), hands it the requests zones make
//! (witnessed interactions to narrate, player `say` lines to perceive), and turns what comes
//! back into bus messages:
//!
//! - `narrative_ready` on the zone's `narrative` stream (model text for a witnessed
//!   interaction, delivered only while a player is still in the room — the delivery guard reads
//!   [`RoomsWithPlayers`], kept current by each zone loop);
//! - perceived events as ordinary `social_event`s on the zone's `world` stream, so they are
//!   logged before any NPC sees them and a replay never calls a model (whether the model or,
//!   standing in for it, the keyword rules read the line);
//! - `llm_breaker` on every zone's `npc_events` when a provider's breaker changes state;
//!
//! and, after each message, the worker's spend by zone, NPC class and tier as the service's
//! Prometheus counters (`metrics::llm_spend`; by seam the seams count it themselves).
//!
//! Nothing here reaches NPC state: requests are owned copies, results are bus messages.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};

use geppetto_llm::{
    BreakerEvent, LlmAssets, LlmConfig, LlmHandle, LlmOutput, LlmRequest, NarrativeReady,
    PerceivedEvent, PerceptionResult, Providers, Worker, WorkerStats,
};
use serde::Serialize;
use tokio::sync::mpsc;

use crate::bus::envelope::{WorldEvent, WorldMessage, header, to_envelope};
use crate::bus::{EventBus, StreamKind};

/// Messages from the LLM worker waiting for the output task at most.
pub const OUTPUT_CAPACITY: usize = 256;

/// Why the seams could not start.
#[derive(Debug, thiserror::Error)]
pub enum LlmStartError {
    /// A prompt, template or rule file is bad.
    #[error("llm assets: {0}")]
    Assets(#[from] geppetto_llm::AssetError),
    /// A tunable is out of range.
    #[error("llm: {0}")]
    Config(#[from] geppetto_llm::ConfigError),
    /// The provider could not be built.
    #[error("llm provider: {0}")]
    Provider(#[from] geppetto_llm::ProviderBuildError),
    /// The worker could not start.
    #[error("llm worker: {0}")]
    Worker(#[from] geppetto_llm::SpawnError),
}

/// Which rooms of each zone hold a player, and each zone's game time; written by the zone
/// loops after every batch, read by the delivery guard and the output task.
#[derive(Clone, Debug, Default)]
pub struct RoomsWithPlayers {
    zones: Arc<RwLock<BTreeMap<String, ZonePresence>>>,
}

/// One zone's occupied rooms and game time.
type ZonePresence = (Arc<BTreeSet<String>>, u64);

impl RoomsWithPlayers {
    /// Records `zone`'s occupied rooms and game time.
    pub fn update(&self, zone: &str, rooms: Arc<BTreeSet<String>>, game_time: u64) {
        if let Ok(mut zones) = self.zones.write() {
            zones.insert(zone.to_owned(), (rooms, game_time));
        }
    }

    /// Whether a player is in `room` of `zone` now.
    pub fn has_player(&self, zone: &str, room: &str) -> bool {
        self.zones.read().is_ok_and(|zones| {
            zones
                .get(zone)
                .is_some_and(|(rooms, _)| rooms.contains(room))
        })
    }

    /// `zone`'s last known game time.
    pub fn game_time(&self, zone: &str) -> u64 {
        self.zones
            .read()
            .ok()
            .and_then(|zones| zones.get(zone).map(|(_, time)| *time))
            .unwrap_or_default()
    }

    /// The zones known.
    pub fn zones(&self) -> Vec<String> {
        self.zones
            .read()
            .map(|zones| zones.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// What a zone loop needs to hand work to the seams.
#[derive(Clone, Debug)]
pub struct LlmLink {
    /// The seams' enqueue side.
    pub handle: LlmHandle,
    /// Presence and time, shared with the guard.
    pub rooms: RoomsWithPlayers,
}

impl LlmLink {
    /// Queues a zone's requests (never waits; a full queue drops the least important work and
    /// counts it).
    pub fn submit(&self, requests: Vec<LlmRequest>) {
        for request in requests {
            self.handle.queue().push(request);
        }
    }
}

/// Started seams: the link for zone loops, the output for [`run_output`], the worker.
pub struct LlmSeams {
    /// For zone loops.
    pub link: LlmLink,
    /// What the worker says.
    pub output: mpsc::Receiver<LlmOutput>,
    /// The worker (dropping it does not stop it; the shutdown future does).
    pub worker: Worker,
}

/// Starts the seams inside a tokio runtime; they run until `shutdown` resolves.
pub fn start(
    config: &LlmConfig,
    assets: LlmAssets,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<LlmSeams, LlmStartError> {
    config.validate()?;
    let providers = Providers::from_config(config, assets)?;
    let rooms = RoomsWithPlayers::default();
    let guard_rooms = rooms.clone();
    let guard = Arc::new(move |zone: &str, room: &str| guard_rooms.has_player(zone, room));
    let started = geppetto_llm::start(config, providers, guard, OUTPUT_CAPACITY, shutdown)?;
    if config.provider.is_some() {
        tracing::info!("llm: model provider configured; templates stand in when it cannot");
    } else {
        tracing::info!("llm: no model configured; narration and perception use templates");
    }
    Ok(LlmSeams {
        link: LlmLink {
            handle: started.handle,
            rooms,
        },
        output: started.output,
        worker: started.worker,
    })
}

/// The `narrative` stream's message.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum NarrativeMessage<'a> {
    NarrativeReady {
        interaction_id: &'a str,
        room: &'a str,
        text: &'a str,
        provider: &'a str,
    },
}

/// Service events about the seams themselves.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum SeamEvent<'a> {
    LlmBreaker {
        provider: &'a str,
        from: geppetto_llm::BreakerState,
        to: geppetto_llm::BreakerState,
    },
}

/// A perceived event as the world event it stands for.
pub fn as_world_event(event: &PerceivedEvent) -> WorldEvent {
    match event {
        PerceivedEvent::SocialEvent {
            kind,
            actor,
            target,
            ..
        } => WorldEvent::SocialEvent {
            kind: kind.as_str().to_owned(),
            source: actor.clone(),
            target: target.clone(),
            deltas: BTreeMap::new(),
            mood: None,
            about: None,
        },
        PerceivedEvent::GossipEvent {
            kind,
            speaker,
            listener,
            subject,
            ..
        } => WorldEvent::SocialEvent {
            kind: kind.as_str().to_owned(),
            source: speaker.clone(),
            target: listener.clone(),
            deltas: BTreeMap::new(),
            mood: None,
            about: Some(subject.clone()),
        },
    }
}

/// Publishes what the worker says until its channel closes, and the spend in `stats` as
/// metrics after each message. Returns how many messages it published.
pub async fn run_output(
    mut output: mpsc::Receiver<LlmOutput>,
    bus: Arc<dyn EventBus>,
    rooms: RoomsWithPlayers,
    stats: WorkerStats,
) -> u64 {
    let mut published = 0;
    while let Some(message) = output.recv().await {
        crate::runtime::metrics::llm_spend(&stats.snapshot().spend);
        published += match message {
            LlmOutput::NarrativeReady(ready) => publish_narrative(&ready, &*bus, &rooms),
            LlmOutput::NarrationSkipped(skipped) => {
                tracing::debug!(interaction = %skipped.interaction_id, reason = skipped.reason.as_str(), "placeholder stands");
                0
            }
            LlmOutput::Perception(result) => publish_perceived(&result, &*bus, &rooms),
            LlmOutput::Breaker(change) => publish_breaker(&change, &*bus, &rooms, published),
        };
    }
    published
}

/// A model's line on the zone's `narrative` stream. Returns the messages published (1).
fn publish_narrative(ready: &NarrativeReady, bus: &dyn EventBus, rooms: &RoomsWithPlayers) -> u64 {
    let game_time = rooms.game_time(&ready.zone);
    let h = header(
        format!("{}:narrative:{}", ready.zone, ready.interaction_id),
        &ready.zone,
        game_time,
    );
    let body = NarrativeMessage::NarrativeReady {
        interaction_id: &ready.interaction_id,
        room: &ready.room,
        text: &ready.text,
        provider: &ready.provider,
    };
    bus.publish(&ready.zone, StreamKind::Narrative, to_envelope(&h, &body));
    1
}

/// The events perception read from a line, written to the zone's world stream. Returns the
/// messages published.
fn publish_perceived(
    result: &PerceptionResult,
    bus: &dyn EventBus,
    rooms: &RoomsWithPlayers,
) -> u64 {
    let game_time = rooms.game_time(&result.zone);
    let mut published = 0;
    for (n, event) in result.outcome.events.iter().enumerate() {
        let message = WorldMessage {
            header: header(
                format!("{}:perceived:{}:{n}", result.zone, result.utterance_id),
                &result.zone,
                game_time,
            ),
            event: as_world_event(event),
        };
        bus.publish(&result.zone, StreamKind::World, message.to_json());
        published += 1;
    }
    if !result.outcome.rejections.is_empty() {
        tracing::info!(
            utterance = %result.utterance_id,
            rejected = result.outcome.rejections.len(),
            "perceived candidates refused"
        );
    }
    if let Some(reason) = result.fallback {
        tracing::debug!(
            utterance = %result.utterance_id,
            reason = reason.as_str(),
            events = result.outcome.events.len(),
            "the keyword rules read the line in the model's place"
        );
    }
    published
}

/// A breaker transition, told to every zone's `npc_events` (`seq`: the messages published so
/// far, to keep ids apart within a millisecond). Returns the messages published.
fn publish_breaker(
    change: &BreakerEvent,
    bus: &dyn EventBus,
    rooms: &RoomsWithPlayers,
    seq: u64,
) -> u64 {
    tracing::warn!(provider = %change.provider, from = ?change.from, to = ?change.to, "llm breaker");
    // A transition is a wall-clock event: its id names the millisecond, so ids stay unique
    // across restarts (the count alone starts again at 0).
    let at_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis());
    let mut published = 0;
    for zone in rooms.zones() {
        let h = header(
            format!(
                "{zone}:llm_breaker:{}:{at_ms}:{}",
                change.provider,
                seq + published
            ),
            &zone,
            rooms.game_time(&zone),
        );
        let body = SeamEvent::LlmBreaker {
            provider: &change.provider,
            from: change.from,
            to: change.to,
        };
        bus.publish(&zone, StreamKind::NpcEvents, to_envelope(&h, &body));
        published += 1;
    }
    published
}
