//! End-to-end: `examples/mud_world.py`, the reference game, plays the game's part against a real
//! `geppetto serve` (the village, `[integration] completion = "game"`, the game's clock) over a
//! private `redis-server` for twelve game hours. The script walks NPCs exit by exit, completes
//! their actions, fails a walk at a locked door now and then, and has a player give an order and
//! fight an NPC; it checks at every tick that geppetto's room of every NPC is the game's, and at
//! the end that every intent ended, the order was obeyed and reported, the engaged NPC stayed
//! still, and mood and goal events arrived with matching ids. It exits 0 only if every check
//! held; its figures are printed. With `--quests` it plays a game day beside the reference
//! quest board (`integrations/quests`): Ann takes the board's quests and completes them, and the
//! script checks that geppetto answered each (deeds remembered, a rumour about Ann spread, the
//! signal resolved). Needs Python 3 with redis-py (`scripts/test` installs `python3-redis`).

// Shared test support: this test uses the server's start, URL and stream bodies, serve's
// start and readiness, the free port and the schema check.

use std::path::{Path, PathBuf};
use std::process::Command;

use support::python::python_with_redis;
use support::redis_server::RedisServer;
use support::schema;
use support::serve::{self, Serve};

/// Game hours the script plays.
const HOURS: &str = "12";
/// Game hours the script plays with the quest board: a game day.
const QUEST_HOURS: &str = "24";

/// What `examples/mud_world.py` printed (asserting it exited 0) and the Redis it played
/// against, after `hours` game hours with `args` besides.
fn play(name: &str, hours: &str, args: &[&str]) -> (String, RedisServer, PathBuf) {
    let python = python_with_redis();
    let server = RedisServer::start();
    let dir = std::env::temp_dir().join(format!("geppetto-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let root = format!("{}/..", env!("CARGO_MANIFEST_DIR"));
    let port = support::free_port();
    let config = dir.join("serve.toml");
    std::fs::write(&config, serve::game_driven_village(&server.url, port, "")).expect("config");
    let _serve = Serve::start(env!("CARGO_BIN_EXE_geppetto"), &config, &[]);
    // Start the game once serve reads the world stream and answers on the admin API.
    serve::wait_until_ready_for_a_game(&server.url, port);
    let output = Command::new(&python)
        .arg(format!("{root}/examples/mud_world.py"))
        .args(["--redis", server.url.as_str()])
        .args(["--admin", &format!("http://127.0.0.1:{port}")])
        .args(["--world", &format!("{root}/config/worlds/village")])
        .args(["--hours", hours])
        .args(args)
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the reference game found geppetto out of step:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (stdout, server, config)
}

/// The value of `name` in the line of `stdout` that starts with `prefix` (`name=value …`).
fn figure(stdout: &str, prefix: &str, name: &str) -> u64 {
    let figures = stdout
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("a line starting {prefix:?}"));
    figures
        .split_whitespace()
        .find_map(|f| f.strip_prefix(&format!("{name}=")))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("figure {name} in {figures}"))
}

/// `geppetto replay` of the village's world log on `server`, under the serve `config` it was
/// recorded with, gives the recorded `stream` again, message for message.
fn replays_the_same(server: &RedisServer, config: &Path, stream: &str) {
    let recorded = server.bodies(&format!("geppetto:{{village}}:{stream}"));
    assert!(!recorded.is_empty(), "a recorded {stream} stream");
    let path = config.with_file_name(format!("recorded-{stream}.jsonl"));
    std::fs::write(&path, recorded.join("\n") + "\n").expect("recording");
    let output = Command::new(env!("CARGO_BIN_EXE_geppetto"))
        .args(["replay", "--redis", server.url.as_str()])
        .arg("--config")
        .arg(config)
        .args(["--stream", stream, "--compare"])
        .arg(&path)
        .output()
        .expect("replay runs");
    assert!(
        output.status.success(),
        "the replay of the world log gives the recorded {stream} stream ({} messages):\n{}{}",
        recorded.len(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    println!(
        "replay: the world log gives the recorded {stream} stream again, {} messages",
        recorded.len()
    );
}

/// Every message of every stream of the village matches its schema.
fn check_every_stream(server: &RedisServer, streams: &[&str]) {
    for stream in streams {
        for body in server.bodies(&format!("geppetto:{{village}}:{stream}")) {
            let message = serde_json::from_str(&body).expect("json");
            schema::check_schema(stream, &message);
        }
    }
}

#[test]
fn the_reference_game_keeps_geppetto_in_step_for_twelve_hours() {
    let (stdout, server, _) = play("mud-world", HOURS, &[]);
    let figure = |name: &str| figure(&stdout, "figures: ", name);
    let figures = stdout
        .lines()
        .find(|l| l.starts_with("figures: "))
        .unwrap_or_default();
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
    // Ann greets an NPC in each room she walks into; the script fails on a line unanswered
    // within a tick or answered by another NPC.
    assert!(
        figure("said") > 0 && figure("replies") > 0,
        "NPCs answer the player: {figures}"
    );
    check_every_stream(&server, &["world", "intents", "npc_events", "deadletter"]);
}

/// The quest board's figures (`quests: …`) are printed with the game's; the script itself
/// fails when a completed quest went unanswered or no quest was ever offered.
#[test]
fn a_player_takes_the_quest_boards_quests_for_a_game_day() {
    let (stdout, server, config) = play("mud-world-quests", QUEST_HOURS, &["--quests"]);
    let quests = stdout
        .lines()
        .find(|l| l.starts_with("quests: "))
        .unwrap_or_default();
    let quest = |name: &str| figure(&stdout, "quests: ", name);
    assert!(
        figure(&stdout, "figures: ", "ticks") >= 1440,
        "a game day: {stdout}"
    );
    assert_eq!(figure(&stdout, "figures: ", "drift"), 0, "{stdout}");
    assert!(
        quest("signals_raised") > 0 && quest("offers_made") > 0,
        "{quests}"
    );
    assert!(
        quest("offers_accepted") > 0 && quest("offers_completed") > 0,
        "Ann took quests and completed them: {quests}"
    );
    assert!(
        quest("signals_resolved") > 0,
        "the quests that ended came back resolved on the story stream: {quests}"
    );
    check_every_stream(
        &server,
        &[
            "world",
            "intents",
            "npc_events",
            "story",
            "narrative",
            "deadletter",
        ],
    );
    // The quests included: the world log replays to the same intents and story signals.
    replays_the_same(&server, &config, "intents");
    replays_the_same(&server, &config, "story");
}
