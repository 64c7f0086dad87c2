//! The timed simulation: updaters, gradual deltas, the queue, preemption and the
//! two detail levels. Each test fails if its rule is broken.

mod support;

use geppetto_core::{
    Commitment, Consideration, Decider, DetailLevel, SimEvent, SimulatedAgent, Simulator, Symbol,
    TickRequest, TuningPatch, Updater, World,
};
use support::{Scene, provider, world};

const MINUTE: f64 = 1.0 / 60.0;

fn simulator(patch: TuningPatch) -> Simulator {
    Simulator::new(Decider::new(patch.resolve()))
}

fn argmax() -> TuningPatch {
    TuningPatch {
        selection_top_k: Some(1),
        ..Default::default()
    }
}

/// Runs full ticks from `start` for `ticks` ticks; returns every tick's events.
fn run(
    sim: &Simulator,
    agent: &mut SimulatedAgent,
    world: &World,
    start: f64,
    ticks: usize,
) -> Vec<Vec<SimEvent>> {
    (0..ticks)
        .map(|tick| {
            let now = start + tick as f64 * MINUTE;
            let request = TickRequest {
                now_hours: now,
                world,
                level: DetailLevel::Full,
                simplified_event: None,
            };
            sim.advance(agent, request, tick as u64).events
        })
        .collect()
}

fn started(events: &[SimEvent]) -> Option<&str> {
    events.iter().find_map(|e| match e {
        SimEvent::ActionStarted { action, .. } => Some(action.as_str()),
        _ => None,
    })
}

fn running(agent: &SimulatedAgent) -> Option<&str> {
    agent.running.as_ref().map(|r| r.action.id.as_str())
}

#[test]
fn linear_decay_of_ten_an_hour_crosses_two_hundred_units_in_twenty_hours() {
    let mut scene = Scene::default();
    let name = scene.sym("MORALE");
    let mut morale = Consideration::new(name, 100.0, -100.0, 100.0);
    morale.updater = Updater::LinearDecay { rate: 10.0 };
    let mut agent = SimulatedAgent::new(geppetto_core::Agent::new("ann", Default::default()));
    agent.agent.considerations.push(morale);
    let world = world(Vec::new());
    let sim = simulator(TuningPatch::default());
    let mut ticks = 0;
    while agent.agent.considerations[0].value > -100.0 && ticks < 10_000 {
        run(&sim, &mut agent, &world, ticks as f64 * MINUTE, 1);
        ticks += 1;
    }
    let hours = ticks as f64 * MINUTE;
    assert!((18.0..=22.0).contains(&hours), "took {hours} h");
    assert_eq!(
        agent.agent.considerations[0].value, -100.0,
        "clamped at min"
    );
}

#[test]
fn trait_rate_adjustments_touch_only_linear_updaters() {
    let mut scene = Scene::default();
    let mut agent =
        SimulatedAgent::new(scene.agent("ann", 0.0, 0.0, &[("HUNGER", 50.0), ("PRIDE", 50.0)]));
    agent.agent.considerations[0].updater = Updater::LinearDecay { rate: 6.0 };
    let (hunger, pride) = (scene.sym("HUNGER"), scene.sym("PRIDE"));
    agent.rate_adjustments = vec![(hunger, 6.0), (pride, 100.0)];
    run(
        &simulator(TuningPatch::default()),
        &mut agent,
        &world(Vec::new()),
        0.0,
        60,
    );
    assert!(
        (agent.agent.considerations[0].value - 38.0).abs() < 1e-9,
        "12 an hour for one hour"
    );
    assert_eq!(
        agent.agent.considerations[1].value, 50.0,
        "event-driven ignores rate adjustments"
    );
}

#[test]
fn event_driven_values_never_move_without_events() {
    let mut scene = Scene::default();
    let mut agent = SimulatedAgent::new(scene.agent("ann", 0.0, 0.0, &[("GRUDGE", 42.0)]));
    run(
        &simulator(TuningPatch::default()),
        &mut agent,
        &world(Vec::new()),
        0.0,
        600,
    );
    assert_eq!(agent.agent.considerations[0].value, 42.0);
}

#[test]
fn a_perception_driven_value_follows_the_world_and_keeps_its_value_when_absent() {
    let mut scene = Scene::default();
    let mut agent = SimulatedAgent::new(scene.agent("ann", 0.0, 0.0, &[("THREAT", 10.0)]));
    agent.agent.considerations[0].updater = Updater::PerceptionDriven;
    let threat = scene.sym("THREAT");
    let mut seen = world(Vec::new());
    seen.perceptions = vec![(threat, 85.0)];
    let sim = simulator(TuningPatch::default());
    run(&sim, &mut agent, &seen, 0.0, 1);
    assert_eq!(agent.agent.considerations[0].value, 85.0, "within one tick");
    run(&sim, &mut agent, &world(Vec::new()), MINUTE, 5);
    assert_eq!(
        agent.agent.considerations[0].value, 85.0,
        "an absent entry keeps the old value"
    );
    seen.perceptions = vec![(threat, 500.0)];
    run(&sim, &mut agent, &seen, 6.0 * MINUTE, 1);
    assert_eq!(agent.agent.considerations[0].value, 100.0, "clamped");
}

