//! The per-tick call budget: how many provider calls may start between two tick boundaries.
//! The caller signals boundaries (`start_tick`); this module owns only the count, not time.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

#[derive(Debug)]
struct Counter {
    per_tick: u32,
    remaining: AtomicU32,
}

/// A shared, lock-free budget. Cloning gives another handle to the same budget.
#[derive(Debug, Clone)]
pub struct TickBudget {
    counter: Arc<Counter>,
}

impl TickBudget {
    /// A budget of `per_tick` calls, full.
    #[must_use]
    pub fn new(per_tick: u32) -> Self {
        Self {
            counter: Arc::new(Counter {
                per_tick,
                remaining: AtomicU32::new(per_tick),
            }),
        }
    }

    /// Marks a tick boundary: the budget is full again (unused calls do not carry over).
    pub fn start_tick(&self) {
        self.counter
            .remaining
            .store(self.counter.per_tick, Ordering::Release);
    }

    /// Takes one call from the budget; false when it is spent.
    pub fn try_spend(&self) -> bool {
        self.counter
            .remaining
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                left.checked_sub(1)
            })
            .is_ok()
    }

    /// Gives back a call taken by `try_spend` that was not made, never above the per-tick size.
    pub fn refund(&self) {
        let per_tick = self.counter.per_tick;
        // An Err only means the budget is already full, which is the cap working.
        let _ = self
            .counter
            .remaining
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                (left < per_tick).then_some(left + 1)
            });
    }

    /// Calls left in this tick.
    #[must_use]
    pub fn remaining(&self) -> u32 {
        self.counter.remaining.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spends_down_to_zero_then_refuses_until_the_next_tick() {
        let budget = TickBudget::new(5);
        let granted = (0..8).filter(|_| budget.try_spend()).count();
        assert_eq!(granted, 5);
        assert_eq!(budget.remaining(), 0);
        budget.start_tick();
        assert_eq!(budget.remaining(), 5);
        assert!(budget.try_spend());
    }

    #[test]
    fn refund_never_exceeds_the_tick_size() {
        let budget = TickBudget::new(2);
        assert!(budget.try_spend());
        budget.refund();
        budget.refund();
        assert_eq!(budget.remaining(), 2);
    }

    #[test]
    fn clones_share_one_budget() {
        let budget = TickBudget::new(1);
        let other = budget.clone();
        assert!(other.try_spend());
        assert!(!budget.try_spend());
    }
}
