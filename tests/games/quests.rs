//! The reference quest board (`integrations/quests/`, Python 3 with redis-py): its own unit
//! tests, each class against a private `redis-server` it starts on a free loopback port — no
//! geppetto service. Needs Python 3 with redis-py and `redis-server` (`scripts/test` installs
//! `python3-redis`).

use std::path::Path;
use std::process::Command;

use support::python::python_with_redis;

#[test]
fn the_quest_board_passes_its_unit_tests() {
    let python = python_with_redis();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../integrations/quests/run-unit-tests");
    let output = Command::new(&script)
        .arg("--python")
        .arg(&python)
        .output()
        .expect("run-unit-tests runs");
    println!("{}", String::from_utf8_lossy(&output.stdout));
    assert!(
        output.status.success(),
        "the quest board's unit tests failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
