//! End-to-end: the LLM seams wired into a running zone, against a real HTTP server on loopback
//! that speaks the chat-completions protocol. A witnessed interaction gets its placeholder in
//! the `social` intent at once and the model's text later as `narrative_ready` on the
//! narrative stream; an unwitnessed one is never narrated. A player's `say` is perceived into
//! candidate events; the valid one is written to the world log as an ordinary `social_event`
//! and only then reaches the NPC, while the out-of-schema one (1000 gold) is refused. The
//! deadlines only stop a broken run from hanging; nothing asserts a duration. The seams'
//! metrics (queue depth, calls, latency, deliveries, perception outcomes, tokens and cost by
//! seam, zone, NPC class and tier) reach the recorder, and every call's `usage` is accounted under
//! the class and tier of the NPC it was about.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use geppetto_llm::{LlmConfig, ModelPrice, OpenAiProviderConfig};
use geppetto_service::bus::ConsumerConfig;
use geppetto_service::bus::envelope::{WorldEvent, WorldMessage, header};
use geppetto_service::bus::memory::InProcessBus;
use geppetto_service::bus::{EventBus, StreamKind};
use geppetto_service::runtime::actor::ActorRuntime;
use geppetto_service::runtime::starter::start_llm;
use geppetto_service::runtime::zone_loop::run_zone;
use geppetto_service::zone::isolation::IsolationState;
use serde_json::Value;
use support::bus_reader::read_until;
use support::schema;
use support::village;
use tokio::sync::watch;

/// How long a reader waits for what it expects (only a broken run waits that long).
const READ_WITHIN: Duration = Duration::from_secs(60);

/// The `usage` every answer reports: prompt and completion tokens.
pub(crate) const USAGE: (u64, u64) = (11, 5);

/// What the server adds to the scene it is given, as the narration.
const NARRATION: &str = "Steam curls from the well as they trade the news.";
const PERCEPTION: &str = r#"{"events": [
    {"type": "social_event", "kind": "insult", "target": "bram", "magnitude": 0.8, "summary": "calls him a thief"},
    {"type": "give_gold", "target": "bram", "amount": 1000}
]}"#;

/// A chat-completions server on a free loopback port: perception calls (they carry a
/// `response_format`) get [`PERCEPTION`], narration calls the scene they were given (the user
/// message, which names the participants) followed by [`NARRATION`]. Returns the base URL and
/// the call counter.
pub(crate) fn model_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            counter.fetch_add(1, Ordering::SeqCst);
            let request: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let content = if request.get("response_format").is_some() {
                PERCEPTION.to_owned()
            } else {
                let scene = request["messages"][1]["content"]
                    .as_str()
                    .unwrap_or_default();
                let scene = scene.lines().next().unwrap_or_default();
                format!(
                    "{}. {NARRATION}",
                    scene.split_once(". ").map_or(scene, |(s, _)| s)
                )
            };
            let reply = serde_json::json!({
                "id": "chatcmpl-loopback", "object": "chat.completion", "created": 0,
                "model": "loopback",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": USAGE.0, "completion_tokens": USAGE.1,
                          "total_tokens": USAGE.0 + USAGE.1}
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (format!("http://127.0.0.1:{port}/v1"), calls)
}

fn world(id: &str, game_time: u64, event: WorldEvent) -> String {
    WorldMessage {
        header: header(id, "village", game_time),
        event,
    }
    .to_json()
}

