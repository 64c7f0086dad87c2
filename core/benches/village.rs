//! Criterion bench of the living world (figures in BENCHMARKS.md): 10,000 NPCs built from the
//! shipped archetypes (needs, schedules, goals, barks, wellbeing) living one simulated hour —
//! 60 zone ticks with batch contention — and the bytes an NPC takes stored as its differences.

use std::collections::BTreeMap;

use criterion::{Criterion, criterion_group, criterion_main};
use geppetto_core::archetype::{CompiledArchetype, NpcRecord, resolve_archetypes};
use geppetto_core::life::simulator::AgentTick;
use geppetto_core::rng::DetRng;
use geppetto_core::{
    AdvertisedAction, Decider, Position, Provider, SimulatedAgent, Simulator, Tuning, Vocabulary,
    World,
};

const ARCHETYPES: [&str; 9] = [
    include_str!("../../config/archetypes/villager.yaml"),
    include_str!("../../config/archetypes/blacksmith.yaml"),
    include_str!("../../config/archetypes/guard.yaml"),
    include_str!("../../config/archetypes/merchant.yaml"),
    include_str!("../../config/archetypes/innkeeper.yaml"),
    include_str!("../../config/archetypes/farmer.yaml"),
    include_str!("../../config/archetypes/priest.yaml"),
    include_str!("../../config/archetypes/child.yaml"),
    include_str!("../../config/archetypes/thief.yaml"),
];

/// `(provider, position, [(action, tag, need, delta)])`.
type Place = (
    &'static str,
    (f64, f64),
    &'static [(&'static str, &'static str, &'static str, f64)],
);

const PLACES: [Place; 8] = [
    (
        "tavern",
        (0.0, 0.0),
        &[
            ("eat_stew", "food", "COMFORT", 0.4),
            ("drink_with_friends", "social", "SOCIAL", 0.4),
        ],
    ),
    (
        "forge",
        (30.0, 5.0),
        &[("hammer_iron", "work", "PURPOSE", 0.3)],
    ),
    (
        "fields",
        (-60.0, 40.0),
        &[("till_the_soil", "farm", "PURPOSE", 0.3)],
    ),
    (
        "market",
        (10.0, -25.0),
        &[
            ("mind_the_stall", "trade", "ECONOMIC", 0.3),
            ("browse", "leisure", "SOCIAL", 0.15),
        ],
    ),
    (
        "chapel",
        (-20.0, -30.0),
        &[("pray", "worship", "PURPOSE", 0.3)],
    ),
    (
        "square",
        (5.0, 10.0),
        &[
            ("play_games", "play", "SOCIAL", 0.3),
            ("chat", "social", "SOCIAL", 0.2),
        ],
    ),
    (
        "gate",
        (80.0, 0.0),
        &[("stand_watch", "patrol", "PURPOSE", 0.3)],
    ),
    (
        "cottages",
        (-10.0, 20.0),
        &[
            ("sleep", "rest", "COMFORT", 0.5),
            ("bread_and_cheese", "food", "COMFORT", 0.2),
        ],
    ),
];

fn village(npcs: usize) -> (Simulator, Vec<SimulatedAgent>, World, usize) {
    let mut authored = BTreeMap::new();
    for text in ARCHETYPES {
        let value: serde_json::Value = serde_saphyr::from_str(text).unwrap_or_default();
        let name = value["name"].as_str().unwrap_or_default().to_owned();
        authored.insert(name, value);
    }
    let Ok(resolved) = resolve_archetypes(&authored) else {
        panic!("the shipped archetypes resolve")
    };
    let mut vocabulary = Vocabulary::new();
    let compiled: Vec<CompiledArchetype> = resolved
        .values()
        .map(|spec| CompiledArchetype::new(spec.clone(), &mut vocabulary))
        .collect();
    let providers = PLACES
        .iter()
        .map(|(id, (x, y), actions)| Provider {
            id: (*id).to_owned(),
            position: Position::new(*x, *y),
            capacity: 100_000,
            occupants: 0,
            state: None,
            actions: actions
                .iter()
                .map(|(action, tag, need, delta)| {
                    let mut a = AdvertisedAction::new(*action);
                    a.tags = vec![vocabulary.intern(tag)].into();
                    a.deltas = vec![(vocabulary.intern(need), *delta)].into();
                    a.duration_hours = 0.75;
                    a
                })
                .collect(),
        })
        .collect();
    let workplaces = ["forge", "fields", "market", "gate", "chapel", "tavern"];
    let mut rng = DetRng::new(9);
    let mut bytes = 0;
    let agents = (0..npcs)
        .filter_map(|i| {
            let archetype = &compiled[i % compiled.len()];
            let record = NpcRecord {
                id: format!("npc{i}"),
                archetype: archetype.spec.name.clone(),
                position: [
                    rng.next_unit() * 100.0 - 50.0,
                    rng.next_unit() * 100.0 - 50.0,
                ],
                places: [
                    (
                        "workplace".to_owned(),
                        workplaces[i % workplaces.len()].to_owned(),
                    ),
                    ("home".to_owned(), "cottages".to_owned()),
                ]
                .into_iter()
                .collect(),
                overrides: serde_json::json!({"needs": {"COMFORT": {"initial": rng.next_unit()}}}),
            };
            bytes += record.stored_bytes();
            archetype.instantiate(&record, &mut vocabulary).ok()
        })
        .collect::<Vec<_>>();
    let simulator = Simulator::new(Decider::new(Tuning::default())).settling_resources(true);
    (
        simulator,
        agents,
        World {
            now_hours: 7.0,
            providers,
            ..World::default()
        },
        bytes / npcs.max(1),
    )
}

fn bench_village(c: &mut Criterion) {
    let (simulator, agents, world, bytes_per_npc) = village(10_000);
    eprintln!(
        "village: {} NPCs, {bytes_per_npc} bytes per stored NPC",
        agents.len()
    );
    let ticks = vec![AgentTick::default(); agents.len()];
    let mut group = c.benchmark_group("village");
    group.sample_size(10);
    for workers in [1, 2] {
        group.bench_function(
            format!("10k NPCs one simulated hour ({workers} worker(s))"),
            |b| {
                b.iter_batched(
                    || (agents.clone(), world.clone()),
                    |(mut agents, mut world)| {
                        for minute in 0..60 {
                            let now = 7.0 + f64::from(minute) / 60.0;
                            world.now_hours = now;
                            simulator.advance_zone(
                                &mut agents,
                                &ticks,
                                now,
                                &mut world,
                                u64::from(minute as u32),
                                workers,
                            );
                        }
                        agents
                    },
                    criterion::BatchSize::LargeInput,
                )
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench_village);
criterion_main!(benches);
