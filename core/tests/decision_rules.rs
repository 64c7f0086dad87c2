//! Behaviour of the single-agent decision: each test fails if its rule is broken.

mod support;

use geppetto_core::{
    Commitment, CompareOp, Context, Decider, IneligibleReason, Precondition, Tuning, TuningPatch,
    Updater,
};
use support::{Scene, count, decider, pick_counts, provider, world};

#[test]
fn urgency_dominates_equidistant_equal_offers() {
    let mut scene = Scene::default();
    let agent = scene.agent("ann", 0.0, 0.0, &[("HUNGER", 10.0), ("FUN", 90.0)]);
    let eat = scene.action("eat", &[("HUNGER", 30.0)], &[]);
    let play = scene.action("play", &[("FUN", 30.0)], &[]);
    let world = world(vec![
        provider("inn", 5.0, 0.0, 1, vec![eat]),
        provider("park", -5.0, 0.0, 1, vec![play]),
    ]);
    let counts = pick_counts(&decider(), &agent, &world, 200);
    assert!(count(&counts, "eat") >= 180, "{counts:?}");
}

#[test]
fn a_near_full_considerations_offer_is_never_chosen_while_another_helps() {
    let mut scene = Scene::default();
    let agent = scene.agent("ann", 0.0, 0.0, &[("HUNGER", 99.0), ("ENERGY", 30.0)]);
    // The oversized promise is capped at the 1 point of headroom left.
    let feast = scene.action("feast", &[("HUNGER", 400.0)], &[]);
    let rest = scene.action("rest", &[("ENERGY", 40.0)], &[]);
    let world = world(vec![provider("inn", 0.0, 0.0, 1, vec![feast, rest])]);
    let counts = pick_counts(&decider(), &agent, &world, 500);
    assert_eq!(count(&counts, "feast"), 0, "{counts:?}");
    let ranking = decider().rank(&agent, &world, 0);
    let feast = ranking
        .ranked()
        .iter()
        .find(|c| c.action == 0)
        .expect("feast is eligible");
    assert!(
        (feast.breakdown.benefit - 0.01 * 0.01 * 1.0).abs() < 1e-12,
        "gain capped at headroom"
    );
}

#[test]
fn personality_makes_identical_agents_diverge() {
    let mut scene = Scene::default();
    let mut sociable = scene.agent("sol", 0.0, 0.0, &[("NEED", 50.0)]);
    let mut diligent = sociable.clone();
    diligent.id = "dil".into();
    let social = scene.sym("social");
    let work = scene.sym("work");
    sociable.tag_modifiers = vec![(social, 2.0)].into();
    diligent.tag_modifiers = vec![(work, 2.0)].into();
    let chat = scene.action("chat", &[("NEED", 40.0)], &["social"]);
    let forge = scene.action("forge", &[("NEED", 40.0)], &["work"]);
    let world = world(vec![provider("square", 1.0, 0.0, 2, vec![chat, forge])]);
    let sociable_counts = pick_counts(&decider(), &sociable, &world, 300);
    let diligent_counts = pick_counts(&decider(), &diligent, &world, 300);
    assert!(
        count(&sociable_counts, "chat") >= 270,
        "{sociable_counts:?}"
    );
    assert!(
        count(&diligent_counts, "forge") >= 270,
        "{diligent_counts:?}"
    );
}

#[test]
fn a_two_fold_standout_is_usually_but_not_always_picked() {
    let mut scene = Scene::default();
    let mut agent = scene.agent("ann", 0.0, 0.0, &[("FUN", 0.0)]);
    Scene::linear_curves(&mut agent);
    let actions = vec![
        scene.action("a", &[("FUN", 2.0)], &[]),
        scene.action("b", &[("FUN", 2.0)], &[]),
        scene.action("c", &[("FUN", 2.0)], &[]),
        scene.action("standout", &[("FUN", 4.0)], &[]),
    ];
    let world = world(vec![provider("fair", 0.0, 0.0, 4, actions)]);
    let ranking = decider().rank(&agent, &world, 0);
    assert_eq!(
        ranking.ranked()[0].utility,
        2.0 * ranking.ranked()[1].utility
    );
    let standout = count(&pick_counts(&decider(), &agent, &world, 1000), "standout");
    assert!(
        (600..=900).contains(&standout),
        "standout picked {standout} / 1000"
    );
    assert!(standout > 1000 / 3);
}