#[test]
fn a_new_rest_provider_is_used_by_an_exhausted_agent_without_code_changes() {
    let mut scene = Scene::default();
    let mut agent = SimulatedAgent::new(scene.agent("ann", 0.0, 0.0, &[("ENERGY", 5.0)]));
    let sim = simulator(argmax());
    let mut world = world(Vec::new());
    let events = run(&sim, &mut agent, &world, 0.0, 3);
    assert!(
        events.iter().all(|e| started(e).is_none()),
        "nothing to do yet"
    );
    let mut bed = scene.action("sleep", &[("ENERGY", 80.0)], &["rest"]);
    bed.duration_hours = 6.0;
    world
        .providers
        .push(provider("new_bed", 1.0, 1.0, 1, vec![bed]));
    let events = run(&sim, &mut agent, &world, 3.0 * MINUTE, 1);
    assert_eq!(started(&events[0]), Some("sleep"));
}

#[test]
fn gradual_deltas_start_on_the_next_tick_and_spread_evenly_over_the_duration() {
    let mut scene = Scene::default();
    let mut agent =
        SimulatedAgent::new(scene.agent("ann", 0.0, 0.0, &[("HUNGER", 20.0), ("FUN", 50.0)]));
    let mut eat = scene.action("eat", &[("HUNGER", 30.0), ("NOT_MINE", 99.0)], &[]);
    eat.duration_hours = 10.0 * MINUTE;
    let world = world(vec![provider("inn", 0.0, 0.0, 1, vec![eat])]);
    let sim = simulator(argmax());
    let events = run(&sim, &mut agent, &world, 0.0, 1);
    assert_eq!(started(&events[0]), Some("eat"));
    assert_eq!(
        agent.agent.considerations[0].value, 20.0,
        "no delta on the tick it starts"
    );
    run(&sim, &mut agent, &world, MINUTE, 1);
    assert!(
        (agent.agent.considerations[0].value - 23.0).abs() < 1e-9,
        "a tenth per minute"
    );
    let events = run(&sim, &mut agent, &world, 2.0 * MINUTE, 9);
    assert!(
        (agent.agent.considerations[0].value - 50.0).abs() < 1e-9,
        "all 30 delivered"
    );
    assert!(
        matches!(events[8][0], SimEvent::ActionCompleted { .. }),
        "{:?}",
        events[8]
    );
    assert_eq!(agent.agent.considerations[1].value, 50.0);
}

#[test]
fn an_action_the_game_carries_out_waits_for_arrival_and_report_and_times_out() {
    let mut scene = Scene::default();
    let eater = |scene: &mut Scene| {
        SimulatedAgent::new(scene.agent("ann", 0.0, 0.0, &[("HUNGER", 20.0), ("FUN", 50.0)]))
    };
    let mut agent = eater(&mut scene);
    let mut eat = scene.action("eat", &[("HUNGER", 30.0)], &[]);
    eat.duration_hours = 10.0 * MINUTE;
    let world = world(vec![provider("inn", 0.0, 0.0, 1, vec![eat])]);
    let sim = simulator(argmax());
    let carry = |agent: &mut SimulatedAgent, walking: bool, deadline_hours: f64| {
        let running = agent.running.as_mut().expect("running");
        running.carried_by_game = Some(geppetto_core::GameCarried {
            walking,
            deadline_hours,
        });
    };
    let hunger = |agent: &SimulatedAgent| agent.agent.considerations[0].value;
    assert_eq!(
        started(&run(&sim, &mut agent, &world, 0.0, 1)[0]),
        Some("eat")
    );
    // Walking: no progress, for as long as the walk takes.
    carry(&mut agent, true, 1.0);
    run(&sim, &mut agent, &world, MINUTE, 20);
    assert_eq!(hunger(&agent), 20.0, "nothing while walking");
    // Arrived: its deltas spread as usual, then it holds, done, until the game reports.
    carry(&mut agent, false, 1.0);
    let events = run(&sim, &mut agent, &world, 21.0 * MINUTE, 15);
    assert!((hunger(&agent) - 50.0).abs() < 1e-9, "all delivered");
    assert!(
        !events
            .iter()
            .flatten()
            .any(|e| matches!(e, SimEvent::ActionCompleted { .. })),
        "the game has not said it is done"
    );
    assert_eq!(running(&agent), Some("eat"), "held");
    let done = sim.complete_running(&mut agent);
    assert!(
        matches!(done.as_slice(), [SimEvent::ActionCompleted { .. }]),
        "{done:?}"
    );
    assert!(agent.running.is_none());

    // Reported early: the rest of its deltas at once.
    let mut agent = eater(&mut scene);
    run(&sim, &mut agent, &world, 0.0, 1);
    carry(&mut agent, false, 1.0);
    run(&sim, &mut agent, &world, MINUTE, 2);
    assert!((hunger(&agent) - 26.0).abs() < 1e-9, "{}", hunger(&agent));
    sim.complete_running(&mut agent);
    assert!((hunger(&agent) - 50.0).abs() < 1e-9, "{}", hunger(&agent));

    // Never reported: dropped at its deadline, and the agent decides again that tick.
    let mut agent = eater(&mut scene);
    run(&sim, &mut agent, &world, 0.0, 1);
    carry(&mut agent, true, 30.0 * MINUTE);
    let events = run(&sim, &mut agent, &world, MINUTE, 30);
    let timed_out: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, tick)| {
            tick.iter()
                .any(|e| matches!(e, SimEvent::ActionTimedOut { .. }))
        })
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(timed_out, vec![30], "at the deadline, once");
    assert_eq!(started(&events[29]), Some("eat"), "and decides again");
}

