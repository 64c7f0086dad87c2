//! The wall clock the spend budget's rolling windows and the rate-limit back-off read, behind a
//! trait so tests drive it by hand and count exactly without sleeping. This module owns only
//! the reading of time; what is done with it belongs to `spend_budget` and `backoff`.

use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

/// A source of the current time: a monotonic instant for windows and deadlines, and the
/// calendar time an HTTP-date `Retry-After` is measured against.
pub trait Clock: Send + Sync + Debug {
    /// Now, monotonic.
    fn now(&self) -> Instant;
    /// Now, on the calendar.
    fn wall(&self) -> SystemTime;
}

/// The machine's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn wall(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that moves only when told to; clones share one time.
#[derive(Debug, Clone)]
pub struct ManualClock {
    start: Instant,
    start_wall: SystemTime,
    elapsed: Arc<Mutex<Duration>>,
}

impl ManualClock {
    /// A clock standing at the moment it is made.
    #[must_use]
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            start_wall: SystemTime::now(),
            elapsed: Arc::new(Mutex::new(Duration::ZERO)),
        }
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut elapsed = self.elapsed.lock().unwrap_or_else(PoisonError::into_inner);
        *elapsed += by;
    }

    fn elapsed(&self) -> Duration {
        *self.elapsed.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + self.elapsed()
    }

    fn wall(&self) -> SystemTime {
        self.start_wall + self.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_both_readings_together_and_only_when_told() {
        let clock = ManualClock::new();
        let (now, wall) = (clock.now(), clock.wall());
        assert_eq!(clock.now(), now);
        clock.clone().advance(Duration::from_secs(90));
        assert_eq!(clock.now() - now, Duration::from_secs(90));
        assert_eq!(
            clock.wall().duration_since(wall).ok(),
            Some(Duration::from_secs(90))
        );
    }
}
