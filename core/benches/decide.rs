//! Criterion benches of the decision engine (figures in BENCHMARKS.md):
//! - R1: one agent, 6 considerations, 16 providers × 2 actions (32 candidates), 3 tags each,
//!   one active context, top-k 3 — the cost of one `decide` over the world compiled once
//!   (`Decider::compile`), into the last decision (`CompiledWorld::decide_into`) and into a new
//!   one, and over the world itself; and the baseline it is measured against, the same formula
//!   over the same candidates as a plain loop over flat arrays (`setup/bare.rs`).
//! - B50k: `decide_batch` with 50,000 agents over 2,000 providers of capacity 1–4, at 1 and 2
//!   worker threads — scoring plus contention.

#[path = "setup/bare.rs"]
mod bare;
#[path = "setup/decide.rs"]
mod setup;

use bare::BareR1;
use criterion::{Criterion, criterion_group, criterion_main};
use setup::{b50k, r1};
use std::hint::black_box;

fn bench_r1(c: &mut Criterion) {
    let (decider, agent, world) = r1();
    let compiled = decider.compile(&world);
    let mut seed = 0u64;
    let mut decision = Default::default();
    c.bench_function("R1 decide (32 candidates)", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            black_box(&compiled).decide_into(black_box(&agent), seed, &mut decision);
            black_box(&decision);
        })
    });
    c.bench_function("R1 decide, allocating (32 candidates)", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            black_box(black_box(&compiled).decide(black_box(&agent), seed))
        })
    });
    c.bench_function("R1 decide over the world (32 candidates)", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            black_box(decider.decide(black_box(&agent), black_box(&world), seed))
        })
    });
    // Picks what `decide_into` picks (checked as it is built).
    let bare = BareR1::new(decider.tuning(), &agent, &world, &compiled);
    c.bench_function("R1 bare loop of the same formula (32 candidates)", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            black_box(black_box(&bare).decide(black_box(&agent), seed))
        })
    });
}

fn bench_b50k(c: &mut Criterion) {
    let (decider, agents, world) = b50k();
    let sample = decider.decide_batch(&agents, &world, 7, 1);
    let assigned = sample.assignments.iter().filter(|a| a.is_some()).count();
    eprintln!(
        "B50k: {} assigned of {}, {} contention rounds",
        assigned,
        agents.len(),
        sample.rounds
    );
    let mut group = c.benchmark_group("B50k decide_batch");
    group.sample_size(10);
    for workers in [1, 2] {
        group.bench_function(format!("{workers} worker(s)"), |b| {
            b.iter(|| {
                black_box(decider.decide_batch(black_box(&agents), black_box(&world), 7, workers))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_r1, bench_b50k);
criterion_main!(benches);
