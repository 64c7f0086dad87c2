//! Interactions chosen by the decision engine and shaped by personality, reservations and
//! cooldowns, places and witnesses, and how far a chatterbox spreads what it hears.

use super::*;
use geppetto_core::decision::world::AdvertisedAction;
use geppetto_core::life::action::RunningAction;

#[test]
fn partners_advertise_interactions_the_relationship_admits() {
    let mut v = Village::new(&["ada", "bo", "cy"]);
    v.regard("ada", "bo", Facet::Trust, 0.1);
    v.regard("ada", "cy", Facet::Affinity, 0.9);
    v.regard("cy", "ada", Facet::Affinity, 0.7);
    let (world, offers) = v.fabric.advertise(&v.agents, 0, &[1, 2], 1.0);
    let kinds = |p: usize| -> Vec<&str> { offers[p].iter().map(|o| o.kind.as_str()).collect() };
    assert_eq!(world.providers[0].id, "bo");
    assert!(kinds(0).contains(&"argument") && !kinds(0).contains(&"courtship"));
    assert!(kinds(1).contains(&"courtship") && !kinds(1).contains(&"argument"));
    assert!(kinds(1).contains(&"conversation") && kinds(1).contains(&"trade"));
    assert!(!kinds(1).contains(&"gossip"), "ada knows nothing to tell");
}

#[test]
fn personality_shapes_the_choice_among_advertised_interactions() {
    // Two traders: one whose archetype loves trade, one neutral; count their picks.
    let trades = |trade_trait: f64| {
        let mut v = Village::new(&["ada", "bo"]);
        let trade = v.vocabulary.intern("trade");
        v.agents[0].agent.tag_modifiers = vec![(trade, trade_trait)].into();
        (0..200)
            .filter(|seed| {
                let (world, offers) = v.fabric.advertise(&v.agents, 0, &[1], 1.0);
                let pick = v.decider.decide(&v.agents[0].agent, &world, *seed).selected;
                pick.is_some_and(|c| offers[c.provider][c.action].kind == InteractionKind::Trade)
            })
            .count()
    };
    let (keen, plain) = (trades(3.0), trades(1.0));
    assert!(keen > plain + 50, "keen trader {keen} vs plain {plain}");
}

#[test]
fn a_reserved_partner_is_not_chased_and_cooldowns_space_interactions() {
    let mut v = Village::new(&["ada", "bo", "cy"]);
    // ada and cy are far apart; bo stands between them: both would pick bo first.
    v.agents[0].agent.position = Position::new(-5.0, 0.0);
    v.agents[1].agent.position = Position::new(0.0, 0.0);
    v.agents[2].agent.position = Position::new(5.0, 0.0);
    for id in ["ada", "bo", "cy"] {
        v.fabric.set_profile(
            id,
            SocialProfile {
                social_initiative: 1.0,
                ..SocialProfile::default()
            },
        );
    }
    let out = v.step(1.0, 7);
    let with_bo = out
        .interactions
        .iter()
        .filter(|i| i.initiator == "bo" || i.target == "bo")
        .count();
    assert_eq!(with_bo, 1, "{:?}", out.interactions);
    assert!(
        out.interactions.len() <= 1,
        "nobody else is free: {:?}",
        out.interactions
    );
    let again = v.step(1.1, 8);
    assert!(again.interactions.is_empty(), "engaged, then cooling down");
    assert!(!v.fabric.reservations.is_available("bo", 1.1));
    assert!(
        v.fabric.reservations.is_available("bo", 2.5),
        "after the cooldown"
    );
    let later = v.step(2.5, 9);
    assert!(!later.interactions.is_empty());
}

#[test]
fn a_spread_step_ignores_expired_engagements_and_sweeps_them_once_a_step() {
    let mut v = Village::new(&["ada", "bo", "cy"]);
    v.fabric.config.step_every_ticks = 10;
    v.fabric.config.max_interactions_per_step = 0;
    assert!(v.fabric.reservations.reserve("ada", "bo", 0.0, 0.5));
    // Ticks 1–9 are slices past a step's first: the expired engagement stays in the map…
    for tick in 1..10 {
        v.slice(1.0, tick, 7);
    }
    assert_eq!(v.fabric.reservations.engaged_count(), 2);
    // …and blocks nobody meanwhile.
    assert!(v.fabric.reservations.is_available("bo", 1.0));
    assert!(v.fabric.reservations.reserve("cy", "bo", 1.0, 0.1));
    // The next step's first slice sweeps what has expired by then.
    v.slice(2.0, 10, 7);
    assert_eq!(v.fabric.reservations.engaged_count(), 0);
}

