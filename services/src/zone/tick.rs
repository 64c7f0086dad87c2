//! The tick: tier steps, who is due and in which order (`due`), each due NPC prepared in
//! isolation under the governor's ceilings, the decision cap, one contention-resolving finish
//! for the whole zone, the governor's record and isolation's events, then the core's events
//! emitted (`emit`) and the social step (`social`), each phase a function of its own. Also the
//! analytic catch-up over a time jump.
//! Measuring NPC work needs a clock, which the tick is given, never reads.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::time::Duration;

use geppetto_core::ProviderIndex;
use geppetto_core::life::action::DetailLevel;
use geppetto_core::life::catch_up::{CatchUpConfig, CatchUpRequest};
use geppetto_core::life::simulator::{Prepared, SimEvent, Stage, TickRequest};
use geppetto_core::rng::{derive_seed, stable_hash};

use super::due::{Due, WARM_AHEAD, warm};
use super::status::Marked;
use super::{Zone, ZoneOutput};
use crate::bus::StreamKind;
use crate::bus::envelope::{GovernorDecision, NpcEvent, WorldEvent, WorldMessage};
use crate::zone::governor::Verdict;
use crate::zone::tiers::Tier;

/// Tick durations kept for the metrics between two reads at most (older ones are dropped).
pub const MAX_BUFFERED_TICK_DURATIONS: usize = 4096;

/// A tick's phases in order, as a [`TickInputs::phase_sink`] receives their times: the tick's
/// start and the tier steps, the due list (the slower tiers' records read ahead), preparing
/// the due NPCs, the zone's finish (decisions and contention), the governor's record and
/// isolation, the core's events emitted (and the moods reported), and the social step with the
/// story signals.
pub const TICK_PHASES: [&str; 7] = [
    "tiers", "due", "prepare", "finish", "governor", "emit", "social",
];

/// Milliseconds each of a tick's [`TICK_PHASES`] took.
pub type PhaseTimes = [f64; TICK_PHASES.len()];

/// A fault injected into one NPC's update, for tests of isolation and the governor.
#[cfg(feature = "fault-injection")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Every update panics.
    Panic,
    /// Every update first sleeps this many milliseconds.
    SlowMs(u64),
}

/// The caller's monotonic clock: the time since an origin of its choosing. The zone only
/// subtracts two readings (the governor's ceilings, tick durations) and never reads the wall
/// clock itself.
pub type Clock<'a> = &'a (dyn Fn() -> Duration + Sync);

/// The governor's logged decisions by tick: what a replay applies instead of measuring.
pub type GovernorScript = BTreeMap<u64, GovernorDecision>;

/// What a zone is given to apply messages and run the ticks they call for, built by its caller
/// for each call and kept by none: the clock NPC work is measured by, and the hooks of the
/// modes other than live processing (replaying a log, the load generator, fault injection).
#[derive(Clone, Copy)]
pub struct TickInputs<'a> {
    /// The clock NPC work is measured by.
    pub clock: Clock<'a>,
    /// While replaying a log: the governor's logged decisions by tick, applied instead of the
    /// clock's (a tick with none processed every NPC). A replayed `say` is not handed to
    /// perception (its perceived events are in the log), and nothing new is written to the
    /// world stream. `None` when live.
    pub replay: Option<&'a GovernorScript>,
    /// Where the load generator collects every tick duration, milliseconds (None in service).
    pub tick_sink: Option<&'a Mutex<Vec<f64>>>,
    /// Where a benchmark collects the time of each phase of every tick (None in service: the
    /// clock is then read only where the governor needs it).
    pub phase_sink: Option<&'a Mutex<Vec<PhaseTimes>>>,
    /// Faults injected into NPCs' updates, by NPC id (tests of isolation and the governor).
    #[cfg(feature = "fault-injection")]
    pub faults: Option<&'a BTreeMap<String, Fault>>,
}

impl<'a> TickInputs<'a> {
    /// Live processing measured by `clock`, without hooks.
    pub fn live(clock: Clock<'a>) -> Self {
        Self {
            clock,
            replay: None,
            tick_sink: None,
            phase_sink: None,
            #[cfg(feature = "fault-injection")]
            faults: None,
        }
    }

