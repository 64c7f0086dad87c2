//! Batch decisions: ranked preferences, proximity-first contention, both slot levels, and the
//! guarantee that no result over-fills a provider or an action.

mod support;

use geppetto_core::{Agent, Decider, Position, Tuning, TuningPatch, World};
use proptest::prelude::*;
use support::{Scene, provider, world};

fn argmax() -> Decider {
    Decider::new(
        TuningPatch {
            selection_top_k: Some(1),
            ..Default::default()
        }
        .resolve(),
    )
}

fn assigned(world: &World, batch: &geppetto_core::BatchDecision, agent: usize) -> Option<String> {
    batch.assignments[agent].map(|p| {
        format!(
            "{}/{}",
            world.providers[p.provider].id, world.providers[p.provider].actions[p.action].id
        )
    })
}

#[test]
fn proximity_beats_utility_and_the_loser_takes_plan_b() {
    let mut scene = Scene::default();
    let near_but_fed = scene.agent("near", 1.0, 0.0, &[("HUNGER", 60.0)]);
    let far_and_starving = scene.agent("far", 6.0, 0.0, &[("HUNGER", 5.0)]);
    let world = world(vec![
        provider(
            "stall",
            0.0,
            0.0,
            1,
            vec![scene.action("eat", &[("HUNGER", 40.0)], &[])],
        ),
        provider(
            "tavern",
            30.0,
            0.0,
            5,
            vec![scene.action("eat", &[("HUNGER", 40.0)], &[])],
        ),
    ]);
    let agents = vec![far_and_starving, near_but_fed];
    let batch = argmax().decide_batch(&agents, &world, 1, 1);
    assert!(
        batch.preferences.of(0)[0].utility > batch.preferences.of(1)[0].utility,
        "the far agent wants it more"
    );
    assert_eq!(assigned(&world, &batch, 1).as_deref(), Some("stall/eat"));
    assert_eq!(
        assigned(&world, &batch, 0).as_deref(),
        Some("tavern/eat"),
        "plan B"
    );
}

#[test]
fn capacity_n_takes_the_n_closest() {
    let mut scene = Scene::default();
    let agents: Vec<Agent> = [5.0, 1.0, 6.0, 3.0, 2.0, 4.0]
        .iter()
        .enumerate()
        .map(|(i, d)| scene.agent(&format!("a{i}"), *d, 0.0, &[("HUNGER", 10.0)]))
        .collect();
    let world = world(vec![provider(
        "well",
        0.0,
        0.0,
        3,
        vec![scene.action("drink", &[("HUNGER", 30.0)], &[])],
    )]);
    let batch = argmax().decide_batch(&agents, &world, 1, 1);
    let winners: Vec<f64> = (0..agents.len())
        .filter(|&a| batch.assignments[a].is_some())
        .map(|a| agents[a].position.x)
        .collect();
    assert_eq!(winners, [1.0, 3.0, 2.0]);
}

#[test]
fn ties_in_distance_go_to_the_smaller_id_then_the_earlier_index() {
    let mut scene = Scene::default();
    let agents = vec![
        scene.agent("bob", 2.0, 0.0, &[("HUNGER", 10.0)]),
        scene.agent("amy", 0.0, 2.0, &[("HUNGER", 10.0)]),
    ];
    let world = world(vec![provider(
        "well",
        0.0,
        0.0,
        1,
        vec![scene.action("drink", &[("HUNGER", 30.0)], &[])],
    )]);
    let batch = argmax().decide_batch(&agents, &world, 1, 1);
    assert!(batch.assignments[1].is_some() && batch.assignments[0].is_none());
}

