//! Criterion bench of timed simulation (figure in BENCHMARKS.md): one full-detail tick for
//! each of 10,000 agents (4 linear-decay considerations each) in a village of 24 providers,
//! actions lasting 15–90 game minutes — so most ticks progress a running action and a few
//! percent of agents decide anew.

use criterion::{Criterion, criterion_group, criterion_main};
use geppetto_core::rng::{DetRng, derive_seed};
use geppetto_core::{
    AdvertisedAction, Agent, Consideration, Decider, DetailLevel, Position, Provider,
    SimulatedAgent, Simulator, TickRequest, Tuning, Updater, Vocabulary, World,
};
use std::hint::black_box;

const NEEDS: [&str; 4] = ["HUNGER", "ENERGY", "FUN", "SOCIAL"];

fn village() -> (Simulator, Vec<SimulatedAgent>, World) {
    let mut vocabulary = Vocabulary::new();
    let mut rng = DetRng::new(3);
    let providers = (0..24)
        .map(|p| {
            let need = NEEDS[p % NEEDS.len()];
            let mut action = AdvertisedAction::new(format!("use{p}"));
            action.deltas = vec![(vocabulary.intern(need), 30.0 + rng.next_unit() * 30.0)].into();
            action.duration_hours = 0.25 + rng.next_unit() * 1.25;
            action.tags = vec![vocabulary.intern(need)].into();
            let position = Position::new(rng.next_unit() * 100.0, rng.next_unit() * 100.0);
            Provider {
                id: format!("p{p}"),
                position,
                capacity: 1000,
                occupants: 0,
                state: None,
                actions: vec![action],
            }
        })
        .collect();
    let agents = (0..10_000)
        .map(|a| {
            let mut agent = Agent::new(
                format!("npc{a}"),
                Position::new(rng.next_unit() * 100.0, rng.next_unit() * 100.0),
            );
            for need in NEEDS {
                let mut consideration = Consideration::new(
                    vocabulary.intern(need),
                    20.0 + rng.next_unit() * 80.0,
                    0.0,
                    100.0,
                );
                consideration.behaviour_mut().updater = Updater::LinearDecay {
                    rate: 2.0 + rng.next_unit() * 6.0,
                };
                consideration.behaviour_mut().critical_threshold = Some(10.0);
                agent.considerations.push(consideration);
            }
            SimulatedAgent::new(agent)
        })
        .collect();
    let world = World {
        now_hours: 8.0,
        providers,
        ..World::default()
    };
    (
        Simulator::new(Decider::new(Tuning::default())),
        agents,
        world,
    )
}

fn bench_advance(c: &mut Criterion) {
    let (simulator, mut agents, world) = village();
    let minute = 1.0 / 60.0;
    // Warm the village up for an hour so actions are mid-way, as in a running world.
    let mut tick = 0u64;
    let step = |agents: &mut Vec<SimulatedAgent>, tick: u64| {
        let now = 8.0 + tick as f64 * minute;
        for (index, agent) in agents.iter_mut().enumerate() {
            let request = TickRequest {
                now_hours: now,
                world: &world,
                level: DetailLevel::Full,
                simplified_event: None,
            };
            black_box(simulator.advance(agent, request, derive_seed(tick, index as u64)));
        }
    };
    for _ in 0..60 {
        step(&mut agents, tick);
        tick += 1;
    }
    c.bench_function("advance 10k agents one full tick", |b| {
        b.iter(|| {
            step(&mut agents, tick);
            tick += 1;
        })
    });
}

criterion_group!(benches, bench_advance);
criterion_main!(benches);
