//! `geppetto load --llm-url` against the loopback model: player lines perceived through the
//! seams, every call's `usage` counted, priced at `--llm-price-input` / `--llm-price-output`
//! and reported per game hour and per NPC-hour on the report's `llm spend` line.

use std::process::Command;
use std::sync::atomic::Ordering;

use crate::seams::{USAGE, model_server};

/// NPCs of the run (two rooms).
const NPCS: f64 = 40.0;

/// The number in `line` after `label`, up to the next space, comma or semicolon.
fn figure(line: &str, label: &str) -> f64 {
    line.split(label)
        .nth(1)
        .and_then(|rest| rest.split([' ', ',', ';']).find(|s| !s.is_empty()))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `{label}` figure in {line}"))
}

#[test]
fn the_load_report_prices_the_model_tokens_per_game_hour_and_per_npc_hour() {
    let (base_url, calls) = model_server();
    let output = Command::new(env!("CARGO_BIN_EXE_geppetto"))
        .args([
            "load",
            "--npcs",
            "40",
            "--events-per-sec",
            "10",
            "--seconds",
            "2",
        ])
        .args(["--says-per-sec", "5", "--llm-url", &base_url])
        .args(["--llm-price-input", "1", "--llm-price-output", "3"])
        .output()
        .expect("geppetto load");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let line = (text.lines())
        .find(|line| line.starts_with("llm spend: "))
        .unwrap_or_else(|| panic!("no spend line in {text}"));
    let made = calls.load(Ordering::SeqCst) as f64;
    assert!(made >= 1.0, "the lines were perceived by the model: {text}");
    assert_eq!(figure(line, "llm spend: "), made, "{line}");
    assert_eq!(figure(line, "calls, "), made * USAGE.0 as f64, "{line}");
    assert_eq!(figure(line, "+ "), made * USAGE.1 as f64, "{line}");
    // 1 and 3 a million tokens.
    let cost = made * (USAGE.0 as f64 + 3.0 * USAGE.1 as f64) / 1e6;
    assert!((figure(line, "cost ") - cost).abs() < 1e-6, "{line}");
    let per_game_hour = figure(line, "per game hour ");
    let per_npc_hour = figure(line, "per NPC-hour ");
    assert!(per_npc_hour > 0.0, "{line}");
    assert!(
        (per_game_hour / per_npc_hour - NPCS).abs() < 0.5,
        "an NPC-hour is a game hour of one of the {NPCS} NPCs: {line}"
    );
}
