//! The structural schema check shared by the end-to-end tests: a message against
//! `schema/{stream}.json` (header, the branch for its type, required fields, JSON types and
//! `const`s, and a branch's `allOf` of local `$ref`s and `if`/`then` rules on a field's
//! `const`, such as the story signals' context keys by type). Not a full JSON Schema
//! validator.

use serde_json::Value;

/// Checks a message against `schema/{stream}.json`: header, the branch for its type, required
/// fields and their JSON types, and the branch's conditional rules. A structural check, not a
/// full JSON Schema validator.
pub fn check_schema(stream: &str, message: &Value) {
    let path = crate::workspace_root().join(format!("schema/{stream}.json"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("schema"))
        .expect("schema json");
    let check_fields = |props: &Value, required: &Value| {
        for field in required.as_array().expect("required") {
            let field = field.as_str().expect("name");
            assert!(
                message.get(field).is_some(),
                "{stream}: {message} lacks `{field}`"
            );
        }
        for (field, spec) in props.as_object().expect("properties") {
            let Some(value) = message.get(field) else {
                continue;
            };
            if let Some(constant) = spec.get("const") {
                assert_eq!(value, constant, "{stream}: {field} of {message}");
            }
            let types: Vec<&str> = match spec.get("type") {
                Some(Value::String(t)) => vec![t.as_str()],
                Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
                _ => continue,
            };
            let ok = types.iter().any(|t| match *t {
                "string" => value.is_string(),
                "integer" => value.is_u64() || value.is_i64(),
                "number" => value.is_number(),
                "boolean" => value.is_boolean(),
                "array" => value.is_array(),
                "object" => value.is_object(),
                "null" => value.is_null(),
                _ => false,
            });
            assert!(ok, "{stream}: `{field}` of {message} is not {types:?}");
        }
    };
    check_fields(&schema["properties"], &schema["required"]);
    let branch = schema["oneOf"]
        .as_array()
        .expect("oneOf")
        .iter()
        .find(|b| b["properties"]["type"]["const"] == message["type"])
        .unwrap_or_else(|| panic!("{stream}: no schema branch for {message}"));
    check_fields(&branch["properties"], &branch["required"]);
    check_rules(stream, &schema, branch, message);
}

/// Applies `node`'s `allOf` to `message`: a `$ref` into the schema's `$defs` is followed, an
/// `if` whose `properties` `const`s all match the message applies its `then`, whose
/// `properties` each give an object field's `required` keys, the keys' JSON type (strings)
/// and, with `additionalProperties: false`, no other keys.
fn check_rules(stream: &str, schema: &Value, node: &Value, message: &Value) {
    for rule in node["allOf"].as_array().into_iter().flatten() {
        if let Some(reference) = rule["$ref"].as_str() {
            let name = reference
                .strip_prefix("#/$defs/")
                .unwrap_or_else(|| panic!("{stream}: only local $defs refs: {reference}"));
            check_rules(stream, schema, &schema["$defs"][name], message);
            continue;
        }
        let applies = rule["if"]["properties"]
            .as_object()
            .is_some_and(|fields| fields.iter().all(|(f, spec)| message[f] == spec["const"]));
        if !applies {
            continue;
        }
        for (field, spec) in rule["then"]["properties"].as_object().into_iter().flatten() {
            let value = message[field].as_object();
            let value = value.unwrap_or_else(|| panic!("{stream}: `{field}` of {message}"));
            for key in spec["required"].as_array().into_iter().flatten() {
                let key = key.as_str().expect("name");
                assert!(
                    value.contains_key(key),
                    "{stream}: `{field}` of {message} lacks `{key}`"
                );
            }
            let known = spec["properties"].as_object();
            for (key, item) in value {
                let declared = known.and_then(|k| k.get(key));
                assert!(
                    declared.is_some() || spec["additionalProperties"] != false,
                    "{stream}: `{field}` of {message} has `{key}`, which its rule does not name"
                );
                if declared.is_some_and(|d| d["type"] == "string") {
                    assert!(item.is_string(), "{stream}: `{field}.{key}` of {message}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::check_schema;

    fn rivalry(context: Value) -> Value {
        json!({
            "v": 1, "type": "story_signal", "id": "s1", "zone": "village", "game_time": 60,
            "signal": "rivalry_escalation:1", "signal_type": "rivalry_escalation",
            "importance": 0.5, "npcs": ["bram", "piet"], "players": [], "location": "square",
            "context": context, "expires_at_hours": 5.0, "expires_at": 300, "merged": 0
        })
    }

    #[test]
    fn a_signal_with_its_types_context_keys_passes() {
        check_schema(
            "story",
            &rivalry(json!({
                "cause": "insult", "trust_level": "0.31", "trust_fall": "0.20",
                "recent_conflicts": "2", "participants": "3"
            })),
        );
    }

    #[test]
    #[should_panic(expected = "lacks `trust_fall`")]
    fn a_missing_context_key_is_caught() {
        check_schema(
            "story",
            &rivalry(json!({"cause": "insult", "trust_level": "0.31", "recent_conflicts": "2"})),
        );
    }

    #[test]
    #[should_panic(expected = "which its rule does not name")]
    fn an_unnamed_context_key_is_caught() {
        check_schema(
            "story",
            &rivalry(json!({
                "cause": "insult", "trust_level": "0.31", "trust_fall": "0.20",
                "recent_conflicts": "2", "mood": "grim"
            })),
        );
    }
}
