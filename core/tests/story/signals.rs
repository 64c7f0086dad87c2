//! Each of the fifteen signal types: the situation that raises it and a nearby one that
//! must not.

use super::*;

#[test]
fn rivalry_escalation_when_a_pairs_trust_falls_by_a_third_within_two_days() {
    let situation = vec![
        at(1.0, "market", trust("ada", "bo", -0.15, 0.35)),
        at(20.0, "market", trust("bo", "ada", -0.1, 0.4)),
        at(30.0, "tavern", trust("ada", "bo", -0.1, 0.25)),
        at(
            30.0,
            "tavern",
            interaction("ada", "bo", InteractionKind::Argument, true),
        ),
    ];
    let signals = detect(situation);
    let rivalry = of(&signals, SignalType::RivalryEscalation);
    assert_eq!(rivalry.len(), 1);
    assert_eq!(rivalry[0].involved_npcs, ["ada", "bo"]);
    assert!((rivalry[0].importance - 0.35).abs() < 1e-9);
    assert_eq!(rivalry[0].context["recent_conflicts"], "1");
    assert_eq!(rivalry[0].location, "tavern");
    // The same fall spread over more than 48 hours is no escalation.
    let slow = vec![
        at(1.0, "market", trust("ada", "bo", -0.2, 0.3)),
        at(60.0, "market", trust("ada", "bo", -0.15, 0.15)),
    ];
    assert!(!fires(slow, SignalType::RivalryEscalation));
}

#[test]
fn one_theft_seen_by_many_is_one_rivalry_about_the_thief_naming_its_core_participants() {
    let bystanders = ["ann", "bea", "cid", "dot", "eve", "fay", "gus", "hal"];
    let mut theft: Vec<StoryEvent> = bystanders
        .iter()
        .map(|who| at(10.0, "market", trust(who, "vex", -0.35, 0.15)))
        .collect();
    // Another quarrel, elsewhere, at the same time: a separate incident.
    theft.push(at(10.0, "tavern", trust("ivo", "jon", -0.4, 0.1)));
    let signals = detect(theft);
    let rivalry = of(&signals, SignalType::RivalryEscalation);
    assert_eq!(rivalry.len(), 2, "{rivalry:?}");
    let market = rivalry
        .iter()
        .find(|s| s.location == "market")
        .expect("the theft");
    assert!(market.involved_npcs.contains(&"vex".to_owned()));
    assert!(
        market.involved_npcs.len() <= DetectorConfig::default().max_named_npcs,
        "{market:?}"
    );
    // The same incident found again within the window merges into the signal; a day later
    // it is a new one.
    let mut detector = StoryDetector::new(DetectorConfig::default());
    detector.push(at(10.0, "market", trust("ann", "vex", -0.35, 0.15)));
    assert_eq!(detector.detect(10.5).len(), 1);
    detector.push(at(11.0, "market", trust("bea", "vex", -0.35, 0.15)));
    assert!(
        detector.detect(11.5).is_empty(),
        "merged into the theft's signal"
    );
    detector.push(at(40.0, "market", trust("cid", "vex", -0.35, 0.15)));
    assert_eq!(detector.detect(40.5).len(), 1, "a later incident");
}

#[test]
fn ids_holding_the_separator_never_merge_two_situations() {
    // Joined naively, both pairs would read `a|b|c` and one would merge into the other.
    let signals = detect(vec![
        at(1.0, "market", trust("a|b", "c", -0.4, 0.1)),
        at(1.0, "market", trust("a", "b|c", -0.4, 0.1)),
    ]);
    let mut pairs: Vec<Vec<String>> = of(&signals, SignalType::RivalryEscalation)
        .into_iter()
        .map(|s| s.involved_npcs.clone())
        .collect();
    pairs.sort();
    assert_eq!(pairs, [["a", "b|c"], ["a|b", "c"]]);
    // The same for an NPC's blocked goal.
    let blocked = |npc: &str, description: &str| {
        at(
            1.0,
            "forge",
            StoryEventKind::Goal {
                npc: npc.into(),
                description: description.into(),
                change: GoalChange::Blocked,
            },
        )
    };
    let signals = detect(vec![blocked("a|b", "c"), blocked("a", "b|c")]);
    assert_eq!(of(&signals, SignalType::GoalBlocked).len(), 2);
}

