//! Runs the decision benches' scenes a fixed number of times, for instruction counts that do
//! not depend on timing (figures in BENCHMARKS.md):
//!
//! ```sh
//! cargo build --release -p geppetto-core --example decide_count
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/decide_count r1 40000
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/decide_count r1 0
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/decide_count r1-alloc 40000
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/decide_count r1-world 40000
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/decide_count r1-world 0
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/decide_count r1-bare 40000
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/decide_count r1-bare 0
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/decide_count b50k 1 1
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/decide_count b50k 0 1
//! ```
//!
//! The difference of two counts over the difference of their runs is the cost of one run;
//! `r1` decides over the world compiled once ([`geppetto_core::Decider::compile`]) into the last
//! decision ([`geppetto_core::CompiledWorld::decide_into`]), as a caller deciding again and
//! again over unchanged content does; `r1-alloc` the same into a new decision each time, and
//! `r1-world` over the world itself; `r1-bare` is the baseline of `r1`, the same formula over
//! the same candidates as a plain loop over flat arrays (`benches/setup/bare.rs`, checked at
//! set-up to pick what `r1` picks). `b50k` takes the worker count after the number of runs.

#[path = "../benches/setup/bare.rs"]
mod bare;
#[path = "../benches/setup/decide.rs"]
mod setup;

use std::hint::black_box;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |at: usize, default: u64| {
        args.get(at)
            .map_or(Some(default), |text| text.parse().ok())
            .unwrap_or_else(|| panic!("argument {at} is not a number: {:?}", args.get(at)))
    };
    let runs = number(1, 1);
    match args.first().map(String::as_str) {
        Some("r1") => {
            let (decider, agent, world) = setup::r1();
            let compiled = decider.compile(&world);
            let mut decision = Default::default();
            for seed in 0..runs {
                black_box(&compiled).decide_into(black_box(&agent), seed, &mut decision);
                black_box(&decision);
            }
        }
        Some("r1-alloc") => {
            let (decider, agent, world) = setup::r1();
            let compiled = decider.compile(&world);
            for seed in 0..runs {
                black_box(black_box(&compiled).decide(black_box(&agent), seed));
            }
        }
        Some("r1-world") => {
            let (decider, agent, world) = setup::r1();
            for seed in 0..runs {
                black_box(decider.decide(black_box(&agent), black_box(&world), seed));
            }
        }
        Some("r1-bare") => {
            let (decider, agent, world) = setup::r1();
            let compiled = decider.compile(&world);
            let bare = bare::BareR1::new(decider.tuning(), &agent, &world, &compiled);
            for seed in 0..runs {
                black_box(black_box(&bare).decide(black_box(&agent), seed));
            }
        }
        Some("b50k") => {
            let workers = number(2, 1) as usize;
            let (decider, agents, world) = setup::b50k();
            for _ in 0..runs {
                black_box(decider.decide_batch(black_box(&agents), black_box(&world), 7, workers));
            }
        }
        _ => panic!("usage: decide_count r1|r1-alloc|r1-world|r1-bare|b50k [runs] [workers]"),
    }
}
