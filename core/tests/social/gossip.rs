//! Each gossip rule with its reaction applied: credibility, dampening, the depth cap,
//! retelling, threats, opportunities, defamation, why a rumour is told, and habituation.

use super::*;

/// `listener` hears `gossip` from `teller` (trusted `trust`); returns (credibility, accepted).
fn hear(trust: f64, gossip: Gossip) -> (Village, bool) {
    let mut v = Village::new(&["ada", "bo", "tam"]);
    if trust != NEUTRAL {
        v.regard("bo", "ada", Facet::Trust, trust);
    }
    let told = Offer {
        rumour: Some(gossip),
        ..offer(InteractionKind::Gossip)
    };
    let out = v.resolve("ada", "bo", told, SUCCEED);
    let accepted = out.interactions[0].success;
    (v, accepted)
}

#[test]
fn credibility_is_confidence_times_trust_times_dampening_and_dismisses_below_the_line() {
    let config = geppetto_core::social::GossipConfig::default();
    let mut r = geppetto_core::social::Relationships::default();
    r.adjust("bo", "ada", Facet::Trust, 0.3, 0.0);
    // (trust in teller, confidence, depth) → credibility
    for (trust_known, confidence, depth, expected) in [
        (true, 1.0, 0, 0.8),
        (true, 1.0, 1, 0.8 * 0.7),
        (true, 0.5, 2, 0.5 * 0.8 * 0.49),
        (false, 1.0, 0, 0.5),
        (false, 0.8, 1, 0.8 * 0.5 * 0.7),
    ] {
        let mut g = rumour("tam", RumourTopic::Person, GossipIntent::Inform, depth);
        g.confidence = confidence;
        let listener = if trust_known { "bo" } else { "cy" };
        let got = config.credibility(&r, listener, "ada", &g);
        assert!((got - expected).abs() < 1e-12, "{got} ≠ {expected}");
    }
    let (_, believed) = hear(
        0.9,
        rumour("tam", RumourTopic::Person, GossipIntent::Inform, 1),
    );
    assert!(believed, "0.9 × 0.7 = 0.63");
    let (_, believed) = hear(
        0.9,
        rumour("tam", RumourTopic::Person, GossipIntent::Inform, 4),
    );
    assert!(!believed, "0.9 × 0.7⁴ = 0.216 is below 0.3");
}

#[test]
fn dampening_makes_each_retelling_weigh_less_until_dismissal() {
    let config = geppetto_core::social::GossipConfig::default();
    let r = geppetto_core::social::Relationships::default();
    let credibility: Vec<f64> = (0..5)
        .map(|depth| {
            config.credibility(
                &r,
                "bo",
                "ada",
                &rumour("tam", RumourTopic::Threat, GossipIntent::Warn, depth),
            )
        })
        .collect();
    assert!(
        credibility
            .windows(2)
            .all(|w| (w[1] / w[0] - 0.7).abs() < 1e-12)
    );
    let (_, believed) = hear(
        NEUTRAL,
        rumour("tam", RumourTopic::Threat, GossipIntent::Warn, 1),
    );
    assert!(
        believed,
        "a stranger's word one retelling deep: 0.5 × 0.7 = 0.35"
    );
    let (_, believed) = hear(
        NEUTRAL,
        rumour("tam", RumourTopic::Threat, GossipIntent::Warn, 2),
    );
    assert!(!believed, "two deep: 0.245");
}

#[test]
fn a_rumour_at_the_depth_cap_is_dropped_even_from_a_trusted_teller() {
    let (v, believed) = hear(
        1.0,
        rumour("tam", RumourTopic::Person, GossipIntent::Inform, 5),
    );
    assert!(!believed);
    assert!(v.fabric.rumours("bo").is_empty(), "not passed on");
    let (_, believed) = hear(
        1.0,
        rumour("tam", RumourTopic::Person, GossipIntent::Inform, 3),
    );
    assert!(believed, "depth 3 from full trust: 0.343");
}

