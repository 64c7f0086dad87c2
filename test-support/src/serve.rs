//! A running `geppetto serve` for one test: started with a config and extra environment,
//! stopped with Ctrl-C (the graceful path: shutdown snapshot, clean exit) or SIGKILL, paused
//! and resumed (SIGSTOP / SIGCONT), and killed on drop if still running.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The config of a `serve` that runs the shipped village over the Redis at `redis_url` the
/// way a game drives it — `game` completion mode, the game's clock — with its admin API on
/// `admin_port` and `extra` sections (an `[llm.provider]`…) before `[admin]`. The tick and
/// per-NPC budgets are out of the way: an unoptimised build may run over them, and a skipped or
/// demoted NPC is not what such a test is about.
pub fn game_driven_village(redis_url: &str, admin_port: u16, extra: &str) -> String {
    let root = crate::workspace_root().display().to_string();
    format!(
        "worlds = ['{root}/config/worlds/village']\n\
         [bus]\nkind = 'redis'\n[bus.redis]\nurl = '{redis_url}'\nread_block_ms = 100\n\
         [clock]\nkind = 'external'\n\
         [consumer]\nblock_ms = 100\n\
         [integration]\ncompletion = 'game'\n\
         [tick]\nnpc_budget_ms = 600000.0\n\
         [governor]\ntick_budget_ms_soft = 600000.0\ntick_budget_ms_hard = 600000.0\n\
         {extra}[admin]\naddress = '127.0.0.1:{admin_port}'\n"
    )
}

/// Waits (up to a minute) until a `serve` of [`game_driven_village`] is ready for a game: it
/// reads the village's world stream over the Redis at `redis_url` (its consumer group exists)
/// and answers on its admin API at `admin_port`. Panics if it does not come up.
pub fn wait_until_ready_for_a_game(redis_url: &str, admin_port: u16) {
    let client = redis::Client::open(redis_url).expect("url");
    let mut connection = client.get_connection().expect("connection");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let groups: redis::RedisResult<Vec<redis::Value>> = redis::cmd("XINFO")
            .arg("GROUPS")
            .arg("geppetto:{village}:world")
            .query(&mut connection);
        let admin = crate::http::request_with(admin_port, "GET", "/npcs", None, "");
        if groups.is_ok_and(|g| !g.is_empty()) && admin.is_some_and(|(status, _)| status == 200) {
            return;
        }
        assert!(Instant::now() < deadline, "serve did not come up");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A running `geppetto serve`.
pub struct Serve(Child);

impl Serve {
    /// Starts `geppetto serve --config config` with `env` set, `geppetto` being the binary
    /// under test.
    pub fn start(geppetto: impl AsRef<OsStr>, config: &Path, env: &[(&str, &str)]) -> Self {
        Self::start_as(geppetto, config, None, env, None)
    }

    /// Starts `geppetto serve --config config [--instance NAME]` with `env` set, its log
    /// (stderr) going to `log` when given.
    pub fn start_as(
        geppetto: impl AsRef<OsStr>,
        config: &Path,
        instance: Option<&str>,
        env: &[(&str, &str)],
        log: Option<&Path>,
    ) -> Self {
        let mut command = Command::new(geppetto);
        command.args(["serve", "--config"]).arg(config);
        if let Some(instance) = instance {
            command.args(["--instance", instance]);
        }
        let stderr = match log {
            Some(path) => Stdio::from(std::fs::File::create(path).expect("log file")),
            None => Stdio::null(),
        };
        Self(
            command
                .envs(env.iter().copied())
                .stdout(Stdio::null())
                .stderr(stderr)
                .spawn()
                .expect("serve starts"),
        )
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.0.id()
    }

    /// Sends `signal` (a `kill` signal name) to the process.
    pub fn signal(&self, signal: &str) {
        let _ = Command::new("kill")
            .args([&format!("-{signal}"), &self.0.id().to_string()])
            .status();
    }

    /// SIGKILL: a crash.
    pub fn kill_hard(mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// Ctrl-C, then wait for a clean exit (the shutdown snapshot is written on the way out).
    pub fn stop(self) {
        self.signal("INT");
        self.wait_clean_exit();
    }

    /// Waits up to a minute for the process to exit, and for its exit to be clean.
    pub fn wait_clean_exit(mut self) {
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
