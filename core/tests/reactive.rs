//! Reactive utility sets: the inertia claim (few switches a minute with inertia, many without) as a test on counts, and the set
//! wired into the simulator as the layer that preempts daily life.

mod support;

use std::sync::Arc;

use geppetto_core::decision::curve::{Shape, ShapeParams};
use geppetto_core::life::reactive::{
    DEFAULT_COMMITMENT_BONUS, DEFAULT_DECISION_INTERVAL_S, Selector, SetAction, SetConsideration,
    SetInput, UtilitySet, run_wobbling,
};
use geppetto_core::{
    Decider, DetailLevel, ReactiveLayer, SimEvent, SimulatedAgent, Simulator, TickRequest,
    TuningPatch, Updater, Vocabulary,
};
use support::{Scene, provider, world};

fn linear_on(input: usize) -> SetConsideration {
    SetConsideration {
        name: format!("input{input}"),
        input,
        shape: Shape::Linear(ShapeParams::default()),
    }
}

fn duel(vocabulary: &mut Vocabulary) -> UtilitySet {
    let input = |name: &str, vocabulary: &mut Vocabulary| SetInput {
        name: vocabulary.intern(name),
        min: 0.0,
        max: 1.0,
    };
    UtilitySet {
        name: "duel".into(),
        inputs: vec![input("left", vocabulary), input("right", vocabulary)],
        selector: Selector::Highest,
        commitment_bonus: DEFAULT_COMMITMENT_BONUS,
        decision_interval_s: DEFAULT_DECISION_INTERVAL_S,
        emergency_bucket: None,
        actions: vec![
            SetAction {
                name: "parry".into(),
                weight: 1.0,
                bucket: 0,
                cooldown_s: 0.0,
                considerations: vec![linear_on(0)],
            },
            SetAction {
                name: "riposte".into(),
                weight: 0.98,
                bucket: 0,
                cooldown_s: 0.0,
                considerations: vec![linear_on(1)],
            },
        ],
    }
}

#[test]
fn inertia_stops_two_near_equal_actions_from_flapping() {
    let set = duel(&mut Vocabulary::new());
    for seed in 0..5 {
        let steady = run_wobbling(&set, &[0.5, 0.5], 60.0, 30.0, 0.02, seed);
        let flapping = run_wobbling(&set.without_inertia(), &[0.5, 0.5], 60.0, 30.0, 0.02, seed);
        assert!(
            steady.switches < 3,
            "seed {seed}: {} switches with inertia",
            steady.switches
        );
        assert!(
            flapping.switches > 50,
            "seed {seed}: {} switches without inertia",
            flapping.switches
        );
    }
}

fn alarm_set(vocabulary: &mut Vocabulary) -> UtilitySet {
    let threat = SetInput {
        name: vocabulary.intern("THREAT"),
        min: 0.0,
        max: 100.0,
    };
    let afraid = SetConsideration {
        name: "afraid".into(),
        input: 0,
        shape: Shape::Linear(ShapeParams {
            slope: 2.5,
            exponent: 1.0,
            x_shift: 0.6,
            y_shift: 0.0,
        }),
    };
    let calm = SetConsideration {
        name: "calm".into(),
        input: 0,
        shape: Shape::Linear(ShapeParams {
            slope: -1.0,
            exponent: 1.0,
            x_shift: 0.0,
            y_shift: 1.0,
        }),
    };
    UtilitySet {
        name: "alarm".into(),
        inputs: vec![threat],
        selector: Selector::Bucketed,
        commitment_bonus: DEFAULT_COMMITMENT_BONUS,
        decision_interval_s: DEFAULT_DECISION_INTERVAL_S,
        emergency_bucket: Some(5),
        actions: vec![
            SetAction {
                name: "flee".into(),
                weight: 5.0,
                bucket: 5,
                cooldown_s: 0.0,
                considerations: vec![afraid],
            },
            SetAction {
                name: "carry_on".into(),
                weight: 1.0,
                bucket: 0,
                cooldown_s: 0.0,
                considerations: vec![calm],
            },
        ],
    }
}

#[test]
fn an_emergency_set_action_preempts_daily_life_and_hands_it_back() {
    let mut scene = Scene::default();
    let mut agent =
        SimulatedAgent::new(scene.agent("ann", 0.0, 0.0, &[("FUN", 20.0), ("THREAT", 0.0)]));
    agent.agent.considerations[1].behaviour_mut().updater = Updater::PerceptionDriven;
    agent.layers.make_mut().reactive = Some(Box::new(ReactiveLayer::new(Arc::new(alarm_set(
        &mut scene.vocabulary,
    )))));
    let mut knit = scene.action("knit", &[("FUN", 30.0)], &[]);
    knit.duration_hours = 2.0;
    let mut calm_world = world(vec![provider("porch", 0.0, 0.0, 1, vec![knit])]);
    let threat = scene.sym("THREAT");
    calm_world.perceptions = vec![(threat, 5.0)];
    let mut raid = calm_world.clone();
    raid.perceptions = vec![(threat, 90.0)];
    let sim = Simulator::new(Decider::new(
        TuningPatch {
            selection_top_k: Some(1),
            ..Default::default()
        }
        .resolve(),
    ));
    let minute = 1.0 / 60.0;
    let tick = |agent: &mut SimulatedAgent, world, at: f64| {
        sim.advance(
            agent,
            TickRequest {
                now_hours: 8.0 + at * minute,
                world,
                level: DetailLevel::Full,
                simplified_event: None,
            },
            at as u64,
        )
        .events
    };
    let events = tick(&mut agent, &calm_world, 0.0);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, SimEvent::ActionStarted { action, .. } if action == "knit"))
    );
    let events = tick(&mut agent, &raid, 1.0);
    assert!(
        events.iter().any(
            |e| matches!(e, SimEvent::ActionInterrupted { action, by_set, by_action, .. }
        if action == "knit" && by_set == "alarm" && by_action == "flee")
        ),
        "{events:?}"
    );
    assert!(events.iter().any(
        |e| matches!(e, SimEvent::ReactiveStarted { action, bucket: 5, .. } if action == "flee")
    ));
    assert!(agent.running.is_none());
    let events = tick(&mut agent, &raid, 2.0);
    assert!(
        events.is_empty() && agent.running.is_none(),
        "the emergency holds the agent: {events:?}"
    );
    let events = tick(&mut agent, &calm_world, 3.0);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, SimEvent::ReactiveEnded { action, .. } if action == "flee")),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, SimEvent::ActionStarted { .. })),
        "daily life resumes the same tick"
    );
}
