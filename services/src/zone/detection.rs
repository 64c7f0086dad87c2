//! Where a zone's story detector runs: on the zone's own thread (live, and whenever the `story`
//! stream is wanted), or on a thread of its own beside the zone (a replay that prints another
//! stream: the zone folds the log on one core while the detector runs its rules on the other).
//!
//! Beside the zone, the detector does its work in the order the zone hands it over, through a
//! bounded queue of jobs; what the zone must know at once — a claim on a signal, the NPCs a
//! signal names, a copy for a snapshot — waits for the detector to reach it, so the zone sees
//! exactly the detector it would have held itself. What the detector raises there is dropped:
//! only a caller that publishes no `story` message puts it beside the zone.

use std::sync::mpsc::{self, SyncSender};
use std::thread::JoinHandle;

use geppetto_core::story::{DetectorConfig, SignalChange, StoryDetector, StoryEvent, StorySignal};

/// Jobs the zone may hand a detector beside it before it waits for the detector to catch up.
/// A tick hands over one (the events it fed the detector, then the tick itself), so the zone
/// runs at most this many ticks ahead and what the queue holds stays small.
const JOBS_AHEAD: usize = 256;

/// A piece of the detector's work, run on its thread.
type Job = Box<dyn FnOnce(&mut StoryDetector) + Send>;

/// The zone's story detector, wherever it runs.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "one a zone, and at home is the usual place: a box would only add a pointer to follow"
)]
pub enum Detection {
    /// On the zone's thread.
    Here(StoryDetector),
    /// On a thread of its own.
    Beside(Beside),
}

/// A detector on a thread of its own, and what the zone has for it that it has not handed over.
pub struct Beside {
    /// Where its jobs go.
    jobs: SyncSender<Job>,
    /// The thread, which hands the detector back when the queue closes.
    thread: JoinHandle<StoryDetector>,
    /// The detector's numbers, for those who read them.
    config: DetectorConfig,
    /// Events fed since the last job, handed over with the next.
    pending: Vec<StoryEvent>,
}

impl std::fmt::Debug for Beside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Beside")
            .field("config", &self.config)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

/// The panic of a zone whose detector's thread is gone: it ended only by a panic of its own,
/// which it has reported.
fn detector_gone() -> ! {
    panic!("the story detector's thread stopped (its panic is reported above)")
}

impl Beside {
    /// Hands `work` over, after the events fed since the last job: refused only by a thread
    /// that panicked.
    fn hand_over(&mut self, work: impl FnOnce(&mut StoryDetector) + Send + 'static) -> bool {
        let events = std::mem::take(&mut self.pending);
        let job: Job = Box::new(move |detector| {
            events.into_iter().for_each(|event| detector.push(event));
            work(detector);
        });
        self.jobs.send(job).is_ok()
    }

    /// Hands `work` over, after the events fed since the last job.
    fn send(&mut self, work: impl FnOnce(&mut StoryDetector) + Send + 'static) {
        if !self.hand_over(work) {
            detector_gone();
        }
    }

    /// What `question` makes of the detector once it has done every job handed over before.
    fn ask<R: Send + 'static>(
        &mut self,
        question: impl FnOnce(&mut StoryDetector) -> R + Send + 'static,
    ) -> R {
        let (answer, answered) = mpsc::sync_channel(1);
        self.send(move |detector| {
            // The zone waits for the answer; it can only be gone if it panicked meanwhile.
            let _ = answer.send(question(detector));
        });
        answered.recv().unwrap_or_else(|_| detector_gone())
    }
}

impl Detection {
    /// The detector's numbers.
    pub fn config(&self) -> &DetectorConfig {
        match self {
            Self::Here(detector) => &detector.config,
            Self::Beside(beside) => &beside.config,
        }
    }

    /// Moves the detector to a thread of its own (nothing if it is there already). From now on
    /// its signals are not returned: see [`Detection::signals`].
    pub fn move_beside(&mut self) {
        let Self::Here(detector) = self else {
            return;
        };
        let config = detector.config.clone();
        let (jobs, queue) = mpsc::sync_channel::<Job>(JOBS_AHEAD);
        let blank = config.clone();
        let spawned = std::thread::Builder::new()
            .name("story-detector".to_owned())
            .spawn(move || {
                // The zone's detector arrives as the first job.
                let mut detector = StoryDetector::new(blank);
                for job in queue {
                    job(&mut detector);
                }
                detector
            });
        let thread = match spawned {
            Ok(thread) => thread,
            Err(error) => {
                tracing::warn!(%error, "the story detector stays on the zone's thread: no thread of its own");
                return;
            }
        };
        let detector = std::mem::replace(detector, StoryDetector::new(DetectorConfig::default()));
        let mut beside = Beside {
            jobs,
            thread,
            config,
            pending: Vec::new(),
        };
        // The thread waits for this job, so the queue takes it.
        beside.send(move |own| *own = detector);
        *self = Self::Beside(beside);
    }

