//! The JSON contract of `geppetto decide` (docs/contract.md): the documented example answers exactly as documented,
//! and bad requests are refused with the JSON path and the reason.

use geppetto_core::Profile;
use geppetto_core::wire::{self, limits::DecideLimits};
use serde_json::{Value, json};

const EXAMPLE: &str = include_str!("../../config/examples/decide-tavern.json");

fn decide(json: &str) -> Result<Value, wire::WireError> {
    let decided = wire::parse_decide(json, &DecideLimits::default())?
        .compile(&Profile::default())?
        .decide()?;
    Ok(serde_json::to_value(decided.answer()).expect("serialisable"))
}

fn decide_batch(json: &str, workers: usize) -> Result<String, wire::WireError> {
    let decided = wire::parse_decide_batch(json, &DecideLimits::default())?
        .compile(&Profile::default())?
        .decide(workers)?;
    Ok(serde_json::to_string(&decided.answer()).expect("serialisable"))
}

#[test]
fn the_documented_example_gives_the_documented_answer() {
    let expected = json!({
      "selected": { "provider": "tavern", "action": "eat", "utility": 81.52 },
      "ranked": [ { "provider": "tavern", "action": "eat", "utility": 81.52,
                    "breakdown": { "benefit": 25.6, "priority": 0.0, "personality": 1.2,
                                   "context": 4.0, "distance": 0.6667, "cost": 0.4 } } ],
      "ineligible": []
    });
    assert_eq!(decide(EXAMPLE).expect("valid"), expected);
}

fn with(pointer: &str, value: Value) -> String {
    with_all(&[(pointer, value)])
}

/// The example with the values at each JSON pointer replaced.
fn with_all(changes: &[(&str, Value)]) -> String {
    let mut request: Value = serde_json::from_str(EXAMPLE).expect("example parses");
    for (pointer, value) in changes {
        *request.pointer_mut(pointer).expect("pointer exists") = value.clone();
    }
    request.to_string()
}

fn without(parent: &str, key: &str) -> String {
    let mut request: Value = serde_json::from_str(EXAMPLE).expect("example parses");
    request
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .expect("object")
        .remove(key);
    request.to_string()
}

#[test]
fn bad_requests_name_the_path_and_the_reason() {
    let cases: Vec<(String, &str, &str)> = vec![
        (
            with("/agent/considerations/0/max", json!("x")),
            "agent.considerations[0].max",
            "expected a number",
        ),
        (
            with("/world/providers/0/capacity", json!(-1)),
            "world.providers[0].capacity",
            "non-negative integer",
        ),
        (
            with("/world/providers/0/actions/0/radius", json!(-5)),
            "world.providers[0].actions[0].radius",
            "negative",
        ),
        (
            with("/agent/considerations/0/value", json!(120)),
            "agent.considerations[0].value",
            "outside",
        ),
        (
            with("/agent/position", json!([1])),
            "agent.position",
            "[x, y]",
        ),
        (
            with(
                "/agent/considerations/0/curve",
                json!({"kind": "sampled", "keys": []}),
            ),
            "agent.considerations[0].curve.keys",
            "at least one key",
        ),
        (
            with(
                "/agent/considerations/0/curve",
                json!({"kind": "gaussian", "exponent": 0}),
            ),
            "agent.considerations[0].curve",
            "zero",
        ),
        (
            with(
                "/agent/considerations/0/updater",
                json!({"kind": "teleport"}),
            ),
            "agent.considerations[0].updater",
            "unknown variant",
        ),
        (
            with(
                "/world/providers/0/actions/0/preconditions/0",
                json!({"consideration": "HUNGER"}),
            ),
            "world.providers[0].actions[0].preconditions[0]",
            "op",
        ),
        (
            with(
                "/world/providers/0/actions/0/preconditions/1",
                json!({"capability": "cook", "min": 3}),
            ),
            "world.providers[0].actions[0].preconditions[1]",
            "exactly one",
        ),
        (
            with(
                "/world/providers/0/actions/0/preconditions/0/op",
                json!("approximately"),
            ),
            "world.providers[0].actions[0].preconditions[0].op",
            "unknown variant",
        ),
        (
            with("/world/providers/0/actions/0/costs", json!({"gold": -2})),
            "world.providers[0].actions[0].costs.gold",
            "negative",
        ),
        (
            with("/tuning/convention_break_probability", json!(2)),
            "tuning.convention_break_probability",
            "between 0 and 1",
        ),
        (
            with("/tuning/selection_top_k", json!(1.5)),
            "tuning.selection_top_k",
            "invalid type",
        ),
        (
            with(
                "/world/providers",
                json!([{"id": "a", "position": [0, 0], "capacity": 1}, {"id": "a", "position": [0, 0], "capacity": 1}]),
            ),
            "world.providers[1].id",
            "duplicate",
        ),
        (
            with(
                "/agent/considerations",
                json!([{"name": "H", "value": 1, "min": 0, "max": 2}, {"name": "H", "value": 1, "min": 0, "max": 2}]),
            ),
            "agent.considerations[1].name",
            "duplicate",
        ),
        (without("/agent", "id"), "agent", "missing field `id`"),
        (without("", "seed"), ".", "missing field `seed`"),
        ("{\"seed\": 1, \"agent\": ".to_owned(), "agent", "EOF"),
        ("[1, 2]".to_owned(), ".", "JSON object"),
        (format!("{EXAMPLE} trailing"), ".", "trailing"),
    ];
    for (json, path, reason) in cases {
        let error = decide(&json).expect_err(&format!("{path} must be refused"));
        assert!(error.path.starts_with(path), "{path}: got {error}");
        assert!(error.message.contains(reason), "{path}: got {error}");
    }
}