#[test]
fn faction_tension_after_three_conflicts_across_two_factions() {
    let clash = |i: &str, t: &str, fi: &str, ft: &str| {
        let mut kind = interaction(i, t, InteractionKind::Argument, true);
        if let StoryEventKind::Interaction {
            initiator_faction,
            target_faction,
            ..
        } = &mut kind
        {
            *initiator_faction = Some(fi.into());
            *target_faction = Some(ft.into());
        }
        at(2.0, "square", kind)
    };
    let three = vec![
        clash("rod", "vex", "watch", "thieves"),
        clash("vex", "sela", "thieves", "watch"),
        clash("sela", "kit", "watch", "thieves"),
    ];
    let signals = detect(three);
    let tension = of(&signals, SignalType::FactionTension);
    assert_eq!(tension.len(), 1);
    assert_eq!(tension[0].context["factions"], "thieves|watch");
    let within = vec![
        clash("rod", "vex", "watch", "thieves"),
        clash("vex", "sela", "thieves", "watch"),
        clash("rod", "sela", "watch", "watch"),
    ];
    assert!(
        !fires(within, SignalType::FactionTension),
        "a quarrel within the watch"
    );
}

#[test]
fn threat_detected_on_a_witnessed_act_or_a_credible_threat() {
    let seen = vec![at(3.0, "market", vex_seen_stealing_by("ada"))];
    let signals = detect(seen);
    let threat = of(&signals, SignalType::ThreatDetected);
    assert_eq!(threat[0].involved_npcs, ["ada", "vex"]);
    assert!((threat[0].importance - 0.9).abs() < 1e-12);
    assert!(fires(
        vec![at(
            3.0,
            "square",
            heard("bo", "wolves", RumourTopic::Threat, 0.7, true)
        )],
        SignalType::ThreatDetected
    ));
    assert!(
        !fires(
            vec![at(
                3.0,
                "square",
                heard("bo", "wolves", RumourTopic::Threat, 0.5, true)
            )],
            SignalType::ThreatDetected
        ),
        "believed, but not credible enough"
    );
}

#[test]
fn resource_scarcity_when_three_npcs_run_short_of_one_need() {
    let low = |npc: &str, need: &str| {
        at(
            4.0,
            "market",
            StoryEventKind::NeedLow {
                npc: npc.into(),
                need: need.into(),
                level: 0.1,
            },
        )
    };
    let signals = detect(vec![
        low("ada", "economic"),
        low("bo", "economic"),
        low("cy", "economic"),
    ]);
    assert_eq!(
        of(&signals, SignalType::ResourceScarcity)[0].context["need"],
        "economic"
    );
    assert!(!fires(
        vec![
            low("ada", "economic"),
            low("bo", "economic"),
            low("cy", "social")
        ],
        SignalType::ResourceScarcity
    ));
}

#[test]
fn trade_opportunity_when_demand_meets_a_working_market() {
    let sold = at(
        5.0,
        "market",
        interaction("ada", "piet", InteractionKind::Trade, true),
    );
    let refused = at(
        5.0,
        "market",
        interaction("bo", "marla", InteractionKind::Trade, false),
    );
    let tipped = at(
        5.0,
        "square",
        heard("cy", "market", RumourTopic::Opportunity, 0.6, true),
    );
    let signals = detect(vec![sold, refused.clone(), tipped.clone()]);
    let trade = of(&signals, SignalType::TradeOpportunity);
    assert_eq!(trade[0].location, "market");
    assert_eq!(trade[0].context["demand"], "2");
    assert!(
        !fires(vec![refused, tipped], SignalType::TradeOpportunity),
        "nobody is selling"
    );
}

#[test]
fn alliance_forming_on_a_successful_scheme_or_allies_against_a_common_threat() {
    let mut scheme = interaction("ada", "bo", InteractionKind::Scheming, true);
    if let StoryEventKind::Interaction { against, .. } = &mut scheme {
        *against = Some("vex".into());
    }
    let signals = detect(vec![at(6.0, "tavern", scheme.clone())]);
    assert_eq!(
        of(&signals, SignalType::AllianceForming)[0].context["against"],
        "vex"
    );
    let witnessed = |w: &str| {
        at(
            6.0,
            "market",
            StoryEventKind::Witnessed {
                witness: w.into(),
                actor: "vex".into(),
                act: "theft".into(),
            },
        )
    };
    let loyal = at(
        6.5,
        "market",
        StoryEventKind::RelationshipChanged {
            from: "ada".into(),
            to: "bo".into(),
            facet: Facet::Loyalty,
            delta: 0.1,
            value: 0.65,
            cause: "favor".into(),
        },
    );
    assert!(fires(
        vec![witnessed("ada"), witnessed("bo"), loyal.clone()],
        SignalType::AllianceForming
    ));
    assert!(
        !fires(vec![witnessed("ada"), loyal], SignalType::AllianceForming),
        "bo is unaware of the threat"
    );
    if let StoryEventKind::Interaction { success, .. } = &mut scheme {
        *success = false;
    }
    assert!(!fires(
        vec![at(6.0, "tavern", scheme)],
        SignalType::AllianceForming
    ));
}

