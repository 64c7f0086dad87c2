//! The LLM spend budget kept across restarts: what `[llm.budget]`'s allowances hold is saved
//! to the snapshot store — as the record `llm-spend.{owner}`, beside the zones' snapshots —
//! within `[llm.budget] save_within_ms` of a call changing it and as the service stops, and
//! restored before any zone starts, so a restart (a crash loop included) cannot spend a
//! window's allowance again.

use std::sync::Arc;
use std::time::Duration;

use geppetto_llm::{SpendBudgetHandle, SpentRecord};
use geppetto_storage::{Snapshot, SnapshotStore, ZoneName};
use tokio::sync::watch;

/// Version of the saved record's schema.
pub const SPEND_SCHEMA_VERSION: u32 = 1;

/// The store key of `owner`'s spend (`service` for a lone instance, else the instance's name).
fn spend_key(owner: &str) -> Option<ZoneName> {
    ZoneName::new(format!("llm-spend.{owner}")).ok()
}

/// Where the spend of one worker is kept.
#[derive(Clone)]
pub struct SpendKeeper {
    /// The snapshot store.
    pub store: Arc<dyn SnapshotStore>,
    /// Whose spend: `service`, or a clustered instance's name.
    pub owner: String,
    /// The worker's budget.
    pub budget: SpendBudgetHandle,
}

impl SpendKeeper {
    /// Restores the newest saved record into the budget; returns its sequence (0: none). An
    /// unreadable record is skipped with a warning: the budget starts from what it has.
    pub async fn restore(&self) -> u64 {
        let Some(key) = spend_key(&self.owner) else {
            return 0;
        };
        let latest = match self.store.latest_valid(&key, SPEND_SCHEMA_VERSION).await {
            Ok(latest) => latest,
            Err(error) => {
                tracing::warn!(%error, owner = %self.owner, "saved LLM spend unreadable; starting from none");
                return 0;
            }
        };
        let Some(snapshot) = latest.snapshot else {
            return 0;
        };
        match serde_json::from_slice::<SpentRecord>(&snapshot.payload) {
            Ok(record) => self.budget.restore(&record),
            Err(error) => {
                tracing::warn!(%error, owner = %self.owner, "saved LLM spend unreadable; starting from none");
            }
        }
        snapshot.sequence
    }

    /// Saves what the budget holds as record `sequence`.
    pub async fn save(&self, sequence: u64) {
        let Some(key) = spend_key(&self.owner) else {
            return;
        };
        let payload = match serde_json::to_vec(&self.budget.record()) {
            Ok(payload) => payload,
            Err(error) => {
                tracing::error!(%error, "LLM spend not serialisable");
                return;
            }
        };
        let snapshot = Snapshot {
            zone: key,
            sequence,
            last_event_id: String::new(),
            game_time_ticks: 0,
            schema_version: SPEND_SCHEMA_VERSION,
            payload,
        };
        if let Err(error) = self.store.put(snapshot).await {
            // Saving must never stop the service: the next save tries again.
            tracing::error!(%error, owner = %self.owner, "LLM spend not saved");
        }
    }

    /// Saves, after the restored record `after`, within `within` of every change (changes in
    /// that interval are saved together), and once more when `stopped` turns true.
    pub async fn keep(self, after: u64, within: Duration, mut stopped: watch::Receiver<bool>) {
        let mut sequence = after;
        loop {
            let stopping = tokio::select! {
                () = self.budget.changed() => tokio::select! {
                    () = tokio::time::sleep(within) => false,
                    () = stopped_signal(&mut stopped) => true,
                },
                () = stopped_signal(&mut stopped) => true,
            };
            sequence += 1;
            self.save(sequence).await;
            if stopping {
                return;
            }
        }
    }
}

/// Resolves once `stopped` turns true (or its sender is gone).
async fn stopped_signal(stopped: &mut watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stopped| *stopped).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use geppetto_llm::spend_budget::Amount;
    use geppetto_llm::{BudgetConfig, Clock, ManualClock, Priority, Seam, SpendBudget, SpendTags};
    use geppetto_storage::{MemorySnapshotStore, StorageConfig};

    /// A budget of 100 tokens an hour that has spent `tokens`.
    fn handle(clock: &Arc<ManualClock>, tokens: u64) -> SpendBudgetHandle {
        let config = BudgetConfig {
            tokens_per_hour: Some(100),
            ..BudgetConfig::default()
        };
        let mut budget = SpendBudget::from_config(&config, clock.now());
        if tokens > 0 {
            let amount = Amount { tokens, nanos: 0 };
            let tags = SpendTags::default();
            let held = (budget.reserve(
                clock.now(),
                Seam::Narration,
                Priority::Witnessed,
                &tags,
                amount,
            ))
            .expect("fits");
            budget.settle(held, amount);
        }
        SpendBudgetHandle::new(budget, Arc::clone(clock) as Arc<dyn Clock>)
    }

    #[test]
    fn a_restart_restores_the_spend_a_store_kept_and_an_unknown_owner_starts_from_none() {
        let store: Arc<dyn SnapshotStore> =
            Arc::new(MemorySnapshotStore::new(&StorageConfig::default()).expect("store"));
        let clock = Arc::new(ManualClock::new());
        let before = handle(&clock, 80);
        let keeper = |owner: &str, budget: SpendBudgetHandle| SpendKeeper {
            store: Arc::clone(&store),
            owner: owner.to_owned(),
            budget,
        };
        let saved = keeper("service", before);
        let (restored, after, other) = crate::runtime::block_on(1, async {
            saved.save(1).await;
            let after = handle(&clock, 0);
            let restored = keeper("service", after.clone()).restore().await;
            let other = keeper("instance-b", handle(&clock, 0)).restore().await;
            (restored, after, other)
        })
        .expect("runtime");
        assert_eq!((restored, other), (1, 0));
        let record = after.record();
        let all: u64 = record.scopes["all"].iter().map(|m| m.tokens).sum();
        assert_eq!(all, 80, "the spend survives the restart");
    }
}
