//! The web inspector in a real browser: `geppetto demo --admin` serves it while the village
//! runs; `tests/inspector/inspector.mjs` (playwright-core driving Debian's headless Chromium)
//! opens it, finds the NPC list, opens an NPC and sees its breakdown and a chart with data
//! points and every need's response curve, sees a story signal arrive live, and runs a what-if
//! that shows where the NPC's timeline parts from the recorded one. Screenshots are kept in
//! `target/inspector-screenshots/`. Needs Debian's `chromium` (`.ci/run` installs it); the test
//! runs `npm ci` in `tests/inspector/` itself when playwright-core is missing. The village
//! report (`simulate --world --report`) is opened the same way (`tests/inspector/report.mjs`).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::http;

/// The admin token the demo runs with and the inspector's what-if sends.
const TOKEN: &str = "inspector-s3cret";

struct Demo(Child);

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The repository root and the browser scripts' folder, with playwright-core installed and
/// Debian's chromium present.
fn browser_scripts() -> (std::path::PathBuf, std::path::PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scripts = root.join("tests/inspector");
    if !scripts.join("node_modules/playwright-core").is_dir() {
        let installed = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&scripts)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            installed,
            "`npm ci` in tests/inspector failed (Node.js and npm are needed)"
        );
    }
    assert!(
        Path::new(&std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()))
            .is_file(),
        "Debian's chromium is needed (apt-get install chromium; scripts/test does)"
    );
    (root, scripts)
}

/// Runs browser script `script` on `target` (its screenshots into
/// `target/inspector-screenshots/`) and returns what it reports seeing.
fn browse(root: &Path, scripts: &Path, script: &str, target: &str) -> serde_json::Value {
    let shots = root.join("target/inspector-screenshots");
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    let output = Command::new("node")
        .arg(scripts.join(script))
        .arg(target)
        .arg(&shots)
        .env("GEPPETTO_ADMIN_TOKEN", TOKEN)
        .current_dir(scripts)
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "the browser run failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the script reports what it saw")
}

#[test]
fn the_village_report_draws_a_timeline_per_npc_in_chromium() {
    let (root, scripts) = browser_scripts();
    let dir = std::env::temp_dir().join(format!("geppetto-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let page = dir.join("village.html");
    let run = Command::new(env!("CARGO_BIN_EXE_geppetto"))
        .args(["simulate", "--world", "village", "--days", "2", "--report"])
        .arg(&page)
        .output()
        .expect("simulate");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let seen = browse(&root, &scripts, "report.mjs", &page.to_string_lossy());
    assert_eq!(seen["timelines"], 24, "a timeline per NPC: {seen}");
    assert_eq!(seen["hours"], 48, "an hour a cell: {seen}");
    assert_eq!(seen["charts"], 24, "every NPC's needs drawn: {seen}");
    assert!(seen["signals"].as_u64() > Some(0), "{seen}");
    assert_eq!(
        seen["marks"], 13,
        "every mark of the card, met or missed: {seen}"
    );
    assert_eq!(seen["weeks"], 0, "two days have no weeks: {seen}");
    assert_eq!(seen["sleepers"], 14, "each resident's sleep: {seen}");
    assert_eq!(seen["external_requests"], 0, "self-contained: {seen}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_inspector_shows_npcs_a_chart_and_live_story_signals_in_chromium() {
    let (root, scripts) = browser_scripts();
    let port = support::free_port();
    let dir = std::env::temp_dir().join(format!("geppetto-inspector-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    // The demo keeps its log in a redb file, so the page's what-if has a recorded window.
    let data = dir.join("village.redb");
    let _demo = Demo(
        Command::new(env!("CARGO_BIN_EXE_geppetto"))
            .args(["demo", "--hours", "48", "--speed", "60", "--admin"])
            .arg(format!("127.0.0.1:{port}"))
            .env("GEPPETTO_ADMIN_TOKEN", TOKEN)
            .arg("--data")
            .arg(&data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("demo"),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while http::request_with(port, "GET", "/healthz", None, "").is_none() {
        assert!(
            Instant::now() < deadline,
            "the demo's admin API did not come up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let seen = browse(
        &root,
        &scripts,
        "inspector.mjs",
        &format!("http://127.0.0.1:{port}"),
    );
    assert!(seen["rows"].as_u64() >= Some(10), "{seen}");
    assert!(seen["points"].as_u64() > Some(0), "{seen}");
    assert!(seen["signals"].as_u64() >= Some(1), "{seen}");
    assert!(
        seen["divergence"].as_str().is_some_and(
            |d| d.starts_with("window: from") && d.contains("first divergence at step")
        ),
        "{seen}"
    );
    let shots = root.join("target/inspector-screenshots");
    assert!(shots.join("inspector.png").is_file() && shots.join("whatif.png").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}
