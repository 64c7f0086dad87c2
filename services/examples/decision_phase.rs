//! Times the decision phase of the load generator's zone — the batch decision a tick makes
//! for its NPCs that decide (`Decider::decide_batch_indexed` over the providers' index the zone
//! keeps between ticks: the scoring and the contention) — with its scoring on 1 and on 2 threads,
//! alternating in one process over the same NPCs, and checks both give the same answer (why a
//! zone decides on one thread: BENCHMARKS.md, "Threads"):
//!
//! ```sh
//! cargo build --release -p geppetto-service --example decision_phase
//! target/release/examples/decision_phase 10000 1000 200
//! ```
//!
//! Arguments: the zone's NPCs, the NPCs deciding in the batch (the zone's first ones; a tick
//! decides for at most `max_decisions_per_tick`, 1,000 by default) and the batches timed at
//! each worker count. Prints the median and the quartiles of each, and their ratio.

use std::process::ExitCode;
use std::time::Instant;

use geppetto_core::decision::batch_index::BatchIndex;
use geppetto_service::content::profiles::ProfileLibrary;
use geppetto_service::content::sets::SetLibrary;
use geppetto_service::drive::load::{LOAD_ZONE, build_zone};

/// The allocator the `geppetto` binary is built with, so the times are the service's.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |at: usize| args.get(at).and_then(|text| text.parse::<usize>().ok());
    let (Some(npcs), Some(deciding), Some(batches)) = (number(0), number(1), number(2)) else {
        eprintln!("usage: decision_phase NPCS DECIDING BATCHES");
        return ExitCode::FAILURE;
    };
    let built = ProfileLibrary::embedded()
        .map_err(|e| e.to_string())
        .and_then(|profiles| {
            let sets = SetLibrary::embedded().map_err(|e| e.to_string())?;
            build_zone(LOAD_ZONE, (npcs, None), &profiles, &sets).map_err(|e| e.to_string())
        });
    let load = match built {
        Ok(load) => load,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let zone = &load.zone;
    let agents: Vec<_> = zone
        .agents
        .iter()
        .take(deciding)
        .map(|a| &a.agent)
        .collect();
    let mut index = BatchIndex::new(&zone.world, zone.decider().tuning());
    let one = zone
        .decider()
        .decide_batch_indexed(&agents, &zone.world, &mut index, 7, 1);
    if zone
        .decider()
        .decide_batch_indexed(&agents, &zone.world, &mut index, 7, 2)
        != one
    {
        eprintln!("2 threads decided otherwise than 1");
        return ExitCode::FAILURE;
    }
    let mut times = [Vec::new(), Vec::new()];
    for batch in 0..batches * 2 {
        let (slot, count) = if batch % 2 == 0 { (0, 1) } else { (1, 2) };
        let start = Instant::now();
        let decided =
            zone.decider()
                .decide_batch_indexed(&agents, &zone.world, &mut index, 7, count);
        times[slot].push(start.elapsed().as_secs_f64() * 1e3);
        drop(decided);
    }
    let quartiles = |times: &mut Vec<f64>| {
        times.sort_by(f64::total_cmp);
        let at = |q: usize| times.get(times.len() * q / 4).copied().unwrap_or(0.0);
        (at(1), at(2), at(3))
    };
    let [mut on_one, mut on_two] = times;
    let (one_q1, one_median, one_q3) = quartiles(&mut on_one);
    let (two_q1, two_median, two_q3) = quartiles(&mut on_two);
    println!(
        "{npcs} NPCs, {} deciding, {} assigned, {batches} batches each: 1 thread {one_median:.3} ms \
         ({one_q1:.3}–{one_q3:.3}), 2 threads {two_median:.3} ms ({two_q1:.3}–{two_q3:.3}); \
         1 / 2 = {:.2}",
        agents.len(),
        one.assignments.iter().flatten().count(),
        one_median / two_median
    );
    ExitCode::SUCCESS
}
