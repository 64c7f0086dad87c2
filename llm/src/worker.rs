//! The off-tick worker: one tokio task that drains the queue and serves each request through
//! the per-tick budget, the per-provider circuit breakers, the GCRA rate limiter and a per-call
//! timeout, falling back to the template provider whenever a model cannot serve: the keyword
//! rules read a player's line the model failed on, timed out on, answered with nothing valid
//! or could not be asked (breaker open, budget spent), and a narration keeps its template when
//! the model's answer fails [`NarrativeCheck`]. Every fallback is counted by reason. It owns
//! that policy and the output messages; it holds no NPC state and can reach none: everything
//! it learns leaves as an `LlmOutput` on the caller's channel.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use governor::{DefaultDirectRateLimiter, RateLimiter};
use serde::Serialize;
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};

use crate::assets::LlmAssets;
use crate::breaker::{BreakerState, CallResult, CircuitBreaker, Permit};
use crate::budget::TickBudget;
use crate::config::{ConfigError, LlmConfig, PerceptionLimits};
use crate::narration::{DeliveryGuard, NarrativeCheck, NarrativeReady};
use crate::openai::{OpenAiProvider, ProviderBuildError};
use crate::perception::{PerceptionOutcome, validate_candidates};
use crate::provider::{Provider, ProviderError};
use crate::queue::LlmQueue;
use crate::request::{LlmRequest, NarrationRequest, PerceptionRequest, Priority, Seam};
use crate::telemetry;
use crate::template::{TEMPLATE_PROVIDER_NAME, TemplateProvider};

geppetto_core::wire_enum! {
    /// Why a request was served by the template provider instead of a model.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum FallbackReason {
        /// No model provider is configured.
        NoProvider = "no_provider",
        /// Every provider's breaker refused the call.
        BreakerOpen = "breaker_open",
        /// The per-tick budget is spent.
        BudgetSpent = "budget_spent",
        /// The call failed (an HTTP error, a broken connection, an answer that is no
        /// completion).
        ProviderFailed = "provider_failed",
        /// The call outlived its ceiling.
        Timeout = "timeout",
        /// Perception: the model's text holds no candidate JSON.
        MalformedOutput = "malformed_output",
        /// Perception: the model proposed no event that passed the schema, and the keyword
        /// rules found one.
        NoValidEvent = "no_valid_event",
        /// Narration: the model's text failed the answer check.
        RejectedText = "rejected_text",
    }
}

impl FallbackReason {
    /// The reason a failed call stands for.
    fn of(error: &ProviderError) -> Self {
        match error {
            ProviderError::Timeout => FallbackReason::Timeout,
            ProviderError::MalformedOutput => FallbackReason::MalformedOutput,
            _ => FallbackReason::ProviderFailed,
        }
    }

    fn index(self) -> usize {
        Self::VARIANTS
            .iter()
            .position(|reason| *reason == self)
            .unwrap_or_default()
    }
}

/// No model text will come for this interaction: its placeholder stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NarrationSkipped {
    /// The interaction's id.
    pub interaction_id: String,
    /// Why.
    pub reason: FallbackReason,
}

/// The validated result of one utterance, for the caller to log and apply.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerceptionResult {
    /// The utterance's id.
    pub utterance_id: String,
    /// The zone the events belong to.
    pub zone: String,
    /// Accepted events and rejected candidates.
    pub outcome: PerceptionOutcome,
    /// Who proposed the candidates (a model's name, or `template` for the keyword rules).
    pub provider: String,
    /// Set when the keyword rules stood in for a model.
    pub fallback: Option<FallbackReason>,
}

/// A breaker changed state; the service may publish it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BreakerEvent {
    /// The provider.
    pub provider: String,
    /// State before.
    pub from: BreakerState,
    /// State now.
    pub to: BreakerState,
}

