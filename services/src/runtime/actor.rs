//! The actor layer, kept behind [`ZoneHandle`] and [`ActorRuntime`] so a move from actix to
//! another actor library stays inside this file (actix is in passive maintenance).
//!
//! One `ZoneActor` per zone owns the zone's NPCs (each NPC an entity inside it, updated in
//! isolation): contention has to see the whole zone at once, and an actor per NPC — each
//! preparing itself and ranking its options, a coordinator reconciling them, for the same
//! events — costs a message round trip per due NPC a tick: on the same synthetic zone
//! (`services/benches/actors/`, BENCHMARKS.md) its tick p99 is 2.5× this actor's with
//! 10,000 Active NPCs (39–45 ms against 16–17 ms) and 2.4–3.2× with 100,000 residents in
//! tiers, for 1.1–1.4× the memory. Zones are spread over one Arbiter (one thread) per core,
//! and a zone's loop runs on its actor's thread ([`ZoneHandle::run_beside`]). Handlers are
//! synchronous — the core is — so no `&mut self` crosses an await.

use std::sync::{Arc, Mutex};

use actix::{Actor, Addr, Arbiter, ArbiterHandle, Context, Handler, Message, MessageResult};

use crate::bus::envelope::WorldMessage;
#[cfg(feature = "fault-injection")]
use crate::zone::Fault;
pub use crate::zone::ZoneStatus;
use crate::zone::{Clock, TickInputs, Zone, ZoneOutput};

/// What a zone's actor gives it with every batch beside the wall clock: the hooks of the load
/// generator and of fault injection. Empty in the service.
#[derive(Clone, Debug, Default)]
pub struct ZoneHooks {
    /// Where the load generator collects every tick duration, milliseconds.
    pub tick_sink: Option<Arc<Mutex<Vec<f64>>>>,
    /// Faults injected into NPCs' updates, by NPC id (tests of isolation and the governor).
    #[cfg(feature = "fault-injection")]
    pub faults: std::collections::BTreeMap<String, Fault>,
}

impl ZoneHooks {
    /// The hooks with every tick's duration, milliseconds, collected into `sink`.
    pub fn with_tick_sink(mut self, sink: Arc<Mutex<Vec<f64>>>) -> Self {
        self.tick_sink = Some(sink);
        self
    }

    /// The hooks with `fault` injected into `npc`'s updates.
    #[cfg(feature = "fault-injection")]
    pub fn with_fault(mut self, npc: &str, fault: Fault) -> Self {
        self.faults.insert(npc.to_owned(), fault);
        self
    }

    /// What the zone is given for a batch measured by `clock`.
    fn inputs<'a>(&'a self, clock: Clock<'a>) -> TickInputs<'a> {
        TickInputs {
            tick_sink: self.tick_sink.as_deref(),
            #[cfg(feature = "fault-injection")]
            faults: Some(&self.faults),
            ..TickInputs::live(clock)
        }
    }
}

/// The actor owning one zone.
struct ZoneActor {
    zone: Zone,
    hooks: ZoneHooks,
}

impl Actor for ZoneActor {
    type Context = Context<Self>;
}

/// Apply world messages in order; answers the outputs and the zone's status after them (one
/// round trip per batch).
struct Apply(Vec<WorldMessage>);

impl Message for Apply {
    type Result = (ZoneOutput, ZoneStatus);
}

impl Handler<Apply> for ZoneActor {
    type Result = MessageResult<Apply>;

    fn handle(&mut self, message: Apply, _: &mut Context<Self>) -> Self::Result {
        let mut out = ZoneOutput::default();
        let clock = crate::runtime::wall_clock();
        let inputs = self.hooks.inputs(&clock);
        for (position, world_message) in message.0.iter().enumerate() {
            let refused_before = out.refused.len();
            self.zone.apply(world_message, &inputs, &mut out);
            for refusal in &mut out.refused[refused_before..] {
                refusal.position = position;
            }
        }
        MessageResult((out, self.zone.status()))
    }
}

/// Run a read-only or mutating closure on the zone inside its actor.
struct With<F>(F);

