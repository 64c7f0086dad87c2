//! Each interaction kind's rule: what a conversation, a trade, an argument, a favour,
//! intimidation, a scheme, mentoring, courtship and gossip do to both sides.

use super::*;

#[test]
fn a_conversation_warms_both_and_fills_their_social_need() {
    let mut v = Village::new(&["ada", "bo"]);
    let out = v.resolve("ada", "bo", offer(InteractionKind::Conversation), SUCCEED);
    assert!(out.interactions[0].success);
    assert!(v.value("ada", "bo", Facet::Affinity) > NEUTRAL);
    assert!(v.value("bo", "ada", Facet::Trust) > NEUTRAL);
    assert!((v.need("ada", "SOCIAL") - 0.65).abs() < 1e-9);
    assert!((v.need("bo", "SOCIAL") - 0.65).abs() < 1e-9);
    let mut cold = Village::new(&["ada", "bo"]);
    cold.resolve("ada", "bo", offer(InteractionKind::Conversation), FAIL);
    assert!(
        cold.value("ada", "bo", Facet::Affinity) < NEUTRAL,
        "snubbed"
    );
    assert_eq!(cold.need("bo", "SOCIAL"), 0.5);
}

#[test]
fn a_trade_pays_both_when_trusted_and_sours_the_initiator_when_refused() {
    let mut v = Village::new(&["ada", "bo"]);
    let out = v.resolve("ada", "bo", offer(InteractionKind::Trade), SUCCEED);
    assert!(out.interactions[0].success);
    assert!((out.interactions[0].chance - (0.3 + 0.7 * 0.5)).abs() < 1e-12);
    assert!(v.need("ada", "ECONOMIC") > 0.5 && v.need("bo", "ECONOMIC") > 0.5);
    assert!(v.value("bo", "ada", Facet::Respect) > NEUTRAL);
    assert!(
        v.fabric
            .rumours("ada")
            .iter()
            .any(|r| r.kind == RumourTopic::Opportunity),
        "a trade makes the market's opportunity known"
    );
    let mut refused = Village::new(&["ada", "bo"]);
    refused.resolve("ada", "bo", offer(InteractionKind::Trade), FAIL);
    assert!(refused.value("ada", "bo", Facet::Trust) < NEUTRAL);
    assert_eq!(refused.need("ada", "ECONOMIC"), 0.5);
}

#[test]
fn an_argument_costs_trust_both_ways_and_leaves_a_grievance() {
    let mut v = Village::new(&["ada", "bo"]);
    v.resolve("ada", "bo", offer(InteractionKind::Argument), SUCCEED);
    assert!(v.value("ada", "bo", Facet::Trust) < NEUTRAL);
    assert!(v.value("bo", "ada", Facet::Trust) < NEUTRAL);
    assert!(v.value("bo", "ada", Facet::Respect) > NEUTRAL, "the winner");
    assert!(v.value("ada", "bo", Facet::Respect) < NEUTRAL);
    assert!(v.need("ada", "SOCIAL") < 0.5);
    let grievance = &v.fabric.rumours("bo")[0];
    assert_eq!(
        (grievance.subject.as_str(), grievance.kind),
        ("ada", RumourTopic::Person)
    );
}

#[test]
fn a_favor_binds_the_asker_when_granted_and_loosens_it_when_refused() {
    let mut v = Village::new(&["ada", "bo"]);
    v.regard("bo", "ada", Facet::Trust, 0.9);
    v.resolve("ada", "bo", offer(InteractionKind::Favor), SUCCEED);
    assert!(v.value("ada", "bo", Facet::Loyalty) > NEUTRAL);
    assert!(v.need("ada", "ECONOMIC") > 0.5 && v.need("bo", "PURPOSE") > 0.5);
    let mut refused = Village::new(&["ada", "bo"]);
    refused.resolve("ada", "bo", offer(InteractionKind::Favor), FAIL);
    assert!(refused.value("ada", "bo", Facet::Loyalty) < NEUTRAL);
}

