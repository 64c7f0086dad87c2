//! End-to-end hardening (issue 13) against private `redis-server`s on free loopback ports:
//! AUTH from the URL (an ACL user and `requirepass`) and from a password file, a refused AUTH
//! stopping `geppetto serve` with a clear error that never shows the password, and `rediss://`
//! (TLS) with a CA file, the certificates made by `openssl` for the test.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use geppetto_service::bus::redis::{RedisBus, RedisBusConfig};
use geppetto_service::bus::{BusError, EventBus, StreamKind};
use support::free_port;
use support::redis_server::RedisServer;

const ZONE: &str = "vault";
const ADMIN_PASSWORD: &str = "requirepass-Qx7-secret";
const ALICE_PASSWORD: &str = "alice-Zr4-secret";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("geppetto-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A Redis that wants a password: `requirepass` for the default user and an ACL user `alice`.
fn auth_server() -> RedisServer {
    let port = free_port();
    let url = format!("redis://:{ADMIN_PASSWORD}@127.0.0.1:{port}/");
    let ping = url.clone();
    RedisServer::start_with(
        &[
            "--port".into(),
            port.to_string(),
            "--requirepass".into(),
            ADMIN_PASSWORD.into(),
            "--user".into(),
            "alice".into(),
            "on".into(),
            format!(">{ALICE_PASSWORD}"),
            "~*".into(),
            "&*".into(),
            "+@all".into(),
        ],
        url,
        move || {
            redis::Client::open(ping.as_str())
                .expect("url")
                .get_connection()
                .is_ok_and(|mut c| redis::cmd("PING").query::<String>(&mut c).is_ok())
        },
    )
}

fn port_of(url: &str) -> u16 {
    url.rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok())
        .expect("port")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// Connects with `config`, publishes one message and reads it back through a consumer group
/// on the same server: the bus works end to end.
fn round_trip(config: RedisBusConfig) -> Result<String, BusError> {
    runtime().block_on(async move {
        let bus: Arc<dyn EventBus> = Arc::new(RedisBus::connect(config).await?);
        let mut consumer = bus.consumer(ZONE, StreamKind::World, "g", "c").await?;
        bus.publish(ZONE, StreamKind::World, "hello".into());
        bus.flush().await?;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let batch = consumer.next_batch(10, Duration::from_millis(100)).await?;
            if let Some(delivery) = batch.into_iter().next() {
                return Ok(delivery.body);
            }
            assert!(Instant::now() < deadline, "nothing read back");
        }
    })
}

fn config(url: String) -> RedisBusConfig {
    RedisBusConfig {
        url,
        read_block_ms: 100,
        // A variable no test sets: the URL or the file decides.
        password_env: "GEPPETTO_TEST_REDIS_PASSWORD_NEVER_SET".into(),
        ..RedisBusConfig::default()
    }
}

