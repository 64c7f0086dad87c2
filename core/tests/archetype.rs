//! Archetypes with inheritance, NPCs as deltas, and a blacksmith's day from data alone.

use std::collections::BTreeMap;

use geppetto_core::archetype::{ArchetypeError, CompiledArchetype, NpcRecord, resolve_archetypes};
use geppetto_core::{Vocabulary, World};

fn shipped() -> BTreeMap<String, serde_json::Value> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../config/archetypes");
    let mut authored = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("archetype dir") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("readable");
        let value: serde_json::Value = serde_saphyr::from_str(&text).expect("valid YAML");
        let name = value["name"].as_str().expect("named").to_owned();
        authored.insert(name, value);
    }
    authored
}

#[test]
fn children_override_their_parents_field_by_field() {
    let resolved = resolve_archetypes(&shipped()).expect("the shipped archetypes resolve");
    assert!(resolved.len() >= 8);
    let innkeeper = &resolved["innkeeper"];
    assert_eq!(innkeeper.needs["SOCIAL"].weight, 1.4, "own");
    assert_eq!(
        innkeeper.needs["SOCIAL"].initial, 0.6,
        "from villager, two levels up"
    );
    assert_eq!(innkeeper.needs["ECONOMIC"].weight, 1.8, "from merchant");
    assert_eq!(innkeeper.resources["gold"], 40.0, "from merchant");
    assert_eq!(innkeeper.traits["social"], 1.3, "own beats merchant's 1.2");
    assert_eq!(innkeeper.traits["trade"], 1.6, "merchant's kept");
    let guard = &resolved["guard"];
    assert_eq!(guard.schedule.as_ref().map(|s| s.adherence), Some(0.9));
    assert_eq!(
        guard.schedule.as_ref().map(|s| s.tag_bonus),
        Some(0.1),
        "villager's"
    );
    assert_eq!(
        guard.schedule.as_ref().map(|s| s.blocks.len()),
        Some(6),
        "lists replace"
    );
    assert_eq!(guard.reactive_set.as_deref(), Some("villager"));
}

#[test]
fn cycles_and_unknown_parents_are_refused() {
    let mut authored = BTreeMap::new();
    authored.insert("a".to_owned(), serde_json::json!({"parent": "b"}));
    authored.insert("b".to_owned(), serde_json::json!({"parent": "c"}));
    authored.insert("c".to_owned(), serde_json::json!({"parent": "a"}));
    let error = resolve_archetypes(&authored).expect_err("cycle");
    assert!(
        matches!(&error, ArchetypeError::Cycle { chain, name } if chain == "a → b → c → a" && name == "a"),
        "{error}"
    );
    let mut orphan = BTreeMap::new();
    orphan.insert("knight".to_owned(), serde_json::json!({"parent": "king"}));
    assert_eq!(
        resolve_archetypes(&orphan),
        Err(ArchetypeError::UnknownParent {
            child: "knight".into(),
            parent: "king".into()
        })
    );
    let mut typo = BTreeMap::new();
    typo.insert("x".to_owned(), serde_json::json!({"needz": {}}));
    assert!(
        resolve_archetypes(&typo)
            .expect_err("typo")
            .to_string()
            .contains("needz")
    );
}

#[test]
fn npcs_store_only_their_differences() {
    let resolved = resolve_archetypes(&shipped()).expect("resolves");
    let mut vocabulary = Vocabulary::new();
    let smith = CompiledArchetype::new(resolved["blacksmith"].clone(), &mut vocabulary);
    let record: NpcRecord = serde_json::from_value(serde_json::json!({
        "id": "bram", "archetype": "blacksmith", "position": [2.0, 0.0],
        "places": {"workplace": "forge", "home": "cottage_bram"},
        "overrides": {"needs": {"COMFORT": {"initial": 0.2}}, "traits": {"craft": 2.0}}
    }))
    .expect("record");
    let bytes = record.stored_bytes();
    assert!(bytes < 220, "a villager with two quirks is {bytes} bytes");
    let npc = smith
        .instantiate(&record, &mut vocabulary)
        .expect("instantiates");
    let comfort = vocabulary.lookup("COMFORT").expect("interned");
    assert_eq!(npc.agent.consideration(comfort).map(|c| c.value), Some(0.2));
    let craft = vocabulary.lookup("craft").expect("interned");
    assert!(npc.agent.tag_modifiers.contains(&(craft, 2.0)));
    assert_eq!(npc.agent.considerations.len(), 6);
    assert_eq!(
        npc.layers.goals.as_ref().map(|g| g.goals.len()),
        Some(1),
        "the innate masterwork goal"
    );
    let plain = NpcRecord {
        overrides: serde_json::Value::Null,
        ..record
    };
    assert!(plain.stored_bytes() < bytes);
    let _ = World::default();
}

