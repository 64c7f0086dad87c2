//! Criterion bench of the social fabric and the story detector (figures in BENCHMARKS.md):
//! 10,000 NPCs in 100 places, a hundred of whom witnessed something; one social step (every NPC
//! may pick a partner through the decision engine, rumours are told, believed and reacted to)
//! and one detection over a full buffer of their events. Then a village's detection: five game
//! hours of a 200-NPC village's social events (seeded, shaped like the load generator's world)
//! detected every 30 minutes as the service does, and the cost of the last detection over the
//! history that built up.

use std::sync::Arc;

use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, Criterion, criterion_group, criterion_main};
use geppetto_core::life::goals::GoalBook;
use geppetto_core::life::wellbeing::{Wellbeing, WellbeingConfig};
use geppetto_core::rng::{DetRng, derive_seed};
use geppetto_core::social::{
    FabricConfig, Gossip, GossipIntent, RumourTopic, SocialFabric, SocialPlace, SocialProfile,
};
use geppetto_core::social::{Facet, InteractionKind};
use geppetto_core::story::{DetectorConfig, StoryDetector, StoryEvent, StoryEventKind};
use geppetto_core::{Agent, Consideration, Decider, Position, SimulatedAgent, Vocabulary};

const NPCS: usize = 10_000;
const PLACES: usize = 100;
const VILLAGE_NPCS: usize = 200;
const VILLAGE_PLACES: usize = 10;
/// Steps (game minutes) the village lives before the measured detection, and its cadence.
const VILLAGE_STEPS: u64 = 300;
const DETECT_EVERY: u64 = 30;
/// Events a village minute brings, like the load generator's 200-NPC world: mostly
/// relationship changes, a quarter interactions, now and then a rumour.
const VILLAGE_EVENTS_PER_MINUTE: usize = 6;

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
        npc.layers.make_mut().wellbeing =
            Some(Box::new((Arc::clone(&wellbeing), Wellbeing::default())));
        npc.layers.make_mut().goals = Some(Box::new(GoalBook::default()));
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
                    kind: RumourTopic::Threat,
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
    bench_detection(
        &mut group,
        "detect_full_buffer_10k_npcs",
        &warmed,
        &batch,
        9.5,
    );
    let mut detector = StoryDetector::new(DetectorConfig::default());
    let mut rng = DetRng::new(11);
    for step in 1..=VILLAGE_STEPS - DETECT_EVERY {
        let now = 8.0 + step as f64 / 60.0;
        for event in village_minute(&mut rng, now) {
            detector.push(event);
        }
        if step % DETECT_EVERY == 0 {
            detector.detect(now);
        }
    }
    let last_batch: Vec<StoryEvent> = (VILLAGE_STEPS - DETECT_EVERY + 1..=VILLAGE_STEPS)
        .flat_map(|step| village_minute(&mut rng, 8.0 + step as f64 / 60.0))
        .collect();
    let end = 8.0 + VILLAGE_STEPS as f64 / 60.0;
    bench_detection(
        &mut group,
        "detect_village_200_npcs_5_hours",
        &detector,
        &last_batch,
        end,
    );
    group.finish();
}

/// Benches one detection at `now` by a copy of `warmed` with `batch` buffered.
fn bench_detection(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    warmed: &StoryDetector,
    batch: &[StoryEvent],
    now: f64,
) {
    group.bench_function(name, |b| {
        b.iter_batched(
            || {
                let mut detector = warmed.clone();
                for event in batch {
                    detector.push(event.clone());
                }
                detector
            },
            |mut detector| detector.detect(now),
            BatchSize::LargeInput,
        );
    });
}

/// The facets a village's relationship changes touch.
const FACETS: [Facet; 4] = [
    Facet::Trust,
    Facet::Respect,
    Facet::Loyalty,
    Facet::Affinity,
];

/// The interactions a village's NPCs have.
const VILLAGE_INTERACTIONS: [InteractionKind; 4] = [
    InteractionKind::Trade,
    InteractionKind::Conversation,
    InteractionKind::Argument,
    InteractionKind::Gossip,
];

/// One of `choices`, drawn from `rng`.
fn pick<'c, T>(rng: &mut DetRng, choices: &'c [T]) -> &'c T {
    &choices[rng.next_index(choices.len())]
}

/// One minute of a village's social life at `now`: who changed their mind about whom, who
/// traded, chatted or argued, who heard what.
fn village_minute(rng: &mut DetRng, now: f64) -> Vec<StoryEvent> {
    let npc = |rng: &mut DetRng| format!("npc{:05}", rng.next_index(VILLAGE_NPCS));
    (0..VILLAGE_EVENTS_PER_MINUTE)
        .map(|_| {
            let (a, b) = (npc(rng), npc(rng));
            let roll = rng.next_unit();
            let kind = if roll < 0.7 {
                let facet = *pick(rng, &FACETS);
                let delta = rng.next_unit() * 0.2 - 0.12;
                StoryEventKind::RelationshipChanged {
                    from: a,
                    to: b,
                    facet,
                    delta,
                    value: 0.5 + delta,
                    cause: "conversation".into(),
                }
            } else if roll < 0.95 {
                let interaction = *pick(rng, &VILLAGE_INTERACTIONS);
                StoryEventKind::Interaction {
                    initiator: a,
                    target: b,
                    interaction,
                    success: rng.next_unit() < 0.8,
                    against: None,
                    initiator_faction: Some("villagers".into()),
                    target_faction: Some("villagers".into()),
                    target_loyalty_before: 0.3,
                    victim_loyalty_before: None,
                    initiator_affinity: 0.5,
                    target_affinity: 0.5,
                    initiator_mood: 0.4,
                    target_mood: 0.4,
                    witnessed: false,
                }
            } else {
                StoryEventKind::RumourHeard {
                    listener: a,
                    teller: b,
                    subject: npc(rng),
                    gossip: RumourTopic::Opportunity,
                    intent: GossipIntent::Inform,
                    depth: 1,
                    credibility: 0.5,
                    accepted: true,
                }
            };
            StoryEvent {
                at_hours: now,
                location: format!("place{}", rng.next_index(VILLAGE_PLACES)),
                players: vec!["p1".into()],
                kind,
            }
        })
        .collect()
}

criterion_group!(benches, social);
criterion_main!(benches);