#[test]
fn an_engaged_agent_starts_nothing_while_its_needs_drift_and_decides_when_released() {
    let mut scene = Scene::default();
    let mut agent =
        SimulatedAgent::new(scene.agent("ann", 0.0, 0.0, &[("HUNGER", 20.0), ("FUN", 50.0)]));
    agent.agent.considerations[0].updater = Updater::LinearDecay { rate: 6.0 };
    let mut eat = scene.action("eat", &[("HUNGER", 30.0)], &[]);
    eat.duration_hours = 10.0 * MINUTE;
    let world = world(vec![provider("inn", 0.0, 0.0, 1, vec![eat])]);
    let sim = simulator(argmax());
    agent.engaged = Some("combat".into());
    agent.enqueue_action("inn", "eat", true);
    let events = run(&sim, &mut agent, &world, 0.0, 10);
    assert!(
        events.iter().all(|tick| started(tick).is_none()),
        "{events:?}"
    );
    assert!(agent.agent.considerations[0].value < 20.0, "hunger drifts");
    assert_eq!(agent.queue.len(), 1, "the order waits");
    agent.engaged = None;
    let events = run(&sim, &mut agent, &world, 10.0 * MINUTE, 1);
    assert_eq!(started(&events[0]), Some("eat"));
}

#[test]
fn a_leisure_action_is_abandoned_within_a_tick_of_a_need_turning_critical() {
    let mut scene = Scene::default();
    let mut agent =
        SimulatedAgent::new(scene.agent("ann", 0.0, 0.0, &[("HUNGER", 31.0), ("FUN", 40.0)]));
    let hunger = &mut agent.agent.considerations[0];
    hunger.updater = Updater::LinearDecay { rate: 60.0 }; // one point a minute
    hunger.critical_threshold = Some(25.0);
    let mut read = scene.action("read", &[("FUN", 10.0)], &["leisure"]);
    read.duration_hours = 3.0;
    let mut eat = scene.action("eat", &[("HUNGER", 60.0)], &["food"]);
    eat.duration_hours = 0.5;
    eat.preconditions = vec![geppetto_core::Precondition::Consideration {
        name: scene.sym("HUNGER"),
        op: geppetto_core::CompareOp::Lt,
        value: 29.5,
    }];
    let world = world(vec![
        provider("home", 0.0, 0.0, 1, vec![read]),
        provider("inn", 0.0, 0.0, 1, vec![eat]),
    ]);
    let sim = simulator(argmax());
    let events = run(&sim, &mut agent, &world, 0.0, 12);
    assert_eq!(started(&events[0]), Some("read"));
    let crossing = (0..12).find(|&t| {
        events[t]
            .iter()
            .any(|e| matches!(e, SimEvent::ActionPreempted { .. }))
    });
    // HUNGER is 31 − (t + 1) after tick t: below 25 from tick 6 on.
    assert_eq!(crossing, Some(6), "{events:?}");
    assert_eq!(running(&agent), Some("eat"));
}

/// An agent whose running action's frozen utility is `frozen`, with a critical HUNGER and a
/// better-looking `eat` on offer; nothing changes over a tick (event-driven, no deltas).
fn preemption_scene(
    scene: &mut Scene,
    frozen: impl Fn(f64) -> f64,
    player_queued: bool,
    hunger: f64,
) -> (SimulatedAgent, World) {
    let mut agent = SimulatedAgent::new(scene.agent("ann", 0.0, 0.0, &[("HUNGER", hunger)]));
    agent.agent.considerations[0].critical_threshold = Some(30.0);
    agent.agent.considerations[0].collapse_threshold = Some(5.0);
    let eat = scene.action("eat", &[("HUNGER", 50.0)], &[]);
    let world = world(vec![provider("inn", 0.0, 0.0, 1, vec![eat])]);
    let eat_utility = Decider::new(argmax().resolve())
        .rank(&agent.agent, &world, 0)
        .ranked()[0]
        .utility;
    let mut chore = scene.action("sweep", &[], &[]);
    chore.duration_hours = 5.0;
    agent.running = Some(geppetto_core::RunningAction {
        provider: "home".into(),
        action: chore,
        started_at_hours: 0.0,
        elapsed_hours: 0.0,
        continuation_utility: frozen(eat_utility),
        player_queued,
        order: None,
        carried_by_game: None,
    });
    (agent, world)
}

#[test]
fn equality_never_preempts_and_strictly_more_does() {
    let sim = simulator(TuningPatch {
        preemption_margin: Some(2.0),
        ..argmax()
    });
    let mut scene = Scene::default();
    let (mut agent, world) = preemption_scene(&mut scene, |eat| eat / 2.0, false, 20.0);
    run(&sim, &mut agent, &world, 1.0, 1);
    assert_eq!(
        running(&agent),
        Some("sweep"),
        "replacement == margin × frozen"
    );
    let (mut agent, world) = preemption_scene(&mut scene, |eat| eat / 2.0 * 0.999, false, 20.0);
    run(&sim, &mut agent, &world, 1.0, 1);
    assert_eq!(running(&agent), Some("eat"));
    // Without a critical consideration nothing is even considered.
    let (mut agent, world) = preemption_scene(&mut scene, |_| 0.0, false, 40.0);
    run(&sim, &mut agent, &world, 1.0, 1);
    assert_eq!(running(&agent), Some("sweep"));
}