#[test]
fn witnessed_interactions_are_narrated_and_said_lines_become_logged_events() {
    // The seams' metrics go to the process's recorder, as `/metrics` serves them.
    let metrics = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .expect("recorder");
    let (base_url, calls) = model_server();
    let zone = village::village(village::calm(), IsolationState::default());
    let start = zone.game_time;
    let (intents, narrative, world_log, npc_events, spend) =
        geppetto_service::runtime::block_on(2, async move {
            let bus: Arc<dyn EventBus> = Arc::new(InProcessBus::new(100_000));
            let actors = ActorRuntime::new(2);
            let handle = actors.start(zone);
            let (stop, stopped) = watch::channel(false);
            let config = LlmConfig {
                provider: Some(OpenAiProviderConfig {
                    name: "loopback".into(),
                    base_url,
                    model: "loopback".into(),
                    api_key_env: "GEPPETTO_TEST_NO_KEY".into(),
                    ..OpenAiProviderConfig::default()
                }),
                prices: [(
                    "loopback".to_owned(),
                    ModelPrice {
                        input_per_million: 1.0,
                        output_per_million: 3.0,
                    },
                )]
                .into(),
                ..LlmConfig::default()
            };
            let seams = start_llm(&config, None, &bus, &stopped).expect("seams");
            let stats = seams.stats.clone();
            let loop_task = tokio::spawn(run_zone(
                handle,
                Arc::clone(&bus),
                ConsumerConfig::default(),
                geppetto_service::runtime::zone_loop::Persistence::volatile(),
                Some(seams.link),
                stopped.clone(),
            ));
            let entered = WorldEvent::PlayerEntered {
                player: "p1".into(),
                room: "square".into(),
            };
            bus.publish("village", StreamKind::World, world("enter", start, entered));
            for step in 1..=12 {
                let now = start + step * 10;
                let tick = world(&format!("t{now}"), now, WorldEvent::TimeAdvanced);
                bus.publish("village", StreamKind::World, tick);
            }
            let said = WorldEvent::Say {
                speaker: "p1".into(),
                room: None,
                text: "Bram, you are a thief and a liar!".into(),
                addressee: Some("bram".into()),
            };
            bus.publish(
                "village",
                StreamKind::World,
                world("say-1", start + 120, said),
            );
            let narrative = read_until(&bus, StreamKind::Narrative, READ_WITHIN, |seen| {
                !seen.is_empty()
            })
            .await;
            let world_log = read_until(&bus, StreamKind::World, READ_WITHIN, |seen| {
                seen.iter().any(|m| {
                    m["id"]
                        .as_str()
                        .is_some_and(|id| id.contains(":perceived:"))
                })
            })
            .await;
            let npc_events = read_until(&bus, StreamKind::NpcEvents, READ_WITHIN, |seen| {
                seen.iter()
                    .any(|m| m["type"] == "social_interaction" && m["source"] == "p1")
            })
            .await;
            let intents = read_until(&bus, StreamKind::Intents, READ_WITHIN, |seen| {
                seen.iter().any(|m| m["type"] == "social")
            })
            .await;
            let _ = stop.send(true);
            let _ = loop_task.await;
            actors.stop();
            (
                intents,
                narrative,
                world_log,
                npc_events,
                stats.snapshot().spend,
            )
        })
        .expect("runtime");

    for message in &intents {
        schema::check_schema("intents", message);
    }
    for message in &narrative {
        schema::check_schema("narrative", message);
    }
    for message in &world_log {
        schema::check_schema("world", message);
    }
    // The witnessed interaction: placeholder now, the model's words later, same id.
    let social: Vec<&Value> = intents.iter().filter(|m| m["type"] == "social").collect();
    let witnessed: Vec<&&Value> = social.iter().filter(|m| m["witnessed"] == true).collect();
    assert!(
        !witnessed.is_empty(),
        "a chat at the well in the square: {social:?}"
    );
    for intent in &witnessed {
        assert!(
            intent["narration"].as_str().is_some_and(|t| !t.is_empty()),
            "{intent}"
        );
    }
    for intent in social.iter().filter(|m| m["witnessed"] == false) {
        assert!(
            intent.get("narration").is_none(),
            "unwitnessed is never narrated: {intent}"
        );
    }
    // The fabric's own interactions (a share of the social step runs every tick) are
    // narrated the same way when a player sees them.
    let witnessed_ids: Vec<&Value> = witnessed
        .iter()
        .map(|i| &i["id"])
        .chain(
            npc_events
                .iter()
                .filter(|m| m["type"] == "interaction" && m["witnessed"] == true)
                .map(|m| &m["id"]),
        )
        .collect();
    let ready = &narrative[0];
    assert_eq!(ready["type"], "narrative_ready");
    let text = ready["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("In the square, "),
        "the model's first sentence, the scene it was given: {text}"
    );
    assert_eq!(ready["room"], "square");
    assert!(
        witnessed_ids.contains(&&ready["interaction_id"]),
        "{ready} answers one of the witnessed intents or interactions"
    );

    // The said line: one valid event logged before it is applied, the gold refused.
    let perceived: Vec<&Value> = world_log
        .iter()
        .filter(|m| {
            m["id"]
                .as_str()
                .is_some_and(|id| id.contains(":perceived:"))
        })
        .collect();
    assert_eq!(perceived.len(), 1, "{perceived:?}");
    assert_eq!(perceived[0]["type"], "social_event");
    assert_eq!(perceived[0]["kind"], "insult");
    assert_eq!(perceived[0]["source"], "p1");
    assert_eq!(perceived[0]["target"], "bram");
    let applied: Vec<&Value> = npc_events
        .iter()
        .filter(|m| m["type"] == "social_interaction" && m["source"] == "p1")
        .collect();
    assert_eq!(applied.len(), 1);
    assert_eq!(applied[0]["npc"], "bram");
    assert!(
        calls.load(Ordering::SeqCst) >= 2,
        "both seams called the model"
    );
    // Every call's usage, priced (1 and 3 a million tokens: 1000 and 3000 nanos a token),
    // under the class and tier of the NPC it was about.
    let calls = spend.total.calls;
    assert!(calls >= 2, "{spend:?}");
    assert_eq!(spend.total.tokens_in, USAGE.0 * calls);
    assert_eq!(spend.total.tokens_out, USAGE.1 * calls);
    assert_eq!(spend.total.estimated_tokens_in, 0);
    assert_eq!(
        spend.total.cost_nanos,
        (USAGE.0 * 1000 + USAGE.1 * 3000) * calls
    );
    assert!(
        spend.by_class.values().map(|t| t.calls).sum::<u64>() >= 1,
        "{spend:?}"
    );
    assert_eq!(
        spend.by_tier.values().map(|t| t.calls).sum::<u64>(),
        calls,
        "every call is about an NPC of the zone: {spend:?}"
    );
    let exposed = metrics.render();
    for name in [
        "geppetto_llm_tokens_total",
        "geppetto_llm_cost_nanos_total",
        "geppetto_llm_class_tokens_total",
        "geppetto_llm_tier_cost_nanos_total",
        "geppetto_llm_zone_tokens_total{zone=\"village\",direction=\"in\"}",
        "geppetto_llm_zone_cost_nanos_total{zone=\"village\"}",
        "geppetto_llm_queue_depth",
        "geppetto_llm_calls_total",
        "geppetto_llm_call_duration_seconds",
        "geppetto_llm_narratives_delivered_total",
        "geppetto_llm_perception_accepted_total",
        "geppetto_llm_perception_rejected_total",
    ] {
        assert!(exposed.contains(name), "{name} missing from:\n{exposed}");
    }
}
