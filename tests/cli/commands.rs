//! The `geppetto` binary as a user meets it: the README's example, exit codes, and messages
//! that name the JSON path.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn geppetto(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_geppetto"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("geppetto starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("geppetto finishes")
}

fn stdout_json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).expect("stdout is JSON")
}

#[test]
fn the_readme_example_answers_as_documented() {
    let output = geppetto(
        &[
            "decide",
            "--pretty",
            "--input",
            "config/examples/decide-tavern.json",
        ],
        "",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer = stdout_json(&output);
    assert_eq!(answer["selected"]["utility"], serde_json::json!(81.52));
    assert_eq!(
        answer["ranked"][0]["breakdown"]["distance"],
        serde_json::json!(0.6667)
    );
}

#[test]
fn the_village_example_shows_every_gate() {
    let output = geppetto(
        &["decide", "--input", "config/examples/decide-village.json"],
        "",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer = stdout_json(&output);
    let reasons: Vec<&str> = answer["ineligible"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|i| i["reason"].as_str())
        .collect();
    for reason in [
        "provider_full",
        "action_full",
        "out_of_radius",
        "precondition",
        "unaffordable",
        "commitment",
    ] {
        assert!(
            reasons.contains(&reason),
            "{reason} missing from {reasons:?}"
        );
    }
}

#[test]
fn the_batch_example_runs_identically_at_one_and_two_threads() {
    let run = |threads: &str| {
        let output = geppetto(
            &[
                "decide-batch",
                "--threads",
                threads,
                "--input",
                "config/examples/decide-batch-market.json",
            ],
            "",
        );
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    let answer: serde_json::Value = serde_json::from_slice(&one).expect("JSON");
    assert!(
        answer["assignments"]
            .as_array()
            .is_some_and(|a| a.len() >= 4)
    );
}

#[test]
fn stdin_works_and_profiles_are_selectable_by_name() {
    let request = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../config/examples/decide-tavern.json"
    ))
    .expect("example");
    for profile in ["default", "social", "open-world", "tactical", "survival"] {
        let request = request.replace(
            "\"profile\": \"default\"",
            &format!("\"profile\": \"{profile}\""),
        );
        let output = geppetto(&["decide"], &request);
        assert!(
            output.status.success(),
            "{profile}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let survival = request.replace("\"profile\": \"default\"", "\"profile\": \"survival\"");
    let answer = stdout_json(&geppetto(&["decide"], &survival));
    assert_eq!(
        answer["ranked"][0]["breakdown"]["benefit"],
        serde_json::json!(38.4),
        "HUNGER weighs 1.5"
    );
}

#[test]
fn bad_input_exits_2_with_the_path_and_never_panics() {
    let cases = [
        (
            r#"{"seed":1,"agent":{"id":"a","position":[0,0],"considerations":[{"name":"H","value":1,"min":0,"max":"x"}]},"world":{"providers":[]}}"#,
            "agent.considerations[0].max",
        ),
        (
            r#"{"seed":1,"profile":"chess","agent":{"id":"a","position":[0,0]},"world":{"providers":[]}}"#,
            "profile: unknown profile `chess`",
        ),
        (r#"{"seed":1,"agent":{"id":"a","position":[0,0]"#, "EOF"),
        ("", "expected a JSON object"),
        ("\u{0}\u{1}garbage", "expected a JSON object"),
        (r#"{"seed":-1}"#, "seed"),
    ];
    for (input, expected) in cases {
        let output = geppetto(&["decide"], input);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{input}: {stderr}");
        assert!(stderr.contains(expected), "{input}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn an_unreadable_input_file_exits_1() {
    let output = geppetto(&["decide", "--input", "does/not/exist.json"], "");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("does/not/exist.json"));
}

#[test]
fn a_profiles_dir_adds_and_overrides_profiles() {
    let dir = std::env::temp_dir().join(format!("geppetto-profiles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("argmax.yaml"),
        "name: argmax\ntuning:\n  selection_top_k: 1\n",
    )
    .expect("write");
    let request = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../config/examples/decide-tavern.json"
    ))
    .expect("example")
    .replace("\"profile\": \"default\"", "\"profile\": \"argmax\"");
    let output = geppetto(
        &["decide", "--profiles-dir", dir.to_str().expect("utf-8")],
        &request,
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::write(
        dir.join("broken.yaml"),
        "name: broken\ntuning:\n  temperature: [1\n",
    )
    .expect("write");
    let output = geppetto(
        &["decide", "--profiles-dir", dir.to_str().expect("utf-8")],
        &request,
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("broken.yaml"));
    std::fs::remove_dir_all(&dir).ok();
}

fn trace(args: &[&str]) -> Vec<serde_json::Value> {
    let output = geppetto(args, "");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSONL"))
        .collect()
}

fn events_of<'a>(
    lines: &'a [serde_json::Value],
    kind: &'a str,
) -> impl Iterator<Item = (&'a serde_json::Value, &'a serde_json::Value)> {
    lines.iter().flat_map(move |line| {
        line["events"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(move |e| e["type"] == kind)
            .map(move |e| (line, e))
    })
}

#[test]
fn the_day_scenario_lives_its_day() {
    let lines = trace(&[
        "simulate",
        "--scenario",
        "config/examples/simulate-day.yaml",
    ]);
    // 06:00–18:00 at one-minute ticks, three simplified hours, three full hours again.
    assert_eq!(lines.len(), 12 * 60 + 3 + 3 * 60);
    let ordered: Vec<_> = events_of(&lines, "action_started")
        .filter(|(_, e)| e["player_queued"] == true)
        .collect();
    assert_eq!(ordered.len(), 1);
    assert_eq!(ordered[0].1["action"], "forge_sword");
    assert_eq!(
        ordered[0].0["now_hours"].as_f64(),
        Some(9.0),
        "the order starts when the horseshoes are done"
    );
    let caught_up: Vec<_> = events_of(&lines, "aggregated_events_applied").collect();
    assert_eq!(caught_up.len(), 1);
    let (line, event) = caught_up[0];
    assert_eq!(event["count"], 1);
    let index = lines.iter().position(|l| l == line).expect("present");
    let before = lines[index - 1]["considerations"]["HUNGER"]
        .as_f64()
        .expect("number");
    let after = line["considerations"]["HUNGER"].as_f64().expect("number");
    assert!(
        after - before > 39.0,
        "supper reconstructed: {before} -> {after}"
    );
    assert!(
        events_of(&lines, "action_preempted").count() >= 1,
        "hunger interrupts something"
    );
    assert!(
        lines
            .iter()
            .all(|l| l["level"] == "full" || l["action"]["action"] == "sleep"),
        "actions freeze while simplified"
    );
}

#[test]
fn simulate_is_deterministic_and_the_seed_flag_overrides() {
    let args = [
        "simulate",
        "--scenario",
        "config/examples/simulate-day.yaml",
        "--hours",
        "6",
    ];
    let first = geppetto(&args, "");
    let second = geppetto(&args, "");
    assert!(first.status.success());
    assert_eq!(first.stdout, second.stdout);
    let seeded = geppetto(
        &[
            "simulate",
            "--scenario",
            "config/examples/simulate-day.yaml",
            "--hours",
            "6",
            "--seed",
            "11",
        ],
        "",
    );
    assert_eq!(first.stdout, seeded.stdout, "the file's seed is 11");
    let summary = geppetto(
        &[
            "simulate",
            "--scenario",
            "config/examples/simulate-day.yaml",
            "--summary",
        ],
        "",
    );
    let text = String::from_utf8_lossy(&summary.stdout);
    assert!(
        text.lines()
            .next()
            .is_some_and(|header| header.contains("HUNGER") && header.contains("events"))
    );
    assert_eq!(text.lines().count(), 1 + 18, "one row per hour");
}

#[test]
fn a_bad_scenario_names_its_file_place_and_reason() {
    let dir = std::env::temp_dir().join(format!("geppetto-scenarios-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cases = [
        (
            "type.yaml",
            "agent:\n  id: a\n  position: [0, 0]\n  considerations:\n    - { name: H, value: lots, min: 0, max: 1 }\nworld: { providers: [] }\n",
            "line 5 column 25",
        ),
        (
            "range.yaml",
            "agent:\n  id: a\n  position: [0, 0]\n  considerations:\n    - { name: H, value: 5, min: 0, max: 1 }\nworld: { providers: [] }\n",
            "agent.considerations[0].value",
        ),
        (
            "level.yaml",
            "agent: { id: a, position: [0, 0] }\nworld: { providers: [] }\ntimeline:\n  - { at_hours: 3, level: sideways }\n",
            "unknown variant `sideways`",
        ),
        (
            "provider.json",
            r#"{"agent": {"id": "a", "position": [0, 0]}, "world": {"providers": []}, "timeline": [{"at_hours": 1, "add_providers": [{"id": "x", "position": [0, 0], "capacity": -2}]}]}"#,
            "timeline[0].add_providers[0].capacity",
        ),
    ];
    for (name, text, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        let output = geppetto(
            &["simulate", "--scenario", path.to_str().expect("utf-8")],
            "",
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains(name) && stderr.contains(expected),
            "{name}: {stderr}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_players_order_holds_through_hunger_and_yields_to_collapse() {
    let lines = trace(&[
        "simulate",
        "--scenario",
        "config/examples/simulate-orders.yaml",
    ]);
    let hunger =
        |line: &serde_json::Value| line["considerations"]["HUNGER"].as_f64().expect("number");
    let critical_from = lines
        .iter()
        .position(|l| hunger(l) < 25.0)
        .expect("hunger turns critical");
    let preempted: Vec<_> = events_of(&lines, "action_preempted").collect();
    assert_eq!(preempted.len(), 1, "exactly one interruption");
    let (line, event) = preempted[0];
    assert_eq!(event["action"], "stand_guard");
    assert_eq!(event["by_action"], "eat_stew");
    let at = lines.iter().position(|l| l == line).expect("present");
    assert!(
        at > critical_from + 60,
        "the order held for over an hour of critical hunger"
    );
    assert!(
        hunger(&lines[at]) < 5.0 && hunger(&lines[at - 1]) >= 5.0,
        "it yields on the tick of collapse"
    );
}

#[test]
fn a_raid_sends_the_villager_running_and_daily_life_resumes() {
    let lines = trace(&[
        "simulate",
        "--scenario",
        "config/examples/simulate-raid.yaml",
    ]);
    let at = |kind: &str| {
        events_of(&lines, kind)
            .map(|(line, _)| line["now_hours"].as_f64().expect("hour"))
            .collect::<Vec<_>>()
    };
    assert_eq!(at("action_interrupted"), [10.0]);
    assert_eq!(at("reactive_started"), [10.0]);
    assert_eq!(at("reactive_ended"), [10.5]);
    let (_, started) = events_of(&lines, "reactive_started")
        .next()
        .expect("started");
    assert_eq!(
        (started["set"].as_str(), started["action"].as_str()),
        (Some("villager"), Some("flee"))
    );
    let fleeing = lines
        .iter()
        .filter(|l| (10.0..10.5).contains(&l["now_hours"].as_f64().expect("hour")));
    assert!(
        fleeing.clone().count() == 30 && fleeing.into_iter().all(|l| l["action"].is_null()),
        "no daily life while fleeing"
    );
    assert!(
        at("action_started").contains(&10.5),
        "resumes the same tick"
    );
}

#[test]
fn sets_eval_scores_and_picks() {
    let output = geppetto(
        &[
            "sets",
            "eval",
            "--set",
            "villager",
            "--inputs",
            r#"{"THREAT": 75, "CROWD": 4, "ENERGY": 70}"#,
        ],
        "",
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        text.lines()
            .last()
            .is_some_and(|l| l == "pick: flee (emergency: preempts daily life)"),
        "{text}"
    );
    assert!(text.contains("(vetoed)"), "{text}");
    let calm = geppetto(
        &[
            "sets",
            "eval",
            "--set",
            "villager",
            "--inputs",
            r#"{"THREAT": 5}"#,
        ],
        "",
    );
    assert!(String::from_utf8_lossy(&calm.stdout).ends_with("pick: carry_on\n"));
    let typo = geppetto(
        &[
            "sets",
            "eval",
            "--set",
            "villager",
            "--inputs",
            r#"{"THRET": 5}"#,
        ],
        "",
    );
    assert_eq!(typo.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("THRET"));
}

#[test]
fn sets_simulate_counts_switches_with_and_without_inertia() {
    let switches = |extra: &[&str]| {
        let mut args = vec![
            "sets",
            "simulate",
            "--set",
            "duel",
            "--seconds",
            "60",
            "--wobble",
            "0.02",
        ];
        args.extend_from_slice(extra);
        let output = geppetto(&args, "");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let last = text.lines().last().expect("summary line").to_owned();
        last.strip_prefix("switches: ")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse::<usize>().ok())
            .expect("count")
    };
    assert!(switches(&[]) < 3);
    assert!(switches(&["--no-inertia"]) > 50);
}

#[test]
fn validate_passes_the_shipped_content_and_reports_problems_as_file_line() {
    let output = geppetto(&["validate"], "");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("no problems"));
    let dir = std::env::temp_dir().join(format!("geppetto-validate-cli-{}", std::process::id()));
    let profiles = dir.join("profiles");
    std::fs::create_dir_all(&profiles).expect("dir");
    std::fs::write(
        profiles.join("hot.yaml"),
        "name: hot\ntuning:\n  temperature: warm\n",
    )
    .expect("write");
    let output = geppetto(&["validate", dir.to_str().expect("utf-8")], "");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("hot.yaml:3:"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn affect_run_traces_a_persona_and_summarises_its_bursts() {
    let output = geppetto(
        &[
            "affect",
            "run",
            "--persona",
            "halgrim",
            "--events",
            "config/examples/affect-bad-day.yaml",
        ],
        "",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSONL"))
        .collect();
    assert_eq!(lines.len(), 300, "900 s of 3 s ticks");
    assert!(lines.iter().any(|l| l["latched"] == true));
    assert!(lines.iter().any(|l| l["lash_out"][0] == "thief"));
    let summary = String::from_utf8_lossy(&output.stderr);
    assert!(
        summary.contains("1 burst(s)") && summary.contains("lashes out at thief"),
        "{summary}"
    );
    let relabelled = geppetto(
        &[
            "affect",
            "run",
            "--persona",
            "halgrim",
            "--events",
            "config/examples/affect-bad-day.yaml",
            "--time-scale",
            "40",
        ],
        "",
    );
    let states = |bytes: &[u8]| -> Vec<serde_json::Value> {
        String::from_utf8_lossy(bytes)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSONL")["states"].clone())
            .collect()
    };
    assert_eq!(
        states(&output.stdout),
        states(&relabelled.stdout),
        "time_scale relabels the clock, nothing else"
    );
    let unknown = geppetto(
        &[
            "affect",
            "run",
            "--persona",
            "nobody",
            "--events",
            "config/examples/affect-bad-day.yaml",
        ],
        "",
    );
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn a_village_day_summarises_every_npc_and_a_brain_shows_needs_schedule_and_goals() {
    let output = geppetto(&["simulate", "--world", "village", "--days", "1"], "");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.starts_with("village for 1 game days (24 NPCs"),
        "{text}"
    );
    let lines: Vec<&str> = text.lines().collect();
    let world = &lines[2 + 24..];
    assert!(world[0].starts_with("schedule adherence"), "{text}");
    assert!(world[1].starts_with("social life: "), "{text}");
    assert!(world[2].starts_with("story signals: "), "{text}");
    assert!(world[3].starts_with("a believable world: "), "{text}");
    let marks: usize = world[3]
        .split(" of ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a count of marks");
    assert_eq!(marks, 13, "{text}");
    assert!(
        world[4..].iter().all(|l| l.starts_with("  missed: ")),
        "every missed mark is named: {text}"
    );
    let again = geppetto(&["simulate", "--world", "village", "--days", "1"], "");
    assert_eq!(output.stdout, again.stdout, "deterministic");
    let brain = geppetto(&["brain", "--npc", "bjorn", "--hours", "1"], "");
    let view = String::from_utf8_lossy(&brain.stdout);
    assert!(view.starts_with("Bjorn the smith (bjorn)"), "{view}");
    for expected in [
        "mood ",
        "schedule: ",
        "PURPOSE",
        "weight 1.6",
        "goal: forge a masterwork blade",
        "1. ",
    ] {
        assert!(view.contains(expected), "{expected} missing from {view}");
    }
    let nobody = geppetto(&["brain", "--npc", "nobody"], "");
    assert_eq!(nobody.status.code(), Some(2));
}

/// What `geppetto` prints as JSON for `args` (it must succeed).
fn json_of(args: &[&str]) -> serde_json::Value {
    let output = geppetto(args, "");
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("json")
}

/// The JSON scorecards of the shipped village run for `unit length` (`--days 7`, `--hours 12`)
/// under seeds 1–3.
fn village_scorecards(unit: &str, length: &str) -> serde_json::Value {
    json_of(&[
        "simulate", "--world", "village", unit, length, "--seeds", "1..3", "--json",
    ])
}

/// The shipped village over a game week under three seeds keeps every mark of a believable
/// village in every run (the card counts them; no time is measured).
#[test]
fn the_shipped_village_keeps_every_mark_over_seeds() {
    let report = village_scorecards("--days", "7");
    for run in report["runs"].as_array().expect("runs") {
        let targets = run["targets"].as_array().expect("targets");
        assert_eq!(targets.len(), 14, "every mark of a week: {targets:?}");
        for mark in targets {
            assert_eq!(mark["met"], true, "seed {}: {mark}", run["seed"]);
        }
    }
}

/// Four game weeks in each shipped world (the village under two seeds, the harbour of 34
/// residents under one) keep the marks of a believable world in every week, and the card shows
/// each week, the drift, sleep, needs over time, goal outcomes and gold (it counts; no time is
/// measured). BENCHMARKS.md holds the 90-day figures of both worlds over ten seeds.
#[test]
fn each_shipped_world_keeps_every_mark_in_every_week_of_four() {
    for (world, seeds) in [("village", "1,2"), ("harbour", "1")] {
        let report = json_of(&[
            "simulate", "--world", world, "--days", "28", "--seeds", seeds, "--json",
        ]);
        // One seed prints its card; several, each card under `runs`.
        let runs = report["runs"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| vec![report.clone()]);
        for run in &runs {
            let seed = &run["seed"];
            let weeks = run["weeks"].as_array().expect("weeks");
            assert_eq!(weeks.len(), 4, "{world} seed {seed}: a card a week");
            assert!(!run["drift"].as_array().expect("drift").is_empty());
            for mark in run["targets"].as_array().expect("targets") {
                assert_eq!(mark["met"], true, "{world} seed {seed}: {mark}");
            }
            for (id, npc) in run["npcs"].as_object().expect("npcs") {
                assert_eq!(
                    npc["needs"]
                        .as_object()
                        .and_then(|needs| needs.values().next())
                        .and_then(|need| need["daily_mean"].as_array())
                        .map(Vec::len),
                    Some(28),
                    "{world} {id}: a level a day"
                );
                if npc["sleep_hours_per_day"].is_f64() {
                    assert_eq!(npc["sleep_by_day"].as_array().map(Vec::len), Some(28));
                }
            }
        }
    }
}

#[test]
fn the_scorecard_reports_every_npc_and_the_spread_over_seeds() {
    let report = village_scorecards("--hours", "12");
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[2]["seed"], 3);
    let card = &runs[0];
    assert_eq!(card["npcs"].as_object().map(|n| n.len()), Some(24));
    let bjorn = &card["npcs"]["bjorn"];
    for field in [
        "adherence",
        "critical",
        "longest_action_minutes",
        "stress_at_max_minutes",
        "switches_per_hour",
        "goals",
        "interactions",
        "rumours_heard",
        "signals",
        "sleep_hours_per_day",
        "sleep_at_home",
        "needs",
        "resources_by_day",
    ] {
        assert!(bjorn.get(field).is_some(), "{field} missing: {bjorn}");
    }
    assert!(
        bjorn["needs"]["PURPOSE"]["longest_below_minutes"].is_u64(),
        "each need's longest stretch unmet: {bjorn}"
    );
    assert!(
        bjorn["goals"]["innate"]["created"].as_u64() >= Some(1),
        "the innate goal is counted: {bjorn}"
    );
    for figure in [
        "adherence",
        "worst_critical",
        "signals_per_day",
        "signal_types",
    ] {
        let spread = &report["spread"][figure];
        assert!(
            spread["min"].as_f64() <= spread["median"].as_f64()
                && spread["median"].as_f64() <= spread["max"].as_f64(),
            "{figure}: {spread}"
        );
    }
    let text = geppetto(
        &[
            "simulate", "--world", "village", "--hours", "6", "--seeds", "1,2",
        ],
        "",
    );
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("over seeds 1, 2: min / median / max"),
        "{text}"
    );
    let refused = geppetto(&["simulate", "--world", "village", "--seeds", "5..1"], "");
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn a_world_simulation_takes_the_living_world_settings_of_a_config() {
    let interactions = |extra: &[&str]| {
        let mut args = vec!["simulate", "--world", "village", "--hours", "6", "--json"];
        args.extend_from_slice(extra);
        let card = json_of(&args);
        card["interactions"].as_object().map_or(0, |kinds| {
            kinds.values().filter_map(|n| n.as_u64()).sum::<u64>()
        })
    };
    let dir = std::env::temp_dir().join(format!("geppetto-knobs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let quiet = dir.join("quiet.toml");
    std::fs::write(
        &quiet,
        "worlds = ['w']\n[social]\nstep_every_ticks = 120\nmax_interactions_per_step = 1\n",
    )
    .expect("config");
    let usual = interactions(&[]);
    let fewer = interactions(&["--config", quiet.to_str().expect("utf-8")]);
    assert!(
        fewer < usual,
        "{fewer} interactions with a quiet fabric, {usual} without"
    );
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "worlds = ['w']\n[story]\nevery_tick = 3\n").expect("config");
    let refused = geppetto(
        &[
            "simulate",
            "--world",
            "village",
            "--config",
            bad.to_str().expect("utf-8"),
        ],
        "",
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("every_tick"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_world_simulation_honours_seed_hours_and_profiles_dir() {
    let run = |extra: &[&str]| {
        let mut args = vec!["simulate", "--world", "village"];
        args.extend_from_slice(extra);
        let output = geppetto(&args, "");
        assert!(
            output.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let body = |text: &str| text.lines().skip(1).collect::<Vec<_>>().join("\n");
    let one = run(&["--hours", "12", "--seed", "1"]);
    assert!(
        one.starts_with("village for 0.5 game days (24 NPCs"),
        "{one}"
    );
    assert!(
        one.lines().next().is_some_and(|l| l.ends_with(", seed 1")),
        "{one}"
    );
    assert_eq!(
        one,
        run(&["--hours", "12", "--seed", "1"]),
        "a seed is deterministic"
    );
    let two = run(&["--hours", "12", "--seed", "2"]);
    assert_ne!(body(&one), body(&two), "another seed, another village");
    // --hours wins over --days; a profiles directory is read (and a missing one refused).
    assert!(run(&["--days", "3", "--hours", "1"]).starts_with("village for 0.041"));
    assert_eq!(
        body(&run(&[
            "--hours",
            "12",
            "--profiles-dir",
            "config/profiles"
        ])),
        body(&run(&["--hours", "12"])),
        "the shipped profiles are the embedded ones"
    );
    let missing = geppetto(
        &[
            "simulate",
            "--world",
            "village",
            "--profiles-dir",
            "no/such/dir",
        ],
        "",
    );
    assert_eq!(
        missing.status.code(),
        Some(2),
        "a missing profiles dir is refused"
    );
}

#[test]
fn a_village_week_lets_at_least_eight_kinds_of_story_signal_emerge() {
    let output = geppetto(
        &[
            "simulate",
            "--world",
            "config/worlds/village",
            "--days",
            "7",
        ],
        "",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let social = text
        .lines()
        .find(|l| l.starts_with("social life: "))
        .unwrap_or_else(|| panic!("no social summary in {text}"));
    let interactions: usize = social["social life: ".len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(interactions > 100, "{social}");
    assert!(social.contains("gossip "), "{social}");
    let signals = text
        .lines()
        .find(|l| l.starts_with("story signals: "))
        .unwrap_or_else(|| panic!("no signal summary in {text}"));
    let listed = signals
        .split_once("distinct types: ")
        .map(|(_, list)| list.split(", ").count())
        .unwrap_or(0);
    assert!(listed >= 8, "{signals}");
    let distinct: usize = signals
        .split(" distinct types")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert_eq!(distinct, listed, "{signals}");
}

#[test]
fn the_load_generator_reports_throughput_latency_and_the_npcs_per_tier() {
    // 400 NPCs in 20 rooms, players in 2 of them: their rooms and neighbours Active, rooms up
    // to five steps away Nearby, the rest Background.
    let output = geppetto(
        &[
            "load",
            "--npcs",
            "400",
            "--player-rooms",
            "2",
            "--events-per-sec",
            "100",
            "--seconds",
            "1",
        ],
        "",
    );
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let head = text.lines().next().unwrap_or_default();
    assert!(head.contains("players in 2 of 20 rooms"), "{head}");
    let count = |tier: &str| tier_count(head, tier);
    let (active, nearby, background) = (count("active"), count("nearby"), count("background"));
    assert_eq!(active + nearby + background, 400, "{head}");
    assert!(active > 0 && nearby > 0 && background > 0, "{head}");
    assert!(text.contains("event->output latency"), "{text}");
    assert!(text.contains("tick duration"), "{text}");
    assert!(text.contains("rss "), "{text}");
}

/// The number after `tier` (`active 12,`) in the head line of a `load` report.
fn tier_count(head: &str, tier: &str) -> usize {
    head.split(&format!("{tier} "))
        .nth(1)
        .and_then(|rest| rest.split([',', ';']).next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {tier} count in {head}"))
}

#[test]
fn the_load_generator_runs_several_zones_in_one_process_and_reports_each() {
    let output = geppetto(
        &[
            "load",
            "--zones",
            "3",
            "--npcs",
            "200",
            "--player-rooms",
            "2",
            "--events-per-sec",
            "60",
            "--seconds",
            "1",
        ],
        "",
    );
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let head = text.lines().next().unwrap_or_default();
    assert!(
        head.contains("3 zones of 200 NPCs, 600 in all")
            && head.contains("players in 2 of 10 rooms of each zone"),
        "{head}"
    );
    let tiers: usize = ["active", "nearby", "background"]
        .iter()
        .map(|tier| tier_count(head, tier))
        .sum();
    assert_eq!(tiers, 600, "{head}");
    // One tick-duration line a zone, each zone ticked.
    for zone in ["load-0", "load-1", "load-2"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("zone {zone} (")))
            .unwrap_or_else(|| panic!("no line for {zone} in {text}"));
        let ticks: usize = line
            .split("tick duration: n=")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no tick count in {line}"));
        assert!(ticks > 0, "{line}");
        assert!(line.contains(" p50=") && line.contains(" p99="), "{line}");
    }
    assert_eq!(text.matches("\nzone load-").count(), 3, "{text}");
    assert!(text.contains("rss ") && text.contains("(peak "), "{text}");
}
