//! The bounded off-tick request queue with three importance classes. It owns ordering
//! (highest class first, FIFO inside a class) and overload policy (the lowest class is dropped
//! first); it never blocks or awaits on the push side, so the tick thread can call it freely.
//! It does not decide how requests are served: that is the worker's job.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;
use tokio::sync::Notify;

use crate::request::{LlmRequest, Priority, Seam};
use crate::telemetry;

/// A request the full queue gave up on: the new one, or a queued one of a lower class that
/// made room for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DroppedRequest {
    /// Its interaction or utterance id.
    pub request_id: String,
    /// Its class.
    pub priority: Priority,
    /// Its seam.
    pub seam: Seam,
}

impl DroppedRequest {
    fn of(request: &LlmRequest) -> Self {
        Self {
            request_id: request.id().to_owned(),
            priority: request.priority(),
            seam: request.seam(),
        }
    }
}

/// What `LlmQueue::push` did. A drop is also counted (metric) and logged (warn).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PushOutcome {
    /// Queued; nothing was dropped.
    Queued,
    /// Queued after dropping the oldest request of the lowest non-empty lower class.
    QueuedAfterDropping(DroppedRequest),
    /// Not queued: the queue is full of requests of this class or higher.
    Dropped(DroppedRequest),
}

impl PushOutcome {
    /// Whether the pushed request is now in the queue.
    #[must_use]
    pub fn is_queued(&self) -> bool {
        !matches!(self, PushOutcome::Dropped(_))
    }

    /// The request dropped by this push, if any.
    #[must_use]
    pub fn dropped(&self) -> Option<&DroppedRequest> {
        match self {
            PushOutcome::Queued => None,
            PushOutcome::QueuedAfterDropping(dropped) | PushOutcome::Dropped(dropped) => {
                Some(dropped)
            }
        }
    }
}

#[derive(Debug, Default)]
struct Classes {
    /// Indexed by `Priority::index`: routine, story-relevant, witnessed.
    queues: [VecDeque<LlmRequest>; 3],
    len: usize,
    dropped: [u64; 3],
}

#[derive(Debug)]
struct Shared {
    capacity: usize,
    // A std Mutex, not tokio's: it is held for a few pointer moves and never across `.await`,
    // and the push side must not be async.
    classes: Mutex<Classes>,
    ready: Notify,
}

/// The bounded priority queue. Cloning gives another handle to the same queue.
#[derive(Debug, Clone)]
pub struct LlmQueue {
    shared: Arc<Shared>,
}

impl LlmQueue {
    /// An empty queue holding at most `capacity` requests.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            shared: Arc::new(Shared {
                capacity,
                classes: Mutex::new(Classes::default()),
                ready: Notify::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Classes> {
        // No code panics while holding the lock; recovering keeps the queue usable regardless.
        self.shared
            .classes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds a request without blocking. When the queue is full, the oldest request of the
    /// lowest class below the new one's is dropped to make room; if there is none, the new
    /// request itself is dropped.
    pub fn push(&self, request: LlmRequest) -> PushOutcome {
        let class = request.priority();
        let (outcome, depth) = {
            let mut classes = self.lock();
            let outcome = if classes.len < self.shared.capacity {
                classes.queues[class.index()].push_back(request);
                classes.len += 1;
                PushOutcome::Queued
            } else {
                let victim = Priority::LOWEST_FIRST
                    .into_iter()
                    .take_while(|lower| *lower < class)
                    .find_map(|lower| classes.queues[lower.index()].pop_front());
                match victim {
                    Some(victim) => {
                        classes.dropped[victim.priority().index()] += 1;
                        classes.queues[class.index()].push_back(request);
                        PushOutcome::QueuedAfterDropping(DroppedRequest::of(&victim))
                    }
                    None => {
                        classes.dropped[class.index()] += 1;
                        PushOutcome::Dropped(DroppedRequest::of(&request))
                    }
                }
            };
            (outcome, classes.len)
        };
        telemetry::queue_depth(depth);
        if let Some(dropped) = outcome.dropped() {
            telemetry::queue_dropped(dropped.priority);
            tracing::warn!(
                request_id = %dropped.request_id,
                class = dropped.priority.as_str(),
                seam = dropped.seam.as_str(),
                capacity = self.shared.capacity,
                "llm queue full: request dropped"
            );
        }
        if outcome.is_queued() {
            self.shared.ready.notify_one();
        }
        outcome
    }

    /// Takes the next request (highest class first, oldest first inside it) if any.
    pub fn try_pop(&self) -> Option<LlmRequest> {
        let (request, depth) = {
            let mut classes = self.lock();
            let request = Priority::LOWEST_FIRST
                .into_iter()
                .rev()
                .find_map(|class| classes.queues[class.index()].pop_front());
            if request.is_some() {
                classes.len -= 1;
            }
            (request, classes.len)
        };
        if request.is_some() {
            telemetry::queue_depth(depth);
        }
        request
    }

    /// Waits for the next request. Cancel-safe: a request is removed only when returned.
    pub async fn pop(&self) -> LlmRequest {
        loop {
            let ready = self.shared.ready.notified();
            if let Some(request) = self.try_pop() {
                return request;
            }
            ready.await;
        }
    }

    /// Requests waiting.
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().len
    }