/// Everything the worker tells the caller.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LlmOutput {
    /// Model text for a narration, delivered because a player is still in the room.
    NarrativeReady(NarrativeReady),
    /// A narration that will get no model text.
    NarrationSkipped(NarrationSkipped),
    /// A perception's validated events and rejections.
    Perception(PerceptionResult),
    /// A breaker transition.
    Breaker(BreakerEvent),
}

/// The providers the worker may use, in order of preference, and the fallback.
#[derive(Clone)]
pub struct Providers {
    models: Vec<Arc<dyn Provider>>,
    fallback: Arc<TemplateProvider>,
}

impl std::fmt::Debug for Providers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Providers")
            .field(
                "models",
                &self.models.iter().map(|p| p.name()).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Providers {
    /// Only the template provider.
    #[must_use]
    pub fn new(fallback: TemplateProvider) -> Self {
        Self {
            models: Vec::new(),
            fallback: Arc::new(fallback),
        }
    }

    /// Adds a model provider after the ones already added; each gets its own breaker.
    #[must_use]
    pub fn with_model(mut self, provider: Arc<dyn Provider>) -> Self {
        self.models.push(provider);
        self
    }

    /// The template provider plus, when the config names one, the OpenAI-compatible
    /// provider with its key from the environment.
    ///
    /// # Errors
    /// An invalid provider config or an HTTP client that cannot be built.
    pub fn from_config(config: &LlmConfig, assets: LlmAssets) -> Result<Self, ProviderBuildError> {
        let fallback = TemplateProvider::new(
            assets.narration_templates,
            assets.perception_rules,
            config.perception.max_utterance_chars,
        );
        let providers = Self::new(fallback);
        match &config.provider {
            None => Ok(providers),
            Some(provider) => {
                let ceiling = config
                    .call_timeout()
                    .max(config.witnessed_narration_timeout());
                let model = OpenAiProvider::from_env(
                    provider,
                    assets.prompts,
                    config.perception.clone(),
                    ceiling,
                )?;
                Ok(providers.with_model(Arc::new(model)))
            }
        }
    }

    /// The template provider (also used for placeholders).
    #[must_use]
    pub fn fallback(&self) -> Arc<TemplateProvider> {
        Arc::clone(&self.fallback)
    }
}

/// Counters of what the worker did, readable while it runs.
#[derive(Debug, Clone, Default)]
pub struct WorkerStats {
    counters: Arc<Counters>,
}

/// Answered calls whose latency is kept for the percentiles (the most recent ones).
const LATENCY_SAMPLES: usize = 4096;

#[derive(Debug, Default)]
struct Counters {
    calls_succeeded: AtomicU64,
    calls_failed: AtomicU64,
    fallbacks: [AtomicU64; FallbackReason::VARIANTS.len()],
    narratives_delivered: AtomicU64,
    narratives_discarded: AtomicU64,
    narrations_skipped: AtomicU64,
    perceptions: AtomicU64,
    answered_ms: Mutex<VecDeque<u64>>,
}

/// A snapshot of `WorkerStats`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct WorkerCounts {
    /// Provider calls that succeeded.
    pub calls_succeeded: u64,
    /// Provider calls that failed or timed out.
    pub calls_failed: u64,
    /// Requests the templates or keyword rules served instead of a model, in all.
    pub fallbacks: u64,
    /// The same, by reason (every reason, in declaration order).
    pub fallbacks_by_reason: Vec<(FallbackReason, u64)>,
    /// Narratives delivered.
    pub narratives_delivered: u64,
    /// Narratives discarded by the delivery guard (before or after the call).
    pub narratives_discarded: u64,
    /// Narrations that got no model text.
    pub narrations_skipped: u64,
    /// Perception results emitted.
    pub perceptions: u64,
    /// Median latency of the answered calls, in milliseconds (none before the first).
    pub latency_p50_ms: Option<u64>,
    /// 99th percentile of the same.
    pub latency_p99_ms: Option<u64>,
}

