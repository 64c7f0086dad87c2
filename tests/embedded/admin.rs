//! End-to-end: `geppetto serve` with the in-process bus, its internal clock and the admin API on
//! a free loopback port: health, NPC list, the debug-brain view, Prometheus metrics, and a
//! despawn and a schedule override that need the bearer token and go through the world log;
//! the LLM budget read and changed with the token, and the spend per NPC-hour read without.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::free_port;
use support::http::request_with;

struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn request(port: u16, method: &str, path: &str, token: Option<&str>) -> Option<(u16, String)> {
    request_with(port, method, path, token, "")
}

fn until(port: u16, path: &str, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some((200, body)) = request(port, "GET", path, None) {
            if done(&body) || Instant::now() > deadline {
                return body;
            }
        } else if Instant::now() > deadline {
            return String::new();
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Writes `config` (the village, a fast clock, then `rest`) into `dir` and starts `geppetto
/// serve` on it with `env`, its stderr into `stderr`.
fn serve(dir: &std::path::Path, rest: &str, env: &[(&str, &str)], stderr: Stdio) -> Serve {
    std::fs::create_dir_all(dir).expect("dir");
    let world = format!("{}/../config/worlds/village", env!("CARGO_MANIFEST_DIR"));
    let config = dir.join("serve.toml");
    std::fs::write(
        &config,
        format!("worlds = ['{world}']\n[clock]\nspeed_minutes_per_second = 600.0\n{rest}"),
    )
    .expect("config");
    Serve(
        Command::new(env!("CARGO_BIN_EXE_geppetto"))
            .args(["serve", "--config"])
            .arg(&config)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("serve"),
    )
}

#[test]
fn the_admin_api_serves_health_npcs_brains_metrics_and_guarded_despawns() {
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("geppetto-admin-{}", std::process::id()));
    let _serve = serve(
        &dir,
        &format!("[admin]\naddress = '127.0.0.1:{port}'\ntoken_env = 'GEPPETTO_TEST_TOKEN'\n"),
        &[("GEPPETTO_TEST_TOKEN", "s3cret")],
        Stdio::null(),
    );
    assert!(until(port, "/healthz", |b| b.contains("ok")).contains("\"ok\""));
    let npcs = until(port, "/npcs", |b| b.contains("kit"));
    let list: serde_json::Value = serde_json::from_str(&npcs).expect("json");
    assert_eq!(
        list.as_array().map(Vec::len),
        Some(24),
        "ten inline villagers and fourteen residents"
    );
    let brain = until(port, "/npcs/bram/brain?format=text", |b| b.contains("Bram"));
    assert!(brain.starts_with("Bram the smith (bram)"), "{brain}");
    assert!(brain.contains("1. "), "{brain}");
    let json = until(port, "/npcs/bram/brain", |b| b.contains("top_candidates"));
    let json: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert!(json["top_candidates"][0]["breakdown"]["distance"].is_number());
    let metrics = until(port, "/metrics", |b| {
        b.contains("geppetto_world_events_in_total")
    });
    assert!(metrics.contains("geppetto_tick_duration_ms"), "{metrics}");
    let (status, _) = request(port, "DELETE", "/npcs/kit", None).expect("reply");
    assert_eq!(status, 401);
    let (status, _) = request(port, "DELETE", "/npcs/kit", Some("wrong")).expect("reply");
    assert_eq!(status, 401);
    let (status, _) = request(port, "DELETE", "/npcs/kit", Some("s3cret")).expect("reply");
    assert_eq!(status, 202);
    let npcs = until(port, "/npcs", |b| !b.contains("\"kit\""));
    assert!(
        !npcs.contains("\"kit\""),
        "kit was despawned through the world log"
    );
    let (status, _) = request(port, "GET", "/npcs/nobody/brain", None).expect("reply");
    assert_eq!(status, 404);
    // What bram chose lately, oldest first (with no player about, the village runs at the
    // simplified level and may not have decided yet; the zone's tests cover the content).
    let (status, trace) = request(port, "GET", "/npcs/bram/decisions", None).expect("reply");
    assert_eq!(status, 200, "{trace}");
    let trace: serde_json::Value = serde_json::from_str(&trace).expect("json");
    let entries = trace.as_array().expect("a list");
    assert!(entries.len() <= 32, "{trace}");
    let ticks: Vec<u64> = entries.iter().filter_map(|e| e["tick"].as_u64()).collect();
    assert!(ticks.windows(2).all(|w| w[0] <= w[1]), "{ticks:?}");
    assert!(
        entries
            .iter()
            .all(|e| e["action"].is_string() && e["utility"].is_number())
    );
    let (status, _) = request(port, "GET", "/npcs/nobody/decisions", None).expect("reply");
    assert_eq!(status, 404);

    // A temporary schedule block, queued through the world log like a despawn.
    let summons = r#"{"activity": "summoned", "location": "chapel", "tags": ["rest"], "hours": 6}"#;
    let path = "/npcs/piet/schedule_override";
    let (status, _) = request_with(port, "POST", path, None, summons).expect("reply");
    assert_eq!(status, 401);
    let (status, body) = request_with(
        port,
        "POST",
        path,
        Some("s3cret"),
        r#"{"activity": "x", "hours": -1}"#,
    )
    .expect("reply");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("hours"), "{body}");
    let (status, _) = request_with(port, "POST", path, Some("s3cret"), summons).expect("reply");
    assert_eq!(status, 202);
    let brain = until(port, "/npcs/piet/brain", |b| b.contains("\"summoned\""));
    assert!(brain.contains("\"schedule_block\":\"summoned\""), "{brain}");
    let path = "/npcs/nobody/schedule_override";
    let (status, _) = request_with(port, "POST", path, Some("s3cret"), summons).expect("reply");
    assert_eq!(status, 404);

    // Isolation's admin calls: guarded, and refused for what is not held (the zone's tests
    // reinstate a held NPC through the world event these calls write).
    for path in ["/npcs/piet/reinstate", "/archetypes/villager/reset-breaker"] {
        let (status, _) = request(port, "POST", path, None).expect("reply");
        assert_eq!(status, 401, "{path}");
        let (status, body) = request(port, "POST", path, Some("s3cret")).expect("reply");
        assert_eq!(status, 404, "{path}: {body}");
        assert!(
            body.contains("not held") || body.contains("not tripped"),
            "{body}"
        );
    }
}

