//! The load generator's probes: when each social event and each tick was sent, and the reader
//! that finds its answer on the bus (a `social_interaction` NPC event, the tick's first
//! intent) and turns the pair into a latency.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;
use tokio::sync::watch;

use crate::bus::{EventBus, StreamKind};

/// When each probe was sent, by key: a social event's source, or `{zone}:tick{t}` (hashed, not
/// ordered: at 100,000 events a second the generator notes and the reader looks up as many).
#[derive(Clone, Default)]
pub(crate) struct Sent(Arc<Mutex<FxHashMap<String, Instant>>>);

impl Sent {
    /// Notes that probe `key` goes out now.
    pub(crate) fn note(&self, key: String) {
        if let Ok(mut sent) = self.0.lock() {
            sent.insert(key, Instant::now());
        }
    }

    /// How long ago probe `key` went out, milliseconds, once (`None`: unknown or answered).
    fn answered(&self, key: &str, now: Instant) -> Option<f64> {
        let at = self.0.lock().ok().and_then(|mut m| m.remove(key))?;
        Some(now.duration_since(at).as_secs_f64() * 1000.0)
    }
}

/// The probe key of tick `t` of `zone`.
pub(crate) fn tick_key(zone: &str, t: u64) -> String {
    format!("{zone}:tick{t}")
}

/// Only the type and source of an NPC event (the reader skips everything else unparsed).
#[derive(serde::Deserialize)]
struct Sourced {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    source: Option<String>,
}

/// Only the game time of an envelope (the reader skips everything else unparsed).
#[derive(serde::Deserialize)]
struct GameTime {
    game_time: u64,
}

/// Latencies read back from one zone's streams, milliseconds.
pub(crate) struct Latencies {
    /// Each social event to its `social_interaction`.
    pub social: Vec<f64>,
    /// Each `time_advanced` to the tick's first intent.
    pub first_intents: Vec<f64>,
}

/// Reads `zone`'s NPC events and intents back from the bus until `stop`, each stream by its
/// own consumer (as a game and a quest tool would), acknowledging as a real consumer does.
pub(crate) async fn read_outputs(
    bus: Arc<dyn EventBus>,
    zone: String,
    sent: Sent,
    stop: watch::Receiver<bool>,
) -> Latencies {
    let interactions = read_stream(
        &bus,
        &zone,
        StreamKind::NpcEvents,
        stop.clone(),
        |body| {
            // The reader must not be what saturates the machine: skip the other NPC events
            // before parsing.
            if !body.contains("\"social_interaction\"") {
                return None;
            }
            let event = serde_json::from_str::<Sourced>(body).ok()?;
            (event.kind == "social_interaction").then(|| event.source.unwrap_or_default())
        },
        &sent,
    );
    let mut seen_ticks = BTreeSet::new();
    let first_intents = read_stream(
        &bus,
        &zone,
        StreamKind::Intents,
        stop,
        |body| {
            let t = serde_json::from_str::<GameTime>(body).ok()?.game_time;
            seen_ticks.insert(t).then(|| tick_key(&zone, t))
        },
        &sent,
    );
    let (social, first_intents) = tokio::join!(interactions, first_intents);
    Latencies {
        social,
        first_intents,
    }
}

/// Reads `stream` of `zone` until `stop`, each batch acknowledged with the next read; `probe`
/// names the probe a message answers, if any.
async fn read_stream(
    bus: &Arc<dyn EventBus>,
    zone: &str,
    stream: StreamKind,
    mut stop: watch::Receiver<bool>,
    mut probe: impl FnMut(&str) -> Option<String>,
    sent: &Sent,
) -> Vec<f64> {
    let mut latencies = Vec::new();
    let Ok(mut consumer) = bus.consumer(zone, stream, "load", "reader").await else {
        return latencies;
    };
    let mut handled: Vec<String> = Vec::new();
    while !*stop.borrow_and_update() {
        let Ok(batch) = consumer
            .ack_and_next_batch(&handled, 4096, Duration::from_millis(5))
            .await
        else {
            continue;
        };
        let now = Instant::now();
        latencies.extend(
            batch
                .iter()
                .filter_map(|d| sent.answered(&probe(&d.body)?, now)),
        );
        // Acknowledged with the next read, as a real consumer would (an unacked pending list
        // grows without end, and the periodic reclaim that scans it slows the server for
        // everyone).
        handled = batch.into_iter().map(|d| d.id).collect();
    }
    let _ = consumer.ack(&handled).await;
    latencies
}