#[test]
fn intimidation_frightens_a_target_that_respects_the_bully_and_makes_it_react() {
    let mut v = Village::new(&["vex", "bo"]);
    let fact = v.vocabulary.intern("bully_reported");
    let index = v.index("bo");
    if let Some(book) = v.agents[index]
        .layers
        .get_mut()
        .and_then(|layers| layers.goals.as_mut())
    {
        book.reactions = Arc::from([ReactionRule {
            on: "intimidation".into(),
            description: "report {source} to the watch".into(),
            predicate: GoalPredicate::HasFact(fact),
            deadline_hours: Some(12.0),
            priority_bonus: 2.0,
        }]);
    }
    let out = v.resolve("vex", "bo", offer(InteractionKind::Intimidation), SUCCEED);
    assert!(v.need("bo", "SURVIVAL") < 0.5, "afraid");
    assert!(v.need("vex", "ECONOMIC") > 0.5, "extorted");
    assert!(v.value("bo", "vex", Facet::Trust) < NEUTRAL);
    let created: Vec<(&str, &str)> = out
        .goals_created
        .iter()
        .map(|(npc, goal)| (npc.as_str(), goal.description.as_str()))
        .collect();
    assert_eq!(created, [("bo", "report vex to the watch")]);
    let mut stood_up = Village::new(&["vex", "bo"]);
    stood_up.resolve("vex", "bo", offer(InteractionKind::Intimidation), FAIL);
    assert!(stood_up.value("bo", "vex", Facet::Respect) < NEUTRAL);
    assert_eq!(stood_up.need("bo", "SURVIVAL"), 0.5);
}

#[test]
fn scheming_binds_the_plotters_turns_the_partner_on_the_victim_and_leaves_a_secret() {
    let mut v = Village::new(&["ada", "bo", "cy"]);
    v.regard("bo", "ada", Facet::Trust, 0.9);
    let scheme = Offer {
        victim: Some("cy".into()),
        ..offer(InteractionKind::Scheming)
    };
    let out = v.resolve("ada", "bo", scheme.clone(), SUCCEED);
    assert!(out.interactions[0].success);
    assert_eq!(out.interactions[0].against.as_deref(), Some("cy"));
    assert!(v.value("ada", "bo", Facet::Loyalty) > NEUTRAL);
    assert!(
        v.value("bo", "cy", Facet::Trust) < NEUTRAL,
        "turned on the victim"
    );
    assert!(
        v.fabric
            .rumours("bo")
            .iter()
            .any(|r| r.kind == RumourTopic::Secret && r.subject == "ada")
    );
    let mut refused = Village::new(&["ada", "bo", "cy"]);
    refused.resolve("ada", "bo", scheme, FAIL);
    assert!(refused.value("bo", "ada", Facet::Trust) < NEUTRAL);
    assert_eq!(refused.value("bo", "cy", Facet::Trust), NEUTRAL);
}

#[test]
fn mentoring_gives_the_pupil_purpose_and_respect_for_the_master() {
    let mut v = Village::new(&["ada", "bo"]);
    v.resolve("ada", "bo", offer(InteractionKind::Mentoring), SUCCEED);
    assert!(v.need("bo", "PURPOSE") > v.need("ada", "PURPOSE"));
    assert!(v.value("bo", "ada", Facet::Respect) > NEUTRAL);
    let mut refused = Village::new(&["ada", "bo"]);
    refused.resolve("ada", "bo", offer(InteractionKind::Mentoring), FAIL);
    assert_eq!(refused.need("bo", "PURPOSE"), 0.5);
}

#[test]
fn courtship_succeeds_by_the_others_affinity_and_a_refusal_is_one_sided() {
    let mut v = Village::new(&["ada", "bo"]);
    v.regard("bo", "ada", Facet::Affinity, 0.9);
    let out = v.resolve("ada", "bo", offer(InteractionKind::Courtship), 0.85);
    assert!(out.interactions[0].success, "chance is bo's affinity, 0.9");
    assert!(v.value("ada", "bo", Facet::Affinity) > NEUTRAL);
    let mut cold = Village::new(&["ada", "bo"]);
    cold.regard("bo", "ada", Facet::Affinity, 0.2);
    let out = cold.resolve("ada", "bo", offer(InteractionKind::Courtship), 0.5);
    assert!(!out.interactions[0].success);
    assert!(cold.value("ada", "bo", Facet::Affinity) > NEUTRAL, "pining");
    assert!(cold.value("bo", "ada", Facet::Affinity) < 0.2);
}

#[test]
fn a_gossip_interaction_succeeds_when_the_listener_believes_it() {
    let mut v = Village::new(&["ada", "bo", "tam"]);
    v.regard("bo", "ada", Facet::Trust, 0.9);
    let told = Offer {
        rumour: Some(rumour("tam", RumourTopic::Person, GossipIntent::Defame, 0)),
        ..offer(InteractionKind::Gossip)
    };
    let out = v.resolve("ada", "bo", told, FAIL);
    assert!(out.interactions[0].success, "belief, not the draw, decides");
    assert!(v.value("bo", "tam", Facet::Trust) < NEUTRAL);
    assert_eq!(v.fabric.rumours("bo")[0].depth, 1);
}
