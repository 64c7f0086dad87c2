//! The game's quest events on the village: a deed remembered (regard, a rumour that spreads),
//! facts that meet an assigned goal, a goal withdrawn, and what is refused.

use serde_json::{Value, json};

use crate::bus::StreamKind;
use crate::bus::envelope::{AssignedGoal, WorldEvent, WorldMessage, header};
use crate::zone::ZoneOutput;
use crate::zone::testing::*;
use geppetto_core::social::Deed;

/// The messages of `kind` among `messages`, parsed.
fn of(messages: &[(StreamKind, String)], kind: &str) -> Vec<Value> {
    messages
        .iter()
        .filter(|(_, m)| m.contains(&format!("\"type\":\"{kind}\"")))
        .map(|(_, m)| serde_json::from_str(m).expect("json"))
        .collect()
}

fn outcome(deed: Deed, npcs: &[&str]) -> WorldEvent {
    WorldEvent::QuestOutcome {
        by: "ann".into(),
        outcome: deed,
        quest: Some("the stolen purse".into()),
        npcs: Some(npcs.iter().map(|n| (*n).to_owned()).collect()),
        signal: None,
        goal: None,
    }
}

/// The refusals applying `event` now gives: (field, reason).
fn refusals(zone: &mut crate::zone::Zone, event: WorldEvent) -> Vec<(String, String)> {
    let message = WorldMessage {
        header: header(fresh_id("r"), "village", zone.game_time),
        event,
    };
    let mut out = ZoneOutput::default();
    zone.apply(&message, &live(), &mut out);
    out.refused
        .into_iter()
        .map(|r| (r.path, r.reason))
        .collect()
}

#[test]
fn a_helped_npc_regards_the_player_better_and_the_village_hears_of_it() {
    let mut zone = village();
    enter(&mut zone, "market");
    advance(&mut zone, 30);
    let told = send(&mut zone, outcome(Deed::Helped, &["piet"]));
    let [remembered] = of(&told, "deed_remembered").try_into().expect("one");
    assert_eq!(
        (&remembered["npc"], &remembered["outcome"]),
        (&json!("piet"), &json!("helped"))
    );
    for facet in ["trust", "respect", "affinity"] {
        let (before, after) = (&remembered["before"][facet], &remembered["after"][facet]);
        assert!(
            after.as_f64() > before.as_f64(),
            "{facet}: {before} → {after}"
        );
    }
    // Piet tells others what Ann did for him: a rumour about her goes round.
    let day = advance(&mut zone, 24 * 60);
    let heard: Vec<Value> = of(&day, "rumour_heard")
        .into_iter()
        .filter(|m| m["subject"] == "ann")
        .collect();
    assert!(!heard.is_empty(), "the village hears of Ann's deed");
    assert!(heard.iter().any(|m| m["npc"] != "piet"));
}

#[test]
fn harm_costs_regard_and_a_failure_a_share_of_it() {
    let mut zone = village();
    let told = send(&mut zone, outcome(Deed::Harmed, &["piet"]));
    let harmed = &of(&told, "deed_remembered")[0];
    let fall = |m: &Value| {
        m["before"]["trust"].as_f64().expect("trust") - m["after"]["trust"].as_f64().expect("trust")
    };
    let told = send(&mut zone, outcome(Deed::Failed, &["greta"]));
    let failed = &of(&told, "deed_remembered")[0];
    assert!(fall(harmed) > 0.0 && fall(failed) > 0.0);
    let share = zone.social.fabric.config.deed_failed_share;
    assert!(
        (fall(failed) - share * fall(harmed)).abs() < 1e-3,
        "{} vs {}",
        fall(failed),
        fall(harmed)
    );
}

/// Hilda's mood (she has a wellbeing layer, as every archetype's NPC does) an hour after
/// `deed`, or after nothing, with a player in her forge.
fn hilda_mood_after(deed: Option<Deed>) -> f64 {
    let mut zone = village();
    // With a player in her room she is updated every tick, her mood with her.
    enter(&mut zone, "forge");
    advance(&mut zone, 5);
    if let Some(deed) = deed {
        let told = send(&mut zone, outcome(deed, &["hilda"]));
        assert_eq!(of(&told, "deed_remembered").len(), 1);
    }
    advance(&mut zone, 60);
    let hilda = zone.npc_index("hilda").expect("hilda");
    zone.agents[hilda]
        .layers
        .wellbeing
        .as_deref()
        .map(|(_, w)| w.mood)
        .expect("a wellbeing layer")
}

