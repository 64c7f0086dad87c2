//! A running `geppetto serve` for one test: started with a config and extra environment,
//! stopped with Ctrl-C (the graceful path: shutdown snapshot, clean exit) or SIGKILL, and
//! killed on drop if still running.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `geppetto serve`.
pub struct Serve(Child);

impl Serve {
    /// Starts `serve --config config` with `env` set.
    pub fn start(config: &Path, env: &[(&str, &str)]) -> Self {
        Self(
            Command::new(env!("CARGO_BIN_EXE_geppetto"))
                .args(["serve", "--config"])
                .arg(config)
                .envs(env.iter().copied())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("serve starts"),
        )
    }

    /// SIGKILL: a crash.
    pub fn kill_hard(mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// Ctrl-C, then wait for a clean exit (the shutdown snapshot is written on the way out).
    pub fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-INT", &self.0.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.0.try_wait() {
                assert!(status.success(), "serve exits cleanly: {status}");
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("serve did not stop on SIGINT");
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