#[test]
fn a_player_queued_action_survives_a_critical_need_and_yields_to_collapse() {
    let sim = simulator(argmax());
    let mut scene = Scene::default();
    let (mut agent, world) = preemption_scene(&mut scene, |_| 0.0, true, 20.0);
    run(&sim, &mut agent, &world, 1.0, 1);
    assert_eq!(
        running(&agent),
        Some("sweep"),
        "critical but not collapsing"
    );
    let (mut agent, world) = preemption_scene(&mut scene, |_| 0.0, true, 4.0);
    let events = run(&sim, &mut agent, &world, 1.0, 1);
    assert_eq!(running(&agent), Some("eat"), "collapsing: {events:?}");
    // Without its own collapse threshold, the engine default (5 % of the range) applies.
    let (mut agent, world) = preemption_scene(&mut scene, |_| 0.0, true, 4.0);
    agent.agent.considerations[0].collapse_threshold = None;
    run(&sim, &mut agent, &world, 1.0, 1);
    assert_eq!(running(&agent), Some("eat"));
    let (mut agent, world) = preemption_scene(&mut scene, |_| 0.0, true, 6.0);
    agent.agent.considerations[0].collapse_threshold = None;
    run(&sim, &mut agent, &world, 1.0, 1);
    assert_eq!(running(&agent), Some("sweep"));
}

#[test]
fn preempted_work_is_abandoned_but_the_queue_stays() {
    let sim = simulator(argmax());
    let mut scene = Scene::default();
    let (mut agent, mut world) = preemption_scene(&mut scene, |_| 0.0, false, 20.0);
    let wash = scene.action("wash", &[], &[]);
    world
        .providers
        .push(provider("tub", 0.0, 0.0, 1, vec![wash]));
    agent.enqueue_action("tub", "wash", false);
    run(&sim, &mut agent, &world, 1.0, 1);
    assert_eq!(running(&agent), Some("eat"));
    assert_eq!(agent.queue.len(), 1);
}

#[test]
fn the_queue_runs_first_in_first_out_and_drops_what_cannot_start() {
    let mut scene = Scene::default();
    let mut agent = SimulatedAgent::new(scene.agent("ann", 0.0, 0.0, &[("HUNGER", 50.0)]));
    let mut a = scene.action("first", &[], &[]);
    a.duration_hours = MINUTE;
    let mut b = scene.action("full", &[], &[]);
    b.capacity = 1;
    b.occupancy = 1;
    let mut c = scene.action("second", &[], &[]);
    c.duration_hours = MINUTE;
    let world = world(vec![provider("yard", 0.0, 0.0, 3, vec![a, b, c])]);
    agent.enqueue_action("yard", "first", true);
    agent.enqueue_action("nowhere", "dance", false);
    agent.enqueue_action("yard", "full", false);
    agent.enqueue_action("yard", "second", false);
    let events = run(&simulator(argmax()), &mut agent, &world, 0.0, 2);
    assert_eq!(started(&events[0]), Some("first"));
    let dropped: Vec<(&str, &str)> = events[1]
        .iter()
        .filter_map(|e| match e {
            SimEvent::QueueEntryDropped { action, reason, .. } => Some((action.as_str(), *reason)),
            _ => None,
        })
        .collect();
    assert_eq!(
        dropped,
        [("dance", "not_advertised"), ("full", "action_full")]
    );
    assert_eq!(started(&events[1]), Some("second"));
    assert!(agent.queue.is_empty());
}

#[test]
fn an_agent_simplified_across_a_meal_comes_back_fed() {
    let mut scene = Scene::default();
    let mut agent = SimulatedAgent::new(scene.agent("ann", 0.0, 0.0, &[("HUNGER", 60.0)]));
    agent.agent.considerations[0].updater = Updater::LinearDecay { rate: 5.0 };
    let (meal, hunger, brawl): (Symbol, Symbol, Symbol) =
        (scene.sym("meal"), scene.sym("HUNGER"), scene.sym("brawl"));
    let sim = simulator(argmax()).with_aggregated_effects(vec![(meal, vec![(hunger, 40.0)])]);
    let world = world(Vec::new());
    let tick = |agent: &mut SimulatedAgent, now: f64, level: DetailLevel, event: Option<Symbol>| {
        sim.advance(
            agent,
            TickRequest {
                now_hours: now,
                world: &world,
                level,
                simplified_event: event,
            },
            0,
        )
    };
    let result = tick(&mut agent, 10.0, DetailLevel::Simplified, None);
    assert_eq!(result.simulated_hours, 1.0);
    assert!(matches!(
        result.events[0],
        SimEvent::LevelChanged {
            to: DetailLevel::Simplified,
            ..
        }
    ));
    tick(&mut agent, 11.0, DetailLevel::Simplified, Some(brawl));
    tick(&mut agent, 12.0, DetailLevel::Simplified, Some(meal));
    assert_eq!(
        agent.agent.considerations[0].value, 45.0,
        "three simplified hours of decay, meal not yet applied"
    );
    let result = tick(&mut agent, 13.0, DetailLevel::Full, None);
    assert!(
        result
            .events
            .contains(&SimEvent::AggregatedEventsApplied { count: 2 })
    );
    assert!((result.simulated_hours - MINUTE).abs() < 1e-12);
    let expected = 45.0 + 40.0 - 5.0 * MINUTE;
    assert!(
        (agent.agent.considerations[0].value - expected).abs() < 1e-9,
        "fed per the effects table"
    );
    assert!(agent.aggregated_events.is_empty(), "the log is dropped");
}

