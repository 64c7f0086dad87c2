//! The envelope ids of the world events a zone applied lately, so an event delivered twice —
//! a game retrying an `XADD` it cannot know landed, a hand-over replayed by the other zone's
//! recovery — is recognised and applied once. A bounded window: at most `[tick]
//! event_ids_remembered` ids, none older than `event_ids_max_age_ticks` of game time. It is
//! part of the zone's state (kept in snapshots), so a recovery or a replay drops exactly the
//! duplicates the live zone dropped.

use std::collections::{HashSet, VecDeque};

/// The window of recently applied event ids, oldest first.
#[derive(Clone, Debug, Default)]
pub struct RecentIds {
    /// (id, game time it was applied at), oldest first.
    order: VecDeque<(String, u64)>,
    /// The same ids, for lookup.
    known: HashSet<String>,
}

impl RecentIds {
    /// The window of `ids`, each applied at the game time of the same place in `times` (at
    /// `now` where `times` is shorter: a snapshot that kept no times).
    pub fn restored(ids: VecDeque<String>, times: &[u64], now: u64) -> Self {
        let order: VecDeque<(String, u64)> = ids
            .into_iter()
            .enumerate()
            .map(|(index, id)| {
                let time = times.get(index).copied().unwrap_or(now);
                (id, time)
            })
            .collect();
        let known = order.iter().map(|(id, _)| id.clone()).collect();
        Self { order, known }
    }

    /// Whether `id` was applied within the window.
    pub fn contains(&self, id: &str) -> bool {
        self.known.contains(id)
    }

    /// Remembers `id` as applied at game time `now`, then forgets what falls out of the
    /// window: beyond `capacity` ids, or applied more than `max_age` ticks before `now`.
    pub fn remember(&mut self, id: &str, now: u64, capacity: usize, max_age: u64) {
        if capacity == 0 {
            return;
        }
        if self.known.insert(id.to_owned()) {
            self.order.push_back((id.to_owned(), now));
        }
        let oldest_kept = now.saturating_sub(max_age);
        while let Some((oldest, time)) = self.order.front() {
            if self.order.len() <= capacity && *time >= oldest_kept {
                break;
            }
            self.known.remove(oldest);
            self.order.pop_front();
        }
    }

    /// The ids, oldest first, and the game times they were applied at (what a snapshot keeps).
    pub fn saved(&self) -> (VecDeque<String>, Vec<u64>) {
        self.order.iter().cloned().unzip()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_known_until_it_falls_out_by_count_or_by_age() {
        let mut ids = RecentIds::default();
        ids.remember("a", 10, 2, 100);
        ids.remember("b", 20, 2, 100);
        assert!(ids.contains("a") && ids.contains("b"));
        ids.remember("c", 30, 2, 100);
        assert!(!ids.contains("a"), "beyond the count, the oldest goes");
        assert!(ids.contains("b") && ids.contains("c"));
        ids.remember("d", 125, 2, 100);
        assert!(!ids.contains("b"), "applied more than 100 ticks ago");
        assert!(ids.contains("c") && ids.contains("d"));
        assert_eq!(ids.saved().0.len(), 2);
    }

    #[test]
    fn remembering_an_id_twice_keeps_one_entry() {
        let mut ids = RecentIds::default();
        ids.remember("a", 1, 4, 100);
        ids.remember("a", 2, 4, 100);
        assert_eq!(ids.saved().0.len(), 1);
    }

    #[test]
    fn a_saved_window_is_restored_whole_and_old_snapshots_take_the_time_restored_at() {
        let mut ids = RecentIds::default();
        ids.remember("a", 5, 8, 100);
        ids.remember("b", 6, 8, 100);
        let (saved, times) = ids.saved();
        let back = RecentIds::restored(saved.clone(), &times, 50);
        assert_eq!(back.saved(), (saved.clone(), vec![5, 6]));
        let untimed = RecentIds::restored(saved, &[], 50);
        assert_eq!(untimed.saved().1, vec![50, 50]);
        assert!(untimed.contains("a"));
    }

    #[test]
    fn a_window_of_no_ids_remembers_nothing() {
        let mut ids = RecentIds::default();
        ids.remember("a", 1, 0, 100);
        assert!(!ids.contains("a"));
    }
}
