//! The caller's side of the seams: synchronous, non-blocking calls a tick can make. It owns
//! placeholders (written at once by the template provider) and queueing; everything slow
//! happens in the worker. `start` wires a queue, a budget, a worker and an output channel in
//! one call for services that want the defaults.

use std::future::Future;
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::budget::TickBudget;
use crate::clock::{Clock, SystemClock};
use crate::config::LlmConfig;
use crate::narration::{DeliveryGuard, NarrationTicket};
use crate::queue::{LlmQueue, PushOutcome};
use crate::request::{LlmRequest, NarrationRequest, PerceptionRequest};
use crate::template::TemplateProvider;
use crate::worker::{LlmOutput, Providers, SpawnError, Worker, WorkerIo, spawn_worker};

/// Cheap-to-clone front of the LLM seams. Every method returns without awaiting.
#[derive(Debug, Clone)]
pub struct LlmHandle {
    queue: LlmQueue,
    budget: TickBudget,
    templates: Arc<TemplateProvider>,
}

impl LlmHandle {
    /// A handle over a queue, the budget the worker spends, and the template provider that
    /// writes placeholders.
    #[must_use]
    pub fn new(queue: LlmQueue, budget: TickBudget, templates: Arc<TemplateProvider>) -> Self {
        Self {
            queue,
            budget,
            templates,
        }
    }

    /// Returns the deterministic placeholder for an interaction at once and queues the
    /// request for model text, which arrives later as `LlmOutput::NarrativeReady`.
    pub fn narrate(&self, request: NarrationRequest) -> NarrationTicket {
        let placeholder = self.templates.narrate_now(&request);
        let queued = self.queue.push(LlmRequest::Narration(request));
        NarrationTicket {
            placeholder,
            queued,
        }
    }

    /// Queues an utterance for perception; the validated events arrive later as
    /// `LlmOutput::Perception`.
    pub fn perceive(&self, request: PerceptionRequest) -> PushOutcome {
        tracing::debug!(
            utterance_id = %request.utterance_id,
            utterance = %request.text,
            "perception requested"
        );
        self.queue.push(LlmRequest::Perception(request))
    }

    /// Marks a tick boundary: the per-tick call budget is full again.
    pub fn start_tick(&self) {
        self.budget.start_tick();
    }

    /// The queue (depth, drops).
    #[must_use]
    pub fn queue(&self) -> &LlmQueue {
        &self.queue
    }

    /// The per-tick budget.
    #[must_use]
    pub fn budget(&self) -> &TickBudget {
        &self.budget
    }
}

/// A started set of seams: the handle for the tick, the output for the service, the worker.
#[derive(Debug)]
pub struct Started {
    /// Enqueue side.
    pub handle: LlmHandle,
    /// Results, breaker transitions.
    pub output: mpsc::Receiver<LlmOutput>,
    /// The worker task and its counters.
    pub worker: Worker,
}

/// Builds the queue (`queue_capacity`), the budget (`calls_per_tick`) and an output channel
/// of `output_capacity` messages, and spawns the worker on the machine's clock until
/// `shutdown` resolves.
///
/// # Errors
/// As `spawn_worker`.
pub fn start<S>(
    config: &LlmConfig,
    providers: Providers,
    guard: Arc<dyn DeliveryGuard>,
    output_capacity: usize,
    shutdown: S,
) -> Result<Started, SpawnError>
where
    S: Future<Output = ()> + Send + 'static,
{
    start_with_clock(
        config,
        providers,
        guard,
        output_capacity,
        Arc::new(SystemClock),
        shutdown,
    )
}

/// As [`start`], on `clock` (the spend budget's windows, the 429 back-off, the breakers).
///
/// # Errors
/// As `spawn_worker`.
pub fn start_with_clock<S>(
    config: &LlmConfig,
    providers: Providers,
    guard: Arc<dyn DeliveryGuard>,
    output_capacity: usize,
    clock: Arc<dyn Clock>,
    shutdown: S,
) -> Result<Started, SpawnError>
where
    S: Future<Output = ()> + Send + 'static,
{
    let queue = LlmQueue::new(config.queue_capacity);
    let budget = TickBudget::new(config.calls_per_tick);
    let (sender, output) = mpsc::channel(output_capacity.max(1));
    let templates = providers.fallback();
    let worker = spawn_worker(
        queue.clone(),
        providers,
        WorkerIo {
            budget: budget.clone(),
            clock,
            guard,
            output: sender,
        },
        config,
        shutdown,
    )?;
    Ok(Started {
        handle: LlmHandle::new(queue, budget, templates),
        output,
        worker,
    })
}