impl WorkerStats {
    /// Current values.
    #[must_use]
    pub fn snapshot(&self) -> WorkerCounts {
        let c = &self.counters;
        let read = |counter: &AtomicU64| counter.load(Ordering::Acquire);
        let fallbacks_by_reason: Vec<(FallbackReason, u64)> = FallbackReason::VARIANTS
            .iter()
            .map(|reason| (*reason, read(&c.fallbacks[reason.index()])))
            .collect();
        let mut answered: Vec<u64> = lock(&c.answered_ms).iter().copied().collect();
        answered.sort_unstable();
        WorkerCounts {
            calls_succeeded: read(&c.calls_succeeded),
            calls_failed: read(&c.calls_failed),
            fallbacks: fallbacks_by_reason.iter().map(|(_, n)| n).sum(),
            fallbacks_by_reason,
            narratives_delivered: read(&c.narratives_delivered),
            narratives_discarded: read(&c.narratives_discarded),
            narrations_skipped: read(&c.narrations_skipped),
            perceptions: read(&c.perceptions),
            latency_p50_ms: percentile(&answered, 50),
            latency_p99_ms: percentile(&answered, 99),
        }
    }

    fn fallback(&self, seam: Seam, reason: FallbackReason) {
        bump(&self.counters.fallbacks[reason.index()]);
        telemetry::fallback(seam, reason.as_str());
    }

    fn answered(&self, took: Duration) {
        let mut answered = lock(&self.counters.answered_ms);
        if answered.len() == LATENCY_SAMPLES {
            answered.pop_front();
        }
        answered.push_back(u64::try_from(took.as_millis()).unwrap_or(u64::MAX));
    }
}

/// The `pct`th percentile (nearest rank) of sorted values.
fn percentile(sorted: &[u64], pct: usize) -> Option<u64> {
    let rank = (sorted.len() * pct).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::AcqRel);
}

/// What the worker shares with the caller besides the queue and the providers.
#[derive(Clone)]
pub struct WorkerIo {
    /// The per-tick budget (the caller calls `start_tick` at each boundary).
    pub budget: TickBudget,
    /// Asked before each narrative is delivered.
    pub guard: Arc<dyn DeliveryGuard>,
    /// Where results go. Bounded: a slow reader slows the worker, the queue then sheds.
    pub output: mpsc::Sender<LlmOutput>,
}

/// Why the worker could not start.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// Called outside a tokio runtime.
    #[error("spawn_worker must be called inside a tokio runtime")]
    NoRuntime,
    /// The config cannot work.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// The running worker.
#[derive(Debug)]
pub struct Worker {
    /// Resolves when the worker stopped (after the shutdown signal).
    pub join: JoinHandle<()>,
    /// Its counters.
    pub stats: WorkerStats,
}

/// Starts the worker task draining `queue` until `shutdown` resolves. In-flight calls are
/// abandoned at shutdown.
///
/// # Errors
/// No tokio runtime, or a config that cannot work.
pub fn spawn_worker<S>(
    queue: LlmQueue,
    providers: Providers,
    io: WorkerIo,
    config: &LlmConfig,
    shutdown: S,
) -> Result<Worker, SpawnError>
where
    S: Future<Output = ()> + Send + 'static,
{
    config.validate()?;
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| SpawnError::NoRuntime)?;
    let limiter = RateLimiter::direct(config.quota()?);
    let stats = WorkerStats::default();
    let slots = providers
        .models
        .into_iter()
        .map(|provider| {
            telemetry::breaker_state(provider.name(), BreakerState::Closed);
            Slot {
                check: NarrativeCheck::new(
                    provider.narration_instructions(),
                    config.narration_max_chars,
                ),
                provider,
                breaker: Mutex::new(CircuitBreaker::from_config(&config.breaker)),
            }
        })
        .collect();
    let shared = Arc::new(Shared {
        slots,
        fallback: providers.fallback,
        io,
        stats: stats.clone(),
        call_timeout: config.call_timeout(),
        witnessed_narration_timeout: config.witnessed_narration_timeout(),
        limits: config.perception.clone(),
    });
    let join = runtime.spawn(run(
        queue,
        shared,
        limiter,
        config.max_in_flight_calls,
        shutdown,
    ));
    Ok(Worker { join, stats })
}