#[test]
fn discovery_when_an_npc_learns_something_first_hand_or_from_a_credible_source() {
    assert!(fires(
        vec![at(7.0, "market", vex_seen_stealing_by("ada"),)],
        SignalType::Discovery
    ));
    assert!(fires(
        vec![at(
            7.0,
            "square",
            heard("bo", "ore", RumourTopic::Opportunity, 0.8, true)
        )],
        SignalType::Discovery
    ));
    assert!(!fires(
        vec![at(
            7.0,
            "square",
            heard("bo", "ore", RumourTopic::Opportunity, 0.5, true)
        )],
        SignalType::Discovery
    ));
}

#[test]
fn goal_blocked_when_no_plan_reaches_a_goal_or_it_keeps_failing() {
    let blocked = at(
        8.0,
        "forge",
        StoryEventKind::Goal {
            npc: "bjorn".into(),
            description: "forge a masterwork".into(),
            change: GoalChange::Blocked,
        },
    );
    let signals = detect(vec![blocked]);
    assert_eq!(
        of(&signals, SignalType::GoalBlocked)[0].context["goal"],
        "forge a masterwork"
    );
    let failed = |h: f64| {
        at(
            h,
            "market",
            StoryEventKind::Goal {
                npc: "piet".into(),
                description: "report the theft by vex".into(),
                change: GoalChange::Failed,
            },
        )
    };
    assert!(fires(
        vec![failed(8.0), failed(9.0)],
        SignalType::GoalBlocked
    ));
    assert!(
        !fires(vec![failed(8.0)], SignalType::GoalBlocked),
        "one failure is bad luck"
    );
}

#[test]
fn betrayal_when_someone_turns_on_an_ally() {
    let mut turned = interaction("ada", "bo", InteractionKind::Intimidation, true);
    if let StoryEventKind::Interaction {
        target_loyalty_before,
        ..
    } = &mut turned
    {
        *target_loyalty_before = 0.8;
    }
    let signals = detect(vec![at(9.0, "square", turned)]);
    let betrayal = of(&signals, SignalType::Betrayal);
    assert_eq!(betrayal[0].context["traitor"], "ada");
    assert!((betrayal[0].importance - 0.8).abs() < 1e-12);
    let mut scheme = interaction("ada", "bo", InteractionKind::Scheming, true);
    if let StoryEventKind::Interaction {
        against,
        victim_loyalty_before,
        ..
    } = &mut scheme
    {
        *against = Some("cy".into());
        *victim_loyalty_before = Some(0.7);
    }
    let signals = detect(vec![at(9.0, "square", scheme)]);
    assert_eq!(
        of(&signals, SignalType::Betrayal)[0].context["betrayed"],
        "cy"
    );
    assert!(
        !fires(
            vec![at(
                9.0,
                "square",
                interaction("ada", "bo", InteractionKind::Intimidation, true)
            )],
            SignalType::Betrayal
        ),
        "bo was no ally"
    );
}

#[test]
fn secret_revealed_when_a_secret_is_told_and_believed() {
    let signals = detect(vec![at(
        10.0,
        "tavern",
        heard("cy", "ada", RumourTopic::Secret, 0.6, true),
    )]);
    assert_eq!(
        of(&signals, SignalType::SecretRevealed)[0].context["subject"],
        "ada"
    );
    assert!(!fires(
        vec![at(
            10.0,
            "tavern",
            heard("cy", "ada", RumourTopic::Secret, 0.2, false)
        )],
        SignalType::SecretRevealed
    ));
}

fn respect(from: &str, to: &str, value: f64, hours: f64) -> StoryEvent {
    at(
        hours,
        "chapel",
        StoryEventKind::RelationshipChanged {
            from: from.into(),
            to: to.into(),
            facet: Facet::Respect,
            delta: 0.05,
            value,
            cause: "mentoring".into(),
        },
    )
}

