//! Peak memory of `geppetto replay` does not grow with the log, counted, not timed: the
//! binary's peak resident set (the kernel's `ru_maxrss` of the waited child) replaying a
//! generated village log of 4N events exceeds its peak on N events by a small fraction of the
//! extra log's bytes. Holding the whole log and every parsed message cost about ten bytes of
//! peak per byte of log.
//!
//! Each test measures its own children: nextest (the suite's runner) runs every test in a
//! process of its own, and the kernel reports the largest child a process has waited for.

use std::path::Path;
use std::process::{Command, Stdio};

use nix::sys::resource::{UsageWho, getrusage};
use support::world_log;

/// World events in the shorter log (some 1,200 game minutes, ten pages of the reader's).
const EVENTS: usize = 40_000;
/// At most this many bytes of peak resident memory more per byte of extra log: what is left
/// is the allocator's noise (a few MiB from run to run) and the village's bounded histories
/// filling up.
const MOST_PER_EXTRA_BYTE: f64 = 0.5;

/// The largest resident set, in bytes, of any child this process has waited for so far.
fn largest_child() -> u64 {
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    u64::try_from(usage.max_rss()).expect("a size") * 1024
}

/// Replays `log`, its intents discarded; how many it emitted, as the summary says.
fn replay(log: &Path) -> u64 {
    let output = Command::new(env!("CARGO_BIN_EXE_geppetto"))
        .args(["replay", "--log"])
        .arg(log)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("geppetto replay runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let summary = stderr.lines().last().unwrap_or_default();
    summary
        .strip_prefix("-- ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no summary in {stderr}"))
}

#[test]
fn a_log_four_times_longer_replays_in_about_the_same_memory() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let (short, long) = (
        dir.join("replay-short.jsonl"),
        dir.join("replay-long.jsonl"),
    );
    let short_bytes = world_log::write_world_log(EVENTS, &short);
    let long_bytes = world_log::write_world_log(EVENTS * 4, &long);
    let generator = largest_child();
    let replayed = replay(&short);
    let short_peak = largest_child();
    assert!(
        short_peak > generator,
        "the replay's peak ({short_peak} bytes) is measured, not the generator's ({generator})"
    );
    assert!(
        replayed > (EVENTS as u64) * 9 / 10,
        "{replayed} entries replayed"
    );
    let replayed = replay(&long);
    assert!(
        replayed > (EVENTS as u64) * 36 / 10,
        "{replayed} entries replayed"
    );
    let long_peak = largest_child();
    let per_extra_byte =
        long_peak.saturating_sub(short_peak) as f64 / (long_bytes - short_bytes) as f64;
    eprintln!(
        "replay peaks: {short_peak} bytes for {short_bytes} bytes of log, {long_peak} for \
         {long_bytes}: {per_extra_byte:.3} bytes per extra byte"
    );
    assert!(
        per_extra_byte <= MOST_PER_EXTRA_BYTE,
        "replaying {long_bytes} bytes peaked at {long_peak} bytes, {short_bytes} bytes at \
         {short_peak}: {per_extra_byte:.2} bytes per extra byte of log, at most \
         {MOST_PER_EXTRA_BYTE}"
    );
    let _ = std::fs::remove_file(short);
    let _ = std::fs::remove_file(long);
}
