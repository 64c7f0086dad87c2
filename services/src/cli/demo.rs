//! `geppetto demo`: the embedded village on the in-process bus (or Redis with `--redis`) with
//! the internal clock and a short script (a traveller arrives, a cutpurse strikes, the
//! traveller goes for a drink), printing a readable live feed of what the NPCs do.
//!
//! The feed is read back from the bus (`npc_events` and `intents`) like any subscriber would,
//! so the demo exercises the same path as a game server. It owns only the script and the
//! formatting; everything else is the service's.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use geppetto_llm::{LlmConfig, OpenAiProviderConfig, WorkerCounts};
use serde_json::Value;
use tokio::sync::watch;

use crate::bus::envelope::{WorldEvent, WorldMessage, header};
use crate::bus::memory::{DEFAULT_STREAM_CAPACITY, InProcessBus};
use crate::bus::redis::{RedisBus, RedisBusConfig};
use crate::bus::{ConsumerConfig, Delivery, EventBus, StreamKind};
use crate::cli::error::CommandError;
use crate::config::clock::{ClockConfig, ClockKind};
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::content::world_file::{EMBEDDED_VILLAGE, WorldFile, embedded_village};
use crate::runtime::actor::ActorRuntime;
use crate::runtime::starter::start_llm;
use crate::runtime::zone_loop::{Persistence, run_clock, run_zone};
use crate::zone::isolation::IsolationState;
use crate::zone::{IntegrationConfig, Zone, ZoneConfig};

/// Default speed of the demo clock, game minutes per wall-clock second.
pub const DEFAULT_DEMO_SPEED: f64 = 60.0;

/// The demo's tick budget (soft and hard), milliseconds: out of the way on purpose.
pub const DEMO_TICK_BUDGET_MS: f64 = 10_000.0;

/// What to run.
#[derive(Clone, Debug)]
pub struct DemoOptions {
    /// Game hours to run.
    pub hours: f64,
    /// Game minutes per second.
    pub speed: f64,
    /// Run over Redis at this URL instead of the in-process bus.
    pub redis: Option<String>,
    /// The zone the village runs as (its streams' names over Redis); default `village`.
    pub zone: String,
    /// Over Redis, delete the zone's streams when they hold entries (else the demo refuses).
    pub reset: bool,
    /// An OpenAI-compatible endpoint (`http://127.0.0.1:8080/v1`) for narration and
    /// perception; none: the deterministic templates.
    pub llm_url: Option<String>,
    /// The model to ask at `llm_url`.
    pub llm_model: Option<String>,
    /// The ceiling of every model call, in milliseconds (narration and perception); none:
    /// the `[llm]` defaults.
    pub llm_timeout_ms: Option<u64>,
    /// A redb file that keeps the village between runs: its world log, and snapshots every
    /// `snapshot_every_ticks` and at the end; a run resumes where the last one stopped.
    pub data: Option<std::path::PathBuf>,
    /// Serve the admin API and the web inspector (`/inspector`) on this loopback address while
    /// the demo runs; its calls that replay or change anything (the inspector's what-if) take
    /// the bearer token in `GEPPETTO_ADMIN_TOKEN`, as `serve`'s do (none set: refused).
    pub admin: Option<String>,
}

impl DemoOptions {
    /// The seams' settings: defaults, plus the endpoint when one is given.
    pub fn llm_config(&self) -> LlmConfig {
        let provider = self.llm_url.as_ref().map(|url| {
            let defaults = OpenAiProviderConfig::default();
            OpenAiProviderConfig {
                base_url: url.clone(),
                model: self.llm_model.clone().unwrap_or(defaults.model.clone()),
                ..defaults
            }
        });
        let defaults = LlmConfig::default();
        LlmConfig {
            provider,
            call_timeout_ms: self.llm_timeout_ms.unwrap_or(defaults.call_timeout_ms),
            witnessed_narration_timeout_ms: self
                .llm_timeout_ms
                .unwrap_or(defaults.witnessed_narration_timeout_ms),
            ..defaults
        }
    }
}

