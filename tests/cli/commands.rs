//! The `geppetto` binary as a user meets it: the README's example, exit codes, and messages
//! that name the JSON path, for `decide`, `decide-batch`, scenarios, `sets`, `validate` and
//! `affect` (whole worlds are `worlds`', the load generator `load`'s).

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs the binary from the workspace root with `args`, `stdin` written to it.
pub(crate) fn geppetto(args: &[&str], stdin: &str) -> Output {
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

/// What the binary printed, read as JSON.
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
    // Whatever ran when the smith was simplified runs on, unchanged, until he is back.
    let first_simplified = lines
        .iter()
        .position(|l| l["level"] != "full")
        .expect("simplified hours");
    let frozen = &lines[first_simplified - 1]["action"];
    assert!(frozen.is_object(), "he was doing something at 18:00");
    assert!(
        lines
            .iter()
            .filter(|l| l["level"] != "full")
            .all(|l| l["action"] == *frozen),
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
