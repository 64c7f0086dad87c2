//! Test support: a chat-completions server on 127.0.0.1:0 that answers normally, slowly, with
//! 500, with 429 (with the `Retry-After` the test sets, if any), behind a gate the test opens,
//! or never, with or without `usage`; plus request builders and an output reader. Nothing here
//! points anywhere but loopback.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use geppetto_llm::{
    DeliveryGuard, LlmAssets, LlmConfig, LlmOutput, NarrationRequest, NpcRef, OpenAiProviderConfig,
    Participant, PerceptionContext, PerceptionRequest, Priority, Providers, Started,
    load_assets_from_dir, start_with_clock,
};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio::task::JoinHandle;

/// How the server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// 200 with a completion at once.
    Ok,
    /// 200 after a delay.
    Slow(Duration),
    /// 500 with a plain-text body.
    ServerError,
    /// 429 with an OpenAI-style error body.
    RateLimited,
    /// 200 once the test adds a permit to the gate.
    Gated,
    /// Never answers.
    Hang,
    /// Refuses `response_format: json_schema` as llama-cpp-python's server does (HTTP 500
    /// naming the field), answers everything else.
    RefuseJsonSchema,
    /// Refuses any `response_format` with an HTTP 400, answers plain requests.
    RefuseResponseFormat,
}

struct ServerState {
    mode: Mutex<Mode>,
    arrivals: Mutex<Vec<Instant>>,
    bodies: Mutex<Vec<Value>>,
    narration_reply: Mutex<String>,
    perception_reply: Mutex<String>,
    usage: Mutex<Option<(u64, u64)>>,
    retry_after: Mutex<Option<String>>,
    gate: Semaphore,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The running fake provider.
pub struct TestServer {
    pub base_url: String,
    state: Arc<ServerState>,
    task: JoinHandle<()>,
}

impl TestServer {
    pub async fn start(mode: Mode) -> Self {
        let state = Arc::new(ServerState {
            mode: Mutex::new(mode),
            arrivals: Mutex::new(Vec::new()),
            bodies: Mutex::new(Vec::new()),
            narration_reply: Mutex::new(
                "Gundren and Mira argue about the price of iron.".to_owned(),
            ),
            perception_reply: Mutex::new(r#"{"events": []}"#.to_owned()),
            usage: Mutex::new(None),
            retry_after: Mutex::new(None),
            gate: Semaphore::new(0),
        });
        let router = Router::new()
            .route("/v1/chat/completions", post(chat_completions))
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let address = listener.local_addr().expect("local address");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Self {
            base_url: format!("http://{address}/v1"),
            state,
            task,
        }
    }

    pub fn set_mode(&self, mode: Mode) {
        *lock(&self.state.mode) = mode;
    }

    pub fn set_narration_reply(&self, text: &str) {
        *lock(&self.state.narration_reply) = text.to_owned();
    }

    pub fn set_perception_reply(&self, text: &str) {
        *lock(&self.state.perception_reply) = text.to_owned();
    }

    /// Answers report `usage` with these prompt and completion tokens (`None`: `usage: null`,
    /// the default).
    pub fn set_usage(&self, usage: Option<(u64, u64)>) {
        *lock(&self.state.usage) = usage;
    }

    /// 429 answers carry this `Retry-After` value (`None`: no header, the default).
    pub fn set_retry_after(&self, value: Option<&str>) {
        *lock(&self.state.retry_after) = value.map(str::to_owned);
    }

    /// Lets `count` gated requests answer.
    pub fn open_gate(&self, count: usize) {
        self.state.gate.add_permits(count);
    }

    /// Requests seen so far.
    pub fn calls(&self) -> usize {
        lock(&self.state.arrivals).len()
    }

    pub fn arrivals(&self) -> Vec<Instant> {
        lock(&self.state.arrivals).clone()
    }

    pub fn bodies(&self) -> Vec<Value> {
        lock(&self.state.bodies).clone()
    }

    /// Waits until the server has seen `count` requests (bounded wait so a broken build fails).
    pub async fn wait_for_calls(&self, count: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.calls() < count {
            assert!(
                tokio::time::Instant::now() < deadline,
                "server saw {} calls, expected {count}",
                self.calls()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn chat_completions(
    State(state): State<Arc<ServerState>>,
    Json(body): Json<Value>,
) -> Response {
    lock(&state.arrivals).push(Instant::now());
    let perception =
        body.get("response_format").is_some() || body.to_string().contains("Player says to");
    lock(&state.bodies).push(body);
    let mode = *lock(&state.mode);
    match mode {
        Mode::Ok => {}
        Mode::Slow(delay) => tokio::time::sleep(delay).await,
        Mode::ServerError => {
            return (StatusCode::INTERNAL_SERVER_ERROR, "upstream exploded").into_response();
        }
        Mode::RateLimited => {
            let error = json!({"error": {"message": "slow down", "type": "rate_limit_error", "param": null, "code": null}});
            let mut response = (StatusCode::TOO_MANY_REQUESTS, Json(error)).into_response();
            if let Some(value) = lock(&state.retry_after).clone() {
                response.headers_mut().insert(
                    axum::http::header::RETRY_AFTER,
                    value.parse().expect("a header value"),
                );
            }
            return response;
        }
        Mode::Gated => {
            if let Ok(permit) = state.gate.acquire().await {
                permit.forget();
            }
        }
        Mode::Hang => std::future::pending::<()>().await,
        Mode::RefuseJsonSchema | Mode::RefuseResponseFormat => {
            let format = lock(&state.bodies)
                .last()
                .and_then(|body| body["response_format"]["type"].as_str().map(str::to_owned));
            let refused = match (mode, format.as_deref()) {
                (Mode::RefuseJsonSchema, Some("json_schema")) => Some((
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "response_format.type: Input should be 'text' or 'json_object'",
                )),
                (Mode::RefuseResponseFormat, Some(_)) => {
                    Some((StatusCode::BAD_REQUEST, "response_format is not supported"))
                }
                _ => None,
            };
            if let Some((status, message)) = refused {
                let error = json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}});
                return (status, Json(error)).into_response();
            }
        }
    }
    let usage = lock(&state.usage).map_or(Value::Null, |(prompt, completion)| {
        json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion})
    });
    let content = if perception {
        lock(&state.perception_reply).clone()
    } else {
        lock(&state.narration_reply).clone()
    };
    Json(json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }],
        "usage": usage
    }))
    .into_response()
}

