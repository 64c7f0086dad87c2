//! The JSON Schemas of the `decide` / `decide-batch` contract in `schema/` are generated from
//! the wire types themselves (`schemars`), so the documented contract and the parser cannot
//! drift apart: this test fails when a type changes and its schema file was not regenerated.
//! Regenerate with `GEPPETTO_WRITE_SCHEMAS=1 cargo nextest run -p geppetto-core -E
//! 'binary(wire_schema)'`.

use geppetto_core::wire::request::{DecideBatchRequest, DecideRequest};
use geppetto_core::wire::response::{BatchAnswer, DecideAnswer};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;

/// The draft 2020-12 schema of `T`: what a request may hold (`deserialize`) or what an answer
/// holds (serialize), as pretty JSON with a final newline.
fn schema<T: JsonSchema>(deserialize: bool) -> String {
    let settings = SchemaSettings::draft2020_12();
    let settings = if deserialize {
        settings.for_deserialize()
    } else {
        settings.for_serialize()
    };
    let schema = settings.into_generator().into_root_schema_for::<T>();
    format!(
        "{}\n",
        serde_json::to_string_pretty(&schema).expect("a schema is JSON")
    )
}

#[test]
fn the_decide_schemas_in_schema_are_generated_from_the_wire_types() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../schema");
    let write = std::env::var_os("GEPPETTO_WRITE_SCHEMAS").is_some();
    for (file, generated) in [
        ("decide-request.json", schema::<DecideRequest>(true)),
        ("decide-answer.json", schema::<DecideAnswer>(false)),
        (
            "decide-batch-request.json",
            schema::<DecideBatchRequest>(true),
        ),
        ("decide-batch-answer.json", schema::<BatchAnswer>(false)),
    ] {
        let path = format!("{dir}/{file}");
        if write {
            std::fs::write(&path, &generated).expect("write the schema");
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "schema/{file} is not the schema of its wire type: regenerate it with \
             GEPPETTO_WRITE_SCHEMAS=1 (see this file's comment)"
        );
    }
}

#[test]
fn the_request_schema_names_every_curve_and_precondition_form() {
    let request: serde_json::Value =
        serde_json::from_str(&schema::<DecideRequest>(true)).expect("json");
    let text = request.to_string();
    for needle in [
        "\"convex\"",
        "\"sampled\"",
        "\"linear_decay\"",
        "\"provider_state\"",
        "\"capability\"",
    ] {
        assert!(
            text.contains(needle),
            "{needle} missing from the request schema"
        );
    }
    let answer: serde_json::Value =
        serde_json::from_str(&schema::<DecideAnswer>(false)).expect("json");
    assert!(
        answer.to_string().contains("\"out_of_radius\""),
        "the answer schema lists the ineligibility reasons"
    );
}