#[test]
fn power_shift_when_the_most_respected_npc_changes() {
    let mut detector = StoryDetector::new(DetectorConfig::default());
    for event in [
        respect("a", "ivo", 0.8, 1.0),
        respect("b", "ivo", 0.8, 1.0),
        respect("a", "vex", 0.5, 1.0),
        respect("b", "vex", 0.5, 1.0),
    ] {
        detector.push(event);
    }
    assert!(
        detector.detect(2.0).is_empty(),
        "the first ranking is no shift"
    );
    // vex climbs a little: ivo stays on top.
    detector.push(respect("a", "vex", 0.7, 2.5));
    let quiet = detector.detect(3.0);
    assert!(of(&quiet, SignalType::PowerShift).is_empty());
    // ivo falls from grace.
    detector.push(respect("a", "ivo", 0.3, 3.5));
    detector.push(respect("b", "ivo", 0.3, 3.5));
    let shifted = detector.detect(4.0);
    let shift = of(&shifted, SignalType::PowerShift);
    assert_eq!(
        (
            shift[0].context["from"].as_str(),
            shift[0].context["to"].as_str()
        ),
        ("ivo", "vex")
    );
}

#[test]
fn unrequited_when_a_fond_suitor_is_refused_by_someone_cold() {
    let courtship = |success: bool, suitor: f64, other: f64| {
        let mut kind = interaction("ada", "bo", InteractionKind::Courtship, success);
        if let StoryEventKind::Interaction {
            initiator_affinity,
            target_affinity,
            ..
        } = &mut kind
        {
            *initiator_affinity = suitor;
            *target_affinity = other;
        }
        vec![at(11.0, "square", kind)]
    };
    assert!(fires(courtship(false, 0.8, 0.3), SignalType::Unrequited));
    assert!(
        !fires(courtship(true, 0.8, 0.3), SignalType::Unrequited),
        "accepted"
    );
    assert!(
        !fires(courtship(false, 0.8, 0.6), SignalType::Unrequited),
        "merely shy"
    );
}

#[test]
fn crisis_when_three_npcs_are_distressed_at_once() {
    let signals = detect(vec![
        mood("a", -0.5, 0.2),
        mood("b", -0.3, 0.1),
        mood("c", 0.1, 0.9),
    ]);
    assert_eq!(
        of(&signals, SignalType::Crisis)[0].involved_npcs,
        ["a", "b", "c"]
    );
    assert!(!fires(
        vec![
            mood("a", -0.5, 0.2),
            mood("b", -0.3, 0.1),
            mood("c", 0.1, 0.3)
        ],
        SignalType::Crisis
    ));
}

#[test]
fn celebration_when_a_cheerful_crowd_gets_on_well_in_one_place() {
    let cheer = |i: &str, t: &str, m: f64| {
        let mut kind = interaction(i, t, InteractionKind::Conversation, true);
        if let StoryEventKind::Interaction {
            initiator_mood,
            target_mood,
            ..
        } = &mut kind
        {
            *initiator_mood = m;
            *target_mood = m;
        }
        at(13.0, "tavern", kind)
    };
    let party = vec![
        cheer("a", "b", 0.6),
        cheer("c", "d", 0.5),
        cheer("a", "c", 0.6),
    ];
    let signals = detect(party);
    assert_eq!(of(&signals, SignalType::Celebration)[0].location, "tavern");
    let glum = vec![
        cheer("a", "b", 0.1),
        cheer("c", "d", 0.0),
        cheer("a", "c", 0.1),
    ];
    assert!(!fires(glum, SignalType::Celebration));
}

#[test]
fn migration_when_eight_npcs_arrive_in_one_place_together() {
    let moved = |npc: &str, from: &str| {
        at(
            18.0,
            "tavern",
            StoryEventKind::Moved {
                npc: npc.into(),
                from: from.into(),
            },
        )
    };
    let places = ["forge", "market", "farm", "chapel"];
    let crowd = |n: usize| -> Vec<StoryEvent> {
        (0..n)
            .map(|i| moved(&format!("npc{i}"), places[i % places.len()]))
            .collect()
    };
    let signals = detect(crowd(8));
    let migration = &of(&signals, SignalType::Migration)[0];
    assert_eq!(migration.context["to"], "tavern");
    assert!(
        migration.involved_npcs.len() <= DetectorConfig::default().max_named_npcs,
        "it names its core participants: {migration:?}"
    );
    assert!(
        !fires(crowd(7), SignalType::Migration),
        "seven is an evening at the tavern"
    );
}