#[test]
fn an_npc_at_no_place_is_neither_observed_nor_met_nor_a_witness() {
    let ids = ["ada", "bo", "cy", "dee"];
    let mut v = Village::new(&ids);
    for id in ids {
        v.set_need(id, "SOCIAL", 0.05);
    }
    // Dee is at no place (a zone's Background NPC): nothing of the step is about her.
    let at = [0, 0, 0, usize::MAX];
    let mut met = Vec::new();
    for tick in 0..40 {
        let step = v.slice_at(&at, 1.0 + tick as f64 * 0.5, tick, 3);
        met.extend(
            step.interactions
                .iter()
                .flat_map(|i| [i.initiator.clone(), i.target.clone()]),
        );
        assert!(
            step.events.iter().all(|e| !e.npcs().contains(&"dee")),
            "tick {tick}: {:?}",
            step.events
        );
    }
    assert!(!met.is_empty(), "the others meet");
    assert!(!met.iter().any(|id| id == "dee"), "{met:?}");
}

/// A step at hour 1, then Vex starts a theft at hour 2 before the others in the square, and
/// three steps follow; each is told who started an action as `started` says (`None`: not
/// told).
fn a_theft_seen(started: Option<&[usize]>) -> Vec<SocialStep> {
    let ids = ["ada", "bo", "cy", "vex"];
    let mut v = Village::new(&ids);
    v.fabric.config.witness_chance = 1.0;
    let theft = v.vocabulary.intern("theft");
    let mut steal = AdvertisedAction::new("steal");
    steal.tags.push(theft);
    let at = [0, 0, 0, 0];
    let mut steps = vec![v.slice_started(&at, started, 1.0, (0, 3))];
    let thief = v.index("vex");
    v.agents[thief].running = Some(Box::new(RunningAction {
        provider: "stall".into(),
        action: RunningAction::copy_of(&steal),
        started_at_hours: 2.0,
        elapsed_hours: 0.0,
        continuation_utility: 0.5,
        player_queued: false,
        order: None,
        carried_by_game: None,
    }));
    for tick in 1..4 {
        steps.push(v.slice_started(&at, started, 1.0 + tick as f64, (tick, 3)));
    }
    steps
}

#[test]
fn a_hostile_act_is_witnessed_once_looked_for_among_the_npcs_that_started_one() {
    let witnessed = |steps: &[SocialStep]| -> Vec<(usize, String)> {
        (steps.iter().enumerate())
            .flat_map(|(n, step)| {
                step.events
                    .iter()
                    .map(move |e| (n, format!("{:?}", e.kind)))
            })
            .filter(|(_, kind)| kind.starts_with("Witnessed"))
            .collect()
    };
    let scanned = a_theft_seen(None);
    let seen = witnessed(&scanned);
    // Started at hour 2: seen by the three others at the step of hour 2, not again after.
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.iter().all(|(n, _)| *n == 1), "{seen:?}");
    // Told that Vex (index 3) started an action, the step finds the same acts, and the same
    // everything else; told that nobody did, it finds none.
    let vex = [3];
    assert_eq!(a_theft_seen(Some(&vex)), scanned);
    assert!(witnessed(&a_theft_seen(Some(&[]))).is_empty());
}

#[test]
fn reservations_expire_and_refuse_a_second_suitor_meanwhile() {
    let mut r = geppetto_core::social::Reservations::default();
    assert!(r.reserve("ada", "bo", 1.0, 0.25));
    assert!(!r.reserve("cy", "bo", 1.1, 0.25), "bo is taken");
    assert!(r.reserve("ada", "bo", 1.1, 0.25), "the same pair extends");
    assert_eq!(r.partner("bo", 1.2), Some("ada"));
    assert!(r.reserve("cy", "bo", 1.4, 0.25), "expired at 1.35");
    r.sweep(2.0);
    assert_eq!(r.engaged_count(), 0);
    r.cool_down("ada", 3.0);
    assert!(!r.is_available("ada", 2.5) && r.is_available("ada", 3.0));
}

#[test]
fn only_interactions_a_player_sees_are_marked_witnessed() {
    let mut v = Village::new(&["ada", "bo"]);
    let out = v.resolve("ada", "bo", offer(InteractionKind::Conversation), SUCCEED);
    assert!(!out.interactions[0].witnessed);
    let mut seen = Village::new(&["ada", "bo"]);
    seen.places[0].players = vec!["player-1".into()];
    let out = seen.resolve("ada", "bo", offer(InteractionKind::Conversation), SUCCEED);
    assert!(out.interactions[0].witnessed);
}

#[test]
fn a_chatterbox_spreads_what_a_secretive_npc_keeps() {
    let told = |tendency: f64| {
        (0..40u64)
            .filter(|seed| {
                let mut v = Village::new(&["ada", "bo"]);
                v.fabric.set_profile(
                    "ada",
                    SocialProfile {
                        gossip_tendency: tendency,
                        social_initiative: 1.0,
                        ..SocialProfile::default()
                    },
                );
                v.fabric.learn(
                    "ada",
                    rumour("tam", RumourTopic::Person, GossipIntent::Inform, 0),
                );
                v.step(1.0, *seed)
                    .interactions
                    .iter()
                    .any(|i| i.kind == InteractionKind::Gossip)
            })
            .count()
    };
    let (chatterbox, secretive) = (told(1.0), told(0.0));
    assert!(chatterbox > secretive + 10, "{chatterbox} vs {secretive}");
}
