//! A private `redis-server` on a free loopback port for one test, killed on drop; or the server
//! named by `REDIS_URL` (loopback only) when set.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running Redis for one test.
pub struct RedisServer {
    child: Option<Child>,
    /// Its URL.
    pub url: String,
}

impl RedisServer {
    /// Starts one (or uses `REDIS_URL`), waiting until it answers PING.
    pub fn start() -> Self {
        if let Ok(url) = std::env::var("REDIS_URL") {
            assert!(
                url.contains("127.0.0.1") || url.contains("localhost"),
                "REDIS_URL must be a loopback address"
            );
            return Self { child: None, url };
        }
        let port = free_port();
        Self::start_with(
            &["--port".into(), port.to_string()],
            format!("redis://127.0.0.1:{port}/"),
            || {
                redis::Client::open(format!("redis://127.0.0.1:{port}/"))
                    .expect("url")
                    .get_connection()
                    .is_ok_and(|mut c| redis::cmd("PING").query::<String>(&mut c).is_ok())
            },
        )
    }

    /// Starts a private one with `args` (its ports among them) on loopback, known as `url`,
    /// waiting until `ready` holds.
    pub fn start_with(args: &[String], url: String, ready: impl Fn() -> bool) -> Self {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server is installed (apt-get install -y redis-server)");
        // Owned by the guard at once, so the child is killed and reaped on every path.
        let server = Self {
            child: Some(child),
            url,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if ready() {
                return server;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server {args:?} did not start");
    }

    /// Every entry body of a stream, oldest first.
    pub fn bodies(&self, key: &str) -> Vec<String> {
        let client = redis::Client::open(self.url.as_str()).expect("url");
        let mut c = client.get_connection().expect("connection");
        let reply: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
            .arg(key)
            .arg("-")
            .arg("+")
            .query(&mut c)
            .expect("xrange");
        reply
            .ids
            .into_iter()
            .filter_map(|e| e.get::<String>("m"))
            .collect()
    }

    /// Appends a raw body to a stream, as a game server would.
    #[allow(dead_code)]
    pub fn xadd(&self, key: &str, body: &str) {
        self.xadd_bytes(key, body.as_bytes());
    }

    /// Appends raw bytes (UTF-8 or not) to a stream.
    #[allow(dead_code)]
    pub fn xadd_bytes(&self, key: &str, body: &[u8]) {
        let client = redis::Client::open(self.url.as_str()).expect("url");
        let mut c = client.get_connection().expect("connection");
        redis::cmd("XADD")
            .arg(key)
            .arg("*")
            .arg("m")
            .arg(body)
            .query::<String>(&mut c)
            .expect("xadd");
    }
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
