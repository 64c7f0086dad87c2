//! The scenes of the decision benches, shared by `benches/decide.rs` (criterion) and
//! `examples/decide_count.rs` (a fixed number of runs, for instruction counts):
//! - R1: one agent, 6 considerations, 16 providers × 2 actions (32 candidates), 3 tags each,
//!   one active context, top-k 3.
//! - B50k: 50,000 agents over 2,000 providers of capacity 1–4 (radius 40 on a 1000 × 1000 map).

use geppetto_core::rng::DetRng;
use geppetto_core::{
    AdvertisedAction, Agent, Consideration, Context, Decider, Position, Provider, Tuning,
    Vocabulary, World,
};

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
    ]
    .into();
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
            ]
            .into();
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

pub fn r1() -> (Decider, Agent, World) {
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

pub fn b50k() -> (Decider, Vec<Agent>, World) {
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
