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
//! Two more follow the package README on a running server, on Evennia 5.0.1 and on Evennia 6.1
//! (`scripts/evennia6-venv`): a game folder set up as the guide says (the global script with
//! `GEPPETTO_CONFIG` naming geppetto's own config, `TIME_FACTOR = 60`, the room typeclass, the
//! command set), `evennia start`, a player on telnet who imports the village, walks in from
//! Limbo, speaks to Pip and is answered, hears villagers talk, gives Piet an order the server's
//! own clock and reader loop carry out, and walks a round of the village; the figures say what
//! the player saw (lines heard a game hour, replies, relocations, walks).
//!
//! The others run the package's unit tests, which need no service, on both releases.
//!
//! A missing environment fails the test with the command that builds it (`scripts/test` runs
//! it), never skips it.

// Shared test support: these tests use the free port, the model server, Redis servers and
// serve's start.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::model_server::{MODEL, ModelServer};
use support::redis_server::RedisServer;
use support::serve::{self, Serve};

/// Game minutes the village plays in the Evennia test.
const MINUTES: &str = "360";

/// Longest wait for the running server's villagers to obey the order.
const LIVE_DEADLINE: Duration = Duration::from_secs(240);

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

/// The Evennia 6.1 environment `scripts/evennia6-venv` builds: `GEPPETTO_EVENNIA6_VENV`, else
/// `~/.cache/geppetto/evennia6-venv`.
fn venv6() -> PathBuf {
    std::env::var_os("GEPPETTO_EVENNIA6_VENV").map_or_else(
        || {
            let home = std::env::var_os("HOME").unwrap_or_default();
            Path::new(&home).join(".cache/geppetto/evennia6-venv")
        },
        PathBuf::from,
    )
}

/// The `evennia` launcher of the environment, which must be there.
fn evennia() -> PathBuf {
    evennia_in(&venv(), "evennia-venv")
}

/// The `evennia` launcher of the environment `venv` that `./scripts/{builder}` builds.
fn evennia_in(venv: &Path, builder: &str) -> PathBuf {
    let evennia = venv.join("bin/evennia");
    assert!(
        evennia.exists(),
        "the Evennia tests need Evennia and geppetto-evennia in {}: run ./scripts/{builder} \
         (./scripts/test runs it)",
        venv.display()
    );
    evennia
}

/// A fresh temporary directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("geppetto-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("redis")).expect("dir");
    dir
}

/// `geppetto serve` on the village over `redis_url` in `game` mode with the game's clock (and
/// a model narrating, when given), once it reads the world stream and answers on its admin
/// API, whose port it returns.
fn serve_village(dir: &Path, redis_url: &str, model: Option<&str>) -> (Serve, u16) {
    let port = support::free_port();
    let config = dir.join("serve.toml");
    let llm = model.map_or_else(String::new, |url| {
        format!("[llm.provider]\nbase_url = '{url}'\nmodel = '{MODEL}'\n")
    });
    std::fs::write(&config, serve::game_driven_village(redis_url, port, &llm)).expect("config");
    let serve = Serve::start(env!("CARGO_BIN_EXE_geppetto"), &config, &[]);
    serve::wait_until_ready_for_a_game(redis_url, port);
    (serve, port)
}

/// A game folder made by `evennia --init` in `dir` with the launcher `evennia`.
fn init_game(dir: &Path, evennia: &Path) -> PathBuf {
    let init = Command::new(evennia)
        .args(["--init", "game"])
        .current_dir(dir)
        .output()
        .expect("evennia --init runs");
    assert!(
        init.status.success(),
        "evennia --init: {}",
        String::from_utf8_lossy(&init.stderr)
    );
    dir.join("game")
}

/// The numbers of a `figures: name=value …` line.
fn figure(figures: &str, name: &str) -> u64 {
    figures
        .split_whitespace()
        .find_map(|f| f.strip_prefix(&format!("{name}=")))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("figure {name} in {figures}"))
}

