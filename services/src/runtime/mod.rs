//! What runs zones: each zone in an actor ([`actor`]), its loop over the world stream
//! ([`zone_loop`]) and what the admin API asks of it ([`zone_control`]), the world log ([`world_log`]), recovery from snapshots and the log
//! ([`recovery`]), leases and the cluster
//! ([`lease`], [`cluster`]), the zones running here ([`directory`]), the link to the LLM seams ([`llm_bridge`]) and their spend kept across restarts
//! ([`llm_spend`]), and metrics
//! ([`metrics`]).
//!
//! This file starts the async world: an actix `System` on a multi-threaded tokio runtime (actors
//! must never start under a bare `#[tokio::main]`). Tests and commands call [`block_on`].

pub mod actor;
pub mod cluster;
pub mod directory;
pub mod lease;
pub mod llm_bridge;
pub mod llm_spend;
pub mod metrics;
pub mod recovery;
pub mod starter;
pub mod world_log;
pub mod zone_control;
pub mod zone_loop;

use std::future::Future;
use std::time::{Duration, Instant};

/// The runtime could not be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the runtime: {0}")]
pub struct RuntimeError(#[from] std::io::Error);

/// Runs `future` to completion inside an actix `System` on a multi-threaded tokio runtime with
/// `worker_threads` workers.
pub fn block_on<F: Future>(worker_threads: usize, future: F) -> Result<F::Output, RuntimeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads.max(1))
        .enable_all()
        .build()?;
    let system = actix::System::with_tokio_rt(move || runtime);
    Ok(system.block_on(future))
}

/// The wall clock as a zone is given it (see [`crate::zone::TickInputs`]): monotonic, the time
/// since this call.
pub fn wall_clock() -> impl Fn() -> Duration + Send + Sync + 'static {
    let origin = Instant::now();
    move || origin.elapsed()
}

/// The machine's core count (at least 1).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}
