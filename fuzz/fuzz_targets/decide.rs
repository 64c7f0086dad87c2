//! `decide` and `decide-batch` requests: the raw-text limits, the parser, the semantic checks
//! and the evaluation (`core::wire`). No input may panic, and an accepted request answers with
//! finite utilities only.
#![no_main]

use geppetto_core::Profile;
use geppetto_core::wire::{self, limits::DecideLimits};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// Whether a written utility is a number: JSON has no infinity, so an overflowed one would
/// be written as `null`.
fn written(utility: &Value) -> bool {
    utility.as_f64().is_some()
}

fn items(list: &Value) -> &[Value] {
    list.as_array().map_or(&[], Vec::as_slice)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = DecideLimits::default();
    let profile = Profile::default();
    if let Ok(request) = wire::parse_decide(text, &limits) {
        if let Ok(decided) = request.compile(&profile).and_then(|c| c.decide()) {
            let answer = serde_json::to_value(decided.answer()).expect("an answer is JSON");
            assert!(items(&answer["ranked"]).iter().all(|r| written(&r["utility"])));
            let selected = &answer["selected"];
            assert!(selected.is_null() || written(&selected["utility"]));
        }
    }
    if let Ok(request) = wire::parse_decide_batch(text, &limits) {
        if let Ok(decided) = request.compile(&profile).and_then(|c| c.decide(1)) {
            let answer = serde_json::to_value(decided.answer()).expect("an answer is JSON");
            let preferences = answer["preferences"].as_object().expect("an object");
            for list in preferences.values() {
                assert!(items(list).iter().all(|row| written(&row[2])));
            }
        }
    }
});
