//! The Python the end-to-end tests run the example clients with.

use std::process::{Command, Stdio};

/// The first Python 3 on this machine that can import redis-py.
pub fn python_with_redis() -> String {
    ["python3", "/usr/bin/python3", "python"]
        .into_iter()
        .find(|python| {
            Command::new(python)
                .args(["-c", "import redis"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .map(str::to_owned)
        .unwrap_or_else(|| {
            panic!("no Python 3 with redis-py: install python3-redis (scripts/test does)")
        })
}