struct Slot {
    provider: Arc<dyn Provider>,
    // A std Mutex: held for one state-machine step, never across `.await`.
    breaker: Mutex<CircuitBreaker>,
    /// What this provider's narrations must pass.
    check: NarrativeCheck,
}

impl Slot {
    fn breaker(&self) -> MutexGuard<'_, CircuitBreaker> {
        lock(&self.breaker)
    }
}

struct Shared {
    slots: Vec<Slot>,
    fallback: Arc<TemplateProvider>,
    io: WorkerIo,
    stats: WorkerStats,
    call_timeout: Duration,
    witnessed_narration_timeout: Duration,
    limits: PerceptionLimits,
}

enum Route {
    Call {
        slot: usize,
        permit: Permit,
        transition: Option<BreakerEvent>,
    },
    Fallback(FallbackReason),
}

async fn run<S>(
    queue: LlmQueue,
    shared: Arc<Shared>,
    limiter: DefaultDirectRateLimiter,
    max_in_flight: usize,
    shutdown: S,
) where
    S: Future<Output = ()> + Send,
{
    tokio::pin!(shutdown);
    let mut in_flight = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            () = &mut shutdown => break,
            Some(joined) = in_flight.join_next(), if !in_flight.is_empty() => {
                if let Err(error) = joined {
                    tracing::error!(%error, "llm call task failed");
                }
            }
            request = queue.pop(), if in_flight.len() < max_in_flight => {
                if let LlmRequest::Narration(narration) = &request
                    && !shared.room_has_player(narration)
                {
                    shared.discard(narration);
                    continue;
                }
                match shared.route() {
                    Route::Fallback(reason) => {
                        in_flight.spawn(Arc::clone(&shared).serve_fallback(request, reason));
                    }
                    Route::Call { slot, permit, transition } => {
                        tokio::select! {
                            biased;
                            () = &mut shutdown => break,
                            _ = limiter.until_ready() => {}
                        }
                        in_flight.spawn(
                            Arc::clone(&shared).serve_call(slot, permit, transition, request),
                        );
                    }
                }
            }
        }
    }
    in_flight.abort_all();
    tracing::info!("llm worker stopped");
}

impl Shared {
    /// Chooses how to serve the next request: the first provider whose breaker admits a
    /// call, if the tick budget allows one, else the template provider.
    fn route(&self) -> Route {
        if self.slots.is_empty() {
            return Route::Fallback(FallbackReason::NoProvider);
        }
        if !self.io.budget.try_spend() {
            return Route::Fallback(FallbackReason::BudgetSpent);
        }
        let now = Instant::now();
        for (index, slot) in self.slots.iter().enumerate() {
            let mut breaker = slot.breaker();
            let before = breaker.state();
            if let Ok(permit) = breaker.admit(now) {
                let after = breaker.state();
                drop(breaker);
                let transition = (before != after).then(|| {
                    telemetry::breaker_state(slot.provider.name(), after);
                    BreakerEvent {
                        provider: slot.provider.name().to_owned(),
                        from: before,
                        to: after,
                    }
                });
                return Route::Call {
                    slot: index,
                    permit,
                    transition,
                };
            }
        }
        self.io.budget.refund();
        Route::Fallback(FallbackReason::BreakerOpen)
    }

    async fn emit(&self, message: LlmOutput) {
        if self.io.output.send(message).await.is_err() {
            tracing::debug!("llm output receiver gone; message dropped");
        }
    }

    fn timeout_for(&self, request: &LlmRequest) -> Duration {
        match request {
            LlmRequest::Narration(narration) if narration.priority == Priority::Witnessed => {
                self.witnessed_narration_timeout
            }
            LlmRequest::Narration(_) | LlmRequest::Perception(_) => self.call_timeout,
        }
    }