#[test]
fn an_active_commitment_blocks_contradicting_actions_and_expires_on_time() {
    let mut scene = Scene::default();
    let mut agent = SimulatedAgent::new(scene.agent("ann", 0.0, 0.0, &[("FUN", 10.0)]));
    let violence = scene.sym("violence");
    agent.agent.commitments = vec![Commitment {
        forbid_tags: vec![violence],
        expires_at: Some(8.0 + 5.0 * MINUTE),
    }];
    let mut brawl = scene.action("brawl", &[("FUN", 80.0)], &["violence"]);
    brawl.duration_hours = MINUTE;
    let mut knit = scene.action("knit", &[("FUN", 5.0)], &[]);
    knit.duration_hours = MINUTE;
    let world = world(vec![provider("square", 0.0, 0.0, 2, vec![brawl, knit])]);
    let events = run(&simulator(argmax()), &mut agent, &world, 8.0, 8);
    let picks: Vec<Option<&str>> = events.iter().map(|e| started(e)).collect();
    assert!(picks[..5].iter().all(|p| *p != Some("brawl")), "{picks:?}");
    let expired = events.iter().position(|e| {
        e.iter()
            .any(|x| matches!(x, SimEvent::CommitmentExpired { .. }))
    });
    assert_eq!(expired, Some(5), "at 8:05, not before");
    assert!(picks[5..].contains(&Some("brawl")), "{picks:?}");
}

#[test]
fn identical_seeds_give_identical_traces() {
    let mut scene = Scene::default();
    let base = scene.agent(
        "ann",
        0.0,
        0.0,
        &[("HUNGER", 50.0), ("FUN", 50.0), ("ENERGY", 50.0)],
    );
    let mut agent = SimulatedAgent::new(base);
    for (c, rate) in agent.agent.considerations.iter_mut().zip([6.0, 4.0, 3.0]) {
        c.updater = Updater::LinearDecay { rate };
        c.critical_threshold = Some(20.0);
    }
    let mut actions = Vec::new();
    for (id, need) in [("eat", "HUNGER"), ("play", "FUN"), ("nap", "ENERGY")] {
        let mut action = scene.action(id, &[(need, 40.0)], &[]);
        action.duration_hours = 0.5;
        actions.push(action);
    }
    let world = world(vec![provider("village", 0.0, 0.0, 3, actions)]);
    let sim = simulator(TuningPatch {
        perception_noise: Some(1.0),
        ..Default::default()
    });
    let trace = |mut agent: SimulatedAgent| {
        let events = run(&sim, &mut agent, &world, 0.0, 24 * 60);
        (events, agent)
    };
    let (first, end_first) = trace(agent.clone());
    let (second, end_second) = trace(agent.clone());
    assert_eq!(first, second);
    assert_eq!(end_first, end_second);
    let starts = first.iter().filter(|e| started(e).is_some()).count();
    assert!(starts > 20, "a day of life: {starts} starts");
}

mod zone {
    use super::*;
    use geppetto_core::life::simulator::AgentTick;

    fn hungry_villagers(scene: &mut Scene, count: usize) -> Vec<SimulatedAgent> {
        (0..count)
            .map(|i| {
                let mut agent = SimulatedAgent::new(scene.agent(
                    &format!("v{i}"),
                    1.0 + i as f64,
                    0.0,
                    &[("HUNGER", 20.0)],
                ));
                agent.agent.considerations[0].updater = Updater::LinearDecay { rate: 1.0 };
                agent
            })
            .collect()
    }

    fn stalls(scene: &mut Scene) -> World {
        let mut pie = scene.action("eat_pie", &[("HUNGER", 50.0)], &[]);
        pie.duration_hours = 3.0 * MINUTE;
        let mut gruel = scene.action("eat_gruel", &[("HUNGER", 20.0)], &[]);
        gruel.duration_hours = 3.0 * MINUTE;
        world(vec![
            provider("pie_stall", 0.0, 0.0, 1, vec![pie]),
            provider("soup_kitchen", 0.0, 0.0, 10, vec![gruel]),
        ])
    }

    fn started(results: &[geppetto_core::TickResult]) -> Vec<Option<String>> {
        results
            .iter()
            .map(|r| {
                r.events.iter().find_map(|e| match e {
                    SimEvent::ActionStarted { action, .. } => Some(action.clone()),
                    _ => None,
                })
            })
            .collect()
    }

