//! A worker's spend budget as the service shares it: the worker reserves and settles calls
//! through it; the service reads and changes the allowances (the admin API), reads what each
//! scope spent, saves and restores what the windows hold, and waits for a change to save it
//! soon after. This module owns the sharing (a lock, the worker's clock, a change signal); the
//! arithmetic is [`SpendBudget`]'s.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use tokio::sync::Notify;

use crate::clock::Clock;
use crate::config::{BudgetConfig, ConfigError};
use crate::request::{Priority, Seam, SpendTags};
use crate::spend_budget::{Amount, Refused, Reservation, Scope, SpendBudget, SpentRecord};

/// A worker's spend budget, on the worker's clock.
#[derive(Clone)]
pub struct SpendBudgetHandle {
    budget: Arc<Mutex<SpendBudget>>,
    clock: Arc<dyn Clock>,
    changed: Arc<Notify>,
}

impl std::fmt::Debug for SpendBudgetHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpendBudgetHandle")
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

impl SpendBudgetHandle {
    /// `budget` on `clock` (a worker makes its own; tests and tools may make one).
    #[must_use]
    pub fn new(budget: SpendBudget, clock: Arc<dyn Clock>) -> Self {
        Self {
            budget: Arc::new(Mutex::new(budget)),
            clock,
            changed: Arc::new(Notify::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, SpendBudget> {
        // No code panics while holding the lock; recovering keeps the budget usable.
        self.budget.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reserves `amount` at `now` (see [`SpendBudget::reserve`]); a reservation is a change.
    pub(crate) fn reserve(
        &self,
        now: Instant,
        seam: Seam,
        priority: Priority,
        tags: &SpendTags,
        amount: Amount,
    ) -> Result<Reservation, Refused> {
        let reserved = self.lock().reserve(now, seam, priority, tags, amount);
        if reserved.is_ok() {
            self.changed.notify_one();
        }
        reserved
    }

    /// Settles a reservation to what the call spent (see [`SpendBudget::settle`]).
    pub(crate) fn settle(&self, reservation: Reservation, actual: Amount) {
        self.lock().settle(reservation, actual);
        self.changed.notify_one();
    }

    /// Resolves once the windows changed since the last time it resolved (at once if they
    /// did in between).
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    /// The allowances and shares in force.
    #[must_use]
    pub fn allowances(&self) -> BudgetConfig {
        self.lock().allowances().clone()
    }

    /// Puts new allowances and shares in force (see [`SpendBudget::set_allowances`]).
    ///
    /// # Errors
    /// The field `config` cannot have; nothing changes then.
    pub fn set_allowances(&self, config: &BudgetConfig) -> Result<(), ConfigError> {
        self.lock().set_allowances(config)
    }

    /// What every scope counted holds now in its hour and day windows.
    #[must_use]
    pub fn spent(&self) -> Vec<(Scope, Amount, Amount)> {
        self.lock().spent(self.clock.now())
    }

    /// What the allowances hold now (see [`SpendBudget::record`]).
    #[must_use]
    pub fn record(&self) -> SpentRecord {
        self.lock().record(self.clock.now())
    }

    /// Adds what a saved `record` says was spent (see [`SpendBudget::restore`]).
    pub fn restore(&self, record: &SpentRecord) {
        self.lock().restore(record, self.clock.now());
    }
}