pub fn always_occupied() -> Arc<dyn DeliveryGuard> {
    Arc::new(|_zone: &str, _room: &str| true)
}

pub struct Running {
    pub started: Started,
    stop: Option<oneshot::Sender<()>>,
}

impl Running {
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.started.worker.join).await;
    }
}

/// The worker over `config`'s providers and the shipped assets, until `stop`.
pub fn run(config: &LlmConfig, guard: Arc<dyn DeliveryGuard>) -> Running {
    run_with_clock(config, guard, Arc::new(geppetto_llm::SystemClock))
}

/// As [`run`], on `clock`.
pub fn run_with_clock(
    config: &LlmConfig,
    guard: Arc<dyn DeliveryGuard>,
    clock: Arc<dyn geppetto_llm::Clock>,
) -> Running {
    let providers = Providers::from_config(config, assets()).expect("providers build");
    let (stop, stopped) = oneshot::channel::<()>();
    let started = start_with_clock(config, providers, guard, 64, clock, async move {
        let _ = stopped.await;
    })
    .expect("worker starts");
    Running {
        started,
        stop: Some(stop),
    }
}

/// The shipped prompts, templates and rules.
pub fn assets() -> LlmAssets {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../config");
    load_assets_from_dir(&dir).expect("shipped config loads")
}

/// A config pointing at `base_url`, with limits loose enough not to interfere unless a test
/// tightens them.
pub fn config(base_url: &str) -> LlmConfig {
    LlmConfig {
        max_qps: 1000,
        rate_burst: 1000,
        calls_per_tick: 1000,
        provider: Some(OpenAiProviderConfig {
            name: "loopback".to_owned(),
            base_url: base_url.to_owned(),
            model: "test-model".to_owned(),
            api_key_env: "GEPPETTO_LLM_TEST_KEY_NEVER_SET".to_owned(),
            ..OpenAiProviderConfig::default()
        }),
        ..LlmConfig::default()
    }
}

pub fn narration(id: &str, room: &str, priority: Priority) -> NarrationRequest {
    NarrationRequest {
        interaction_id: id.to_owned(),
        zone: "village".to_owned(),
        room: room.to_owned(),
        initiator: Participant {
            id: "gundren".to_owned(),
            name: "Gundren".to_owned(),
        },
        target: Participant {
            id: "mira".to_owned(),
            name: "Mira".to_owned(),
        },
        interaction: "argue".to_owned(),
        mood: "tense".to_owned(),
        known: vec!["Captain Vell".to_owned()].into(),
        present: Vec::new(),
        priority,
        seed: 42,
        tags: geppetto_llm::SpendTags::default(),
    }
}

pub fn npc(id: &str, name: &str, zone: &str) -> NpcRef {
    NpcRef {
        id: id.to_owned(),
        name: name.to_owned(),
        zone: zone.to_owned(),
    }
}

pub fn perception(id: &str, text: &str) -> PerceptionRequest {
    PerceptionRequest {
        utterance_id: id.to_owned(),
        speaker: "player-1".to_owned(),
        text: text.to_owned(),
        context: PerceptionContext {
            zone: "village".to_owned(),
            room: "square".to_owned(),
            addressee: Some("mira".to_owned()),
            npcs: vec![
                npc("mira", "Mira", "village"),
                npc("gundren", "Gundren", "village"),
                npc("captain", "Captain Vell", "citadel"),
            ],
        },
        priority: Priority::Witnessed,
        seed: 7,
        tags: geppetto_llm::SpendTags::default(),
    }
}

/// The next output, failing the test if none comes in 10 s.
pub async fn next_output(output: &mut mpsc::Receiver<LlmOutput>) -> LlmOutput {
    tokio::time::timeout(Duration::from_secs(10), output.recv())
        .await
        .expect("an output arrives")
        .expect("output channel open")
}

/// Reads outputs until `count` non-breaker outputs arrived; returns (them, breaker events).
pub async fn collect(
    output: &mut mpsc::Receiver<LlmOutput>,
    count: usize,
) -> (Vec<LlmOutput>, Vec<geppetto_llm::BreakerEvent>) {
    let mut results = Vec::new();
    let mut breaker = Vec::new();
    while results.len() < count {
        match next_output(output).await {
            LlmOutput::Breaker(event) => breaker.push(event),
            other => results.push(other),
        }
    }
    (results, breaker)
}

/// Ids of narrations skipped for `reason`.
pub fn skipped_ids(
    outputs: &[LlmOutput],
    reason: geppetto_llm::FallbackReason,
) -> BTreeSet<String> {
    outputs
        .iter()
        .filter_map(|output| match output {
            LlmOutput::NarrationSkipped(skipped) if skipped.reason == reason => {
                Some(skipped.interaction_id.clone())
            }
            _ => None,
        })
        .collect()
}
