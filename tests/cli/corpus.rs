//! The bad-input corpus (`tests/corpus/`): every file there must be refused, and its sidecar
//! `.expect` holds a substring the refusal must contain (a JSON path, a limit's name, a reason).
//! Each kind goes through the code that reads it in production:
//!
//! - `decide/`, `decide-batch/`: the `geppetto` binary (`--input FILE`), which must exit 2;
//! - `world/`: one world-stream message each, parsed under the default limits and applied to
//!   the demo village (a message naming what the zone lacks is refused by the zone);
//! - `profiles/`, `sets/`, `affect/`, `worlds/`: `validate` on the file (its folder names the
//!   kind); `archetypes/<case>/`: `validate` on a directory of archetype files, resolved
//!   together (parents, cycles).
//!
//! The 10 MB strings are generated here rather than checked in.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use geppetto_service::bus::envelope::{EnvelopeLimits, parse_world_within};
use geppetto_service::cli::validate::validate;
use geppetto_service::content::profiles::ProfileLibrary;
use geppetto_service::content::sets::SetLibrary;
use geppetto_service::content::world_file::embedded_village;
use geppetto_service::zone::isolation::IsolationState;
use geppetto_service::zone::{TickInputs, Zone, ZoneConfig, ZoneOutput};

fn corpus(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus")
        .join(kind)
}

/// `(case, expected substring)` for every case of `kind`: a file or directory beside its
/// `.expect`.
fn cases(kind: &str) -> Vec<(PathBuf, String)> {
    let dir = corpus(kind);
    let mut found: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
        .expect("corpus folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "expect"))
        .map(|expect| {
            let stem = expect.file_stem().expect("stem").to_owned();
            let case = std::fs::read_dir(&dir)
                .expect("corpus folder")
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.file_stem() == Some(&stem) && p != &expect)
                .unwrap_or_else(|| panic!("{}: no case beside it", expect.display()));
            let wanted = std::fs::read_to_string(&expect).expect("expect file");
            (case, wanted.trim_end_matches('\n').to_owned())
        })
        .collect();
    found.sort();
    assert!(found.len() >= 3, "{kind}: only {} cases", found.len());
    found
}

