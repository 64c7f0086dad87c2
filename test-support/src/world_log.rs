//! The village world logs the replay tests read: written by `scripts/world-log`, the generator
//! the replay benchmarks use (one `time_advanced` a tick among players coming and going,
//! thefts, insults, gifts and praise, weather, stalls opening and closing, lines said, the
//! zone's settings a few ticks in, a malformed line now and then).

use std::path::Path;
use std::process::{Command, Stdio};

/// Writes a log of `events` lines to `path`, streamed from the generator; its size in bytes.
pub fn write_world_log(events: usize, path: &Path) -> u64 {
    let script = crate::workspace_root().join("scripts/world-log");
    let file = std::fs::File::create(path).expect("create the log");
    let status = Command::new("python3")
        .arg(script)
        .args(["--events", &events.to_string()])
        .stdout(file)
        .stderr(Stdio::null())
        .status()
        .expect("python3 runs scripts/world-log");
    assert!(status.success(), "scripts/world-log --events {events}");
    std::fs::metadata(path).expect("written").len()
}
