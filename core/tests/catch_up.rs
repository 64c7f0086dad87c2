//! Background catch-up: whole days in closed form agree with hour-by-hour simulation, the gap
//! is capped, and full days are never ticked hour by hour.

mod support;

use std::sync::Arc;

use geppetto_core::life::catch_up::{CatchUpCache, CatchUpConfig, CatchUpRequest};
use geppetto_core::life::goals::{Goal, GoalBook, GoalCategory, GoalPredicate};
use geppetto_core::life::schedule::{Schedule, ScheduleBlock, ScheduleLayer};
use geppetto_core::{
    Decider, DetailLevel, SimEvent, SimulatedAgent, Simulator, TickRequest, Tuning, Updater,
};
use support::{Scene, provider, world};

fn villager(scene: &mut Scene) -> (SimulatedAgent, Simulator, geppetto_core::World) {
    let mut agent =
        SimulatedAgent::new(scene.agent("ada", 0.0, 0.0, &[("HUNGER", 70.0), ("ENERGY", 80.0)]));
    agent.agent.considerations[0].behaviour_mut().updater = Updater::LinearDecay { rate: 1.5 };
    agent.agent.considerations[1].behaviour_mut().updater = Updater::LinearDecay { rate: 1.0 };
    let (meal, sleep) = (scene.sym("meal"), scene.sym("sleep"));
    let block = |scene: &mut Scene, start: f64, end: f64, activity: &str, coarse, place: &str| {
        ScheduleBlock {
            start_hour: start,
            end_hour: end,
            activity: scene.sym(activity),
            tags: Vec::new(),
            location: Some(place.to_owned()),
            priority: 1.0,
            conditions: Vec::new(),
            binding: false,
            coarse_event: coarse,
        }
    };
    let schedule = Schedule {
        blocks: vec![
            block(scene, 12.0, 13.0, "lunch", Some(meal), "inn"),
            block(scene, 22.0, 6.0, "night", Some(sleep), "home"),
            block(scene, 8.0, 12.0, "work", None, "field"),
        ],
        adherence: 1.0,
        tag_bonus: 0.0,
        place_bonus: 0.0,
    };
    agent.layers.make_mut().schedule =
        Some(Box::new(ScheduleLayer::new(Arc::new(schedule), Vec::new())));
    let (hunger, energy) = (scene.sym("HUNGER"), scene.sym("ENERGY"));
    let simulator = Simulator::new(Decider::new(Tuning::default())).with_aggregated_effects(vec![
        (meal, vec![(hunger, 30.0)]),
        (sleep, vec![(energy, 20.0)]),
    ]);
    let world = world(vec![
        provider("inn", 5.0, 5.0, 4, Vec::new()),
        provider("home", -8.0, 2.0, 1, Vec::new()),
        provider("field", 20.0, 0.0, 9, Vec::new()),
    ]);
    (agent, simulator, world)
}

#[test]
fn a_caught_up_day_equals_a_simulated_day() {
    let mut scene = Scene::default();
    let (agent, simulator, world) = villager(&mut scene);
    let mut hourly = agent.clone();
    for hour in 0u32..24 {
        let request = TickRequest {
            now_hours: 9.0 + f64::from(hour),
            world: &world,
            level: DetailLevel::Simplified,
            simplified_event: None,
        };
        simulator.advance(&mut hourly, request, u64::from(hour));
    }
    simulator.advance(
        &mut hourly,
        TickRequest {
            now_hours: 33.0,
            world: &world,
            level: DetailLevel::Full,
            simplified_event: None,
        },
        99,
    );
    let mut caught = agent.clone();
    let mut cache = CatchUpCache::default();
    let report = simulator.catch_up(
        &mut caught,
        &world,
        &CatchUpRequest {
            from_hours: 9.0,
            to_hours: 33.0,
            archetype: "farmer",
            seed: 5,
        },
        &mut cache,
        &CatchUpConfig::default(),
    );
    assert_eq!((report.closed_form_days, report.hourly_steps), (1, 0));
    for (a, b) in hourly
        .agent
        .considerations
        .iter()
        .zip(&caught.agent.considerations)
    {
        // The hourly run also ticked one full-detail minute at 33:00.
        assert!(
            (a.value - b.value).abs() < 0.05,
            "{} vs {}",
            a.value,
            b.value
        );
    }
    assert_eq!(cache.len(), 1);
    assert_eq!(
        caught.agent.position, world.providers[2].position,
        "09:00: at work in the field"
    );
}

#[test]
fn whole_days_are_never_ticked_hour_by_hour_and_the_gap_is_capped() {
    let mut scene = Scene::default();
    let (agent, simulator, world) = villager(&mut scene);
    let mut cache = CatchUpCache::default();
    let mut three_days = agent.clone();
    let report = simulator.catch_up(
        &mut three_days,
        &world,
        &CatchUpRequest {
            from_hours: 0.0,
            to_hours: 72.0 + 5.0,
            archetype: "farmer",
            seed: 1,
        },
        &mut cache,
        &CatchUpConfig::default(),
    );
    assert_eq!((report.closed_form_days, report.hourly_steps), (3, 5));
    let mut long_gone = agent.clone();
    let report = simulator.catch_up(
        &mut long_gone,
        &world,
        &CatchUpRequest {
            from_hours: 0.0,
            to_hours: 996.5,
            archetype: "farmer",
            seed: 1,
        },
        &mut cache,
        &CatchUpConfig::default(),
    );
    assert_eq!(report.hours, 168.0);
    assert_eq!((report.closed_form_days, report.hourly_steps), (7, 0));
    assert_eq!(
        long_gone.agent.position, world.providers[0].position,
        "12:30: at lunch in the inn"
    );
}

#[test]
fn expired_goals_fail_during_catch_up() {
    let mut scene = Scene::default();
    let (mut agent, simulator, world) = villager(&mut scene);
    let mut book = GoalBook::default();
    book.add(Goal {
        category: GoalCategory::Reactive,
        source: "event:fire".into(),
        target: None,
        description: "rebuild the barn".into(),
        predicate: GoalPredicate::HasFact(scene.sym("has:barn")),
        deadline_hours: Some(30.0),
        due_within_hours: None,
        priority_bonus: 1.0,
        id: None,
    })
    .expect("added");
    agent.layers.make_mut().goals = Some(Box::new(book));
    let report = simulator.catch_up(
        &mut agent,
        &world,
        &CatchUpRequest {
            from_hours: 0.0,
            to_hours: 48.0,
            archetype: "farmer",
            seed: 1,
        },
        &mut CatchUpCache::default(),
        &CatchUpConfig::default(),
    );
    assert!(report.events.iter().any(
        |e| matches!(e, SimEvent::GoalFailed { goal, .. } if goal.description == "rebuild the barn")
    ));
}