#[test]
fn a_deed_is_felt_help_lifts_the_mood_harm_sinks_it() {
    let untouched = hilda_mood_after(None);
    let helped = hilda_mood_after(Some(Deed::Helped));
    let harmed = hilda_mood_after(Some(Deed::Harmed));
    assert!(
        helped > untouched && harmed < untouched,
        "helped {helped}, untouched {untouched}, harmed {harmed}"
    );
}

#[test]
fn granted_facts_meet_an_assigned_goal_and_a_withdrawn_goal_fails() {
    let mut zone = village();
    let assign = |id: &str| WorldEvent::GoalAssigned {
        npc: "piet".into(),
        goal: AssignedGoal {
            id: id.into(),
            description: "get the purse back".into(),
            predicate: json!({"predicate_type": "has_fact", "fact": "has:purse"}),
            deadline_hours: None,
            priority: None,
        },
    };
    let piet = zone.npc_index("piet").expect("piet");
    let room = zone.room_names[zone.meta[piet].room].0.clone();
    enter(&mut zone, &room);
    let mut told = send(&mut zone, assign("quest-1"));
    let granted = WorldEvent::FactsGranted {
        npc: "piet".into(),
        facts: vec!["has:purse".into()],
    };
    assert!(refusals(&mut zone, granted).is_empty());
    let later = advance(&mut zone, 5);
    told.extend(later.iter().cloned());
    let created = of(&told, "goal_created");
    let quest: Vec<&Value> = created
        .iter()
        .filter(|m| m["goal_id"] == "quest-1")
        .collect();
    assert_eq!(
        quest.len(),
        1,
        "told once, though assigned before the first tick"
    );
    assert!(created.len() > 1, "and its innate goals too: {created:?}");
    assert!(
        of(&later, "goal_completed")
            .iter()
            .any(|m| m["goal_id"] == "quest-1"),
        "the granted fact meets the goal"
    );
    let revoked = WorldEvent::FactsRevoked {
        npc: "piet".into(),
        facts: vec!["has:purse".into()],
    };
    assert!(refusals(&mut zone, revoked).is_empty());
    assert!(zone.agents[piet].agent.facts.is_empty());
    send(&mut zone, assign("quest-2"));
    let withdraw = || WorldEvent::GoalWithdrawn {
        npc: "piet".into(),
        goal: "quest-2".into(),
    };
    let told = send(&mut zone, withdraw());
    let [failed] = of(&told, "goal_failed").try_into().expect("one");
    assert_eq!(
        (&failed["goal_id"], &failed["reason"]),
        (&json!("quest-2"), &json!("withdrawn"))
    );
    let again = refusals(&mut zone, withdraw());
    assert_eq!(again[0].0, "goal");
}

#[test]
fn a_refused_assignment_is_told_to_the_game_and_a_quest_needs_its_npcs() {
    let mut zone = village();
    let bad = WorldEvent::GoalAssigned {
        npc: "piet".into(),
        goal: AssignedGoal {
            id: "quest-x".into(),
            description: "?".into(),
            predicate: json!({"predicate_type": "no_such_thing"}),
            deadline_hours: None,
            priority: None,
        },
    };
    let told = send(&mut zone, bad);
    let [refused] = of(&told, "goal_refused").try_into().expect("one");
    assert_eq!(refused["goal_id"], "quest-x");
    assert!(
        refused["reason"]
            .as_str()
            .expect("reason")
            .starts_with("goal.predicate")
    );
    let nobody = WorldEvent::QuestOutcome {
        by: "ann".into(),
        outcome: Deed::Helped,
        quest: None,
        npcs: None,
        signal: Some("threat_detected:999".into()),
        goal: None,
    };
    assert_eq!(refusals(&mut zone, nobody)[0].0, "signal");
    assert_eq!(
        refusals(&mut zone, outcome(Deed::Helped, &["nobody"]))[0].0,
        "npcs"
    );
}