#[test]
fn displacements_cascade_and_stabilise() {
    // a is closest to P1. b wants P1 but loses, falls to P2 and displaces c (farther from P2),
    // who falls to P3: two rounds with a displacement, then a quiet one.
    let mut scene = Scene::default();
    let mut a = scene.agent("a", 0.0, 1.0, &[("N", 0.0)]);
    let mut b = scene.agent("b", 0.0, 2.0, &[("N", 0.0)]);
    let mut c = scene.agent("c", 10.0, 9.0, &[("N", 0.0)]);
    for agent in [&mut a, &mut b, &mut c] {
        Scene::linear_curves(agent);
    }
    let mut p1 = provider(
        "p1",
        0.0,
        0.0,
        1,
        vec![scene.action("use", &[("N", 90.0)], &[])],
    );
    let mut p2 = provider(
        "p2",
        0.0,
        5.0,
        1,
        vec![scene.action("use", &[("N", 60.0)], &[])],
    );
    let p3 = provider(
        "p3",
        10.0,
        10.0,
        1,
        vec![scene.action("use", &[("N", 30.0)], &[])],
    );
    p1.actions[0].radius = Some(3.0); // c cannot see p1
    p2.actions[0].radius = Some(20.0);
    let world = world(vec![p1, p2, p3]);
    let tuning = TuningPatch {
        selection_top_k: Some(1),
        distance_reference: Some(1000.0),
        ..Default::default()
    };
    let batch = Decider::new(tuning.resolve()).decide_batch(&[a, b, c], &world, 1, 1);
    assert_eq!(batch.preferences.of(2)[0].provider, 1, "c first wants p2");
    assert_eq!(assigned(&world, &batch, 0).as_deref(), Some("p1/use"));
    assert_eq!(assigned(&world, &batch, 1).as_deref(), Some("p2/use"));
    assert_eq!(assigned(&world, &batch, 2).as_deref(), Some("p3/use"));
    assert_eq!(batch.rounds, 3);
}

#[test]
fn action_capacity_zero_never_blocks_and_both_levels_must_have_a_slot() {
    let mut scene = Scene::default();
    let agents: Vec<Agent> = (0..4)
        .map(|i| scene.agent(&format!("a{i}"), i as f64, 0.0, &[("HUNGER", 10.0)]))
        .collect();
    // Unlimited action on a provider of 4: everyone fits.
    let open = world(vec![provider(
        "inn",
        0.0,
        0.0,
        4,
        vec![scene.action("eat", &[("HUNGER", 30.0)], &[])],
    )]);
    let batch = argmax().decide_batch(&agents, &open, 1, 1);
    assert!(batch.assignments.iter().all(Option::is_some));
    // Action capacity 3 on a provider of 1: the stricter level wins.
    let mut narrow = provider(
        "stool",
        0.0,
        0.0,
        1,
        vec![scene.action("sit", &[("HUNGER", 30.0)], &[])],
    );
    narrow.actions[0].capacity = 3;
    let batch = argmax().decide_batch(&agents, &world(vec![narrow]), 1, 1);
    assert_eq!(batch.assignments.iter().filter(|a| a.is_some()).count(), 1);
    // Occupancy and occupants consume slots.
    let mut busy = provider(
        "bath",
        0.0,
        0.0,
        4,
        vec![scene.action("soak", &[("HUNGER", 30.0)], &[])],
    );
    busy.occupants = 1;
    busy.actions[0].capacity = 3;
    busy.actions[0].occupancy = 1;
    let batch = argmax().decide_batch(&agents, &world(vec![busy]), 1, 1);
    let winners: Vec<usize> = (0..4).filter(|&a| batch.assignments[a].is_some()).collect();
    assert_eq!(winners, [0, 1]);
}

#[test]
fn retained_lists_never_exceed_reconciliation_top_k_and_start_with_the_pick() {
    let mut scene = Scene::default();
    let agents: Vec<Agent> = (0..20)
        .map(|i| scene.agent(&format!("a{i}"), i as f64, 0.0, &[("FUN", 30.0)]))
        .collect();
    let actions: Vec<_> = (0..12)
        .map(|i| scene.action(&format!("x{i}"), &[("FUN", 5.0 + i as f64)], &[]))
        .collect();
    let world = world(vec![provider("fair", 0.0, 0.0, 3, actions)]);
    for k in [1, 2, 5, 8] {
        let decider = Decider::new(
            TuningPatch {
                reconciliation_top_k: Some(k),
                ..Default::default()
            }
            .resolve(),
        );
        let batch = decider.decide_batch(&agents, &world, 11, 1);
        for (index, agent) in agents.iter().enumerate() {
            let list = batch.preferences.of(index);
            assert_eq!(list.len(), k);
            let single = decider.decide(
                agent,
                &world,
                geppetto_core::batch_agent_seed(11, &agent.id),
            );
            let pick = single.selected.expect("something eligible");
            assert_eq!(
                (list[0].provider, list[0].action),
                (pick.provider, pick.action)
            );
            assert!(
                list[1..].windows(2).all(|w| w[0].utility >= w[1].utility),
                "fallbacks by utility"
            );
        }
    }
}