#[test]
fn a_goal_or_reaction_without_a_target_is_refused_with_its_path() {
    let mut authored = BTreeMap::new();
    authored.insert(
        "trader".to_owned(),
        serde_json::json!({"reactions": [{"on": "theft", "description": "get even"}]}),
    );
    let error = resolve_archetypes(&authored).expect_err("no target");
    assert!(
        matches!(&error, ArchetypeError::Invalid { error, .. } if error.path == "reactions[0]"),
        "{error}"
    );
    let resolved = resolve_archetypes(&shipped()).expect("resolves");
    let mut vocabulary = Vocabulary::new();
    let merchant = CompiledArchetype::new(resolved["merchant"].clone(), &mut vocabulary);
    let record: NpcRecord = serde_json::from_value(serde_json::json!({
        "id": "piet", "archetype": "merchant"
    }))
    .expect("record");
    let mut npc = merchant
        .instantiate(&record, &mut vocabulary)
        .expect("instantiates");
    let book = npc
        .layers
        .get_mut()
        .and_then(|layers| layers.goals.as_mut())
        .expect("goals");
    assert_eq!(
        book.react("theft", "vex", 0.0).len(),
        1,
        "the shipped reaction"
    );
}

#[test]
fn mood_stress_and_bark_numbers_are_an_archetypes_and_inherited() {
    let mut authored = BTreeMap::new();
    authored.insert(
        "calm".to_owned(),
        serde_json::json!({
            "needs": {"COMFORT": {"weight": 1.0, "decay_per_hour": 0.1, "initial": 0.5}},
            "wellbeing": {"max_need_delta_per_tick": 0.1, "stress_gain_per_hour": 0.2},
            "bark_cooldown_minutes": 15,
            "barks": [
                {"id": "sigh", "text": "Hm.", "need": "COMFORT"},
                {"id": "grumble", "text": "Hmph.", "cooldown_minutes": 40}
            ]
        }),
    );
    authored.insert(
        "calmer".to_owned(),
        serde_json::json!({"parent": "calm", "wellbeing": {"stress_gain_per_hour": 0.1}}),
    );
    let resolved = resolve_archetypes(&authored).expect("resolves");
    let mut vocabulary = Vocabulary::new();
    let calmer = CompiledArchetype::new(resolved["calmer"].clone(), &mut vocabulary);
    let record: NpcRecord =
        serde_json::from_value(serde_json::json!({"id": "ann", "archetype": "calmer"}))
            .expect("record");
    let npc = calmer
        .instantiate(&record, &mut vocabulary)
        .expect("instantiates");
    let (config, _) = npc.layers.wellbeing.as_deref().expect("wellbeing");
    assert_eq!(config.max_need_delta_per_tick, 0.1, "the parent's");
    assert_eq!(config.stress_gain_per_hour, 0.1, "its own");
    assert_eq!(config.memory_bound, 0.2, "the default");
    let (lines, _) = npc.layers.barks.as_deref().expect("barks");
    let cooldowns: Vec<f64> = lines.prompted.iter().map(|l| l.cooldown_minutes).collect();
    assert_eq!(
        cooldowns,
        [15.0, 40.0],
        "the archetype's, or the line's own"
    );
    authored.insert(
        "typo".to_owned(),
        serde_json::json!({"wellbeing": {"stress_gain": 1.0}}),
    );
    assert!(
        resolve_archetypes(&authored).is_err(),
        "unknown fields refused"
    );
}

/// Idle chatter: a child inherits its parent's rate and lines (or sets its own), a line that
/// names a need is refused (chatter is what is said when nothing presses), and so is a rate
/// that is not one.
#[test]
fn chatter_is_inherited_and_a_bad_line_or_rate_is_refused() {
    let mut authored = BTreeMap::new();
    authored.insert(
        "base".to_owned(),
        serde_json::json!({"chatter_per_hour": 2.5,
                           "chatter": [{"id": "weather", "text": "Rain later."}]}),
    );
    authored.insert("quiet".to_owned(), serde_json::json!({"parent": "base"}));
    authored.insert(
        "loud".to_owned(),
        serde_json::json!({"parent": "base", "chatter_per_hour": 6.0}),
    );
    let resolved = resolve_archetypes(&authored).expect("resolves");
    let mut vocabulary = Vocabulary::new();
    let record = |archetype: &str| -> NpcRecord {
        serde_json::from_value(serde_json::json!({"id": "ann", "archetype": archetype}))
            .expect("record")
    };
    for (name, rate) in [("quiet", 2.5), ("loud", 6.0)] {
        let npc = CompiledArchetype::new(resolved[name].clone(), &mut vocabulary)
            .instantiate(&record(name), &mut vocabulary)
            .expect("instantiates");
        let (lines, _) = npc.layers.barks.as_deref().expect("lines");
        assert_eq!(lines.chatter_per_hour, rate, "{name}");
        assert_eq!(lines.chatter[0].text, "Rain later.", "{name}");
        assert_eq!(
            lines.chatter[0].cooldown_minutes, 15.0,
            "the default cooldown"
        );
    }
    for bad in [
        serde_json::json!({"chatter": [{"id": "x", "text": "Hungry.", "need": "COMFORT"}]}),
        serde_json::json!({"chatter_per_hour": -1.0}),
    ] {
        let mut one = BTreeMap::new();
        one.insert("bad".to_owned(), bad);
        let error = resolve_archetypes(&one).expect_err("refused").to_string();
        assert!(error.contains("chatter"), "{error}");
    }
}
