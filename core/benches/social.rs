//! Criterion bench of the social fabric and the story detector (figures in BENCHMARKS.md):
//! 10,000 NPCs in 100 places, a hundred of whom witnessed something; one social step (every NPC
//! may pick a partner through the decision engine, rumours are told, believed and reacted to)
//! and one detection over a full buffer of their events.

use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use geppetto_core::goals::GoalBook;
use geppetto_core::rng::derive_seed;
use geppetto_core::social::{
    FabricConfig, Gossip, GossipIntent, GossipKind, SocialFabric, SocialPlace, SocialProfile,
};
use geppetto_core::story::{DetectorConfig, StoryDetector, StoryEvent};
use geppetto_core::wellbeing::{Wellbeing, WellbeingConfig};
use geppetto_core::{Agent, Consideration, Decider, Position, SimulatedAgent, Vocabulary};

const NPCS: usize = 10_000;
const PLACES: usize = 100;

struct Town {
    fabric: SocialFabric,
    agents: Vec<SimulatedAgent>,
    places: Vec<SocialPlace>,
}

fn town() -> Town {
    let mut vocabulary = Vocabulary::new();
    let mut fabric = SocialFabric::new(FabricConfig::default(), &mut vocabulary);
    let needs: Vec<_> = ["SOCIAL", "ECONOMIC", "SURVIVAL", "PURPOSE", "AMBITION"]
        .iter()
        .map(|n| vocabulary.intern(n))
        .collect();
    let wellbeing = Arc::new(WellbeingConfig::default());
    let mut agents = Vec::with_capacity(NPCS);
    let mut places = Vec::with_capacity(NPCS);
    for i in 0..NPCS {
        let id = format!("npc{i:05}");
        let place = i % PLACES;
        let mut agent = Agent::new(
            id.clone(),
            Position::new((i / PLACES) as f64 * 0.5, place as f64 * 100.0),
        );
        for (k, need) in needs.iter().enumerate() {
            let level = 0.3 + 0.1 * ((i + k) % 5) as f64;
            agent
                .considerations
                .push(Consideration::new(*need, level, 0.0, 1.0));
        }
        let mut npc = SimulatedAgent::new(agent);
        npc.wellbeing = Some((Arc::clone(&wellbeing), Wellbeing::default()));
        npc.goals = Some(GoalBook::default());
        agents.push(npc);
        places.push(SocialPlace {
            location: format!("place{place}"),
            players: Vec::new(),
        });
        fabric.set_profile(
            &id,
            SocialProfile {
                gossip_tendency: 0.8,
                social_initiative: 0.6,
                ..SocialProfile::default()
            },
        );
        if i % PLACES == i / PLACES {
            fabric.learn(
                &id,
                Gossip {
                    subject: format!("npc{:05}", (i + 1) % NPCS),
                    kind: GossipKind::Threat,
                    intent: GossipIntent::Warn,
                    about_person: true,
                    confidence: 1.0,
                    origin_event: format!("theft:{i}"),
                    depth: 0,
                    holder: id.clone(),
                },
            );
        }
    }
    Town {
        fabric,
        agents,
        places,
    }
}

fn social(c: &mut Criterion) {
    let decider = Decider::default();
    let base = town();
    let mut group = c.benchmark_group("social");
    group.sample_size(10);
    group.bench_function("step_10k_npcs", |b| {
        b.iter_batched(
            || (base.fabric.clone(), base.agents.clone()),
            |(mut fabric, mut agents)| fabric.step(&mut agents, &base.places, 8.0, 7, &decider),
            BatchSize::LargeInput,
        );
    });
    // Six steps (an hour) of gossip spreading, for the detector's input.
    let (mut fabric, mut agents) = (base.fabric.clone(), base.agents.clone());
    let mut events: Vec<StoryEvent> = Vec::new();
    for step in 0..6u64 {
        let now = 8.0 + step as f64 / 6.0;
        let out = fabric.step(
            &mut agents,
            &base.places,
            now,
            derive_seed(7, step),
            &decider,
        );
        events.extend(out.events);
    }
    eprintln!("{} events from an hour of 10,000 NPCs", events.len());
    let mut warmed = StoryDetector::new(DetectorConfig::default());
    for chunk in events.chunks(1000) {
        for event in chunk {
            warmed.push(event.clone());
        }
        warmed.detect(9.0);
    }
    let batch: Vec<StoryEvent> = events.iter().rev().take(1000).cloned().collect();
    group.bench_function("detect_full_buffer_10k_npcs", |b| {
        b.iter_batched(
            || {
                let mut detector = warmed.clone();
                for event in &batch {
                    detector.push(event.clone());
                }
                detector
            },
            |mut detector| detector.detect(9.5),
            BatchSize::LargeInput,
        );
    });
    group.finish();
}

criterion_group!(benches, social);
criterion_main!(benches);
