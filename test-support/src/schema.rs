//! The structural schema check shared by the end-to-end tests: a message against
//! `schema/{stream}.json` (header, the branch for its type, required fields, JSON types and
//! `const`s). Not a full JSON Schema validator.

use serde_json::Value;

/// Checks a message against `schema/{stream}.json`: header, the branch for its type, required
/// fields and their JSON types. A structural check, not a full JSON Schema validator.
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
}
