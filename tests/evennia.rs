//! End-to-end with the real framework: the Evennia integration (`integrations/evennia`,
//! installed with Evennia 5 in the environment `scripts/evennia-venv` builds) plays the game's
//! part against a real `geppetto serve` (the village, `[integration] completion = "game"`, the
//! game's clock, SmolLM2 narrating witnessed scenes) over a private `redis-server` kept on disk.
//! `evennia --init` makes a game folder in a temporary directory and `evennia test` (SQLite,
//! Evennia's test base classes) runs `integrations/evennia/tests/test_village.py` in it: the
//! village built from its world directory and exported back, NPCs walking exit by exit, barks
//! and a narrated scene reaching the player, an order obeyed, a fight that engages and releases
//! an NPC, and Redis shut down and started again half-way with no intent lost or carried out
//! twice. The Evennia test prints its figures and fails on the first broken promise.
//!
//! A missing environment fails the test with the command that builds it (`scripts/test` runs
//! it), never skips it.

// Shared test support: this test uses the free port, the model server, a Redis started with
// its own arguments and serve's start.
#[path = "support/http.rs"]
mod http;
#[path = "support/model_server.rs"]
mod model_server;
#[allow(dead_code)]
#[path = "support/redis_server.rs"]
mod redis_server;
#[allow(dead_code)]
#[path = "support/serve.rs"]
mod serve;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use model_server::{MODEL, ModelServer};
use redis_server::RedisServer;
use serve::Serve;

/// Game minutes the village plays.
const MINUTES: &str = "360";

/// The environment `scripts/evennia-venv` builds: `GEPPETTO_EVENNIA_VENV`, else
/// `~/.cache/geppetto/evennia-venv`.
fn venv() -> PathBuf {
    std::env::var_os("GEPPETTO_EVENNIA_VENV").map_or_else(
        || {
            let home = std::env::var_os("HOME").unwrap_or_default();
            Path::new(&home).join(".cache/geppetto/evennia-venv")
        },
        PathBuf::from,
    )
}

#[test]
fn villagers_live_in_an_evennia_game() {
    let evennia = venv().join("bin/evennia");
    assert!(
        evennia.exists(),
        "the Evennia test needs Evennia and geppetto-evennia in {}: run ./scripts/evennia-venv \
         (./scripts/test runs it)",
        venv().display()
    );
    let root = format!("{}/..", env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("geppetto-evennia-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("redis")).expect("dir");
    let model = ModelServer::start();
    // Redis keeps its streams on disk (append-only file): the Evennia test shuts it down and
    // starts it again with these same arguments.
    let redis_port = http::free_port();
    let redis_args: Vec<String> = [
        "--port",
        &redis_port.to_string(),
        "--appendonly",
        "yes",
        "--dir",
        &dir.join("redis").display().to_string(),
    ]
    .map(str::to_owned)
    .to_vec();
    let url = format!("redis://127.0.0.1:{redis_port}/0");
    let server = RedisServer::start_with(&redis_args, url.clone(), || {
        redis::Client::open(url.as_str())
            .expect("url")
            .get_connection()
            .is_ok_and(|mut c| redis::cmd("PING").query::<String>(&mut c).is_ok())
    });
    let mut redis_argv = vec![
        "redis-server".to_owned(),
        "--bind".into(),
        "127.0.0.1".into(),
        "--save".into(),
        String::new(),
    ];
    redis_argv.extend(redis_args);
    let port = http::free_port();
    let config = dir.join("serve.toml");
    // The tick and per-NPC budgets are out of the way: an unoptimised build may run over them,
    // and a skipped or demoted NPC is not what this test is about.
    std::fs::write(
        &config,
        format!(
            "worlds = ['{root}/config/worlds/village']\n\
             [bus]\nkind = 'redis'\n[bus.redis]\nurl = '{}'\nread_block_ms = 100\n\
             [clock]\nkind = 'external'\n\
             [consumer]\nblock_ms = 100\n\
             [integration]\ncompletion = 'game'\n\
             [tick]\nnpc_budget_ms = 600000.0\n\
             [governor]\ntick_budget_ms_soft = 600000.0\ntick_budget_ms_hard = 600000.0\n\
             [llm.provider]\nbase_url = '{}'\nmodel = '{MODEL}'\n\
             [admin]\naddress = '127.0.0.1:{port}'\n",
            server.url,
            model.base_url()
        ),
    )
    .expect("config");
    let _serve = Serve::start(&config, &[]);
    let client = redis::Client::open(server.url.as_str()).expect("url");
    let mut connection = client.get_connection().expect("connection");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let groups: redis::RedisResult<Vec<redis::Value>> = redis::cmd("XINFO")
            .arg("GROUPS")
            .arg("geppetto:{village}:world")
            .query(&mut connection);
        let admin = http::request_with(port, "GET", "/npcs", None, "");
        if groups.is_ok_and(|g| !g.is_empty()) && admin.is_some_and(|(status, _)| status == 200) {
            break;
        }
        assert!(Instant::now() < deadline, "serve did not come up");
        std::thread::sleep(Duration::from_millis(50));
    }
    let init = Command::new(&evennia)
        .args(["--init", "game"])
        .current_dir(&dir)
        .output()
        .expect("evennia --init runs");
    assert!(
        init.status.success(),
        "evennia --init: {}",
        String::from_utf8_lossy(&init.stderr)
    );
    let game = dir.join("game");
    std::fs::copy(
        format!("{root}/integrations/evennia/tests/test_village.py"),
        game.join("world/test_village.py"),
    )
    .expect("the Evennia test into the game folder");
    let output = Command::new(&evennia)
        .args(["test", "--settings", "settings.py", "world.test_village"])
        .current_dir(&game)
        .env("GEPPETTO_TEST_REDIS", &server.url)
        .env(
            "GEPPETTO_TEST_REDIS_SERVER",
            serde_json::to_string(&redis_argv).expect("argv"),
        )
        .env("GEPPETTO_TEST_ADMIN", format!("http://127.0.0.1:{port}"))
        .env(
            "GEPPETTO_TEST_WORLD",
            format!("{root}/config/worlds/village"),
        )
        .env("GEPPETTO_TEST_MINUTES", MINUTES)
        .output()
        .expect("evennia test runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the Evennia test failed:\n{stdout}\n{stderr}"
    );
    let figures = stdout
        .lines()
        .find_map(|l| l.strip_prefix("figures: "))
        .expect("the figures line");
    let figure = |name: &str| -> u64 {
        figures
            .split_whitespace()
            .find_map(|f| f.strip_prefix(&format!("{name}=")))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("figure {name} in {figures}"))
    };
    assert!(
        figure("npc_moves") > 0 && figure("completed") > 0,
        "{figures}"
    );
    assert!(figure("barks") > 0 && figure("narrations") > 0, "{figures}");
    assert_eq!(figure("orders_done"), 1, "the order was obeyed: {figures}");
    assert_eq!(figure("refused"), 1, "the engaged NPC refused: {figures}");
    assert!(
        figure("reconnects") > 0,
        "Redis went away and came back: {figures}"
    );
    assert_eq!(figure("failed_messages"), 0, "{figures}");
    let _ = std::fs::remove_dir_all(&dir);
}
