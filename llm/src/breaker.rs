//! The per-provider circuit breaker: a small deterministic state machine with the time passed
//! in (`now`), so it can be driven and property-tested without a clock. It owns the
//! closed → open → half-open → closed/open transitions; it makes no calls and reads no clock.
//!
//! Closed: every call is admitted; `failure_threshold` consecutive failures (timeouts count)
//! open it. Open: every call is rejected until `recovery_window` has passed since it opened;
//! then exactly one probe is admitted and the state is half-open. Half-open: every other call
//! is rejected; the probe's success closes the circuit, its failure opens it again.
//! Results of calls admitted in an earlier closed period are ignored (they are stale).

use std::time::{Duration, Instant};

use crate::config::BreakerConfig;

geppetto_wire_enum::wire_enum! {
    /// The breaker's externally visible state.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum BreakerState {
        /// Calls flow.
        Closed = "closed",
        /// Calls are rejected; the provider is presumed down.
        Open = "open",
        /// One probe is in flight; every other call is rejected.
        HalfOpen = "half_open",
    }
}

impl BreakerState {
    /// The gauge value: 0 closed, 1 half-open, 2 open.
    #[must_use]
    pub fn metric_value(self) -> f64 {
        match self {
            BreakerState::Closed => 0.0,
            BreakerState::HalfOpen => 1.0,
            BreakerState::Open => 2.0,
        }
    }
}

/// Leave to make one call, to be handed back with its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a permit's call result must be recorded"]
pub struct Permit {
    probe: bool,
    closed_period: u64,
}

impl Permit {
    /// Whether this call is the half-open probe.
    #[must_use]
    pub fn is_probe(&self) -> bool {
        self.probe
    }
}

/// The call was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejected {
    /// The state that refused it (open, or half-open with the probe in flight).
    pub state: BreakerState,
}

/// How an admitted call ended, from the breaker's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallResult {
    /// The provider answered.
    Success,
    /// An error or a timeout.
    Failure,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Closed { consecutive_failures: u32 },
    Open { since: Instant },
    HalfOpen,
}

/// One provider's breaker.
#[derive(Debug, Clone)]
pub struct CircuitBreaker {
    failure_threshold: u32,
    recovery_window: Duration,
    phase: Phase,
    /// Incremented each time the circuit closes after being open, so results of calls
    /// admitted before the circuit opened cannot count in a later closed period.
    closed_period: u64,
}

impl CircuitBreaker {
    /// A closed breaker.
    #[must_use]
    pub fn new(failure_threshold: u32, recovery_window: Duration) -> Self {
        Self {
            failure_threshold: failure_threshold.max(1),
            recovery_window,
            phase: Phase::Closed {
                consecutive_failures: 0,
            },
            closed_period: 0,
        }
    }

    /// A closed breaker with the config's threshold and window.
    #[must_use]
    pub fn from_config(config: &BreakerConfig) -> Self {
        Self::new(config.failure_threshold, config.recovery_window())
    }

    /// The current state.
    #[must_use]
    pub fn state(&self) -> BreakerState {
        match self.phase {
            Phase::Closed { .. } => BreakerState::Closed,
            Phase::Open { .. } => BreakerState::Open,
            Phase::HalfOpen => BreakerState::HalfOpen,
        }
    }

    /// Consecutive failures counted in the current closed period (0 when not closed).
    #[must_use]
    pub fn consecutive_failures(&self) -> u32 {
        match self.phase {
            Phase::Closed {
                consecutive_failures,
            } => consecutive_failures,
            Phase::Open { .. } | Phase::HalfOpen => 0,
        }
    }

    /// Asks to make a call at `now`.
    ///
    /// # Errors
    /// `Rejected` while open inside the recovery window, and while half-open (the probe is
    /// already in flight).
    pub fn admit(&mut self, now: Instant) -> Result<Permit, Rejected> {
        match self.phase {
            Phase::Closed { .. } => Ok(Permit {
                probe: false,
                closed_period: self.closed_period,
            }),
            Phase::Open { since } => {
                if now.saturating_duration_since(since) >= self.recovery_window {
                    self.phase = Phase::HalfOpen;
                    Ok(Permit {
                        probe: true,
                        closed_period: self.closed_period,
                    })
                } else {
                    Err(Rejected {
                        state: BreakerState::Open,
                    })
                }
            }
            Phase::HalfOpen => Err(Rejected {
                state: BreakerState::HalfOpen,
            }),
        }
    }

