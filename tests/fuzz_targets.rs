//! The `cargo fuzz` targets cannot rot: with the toolchain the suite runs on (stable; fuzzing
//! itself needs nightly), every target of `fuzz/` type-checks against the current workspace,
//! and `fuzz/Cargo.lock` is current — `--locked` refuses to rewrite it, and it is byte for byte
//! the same afterwards.
//!
//! The check runs in the workspace's own target directory (the one this test was built in),
//! not a directory of its own: it shares what `cargo check` and `cargo clippy` of the workspace
//! made there (CI lints before it tests) — the build scripts' outputs (jemalloc's and aws-lc's
//! C) and every dependency checked with the same features — and what it checks stays for the
//! next run. Checked anew are only the fuzz crate's own dependencies, the crates the
//! workspace's dev-dependencies give other features (libc's `extra_traits`, …) with what
//! depends on them, and the workspace's crates, which a separate workspace checks apart.

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
    // `CARGO_TARGET_TMPDIR` is `<target dir>/tmp`.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the workspace's target directory");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["check", "--locked", "--bins", "--quiet", "--manifest-path"])
        .arg(fuzz.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
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
