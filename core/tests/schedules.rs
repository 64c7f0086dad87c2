//! Schedules: the day follows its blocks, adherence scales their pull against pressing needs,
//! a change of block interrupts what fits neither it nor a critical need, and the action just
//! completed weighs the repeat factor.

mod support;

use geppetto_core::life::schedule::{Schedule, ScheduleBlock, ScheduleLayer};
use geppetto_core::{
    DetailLevel, SimEvent, SimulatedAgent, TickRequest, TuningPatch, Updater, World,
};
use std::sync::Arc;
use support::*;

fn day(scene: &mut Scene) -> (SimulatedAgent, World) {
    let mut agent = SimulatedAgent::new(scene.agent(
        "bram",
        0.0,
        0.0,
        &[("ENERGY", 60.0), ("FUN", 60.0), ("PURPOSE", 60.0)],
    ));
    for (c, rate) in agent.agent.considerations.iter_mut().zip([5.0, 2.0, 6.0]) {
        c.behaviour_mut().updater = Updater::LinearDecay { rate };
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
    agent.layers.make_mut().schedule =
        Some(Box::new(ScheduleLayer::new(Arc::new(schedule), places)));
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
    let to: Vec<(i64, Option<&str>)> = changes.iter().map(|(h, a)| (*h, a.as_deref())).collect();
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
    if let Some(layer) = agent
        .layers
        .get_mut()
        .and_then(|layers| layers.schedule.as_mut())
    {
        let mut schedule = (*layer.schedule).clone();
        schedule.adherence = 0.0;
        layer.schedule = Arc::new(schedule);
    }
    agent.agent.considerations[0].value = 5.0; // exhausted
    agent.agent.considerations[0]
        .behaviour_mut()
        .critical_threshold = Some(20.0);
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
        if let Some(layer) = agent
            .layers
            .get_mut()
            .and_then(|layers| layers.schedule.as_mut())
        {
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
        agent.running = Some(Box::new(RunningAction {
            provider: world.providers[provider].id.clone(),
            action: RunningAction::copy_of(&action),
            started_at_hours: at,
            elapsed_hours: 0.0,
            continuation_utility: 100.0,
            player_queued: false,
            order: None,
            carried_by_game: None,
        }));
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
        events
            .iter()
            .any(|e| matches!(e, SimEvent::ActionPreempted { action, .. } if action == "hammer")),
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