#[test]
fn an_agent_with_nothing_left_gets_nothing() {
    let mut scene = Scene::default();
    let agents: Vec<Agent> = (0..3)
        .map(|i| scene.agent(&format!("a{i}"), i as f64, 0.0, &[("HUNGER", 10.0)]))
        .collect();
    let world = world(vec![provider(
        "well",
        0.0,
        0.0,
        1,
        vec![scene.action("drink", &[("HUNGER", 30.0)], &[])],
    )]);
    let batch = argmax().decide_batch(&agents, &world, 1, 1);
    assert_eq!(batch.assignments.iter().filter(|a| a.is_none()).count(), 2);
}

/// A provider as (capacity, occupants, [(action capacity, action occupancy)]).
type ProviderSpec = (u32, u32, Vec<(u32, u32)>);

fn random_scene(
    seed: u64,
    agent_count: usize,
    provider_specs: &[ProviderSpec],
) -> (Vec<Agent>, World) {
    let mut scene = Scene::default();
    let mut rng = geppetto_core::rng::DetRng::new(seed);
    let agents = (0..agent_count)
        .map(|i| {
            let (x, y) = (rng.next_unit() * 20.0, rng.next_unit() * 20.0);
            scene.agent(
                &format!("a{}", i % 7),
                x,
                y,
                &[("N", rng.next_unit() * 100.0)],
            )
        })
        .collect();
    let providers = provider_specs
        .iter()
        .enumerate()
        .map(|(p, (capacity, occupants, actions))| {
            let actions = actions
                .iter()
                .enumerate()
                .map(|(a, (capacity, occupancy))| {
                    let mut action = scene.action(&format!("x{a}"), &[("N", 10.0 + a as f64)], &[]);
                    action.capacity = *capacity;
                    action.occupancy = *occupancy;
                    action
                })
                .collect();
            let mut provider = provider(
                &format!("p{p}"),
                rng.next_unit() * 20.0,
                rng.next_unit() * 20.0,
                *capacity,
                actions,
            );
            provider.occupants = *occupants;
            provider
        })
        .collect();
    (agents, world(providers))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn no_result_over_fills_either_slot_level(
        seed in any::<u64>(),
        agent_count in 0usize..40,
        providers in prop::collection::vec(
            (0u32..4, 0u32..3, prop::collection::vec((0u32..3, 0u32..3), 1..4)),
            1..6,
        ),
        top_k in 1usize..4,
        keep in 1usize..6,
    ) {
        let (agents, world) = random_scene(seed, agent_count, &providers);
        let tuning = TuningPatch { selection_top_k: Some(top_k), reconciliation_top_k: Some(keep), ..Default::default() };
        let batch = Decider::new(tuning.resolve()).decide_batch(&agents, &world, seed, 1);
        let mut per_provider = vec![0u32; world.providers.len()];
        let mut per_action = std::collections::HashMap::new();
        for (agent, assignment) in batch.assignments.iter().enumerate() {
            prop_assert!(batch.preferences.of(agent).len() <= keep);
            if let Some(p) = assignment {
                prop_assert!(batch.preferences.of(agent).contains(p), "assigned only what it asked for");
                per_provider[p.provider] += 1;
                *per_action.entry((p.provider, p.action)).or_insert(0u32) += 1;
            }
        }
        for (index, provider) in world.providers.iter().enumerate() {
            prop_assert!(per_provider[index] <= provider.free_slots());
        }
        for ((p, a), used) in per_action {
            if let Some(free) = world.providers[p].actions[a].free_slots() {
                prop_assert!(used <= free);
            }
        }
    }
}

