//! The `cargo fuzz` targets cannot rot: with the toolchain the suite runs on (stable; fuzzing
//! itself needs nightly), every target of `fuzz/` type-checks against the current workspace,
//! and `fuzz/Cargo.lock` is current — `--locked` refuses to rewrite it, and it is byte for byte
//! the same afterwards. `cargo check` (no code generation) keeps it to seconds once the
//! dependencies are checked.

use std::path::Path;
use std::process::Command;

#[test]
fn the_fuzz_targets_type_check_against_the_workspace_with_a_current_lock_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root");
    let fuzz = root.join("fuzz");
    let lock = fuzz.join("Cargo.lock");
    let before = std::fs::read(&lock).expect("fuzz/Cargo.lock is checked in");
    // Beside the suite's own build, so a rerun only checks what changed.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-check");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["check", "--locked", "--bins", "--quiet", "--manifest-path"])
        .arg(fuzz.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "the fuzz targets do not build with a current lock file (update it with \
         `cargo update --workspace --manifest-path fuzz/Cargo.toml`, fix the targets):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let after = std::fs::read(&lock).expect("fuzz/Cargo.lock");
    assert!(
        before == after,
        "building the fuzz targets rewrote fuzz/Cargo.lock"
    );
}