    #[test]
    fn a_contested_slot_goes_to_the_closest_and_occupancy_follows_the_actions() {
        let mut scene = Scene::default();
        let mut agents = hungry_villagers(&mut scene, 3);
        let mut world = stalls(&mut scene);
        let sim = simulator(argmax());
        let ticks = vec![AgentTick::default(); 3];
        let results = sim.advance_zone(&mut agents, &ticks, 12.0, &mut world, 7, 1);
        assert_eq!(
            started(&results),
            [
                Some("eat_pie".into()),
                Some("eat_gruel".into()),
                Some("eat_gruel".into())
            ]
        );
        assert_eq!(world.providers[0].occupants, 1);
        assert_eq!(world.providers[1].occupants, 2);
        assert_eq!(world.providers[1].actions[0].occupancy, 2);
        // Three minutes later everyone has finished and the slots are free again.
        for tick in 1..=3 {
            sim.advance_zone(
                &mut agents,
                &ticks,
                12.0 + tick as f64 * MINUTE,
                &mut world,
                7,
                1,
            );
        }
        let finished_and_restarted = world.providers.iter().map(|p| p.occupants).sum::<u32>();
        assert!(
            finished_and_restarted <= 3,
            "released before re-used: {finished_and_restarted}"
        );
        assert!(world.providers[0].occupants <= 1, "never over capacity");
    }

    #[test]
    fn a_zone_tick_does_not_depend_on_worker_count_or_agent_order() {
        let mut scene = Scene::default();
        let base = hungry_villagers(&mut scene, 40);
        let world0 = stalls(&mut scene);
        let sim = simulator(TuningPatch::default());
        let ticks = vec![AgentTick::default(); 40];
        let run = |mut agents: Vec<SimulatedAgent>, workers: usize| {
            let mut world = world0.clone();
            let mut log = Vec::new();
            for tick in 0..30 {
                let results = sim.advance_zone(
                    &mut agents,
                    &ticks,
                    12.0 + tick as f64 * MINUTE,
                    &mut world,
                    99,
                    workers,
                );
                let mut by_id: Vec<(String, Vec<SimEvent>)> = agents
                    .iter()
                    .zip(results)
                    .map(|(a, r)| (a.agent.id.clone(), r.events))
                    .collect();
                by_id.sort_by(|a, b| a.0.cmp(&b.0));
                log.push(by_id);
            }
            (log, world)
        };
        let (one, world_one) = run(base.clone(), 1);
        let (two, world_two) = run(base.clone(), 2);
        let mut reversed = base.clone();
        reversed.reverse();
        let (back, _) = run(reversed, 2);
        assert_eq!(one, two);
        assert_eq!(world_one, world_two);
        assert_eq!(one, back, "agent order does not decide who eats");
    }

    #[test]
    fn an_agent_left_out_of_a_zone_tick_is_untouched_and_the_rest_tick_as_in_a_full_one() {
        use geppetto_core::life::simulator::{ProviderIndex, TickRequest, zone_agent_seed};
        let mut scene = Scene::default();
        let base = hungry_villagers(&mut scene, 6);
        let world0 = stalls(&mut scene);
        let sim = simulator(argmax());
        // Agents 1, 3 and 4 tick; 0, 2 and 5 are left out (a zone's NPCs not due).
        let due = [1usize, 3, 4];
        let mut agents = base.clone();
        let mut world = world0.clone();
        let prepared = due
            .iter()
            .map(|&i| {
                let request = TickRequest::full(12.0, &world);
                let seed = zone_agent_seed(7, &agents[i]);
                (i, sim.prepare(&mut agents[i], &request, seed))
            })
            .collect();
        let providers = ProviderIndex::new(&world);
        let results = sim.finish_zone(&mut agents, prepared, 12.0, &mut world, &providers, 7, 1);
        assert_eq!(results.iter().map(|(i, _)| *i).collect::<Vec<_>>(), due);
        for left_out in [0, 2, 5] {
            assert_eq!(agents[left_out], base[left_out], "agent {left_out}");
        }
        // The same three alone in a zone of their own tick exactly alike.
        let mut alone: Vec<SimulatedAgent> = due.iter().map(|&i| base[i].clone()).collect();
        let mut alone_world = world0.clone();
        let ticks = vec![AgentTick::default(); alone.len()];
        let full = sim.advance_zone(&mut alone, &ticks, 12.0, &mut alone_world, 7, 1);
        for (slot, &i) in due.iter().enumerate() {
            assert_eq!(agents[i], alone[slot], "agent {i}");
            assert_eq!(results[slot].1, full[slot], "agent {i}'s events");
        }
        assert_eq!(world, alone_world, "the same slots taken");
    }

    #[test]
    fn simplified_agents_in_a_zone_do_not_choose() {
        let mut scene = Scene::default();
        let mut agents = hungry_villagers(&mut scene, 2);
        let mut world = stalls(&mut scene);
        let ticks = [
            AgentTick::default(),
            AgentTick {
                level: DetailLevel::Simplified,
                simplified_event: None,
            },
        ];
        let results = simulator(argmax()).advance_zone(&mut agents, &ticks, 12.0, &mut world, 1, 1);
        assert!(started(&results)[0].is_some() && started(&results)[1].is_none());
        assert_eq!(results[1].simulated_hours, 1.0);
    }
}

mod schedules {
    use super::*;
    use geppetto_core::life::schedule::{Schedule, ScheduleBlock, ScheduleLayer};
    use std::sync::Arc;

