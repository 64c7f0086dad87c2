//! Reading a zone's stream on the in-process (or any) bus until what was read says enough.

use std::sync::Arc;
use std::time::{Duration, Instant};

use geppetto_service::bus::{EventBus, StreamKind};
use serde_json::Value;

/// Reads the village's `stream` under the group `test-reader` until `done` holds for what was
/// read (or `within` passes: the deadline only stops a broken run from hanging), returning
/// everything read. Later calls on the same stream go on where the last one stopped.
pub async fn read_until(
    bus: &Arc<dyn EventBus>,
    stream: StreamKind,
    within: Duration,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let mut consumer = bus
        .consumer("village", stream, "test-reader", "reader")
        .await
        .expect("consumer");
    let deadline = Instant::now() + within;
    let mut seen = Vec::new();
    while !done(&seen) && Instant::now() < deadline {
        let batch = consumer
            .next_batch(512, Duration::from_millis(50))
            .await
            .expect("read");
        seen.extend(
            batch
                .iter()
                .filter_map(|d| serde_json::from_str::<Value>(&d.body).ok()),
        );
    }
    seen
}