#[test]
fn doubling_distance_changes_utility_by_exactly_the_predicted_factor() {
    let mut scene = Scene::default();
    let agent = scene.agent("ann", 0.0, 0.0, &[("HUNGER", 40.0)]);
    for d in [1.0, 3.0, 7.5, 20.0] {
        let near = world(vec![provider(
            "inn",
            d,
            0.0,
            1,
            vec![scene.action("eat", &[("HUNGER", 30.0)], &[])],
        )]);
        let far = world(vec![provider(
            "inn",
            2.0 * d,
            0.0,
            1,
            vec![scene.action("eat", &[("HUNGER", 30.0)], &[])],
        )]);
        let u_near = decider().rank(&agent, &near, 0).ranked()[0].utility;
        let u_far = decider().rank(&agent, &far, 0).ranked()[0].utility;
        let predicted = (1.0 + d / 10.0) / (1.0 + 2.0 * d / 10.0);
        assert!((u_far / u_near - predicted).abs() < 1e-12, "d={d}");
    }
}

#[test]
fn every_gate_removes_its_candidate_with_the_first_failing_reason() {
    let mut scene = Scene::default();
    let mut agent = scene.agent("ann", 0.0, 0.0, &[("HUNGER", 40.0)]);
    let gold = scene.sym("gold");
    let violence = scene.sym("violence");
    let open = scene.sym("open");
    agent.resources = vec![(gold, 3.0)].into();
    agent.commitments = vec![
        Commitment {
            forbid_tags: vec![violence],
            expires_at: Some(12.0),
        },
        Commitment {
            forbid_tags: vec![scene.sym("food")],
            expires_at: Some(8.0),
        }, // expired at 8:00
    ]
    .into();
    let hunger = scene.sym("HUNGER");
    let base = scene.action("ok", &[("HUNGER", 10.0)], &["food"]);
    let mut full_action = base.clone();
    full_action.id = "action_full".into();
    full_action.capacity = 2;
    full_action.occupancy = 2;
    let mut far = base.clone();
    far.id = "out_of_radius".into();
    far.radius = Some(4.99);
    let mut edge = base.clone();
    edge.id = "on_the_radius".into();
    edge.radius = Some(5.0);
    let mut too_full = base.clone();
    too_full.id = "precondition".into();
    too_full.preconditions = vec![Precondition::Consideration {
        name: hunger,
        op: CompareOp::Gt,
        value: 50.0,
    }]
    .into();
    let mut closed = base.clone();
    closed.id = "provider_state".into();
    closed.preconditions = vec![Precondition::ProviderState(open)].into();
    let mut unknown = base.clone();
    unknown.id = "missing_consideration".into();
    let thirst = scene.sym("THIRST");
    unknown.preconditions = vec![Precondition::Consideration {
        name: thirst,
        op: CompareOp::Lt,
        value: 100.0,
    }]
    .into();
    let mut pricey = base.clone();
    pricey.id = "unaffordable".into();
    pricey.costs = vec![(gold, 4.0)].into();
    let mut brawl = scene.action("commitment", &[("HUNGER", 10.0)], &["violence"]);
    brawl.capacity = 0;
    let mut unlimited = base.clone();
    unlimited.id = "unlimited_action".into();
    unlimited.capacity = 0;
    unlimited.occupancy = 40;
    let tavern = provider(
        "tavern",
        3.0,
        4.0,
        1,
        vec![
            base,
            full_action,
            far,
            edge,
            too_full,
            closed,
            unknown,
            pricey,
            brawl,
            unlimited,
        ],
    );
    let mut packed = provider(
        "packed",
        0.0,
        0.0,
        2,
        vec![scene.action("provider_full", &[("HUNGER", 10.0)], &[])],
    );
    packed.occupants = 2;
    let nowhere = provider(
        "nowhere",
        0.0,
        0.0,
        0,
        vec![scene.action("no_slot", &[("HUNGER", 10.0)], &[])],
    );
    let world = world(vec![tavern, packed, nowhere]);
    let ranking = decider().rank(&agent, &world, 0);
    let name = |p: usize, a: usize| world.providers[p].actions[a].id.as_str();
    let ranked: Vec<&str> = ranking
        .ranked()
        .iter()
        .map(|c| name(c.provider, c.action))
        .collect();
    assert_eq!(ranked, ["ok", "on_the_radius", "unlimited_action"]);
    let removed: Vec<(&str, IneligibleReason)> = ranking
        .ineligible
        .iter()
        .map(|i| (name(i.provider, i.action), i.reason))
        .collect();
    use IneligibleReason as R;
    assert_eq!(
        removed,
        [
            ("action_full", R::ActionFull),
            ("out_of_radius", R::OutOfRadius),
            ("precondition", R::Precondition),
            ("provider_state", R::Precondition),
            ("missing_consideration", R::Precondition),
            ("unaffordable", R::Unaffordable),
            ("commitment", R::Commitment),
            ("provider_full", R::ProviderFull),
            ("no_slot", R::ProviderFull),
        ]
    );
}