    /// Replaying a log whose governor decisions are `script`.
    pub fn replaying(clock: Clock<'a>, script: &'a GovernorScript) -> Self {
        Self {
            replay: Some(script),
            ..Self::live(clock)
        }
    }
}

impl Zone {
    pub(super) fn scripted_verdict(logged: Option<&GovernorDecision>, npc: &str) -> Verdict {
        match logged {
            Some(d) if d.skipped.iter().any(|id| id == npc) => Verdict::Skip,
            Some(d) if d.demote.iter().any(|id| id == npc) => Verdict::Demote,
            _ => Verdict::Process,
        }
    }

    /// Brings every NPC (not held by isolation) from now to game time `to` in one analytic
    /// step, then sets the zone's clock there. Running actions end (their intents are
    /// cancelled with reason `caught_up`); each NPC ends where its schedule puts it and reports
    /// `caught_up`; goals past their deadline fail.
    pub(super) fn catch_up_all(&mut self, to: u64, out: &mut ZoneOutput) {
        let from_hours = self.now_hours();
        let to_hours = to as f64 * self.full_tick_hours;
        let config = CatchUpConfig {
            max_hours: self.config.tick.catch_up_max_hours,
        };
        tracing::info!(zone = %self.name, from_hours, to_hours, "time jump: catching NPCs up");
        self.world.now_hours = to_hours;
        for index in 0..self.agents.len() {
            let id = self.agents[index].agent.id.clone();
            if self
                .isolation
                .is_held(&id, self.meta[index].archetype.as_deref())
            {
                continue;
            }
            self.cancel(index, "caught_up", out);
            self.release_running(index);
            let request = CatchUpRequest {
                from_hours,
                to_hours,
                archetype: self.meta[index].archetype.as_deref().unwrap_or(&id),
                seed: derive_seed(self.seed, stable_hash(&id) ^ to),
            };
            let report = self.content.simulator.catch_up(
                &mut self.agents[index],
                &self.world,
                &request,
                &mut self.catch_up_cache,
                &config,
            );
            self.place_on_schedule(index, out);
            let failed: Vec<SimEvent> = report
                .events
                .into_iter()
                .filter(|e| matches!(e, SimEvent::GoalFailed { .. }))
                .collect();
            self.emit(index, &failed, out);
            let body = NpcEvent::CaughtUp {
                npc: id,
                hours: report.hours,
                closed_form_days: report.closed_form_days,
                hourly_steps: report.hourly_steps,
            };
            self.publish(index, StreamKind::NpcEvents, &body, out);
        }
        self.game_time = to;
    }

    /// Runs one tick at the current game time, measured by `inputs.clock`: its phases in
    /// order, each a function below.
    pub fn run_tick(&mut self, inputs: &TickInputs<'_>, out: &mut ZoneOutput) {
        let started = (inputs.clock)();
        let measure_ms = || (inputs.clock)().saturating_sub(started).as_secs_f64() * 1000.0;
        self.tick += 1;
        let tick = self.tick;
        self.world.now_hours = self.now_hours();
        self.expire_contexts();
        self.announce_goals(out);
        let _span =
            tracing::debug_span!("tick", zone = %self.name, tick, game_time = self.game_time)
                .entered();
        // Each phase's end, read only for a phase sink.
        let mut ends = inputs.phase_sink.map(|_| PhaseTimes::default());
        let mut phase_ends = |phase: usize| {
            if let Some(at) = ends.as_mut().and_then(|ends| ends.get_mut(phase)) {
                *at = measure_ms();
            }
        };
        // 1. Tiers.
        self.step_tiers(out);
        phase_ends(0);
        // 2. Who is due, in priority order.
        let due = self.due_npcs(tick);
        phase_ends(1);
        // 3. Prepare each due NPC in isolation, under the governor; then the decision cap.
        let zone_seed = derive_seed(self.seed, tick);
        let mut work = self.prepare_due(&due, inputs, zone_seed, &measure_ms);
        self.cap_decisions(&mut work.prepared);
        phase_ends(2);
        // 4. One contention-resolving finish for the whole zone.
        let now_hours = self.world.now_hours;
        let providers =
            (self.derived.providers).get_or_insert_with(|| ProviderIndex::new(&self.world));
        let results = self.content.simulator.finish_zone(
            &mut self.agents,
            std::mem::take(&mut work.prepared),
            now_hours,
            &mut self.world,
            providers,
            zone_seed,
            // One thread: a tick's batch decision is too small to pay for another
            // (BENCHMARKS.md, "Threads").
            1,
        );
        phase_ends(3);
        // 5. Governor record first (logged before the outputs it shapes), then isolation.
        self.record_governor(inputs, work.decision, work.processed, measure_ms(), out);
        self.isolate(work.failures, work.isolation_changed, out);
        phase_ends(4);
        // 6. Intents and events.
        self.running_by_provider = None;
        for (index, result) in results {
            if !result.events.is_empty() {
                self.emit(index, &result.events, out);
            }
        }
        self.running_by_provider = None;
        self.report_moods(&work.with_mood, out);
        phase_ends(5);
        // 7. Social life: this tick's share of the social step, then story signals.
        self.social_tick(out);
        phase_ends(6);
        if let (Some(sink), Some(mut times)) = (inputs.phase_sink, ends) {
            // From each phase's end to its length.
            for phase in (1..times.len()).rev() {
                times[phase] -= times[phase - 1];
            }
            if let Ok(mut sink) = sink.lock() {
                sink.push(times);
            }
        }
        self.record_duration(inputs, measure_ms());
    }

