//! geppetto-llm: the two LLM seams of geppetto — narration (events → text) and perception
//! (text → candidate events) — and the machinery that keeps them off the tick and bounded: a
//! three-class priority queue that sheds the least important work, a GCRA rate limiter, a
//! per-tick call budget, token and money allowances over rolling hours and days, per-call
//! timeouts, a circuit breaker per provider, a back-off after a provider's 429, the
//! accounting of every call's tokens and cost, and a deterministic template provider that
//! stands in whenever a model cannot.
//!
//! What this crate deliberately does not do: it never touches NPC state (requests are owned
//! immutable data, results are `LlmOutput` messages the service logs and applies), it never
//! trusts a model (perceived events pass a closed schema with clamping), it never blocks the
//! caller (`LlmHandle` methods are synchronous and never wait), and it reads no files except
//! through the optional `load_assets_from_dir` helper.
//!
//! Typical wiring in a service:
//! 1. `load_assets_from_dir` (or the `from_yaml_str` functions) and `LlmConfig`;
//! 2. `Providers::from_config`, then `start` (or `LlmQueue::new` + `spawn_worker`);
//! 3. per tick: `handle.start_tick()`, `handle.narrate(..)` / `handle.perceive(..)`;
//! 4. drain `output` and publish `NarrativeReady`, perception events and breaker events.

pub mod assets;
pub mod backoff;
pub mod breaker;
pub mod budget;
pub mod clock;
pub mod config;
pub mod file_error;
pub mod handle;
pub mod narration;
pub mod openai;
pub mod perception;
pub mod provider;
pub mod queue;
pub mod request;
pub mod secret;
pub mod spend;
pub mod spend_budget;
pub mod spend_handle;
pub mod structured;
pub mod structured_mode;
pub mod telemetry;
pub mod template;
pub mod usage;
pub mod worker;

pub use assets::{LlmAssets, NarrationTemplates, PerceptionRules, PromptSet, load_assets_from_dir};
pub use backoff::{Backoff, RetryAfter};
pub use breaker::{BreakerState, CallResult, CircuitBreaker, Permit, Rejected};
pub use budget::TickBudget;
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{
    BreakerConfig, BudgetConfig, ConfigError, LlmConfig, ModelPrice, OpenAiProviderConfig,
    PerceptionLimits,
};
pub use file_error::AssetError;
pub use handle::{LlmHandle, Started, start, start_with_clock};
pub use narration::{
    DeliveryGuard, NarrationTicket, NarrativeCheck, NarrativeReady, NarrativeRejection,
};
pub use openai::{ApiKey, OpenAiProvider, ProviderBuildError};
pub use perception::{
    EventType, GossipTone, PerceivedEvent, PerceptionOutcome, Rejection, RejectionReason,
    SocialKind, validate_candidates,
};
pub use provider::{Metered, Provider, ProviderError, ProviderFuture};
pub use queue::{DroppedRequest, LlmQueue, PushOutcome};
pub use request::{
    LlmRequest, NarrationRequest, NpcRef, Participant, PerceptionContext, PerceptionRequest,
    Priority, Seam, SpendTags,
};
pub use secret::{Secret, SecretError, read_secret};
pub use spend::{CallSummary, SpendCounts, SpendLedger, SpendTotals};
pub use spend_budget::{Amount, Scope, SpendBudget, SpentMinute, SpentRecord};
pub use spend_handle::SpendBudgetHandle;
pub use structured::{LearnedMode, StructuredMode};
pub use template::TemplateProvider;
pub use usage::{Price, Usage};
pub use worker::{
    BreakerEvent, FallbackReason, LlmOutput, NarrationSkipped, PerceptionResult, Providers,
    SpawnError, Worker, WorkerCounts, WorkerIo, WorkerStats, spawn_worker,
};