#[test]
fn failed_preconditions_never_appear_in_ranked() {
    let mut scene = Scene::default();
    let agent = scene.agent("ann", 0.0, 0.0, &[("HUNGER", 20.0), ("ENERGY", 80.0)]);
    let hunger = scene.sym("HUNGER");
    let energy = scene.sym("ENERGY");
    let ops = [
        CompareOp::Lt,
        CompareOp::Le,
        CompareOp::Gt,
        CompareOp::Ge,
        CompareOp::Eq,
        CompareOp::Ne,
    ];
    let mut actions = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        for (j, (name, threshold)) in [(hunger, 20.0), (energy, 50.0), (hunger, 90.0)]
            .into_iter()
            .enumerate()
        {
            let mut action = scene.action(&format!("a{i}_{j}"), &[("HUNGER", 100.0)], &[]);
            action.intrinsic_priority = 50.0; // tempting, so only the gate can keep it out
            action.preconditions = vec![Precondition::Consideration {
                name,
                op: *op,
                value: threshold,
            }]
            .into();
            actions.push(action);
        }
    }
    let world = world(vec![provider("p", 0.0, 0.0, 1, actions)]);
    let ranking = decider().rank(&agent, &world, 0);
    for candidate in ranking.ranked() {
        let action = &world.providers[0].actions[candidate.action];
        let Precondition::Consideration { name, op, value } = action.preconditions[0] else {
            unreachable!()
        };
        let current = agent.consideration(name).expect("present").value;
        assert!(
            op.holds(current, value),
            "{} is ranked but its precondition fails",
            action.id
        );
    }
    for removed in &ranking.ineligible {
        assert_eq!(removed.reason, IneligibleReason::Precondition);
    }
    assert_eq!(ranking.ranked().len() + ranking.ineligible.len(), 18);
    assert!(!ranking.ineligible.is_empty() && !ranking.ranked().is_empty());
}

#[test]
fn a_double_context_at_least_doubles_the_tagged_actions_frequency() {
    let mut scene = Scene::default();
    let mut agent = scene.agent("ann", 0.0, 0.0, &[("COMFORT", 0.0)]);
    Scene::linear_curves(&mut agent);
    let actions = vec![
        scene.action("read_inside", &[("COMFORT", 1.0)], &["indoor"]),
        scene.action("walk", &[("COMFORT", 1.0)], &["outdoor"]),
        scene.action("fish", &[("COMFORT", 1.0)], &["outdoor"]),
    ];
    let mut calm = world(vec![provider("home", 0.0, 0.0, 3, actions)]);
    let baseline = count(&pick_counts(&decider(), &agent, &calm, 1000), "read_inside");
    let indoor = scene.sym("indoor");
    let storm = scene.sym("storm");
    calm.contexts = vec![Context {
        name: storm,
        tag_multipliers: vec![(indoor, 2.0)],
    }];
    let stormy = count(&pick_counts(&decider(), &agent, &calm, 1000), "read_inside");
    assert!(
        stormy >= 2 * baseline,
        "baseline {baseline}, storm {stormy}"
    );
    let ranking = decider().rank(&agent, &calm, 0);
    assert_eq!(
        ranking.ranked()[0].breakdown.context,
        4.0,
        "the multiplier applies squared"
    );
}