    async fn serve_fallback(self: Arc<Self>, request: LlmRequest, reason: FallbackReason) {
        match request {
            LlmRequest::Narration(narration) => self.skip_narration(&narration, reason).await,
            LlmRequest::Perception(perception) => {
                self.perceive_with_rules(&perception, reason).await;
            }
        }
    }

    async fn serve_call(
        self: Arc<Self>,
        slot_index: usize,
        permit: Permit,
        transition: Option<BreakerEvent>,
        request: LlmRequest,
    ) {
        if let Some(transition) = transition {
            self.emit(LlmOutput::Breaker(transition)).await;
        }
        let Some(slot) = self.slots.get(slot_index) else {
            return;
        };
        let provider = Arc::clone(&slot.provider);
        let ceiling = self.timeout_for(&request);
        let started = Instant::now();
        match request {
            LlmRequest::Narration(narration) => {
                let result = with_ceiling(ceiling, provider.narrate(&narration)).await;
                self.finish_call(slot_index, permit, Seam::Narration, &result, started)
                    .await;
                match result.map(|text| slot.check.check(&text, &narration)) {
                    Ok(Ok(text)) => self.deliver(&narration, text, provider.name()).await,
                    Ok(Err(rejection)) => {
                        telemetry::narrative_rejected(rejection.as_str());
                        tracing::debug!(
                            interaction_id = %narration.interaction_id,
                            reason = rejection.as_str(),
                            "model narration refused; the template stands"
                        );
                        self.skip_narration(&narration, FallbackReason::RejectedText)
                            .await;
                    }
                    Err(error) => {
                        self.skip_narration(&narration, FallbackReason::of(&error))
                            .await;
                    }
                }
            }
            LlmRequest::Perception(perception) => {
                let result = with_ceiling(ceiling, provider.perceive(&perception)).await;
                self.finish_call(slot_index, permit, Seam::Perception, &result, started)
                    .await;
                match result {
                    Ok(candidates) => {
                        let outcome = validate_candidates(&candidates, &perception, &self.limits);
                        self.model_perceived(&perception, outcome, provider.name())
                            .await;
                    }
                    Err(error) => {
                        if error == ProviderError::MalformedOutput {
                            PerceptionOutcome::malformed().record_metrics();
                        }
                        self.perceive_with_rules(&perception, FallbackReason::of(&error))
                            .await;
                    }
                }
            }
        }
    }

    /// Emits what the model perceived; when none of its candidates passed, the keyword rules
    /// read the line too, and stand in if they find an event.
    async fn model_perceived(
        &self,
        perception: &PerceptionRequest,
        outcome: PerceptionOutcome,
        provider: &str,
    ) {
        if outcome.events.is_empty() {
            let candidates = self.fallback.perceive_now(perception);
            let rules = validate_candidates(&candidates, perception, &self.limits);
            if !rules.events.is_empty() {
                // The model's refused candidates still count in the metrics.
                outcome.record_metrics();
                self.stats
                    .fallback(Seam::Perception, FallbackReason::NoValidEvent);
                self.emit_perception(
                    perception,
                    rules,
                    TEMPLATE_PROVIDER_NAME,
                    Some(FallbackReason::NoValidEvent),
                )
                .await;
                return;
            }
        }
        self.emit_perception(perception, outcome, provider, None)
            .await;
    }