    /// Every unsettled NPC (see `Derived::unsettled`: one that moved, those of a room whose tier
    /// changed, each one a demotion is under way for or a promotion waits on) steps towards
    /// its room's tier; the others are at it already, and stepping them would change nothing.
    /// Promotions out of Background (a catch-up each) are limited per tick and go to those
    /// near a player first (Active targets, then Nearby), by id.
    fn step_tiers(&mut self, out: &mut ZoneOutput) {
        let hysteresis = self.config.tiers.demotion_hysteresis_ticks;
        let mut promotions_left = self.config.tiers.catch_up_per_tick;
        let mut tier_events = Vec::new();
        let mut unsettled = BTreeSet::new();
        let looked_at: Vec<usize> = match self.derived.unsettled.take() {
            None => (0..self.meta.len()).collect(),
            Some(these) => these.into_iter().collect(),
        };
        let mut catching_up: Vec<(Reverse<Tier>, usize)> = Vec::new();
        for index in looked_at {
            let Some(meta) = self.meta.get_mut(index) else {
                continue;
            };
            let target = self.presence.room_tier(meta.room);
            let current = meta.tier.tier;
            if current == Tier::Background && target > current {
                catching_up.push((Reverse(target), index));
                continue;
            }
            if let Some(new) = meta.tier.step(target, true, hysteresis) {
                tier_events.push((index, current, new));
            }
            if !meta.tier.is_settled_at(target) {
                unsettled.insert(index);
            }
        }
        catching_up.sort_unstable();
        for (Reverse(target), index) in catching_up {
            let tier = &mut self.meta[index].tier;
            if let Some(new) = tier.step(target, promotions_left > 0, hysteresis) {
                promotions_left -= 1;
                tier_events.push((index, Tier::Background, new));
            }
            if !tier.is_settled_at(target) {
                unsettled.insert(index);
            }
        }
        self.derived.unsettled = Marked::These(unsettled);
        tier_events.sort_by_key(|(index, _, _)| *index);
        for (index, from, to) in tier_events {
            self.tier_changed(index, from, to);
            if from == Tier::Background {
                self.place_on_schedule(index, out);
            }
            let h = self.header_for(index);
            let npc = self.agents[index].agent.id.clone();
            out.push(
                StreamKind::NpcEvents,
                &h,
                &NpcEvent::TierChanged {
                    npc,
                    from: from.as_str().into(),
                    to: to.as_str().into(),
                },
            );
        }
    }