    /// Brings the detector back to the zone's thread once it has done every job handed over
    /// (nothing if it is here). A panic on its thread is the caller's again.
    pub fn move_here(&mut self) {
        let placeholder = Self::Here(StoryDetector::new(DetectorConfig::default()));
        let Self::Beside(mut beside) = std::mem::replace(self, placeholder) else {
            return;
        };
        // A thread that panicked refuses the last events: the join hands its panic on.
        beside.hand_over(|_| {});
        drop(beside.jobs);
        match beside.thread.join() {
            Ok(detector) => *self = Self::Here(detector),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Buffers `events` for the detector's next detection.
    pub fn feed(&mut self, events: Vec<StoryEvent>) {
        match self {
            Self::Here(detector) => events.into_iter().for_each(|event| detector.push(event)),
            Self::Beside(beside) => beside.pending.extend(events),
        }
    }

    /// What `question` makes of the detector, once it has done all it was handed before.
    pub fn ask<R: Send + 'static>(
        &mut self,
        question: impl FnOnce(&mut StoryDetector) -> R + Send + 'static,
    ) -> R {
        match self {
            Self::Here(detector) => question(detector),
            Self::Beside(beside) => beside.ask(question),
        }
    }

    /// A copy of the detector as the zone has fed it.
    pub fn state(&self) -> StoryDetector {
        match self {
            Self::Here(detector) => detector.clone(),
            Self::Beside(beside) => {
                let (answer, answered) = mpsc::sync_channel(1);
                let pending = beside.pending.clone();
                let job: Job = Box::new(move |detector| {
                    let mut copy = detector.clone();
                    pending.into_iter().for_each(|event| copy.push(event));
                    // The zone waits for the answer; it can only be gone if it panicked.
                    let _ = answer.send(copy);
                });
                if beside.jobs.send(job).is_err() {
                    detector_gone();
                }
                answered.recv().unwrap_or_else(|_| detector_gone())
            }
        }
    }

    /// Counts a tick at `now_hours` (see [`StoryDetector::tick`]): here, the signals raised and
    /// what became of live ones; beside the zone, the tick is handed over and nothing returned.
    pub fn signals(&mut self, now_hours: f64) -> (Vec<StorySignal>, Vec<SignalChange>) {
        match self {
            Self::Here(detector) => (detector.tick(now_hours), detector.take_changes()),
            Self::Beside(beside) => {
                beside.send(move |detector| {
                    detector.tick(now_hours);
                    detector.take_changes();
                });
                (Vec::new(), Vec::new())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beside() -> Detection {
        let mut detection = Detection::Here(StoryDetector::new(DetectorConfig::default()));
        detection.move_beside();
        detection
    }

    #[test]
    fn a_detector_beside_the_zone_answers_in_its_turn_and_comes_home_with_its_work_done() {
        let mut detection = beside();
        assert!(matches!(detection, Detection::Beside(_)));
        detection.signals(1.0);
        detection.signals(2.0);
        let ticks = detection.ask(|detector| detector.tick(3.0).len());
        assert_eq!(ticks, 0, "a fresh detector raises nothing");
        detection.move_here();
        let Detection::Here(detector) = &detection else {
            panic!("at home again: {detection:?}");
        };
        let mut fresh = StoryDetector::new(DetectorConfig::default());
        (1..=3).for_each(|hour| drop(fresh.tick(f64::from(hour))));
        assert_eq!(
            serde_json::to_string(detector).expect("json"),
            serde_json::to_string(&fresh).expect("json"),
            "the detector did every job handed over, in order"
        );
    }

    /// A panic's message.
    fn said(panic: &(dyn std::any::Any + Send)) -> &str {
        (panic.downcast_ref::<&str>().copied())
            .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("")
    }

    #[test]
    fn a_panic_beside_the_zone_is_the_zones_again() {
        let asked = std::panic::catch_unwind(|| {
            beside().ask(|_| -> () { panic!("a rule went wrong") });
        });
        let panic = asked.expect_err("the zone waits for an answer that never comes");
        let message = said(panic.as_ref());
        assert!(
            message.contains("story detector's thread stopped"),
            "{message}"
        );

        let mut detection = beside();
        detection.feed(Vec::new());
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            detection.ask(|_| -> () { panic!("a rule went wrong") })
        }));
        let home = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| detection.move_here()));
        let panic = home.expect_err("the thread's panic comes home");
        assert_eq!(said(panic.as_ref()), "a rule went wrong");
    }
}
