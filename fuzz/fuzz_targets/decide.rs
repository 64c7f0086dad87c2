//! `decide` and `decide-batch` requests: the raw-text limits, the parser, the semantic checks
//! and the evaluation (`core::wire`). No input may panic, and an accepted request answers with
//! finite utilities only.
#![no_main]

use geppetto_core::Profile;
use geppetto_core::wire::{self, limits::DecideLimits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = DecideLimits::default();
    let profile = Profile::default();
    if let Ok(request) = wire::parse_decide(text, &limits) {
        if let Ok(answer) = wire::decide(&request, &profile) {
            assert!(answer.ranked.iter().all(|r| r.utility.is_finite()));
            assert!(answer.selected.iter().all(|s| s.utility.is_finite()));
        }
    }
    if let Ok(request) = wire::parse_decide_batch(text, &limits) {
        if let Ok(answer) = wire::decide_batch(&request, &profile, 1) {
            for (_, list) in &answer.preferences.0 {
                assert!(list.iter().all(|(_, _, utility)| utility.is_finite()));
            }
        }
    }
});