#[test]
fn the_batch_result_is_the_same_at_any_worker_count() {
    let providers: Vec<ProviderSpec> = (0..30)
        .map(|i| (1 + i % 4, 0, vec![(0, 0), (2, i % 3)]))
        .collect();
    let (agents, world) = random_scene(99, 500, &providers);
    let agents: Vec<Agent> = agents
        .into_iter()
        .enumerate()
        .map(|(i, mut a)| {
            a.id = format!("npc{i}");
            a
        })
        .collect();
    let decider = Decider::new(Tuning::default());
    let one = decider.decide_batch(&agents, &world, 5, 1);
    for workers in [2, 3, 7] {
        assert_eq!(
            decider.decide_batch(&agents, &world, 5, workers),
            one,
            "workers = {workers}"
        );
    }
    // Agents' preferences do not depend on their place in the list either.
    let mut reversed = agents.clone();
    reversed.reverse();
    let back = decider.decide_batch(&reversed, &world, 5, 2);
    for i in 0..agents.len() {
        assert_eq!(
            back.preferences.of(agents.len() - 1 - i),
            one.preferences.of(i)
        );
    }
    assert!(one.assignments.iter().filter(|a| a.is_some()).count() > 50);
    let _ = Position::default();
}

/// The contention rule as the seed states it, written the slow and obvious way: every round,
/// every open agent claims; every provider re-sorts all its claimants. The engine's incremental
/// version must agree with it exactly.
fn reference_resolution(
    batch: &geppetto_core::BatchDecision,
    agents: &[Agent],
    world: &World,
) -> (Vec<Option<(usize, usize)>>, usize) {
    let lists = &batch.preferences;
    let mut cursor = vec![0usize; agents.len()];
    let mut rounds = 0;
    loop {
        rounds += 1;
        let mut claims: Vec<(usize, f64, &str, usize)> = (0..agents.len())
            .filter_map(|a| {
                lists
                    .of(a)
                    .get(cursor[a])
                    .map(|p| (p.provider, p.distance, agents[a].id.as_str(), a))
            })
            .collect();
        claims.sort_by(|x, y| {
            x.0.cmp(&y.0)
                .then(x.1.total_cmp(&y.1))
                .then(x.2.cmp(y.2))
                .then(x.3.cmp(&y.3))
        });
        let mut provider_used = vec![0u32; world.providers.len()];
        let mut action_used = std::collections::HashMap::new();
        let mut displaced = false;
        for (provider, _, _, agent) in claims {
            let action = lists.of(agent)[cursor[agent]].action;
            let used = action_used.entry((provider, action)).or_insert(0u32);
            let action_free = world.providers[provider].actions[action]
                .free_slots()
                .is_none_or(|f| f > *used);
            if provider_used[provider] < world.providers[provider].free_slots() && action_free {
                provider_used[provider] += 1;
                *used += 1;
            } else {
                cursor[agent] += 1;
                displaced = true;
            }
        }
        if !displaced {
            break;
        }
    }
    let assignments = (0..agents.len())
        .map(|a| lists.of(a).get(cursor[a]).map(|p| (p.provider, p.action)))
        .collect();
    (assignments, rounds)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn incremental_contention_equals_the_round_by_round_rule(
        seed in any::<u64>(),
        agent_count in 0usize..60,
        providers in prop::collection::vec(
            (0u32..4, 0u32..2, prop::collection::vec((0u32..3, 0u32..2), 1..4)),
            1..8,
        ),
        keep in 1usize..6,
    ) {
        let (agents, world) = random_scene(seed, agent_count, &providers);
        let tuning = TuningPatch { reconciliation_top_k: Some(keep), ..Default::default() };
        let batch = Decider::new(tuning.resolve()).decide_batch(&agents, &world, seed, 1);
        let (expected, expected_rounds) = reference_resolution(&batch, &agents, &world);
        let actual: Vec<Option<(usize, usize)>> = batch.assignments.iter().map(|a| a.map(|p| (p.provider, p.action))).collect();
        prop_assert_eq!(actual, expected);
        prop_assert_eq!(batch.rounds, expected_rounds);
    }
}