#[test]
fn mixed_deltas_suit_the_rested_and_bored_not_the_exhausted() {
    let mut scene = Scene::default();
    let rested_bored = scene.agent("rb", 0.0, 0.0, &[("FUN", 10.0), ("ENERGY", 95.0)]);
    let exhausted = scene.agent("ex", 0.0, 0.0, &[("FUN", 10.0), ("ENERGY", 5.0)]);
    let actions = vec![
        scene.action("party", &[("FUN", 40.0), ("ENERGY", -30.0)], &[]),
        scene.action("read", &[("FUN", 5.0)], &[]),
        scene.action("sleep", &[("ENERGY", 30.0)], &[]),
    ];
    let world = world(vec![provider("town", 0.0, 0.0, 3, actions)]);
    let rb = pick_counts(&decider(), &rested_bored, &world, 300);
    let ex = pick_counts(&decider(), &exhausted, &world, 300);
    assert!(count(&rb, "party") >= 290, "{rb:?}");
    assert!(count(&ex, "party") <= 3, "{ex:?}");
    // The negative delta is a real cost: never clipped by the headroom cap.
    let party = decider()
        .rank(&exhausted, &world, 0)
        .ranked()
        .iter()
        .find(|c| c.action == 0)
        .copied()
        .expect("party");
    let expected = 0.81 * 40.0 + 0.9025 * -30.0;
    assert!((party.breakdown.benefit - expected).abs() < 1e-9);
}

#[test]
fn cost_is_squared_over_stock_and_subtracted_last() {
    let mut scene = Scene::default();
    let mut agent = scene.agent("ann", 0.0, 0.0, &[("HUNGER", 50.0)]);
    let gold = scene.sym("gold");
    agent.resources = vec![(gold, 10.0)].into();
    let mut cheap = scene.action("cheap", &[("HUNGER", 10.0)], &[]);
    cheap.costs = vec![(gold, 2.0)].into();
    let mut dear = scene.action("dear", &[("HUNGER", 10.0)], &[]);
    dear.costs = vec![(gold, 4.0)].into();
    let mut all = scene.action("all_in", &[("HUNGER", 10.0)], &[]);
    all.costs = vec![(gold, 10.0)].into();
    let mut tiny = scene.action("tiny", &[("HUNGER", 10.0)], &[]);
    tiny.costs = vec![(gold, 20.0)].into();
    agent.resources = vec![(gold, 10.0)].into();
    let world = world(vec![provider(
        "shop",
        0.0,
        0.0,
        1,
        vec![cheap, dear, all, tiny],
    )]);
    let ranking = decider().rank(&agent, &world, 0);
    let cost = |action: usize| {
        ranking
            .ranked()
            .iter()
            .find(|c| c.action == action)
            .expect("ranked")
            .breakdown
            .cost
    };
    assert_eq!(cost(0), 0.4); // 2²/10
    assert_eq!(cost(1), 1.6); // doubling the cost quadruples the penalty
    assert_eq!(cost(2), 10.0); // max(1, 10/10) = 1
    assert_eq!(ranking.ineligible[0].reason, IneligibleReason::Unaffordable);
}

#[test]
fn intrinsic_priority_joins_the_benefit_and_obeys_distance() {
    let mut scene = Scene::default();
    let agent = scene.agent("ann", 0.0, 0.0, &[("DUTY", 100.0)]);
    let mut post = scene.action("guard", &[], &[]);
    post.intrinsic_priority = 2.0;
    let world = world(vec![provider("gate", 10.0, 0.0, 1, vec![post])]);
    let best = decider().rank(&agent, &world, 0).ranked()[0];
    assert_eq!(best.breakdown.priority, 10.0);
    assert!((best.utility - 10.0 * 0.5).abs() < 1e-12);
}

#[test]
fn profile_weights_multiply_a_considerations_share() {
    let mut scene = Scene::default();
    let agent = scene.agent("ann", 0.0, 0.0, &[("HUNGER", 50.0), ("FUN", 50.0)]);
    let eat = scene.action("eat", &[("HUNGER", 20.0)], &[]);
    let play = scene.action("play", &[("FUN", 20.0)], &[]);
    let world = world(vec![provider("p", 0.0, 0.0, 1, vec![eat, play])]);
    let hunger = scene.sym("HUNGER");
    let survival = Decider::new(Tuning::default()).with_consideration_weights(vec![(hunger, 1.5)]);
    let ranking = survival.rank(&agent, &world, 0);
    assert_eq!(ranking.ranked()[0].action, 0);
    assert!((ranking.ranked()[0].utility / ranking.ranked()[1].utility - 1.5).abs() < 1e-12);
}