#[test]
fn retelling_goes_one_level_deeper_and_never_resets() {
    let mut v = Village::new(&["ada", "bo", "cy", "tam"]);
    v.regard("bo", "ada", Facet::Trust, 1.0);
    v.regard("cy", "bo", Facet::Trust, 1.0);
    v.fabric.learn(
        "ada",
        rumour("tam", RumourTopic::Person, GossipIntent::Inform, 1),
    );
    let first = Offer {
        rumour: v.fabric.rumours("ada").first().cloned(),
        ..offer(InteractionKind::Gossip)
    };
    v.resolve("ada", "bo", first, SUCCEED);
    assert_eq!(v.fabric.rumours("bo")[0].depth, 2);
    v.fabric.reservations.release("bo");
    let second = Offer {
        rumour: v.fabric.rumours("bo").first().cloned(),
        ..offer(InteractionKind::Gossip)
    };
    v.resolve("bo", "cy", second, SUCCEED);
    assert_eq!(v.fabric.rumours("cy")[0].depth, 3);
}

#[test]
fn a_credible_threat_raises_survival_pressure_and_the_guards_protect_goal() {
    let (v, _) = hear(
        0.8,
        rumour("tam", RumourTopic::Threat, GossipIntent::Warn, 0),
    );
    assert!(
        (v.need("bo", "SURVIVAL") - (0.5 - 0.8 * 0.15)).abs() < 1e-9,
        "credibility 0.8 × 0.15"
    );
    let mut guarded = Village::new(&["ada", "gus", "tam"]);
    guarded.make_guard("gus");
    guarded.regard("gus", "ada", Facet::Trust, 0.8);
    let told = Offer {
        rumour: Some(rumour("tam", RumourTopic::Threat, GossipIntent::Warn, 0)),
        ..offer(InteractionKind::Gossip)
    };
    guarded.resolve("ada", "gus", told, SUCCEED);
    assert_eq!(guarded.goals("gus"), ["protect the village from tam"]);
    // Believed but not credible enough to frighten (0.5): no pressure.
    let (v, believed) = hear(
        NEUTRAL,
        rumour("tam", RumourTopic::Threat, GossipIntent::Warn, 0),
    );
    assert!(believed);
    assert_eq!(v.need("bo", "SURVIVAL"), 0.5);
}

#[test]
fn an_opportunity_becomes_an_acquire_goal_only_when_money_is_short() {
    let mut v = Village::new(&["ada", "bo", "tam"]);
    v.set_need("bo", "ECONOMIC", 0.3);
    v.regard("bo", "ada", Facet::Trust, 0.8);
    let told = Offer {
        rumour: Some(rumour(
            "market",
            RumourTopic::Opportunity,
            GossipIntent::Inform,
            0,
        )),
        ..offer(InteractionKind::Gossip)
    };
    v.resolve("ada", "bo", told.clone(), SUCCEED);
    assert_eq!(v.goals("bo"), ["seize the opportunity at market"]);
    let mut rich = Village::new(&["ada", "bo", "tam"]);
    rich.set_need("bo", "ECONOMIC", 0.8);
    rich.regard("bo", "ada", Facet::Trust, 0.8);
    rich.resolve("ada", "bo", told, SUCCEED);
    assert!(rich.goals("bo").is_empty());
}

#[test]
fn defamation_lowers_trust_in_the_subject_and_other_person_news_raises_it() {
    let (v, _) = hear(
        0.8,
        rumour("tam", RumourTopic::Person, GossipIntent::Defame, 0),
    );
    assert!((v.value("bo", "tam", Facet::Trust) - (0.5 - 0.1 * 0.8)).abs() < 1e-9);
    let (v, _) = hear(
        0.8,
        rumour("tam", RumourTopic::Person, GossipIntent::Inform, 0),
    );
    assert!((v.value("bo", "tam", Facet::Trust) - 0.55).abs() < 1e-9);
    let (v, _) = hear(
        0.8,
        rumour("tam", RumourTopic::Threat, GossipIntent::Warn, 0),
    );
    assert!((v.value("bo", "tam", Facet::Trust) - (0.5 - 0.2 * 0.8)).abs() < 1e-9);
    let (v, _) = hear(
        0.8,
        rumour("tam", RumourTopic::Secret, GossipIntent::Bond, 0),
    );
    assert!(
        v.value("bo", "ada", Facet::Trust) > 0.8,
        "bonding with the teller"
    );
}