/// The package's own unit tests (`integrations/evennia/tests/unit/`) in the environment
/// `venv`: Evennia's test runner in a throw-away game folder, the bus a list in memory or a
/// private `redis-server` the runner starts — no service.
fn unit_tests_pass_in(venv: &Path, builder: &str) {
    assert!(
        venv.join("bin/evennia").exists(),
        "the Evennia unit tests need Evennia and geppetto-evennia in {}: run ./scripts/{builder} \
         (./scripts/test runs it)",
        venv.display()
    );
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../integrations/evennia/run-unit-tests");
    let output = Command::new(&script)
        .arg("--venv")
        .arg(venv)
        .output()
        .expect("run-unit-tests runs");
    assert!(
        output.status.success(),
        "the Evennia package's unit tests failed in {}:\n{}\n{}",
        venv.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_evennia_package_passes_its_unit_tests_on_evennia_5() {
    unit_tests_pass_in(&venv(), "evennia-venv");
}

#[test]
fn the_evennia_package_passes_its_unit_tests_on_evennia_6() {
    unit_tests_pass_in(&venv6(), "evennia6-venv");
}

#[test]
fn villagers_live_in_an_evennia_game() {
    let root = format!("{}/..", env!("CARGO_MANIFEST_DIR"));
    let dir = temp_dir("evennia");
    let model = ModelServer::start();
    // Redis keeps its streams on disk (append-only file): the Evennia test shuts it down and
    // starts it again with these same arguments.
    let redis_port = support::free_port();
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
    let (_serve, port) = serve_village(&dir, &server.url, Some(&model.base_url()));
    let game = init_game(&dir, &evennia());
    std::fs::copy(
        format!("{root}/integrations/evennia/tests/test_village.py"),
        game.join("world/test_village.py"),
    )
    .expect("the Evennia test into the game folder");
    let output = Command::new(evennia())
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
    assert!(
        figure(figures, "npc_moves") > 0 && figure(figures, "completed") > 0,
        "{figures}"
    );
    assert!(
        figure(figures, "barks") > 0 && figure(figures, "narrations") > 0,
        "{figures}"
    );
    assert_eq!(
        figure(figures, "orders_done"),
        1,
        "the order was obeyed: {figures}"
    );
    assert_eq!(
        figure(figures, "refused"),
        1,
        "the engaged NPC refused: {figures}"
    );
    assert!(
        figure(figures, "reconnects") > 0,
        "Redis went away and came back: {figures}"
    );
    assert_eq!(figure(figures, "failed_messages"), 0, "{figures}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A running Evennia server (portal and server) of one game folder, stopped on drop.
struct EvenniaServer {
    game: PathBuf,
    /// The environment Evennia runs in.
    venv: PathBuf,
    /// How far `wait_for_log` has read the server's log.
    log_read: std::cell::Cell<usize>,
}

impl EvenniaServer {
    /// `evennia migrate` and `evennia start`, whose first start makes the superuser from the
    /// environment and restarts the server once. On a busy machine that restart can clash
    /// with the server it replaces (twistd finds its pid file): then once more, stopped and
    /// started.
    fn start(game: &Path, venv: &Path) -> Self {
        let server = Self {
            game: game.to_owned(),
            venv: venv.to_owned(),
            log_read: std::cell::Cell::new(0),
        };
        server.run(&["migrate"]);
        server.run(&["start"]);
        const RESTARTED: &str = "Evennia Server successfully restarted";
        const CLASH: &str = "--pidfile";
        if server.wait_for_log(&[RESTARTED, CLASH]) == CLASH {
            server.run(&["stop"]);
            server.run(&["start"]);
            server.wait_for_log(&["Evennia Server successfully started.\n"]);
        }
        server
    }

    fn run(&self, args: &[&str]) {
        let output = self
            .command(args)
            .env("EVENNIA_SUPERUSER_USERNAME", "ann")
            .env("EVENNIA_SUPERUSER_PASSWORD", "village-square-7")
            .output()
            .expect("evennia runs");
        assert!(
            output.status.success(),
            "evennia {args:?}: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// `evennia ARGS` in the game folder, the environment's `twistd` on the path.
    fn command(&self, args: &[&str]) -> Command {
        let mut path = std::ffi::OsString::from(self.venv.join("bin"));
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_default());
        let mut command = Command::new(self.venv.join("bin/evennia"));
        command.args(args).current_dir(&self.game).env("PATH", path);
        command
    }

    /// Waits until the server's log (since the last wait) holds one of `lines`; which.
    fn wait_for_log<'a>(&self, lines: &[&'a str]) -> &'a str {
        let log = self.game.join("server/logs/server.log");
        let deadline = Instant::now() + Duration::from_secs(60);
        let seen = self.log_read.get();
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let new = text.get(seen..).unwrap_or_default();
            if let Some((at, line)) = lines
                .iter()
                .filter_map(|line| new.find(line).map(|at| (at, *line)))
                .min()
            {
                self.log_read.set(seen + at + line.len());
                return line;
            }
            assert!(
                Instant::now() < deadline,
                "none of {lines:?} in {}:\n{text}",
                log.display()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for EvenniaServer {
    fn drop(&mut self) {
        let _ = self.command(&["stop"]).output();
        // Whatever did not stop: its process ids are in the game folder.
        for name in ["server.pid", "portal.pid"] {
            if let Ok(pid) = std::fs::read_to_string(self.game.join("server").join(name)) {
                let _ = Command::new("kill").args(["-KILL", pid.trim()]).status();
            }
        }
    }
}

/// A player's telnet connection: what it sent and everything the game wrote back.
struct Telnet {
    stream: TcpStream,
    seen: String,
}

impl Telnet {
    fn connect(port: u16) -> Self {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(stream) = TcpStream::connect(("127.0.0.1", port)) {
                stream
                    .set_read_timeout(Some(Duration::from_millis(200)))
                    .expect("timeout");
                return Self {
                    stream,
                    seen: String::new(),
                };
            }
            assert!(
                Instant::now() < deadline,
                "the game's telnet port never opened"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn send(&mut self, line: &str) {
        self.stream
            .write_all(format!("{line}\r\n").as_bytes())
            .expect("telnet write");
    }

    /// Reads until `text` has been seen (after position `from` of all output) or `within`
    /// is over; whether it was.
    fn wait_for(&mut self, text: &str, from: usize, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let mut buffer = [0u8; 65536];
        while !self.seen[from.min(self.seen.len())..].contains(text) {
            if Instant::now() > deadline {
                return false;
            }
            match self.stream.read(&mut buffer) {
                Ok(0) => return false,
                Ok(n) => self.seen.push_str(&String::from_utf8_lossy(&buffer[..n])),
                Err(_) => {}
            }
        }
        true
    }

    /// Reads what the game writes for `within` (twenty game minutes at `TIME_FACTOR = 60`).
    fn listen(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        let mut buffer = [0u8; 65536];
        while Instant::now() < deadline {
            match self.stream.read(&mut buffer) {
                Ok(0) => return,
                Ok(n) => self.seen.push_str(&String::from_utf8_lossy(&buffer[..n])),
                Err(_) => {}
            }
        }
    }

    /// Sends `line` and waits for `reply`, failing with everything seen if it never comes.
    fn expect(&mut self, line: &str, reply: &str, within: Duration) {
        let from = self.seen.len();
        self.send(line);
        assert!(
            self.wait_for(reply, from, within),
            "`{line}`: no {reply:?} in the game's output:\n{}",
            &self.seen[from.min(self.seen.len())..]
        );
    }
}

/// The package README's guide on a live server in `venv` (built by `./scripts/{builder}`): a
/// fresh game folder with the guide's settings (`GEPPETTO_CONFIG` naming the config `geppetto
/// serve` runs with, the recommended `TIME_FACTOR = 60`) and command set, `evennia migrate`,
/// `evennia start`, and a player on telnet who imports the village, walks in from Limbo by the
/// `village` exit (no builder command), speaks to Pip and is answered, hears villagers talk,
/// orders Piet to report a theft and waits until Piet reports it done, then walks a round of the
/// village. Prints what the player saw.
fn a_player_walks_in_through_the_guide(venv: &Path, builder: &str) {
    let root = format!("{}/..", env!("CARGO_MANIFEST_DIR"));
    let dir = temp_dir(&format!("evennia-live-{builder}"));
    let server = RedisServer::start();
    let (_serve, _admin) = serve_village(&dir, &server.url, None);
    let evennia = evennia_in(venv, builder);
    let game = init_game(&dir, &evennia);
    // The guide's settings; on free loopback ports and with the web server off for the test.
    let telnet_port = support::free_port();
    let settings = game.join("server/conf/settings.py");
    let mut text = std::fs::read_to_string(&settings).expect("settings");
    text.push_str(&format!(
        "\nGLOBAL_SCRIPTS = {{'geppetto': {{'typeclass': 'geppetto_evennia.scripts.GeppettoScript',\n\
         \x20   'persistent': True, 'interval': 1}}}}\n\
         GEPPETTO_CONFIG = '{}'\nGEPPETTO_ZONE = 'village'\n\
         GEPPETTO_CLOCK_OFFSET_MINUTES = 420\n\
         TIME_FACTOR = 60\n\
         BASE_ROOM_TYPECLASS = 'geppetto_evennia.typeclasses.GeppettoRoom'\n\
         TELNET_INTERFACES = ['127.0.0.1']\nTELNET_PORTS = [{telnet_port}]\nAMP_PORT = {}\n\
         WEBSERVER_ENABLED = False\nWEBSOCKET_CLIENT_ENABLED = False\n",
        dir.join("serve.toml").display(),
        support::free_port()
    ));
    std::fs::write(&settings, text).expect("settings");
    let cmdsets = game.join("commands/default_cmdsets.py");
    let text = std::fs::read_to_string(&cmdsets)
        .expect("cmdsets")
        .replacen(
            "from evennia import default_cmds",
            "from evennia import default_cmds\nfrom geppetto_evennia import GeppettoCmdSet",
            1,
        )
        .replacen(
            "super().at_cmdset_creation()",
            "super().at_cmdset_creation()\n        self.add(GeppettoCmdSet)",
            1,
        );
    std::fs::write(&cmdsets, text).expect("cmdsets");
    let evennia = EvenniaServer::start(&game, venv);
    let mut player = Telnet::connect(telnet_port);
    let short = Duration::from_secs(60);
    player.expect("connect ann village-square-7", "ann", short);
    player.expect(
        &format!("geppetto_import {root}/config/worlds/village"),
        "Built from",
        short,
    );
    // In from Limbo, the way any new character comes.
    player.expect("village", "the village square", short);
    let in_square = player.seen.len();
    let said = Instant::now();
    player.expect("say Good morning, Pip!", "says to ", short);
    let reply_seconds = said.elapsed().as_secs_f64();
    let reply = player.seen[in_square..]
        .lines()
        .find(|line| line.contains("says to "))
        .unwrap_or_default()
        .to_owned();
    player.expect(
        "order piet report_a_theft at gatehouse",
        "Piet the trader will do as you asked.",
        short,
    );
    let from = player.seen.len();
    assert!(
        player.wait_for(
            "Piet the trader is done with your order (completed).",
            from,
            LIVE_DEADLINE
        ),
        "the order was never reported done:\n{}",
        player.seen
    );
    // A round of the village: each room a player enters wakes its villagers.
    for (exit, room) in [
        ("market", "the market"),
        ("square", "the village square"),
        ("tavern", "the Crooked Tankard"),
        ("square", "the village square"),
    ] {
        player.expect(exit, room, short);
        player.listen(Duration::from_secs(20));
    }
    let seen = &player.seen[in_square..];
    let lines = seen.matches(" says, \"").count();
    let replies = seen.matches(" says to ").count();
    let relocated: Vec<&str> = seen
        .lines()
        .filter(|line| {
            [
                " leaves: ",
                " arrives: ",
                " heads off to ",
                " arrives from ",
            ]
            .iter()
            .any(|said| line.contains(said))
        })
        .collect();
    let relocations = relocated.len();
    let walks = seen.matches(" arrives to ").count() + seen.matches(" is leaving ").count();
    let minutes = server
        .bodies("geppetto:{village}:world")
        .iter()
        .filter(|b| b.contains("\"time_advanced\"") && b.contains("\"evennia-"))
        .count();
    let hours = minutes as f64 / 60.0;
    println!(
        "figures: evennia={builder} game_minutes={minutes} lines_heard={lines} \
         lines_heard_per_hour={:.1} replies={replies} reply_seconds={reply_seconds:.1} \
         relocations_seen={relocations} walks_seen={walks}\nreply: {reply}\nrelocated: {relocated:?}",
        lines as f64 / hours.max(1.0 / 60.0)
    );
    assert!(minutes > 0, "the server's clock reached geppetto");
    assert!(
        reply.contains("Pip") && !reply.contains("\"\""),
        "Pip answered the player, in quotes once: {reply:?}\n{seen}"
    );
    assert!(lines > 0, "villagers talk where the player stands:\n{seen}");
    assert!(walks > 0, "villagers came and went:\n{seen}");
    assert!(
        relocations > 0,
        "a villager called away by its day left with a line:\n{seen}"
    );
    drop(evennia); // stopped while its game folder is still there
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_player_walks_into_the_village_and_is_answered_on_evennia_5() {
    a_player_walks_in_through_the_guide(&venv(), "evennia-venv");
}

#[test]
fn a_player_walks_into_the_village_and_is_answered_on_evennia_6() {
    a_player_walks_in_through_the_guide(&venv6(), "evennia6-venv");
}