/// The closing line about the model: its calls, latency, deliveries and fallbacks by reason.
pub fn llm_summary(model: &str, counts: &WorkerCounts) -> String {
    let ms = |value: Option<u64>| value.map_or_else(|| "-".to_owned(), |v| format!("{v} ms"));
    let fallbacks: Vec<String> = counts
        .fallbacks_by_reason
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(reason, n)| format!("{} {n}", reason.as_str()))
        .collect();
    format!(
        "-- llm {model}: {} calls ({} answered, {} failed), latency p50 {} p99 {}; {} narratives delivered, {} discarded (no player left), {} kept the template; {} perceptions; fallbacks: {}",
        counts.calls_succeeded + counts.calls_failed,
        counts.calls_succeeded,
        counts.calls_failed,
        ms(counts.latency_p50_ms),
        ms(counts.latency_p99_ms),
        counts.narratives_delivered,
        counts.narratives_discarded,
        counts.narrations_skipped,
        counts.perceptions,
        if fallbacks.is_empty() {
            "none".to_owned()
        } else {
            fallbacks.join(", ")
        }
    )
}

/// Names for the feed.
struct Names {
    npcs: BTreeMap<String, String>,
    providers: BTreeMap<String, String>,
}

impl Names {
    fn new(world: &WorldFile) -> Self {
        Self {
            npcs: world
                .npcs
                .iter()
                .map(|n| {
                    (
                        n.agent.id.clone(),
                        n.name.clone().unwrap_or_else(|| n.agent.id.clone()),
                    )
                })
                .chain(
                    world
                        .residents
                        .iter()
                        .map(|r| (r.id.clone(), r.name.clone().unwrap_or_else(|| r.id.clone()))),
                )
                .collect(),
            providers: world
                .providers
                .iter()
                .map(|p| {
                    (
                        p.spec.id.clone(),
                        p.name.clone().unwrap_or_else(|| p.spec.id.clone()),
                    )
                })
                .collect(),
        }
    }

    fn npc<'a>(&'a self, id: &'a str) -> &'a str {
        self.npcs.get(id).map_or(id, String::as_str)
    }

    fn provider<'a>(&'a self, id: &'a str) -> &'a str {
        self.providers.get(id).map_or(id, String::as_str)
    }
}

fn clock_text(game_time: u64) -> String {
    format!("{:02}:{:02}", (game_time / 60) % 24, game_time % 60)
}