    /// Records a call's result in its breaker, its metrics and counters, and publishes a
    /// breaker transition if there was one.
    async fn finish_call<T>(
        &self,
        slot_index: usize,
        permit: Permit,
        seam: Seam,
        result: &Result<T, ProviderError>,
        started: Instant,
    ) {
        let Some(slot) = self.slots.get(slot_index) else {
            return;
        };
        let name = slot.provider.name();
        let (outcome, breaker_result) = match result {
            Ok(_) => ("ok", CallResult::Success),
            Err(error) if !error.is_provider_failure() => (error.as_str(), CallResult::Success),
            Err(error) => (error.as_str(), CallResult::Failure),
        };
        let took = started.elapsed();
        telemetry::call_finished(name, seam, outcome, took);
        match breaker_result {
            CallResult::Success => {
                bump(&self.stats.counters.calls_succeeded);
                self.stats.answered(took);
            }
            CallResult::Failure => {
                bump(&self.stats.counters.calls_failed);
                tracing::warn!(
                    provider = name,
                    seam = seam.as_str(),
                    outcome,
                    "llm call failed"
                );
            }
        }
        let (before, after) = {
            let mut breaker = slot.breaker();
            let before = breaker.state();
            breaker.record(permit, breaker_result, Instant::now());
            (before, breaker.state())
        };
        if before != after {
            telemetry::breaker_state(name, after);
            tracing::warn!(
                provider = name,
                from = before.as_str(),
                to = after.as_str(),
                "llm circuit breaker changed state"
            );
            self.emit(LlmOutput::Breaker(BreakerEvent {
                provider: name.to_owned(),
                from: before,
                to: after,
            }))
            .await;
        }
    }

    fn room_has_player(&self, narration: &NarrationRequest) -> bool {
        self.io
            .guard
            .room_has_player(&narration.zone, &narration.room)
    }

    /// Counts a narration nobody is left to read.
    fn discard(&self, narration: &NarrationRequest) {
        bump(&self.stats.counters.narratives_discarded);
        telemetry::narrative_discarded();
        tracing::debug!(
            interaction_id = %narration.interaction_id,
            room = %narration.room,
            "narrative discarded: no player left in the room"
        );
    }

    async fn deliver(&self, narration: &NarrationRequest, text: String, provider: &str) {
        if self.room_has_player(narration) {
            bump(&self.stats.counters.narratives_delivered);
            telemetry::narrative_delivered();
            self.emit(LlmOutput::NarrativeReady(NarrativeReady {
                interaction_id: narration.interaction_id.clone(),
                zone: narration.zone.clone(),
                room: narration.room.clone(),
                text,
                provider: provider.to_owned(),
            }))
            .await;
        } else {
            self.discard(narration);
        }
    }

    /// The template stands for `narration`, for `reason`.
    async fn skip_narration(&self, narration: &NarrationRequest, reason: FallbackReason) {
        self.stats.fallback(Seam::Narration, reason);
        bump(&self.stats.counters.narrations_skipped);
        self.emit(LlmOutput::NarrationSkipped(NarrationSkipped {
            interaction_id: narration.interaction_id.clone(),
            reason,
        }))
        .await;
    }

    /// The keyword rules read `perception` in the model's place, for `reason`.
    async fn perceive_with_rules(&self, perception: &PerceptionRequest, reason: FallbackReason) {
        self.stats.fallback(Seam::Perception, reason);
        let candidates = self.fallback.perceive_now(perception);
        let outcome = validate_candidates(&candidates, perception, &self.limits);
        self.emit_perception(perception, outcome, TEMPLATE_PROVIDER_NAME, Some(reason))
            .await;
    }

    async fn emit_perception(
        &self,
        perception: &PerceptionRequest,
        outcome: PerceptionOutcome,
        provider: &str,
        fallback: Option<FallbackReason>,
    ) {
        outcome.record_metrics();
        bump(&self.stats.counters.perceptions);
        self.emit(LlmOutput::Perception(PerceptionResult {
            utterance_id: perception.utterance_id.clone(),
            zone: perception.context.zone.clone(),
            outcome,
            provider: provider.to_owned(),
            fallback,
        }))
        .await;
    }
}

async fn with_ceiling<T>(
    ceiling: Duration,
    call: impl Future<Output = Result<T, ProviderError>>,
) -> Result<T, ProviderError> {
    tokio::time::timeout(ceiling, call)
        .await
        .unwrap_or(Err(ProviderError::Timeout))
}