    /// Prepares the `due` NPCs in their order, each as the governor (or a replay's record)
    /// says: processed, demoted or skipped. An update that panics or runs over
    /// `tick.npc_budget_ms` is a failure (live, the record names the slow ones; a replay
    /// reads the record, never its own clock). `measure_ms` is read once an NPC: the reading
    /// that ends an NPC's update starts the next's.
    fn prepare_due(
        &mut self,
        due: &[Due],
        inputs: &TickInputs<'_>,
        zone_seed: u64,
        measure_ms: &dyn Fn() -> f64,
    ) -> TickWork {
        let tick = self.tick;
        let mut work = TickWork {
            prepared: Vec::with_capacity(due.len()),
            decision: GovernorDecision {
                tick,
                ..GovernorDecision::default()
            },
            failures: Vec::new(),
            processed: 0,
            with_mood: Vec::new(),
            isolation_changed: false,
        };
        let npc_budget_ms = self.config.tick.npc_budget_ms;
        let logged = inputs.replay.map(|script| script.get(&tick));
        let mut now_ms = measure_ms();
        // Every due NPC's records are read ahead, a few NPCs at a time (see `warm`).
        let mut warmed = 0;
        for (at, &(Reverse(tier), _, index)) in due.iter().enumerate() {
            if at == warmed {
                warmed = (at + WARM_AHEAD).min(due.len());
                warm(
                    &self.agents,
                    &self.meta,
                    due[at..warmed].iter().map(|d| d.2),
                );
            }
            let elapsed_ms = now_ms;
            let id = &self.agents[index].agent.id;
            let verdict = match logged {
                Some(logged) => Self::scripted_verdict(logged, id),
                None => self.governor.verdict(id, tier == Tier::Active, elapsed_ms),
            };
            match verdict {
                Verdict::Process => {}
                Verdict::Demote => {
                    work.decision.demote.push(id.clone());
                    continue;
                }
                Verdict::Skip => {
                    work.decision.skipped.push(id.clone());
                    continue;
                }
            }
            let outcome = self.prepare_one(index, tier, inputs, zone_seed);
            work.processed += 1;
            // Noted while the record is in cache: after the tick it would be read again.
            if self.agents[index].layers.wellbeing.is_some() {
                work.with_mood.push(index);
            }
            now_ms = measure_ms();
            let id = &self.agents[index].agent.id;
            let slow = match logged {
                Some(logged) => logged.is_some_and(|d| d.over_budget.iter().any(|n| n == id)),
                None => now_ms - elapsed_ms > npc_budget_ms,
            };
            if slow && logged.is_none() {
                work.decision.over_budget.push(id.clone());
            }
            match outcome {
                Ok(result) if slow => {
                    work.prepared.push((index, result));
                    let reason = format!("over its {npc_budget_ms} ms budget");
                    work.failures.push((index, reason));
                }
                Ok(result) => {
                    work.prepared.push((index, result));
                    work.isolation_changed |= self.isolation.succeeded(id);
                }
                Err(panic) => work.failures.push((index, panic_reason(panic.as_ref()))),
            }
        }
        work
    }

    /// Prepares NPC `index` at `tier`'s detail under `catch_unwind`, so a panic is its own
    /// failure, not the zone's.
    fn prepare_one(
        &mut self,
        index: usize,
        tier: Tier,
        inputs: &TickInputs<'_>,
        zone_seed: u64,
    ) -> std::thread::Result<Prepared> {
        let (simulator, level) = match tier {
            Tier::Active => (&self.content.simulator, DetailLevel::Full),
            Tier::Nearby => (&self.content.nearby_simulator, DetailLevel::Full),
            Tier::Background => (&self.content.simulator, DetailLevel::Simplified),
        };
        let request = TickRequest {
            now_hours: self.world.now_hours,
            world: &self.world,
            level,
            simplified_event: None,
        };
        #[cfg(feature = "fault-injection")]
        let (fault, id) = {
            let id = &self.agents[index].agent.id;
            (inputs.faults.and_then(|f| f.get(id)).copied(), id.clone())
        };
        // Only injected faults need the inputs here.
        #[cfg(not(feature = "fault-injection"))]
        let _ = inputs;
        let agent = &mut self.agents[index];
        // `zone_agent_seed`, with the id's hash kept.
        let seed = derive_seed(zone_seed, self.meta[index].id_hash);
        catch_unwind(AssertUnwindSafe(|| {
            #[cfg(feature = "fault-injection")]
            match fault {
                Some(Fault::Panic) => panic!("injected fault in {id}"),
                Some(Fault::SlowMs(ms)) => std::thread::sleep(std::time::Duration::from_millis(ms)),
                None => {}
            }
            simulator.prepare(agent, &request, seed)
        }))
    }

