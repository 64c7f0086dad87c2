//! A whole zone's tick: contested slots go to the closest, occupancy follows the actions, and
//! the outcome depends neither on worker count nor on agent order.

mod support;

use geppetto_core::life::simulator::AgentTick;
use geppetto_core::{DetailLevel, SimEvent, SimulatedAgent, TuningPatch, Updater, World};
use support::*;

fn hungry_villagers(scene: &mut Scene, count: usize) -> Vec<SimulatedAgent> {
    (0..count)
        .map(|i| {
            let mut agent = SimulatedAgent::new(scene.agent(
                &format!("v{i}"),
                1.0 + i as f64,
                0.0,
                &[("HUNGER", 20.0)],
            ));
            agent.agent.considerations[0].behaviour_mut().updater =
                Updater::LinearDecay { rate: 1.0 };
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
    let mut providers = ProviderIndex::new(&world);
    let results = sim.finish_zone(
        &mut agents,
        prepared,
        12.0,
        &mut world,
        &mut providers,
        7,
        1,
    );
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