#[test]
fn top_k_one_is_argmax_and_temperature_sharpens() {
    let mut scene = Scene::default();
    let mut agent = scene.agent("ann", 0.0, 0.0, &[("FUN", 0.0)]);
    Scene::linear_curves(&mut agent);
    let actions = vec![
        scene.action("good", &[("FUN", 2.0)], &[]),
        scene.action("bit_worse", &[("FUN", 1.5)], &[]),
    ];
    let world = world(vec![provider("p", 0.0, 0.0, 2, actions)]);
    let argmax = Decider::new(
        TuningPatch {
            selection_top_k: Some(1),
            ..Default::default()
        }
        .resolve(),
    );
    assert_eq!(
        count(&pick_counts(&argmax, &agent, &world, 200), "good"),
        200
    );
    let warm = count(&pick_counts(&decider(), &agent, &world, 1000), "good");
    let cold = Decider::new(
        TuningPatch {
            temperature: Some(0.1),
            ..Default::default()
        }
        .resolve(),
    );
    let cold = count(&pick_counts(&cold, &agent, &world, 1000), "good");
    assert!(warm < 800 && warm > 500, "warm {warm}");
    assert!(cold > 990, "cold {cold}");
}

#[test]
fn convention_breaking_picks_a_strictly_worse_action_or_nothing_different() {
    let mut scene = Scene::default();
    let mut agent = scene.agent("ann", 0.0, 0.0, &[("FUN", 0.0)]);
    Scene::linear_curves(&mut agent);
    let actions = vec![
        scene.action("best", &[("FUN", 30.0)], &[]),
        scene.action("tied", &[("FUN", 30.0)], &[]),
        scene.action("worse", &[("FUN", 10.0)], &[]),
        scene.action("worst", &[("FUN", 5.0)], &[]),
    ];
    let world = world(vec![provider("p", 0.0, 0.0, 4, actions)]);
    let rebel = Decider::new(
        TuningPatch {
            convention_break_probability: Some(1.0),
            ..Default::default()
        }
        .resolve(),
    );
    let counts = pick_counts(&rebel, &agent, &world, 400);
    assert_eq!(
        count(&counts, "best") + count(&counts, "tied"),
        0,
        "{counts:?}"
    );
    assert!(
        count(&counts, "worse") > 150 && count(&counts, "worst") > 150,
        "uniform: {counts:?}"
    );
    let decision = rebel.decide(&agent, &world, 1);
    assert!(decision.convention_broken);
    // With nothing strictly worse there is nothing to break to.
    let flat = world_with_equal_offers(&mut scene);
    let decision = rebel.decide(&agent, &flat, 1);
    assert!(!decision.convention_broken && decision.selected.is_some());
}

fn world_with_equal_offers(scene: &mut Scene) -> geppetto_core::World {
    let actions = vec![
        scene.action("x", &[("FUN", 3.0)], &[]),
        scene.action("y", &[("FUN", 3.0)], &[]),
    ];
    world(vec![provider("p", 0.0, 0.0, 2, actions)])
}

#[test]
fn perception_noise_perturbs_a_scoring_copy_only() {
    let mut scene = Scene::default();
    let mut agent = scene.agent("ann", 0.0, 0.0, &[("THREAT", 50.0), ("HUNGER", 50.0)]);
    agent.considerations[0].behaviour_mut().updater = Updater::PerceptionDriven;
    let actions = vec![
        scene.action("hide", &[("THREAT", 30.0)], &[]),
        scene.action("eat", &[("HUNGER", 30.0)], &[]),
    ];
    let world = world(vec![provider("p", 0.0, 0.0, 2, actions)]);
    let noisy = Decider::new(
        TuningPatch {
            perception_noise: Some(15.0),
            ..Default::default()
        }
        .resolve(),
    );
    let before = agent.clone();
    let benefits: Vec<(f64, f64)> = (0..50)
        .map(|seed| {
            let ranking = noisy.rank(&agent, &world, seed);
            let benefit = |a: usize| {
                ranking
                    .ranked()
                    .iter()
                    .find(|c| c.action == a)
                    .expect("ranked")
                    .breakdown
                    .benefit
            };
            (benefit(0), benefit(1))
        })
        .collect();
    assert_eq!(agent, before, "the agent itself is never changed");
    assert!(
        benefits
            .iter()
            .any(|(hide, _)| (hide - benefits[0].0).abs() > 1e-9),
        "noise moves the perceived threat"
    );
    assert!(
        benefits.iter().all(|(_, eat)| (eat - 7.5).abs() < 1e-12),
        "event-driven values are not perceived"
    );
    let quiet = decider().rank(&agent, &world, 3);
    assert_eq!(
        quiet,
        decider().rank(&agent, &world, 4),
        "without noise the seed does not matter to a ranking"
    );
}

