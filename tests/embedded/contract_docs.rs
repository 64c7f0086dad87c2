//! The integration contract's pages against the code: every world event and intent the tables
//! of `docs/contract.md` list has its schema branch with each field they name, and every
//! documented world event is one the parser reads; every message type of every stream's schema
//! is named in the contract, and every world event and intent in the integration guide is one
//! the schemas know.

use std::collections::BTreeSet;

use geppetto_service::bus::envelope::parse_world;
use serde_json::Value;
use support::workspace_root;

fn read(path: &str) -> String {
    std::fs::read_to_string(workspace_root().join(path)).expect(path)
}

fn schema(stream: &str) -> Value {
    serde_json::from_str(&read(&format!("schema/{stream}.json"))).expect("schema json")
}

/// The branch of `schema` for message type `kind`.
fn branch<'s>(schema: &'s Value, kind: &str) -> Option<&'s Value> {
    schema["oneOf"]
        .as_array()?
        .iter()
        .find(|b| b["properties"]["type"]["const"] == kind)
}

/// The backticked names in `text` (the word a backticked span starts with: `goal {id, …}` is
/// `goal`, `room?` is `room`).
fn names(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|span| {
            let word: String = span
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            (!word.is_empty()).then_some(word)
        })
        .collect()
}

/// `text` without what stands in parentheses.
fn without_parentheses(text: &str) -> String {
    let mut depth = 0usize;
    text.chars()
        .filter(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect()
}

/// The rows of the table under heading `heading` of `page`: (types, payload fields), the types
/// of one row (`a` / `b`) paired with the fields of their payload (split the same way).
fn table(page: &str, heading: &str) -> Vec<(String, Vec<String>)> {
    let section = page
        .split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("a section `{heading}`"));
    let mut rows = Vec::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(types), Some(payload)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let types: Vec<&str> = types.split(" / ").collect();
        let payloads: Vec<&str> = payload.split(" / ").collect();
        for (n, kind) in types.iter().enumerate() {
            let Some(kind) = names(kind).into_iter().next() else {
                continue;
            };
            let payload = if payloads.len() == types.len() {
                payloads[n]
            } else {
                payload
            };
            // A field's description follows a colon, its values stand in parentheses: only the
            // names outside them are fields.
            let fields = without_parentheses(payload)
                .split(", ")
                .flat_map(|part| names(part.split(':').next().unwrap_or_default()))
                .collect();
            rows.push((kind, fields));
        }
    }
    rows
}

#[test]
fn every_documented_world_event_and_intent_has_its_schema_and_fields_and_parses() {
    let page = read("docs/contract.md");
    let world = table(&page, "### World events (`world`)");
    let intents = table(&page, "### Intents (`intents`)");
    assert!(
        world.len() > 20 && intents.len() >= 7,
        "{world:?} {intents:?}"
    );
    for (stream, rows) in [("world", &world), ("intents", &intents)] {
        let schema = schema(stream);
        for (kind, fields) in rows {
            let branch = branch(&schema, kind).unwrap_or_else(|| {
                panic!("docs/contract.md: `{kind}` has no branch in schema/{stream}.json")
            });
            for field in fields {
                assert!(
                    branch["properties"].get(field).is_some(),
                    "docs/contract.md: `{kind}`'s `{field}` is not in schema/{stream}.json"
                );
            }
        }
    }
    for (kind, _) in &world {
        let message = format!(r#"{{"v":1,"type":"{kind}","id":"doc","zone":"z","game_time":1}}"#);
        if let Err(refused) = parse_world(&message) {
            assert!(
                !refused.to_string().contains("unknown world event type"),
                "docs/contract.md: `{kind}` is not a world event the parser reads: {refused}"
            );
        }
    }
}

#[test]
fn every_message_type_of_every_schema_is_in_the_contract_and_the_guide_names_only_real_ones() {
    let contract: BTreeSet<String> = names(&read("docs/contract.md")).into_iter().collect();
    let mut known = BTreeSet::new();
    for stream in ["world", "intents", "npc_events", "story", "narrative"] {
        let schema = schema(stream);
        for branch in schema["oneOf"].as_array().expect("oneOf") {
            let kind = branch["properties"]["type"]["const"]
                .as_str()
                .expect("type");
            assert!(
                contract.contains(kind),
                "schema/{stream}.json's `{kind}` is not in docs/contract.md"
            );
            known.insert(kind.to_owned());
        }
    }
    // The guide's event names: a backticked name followed by ` {` is a message with its fields.
    let guide = read("docs/integration.md");
    let events: Vec<&str> = guide
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|span| span.split_once(" {").map(|(name, _)| name))
        .filter(|name| name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .collect();
    assert!(events.len() > 10, "{events:?}");
    for name in events {
        assert!(
            known.contains(name) || contract.contains(name),
            "docs/integration.md names `{name} {{…}}`, which no schema knows"
        );
    }
}
