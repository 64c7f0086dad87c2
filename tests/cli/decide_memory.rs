//! Peak memory of `geppetto decide` and `decide-batch` on a large request within the limits,
//! counted, not timed: the binary's peak resident set (the kernel's `ru_maxrss` of the waited
//! child) less its peak on a tiny request must stay within a few times the request's bytes.
//! Holding the request as text, specs, engine values and answer at once cost 11–14 times.
//!
//! Each test measures its own children: nextest (the suite's runner) runs every test in a
//! process of its own, and the kernel reports the largest child a process has waited for.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::sys::resource::{UsageWho, getrusage};
use serde_json::json;

/// Most bytes of peak resident memory per byte of request, over the binary's own.
const MOST_PER_REQUEST_BYTE: f64 = 4.0;

/// The examples' tiny requests: what the binary holds whatever it is asked.
fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../config/examples")
        .join(name)
}

/// The largest resident set, in bytes, of any child this process has waited for so far.
fn largest_child() -> u64 {
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    u64::try_from(usage.max_rss()).expect("a size") * 1024
}

/// Runs `geppetto <command> --input <request>`, its answer discarded; the answer's success.
fn run(command: &str, request: &Path) -> bool {
    Command::new(env!("CARGO_BIN_EXE_geppetto"))
        .arg(command)
        .arg("--input")
        .arg(request)
        .stdout(Stdio::null())
        .status()
        .expect("geppetto runs")
        .success()
}

/// A number in `[0, 100)` that varies with `i` (deterministic).
fn vary(i: usize, salt: usize) -> f64 {
    ((i * 7919 + salt * 104_729) % 10_000) as f64 / 100.0
}

fn agent(i: usize, needs: &[&str]) -> serde_json::Value {
    let considerations: Vec<_> = needs
        .iter()
        .enumerate()
        .map(|(n, name)| {
            json!({"name": name, "value": vary(i, n), "min": 0, "max": 100,
                   "curve": {"kind": if n % 2 == 0 { "convex" } else { "linear" }}})
        })
        .collect();
    json!({"id": format!("npc{i}"), "position": [vary(i, 11) * 10.0, vary(i, 12) * 10.0],
           "considerations": considerations,
           "tag_modifiers": {"food": 1.2, "talk": 0.5 + vary(i, 13) / 100.0},
           "domain_preferences": {"work": 0.8}, "resources": {"gold": vary(i, 14) / 5.0},
           "capabilities": if i.is_multiple_of(2) { json!(["cook"]) } else { json!([]) }})
}

/// A provider of `actions` actions with tags, a domain, two deltas, some costs, radii and
/// preconditions, on a 1000 × 1000 map; `everywhere`: every third action has no radius.
fn provider(p: usize, actions: usize, everywhere: bool) -> serde_json::Value {
    const NEEDS: [&str; 6] = ["HUNGER", "THIRST", "ENERGY", "FUN", "SOCIAL", "HYGIENE"];
    const TAGS: [&str; 8] = [
        "food", "drink", "rest", "play", "talk", "wash", "indoor", "outdoor",
    ];
    const DOMAINS: [&str; 4] = ["work", "rest", "leisure", "care"];
    let actions: Vec<_> = (0..actions)
        .map(|a| {
            let first = (p + a) % NEEDS.len();
            let mut action = json!({
                "id": format!("act{a}"),
                "tags": [TAGS[first], TAGS[(first + 3) % 8], TAGS[(first + 6) % 8]],
                "domain": DOMAINS[first % DOMAINS.len()],
                "deltas": {NEEDS[first]: 20.0 + vary(p, a) / 3.0,
                           NEEDS[(first + 1) % NEEDS.len()]: vary(p, a + 9) / 10.0 - 5.0},
            });
            if !(everywhere && a.is_multiple_of(3)) {
                action["radius"] = json!(40);
            }
            if (p + a).is_multiple_of(3) {
                action["costs"] = json!({"gold": 1.0 + vary(p, a + 3) / 4.0});
            }
            if (p + a).is_multiple_of(5) {
                action["preconditions"] = json!([{"capability": "cook"}]);
            }
            action
        })
        .collect();
    json!({"id": format!("p{p}"), "position": [vary(p, 1) * 10.0, vary(p, 2) * 10.0],
           "capacity": 1 + p % 4, "occupants": p % 2, "actions": actions})
}