/// Checks every case with `refusal` (the error text, or `None` when accepted); reports all
/// failures at once.
fn check(kind: &str, refusal: impl Fn(&Path) -> Option<String>) {
    let mut failures = Vec::new();
    for (case, wanted) in cases(kind) {
        match refusal(&case) {
            None => failures.push(format!("{}: accepted", case.display())),
            Some(error) if !error.contains(&wanted) => failures.push(format!(
                "{}: refused without `{wanted}`: {error}",
                case.display()
            )),
            Some(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs `geppetto <command>` on `input` (a file, or bytes on stdin); the refusal text when it
/// exits 2, `None` when it succeeds. Any other exit fails the test.
fn geppetto(command: &str, file: Option<&Path>, stdin: Option<&[u8]>) -> Option<String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_geppetto"));
    cmd.arg(command);
    if let Some(file) = file {
        cmd.arg("--input").arg(file);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("geppetto runs");
    {
        use std::io::Write;
        let mut pipe = child.stdin.take().expect("stdin");
        // The binary may refuse before reading it all: a broken pipe is fine.
        let _ = pipe.write_all(stdin.unwrap_or_default());
    }
    let output = child.wait_with_output().expect("geppetto ends");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    match output.status.code() {
        Some(0) => None,
        Some(2) => Some(stderr),
        other => panic!("{command}: exit {other:?}: {stderr}"),
    }
}

#[test]
fn bad_decide_requests_exit_2_naming_the_problem() {
    check("decide", |case| geppetto("decide", Some(case), None));
}

#[test]
fn bad_decide_batch_requests_exit_2_naming_the_problem() {
    check("decide-batch", |case| {
        geppetto("decide-batch", Some(case), None)
    });
}

fn village() -> Zone {
    let mut config = ZoneConfig::default();
    config.governor.tick_budget_ms_soft = 60_000.0;
    config.governor.tick_budget_ms_hard = 60_000.0;
    config.tick.npc_budget_ms = 60_000.0;
    config.integration = geppetto_service::zone::IntegrationConfig::simulated();
    Zone::new(
        &embedded_village().expect("village"),
        &ProfileLibrary::embedded().expect("profiles"),
        &SetLibrary::embedded().expect("sets"),
        config,
        IsolationState::default(),
    )
    .expect("zone")
}

/// A world message's refusal: by the parser, or by the zone when applied.
fn world_refusal(text: &str) -> Option<String> {
    let message = match parse_world_within(text, &EnvelopeLimits::default()) {
        Ok(message) => message,
        Err(error) => return Some(error.to_string()),
    };
    let mut zone = village();
    let mut out = ZoneOutput::default();
    let clock = geppetto_service::runtime::wall_clock();
    zone.apply(&message, &TickInputs::live(&clock), &mut out);
    out.refused
        .first()
        .map(|r| format!("{} event: {}: {}", r.kind, r.path, r.reason))
}

#[test]
fn bad_world_events_are_refused_naming_the_problem() {
    check("world", |case| {
        world_refusal(&std::fs::read_to_string(case).expect("UTF-8 case"))
    });
}

#[test]
fn bad_content_files_are_refused_naming_the_problem() {
    let unused = Path::new("unused");
    for kind in ["profiles", "sets", "affect", "worlds", "archetypes"] {
        check(kind, |case| {
            let findings = validate(&[case.to_path_buf()], unused);
            (!findings.problems.is_empty()).then(|| findings.problems.join("\n"))
        });
    }
}

const TEN_MB: usize = 10 * 1024 * 1024;

#[test]
fn ten_megabyte_strings_are_refused_before_parsing() {
    let id = "x".repeat(TEN_MB);
    let request = format!(
        r#"{{"seed": 1, "agent": {{"id": "{id}", "position": [0, 0]}}, "world": {{"providers": []}}}}"#
    );
    let error = geppetto("decide", None, Some(request.as_bytes())).expect("refused");
    assert!(error.contains("decide.max_id_bytes exceeded"), "{error}");
    let text = format!(
        r#"{{"v": 1, "type": "say", "id": "s", "zone": "village", "game_time": 1, "speaker": "p", "text": "{id}"}}"#
    );
    let error = world_refusal(&text).expect("refused");
    assert!(
        error.contains("consumer.limits.max_bytes exceeded"),
        "{error}"
    );
    // Within the message size, the text limit still holds.
    let limits = EnvelopeLimits {
        max_bytes: 2 * TEN_MB,
        ..EnvelopeLimits::default()
    };
    let error = parse_world_within(&text, &limits).expect_err("refused");
    assert!(
        error.to_string().contains("consumer.limits.max_text_bytes"),
        "{error}"
    );
}

#[test]
fn a_request_over_the_size_limit_is_refused_before_it_is_read_whole() {
    // 65 MiB of spaces: over `decide.max_bytes`; the binary stops reading at the limit.
    let padding = vec![b' '; 65 * 1024 * 1024];
    let error = geppetto("decide", None, Some(&padding)).expect("refused");
    assert!(error.contains("decide.max_bytes exceeded"), "{error}");
}

#[test]
fn count_limits_come_from_the_config_and_are_named() {
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/examples/decide-batch-market.json");
    let dir = std::env::temp_dir().join(format!("geppetto-corpus-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    // `decide-batch` on the example under the `[decide]` section `limits`.
    let run = |name: &str, limits: &str| {
        let config = dir.join(format!("{name}.toml"));
        std::fs::write(&config, format!("worlds = ['unused']\n[decide]\n{limits}"))
            .expect("config");
        Command::new(env!("CARGO_BIN_EXE_geppetto"))
            .args(["decide-batch", "--input"])
            .arg(&example)
            .arg("--config")
            .arg(&config)
            .output()
            .expect("geppetto runs")
    };
    // The example has 12 agents, 4 providers and 5 actions.
    for (limit, value) in [("max_agents", 11), ("max_providers", 3), ("max_actions", 4)] {
        let output = run(limit, &format!("{limit} = {value}\n"));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("decide.{limit} exceeded")),
            "{stderr}"
        );
    }
    // At the limits, the same request is answered.
    let at = run(
        "at",
        "max_agents = 12\nmax_providers = 4\nmax_actions = 5\n",
    );
    assert!(
        at.status.success(),
        "{}",
        String::from_utf8_lossy(&at.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