    fn day(scene: &mut Scene) -> (SimulatedAgent, World) {
        let mut agent = SimulatedAgent::new(scene.agent(
            "bram",
            0.0,
            0.0,
            &[("ENERGY", 60.0), ("FUN", 60.0), ("PURPOSE", 60.0)],
        ));
        for (c, rate) in agent.agent.considerations.iter_mut().zip([5.0, 2.0, 6.0]) {
            c.updater = Updater::LinearDecay { rate };
        }
        let mut hammer = scene.action("hammer", &[("PURPOSE", 6.0), ("FUN", 1.0)], &["work"]);
        hammer.duration_hours = 1.0;
        let mut sleep = scene.action("sleep", &[("ENERGY", 10.0)], &["rest"]);
        sleep.duration_hours = 1.0;
        let mut dice = scene.action("play_dice", &[("FUN", 12.0)], &["leisure"]);
        dice.duration_hours = 1.0;
        let world = world(vec![
            provider("forge", 10.0, 0.0, 2, vec![hammer]),
            provider("cottage", -10.0, 0.0, 2, vec![sleep]),
            provider("tavern", 0.0, 10.0, 8, vec![dice]),
        ]);
        let block =
            |scene: &mut Scene, start: f64, end: f64, activity: &str, tag: &str, location: &str| {
                ScheduleBlock {
                    start_hour: start,
                    end_hour: end,
                    activity: scene.sym(activity),
                    tags: vec![scene.sym(tag)],
                    location: Some(location.to_owned()),
                    priority: 1.0,
                    conditions: Vec::new(),
                    binding: false,
                    coarse_event: None,
                }
            };
        let schedule = Schedule {
            blocks: vec![
                block(scene, 8.0, 17.0, "work", "work", "{workplace}"),
                block(scene, 18.0, 21.0, "unwind", "leisure", "tavern"),
                block(scene, 22.0, 6.0, "sleep", "rest", "{home}"),
            ],
            adherence: 0.9,
            tag_bonus: 20.0,
            place_bonus: 20.0,
        };
        let places = vec![
            ("workplace".to_owned(), "forge".to_owned()),
            ("home".to_owned(), "cottage".to_owned()),
        ];
        agent.schedule = Some(Box::new(ScheduleLayer::new(Arc::new(schedule), places)));
        (agent, world)
    }

    #[test]
    fn the_day_follows_the_schedule_and_its_changes_are_events() {
        let mut scene = Scene::default();
        let (mut agent, world) = day(&mut scene);
        let sim = simulator(TuningPatch::default());
        let mut doing_at = std::collections::BTreeMap::new();
        let mut changes = Vec::new();
        for tick in 0..(24 * 60) {
            let now = 6.0 + tick as f64 * MINUTE;
            let request = TickRequest {
                now_hours: now,
                world: &world,
                level: DetailLevel::Full,
                simplified_event: None,
            };
            for event in sim.advance(&mut agent, request, tick as u64).events {
                if let SimEvent::ActivityChanged { to, .. } = event {
                    changes.push((
                        now.round() as i64 % 24,
                        to.map(|s| scene.vocabulary.name(s).to_owned()),
                    ));
                }
            }
            if tick % 60 == 30 {
                doing_at.insert(
                    (now.floor() as i64) % 24,
                    running(&agent).map(str::to_owned),
                );
            }
        }
        let share = |hours: &[i64], action: &str| {
            hours
                .iter()
                .filter(|h| doing_at[h].as_deref() == Some(action))
                .count()
        };
        assert!(
            share(&[9, 10, 11, 12, 13, 14, 15, 16], "hammer") >= 7,
            "{doing_at:?}"
        );
        assert!(share(&[23, 0, 1, 2, 3, 4], "sleep") >= 4, "{doing_at:?}");
        assert!(share(&[18, 19, 20], "play_dice") >= 2, "{doing_at:?}");
        let to: Vec<(i64, Option<&str>)> =
            changes.iter().map(|(h, a)| (*h, a.as_deref())).collect();
        assert!(
            to.contains(&(8, Some("work")))
                && to.contains(&(22, Some("sleep")))
                && to.contains(&(17, None)),
            "{to:?}"
        );
    }

    #[test]
    fn a_critical_need_wins_over_a_schedule_with_no_adherence() {
        let mut scene = Scene::default();
        let (mut agent, world) = day(&mut scene);
        if let Some(layer) = agent.schedule.as_mut() {
            let mut schedule = (*layer.schedule).clone();
            schedule.adherence = 0.0;
            layer.schedule = Arc::new(schedule);
        }
        agent.agent.considerations[0].value = 5.0; // exhausted
        agent.agent.considerations[0].critical_threshold = Some(20.0);
        let sim = simulator(argmax());
        let request = TickRequest {
            now_hours: 10.0,
            world: &world,
            level: DetailLevel::Full,
            simplified_event: None,
        };
        sim.advance(&mut agent, request, 0);
        assert_eq!(running(&agent), Some("sleep"), "need beats the work block");
        let pull = agent
            .agent
            .schedule
            .as_ref()
            .expect("the work block is in force");
        assert_eq!((pull.tag_bonus, pull.place_bonus), (0.0, 0.0));
    }

    #[test]
    fn adherence_scales_the_pull_so_a_pressing_need_wins_only_below_full_adherence() {
        let pick_at_ten = |adherence: f64| {
            let mut scene = Scene::default();
            let (mut agent, world) = day(&mut scene);
            if let Some(layer) = agent.schedule.as_mut() {
                let mut schedule = (*layer.schedule).clone();
                schedule.adherence = adherence;
                layer.schedule = Arc::new(schedule);
            }
            agent.agent.considerations[0].value = 20.0; // tired, not critical
            let sim = simulator(argmax());
            sim.advance(&mut agent, TickRequest::full(10.0, &world), 0);
            running(&agent).map(str::to_owned)
        };
        assert_eq!(pick_at_ten(0.0).as_deref(), Some("sleep"), "needs decide");
        assert_eq!(
            pick_at_ten(1.0).as_deref(),
            Some("hammer"),
            "the work block's bonus outweighs tiredness"
        );
    }

