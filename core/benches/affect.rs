//! Criterion bench of affect dynamics (figure in BENCHMARKS.md): one tick for each of 10,000
//! personas on the shipped calibration (9 states, 9 couplings, the outburst overlay on), a
//! tenth of them receiving an insult that tick.

use criterion::{Criterion, criterion_group, criterion_main};
use geppetto_core::affect::{AffectConfig, AffectEvent, AffectModel, merge_layers};
use std::hint::black_box;

const DEFAULTS: &str = include_str!("../../config/affect/defaults.yaml");
const HALGRIM: &str = include_str!("../../config/affect/halgrim.yaml");

fn bench_affect(c: &mut Criterion) {
    let mut value: serde_json::Value = serde_saphyr::from_str(DEFAULTS).unwrap_or_default();
    merge_layers(
        &mut value,
        serde_saphyr::from_str(HALGRIM).unwrap_or_default(),
    );
    let Ok(model) = AffectConfig::from_value(value)
        .map_err(|e| e.to_string())
        .and_then(|config| AffectModel::compile(&config).map_err(|e| e.to_string()))
    else {
        panic!("the shipped persona compiles")
    };
    let mut personas: Vec<_> = (0..10_000).map(|_| model.initial_state()).collect();
    let insult = [AffectEvent::new("insult").from_source("stranger")];
    c.bench_function("affect 10k personas one tick", |b| {
        b.iter(|| {
            for (i, state) in personas.iter_mut().enumerate() {
                let events: &[AffectEvent] = if i % 10 == 0 { &insult } else { &[] };
                black_box(model.step(state, events));
            }
        })
    });
}

criterion_group!(benches, bench_affect);
criterion_main!(benches);