#[test]
fn secrets_stay_out_of_responses_and_logs_and_bodies_are_bounded() {
    const TOKEN: &str = "admin-Tk3-secret";
    const API_KEY: &str = "sk-Llm8-secret";
    const REDIS_PASSWORD: &str = "redis-Rp5-secret";
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("geppetto-secrets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("admin.token"), format!("{TOKEN}\n")).expect("token file");
    let log = dir.join("stderr.log");
    // The token from a file, the LLM key and the Redis password from the environment; an LLM
    // endpoint on loopback that nobody serves, so the key is read but never sent.
    let serve = serve(
        &dir,
        &format!(
            "[admin]\naddress = '127.0.0.1:{port}'\ntoken_file = 'admin.token'\nmax_body_bytes = 1024\n[llm.provider]\nbase_url = 'http://127.0.0.1:9/v1'\n"
        ),
        &[
            ("RUST_LOG", "debug"),
            ("GEPPETTO_LLM_API_KEY", API_KEY),
            ("GEPPETTO_REDIS_PASSWORD", REDIS_PASSWORD),
        ],
        Stdio::from(std::fs::File::create(&log).expect("log file")),
    );
    assert!(until(port, "/healthz", |b| b.contains("ok")).contains("\"ok\""));
    let mut seen = Vec::new();
    for path in [
        "/healthz",
        "/npcs",
        "/npcs/bram/brain",
        "/npcs/bram/brain?format=text",
        "/npcs/bram/decisions",
        "/npcs/nobody/brain",
    ] {
        let (_, body) = request(port, "GET", path, None).expect("reply");
        seen.push(body);
    }
    seen.push(until(port, "/metrics", |b| {
        b.contains("geppetto_world_events_in_total")
    }));
    // Mutating calls: 401 without the token or with a wrong one, 413 over the body limit,
    // 400 for a bad body, 202 with the token read from the file.
    let (status, body) = request(port, "DELETE", "/npcs/kit", None).expect("reply");
    assert_eq!(status, 401, "{body}");
    seen.push(body);
    let (status, body) = request(port, "DELETE", "/npcs/kit", Some("admin-Tk3")).expect("reply");
    assert_eq!(
        status, 401,
        "a prefix of the token is not the token: {body}"
    );
    seen.push(body);
    let huge = format!(r#"{{"zone": "village", "npc": "{}"}}"#, "x".repeat(2048));
    let (status, body) = request_with(port, "POST", "/npcs", Some(TOKEN), &huge).expect("reply");
    assert_eq!(status, 413, "{body}");
    seen.push(body);
    let (status, body) =
        request_with(port, "POST", "/npcs", Some(TOKEN), "{\"zone\": 7}").expect("reply");
    assert_eq!(status, 400, "{body}");
    seen.push(body);
    let (status, body) = request(port, "DELETE", "/npcs/kit", Some(TOKEN)).expect("reply");
    assert_eq!(status, 202, "{body}");
    seen.push(body);
    drop(serve);
    seen.push(std::fs::read_to_string(&log).expect("log"));
    assert!(
        seen.last().is_some_and(|l| l.contains("DEBUG")),
        "debug logs were on"
    );
    for text in &seen {
        for secret in [TOKEN, API_KEY, REDIS_PASSWORD] {
            assert!(!text.contains(secret), "`{secret}` exposed in: {text}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The village copied into `dir` (so the test can edit it), and the child archetype copied
/// into `dir/archetypes`.
fn editable_content(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../config");
    let world = dir.join("village");
    let archetypes = dir.join("archetypes");
    std::fs::create_dir_all(&world).expect("world dir");
    std::fs::create_dir_all(&archetypes).expect("archetypes dir");
    for entry in std::fs::read_dir(root.join("worlds/village")).expect("village") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), world.join(entry.file_name())).expect("copy");
    }
    std::fs::copy(
        root.join("archetypes/child.yaml"),
        archetypes.join("child.yaml"),
    )
    .expect("copy");
    (world, archetypes)
}

fn brain(port: u16, npc: &str) -> serde_json::Value {
    let (status, body) =
        request(port, "GET", &format!("/npcs/{npc}/brain"), None).expect("brain answers");
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("brain json")
}

fn comfort_decay(brain: &serde_json::Value) -> f64 {
    brain["considerations"]
        .as_array()
        .expect("considerations")
        .iter()
        .find(|c| c["name"] == "COMFORT")
        .and_then(|c| c["decay_per_hour"].as_f64())
        .expect("COMFORT decays")
}

#[test]
fn content_reloads_into_running_zones_keeping_their_state_and_bad_content_changes_nothing() {
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("geppetto-reload-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (world, archetypes) = editable_content(&dir);
    let config = dir.join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "worlds = ['{}']\narchetypes_dir = '{}'\n[clock]\nspeed_minutes_per_second = 120.0\n\
             [admin]\naddress = '127.0.0.1:{port}'\ntoken_env = 'GEPPETTO_TEST_TOKEN'\n",
            world.display(),
            archetypes.display()
        ),
    )
    .expect("config");
    let _serve = Serve(
        Command::new(env!("CARGO_BIN_EXE_geppetto"))
            .args(["serve", "--config"])
            .arg(&config)
            .env("GEPPETTO_TEST_TOKEN", "s3cret")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve"),
    );
    until(port, "/npcs", |b| b.contains("pip"));
    let before = brain(port, "pip");
    assert!((comfort_decay(&before) - 0.08).abs() < 1e-9);
    let reload = |token| request_with(port, "POST", "/content/reload", token, "");

    assert_eq!(
        reload(None).map(|(s, _)| s),
        Some(401),
        "the token is required"
    );

    // A designer makes children tire of discomfort faster and adds a child to the village.
    let child = std::fs::read_to_string(archetypes.join("child.yaml")).expect("child");
    std::fs::write(
        archetypes.join("child.yaml"),
        child.replace(
            "COMFORT: { decay_per_hour: 0.08 }",
            "COMFORT: { decay_per_hour: 0.5 }",
        ),
    )
    .expect("edit child");
    std::fs::write(
        world.join("residents_new.yaml"),
        "residents:\n  - { id: robin, name: \"Robin\", archetype: child, room: square, position: [3, 3] }\n",
    )
    .expect("new resident");
    let (status, body) = reload(Some("s3cret")).expect("reload answers");
    assert_eq!(status, 200, "{body}");
    let report: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(report["reloaded"][0]["zone"], "village", "{report}");
    assert_eq!(report["reloaded"][0]["npcs"], 25, "{report}");
    let after = brain(port, "pip");
    assert!((comfort_decay(&after) - 0.5).abs() < 1e-9, "{after}");
    assert!(
        after["game_time"].as_u64() >= before["game_time"].as_u64(),
        "the zone went on from where it was, not from the world file's start"
    );
    assert_eq!(brain(port, "robin")["room"], "square");

    // Content that does not load changes nothing, and says where it is wrong.
    std::fs::write(world.join("residents_new.yaml"), "residents: [ {").expect("break");
    let (status, body) = reload(Some("s3cret")).expect("reload answers");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("residents_new.yaml"), "{body}");
    assert_eq!(
        brain(port, "robin")["room"],
        "square",
        "the zone runs on unchanged"
    );

    // Content the zone's state does not fit (its room graph changed) is refused for that zone.
    std::fs::remove_file(world.join("residents_new.yaml")).expect("remove");
    let rooms = std::fs::read_to_string(world.join("rooms.yaml")).expect("rooms");
    std::fs::write(
        world.join("rooms.yaml"),
        rooms.replace(
            "  - { id: woods, name: \"the old woods\", neighbours: [river] }",
            "  - { id: woods, name: \"the old woods\", neighbours: [river, glade] }\n  - { id: glade, name: \"a glade\", neighbours: [woods] }",
        ),
    )
    .expect("rooms");
    let (status, body) = reload(Some("s3cret")).expect("reload answers");
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("room"), "{body}");
    assert_eq!(
        brain(port, "robin")["room"],
        "square",
        "the zone runs on unchanged"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `PATCH` (or another `method`) of `/llm/budget` with `body` and the token; status and JSON.
fn budget_call(port: u16, method: &str, body: &str) -> (u16, serde_json::Value) {
    let (status, reply) =
        request_with(port, method, "/llm/budget", Some("s3cret"), body).expect("reply");
    (status, serde_json::from_str(&reply).expect("json"))
}

#[test]
fn an_operator_reads_and_changes_the_llm_budget_with_the_token() {
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("geppetto-budget-{}", std::process::id()));
    let _serve = serve(
        &dir,
        &format!(
            "[llm.budget]\ntokens_per_hour = 5000\n[admin]\naddress = '127.0.0.1:{port}'\ntoken_env = 'GEPPETTO_TEST_TOKEN'\n"
        ),
        &[("GEPPETTO_TEST_TOKEN", "s3cret")],
        Stdio::null(),
    );
    assert!(until(port, "/healthz", |b| b.contains("ok")).contains("\"ok\""));
    let (status, _) = request(port, "GET", "/llm/budget", None).expect("reply");
    assert_eq!(status, 401, "the budget is the operator's");
    let (status, budget) = budget_call(port, "GET", "");
    assert_eq!(status, 200, "{budget}");
    assert_eq!(budget["allowances"]["tokens_per_hour"], 5000);
    assert!(budget["spent"].is_array(), "{budget}");

    // A change applies the fields it names; the others stay.
    let (status, budget) = budget_call(
        port,
        "PATCH",
        r#"{"money_per_hour": 0.25, "classes": {"guard": 0.5, "smith": 0.2}}"#,
    );
    assert_eq!(status, 200, "{budget}");
    let allowances = &budget["allowances"];
    assert_eq!(allowances["tokens_per_hour"], 5000);
    assert_eq!(allowances["money_per_hour"], 0.25);
    assert_eq!(allowances["classes"]["guard"], 0.5);

    // Refusals name the field and change nothing.
    for (body, named) in [
        (r#"{"witnessed_reserve": 1.5}"#, "budget.witnessed_reserve"),
        (r#"{"classes": {"guard": 2.0}}"#, "budget.classes"),
        (r#"{"tokens_per_hour": "lots"}"#, "`tokens_per_hour`"),
        (r#"{"tokens_per_hr": 10}"#, "tokens_per_hr"),
        (
            r#"{"save_within_ms": 10}"#,
            "`save_within_ms` is read at start",
        ),
        (r#"[1, 2]"#, "a JSON object"),
    ] {
        let (status, refusal) = budget_call(port, "PATCH", body);
        assert_eq!(status, 400, "{body}: {refusal}");
        let error = refusal["error"].as_str().expect("error");
        assert!(error.contains(named), "{body}: {error}");
    }
    let (_, after) = budget_call(port, "GET", "");
    assert_eq!(
        &after["allowances"], allowances,
        "refused changes changed nothing"
    );
    let (status, _) = support::http::request_typed(
        port,
        "PATCH",
        "/llm/budget",
        Some("s3cret"),
        "text/plain",
        "{}",
    )
    .expect("reply");
    assert_eq!(status, 415);

    // `null` unsets an allowance or removes a share; `PUT` replaces the whole.
    let (status, budget) = budget_call(
        port,
        "PATCH",
        r#"{"tokens_per_hour": null, "classes": {"smith": null}}"#,
    );
    assert_eq!(status, 200, "{budget}");
    assert!(
        budget["allowances"]["tokens_per_hour"].is_null(),
        "{budget}"
    );
    assert_eq!(
        budget["allowances"]["classes"],
        serde_json::json!({"guard": 0.5})
    );
    let (status, budget) = budget_call(port, "PUT", r#"{"tokens_per_day": 100000}"#);
    assert_eq!(status, 200, "{budget}");
    assert_eq!(budget["allowances"]["tokens_per_day"], 100_000);
    assert!(budget["allowances"]["money_per_hour"].is_null(), "{budget}");
    assert_eq!(budget["allowances"]["classes"], serde_json::json!({}));

    // What the model cost, per hour and per NPC-hour, needs no token (the inspector reads it).
    let spend = until(port, "/llm/spend", |b| b.contains("\"npcs\":24"));
    let spend: serde_json::Value = serde_json::from_str(&spend).expect("json");
    assert_eq!(spend["npcs"], 24, "{spend}");
    assert_eq!(spend["calls"], 0, "no player, no model call: {spend}");
    assert_eq!(spend["per_npc_hour"]["tokens"], 0.0, "{spend}");
    let _ = std::fs::remove_dir_all(&dir);
}