    /// At most `max_decisions_per_tick` fresh decisions, by the priority order the NPCs were
    /// prepared in; the rest stay idle and decide next tick (a count, so deterministic: no log
    /// needed). Leaves `prepared` sorted by index.
    fn cap_decisions(&self, prepared: &mut [(usize, Prepared)]) {
        let cap = self.config.tick.max_decisions_per_tick.max(1);
        let mut deciding = 0usize;
        for (index, result) in prepared.iter_mut() {
            let stage = &mut result.stage;
            if *stage == Stage::Idle && self.agents[*index].queue.is_empty() {
                deciding += 1;
                if deciding > cap {
                    *stage = Stage::Settled;
                }
            }
        }
        // `prepared` is in the due order: a few runs of ascending indices (a tier's NPCs with
        // a player, then without), which the stable sort finds and merges in one pass each.
        prepared.sort_by_key(|(index, _)| *index);
        if deciding > cap {
            tracing::debug!(zone = %self.name, tick = self.tick, deferred = deciding - cap, "decisions deferred to the next tick");
        }
    }

    /// The governor's record of the tick (`decision`, with `processed` NPCs and the tick
    /// `elapsed_ms` so far): live, written to the world stream when it decided anything, and
    /// a `tick_budget_exceeded` past the hard ceiling; a replay applies the logged record
    /// instead and writes none.
    fn record_governor(
        &mut self,
        inputs: &TickInputs<'_>,
        mut decision: GovernorDecision,
        processed: usize,
        elapsed_ms: f64,
        out: &mut ZoneOutput,
    ) {
        let tick = self.tick;
        let restore = self.governor.end_tick(elapsed_ms);
        if let Some(script) = inputs.replay {
            if let Some(logged) = script.get(&tick) {
                self.governor.demote(&logged.demote);
                self.governor.restore(&logged.restore);
            }
            return;
        }
        let mut zone_seq = 0u32;
        decision.restore = restore;
        if !(decision.demote.is_empty()
            && decision.restore.is_empty()
            && decision.skipped.is_empty()
            && decision.over_budget.is_empty())
        {
            let h = self.zone_header(&mut zone_seq);
            out.messages.push((
                StreamKind::World,
                WorldMessage {
                    header: h.from_geppetto(),
                    event: WorldEvent::GovernorDecision(decision.clone()),
                }
                .to_json(),
            ));
            self.governor.demote(&decision.demote);
            self.governor.restore(&decision.restore);
        }
        if self.governor.exceeded(elapsed_ms) {
            let h = self.zone_header(&mut zone_seq);
            out.push(
                StreamKind::NpcEvents,
                &h,
                &NpcEvent::TickBudgetExceeded {
                    tick,
                    elapsed_ms: (elapsed_ms * 1000.0).round() / 1000.0,
                    npcs_processed: processed,
                    npcs_skipped: decision.skipped.len() + decision.demote.len(),
                },
            );
        }
    }

    /// Isolation counts this tick's `failures` (with their events); when its counts changed
    /// they go out to be persisted, and a held NPC stops: the game is told to drop what it was
    /// carrying out.
    fn isolate(&mut self, failures: Vec<(usize, String)>, changed: bool, out: &mut ZoneOutput) {
        let changed = changed || !failures.is_empty();
        for (index, reason) in failures {
            let id = self.agents[index].agent.id.clone();
            let archetype = self.meta[index].archetype.clone();
            for event in self.isolation.failed(&id, archetype.as_deref(), &reason) {
                let h = self.header_for(index);
                out.push(StreamKind::NpcEvents, &h, &event);
            }
        }
        if !changed {
            return;
        }
        out.isolation_changed = Some(self.isolation.state.clone());
        for index in 0..self.agents.len() {
            let held = self.isolation.is_held(
                &self.agents[index].agent.id,
                self.meta[index].archetype.as_deref(),
            );
            if held && self.meta[index].current_intent.is_some() {
                self.cancel(index, "demoted", out);
                self.release_running(index);
                self.order_ended(index, "interrupted", Some("demoted"), out);
            }
        }
    }

