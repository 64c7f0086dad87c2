//! The off-tick worker: one tokio task that drains the queue and serves each request through
//! the per-tick budget, the per-provider circuit breakers, the GCRA rate limiter and a per-call
//! timeout, falling back to the template provider whenever a model cannot serve: the keyword
//! rules read a player's line the model failed on, timed out on, answered with nothing valid
//! or could not be asked (breaker open, budget spent), and a narration keeps its template when
//! the model's answer fails [`NarrativeCheck`]. Every fallback is counted by reason. Before a
//! call it reserves the call's size in the spend budget (`spend_budget`; refused: reason
//! `spend_budget`) and skips a provider backing off after a 429 (`backoff`; reason
//! `rate_limited`); after it, it settles the reservation and accounts the tokens and cost
//! (`spend`): the server's usage, or for a call that may have generated without a usable
//! answer (a timeout, output that is no candidate JSON or no completion) what was reserved,
//! marked estimated; a call refused outright (an HTTP error, a 429, a broken connection) spent
//! nothing. It owns that policy and the output messages; it holds no NPC state and can reach
//! none: everything it learns leaves as an `LlmOutput` on the caller's channel.
//!
//! The folder: this file (the outputs, the worker's parts and its loop), [`calls`] (serving one
//! request) and [`stats`] (the counters).

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
use crate::backoff::Backoff;
use crate::breaker::{BreakerState, CallResult, CircuitBreaker, Permit};
use crate::budget::TickBudget;
use crate::clock::Clock;
use crate::config::{ConfigError, LlmConfig, PerceptionLimits};
use crate::narration::{DeliveryGuard, NarrativeCheck, NarrativeReady};
use crate::openai::{OpenAiProvider, ProviderBuildError};
use crate::perception::{PerceptionOutcome, validate_candidates};
use crate::provider::{Metered, Provider, ProviderError};
use crate::queue::LlmQueue;
use crate::request::{LlmRequest, NarrationRequest, PerceptionRequest, Priority, Seam};
use crate::spend::{CallRecord, SpendCounts, SpendLedger};
use crate::spend_budget::{Amount, Reservation, SpendBudget};
use crate::spend_handle::SpendBudgetHandle;
use crate::telemetry;
use crate::template::{TEMPLATE_PROVIDER_NAME, TemplateProvider};
use crate::usage::{Price, Usage};

mod calls;
mod stats;

pub use stats::{WorkerCounts, WorkerStats};

geppetto_wire_enum::wire_enum! {
    /// Why a request was served by the template provider instead of a model.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum FallbackReason {
        /// No model provider is configured.
        NoProvider = "no_provider",
        /// Every provider's breaker refused the call.
        BreakerOpen = "breaker_open",
        /// The per-tick budget is spent.
        BudgetSpent = "budget_spent",
        /// The `[llm.budget]` allowance (the whole budget, or the seam's, class's or tier's
        /// share of it) has no room for the call.
        SpendBudget = "spend_budget",
        /// The provider answered HTTP 429, or is still inside the back-off one started.
        RateLimited = "rate_limited",
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
            ProviderError::RateLimited { .. } => FallbackReason::RateLimited,
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
    /// The clock of the spend budget's windows, the 429 back-off and the breakers.
    pub clock: Arc<dyn Clock>,
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
    /// Its spend budget: what it spent (to read, save and restore across restarts) and the
    /// allowances in force (to read and change).
    pub spend: SpendBudgetHandle,
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
    let stats = WorkerStats::new(config.recent_calls);
    let slots = providers
        .models
        .into_iter()
        .map(|provider| {
            telemetry::breaker_state(provider.name(), BreakerState::Closed);
            let money_limited =
                config.budget.money_per_hour.is_some() || config.budget.money_per_day.is_some();
            if money_limited && !config.prices.contains_key(provider.model()) {
                tracing::warn!(
                    provider = provider.name(),
                    model = provider.model(),
                    "no [llm.prices] entry for the model: its calls cost nothing against the money allowances"
                );
            }
            Slot {
                check: NarrativeCheck::new(
                    provider.narration_instructions(),
                    config.narration_max_chars,
                ),
                price: config.price_of(provider.model()),
                provider,
                breaker: Mutex::new(CircuitBreaker::from_config(&config.breaker)),
                backoff: Mutex::new(Backoff::default()),
            }
        })
        .collect();
    let spend = SpendBudgetHandle::new(
        SpendBudget::from_config(&config.budget, io.clock.now()),
        Arc::clone(&io.clock),
    );
    let shared = Arc::new(Shared {
        slots,
        spend: spend.clone(),
        rate_limited_backoff: config.rate_limited_backoff(),
        rate_limited_max_backoff: config.rate_limited_max_backoff(),
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
    Ok(Worker { join, stats, spend })
}

struct Slot {
    provider: Arc<dyn Provider>,
    // A std Mutex: held for one state-machine step, never across `.await`.
    breaker: Mutex<CircuitBreaker>,
    /// Set by a 429: no call before it ends.
    backoff: Mutex<Backoff>,
    /// What this provider's model costs.
    price: Price,
    /// What this provider's narrations must pass.
    check: NarrativeCheck,
}

impl Slot {
    fn breaker(&self) -> MutexGuard<'_, CircuitBreaker> {
        lock(&self.breaker)
    }

    fn allows(&self, now: Instant) -> bool {
        lock(&self.backoff).allows(now)
    }
}

/// One admitted call: where it goes and what it holds.
struct Call {
    slot: usize,
    permit: Permit,
    transition: Option<BreakerEvent>,
    /// The call's estimated size (accounted for a call that may have generated without a
    /// usable answer).
    estimate: Usage,
    /// Its hold on the spend budget.
    booking: Reservation,
}

struct Shared {
    slots: Vec<Slot>,
    spend: SpendBudgetHandle,
    rate_limited_backoff: Duration,
    rate_limited_max_backoff: Duration,
    fallback: Arc<TemplateProvider>,
    io: WorkerIo,
    stats: WorkerStats,
    call_timeout: Duration,
    witnessed_narration_timeout: Duration,
    limits: PerceptionLimits,
}

enum Route {
    Call(Call),
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
                match shared.route(&request) {
                    Route::Fallback(reason) => {
                        in_flight.spawn(Arc::clone(&shared).serve_fallback(request, reason));
                    }
                    Route::Call(call) => {
                        tokio::select! {
                            biased;
                            () = &mut shutdown => break,
                            _ = limiter.until_ready() => {}
                        }
                        in_flight.spawn(Arc::clone(&shared).serve_call(call, request));
                    }
                }
            }
        }
    }
    in_flight.abort_all();
    tracing::info!("llm worker stopped");
}
