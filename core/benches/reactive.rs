//! Criterion bench of a reactive utility set (figure in BENCHMARKS.md): scoring and selecting
//! a 15-action set, 4 considerations per action over 6 inputs, mixed curve shapes, bucketed.

use criterion::{Criterion, criterion_group, criterion_main};
use geppetto_core::decision::curve::{SampledCurve, Shape, ShapeParams};
use geppetto_core::life::reactive::{
    Selector, SetAction, SetConsideration, SetInput, SetState, UtilitySet,
};
use geppetto_core::rng::DetRng;
use geppetto_core::vocabulary::Vocabulary;
use std::hint::black_box;

fn set() -> UtilitySet {
    let mut vocabulary = Vocabulary::new();
    let inputs = (0..6)
        .map(|i| SetInput {
            name: vocabulary.intern(&format!("in{i}")),
            min: 0.0,
            max: 100.0,
        })
        .collect();
    let shapes = |i: usize| match i % 5 {
        0 => Shape::Linear(ShapeParams {
            slope: 0.9,
            exponent: 1.0,
            x_shift: 0.0,
            y_shift: 0.1,
        }),
        1 => Shape::Polynomial(ShapeParams {
            slope: 1.0,
            exponent: 2.0,
            x_shift: 0.0,
            y_shift: 0.05,
        }),
        2 => Shape::Logistic(ShapeParams {
            slope: 1.0,
            exponent: 10.0,
            x_shift: 0.5,
            y_shift: 0.0,
        }),
        3 => Shape::Gaussian(ShapeParams {
            slope: 1.0,
            exponent: 0.3,
            x_shift: 0.5,
            y_shift: 0.0,
        }),
        _ => Shape::Sampled(
            SampledCurve::new(vec![(0.0, 0.2), (0.5, 0.9), (1.0, 0.4)])
                .unwrap_or_else(|_| unreachable!()),
        ),
    };
    let actions = (0..15)
        .map(|a| SetAction {
            name: format!("action{a}"),
            weight: 1.0 + (a % 3) as f64,
            bucket: (a % 4) as u32,
            cooldown_s: 0.0,
            considerations: (0..4)
                .map(|c| SetConsideration {
                    name: format!("c{c}"),
                    input: (a + c) % 6,
                    shape: shapes(a + c),
                })
                .collect(),
        })
        .collect();
    UtilitySet {
        name: "bench".into(),
        inputs,
        selector: Selector::Bucketed,
        commitment_bonus: 0.15,
        decision_interval_s: 0.2,
        emergency_bucket: Some(3),
        actions,
    }
}

fn bench_set(c: &mut Criterion) {
    let set = set();
    let state = SetState {
        running: Some(4),
        ..SetState::default()
    };
    let inputs = [12.0, 47.0, 88.0, 35.0, 61.0, 5.0];
    let mut seed = 0u64;
    c.bench_function(
        "utility set 15 actions x 4 considerations (evaluate + select)",
        |b| {
            b.iter(|| {
                seed = seed.wrapping_add(1);
                let scores = set.evaluate(black_box(&state), black_box(&inputs), 1.0);
                black_box(set.select(&scores, &mut DetRng::new(seed)))
            })
        },
    );
}

criterion_group!(benches, bench_set);
criterion_main!(benches);