    /// Records how an admitted call ended, at `now`.
    pub fn record(&mut self, permit: Permit, result: CallResult, now: Instant) {
        match (self.phase, permit.probe) {
            (Phase::HalfOpen, true) => match result {
                CallResult::Success => self.close(),
                CallResult::Failure => self.phase = Phase::Open { since: now },
            },
            (
                Phase::Closed {
                    consecutive_failures,
                },
                false,
            ) if permit.closed_period == self.closed_period => match result {
                CallResult::Success => {
                    self.phase = Phase::Closed {
                        consecutive_failures: 0,
                    };
                }
                CallResult::Failure => {
                    let failures = consecutive_failures.saturating_add(1);
                    self.phase = if failures >= self.failure_threshold {
                        Phase::Open { since: now }
                    } else {
                        Phase::Closed {
                            consecutive_failures: failures,
                        }
                    };
                }
            },
            // A result from an earlier period, or from a call admitted before the circuit
            // opened: the circuit has already moved on.
            _ => {}
        }
    }

    fn close(&mut self) {
        self.closed_period = self.closed_period.wrapping_add(1);
        self.phase = Phase::Closed {
            consecutive_failures: 0,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const WINDOW: Duration = Duration::from_secs(60);

    fn breaker() -> CircuitBreaker {
        CircuitBreaker::new(5, WINDOW)
    }

    fn fail_times(breaker: &mut CircuitBreaker, times: u32, now: Instant) {
        for _ in 0..times {
            let permit = breaker.admit(now).expect("closed breaker admits");
            breaker.record(permit, CallResult::Failure, now);
        }
    }

    #[test]
    fn opens_after_exactly_the_threshold_of_consecutive_failures() {
        let start = Instant::now();
        let mut breaker = breaker();
        fail_times(&mut breaker, 4, start);
        assert_eq!(breaker.state(), BreakerState::Closed);
        assert_eq!(breaker.consecutive_failures(), 4);
        fail_times(&mut breaker, 1, start);
        assert_eq!(breaker.state(), BreakerState::Open);
    }

    #[test]
    fn a_success_resets_the_failure_run() {
        let start = Instant::now();
        let mut breaker = breaker();
        fail_times(&mut breaker, 4, start);
        let permit = breaker.admit(start).expect("closed");
        breaker.record(permit, CallResult::Success, start);
        fail_times(&mut breaker, 4, start);
        assert_eq!(breaker.state(), BreakerState::Closed);
    }

    #[test]
    fn open_rejects_inside_the_window_then_admits_exactly_one_probe() {
        let start = Instant::now();
        let mut breaker = breaker();
        fail_times(&mut breaker, 5, start);
        let just_before = start + WINDOW - Duration::from_millis(1);
        assert_eq!(
            breaker.admit(just_before),
            Err(Rejected {
                state: BreakerState::Open
            })
        );
        let after = start + WINDOW;
        let probe = breaker.admit(after).expect("probe admitted");
        assert!(probe.is_probe());
        assert_eq!(breaker.state(), BreakerState::HalfOpen);
        for offset in 0..10 {
            assert_eq!(
                breaker.admit(after + Duration::from_secs(offset * 100)),
                Err(Rejected {
                    state: BreakerState::HalfOpen
                })
            );
        }
        breaker.record(probe, CallResult::Success, after);
        assert_eq!(breaker.state(), BreakerState::Closed);
        assert!(!breaker.admit(after).expect("closed").is_probe());
    }

    #[test]
    fn a_failed_probe_reopens_for_a_full_window_from_its_failure() {
        let start = Instant::now();
        let mut breaker = breaker();
        fail_times(&mut breaker, 5, start);
        let probe_at = start + WINDOW;
        let probe = breaker.admit(probe_at).expect("probe");
        let failed_at = probe_at + Duration::from_secs(1);
        breaker.record(probe, CallResult::Failure, failed_at);
        assert_eq!(breaker.state(), BreakerState::Open);
        assert!(breaker.admit(failed_at + WINDOW / 2).is_err());
        assert!(breaker.admit(failed_at + WINDOW).is_ok());
    }

    #[test]
    fn stale_results_do_not_move_the_circuit() {
        let start = Instant::now();
        let mut breaker = breaker();
        let stale = breaker.admit(start).expect("closed");
        fail_times(&mut breaker, 5, start);
        breaker.record(stale, CallResult::Success, start);
        assert_eq!(breaker.state(), BreakerState::Open);
        let probe = breaker.admit(start + WINDOW).expect("probe");
        breaker.record(stale, CallResult::Failure, start + WINDOW);
        assert_eq!(breaker.state(), BreakerState::HalfOpen);
        breaker.record(probe, CallResult::Success, start + WINDOW);
        // A failure from the first closed period cannot count toward the new one.
        breaker.record(stale, CallResult::Failure, start + WINDOW);
        assert_eq!(breaker.consecutive_failures(), 0);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Advance(u64),
        Admit,
        Succeed(usize),
        Fail(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0_u64..40_000).prop_map(Op::Advance),
            Just(Op::Admit),
            (0_usize..8).prop_map(Op::Succeed),
            (0_usize..8).prop_map(Op::Fail),
        ]
    }

    proptest! {
        /// Whatever the interleaving of admissions, results and time: at most one probe is
        /// ever outstanding, an open circuit admits nothing inside its window, the circuit is
        /// open exactly when the current run of failures reached the threshold, and a probe's
        /// result alone decides the half-open state.
        #[test]
        fn breaker_invariants_hold_for_any_sequence(ops in proptest::collection::vec(op(), 1..200)) {
            let threshold = 3;
            let window = Duration::from_secs(30);
            let start = Instant::now();
            let mut now = start;
            let mut breaker = CircuitBreaker::new(threshold, window);
            let mut outstanding: Vec<Permit> = Vec::new();
            let mut opened_at: Option<Instant> = None;
            for op in ops {
                let before = breaker.state();
                match op {
                    Op::Advance(ms) => now += Duration::from_millis(ms),
                    Op::Admit => {
                        let admitted = breaker.admit(now);
                        match before {
                            BreakerState::Closed => {
                                let permit = admitted.expect("closed admits");
                                prop_assert!(!permit.is_probe());
                                outstanding.push(permit);
                            }
                            BreakerState::Open => {
                                let since = opened_at.expect("open has a start");
                                let elapsed = now.saturating_duration_since(since);
                                if elapsed >= window {
                                    let permit = admitted.expect("window over: probe");
                                    prop_assert!(permit.is_probe());
                                    prop_assert_eq!(breaker.state(), BreakerState::HalfOpen);
                                    outstanding.push(permit);
                                } else {
                                    prop_assert!(admitted.is_err());
                                }
                            }
                            BreakerState::HalfOpen => prop_assert!(admitted.is_err()),
                        }
                    }
                    Op::Succeed(index) | Op::Fail(index) => {
                        if outstanding.is_empty() {
                            continue;
                        }
                        let permit = outstanding.remove(index % outstanding.len());
                        let failed = matches!(op, Op::Fail(_));
                        let failures_before = breaker.consecutive_failures();
                        let stale = permit.closed_period != breaker.closed_period;
                        breaker.record(
                            permit,
                            if failed { CallResult::Failure } else { CallResult::Success },
                            now,
                        );
                        let after = breaker.state();
                        if permit.is_probe() {
                            prop_assert_eq!(before, BreakerState::HalfOpen);
                            prop_assert_eq!(
                                after,
                                if failed { BreakerState::Open } else { BreakerState::Closed }
                            );
                        } else if before != BreakerState::Closed || stale {
                            prop_assert_eq!(after, before);
                            prop_assert_eq!(breaker.consecutive_failures(), failures_before);
                        } else if failed && failures_before + 1 >= threshold {
                            prop_assert_eq!(after, BreakerState::Open);
                        } else {
                            prop_assert_eq!(after, BreakerState::Closed);
                        }
                        if after == BreakerState::Open && before != BreakerState::Open {
                            opened_at = Some(now);
                        }
                    }
                }
                let probes = outstanding.iter().filter(|permit| permit.is_probe()).count();
                prop_assert!(probes <= 1);
                prop_assert_eq!(probes == 1, breaker.state() == BreakerState::HalfOpen);
            }
        }
    }
}
