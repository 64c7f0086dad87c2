//! End-to-end: `examples/mud_client.py` — the integration a MUD author copies — against a real
//! `geppetto serve` over a private `redis-server`. The client publishes a player and 30 ticks of
//! its own clock from the zone's time, consumes intents with its consumer group, acknowledges
//! them, and exits 0 only if it handled some; it runs twice against the same zone. Needs Python 3 with
//! redis-py (`scripts/test` installs `python3-redis`).

// Shared test support: this test uses only the server's start and URL.

use std::process::{Child, Command, Stdio};

use support::python::python_with_redis;
use support::redis_server::RedisServer;

struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_python_mud_client_drives_the_service_over_redis() {
    let python = python_with_redis();
    let server = RedisServer::start();
    let dir = std::env::temp_dir().join(format!("geppetto-mud-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let root = format!("{}/..", env!("CARGO_MANIFEST_DIR"));
    let config = dir.join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "worlds = ['{root}/config/worlds/village']\n[bus]\nkind = 'redis'\n[bus.redis]\nurl = '{}'\n[clock]\nkind = 'external'\n[admin]\naddress = ''\n",
            server.url
        ),
    )
    .expect("config");
    let _serve = Serve(
        Command::new(env!("CARGO_BIN_EXE_geppetto"))
            .args(["serve", "--config"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve"),
    );
    // The client gives up after two quiet seconds: start it once serve is reading the world.
    let client = redis::Client::open(server.url.as_str()).expect("url");
    let mut connection = client.get_connection().expect("connection");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let groups: redis::RedisResult<Vec<redis::Value>> = redis::cmd("XINFO")
            .arg("GROUPS")
            .arg("geppetto:{village}:world")
            .query(&mut connection);
        if groups.is_ok_and(|g| !g.is_empty()) || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Twice: a second run starts from the zone's time, not from the times the first one sent.
    for run in 1..=2 {
        let output = Command::new(&python)
            .arg(format!("{root}/examples/mud_client.py"))
            .args([server.url.as_str(), "30"])
            .output()
            .expect("python runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "mud_client run {run} failed: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let handled: usize = stdout
            .lines()
            .last()
            .and_then(|l| l.strip_prefix("handled "))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .expect("the summary line");
        assert!(handled > 0, "run {run}: {stdout}");
        assert!(
            stdout.lines().any(|l| l.contains(" use ")),
            "run {run}: NPCs went about their business: {stdout}"
        );
    }
}
