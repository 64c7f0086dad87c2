//! A private `redis-server` on a loopback port for one test, killed on drop; or the server
//! named by `REDIS_URL`, which must be on loopback (any other host fails the test).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::free_port;

/// A running Redis for one test.
pub struct RedisServer {
    child: Option<Child>,
    /// Its URL.
    pub url: String,
}

/// The host of a `redis://` or `rediss://` URL: what follows any credentials, before the
/// port and the path (an IPv6 host keeps its brackets).
fn host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if host_port.starts_with('[') {
        host_port
            .split_once(']')
            .map_or(host_port, |(host, _)| &host_port[..=host.len()])
    } else {
        host_port.split(':').next().unwrap_or_default()
    }
}

impl RedisServer {
    /// Starts one on a free port (or uses `REDIS_URL`, which must be on loopback), waiting
    /// until it answers PING.
    pub fn start() -> Self {
        if let Ok(url) = std::env::var("REDIS_URL") {
            let host = host(&url);
            assert!(
                matches!(host, "127.0.0.1" | "localhost" | "[::1]"),
                "REDIS_URL must point at loopback, got host {host:?}"
            );
            return Self { child: None, url };
        }
        Self::start_on(free_port())
    }

    /// A private one on `port` (a restart of one that was stopped, say), waiting until it
    /// answers PING.
    pub fn start_on(port: u16) -> Self {
        let url = format!("redis://127.0.0.1:{port}/");
        let ping = url.clone();
        Self::start_with(&["--port".into(), port.to_string()], url, move || {
            redis::Client::open(ping.as_str())
                .expect("url")
                .get_connection()
                .is_ok_and(|mut c| redis::cmd("PING").query::<String>(&mut c).is_ok())
        })
    }

    /// Starts a private one with `args` (its ports among them) on loopback, known as `url`,
    /// waiting until `ready` holds.
    pub fn start_with(args: &[String], url: String, ready: impl Fn() -> bool) -> Self {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no"])
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
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if ready() {
                return server;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server {args:?} did not start");
    }

    /// Shuts a private server down as an operator does (`SHUTDOWN`: an append-only file is
    /// complete first) and waits for it to exit.
    pub fn shutdown(mut self) {
        let mut child = self
            .child
            .take()
            .expect("only a private redis-server is shut down");
        if let Ok(mut c) = redis::Client::open(self.url.as_str()).and_then(|c| c.get_connection()) {
            let _ = redis::cmd("SHUTDOWN").query::<()>(&mut c);
        }
        let _ = child.wait();
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
        self.xadd_bytes(key, body.as_bytes());
    }

    /// Appends raw bytes (UTF-8 or not) to a stream.
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

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::host;

    #[test]
    fn the_host_is_what_follows_the_credentials_and_precedes_the_port() {
        assert_eq!(host("redis://127.0.0.1:6379/"), "127.0.0.1");
        assert_eq!(host("redis://localhost"), "localhost");
        assert_eq!(host("rediss://alice:pw@[::1]:6380/0"), "[::1]");
        assert_eq!(host("redis://:secret@127.0.0.1:6379/"), "127.0.0.1");
        assert_eq!(host("redis://127.0.0.1:x@example.com:6379/"), "example.com");
        assert_eq!(host("redis://localhost@example.com/"), "example.com");
        assert_eq!(host("redis://10.0.0.5:6379"), "10.0.0.5");
    }
}