    /// Whether nothing is waiting.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The hard capacity.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.shared.capacity
    }

    /// Requests of `class` dropped so far.
    #[must_use]
    pub fn dropped(&self, class: Priority) -> u64 {
        self.lock().dropped[class.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{NarrationRequest, Participant};

    fn narration(id: &str, priority: Priority) -> LlmRequest {
        LlmRequest::Narration(NarrationRequest {
            interaction_id: id.to_owned(),
            zone: "z".to_owned(),
            room: "r".to_owned(),
            initiator: Participant {
                id: "a".to_owned(),
                name: "A".to_owned(),
            },
            target: Participant {
                id: "b".to_owned(),
                name: "B".to_owned(),
            },
            interaction: "argue".to_owned(),
            mood: "calm".to_owned(),
            known: Default::default(),
            present: Vec::new(),
            priority,
            seed: 1,
            tags: crate::request::SpendTags::default(),
        })
    }

    fn drain(queue: &LlmQueue) -> Vec<String> {
        std::iter::from_fn(|| queue.try_pop())
            .map(|request| request.id().to_owned())
            .collect()
    }

    #[test]
    fn serves_highest_class_first_and_fifo_inside_a_class() {
        let queue = LlmQueue::new(10);
        for (id, class) in [
            ("r1", Priority::Routine),
            ("s1", Priority::StoryRelevant),
            ("w1", Priority::Witnessed),
            ("r2", Priority::Routine),
            ("w2", Priority::Witnessed),
        ] {
            assert_eq!(queue.push(narration(id, class)), PushOutcome::Queued);
        }
        assert_eq!(drain(&queue), ["w1", "w2", "s1", "r1", "r2"]);
        assert!(queue.is_empty());
    }

    #[test]
    fn full_queue_drops_the_oldest_of_the_lowest_class() {
        let queue = LlmQueue::new(3);
        queue.push(narration("s1", Priority::StoryRelevant));
        queue.push(narration("r1", Priority::Routine));
        queue.push(narration("r2", Priority::Routine));
        let outcome = queue.push(narration("w1", Priority::Witnessed));
        assert_eq!(
            outcome
                .dropped()
                .map(|d| (d.request_id.as_str(), d.priority)),
            Some(("r1", Priority::Routine))
        );
        assert!(outcome.is_queued());
        queue.push(narration("w2", Priority::Witnessed));
        assert_eq!(queue.dropped(Priority::Routine), 2);
        assert_eq!(queue.dropped(Priority::StoryRelevant), 0);
        let outcome = queue.push(narration("w3", Priority::Witnessed));
        assert_eq!(
            outcome.dropped().map(|d| d.priority),
            Some(Priority::StoryRelevant),
            "with routine gone, story-relevant goes next"
        );
        assert_eq!(queue.dropped(Priority::StoryRelevant), 1);
        assert_eq!(drain(&queue), ["w1", "w2", "w3"]);
    }

    #[test]
    fn a_request_with_no_lower_class_to_displace_is_itself_dropped() {
        let queue = LlmQueue::new(2);
        queue.push(narration("w1", Priority::Witnessed));
        queue.push(narration("w2", Priority::Witnessed));
        let routine = queue.push(narration("r1", Priority::Routine));
        assert_eq!(
            routine,
            PushOutcome::Dropped(DroppedRequest {
                request_id: "r1".to_owned(),
                priority: Priority::Routine,
                seam: Seam::Narration,
            })
        );
        let same_class = queue.push(narration("w3", Priority::Witnessed));
        assert!(!same_class.is_queued());
        assert_eq!(queue.dropped(Priority::Routine), 1);
        assert_eq!(queue.dropped(Priority::Witnessed), 1);
        assert_eq!(queue.len(), 2);
        assert_eq!(drain(&queue), ["w1", "w2"]);
    }

    #[test]
    fn never_holds_more_than_its_capacity() {
        let queue = LlmQueue::new(5);
        for index in 0..40_u32 {
            let class = Priority::LOWEST_FIRST[(index % 3) as usize];
            queue.push(narration(&index.to_string(), class));
            assert!(queue.len() <= 5);
        }
        let dropped: u64 = Priority::LOWEST_FIRST
            .iter()
            .map(|c| queue.dropped(*c))
            .sum();
        assert_eq!(dropped, 35);
    }

    #[tokio::test]
    async fn pop_wakes_up_for_a_later_push() {
        let queue = LlmQueue::new(4);
        let waiter = {
            let queue = queue.clone();
            tokio::spawn(async move { queue.pop().await })
        };
        tokio::task::yield_now().await;
        queue.push(narration("late", Priority::Routine));
        let request = waiter.await.expect("pop task finishes");
        assert_eq!(request.id(), "late");
    }
}