    /// Keeps the tick's duration for the metrics (and the load generator's sink).
    fn record_duration(&mut self, inputs: &TickInputs<'_>, duration_ms: f64) {
        if self.tick_durations_ms.len() < MAX_BUFFERED_TICK_DURATIONS {
            self.tick_durations_ms.push(duration_ms);
        }
        if let Some(Ok(mut sink)) = inputs.tick_sink.map(|s| s.lock()) {
            sink.push(duration_ms);
        }
    }
}

/// What preparing a tick's due NPCs leaves for its later phases.
struct TickWork {
    /// The NPCs prepared, in the order they were due (sorted by index once capped).
    prepared: Vec<(usize, Prepared)>,
    /// The governor's decisions so far: NPCs demoted, skipped and over budget.
    decision: GovernorDecision,
    /// NPCs whose update failed, with why.
    failures: Vec<(usize, String)>,
    /// How many NPCs were processed.
    processed: usize,
    /// The NPCs processed that track a mood, in order (see `report_moods`).
    with_mood: Vec<usize>,
    /// Whether an NPC's success changed isolation's counts.
    isolation_changed: bool,
}

/// What a caught panic says (`panic` when it says nothing readable).
fn panic_reason(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::profiles::ProfileLibrary;
    use crate::content::sets::SetLibrary;
    use crate::content::world_file::embedded_village;
    use crate::zone::ZoneConfig;
    use crate::zone::isolation::IsolationState;
    use crate::zone::testing::*;
    use std::collections::BTreeSet;

    #[test]
    fn a_phase_sink_gets_each_ticks_phases_and_changes_nothing() {
        // A clock that moves on a microsecond each time it is read: each phase's time is the
        // reads made in it, so preparing (a read for every NPC) always has some.
        let reads = std::sync::atomic::AtomicU64::new(0);
        let stepping = || {
            let n = reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Duration::from_micros(n)
        };
        let run = |sink: Option<&Mutex<Vec<PhaseTimes>>>| {
            let mut zone = village();
            enter(&mut zone, "square");
            let mut out = ZoneOutput::default();
            let inputs = TickInputs {
                phase_sink: sink,
                ..TickInputs::live(&stepping)
            };
            for _ in 0..30 {
                let next = zone.game_time + 1;
                let message = WorldMessage {
                    header: crate::bus::envelope::header(fresh_id("t"), "village", next),
                    event: WorldEvent::TimeAdvanced,
                };
                zone.apply(&message, &inputs, &mut out);
            }
            out.messages
                .into_iter()
                .filter(|(stream, _)| *stream != StreamKind::World)
                .collect::<Vec<_>>()
        };
        let sink = Mutex::new(Vec::new());
        let timed = run(Some(&sink));
        assert_eq!(timed, run(None), "the same outputs timed or not");
        let phases = sink.into_inner().expect("sink");
        assert_eq!(phases.len(), 30, "one entry a tick");
        for times in &phases {
            assert!(times.iter().all(|t| *t >= 0.0), "{times:?}");
            assert!(
                times[2] > 0.0,
                "every NPC prepared reads the clock: {times:?}"
            );
        }
    }

    #[test]
    fn a_village_morning_produces_use_intents_and_is_deterministic() {
        let mut a = village();
        enter(&mut a, "square");
        let first = advance(&mut a, 120);
        let mut b = village();
        enter(&mut b, "square");
        let second = advance(&mut b, 120);
        let strip = |m: &Vec<(StreamKind, String)>| {
            m.iter()
                .filter(|(s, _)| *s != StreamKind::World)
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&first), strip(&second));
        let uses = first
            .iter()
            .filter(|(s, m)| *s == StreamKind::Intents && m.contains("\"type\":\"use\""))
            .count();
        assert!(uses >= 5, "{uses} use intents");
        let ids: BTreeSet<&str> = first
            .iter()
            .filter_map(|(_, m)| m.split("\"id\":\"").nth(1)?.split('"').next())
            .collect();
        assert_eq!(ids.len(), first.len(), "ids are unique");
    }

    #[test]
    fn a_time_jump_beyond_the_tick_bound_is_caught_up_analytically() {
        let mut zone = village();
        enter(&mut zone, "square");
        advance(&mut zone, 60);
        let start = zone.game_time;
        let day = (24.0 / zone.full_tick_hours()) as u64;
        let caught_up = |messages: &[(StreamKind, String)]| {
            messages
                .iter()
                .filter(|(_, m)| m.contains("\"type\":\"caught_up\""))
                .map(|(_, m)| serde_json::from_str::<serde_json::Value>(m).expect("json"))
                .collect::<Vec<_>>()
        };
        // Two days and ninety ticks: all but the last 60 ticks are caught up in one step.
        let target = start + 2 * day + 90;
        let messages = send_at(&mut zone, target, WorldEvent::TimeAdvanced);
        assert_eq!(zone.game_time, target);
        let reports = caught_up(&messages);
        assert_eq!(reports.len(), zone.agents.len(), "every NPC reports");
        for report in &reports {
            assert_eq!(report["closed_form_days"], 2, "{report}");
            assert_eq!(report["hours"].as_f64(), Some(48.5), "{report}");
        }
        assert!(
            messages.iter().any(|(_, m)| m.contains("\"type\":\"use\"")),
            "the last ticks run as usual"
        );
        // A jump of ten days is capped at a week.
        let target = zone.game_time + 10 * day + 60;
        let reports = caught_up(&send_at(&mut zone, target, WorldEvent::TimeAdvanced));
        assert_eq!(reports[0]["hours"].as_f64(), Some(168.0));
        assert_eq!(reports[0]["closed_form_days"], 7);
    }

    #[test]
    fn a_crowd_idle_at_once_decides_at_most_the_cap_per_tick() {
        let started_per_tick = |cap: usize| {
            let world = embedded_village().expect("village");
            let mut config = ZoneConfig::default();
            config.governor.tick_budget_ms_soft = 60_000.0;
            config.governor.tick_budget_ms_hard = 60_000.0;
            config.tick.max_decisions_per_tick = cap;
            let mut zone = Zone::new(
                &world,
                &ProfileLibrary::embedded().expect("profiles"),
                &SetLibrary::embedded().expect("sets"),
                config,
                IsolationState::default(),
            )
            .expect("zone");
            for room in ["square", "forge", "market", "farm", "tavern"] {
                enter(&mut zone, room);
            }
            (0..5)
                .map(|_| {
                    advance(&mut zone, 1)
                        .iter()
                        .filter(|(_, m)| m.contains("\"type\":\"action_started\""))
                        .count()
                })
                .collect::<Vec<_>>()
        };
        let free = started_per_tick(1000);
        assert!(free[0] > 3, "many start at once without a cap: {free:?}");
        let capped = started_per_tick(3);
        assert!(capped.iter().all(|&n| n <= 3), "{capped:?}");
        let later: usize = capped[1..].iter().sum();
        assert!(
            later >= 4,
            "the rest follow on the next ticks: {capped:?} (free: {free:?})"
        );
    }

    #[test]
    fn tiers_follow_the_player_with_hysteresis() {
        let mut zone = village();
        assert!(zone.tier_counts().contains(&(Tier::Active, 0)));
        enter(&mut zone, "woods");
        advance(&mut zone, 1);
        let wren = zone.npc_index("wren").expect("wren");
        let bram = zone.npc_index("bram").expect("bram");
        assert_eq!(zone.meta[wren].tier.tier, Tier::Active);
        assert_eq!(zone.meta[bram].tier.tier, Tier::Background);
        let woods = zone.rooms.room("woods").expect("room");
        zone.move_npc(wren, woods);
        enter(&mut zone, "square");
        advance(&mut zone, 2);
        assert_eq!(
            zone.meta[wren].tier.tier,
            Tier::Active,
            "hysteresis holds it"
        );
        advance(&mut zone, 1);
        assert_ne!(zone.meta[wren].tier.tier, Tier::Active);
    }
}
