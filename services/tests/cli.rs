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
