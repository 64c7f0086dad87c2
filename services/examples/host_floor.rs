//! What the host does to a computation that never changes: the tail a tick's times inherit
//! from the machine, whatever the tick does. It times one fixed computation the way
//! `tick_count --times` times a tick (a wait, then the work, again and again) and prints the
//! percentiles of its times, so a tick's p99 can be read against the p99 this host gives to
//! work of the same median (figures in BENCHMARKS.md):
//!
//! ```sh
//! cargo build --release -p geppetto-service --example host_floor
//! target/release/examples/host_floor 3.5                # arithmetic, about 3.5 ms a round
//! target/release/examples/host_floor 3.5 --memory       # dependent reads over 64 MiB
//! target/release/examples/host_floor 3.5 --gap 0 --rounds 1000
//! ```
//!
//! Arguments: the milliseconds one round should take; `--memory` makes the round a chain of
//! dependent reads over a 64 MiB table (nearly every one a cache miss) instead of a chain of
//! multiplies; `--gap MS` is the wait before each round (default 48, `tick_count`'s ten ticks
//! a second with the tick's own time left over; 0: back to back); `--rounds N` (default 300).
//! The round's size is found first: the median of a few timings scaled to the target, back to
//! back and then after the wait. The percentiles are taken over the rounds after the first
//! 100, as `tick_count`'s phases are, and use the same rank: the p99 of 200 rounds is the
//! second-slowest.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Entries of the `--memory` table: 64 MiB of `u32`, far past the caches.
const TABLE_ENTRIES: usize = 16 << 20;

/// Rounds timed to size a round, at each of its two steps.
const CALIBRATION_ROUNDS: usize = 15;

/// The steps of the first rounds timed while sizing a round.
const CALIBRATION_STEPS: u64 = 1 << 20;

/// Rounds left out of the percentiles, as `tick_count` leaves out the first 100 ticks.
const WARM_UP_ROUNDS: usize = 100;

/// One round of fixed work: `steps` links of a dependent chain.
enum Work {
    /// A chain of multiply-adds, in registers.
    Arithmetic,
    /// A chain of reads, each at the index the last one read: one cycle through the table.
    Memory(Vec<u32>),
}

impl Work {
    fn run(&self, steps: u64) -> u64 {
        match self {
            Self::Arithmetic => {
                let mut value = 1u64;
                for step in 0..steps {
                    value = value
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(step);
                }
                value
            }
            Self::Memory(table) => {
                let mut at = 0usize;
                for _ in 0..steps {
                    at = table.get(at).map_or(0, |&next| next as usize);
                }
                at as u64
            }
        }
    }

    /// The milliseconds `steps` links take, once.
    fn time(&self, steps: u64) -> f64 {
        let started = Instant::now();
        black_box(self.run(black_box(steps)));
        started.elapsed().as_secs_f64() * 1000.0
    }
}

/// A single cycle through `entries` slots in a scrambled order (Sattolo's shuffle, from a
/// fixed seed), so each read's address comes from the read before it.
fn cycle(entries: usize) -> Vec<u32> {
    let mut order: Vec<u32> = (0..entries as u32).collect();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for last in (1..entries).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let other = (state % last as u64) as usize;
        order.swap(last, other);
    }
    let mut table = vec![0u32; entries];
    for pair in order.windows(2) {
        table[pair[0] as usize] = pair[1];
    }
    if let (Some(&last), Some(&first)) = (order.last(), order.first()) {
        table[last as usize] = first;
    }
    table
}

/// The value at rank `quantile` of `sorted` (the element `quantile × len` counted from 0).
fn at_rank(sorted: &[f64], quantile: f64) -> f64 {
    let rank = ((quantile * sorted.len() as f64) as usize).min(sorted.len().saturating_sub(1));
    sorted.get(rank).copied().unwrap_or(f64::NAN)
}

struct Options {
    target_ms: f64,
    memory: bool,
    gap: Duration,
    rounds: usize,
}

fn options(mut args: Vec<String>) -> Result<Options, String> {
    let mut take = |flag: &str| -> Result<Option<String>, String> {
        match args.iter().position(|a| a == flag) {
            None => Ok(None),
            Some(at) => {
                let value = args.get(at + 1).cloned();
                let Some(value) = value else {
                    return Err(format!("{flag} takes a number"));
                };
                args.drain(at..=at + 1);
                Ok(Some(value))
            }
        }
    };
    let gap = match take("--gap")? {
        None => 48,
        Some(ms) => ms
            .parse::<u64>()
            .map_err(|e| format!("--gap `{ms}`: {e}"))?,
    };
    let rounds = match take("--rounds")? {
        None => 300,
        Some(n) => n
            .parse::<usize>()
            .map_err(|e| format!("--rounds `{n}`: {e}"))?,
    };
    let memory = match args.iter().position(|a| a == "--memory") {
        None => false,
        Some(at) => {
            args.remove(at);
            true
        }
    };
    let [target] = args.as_slice() else {
        return Err("usage: host_floor MILLISECONDS [--memory] [--gap MS] [--rounds N]".to_owned());
    };
    let target_ms = target
        .parse::<f64>()
        .ok()
        .filter(|ms| ms.is_finite() && *ms > 0.0)
        .ok_or_else(|| format!("the round's milliseconds `{target}`: a positive number"))?;
    if rounds <= WARM_UP_ROUNDS {
        return Err(format!(
            "--rounds {rounds}: more than the {WARM_UP_ROUNDS} left out are needed"
        ));
    }
    Ok(Options {
        target_ms,
        memory,
        gap: Duration::from_millis(gap),
        rounds,
    })
}

fn main() -> ExitCode {
    let options = match options(std::env::args().skip(1).collect()) {
        Ok(options) => options,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let work = if options.memory {
        Work::Memory(cycle(TABLE_ENTRIES))
    } else {
        Work::Arithmetic
    };
    // Sized back to back first, then again after the wait, where a step can cost more (the
    // caches and the translations of the table are colder).
    let mut steps = CALIBRATION_STEPS;
    for gap in [Duration::ZERO, options.gap] {
        let mut sizing: Vec<f64> = (0..CALIBRATION_ROUNDS)
            .map(|_| {
                std::thread::sleep(gap);
                work.time(steps)
            })
            .collect();
        sizing.sort_by(f64::total_cmp);
        let per_step_ms = at_rank(&sizing, 0.5) / steps as f64;
        steps = ((options.target_ms / per_step_ms) as u64).max(1);
    }
    let mut times = Vec::with_capacity(options.rounds);
    for _ in 0..options.rounds {
        std::thread::sleep(options.gap);
        times.push(work.time(steps));
    }
    let mut kept = times.split_off(WARM_UP_ROUNDS);
    kept.sort_by(f64::total_cmp);
    let (p50, p99) = (at_rank(&kept, 0.5), at_rank(&kept, 0.99));
    println!(
        "{} rounds of {steps} {} steps after a {} ms wait: p50 {p50:.3} p90 {:.3} p99 {p99:.3} max {:.3} ms, p99/p50 {:.2}",
        kept.len(),
        if options.memory { "read" } else { "arithmetic" },
        options.gap.as_millis(),
        at_rank(&kept, 0.9),
        kept.last().copied().unwrap_or(f64::NAN),
        p99 / p50,
    );
    ExitCode::SUCCESS
}
