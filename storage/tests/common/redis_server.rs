//! A private `redis-server` on a free loopback port, killed on drop; or the server named by
//! `REDIS_URL`, which must be on loopback.

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    child: Option<Child>,
    pub url: String,
}

impl RedisServer {
    pub fn start() -> Self {
        if let Ok(url) = std::env::var("REDIS_URL") {
            let host = url
                .trim_start_matches("redis://")
                .split(['/', ':'])
                .next()
                .unwrap_or_default()
                .rsplit('@')
                .next()
                .unwrap_or_default()
                .to_owned();
            assert!(
                matches!(host.as_str(), "127.0.0.1" | "localhost" | "[::1]"),
                "REDIS_URL must point at loopback, got host {host:?}"
            );
            return Self { child: None, url };
        }
        Self::start_on(free_port())
    }

    /// A private server on `port` (a restart of one that was stopped, say).
    pub fn start_on(port: u16) -> Self {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server is installed");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not start on port {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            child: Some(child),
            url: format!("redis://127.0.0.1:{port}/"),
        }
    }
}

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
