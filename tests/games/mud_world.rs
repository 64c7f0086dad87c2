//! End-to-end: `examples/mud_world.py`, the reference game, plays the game's part against a real
//! `geppetto serve` (the village, `[integration] completion = "game"`, the game's clock) over a
//! private `redis-server` for twelve game hours. The script walks NPCs exit by exit, completes
//! their actions, fails a walk at a locked door now and then, and has a player give an order and
//! fight an NPC; it checks at every tick that geppetto's room of every NPC is the game's, and at
//! the end that every intent ended, the order was obeyed and reported, the engaged NPC stayed
//! still, and mood and goal events arrived with matching ids. It exits 0 only if every check
//! held; its figures are printed. Needs Python 3 with redis-py (`scripts/test` installs
//! `python3-redis`).

// Shared test support: this test uses the server's start, URL and stream bodies, serve's
// start, the free port and the schema check.

use std::process::Command;
use std::time::{Duration, Instant};

use support::http;
use support::python::python_with_redis;
use support::redis_server::RedisServer;
use support::schema;
use support::serve::{self, Serve};

/// Game hours the script plays.
const HOURS: &str = "12";

#[test]
fn the_reference_game_keeps_geppetto_in_step_for_twelve_hours() {
    let python = python_with_redis();
    let server = RedisServer::start();
    let dir = std::env::temp_dir().join(format!("geppetto-mud-world-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let root = format!("{}/..", env!("CARGO_MANIFEST_DIR"));
    let port = support::free_port();
    let config = dir.join("serve.toml");
    std::fs::write(&config, serve::game_driven_village(&server.url, port, "")).expect("config");
    let _serve = Serve::start(env!("CARGO_BIN_EXE_geppetto"), &config, &[]);
    // Start the game once serve reads the world stream and answers on the admin API.
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
    let output = Command::new(&python)
        .arg(format!("{root}/examples/mud_world.py"))
        .args(["--redis", server.url.as_str()])
        .args(["--admin", &format!("http://127.0.0.1:{port}")])
        .args(["--world", &format!("{root}/config/worlds/village")])
        .args(["--hours", HOURS])
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the reference game found geppetto out of step:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
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
    assert!(figure("ticks") >= 720, "twelve game hours: {figures}");
    assert_eq!(figure("drift"), 0, "{figures}");
    assert!(
        figure("completed") > 0 && figure("arrived") > 0,
        "{figures}"
    );
    assert_eq!(figure("obeyed"), 1, "the order was obeyed: {figures}");
    assert!(figure("moods") > 0 && figure("goals") > 0, "{figures}");
    assert!(
        figure("failed") > 0,
        "a locked door now and then: {figures}"
    );
    for stream in ["world", "intents", "npc_events", "deadletter"] {
        for body in server.bodies(&format!("geppetto:{{village}}:{stream}")) {
            let message = serde_json::from_str(&body).expect("json");
            schema::check_schema(stream, &message);
        }
    }
}