#[test]
fn tolerated_input_is_not_refused() {
    // Unknown fields are ignored; an unknown curve kind scores zero; max <= min is pressure 0.
    let json = with(
        "/agent/considerations/0/curve",
        json!({"kind": "wobbly", "amount": 3}),
    );
    let answer = decide(&json).expect("valid");
    assert_eq!(answer["selected"]["utility"], json!(-0.4));
    let mut request: Value = serde_json::from_str(EXAMPLE).expect("parses");
    request["agent"]["mood"] = json!("grumpy");
    request["agent"]["considerations"][0]["min"] = json!(100);
    assert_eq!(
        decide(&request.to_string()).expect("valid")["ranked"][0]["breakdown"]["benefit"],
        json!(0.0)
    );
}

#[test]
fn the_batch_answer_lists_every_agent_in_input_order() {
    let request = json!({
        "seed": 3,
        "agents": [
            { "id": "zed", "position": [9, 0], "considerations": [ { "name": "HUNGER", "value": 5, "min": 0, "max": 100 } ] },
            { "id": "amy", "position": [1, 0], "considerations": [ { "name": "HUNGER", "value": 50, "min": 0, "max": 100 } ] },
            { "id": "bo", "position": [2, 0], "considerations": [ { "name": "HUNGER", "value": 50, "min": 0, "max": 100 } ] }
        ],
        "world": { "providers": [
            { "id": "stall", "position": [0, 0], "capacity": 1,
              "actions": [ { "id": "eat", "deltas": { "HUNGER": 40 } } ] },
            { "id": "far_inn", "position": [100, 0], "capacity": 1,
              "actions": [ { "id": "eat", "deltas": { "HUNGER": 40 }, "radius": 95 } ] }
        ] }
    });
    let text = decide_batch(&request.to_string(), 2).expect("valid");
    let answer: Value = serde_json::from_str(&text).expect("parses");
    assert_eq!(
        answer["assignments"],
        json!([
            { "agent": "zed", "provider": "far_inn", "action": "eat" },
            { "agent": "amy", "provider": "stall", "action": "eat" },
            { "agent": "bo", "provider": null }
        ])
    );
    assert_eq!(answer["preferences"].as_object().expect("object").len(), 3);
    assert_eq!(
        answer["preferences"]["bo"].as_array().expect("list")[0][0],
        json!("stall")
    );
    let preferences = &text[text.find("\"preferences\"").expect("present")..];
    let position = |agent: &str| preferences.find(&format!("\"{agent}\":"));
    assert!(
        position("zed") < position("amy") && position("amy") < position("bo"),
        "input order: {text}"
    );
}

#[test]
fn duplicate_agents_in_a_batch_are_refused() {
    let request = json!({ "seed": 1, "agents": [ { "id": "a", "position": [0, 0] }, { "id": "a", "position": [1, 0] } ],
                          "world": { "providers": [] } });
    let error = decide_batch(&request.to_string(), 1).expect_err("refused");
    assert_eq!(error.path, "agents[1].id");
}

mod finite_utilities {
    use super::*;
    use proptest::prelude::*;

    /// Any finite number, from tiny to the largest a JSON reader accepts, of either sign.
    fn number() -> impl Strategy<Value = f64> {
        prop_oneof![
            -1e3..1e3f64,
            Just(0.0),
            Just(f64::MAX),
            Just(-f64::MAX),
            (1.0..10.0f64, 100..308i32).prop_map(|(m, e)| m * 10f64.powi(e)),
        ]
    }

    proptest! {
        /// Every request the engine accepts answers with finite utilities, however large its
        /// numbers: an overflowing product is refused (naming the candidate), never returned.
        #[test]
        fn an_accepted_request_answers_with_finite_utilities(
            delta in number(), weight in number().prop_map(f64::abs),
            modifier in number().prop_map(f64::abs), context in number().prop_map(f64::abs),
            priority in number(), cost in number().prop_map(f64::abs),
            gold in number(), x in number(),
        ) {
            let request = with_all(&[
                ("/world/providers/0/actions/0/deltas/HUNGER", json!(delta)),
                ("/agent/considerations/0/weight", json!(weight)),
                ("/agent/tag_modifiers/food", json!(modifier)),
                ("/world/contexts/0/tag_multipliers/indoor", json!(context)),
                ("/world/providers/0/actions/0/intrinsic_priority", json!(priority)),
                ("/world/providers/0/actions/0/costs/gold", json!(cost)),
                ("/agent/resources/gold", json!(gold)),
                ("/agent/position/0", json!(x)),
            ]);
            if let Ok(answer) = decide(&request) {
                for ranked in answer["ranked"].as_array().expect("ranked") {
                    let utility = ranked["utility"].as_f64();
                    prop_assert!(utility.is_some_and(f64::is_finite), "{answer}");
                }
            }
        }
    }
}