#[test]
fn nothing_eligible_selects_nothing() {
    let mut scene = Scene::default();
    let agent = scene.agent("ann", 0.0, 0.0, &[("HUNGER", 10.0)]);
    let world = world(vec![provider(
        "shut",
        0.0,
        0.0,
        0,
        vec![scene.action("eat", &[("HUNGER", 10.0)], &[])],
    )]);
    let decision = decider().decide(&agent, &world, 9);
    assert!(decision.selected.is_none());
    assert_eq!(decision.ranking.ineligible.len(), 1);
}

#[test]
fn equal_utilities_keep_input_order() {
    let mut scene = Scene::default();
    let agent = scene.agent("ann", 0.0, 0.0, &[("FUN", 20.0)]);
    let actions: Vec<_> = (0..6)
        .map(|i| scene.action(&format!("a{i}"), &[("FUN", 10.0)], &[]))
        .collect();
    let world = world(vec![provider("p", 0.0, 0.0, 1, actions)]);
    let order: Vec<usize> = decider()
        .rank(&agent, &world, 0)
        .ranked()
        .iter()
        .map(|c| c.action)
        .collect();
    assert_eq!(order, [0, 1, 2, 3, 4, 5]);
}

#[test]
fn a_binding_activity_removes_what_does_not_fit_waives_its_own_need_gates_and_binds_nothing_empty()
{
    use geppetto_core::decision::agent::SchedulePull;
    let mut scene = Scene::default();
    let mut agent = scene.agent("ann", 0.0, 0.0, &[("COMFORT", 90.0), ("PURPOSE", 20.0)]);
    let mut sleep = scene.action("sleep", &[("COMFORT", 60.0)], &["sleep"]);
    let comfort = scene.sym("COMFORT");
    sleep.preconditions = vec![Precondition::Consideration {
        name: comfort,
        op: CompareOp::Lt,
        value: 60.0,
    }]
    .into();
    let till = scene.action("till", &[("PURPOSE", 50.0)], &["work"]);
    let world = world(vec![
        provider("home", 1.0, 0.0, 4, vec![sleep]),
        provider("field", 2.0, 0.0, 4, vec![till]),
    ]);
    let reasons = |ranking: &geppetto_core::decision::ranking::Ranking| {
        let mut reasons: Vec<(usize, IneligibleReason)> = ranking
            .ineligible
            .iter()
            .map(|i| (i.provider, i.reason))
            .collect();
        reasons.sort();
        reasons
    };
    // Favoured only: the need gate holds and tilling wins.
    agent.schedule = Some(Box::new(SchedulePull {
        tags: vec![scene.sym("sleep")],
        place: Some("home".into()),
        tag_bonus: 0.1,
        place_bonus: 0.1,
        binding: false,
        reserved: Vec::new(),
        reserved_from_hours: 0.0,
    }));
    let favoured = decider().rank(&agent, &world, 0);
    assert_eq!(reasons(&favoured), [(0, IneligibleReason::Precondition)]);
    // Binding: one sleeps, tired or not, and the field waits.
    agent.schedule.as_mut().expect("pull").binding = true;
    let bound = decider().rank(&agent, &world, 0);
    assert_eq!(reasons(&bound), [(1, IneligibleReason::OffSchedule)]);
    assert_eq!(bound.ranked().len(), 1);
    // A critical need still gets its way.
    let purpose = scene.sym("PURPOSE");
    let mut starving = agent.clone();
    let need = starving
        .considerations
        .iter_mut()
        .find(|c| c.name == purpose)
        .expect("purpose");
    need.behaviour_mut().critical_threshold = Some(25.0);
    assert!(reasons(&decider().rank(&starving, &world, 0)).is_empty());
    // Nothing fits (the bed is taken): the activity binds nothing.
    let mut full = world.clone();
    full.providers[0].occupants = full.providers[0].capacity;
    let empty = decider().rank(&agent, &full, 0);
    assert_eq!(reasons(&empty), [(0, IneligibleReason::ProviderFull)]);
    assert_eq!(empty.ranked().len(), 1, "tilling stays");
}