/// A piece of a request's text: verbatim, or the items of an array, comma-separated.
enum Part {
    Text(String),
    Items(Box<dyn Iterator<Item = serde_json::Value>>),
}

/// Writes a request into the test's scratch directory an item at a time (a child starts as a
/// copy of this process, so this process stays small); its path and size.
fn write(name: &str, parts: Vec<Part>) -> (PathBuf, u64) {
    use std::io::Write;
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    for part in parts {
        match part {
            Part::Text(text) => out.write_all(text.as_bytes()).expect("write"),
            Part::Items(items) => {
                for (i, item) in items.enumerate() {
                    if i > 0 {
                        out.write_all(b",").expect("write");
                    }
                    serde_json::to_writer(&mut out, &item).expect("write");
                }
            }
        }
    }
    out.flush().expect("write");
    let bytes = std::fs::metadata(&path).expect("written").len();
    (path, bytes)
}

/// Runs the tiny `example` then the large `request`, both with `command`: the large one's
/// peak over the tiny one's, per byte of the large request.
fn peak_per_request_byte(command: &str, example_name: &str, request: (PathBuf, u64)) -> f64 {
    assert!(run(command, &example(example_name)), "the example answers");
    let own = largest_child();
    let (path, bytes) = request;
    assert!(run(command, &path), "the large request answers");
    let peak = largest_child();
    assert!(peak > own, "the large request holds more than the tiny one");
    (peak - own) as f64 / bytes as f64
}

#[test]
fn a_large_decide_request_peaks_within_a_few_times_its_size() {
    let needs = ["HUNGER", "THIRST", "ENERGY", "FUN", "SOCIAL", "HYGIENE"];
    let head = json!({"seed": 7, "agent": agent(0, &needs)}).to_string();
    let world = r#""world":{"now_hours":8.0,"contexts":[{"name":"storm","tag_multipliers":{"indoor":2.0}}],"providers":["#;
    let request = write(
        "decide-large.json",
        vec![
            Part::Text(format!("{},{world}", head.trim_end_matches('}'))),
            Part::Items(Box::new((0..17_000).map(|p| provider(p, 5, true)))),
            Part::Text("]}}".into()),
        ],
    );
    assert!(request.1 > 10_000_000, "{} bytes", request.1);
    let ratio = peak_per_request_byte("decide", "decide-tavern.json", request);
    assert!(
        ratio <= MOST_PER_REQUEST_BYTE,
        "decide peaked at {ratio:.2} bytes per request byte, at most {MOST_PER_REQUEST_BYTE}"
    );
}

#[test]
fn a_large_decide_batch_request_peaks_within_a_few_times_its_size() {
    let agents = (0..24_000).map(|i| agent(i, &["HUNGER", "ENERGY", "FUN"]));
    let request = write(
        "decide-batch-large.json",
        vec![
            Part::Text(r#"{"seed":7,"agents":["#.into()),
            Part::Items(Box::new(agents)),
            Part::Text(r#"],"world":{"now_hours":8.0,"providers":["#.into()),
            Part::Items(Box::new((0..1_500).map(|p| provider(p, 2, false)))),
            Part::Text("]}}".into()),
        ],
    );
    assert!(request.1 > 10_000_000, "{} bytes", request.1);
    let ratio = peak_per_request_byte("decide-batch", "decide-batch-market.json", request);
    assert!(
        ratio <= MOST_PER_REQUEST_BYTE,
        "decide-batch peaked at {ratio:.2} bytes per request byte, at most {MOST_PER_REQUEST_BYTE}"
    );
}