#[test]
fn why_a_rumour_is_told_follows_the_tellers_relationships_and_influence() {
    let config = geppetto_core::social::GossipConfig::default();
    let thresholds = geppetto_core::social::RelationshipThresholds::default();
    let mut r = geppetto_core::social::Relationships::default();
    r.adjust("ada", "friend", Facet::Trust, 0.4, 0.0);
    r.adjust("ada", "tam", Facet::Trust, -0.3, 0.0);
    let intent = |listener: &str, g: &Gossip, influence: f64| {
        config.intent_for(&r, &thresholds, "ada", listener, g, influence)
    };
    let threat = rumour("wolves", RumourTopic::Threat, GossipIntent::Inform, 0);
    assert_eq!(intent("friend", &threat, 0.5), GossipIntent::Warn);
    assert_eq!(intent("stranger", &threat, 0.5), GossipIntent::Inform);
    let about_tam = rumour("tam", RumourTopic::Person, GossipIntent::Inform, 0);
    assert_eq!(intent("stranger", &about_tam, 0.5), GossipIntent::Defame);
    assert_eq!(
        intent("stranger", &about_tam, 0.9),
        GossipIntent::Manipulate
    );
    let about_me = rumour("ada", RumourTopic::Person, GossipIntent::Inform, 0);
    assert_eq!(intent("stranger", &about_me, 0.5), GossipIntent::Boast);
    let secret = rumour("bo", RumourTopic::Secret, GossipIntent::Inform, 0);
    assert_eq!(intent("friend", &secret, 0.5), GossipIntent::Bond);
}

#[test]
fn courtship_takes_two_and_any_kind_done_often_loses_its_pull() {
    let mut v = Village::new(&["ada", "bo"]);
    v.regard("ada", "bo", Facet::Affinity, 0.9);
    let kinds = |v: &mut Village| -> Vec<String> {
        let (_, offers) = v.fabric.advertise(&v.agents, 0, &[1], 1.0);
        offers[0]
            .iter()
            .map(|o| o.kind.as_str().to_owned())
            .collect()
    };
    v.regard("bo", "ada", Facet::Affinity, 0.2);
    assert!(
        !kinds(&mut v).contains(&"courtship".to_owned()),
        "bo does not care for ada"
    );
    v.regard("bo", "ada", Facet::Affinity, 0.8);
    assert!(
        kinds(&mut v).contains(&"courtship".to_owned()),
        "now both do"
    );
    let pull = |v: &mut Village, now: f64| {
        let (world, offers) = v.fabric.advertise(&v.agents, 0, &[1], now);
        let at = offers[0]
            .iter()
            .position(|o| o.kind == InteractionKind::Conversation)
            .expect("conversation");
        world.providers[0].actions[at].intrinsic_priority
    };
    // The helper resolves at game hour 10.
    let fresh = pull(&mut v, 10.0);
    for _ in 0..4 {
        v.resolve("ada", "bo", offer(InteractionKind::Conversation), SUCCEED);
        v.fabric.reservations = Default::default();
    }
    let used = pull(&mut v, 10.0);
    assert!(
        (used - fresh / (1.0 + 0.25 * 4.0)).abs() < 1e-9,
        "four talks halve the pull: {fresh} → {used}"
    );
    let rested = pull(&mut v, 10.0 + 24.0);
    assert!(
        rested > used && rested < fresh,
        "the familiarity fades: {rested}"
    );
}
