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
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server is installed (apt-get install -y redis-server)");
        let url = format!("redis://127.0.0.1:{port}/");
        // Owned by the guard at once, so the child is killed and reaped on every path.
        let server = Self {
            child: Some(child),
            url,
        };
        let client = redis::Client::open(server.url.as_str()).expect("url");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let answered = client
                .get_connection()
                .is_ok_and(|mut c| redis::cmd("PING").query::<String>(&mut c).is_ok());
            if answered {
                return server;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server on port {port} did not start");
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
    pub fn xadd(&self, key: &str, body: &str) {
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

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