#[test]
fn auth_works_from_the_url_and_from_a_password_file() {
    let server = auth_server();
    let port = port_of(&server.url);
    // An ACL user with its password in the URL.
    let alice = format!("redis://alice:{ALICE_PASSWORD}@127.0.0.1:{port}/");
    assert_eq!(round_trip(config(alice)).expect("alice"), "hello");
    // `requirepass`, the password from a file beside a URL without one.
    let dir = temp_dir("redis-password");
    let file = dir.join("password");
    std::fs::write(&file, format!("{ADMIN_PASSWORD}\n")).expect("password file");
    let from_file = RedisBusConfig {
        password_file: Some(file),
        ..config(format!("redis://127.0.0.1:{port}/"))
    };
    assert_eq!(round_trip(from_file).expect("from file"), "hello");
    // No password: refused, and the error says so.
    let refused = round_trip(config(format!("redis://127.0.0.1:{port}/")))
        .expect_err("no password")
        .to_string();
    assert!(
        refused.contains("NOAUTH") || refused.contains("uthentication"),
        "{refused}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `geppetto serve` on the config `text` (written into `dir`) with `env`, expecting it
/// to stop with exit 1; its stderr and stdout together.
fn serve_refused(dir: &Path, text: &str, env: &[(&str, &str)]) -> String {
    let config = dir.join("serve.toml");
    std::fs::write(&config, text).expect("config");
    let output = Command::new(env!("CARGO_BIN_EXE_geppetto"))
        .args(["serve", "--config"])
        .arg(&config)
        .env("RUST_LOG", "debug")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("serve runs");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    assert_eq!(output.status.code(), Some(1), "{printed}");
    printed
}

#[test]
fn serve_stops_with_a_clear_error_when_redis_refuses_auth_and_never_shows_the_password() {
    let server = auth_server();
    let port = port_of(&server.url);
    let dir = temp_dir("serve-auth");
    let world = format!("{}/../config/worlds/village", env!("CARGO_MANIFEST_DIR"));
    let wrong = "wrong-Pw9-secret";
    let head = format!("worlds = ['{world}']\n[admin]\naddress = ''\n[bus]\nkind = 'redis'\n");
    // The password in the URL.
    let url = format!("redis://alice:{wrong}@127.0.0.1:{port}/");
    let printed = serve_refused(&dir, &format!("{head}[bus.redis]\nurl = '{url}'\n"), &[]);
    assert!(
        printed.contains("Password authentication failed"),
        "{printed}"
    );
    assert!(
        printed.contains(&format!("redis://alice:***@127.0.0.1:{port}/")),
        "names the server without its password: {printed}"
    );
    assert!(!printed.contains(wrong), "the password leaked: {printed}");
    // The password from the environment, replacing the URL's.
    let url = format!("redis://alice@127.0.0.1:{port}/");
    let text =
        format!("{head}[bus.redis]\nurl = '{url}'\npassword_env = 'GEPPETTO_TEST_REDIS_PW'\n");
    let printed = serve_refused(&dir, &text, &[("GEPPETTO_TEST_REDIS_PW", wrong)]);
    assert!(
        printed.contains("Password authentication failed"),
        "{printed}"
    );
    assert!(!printed.contains(wrong), "the password leaked: {printed}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn openssl(dir: &Path, args: &[&str]) {
    let status = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("openssl is installed (apt-get install -y openssl)");
    assert!(status.success(), "openssl {args:?}");
}

/// A CA and a server certificate it signed for 127.0.0.1, made for this test.
fn certificates(dir: &Path) {
    let key = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec![
        "req",
        "-x509",
        "-days",
        "1",
        "-subj",
        "/CN=geppetto-test-ca",
    ];
    ca.extend(key);
    ca.extend(["-keyout", "ca.key", "-out", "ca.pem"]);
    openssl(dir, &ca);
    let mut csr = vec!["req", "-new", "-subj", "/CN=localhost"];
    csr.extend(key);
    csr.extend(["-keyout", "server.key", "-out", "server.csr"]);
    openssl(dir, &csr);
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .expect("ext");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            "san.ext",
            "-out",
            "server.pem",
        ],
    );
}

#[test]
fn rediss_connects_over_tls_with_a_ca_file() {
    let dir = temp_dir("redis-tls");
    certificates(&dir);
    let port = free_port();
    let file = |name: &str| dir.join(name).display().to_string();
    let _server = RedisServer::start_with(
        &[
            "--port".into(),
            "0".into(),
            "--tls-port".into(),
            port.to_string(),
            "--tls-cert-file".into(),
            file("server.pem"),
            "--tls-key-file".into(),
            file("server.key"),
            "--tls-ca-cert-file".into(),
            file("ca.pem"),
            "--tls-auth-clients".into(),
            "no".into(),
        ],
        format!("rediss://127.0.0.1:{port}/"),
        || TcpStream::connect(("127.0.0.1", port)).is_ok(),
    );
    let tls = RedisBusConfig {
        tls_ca_file: Some(dir.join("ca.pem")),
        ..config(format!("rediss://127.0.0.1:{port}/"))
    };
    assert_eq!(round_trip(tls).expect("over TLS"), "hello");
    // Without the CA the server's certificate is not trusted: refused, not silently accepted.
    let untrusted = round_trip(config(format!("rediss://127.0.0.1:{port}/")));
    assert!(untrusted.is_err(), "an unknown CA must not be trusted");
    let _ = std::fs::remove_dir_all(&dir);
}