impl<F, R> Message for With<F>
where
    F: FnOnce(&mut Zone) -> R + Send + 'static,
    R: Send + 'static,
{
    type Result = R;
}

impl<F, R> Handler<With<F>> for ZoneActor
where
    F: FnOnce(&mut Zone) -> R + Send + 'static,
    R: Send + 'static,
{
    type Result = MessageResult<With<F>>;

    fn handle(&mut self, message: With<F>, _: &mut Context<Self>) -> Self::Result {
        MessageResult((message.0)(&mut self.zone))
    }
}

/// The actor is gone (its arbiter stopped).
#[derive(Debug, thiserror::Error)]
#[error("zone `{0}` is not running")]
pub struct ZoneGone(pub String);

/// A cheap, cloneable handle to a running zone.
#[derive(Clone)]
pub struct ZoneHandle {
    /// Zone name.
    pub name: String,
    addr: Addr<ZoneActor>,
    /// The arbiter (thread) the actor runs on.
    arbiter: ArbiterHandle,
}

impl ZoneHandle {
    /// Applies world messages in order and returns the outputs and the status after them.
    pub async fn apply(
        &self,
        messages: Vec<WorldMessage>,
    ) -> Result<(ZoneOutput, ZoneStatus), ZoneGone> {
        self.addr
            .send(Apply(messages))
            .await
            .map_err(|_| ZoneGone(self.name.clone()))
    }

    /// Runs `f` on the zone inside its actor.
    pub async fn with<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Zone) -> R + Send + 'static,
    ) -> Result<R, ZoneGone> {
        self.addr
            .send(With(f))
            .await
            .map_err(|_| ZoneGone(self.name.clone()))
    }

    /// Runs `task` on the zone's own thread (its arbiter), beside its actor, and answers its
    /// output: what `task` asks of the actor is answered on the same thread, without a wake-up
    /// of another. Dropping the returned future drops `task` too, as dropping a task's own
    /// future would. `ZoneGone` when the arbiter has stopped or `task` panicked.
    pub async fn run_beside<T: Send + 'static>(
        &self,
        task: impl std::future::Future<Output = T> + Send + 'static,
    ) -> Result<T, ZoneGone> {
        let (mut reply, answer) = tokio::sync::oneshot::channel();
        let spawned = self.arbiter.spawn(async move {
            let output = tokio::select! {
                output = task => output,
                () = reply.closed() => return,
            };
            let _ = reply.send(output);
        });
        if !spawned {
            return Err(ZoneGone(self.name.clone()));
        }
        answer.await.map_err(|_| ZoneGone(self.name.clone()))
    }

    /// The zone's status (drains its measured tick durations).
    pub async fn status(&self) -> Result<ZoneStatus, ZoneGone> {
        self.with(Zone::status).await
    }
}

/// One Arbiter per worker thread; zones are placed round robin. Must be created inside a
/// running actix `System` (see [`crate::runtime`]).
pub struct ActorRuntime {
    arbiters: Vec<Arbiter>,
    next: std::sync::atomic::AtomicUsize,
}

impl ActorRuntime {
    /// `threads` arbiters (at least one).
    pub fn new(threads: usize) -> Self {
        Self {
            arbiters: (0..threads.max(1)).map(|_| Arbiter::new()).collect(),
            next: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Starts `zone` on the next arbiter.
    pub fn start(&self, zone: Zone) -> ZoneHandle {
        self.start_with(zone, ZoneHooks::default())
    }

    /// Starts `zone` on the next arbiter, given `hooks` with every batch.
    pub fn start_with(&self, zone: Zone, hooks: ZoneHooks) -> ZoneHandle {
        let name = zone.name.clone();
        let next = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let arbiter = &self.arbiters[next % self.arbiters.len()];
        let handle = arbiter.handle();
        let addr = ZoneActor::start_in_arbiter(&handle, move |_| ZoneActor { zone, hooks });
        ZoneHandle {
            name,
            addr,
            arbiter: handle,
        }
    }

    /// Stops every arbiter.
    pub fn stop(self) {
        for arbiter in self.arbiters {
            arbiter.stop();
            let _ = arbiter.join();
        }
    }
}