#[test]
fn what_a_binding_activity_binds_keeps_to_its_hours() {
    use geppetto_core::decision::agent::SchedulePull;
    let mut scene = Scene::default();
    let mut agent = scene.agent("ann", 0.0, 0.0, &[("COMFORT", 30.0), ("PURPOSE", 80.0)]);
    let mut sleep = scene.action("sleep", &[("COMFORT", 60.0)], &["sleep"]);
    sleep.duration_hours = 7.0;
    let till = scene.action("till", &[("PURPOSE", 10.0)], &["work"]);
    let world = world(vec![
        provider("home", 1.0, 0.0, 4, vec![sleep]),
        provider("field", 2.0, 0.0, 4, vec![till]),
    ]);
    let (work, sleep_tag) = (scene.sym("work"), scene.sym("sleep"));
    let pull = |reserved, reserved_from_hours| SchedulePull {
        tags: vec![work],
        place: Some("field".into()),
        tag_bonus: 0.1,
        place_bonus: 0.1,
        binding: false,
        reserved,
        reserved_from_hours,
    };
    // Working hours, nothing reserved: tired enough, she goes to bed in the afternoon.
    agent.schedule = Some(Box::new(pull(Vec::new(), 0.0)));
    let free = decider().rank(&agent, &world, 0);
    assert!(free.ineligible.is_empty());
    assert_eq!(free.ranked()[0].provider, 0, "sleep outranks tilling");
    // Sleep is bound to the night: in the day it is off schedule.
    agent.schedule = Some(Box::new(pull(vec![sleep_tag], 3.0)));
    let day = decider().rank(&agent, &world, 0);
    let reasons: Vec<_> = day
        .ineligible
        .iter()
        .map(|i| (i.provider, i.reason))
        .collect();
    assert_eq!(reasons, [(0, IneligibleReason::OffSchedule)]);
    assert_eq!(day.ranked().len(), 1, "tilling stays");
    // A nap is no night's sleep: shorter than what is reserved, it stays.
    agent.schedule = Some(Box::new(pull(vec![sleep_tag], 8.0)));
    assert!(decider().rank(&agent, &world, 0).ineligible.is_empty());
    agent.schedule = Some(Box::new(pull(vec![sleep_tag], 3.0)));
    // Unless she is exhausted.
    let comfort = scene.sym("COMFORT");
    let need = agent
        .considerations
        .iter_mut()
        .find(|c| c.name == comfort)
        .expect("comfort");
    need.behaviour_mut().critical_threshold = Some(35.0);
    assert!(decider().rank(&agent, &world, 0).ineligible.is_empty());
}

#[test]
fn a_need_that_rests_at_a_baseline_drifts_back_to_it_from_either_side() {
    use geppetto_core::life::simulator::{SimulatedAgent, Simulator, TickRequest};
    let mut scene = Scene::default();
    let agent = scene.agent("ann", 0.0, 0.0, &[("AMBITION", 10.0), ("PRIDE", 90.0)]);
    let mut npc = SimulatedAgent::new(agent);
    npc.agent.considerations[0].behaviour_mut().updater = Updater::TowardBaseline {
        rate: 5.0,
        baseline: 40.0,
    };
    npc.agent.considerations[1].behaviour_mut().updater = Updater::TowardBaseline {
        rate: 5.0,
        baseline: 40.0,
    };
    let simulator = Simulator::new(decider());
    let empty = world(Vec::new());
    for hour in 0..12 {
        let request = TickRequest {
            now_hours: f64::from(hour),
            world: &empty,
            level: geppetto_core::life::action::DetailLevel::Simplified,
            simplified_event: None,
        };
        simulator.advance(&mut npc, request, 1);
    }
    let values: Vec<f64> = npc.agent.considerations.iter().map(|c| c.value).collect();
    assert_eq!(
        values,
        [40.0, 40.0],
        "up from below, down from above, never past"
    );
}