    #[test]
    fn a_change_of_block_interrupts_an_action_that_fits_neither_it_nor_a_critical_need() {
        use geppetto_core::life::action::RunningAction;
        let run_from = |provider: usize, at: f64| {
            let mut scene = Scene::default();
            let (mut agent, world) = day(&mut scene);
            agent.agent.considerations[0].value = 30.0; // tired, not critical
            let mut action = world.providers[provider].actions[0].clone();
            action.duration_hours = 6.0;
            agent.running = Some(RunningAction {
                provider: world.providers[provider].id.clone(),
                action,
                started_at_hours: at,
                elapsed_hours: 0.0,
                continuation_utility: 100.0,
                player_queued: false,
                order: None,
                carried_by_game: None,
            });
            let sim = simulator(argmax());
            // Between blocks at 21:30, then the sleep block begins at 22:00.
            sim.advance(&mut agent, TickRequest::full(21.5, &world), 0);
            let events = sim
                .advance(&mut agent, TickRequest::full(22.0, &world), 1)
                .events;
            (events, running(&agent).map(str::to_owned))
        };
        let (events, now) = run_from(0, 20.0);
        assert!(
            events.iter().any(
                |e| matches!(e, SimEvent::ActionPreempted { action, .. } if action == "hammer")
            ),
            "{events:?}"
        );
        assert_eq!(now.as_deref(), Some("sleep"), "the bell rings");
        let (events, now) = run_from(1, 20.0);
        assert_eq!(
            now.as_deref(),
            Some("sleep"),
            "sleep fits the sleep block: {events:?}"
        );
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, SimEvent::ActionPreempted { .. }))
        );
    }

    #[test]
    fn the_action_just_completed_weighs_the_repeat_factor_when_the_next_is_chosen() {
        let next_after_hammer = |repeat_factor: f64| {
            let mut scene = Scene::default();
            let (mut agent, world) = day(&mut scene);
            let mut polish = scene.action("polish", &[("PURPOSE", 4.0)], &["work"]);
            polish.duration_hours = 1.0;
            let mut world = world;
            world.providers[0].actions.push(polish);
            let sim = simulator(TuningPatch {
                repeat_factor: Some(repeat_factor),
                ..argmax()
            });
            sim.advance(&mut agent, TickRequest::full(9.0, &world), 0);
            assert_eq!(running(&agent), Some("hammer"), "the better work first");
            let mut next = None;
            for tick in 1..=61u32 {
                let now = 9.0 + f64::from(tick) * MINUTE;
                let events = sim
                    .advance(&mut agent, TickRequest::full(now, &world), u64::from(tick))
                    .events;
                if let Some(action) = started(&events) {
                    next = Some(action.to_owned());
                    break;
                }
            }
            next
        };
        assert_eq!(next_after_hammer(1.0).as_deref(), Some("hammer"));
        assert_eq!(
            next_after_hammer(0.1).as_deref(),
            Some("polish"),
            "varies its work"
        );
    }
}

#[test]
fn a_hungry_npc_barks_on_its_cooldown_and_its_mood_follows_its_needs() {
    use geppetto_core::life::bark::{BarkMemory, BarkTemplate};
    use geppetto_core::life::wellbeing::{Wellbeing, WellbeingConfig};
    use std::sync::Arc;
    let mut scene = Scene::default();
    let mut agent =
        SimulatedAgent::new(scene.agent("bram", 0.0, 0.0, &[("HUNGER", 10.0), ("FUN", 90.0)]));
    let hunger = scene.sym("HUNGER");
    let line = BarkTemplate {
        id: "starving".into(),
        text: "{name} could eat a horse.".into(),
        trigger: Some(hunger),
        below: 0.2,
        mood: (-1.0, 1.0),
        cooldown_minutes: 20.0,
    };
    agent.barks = Some((Arc::new(vec![line]), BarkMemory::default()));
    agent.wellbeing = Some((Arc::new(WellbeingConfig::default()), Wellbeing::default()));
    let events = run(
        &simulator(TuningPatch::default()),
        &mut agent,
        &world(Vec::new()),
        12.0,
        120,
    );
    let barked: Vec<usize> = (0..120)
        .filter(|&t| events[t].iter().any(|e| matches!(e, SimEvent::Bark { .. })))
        .collect();
    assert_eq!(
        barked,
        [0, 20, 60],
        "after 20 game minutes, then a cooldown longer each time the line is said"
    );
    assert!(events[0].contains(&SimEvent::Bark {
        id: "starving".into(),
        text: "bram could eat a horse.".into()
    }));
    let (_, wellbeing) = agent.wellbeing.as_ref().expect("tracked");
    assert!(
        (wellbeing.mood - 0.0).abs() < 1e-9,
        "(0.1 + 0.9)/2 satisfaction → mood 0: {}",
        wellbeing.mood
    );
    assert!(wellbeing.stress > 0.0, "an unmet need builds stress");
}