/// The NPCs a message lists under `key`, by name, joined with commas.
fn npc_list(names: &Names, message: &Value, key: &str) -> String {
    message
        .get(key)
        .and_then(Value::as_array)
        .map(|ids| {
            ids.iter()
                .filter_map(Value::as_str)
                .map(|id| names.npc(id))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// `line`, followed by the message's narration when a player witnessed it.
fn with_narration(message: &Value, line: String) -> String {
    match message.get("narration").and_then(Value::as_str) {
        Some(narration) => format!("{line} — {narration}"),
        None => line,
    }
}

/// One feed line for a bus message, or `None` for messages the feed leaves out.
fn feed_line(names: &Names, message: &Value) -> Option<String> {
    let text = |key: &str| message.get(key).and_then(Value::as_str).unwrap_or_default();
    let npc = names.npc(text("npc"));
    let what = match text("type") {
        "action_started" => format!(
            "{npc} starts {} at {}",
            text("action"),
            names.provider(text("provider"))
        ),
        "action_preempted" => format!("{npc} drops {} for {}", text("action"), text("by_action")),
        "action_interrupted" => format!(
            "{npc} breaks off {} to {}",
            text("action"),
            text("by_action")
        ),
        "bark" => format!("{npc}: \"{}\"", text("text")),
        "goal_created" => format!("{npc} resolves to {}", text("description")),
        "goal_completed" => format!("{npc} has managed to {}", text("description")),
        "goal_failed" => format!("{npc} gives up trying to {}", text("description")),
        "goal_blocked" => format!(
            "{npc} sees no way to {} ({})",
            text("description"),
            text("reason").replace('_', " ")
        ),
        "social" => with_narration(
            message,
            format!(
                "{npc} joins {} ({})",
                npc_list(names, message, "with"),
                text("action")
            ),
        ),
        "narrative_ready" => format!("  ~ {}", text("text")),
        "interaction" => {
            let verb = match text("kind") {
                "conversation" => "talks with",
                "gossip" => "gossips with",
                "trade" => "trades with",
                "argument" => "argues with",
                "favor" => "asks a favour of",
                "intimidation" => "intimidates",
                "scheming" => "schemes with",
                "mentoring" => "teaches",
                "courtship" => "courts",
                other => other,
            };
            with_narration(message, format!("{npc} {verb} {}", names.npc(text("with"))))
        }
        "rumour_heard" if message["believed"] == true => format!(
            "{npc} believes what {} says about {}",
            names.npc(text("teller")),
            names.npc(text("subject"))
        ),
        "story_signal" => {
            format!(
                "[story] {} ({}) at {}, importance {:.2}",
                text("signal_type").replace('_', " "),
                npc_list(names, message, "npcs"),
                text("location"),
                message["importance"].as_f64().unwrap_or_default()
            )
        }
        "social_interaction" => format!(
            "{npc} suffers a {} by {}",
            text("kind"),
            names.npc(text("source"))
        ),
        "npc_demoted" => format!("{npc} is demoted for review ({})", text("reason")),
        "archetype_circuit_breaker" => format!("archetype {} is held back", text("archetype")),
        "tick_budget_exceeded" => "the tick ran over its budget".to_owned(),
        _ => return None,
    };
    let game_time = message
        .get("game_time")
        .and_then(Value::as_u64)
        .unwrap_or_default();
    Some(format!("{}  {what}", clock_text(game_time)))
}

fn script(zone: &str, start: u64) -> Vec<WorldMessage> {
    let at = |offset: u64, id: &str, event: WorldEvent| WorldMessage {
        header: header(format!("{zone}:script:{start}:{id}"), zone, start + offset),
        event,
    };
    vec![
        at(
            1,
            "arrive",
            WorldEvent::PlayerEntered {
                player: "traveller".into(),
                room: "square".into(),
            },
        ),
        at(
            50,
            "theft",
            WorldEvent::SocialEvent {
                kind: "theft".into(),
                source: "a cutpurse".into(),
                target: "greta".into(),
                deltas: BTreeMap::from([("THREAT".into(), 90.0)]),
                mood: None,
                about: None,
            },
        ),
        // Vex lifts Piet's purse; Piet, a trader by archetype, sets out to report it.
        at(
            70,
            "purse",
            WorldEvent::SocialEvent {
                kind: "theft".into(),
                source: "vex".into(),
                target: "piet".into(),
                deltas: BTreeMap::new(),
                mood: None,
                about: None,
            },
        ),
        at(
            95,
            "tavern",
            WorldEvent::PlayerEntered {
                player: "traveller".into(),
                room: "tavern".into(),
            },
        ),
    ]
}

/// Readies a zone's streams for a run that starts from an empty log (the demo, the load
/// generator): when any of them holds entries — a zone a `serve` or an earlier run uses — it
/// refuses, unless `reset`, which deletes them. Nothing is deleted without being asked.
pub async fn reset_redis_zone(url: &str, zone: &str, reset: bool) -> Result<(), CommandError> {
    let failed = |e: redis::RedisError| CommandError::Environment(format!("redis {url}: {e}"));
    let client = redis::Client::open(url).map_err(failed)?;
    let mut connection = client
        .get_multiplexed_async_connection()
        .await
        .map_err(failed)?;
    let keys: Vec<String> = StreamKind::VARIANTS.iter().map(|s| s.key(zone)).collect();
    let mut held = Vec::new();
    for key in &keys {
        let entries: u64 = redis::cmd("XLEN")
            .arg(key)
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        if entries > 0 {
            held.push(format!("{key} ({entries} entries)"));
        }
    }
    if held.is_empty() {
        return Ok(());
    }
    if !reset {
        return Err(CommandError::BadInput(format!(
            "zone `{zone}` already has streams at {url}: {}. Another run or a `serve` may be \
             using them: pass --zone NAME to run in a zone of its own, or --reset to delete \
             them and start afresh",
            held.join(", ")
        )));
    }
    redis::cmd("DEL")
        .arg(&keys)
        .query_async::<()>(&mut connection)
        .await
        .map_err(failed)
}

/// Opens the bus the options ask for.
pub async fn open_bus(redis: Option<&str>) -> Result<Arc<dyn EventBus>, CommandError> {
    Ok(match redis {
        Some(url) => {
            let config = RedisBusConfig {
                url: url.to_owned(),
                ..RedisBusConfig::default()
            };
            Arc::new(
                RedisBus::connect(config)
                    .await
                    .map_err(|e| CommandError::Environment(e.to_string()))?,
            )
        }
        None => Arc::new(InProcessBus::new(DEFAULT_STREAM_CAPACITY)),
    })
}

/// The demo shows lives, not load shedding: its budgets are far above any tick, so the feed is
/// the same on every machine and build (`serve` keeps the documented 4/5 ms and 2 ms an NPC).
/// With no game to carry intents out, geppetto's timer ends actions.
fn demo_zone_config() -> ZoneConfig {
    let mut config = ZoneConfig::default();
    config.governor.tick_budget_ms_soft = DEMO_TICK_BUDGET_MS;
    config.governor.tick_budget_ms_hard = DEMO_TICK_BUDGET_MS;
    config.tick.npc_budget_ms = DEMO_TICK_BUDGET_MS;
    config.integration = IntegrationConfig::simulated();
    config
}

/// The village as the redb file at `path` left it (a fresh one if it holds nothing), and the
/// persistence that keeps it there.
async fn kept_village(
    path: &std::path::Path,
    build: &(dyn Fn(&[String]) -> Result<Zone, crate::zone::ZoneError> + Sync),
    bus: &Arc<dyn EventBus>,
) -> Result<(Zone, Persistence, crate::http::WhatIfSource), CommandError> {
    let storage = crate::config::StorageSection::default();
    let file = geppetto_storage::RedbFile::open(path, &storage.stores)
        .map_err(|e| CommandError::Environment(e.to_string()))?;
    let store: Arc<dyn geppetto_storage::SnapshotStore> = Arc::new(file.snapshot_store());
    let log = crate::runtime::world_log::WorldLog::Embedded(Arc::new(file.event_log()));
    let consumer = ConsumerConfig::default();
    let recovered = crate::runtime::recovery::recover(
        "village",
        build,
        &*store,
        &log,
        &**bus,
        &consumer,
        storage.replay_page_messages,
    )
    .await
    .map_err(|e| CommandError::Environment(format!("{}: {e}", path.display())))?;
    let source = crate::http::WhatIfSource {
        world: "village".into(),
        zone_config: demo_zone_config(),
        limits: consumer.limits.clone(),
        log: log.clone(),
        store: Arc::clone(&store),
    };
    let keeper = crate::runtime::recovery::SnapshotKeeper {
        store,
        every_ticks: storage.snapshot_every_ticks,
        sequence: recovered.newest_sequence,
        flush_timeout: std::time::Duration::from_millis(storage.snapshot_flush_timeout_ms),
        last_tick: recovered.zone.tick,
    };
    let persistence = Persistence {
        isolation: None,
        log,
        snapshots: Some(keeper),
        resume_after: recovered.last_event_id,
        controls: None,
        lease: None,
    };
    Ok((recovered.zone, persistence, source))
}

/// Runs the demo, handing each feed line to `sink`; returns how many lines it printed.
pub fn run_demo(
    options: &DemoOptions,
    mut sink: impl FnMut(String),
) -> Result<usize, CommandError> {
    let (file, _) = EMBEDDED_VILLAGE;
    let mut world = embedded_village().map_err(|e| CommandError::BadInput(e.to_string()))?;
    world.zone.clone_from(&options.zone);
    let profiles = ProfileLibrary::embedded().map_err(|e| CommandError::BadInput(e.to_string()))?;
    let sets = SetLibrary::embedded().map_err(|e| CommandError::BadInput(e.to_string()))?;
    let config = demo_zone_config();
    let build = |vocabulary: &[String]| {
        Zone::over(
            &world,
            &profiles,
            &sets,
            None,
            config.clone(),
            IsolationState::default(),
            vocabulary,
        )
    };
    let zone = build(&[]).map_err(|e| CommandError::BadInput(format!("{file}: {e}")))?;
    let names = Names::new(&world);
    let zone_name = zone.name.clone();
    let future = async move {
        if let Some(url) = &options.redis {
            reset_redis_zone(url, &zone_name, options.reset).await?;
        }
        let bus = open_bus(options.redis.as_deref()).await?;
        let (zone, persistence, whatif) = match &options.data {
            Some(path) => {
                let (zone, persistence, source) = kept_village(path, &build, &bus).await?;
                (
                    zone,
                    persistence,
                    BTreeMap::from([(zone_name.clone(), source)]),
                )
            }
            None => (zone, Persistence::volatile(), BTreeMap::new()),
        };
        let start = zone.game_time;
        let end = start + (options.hours.max(0.0) * 60.0).round() as u64;
        let actors = ActorRuntime::new(crate::runtime::cores());
        let handle = actors.start(zone);
        let (stop, stopped) = watch::channel(false);
        if let Some(address) = &options.admin {
            let state = crate::http::AdminState {
                story_feed: crate::http::story_feed(
                    &bus,
                    [zone_name.clone()],
                    "inspector",
                    &stopped,
                ),
                whatif,
                whatif_busy: Arc::default(),
                zones: {
                    let zones = crate::runtime::directory::ZoneDirectory::default();
                    zones.insert(crate::runtime::directory::RunningZone {
                        handle: handle.clone(),
                        controls: None,
                        lease: None,
                    });
                    zones
                },
                bus: Arc::clone(&bus),
                content_reload: None,
                metrics: None,
                token: {
                    let admin = crate::config::AdminConfig::default();
                    geppetto_llm::read_secret(&admin.token_env, None)
                        .map_err(|e| CommandError::Environment(e.to_string()))?
                },
                max_body_bytes: crate::config::AdminConfig::default().max_body_bytes,
            };
            let server = crate::http::start(state, address)
                .map_err(|e| CommandError::Environment(format!("admin {address}: {e}")))?;
            tokio::spawn(server);
        }
        let llm_config = options.llm_config();
        let seams = start_llm(&llm_config, None, &bus, &stopped)?;
        let llm_stats = seams.stats.clone();
        let loop_task = tokio::spawn(run_zone(
            handle.clone(),
            Arc::clone(&bus),
            ConsumerConfig::default(),
            persistence,
            Some(seams.link),
            stopped.clone(),
        ));
        let clock = ClockConfig {
            kind: ClockKind::Internal,
            speed_minutes_per_second: options.speed,
            ..ClockConfig::default()
        };
        let clock_task = tokio::spawn(run_clock(
            Arc::clone(&bus),
            zone_name.clone(),
            start,
            Some(end),
            clock,
            script(&zone_name, start),
            stopped.clone(),
        ));
        let mut events = bus
            .consumer(&zone_name, StreamKind::NpcEvents, "demo-feed", "feed")
            .await
            .map_err(|e| CommandError::Environment(e.to_string()))?;
        let mut intents = bus
            .consumer(&zone_name, StreamKind::Intents, "demo-feed", "feed")
            .await
            .map_err(|e| CommandError::Environment(e.to_string()))?;
        let mut narrative = bus
            .consumer(&zone_name, StreamKind::Narrative, "demo-feed", "feed")
            .await
            .map_err(|e| CommandError::Environment(e.to_string()))?;
        let mut story = bus
            .consumer(&zone_name, StreamKind::Story, "demo-feed", "feed")
            .await
            .map_err(|e| CommandError::Environment(e.to_string()))?;
        let mut printed = 0usize;
        // A line is ordered by its game minute, then its stream, then its place in that
        // stream: never by when a read happened to reach it, so the feed is the same on
        // every run however the reads interleave.
        let (mut pending, mut read_in, mut latest) = (Vec::new(), [0u64; 4], [0u64; 2]);
        let mut finished = false;
        let mut tasks = Some((clock_task, loop_task));
        loop {
            // Once the zone has applied the last tick, stop its loop: the loop finishes
            // publishing the batch in hand before it looks at the stop signal, so after it has
            // returned and the bus is flushed, every output is on the bus and the feed drains it.
            let reached = handle.status().await.map_or(true, |s| s.game_time >= end);
            if let Some((clock_task, loop_task)) = tasks.take_if(|_| reached) {
                let _ = stop.send(true);
                let _ = clock_task.await;
                match loop_task.await {
                    Ok(Ok(_)) => {}
                    Ok(Err(error)) => return Err(CommandError::Environment(error.to_string())),
                    Err(error) => return Err(CommandError::Environment(error.to_string())),
                }
                bus.flush()
                    .await
                    .map_err(|e| CommandError::Environment(e.to_string()))?;
                finished = true;
            }
            let wait = Duration::from_millis(if finished { 0 } else { 50 });
            // Each stream is in game-time order, but they are read one after another, so one
            // can run ahead of another. A line waits until both dense streams (events and
            // intents) have shown something later; narratives and story signals come when they
            // come; everything left goes out once all is drained.
            let mut batch: Vec<(usize, Delivery)> = Vec::new();
            let streams = [&mut events, &mut intents, &mut narrative, &mut story];
            for (which, stream) in streams.into_iter().enumerate() {
                let wait = if which == 0 { wait } else { Duration::ZERO };
                let read = stream
                    .next_batch(512, wait)
                    .await
                    .map_err(|e| CommandError::Environment(e.to_string()))?;
                // The feed's own group acknowledges what it read (printed below): nothing
                // stays pending for it on a Redis the demo shares.
                let ids: Vec<String> = read.iter().map(|d| d.id.clone()).collect();
                if !ids.is_empty() {
                    stream
                        .ack(&ids)
                        .await
                        .map_err(|e| CommandError::Environment(e.to_string()))?;
                }
                batch.extend(read.into_iter().map(|d| (which, d)));
            }
            for (which, message) in batch
                .iter()
                .filter_map(|(w, d)| Some((*w, serde_json::from_str::<Value>(&d.body).ok()?)))
            {
                let t = message
                    .get("game_time")
                    .and_then(Value::as_u64)
                    .unwrap_or_default();
                if let Some(seen) = latest.get_mut(which) {
                    *seen = (*seen).max(t);
                }
                if let Some(line) = feed_line(&names, &message) {
                    pending.push((t, which, read_in[which], line));
                }
                read_in[which] += 1;
            }
            let drained = finished && batch.is_empty();
            pending.sort();
            let ready = if drained {
                pending.len()
            } else {
                let frontier = latest[0].min(latest[1]);
                pending.partition_point(|(t, _, _, _)| *t < frontier)
            };
            for (_, _, _, line) in pending.drain(..ready) {
                printed += 1;
                sink(line);
            }
            if drained {
                break;
            }
        }
        actors.stop();
        if let Some(provider) = &llm_config.provider {
            sink(llm_summary(&provider.model, &llm_stats.snapshot()));
        }
        Ok(printed)
    };
    crate::runtime::block_on(crate::runtime::cores(), future)
        .map_err(|e| CommandError::Environment(e.to_string()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feed_lines_read_like_a_story() {
        let names = Names::new(&embedded_village().expect("village"));
        let message: Value = serde_json::from_str(
            r#"{"v":1,"type":"action_started","id":"x","zone":"village","game_time":432,"npc":"bram","provider":"forge","action":"hammer_horseshoes","utility":1.0,"room":"forge"}"#,
        )
        .expect("json");
        assert_eq!(
            feed_line(&names, &message).as_deref(),
            Some("07:12  Bram the smith starts hammer_horseshoes at the forge")
        );
        let skipped: Value =
            serde_json::from_str(r#"{"type":"level_changed","game_time":1}"#).expect("json");
        assert_eq!(feed_line(&names, &skipped), None);
    }
}
