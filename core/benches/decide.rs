//! Criterion benches of the decision engine (figures in BENCHMARKS.md):
//! - R1: one agent, 6 considerations, 16 providers × 2 actions (32 candidates), 3 tags each,
//!   one active context, top-k 3 — the cost of one `decide`.
//! - B50k: `decide_batch` with 50,000 agents over 2,000 providers of capacity 1–4, at 1 and 2
//!   worker threads — scoring plus contention.

use criterion::{Criterion, criterion_group, criterion_main};
use geppetto_core::rng::DetRng;
use geppetto_core::{
    AdvertisedAction, Agent, Consideration, Context, Decider, Position, Provider, Tuning,
    Vocabulary, World,
};
use std::hint::black_box;

const CONSIDERATIONS: [&str; 6] = ["HUNGER", "THIRST", "ENERGY", "FUN", "SOCIAL", "HYGIENE"];
const TAGS: [&str; 8] = [
    "food", "drink", "rest", "play", "talk", "wash", "indoor", "outdoor",
];

fn agent(
    vocabulary: &mut Vocabulary,
    id: String,
    position: Position,
    rng: &mut DetRng,
    needs: usize,
) -> Agent {
    let mut agent = Agent::new(id, position);
    for name in &CONSIDERATIONS[..needs] {
        let symbol = vocabulary.intern(name);
        agent.considerations.push(Consideration::new(
            symbol,
            rng.next_unit() * 100.0,
            0.0,
            100.0,
        ));
    }
    agent.tag_modifiers = vec![
        (vocabulary.intern("food"), 1.2),
        (vocabulary.intern("talk"), 0.8),
    ];
    agent
}

fn provider(
    vocabulary: &mut Vocabulary,
    id: String,
    position: Position,
    capacity: u32,
    radius: f64,
    rng: &mut DetRng,
) -> Provider {
    let actions = (0..2)
        .map(|a| {
            let mut action = AdvertisedAction::new(format!("act{a}"));
            let first = rng.next_index(CONSIDERATIONS.len());
            let second =
                (first + 1 + rng.next_index(CONSIDERATIONS.len() - 1)) % CONSIDERATIONS.len();
            action.deltas = vec![
                (
                    vocabulary.intern(CONSIDERATIONS[first]),
                    20.0 + rng.next_unit() * 30.0,
                ),
                (
                    vocabulary.intern(CONSIDERATIONS[second]),
                    -5.0 + rng.next_unit() * 15.0,
                ),
            ];
            action.tags = (0..3)
                .map(|t| vocabulary.intern(TAGS[(first + t * 3) % TAGS.len()]))
                .collect();
            action.radius = Some(radius);
            action
        })
        .collect();
    Provider {
        id,
        position,
        capacity,
        occupants: 0,
        state: None,
        actions,
    }
}

fn r1() -> (Decider, Agent, World) {
    let mut vocabulary = Vocabulary::new();
    let mut rng = DetRng::new(1);
    let agent = agent(
        &mut vocabulary,
        "smith".into(),
        Position::new(0.0, 0.0),
        &mut rng,
        6,
    );
    let providers = (0..16)
        .map(|p| {
            let position =
                Position::new(rng.next_unit() * 40.0 - 20.0, rng.next_unit() * 40.0 - 20.0);
            provider(
                &mut vocabulary,
                format!("p{p}"),
                position,
                4,
                100.0,
                &mut rng,
            )
        })
        .collect();
    let storm = Context {
        name: vocabulary.intern("storm"),
        tag_multipliers: vec![(vocabulary.intern("indoor"), 2.0)],
    };
    (
        Decider::new(Tuning::default()),
        agent,
        World {
            now_hours: 8.0,
            contexts: vec![storm],
            providers,
            ..World::default()
        },
    )
}

fn b50k() -> (Decider, Vec<Agent>, World) {
    const SIDE: f64 = 1000.0;
    let mut vocabulary = Vocabulary::new();
    let mut rng = DetRng::new(2);
    let providers = (0..2_000)
        .map(|p| {
            let position = Position::new(rng.next_unit() * SIDE, rng.next_unit() * SIDE);
            let capacity = 1 + rng.next_index(4) as u32;
            provider(
                &mut vocabulary,
                format!("p{p}"),
                position,
                capacity,
                40.0,
                &mut rng,
            )
        })
        .collect();
    let agents = (0..50_000)
        .map(|a| {
            let position = Position::new(rng.next_unit() * SIDE, rng.next_unit() * SIDE);
            agent(&mut vocabulary, format!("npc{a}"), position, &mut rng, 3)
        })
        .collect();
    (
        Decider::new(Tuning::default()),
        agents,
        World {
            now_hours: 8.0,
            contexts: Vec::new(),
            providers,
            ..World::default()
        },
    )
}

fn bench_r1(c: &mut Criterion) {
    let (decider, agent, world) = r1();
    let mut seed = 0u64;
    c.bench_function("R1 decide (32 candidates)", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            black_box(decider.decide(black_box(&agent), black_box(&world), seed))
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
