//! A private Redis Cluster for one test: `masters` `redis-server --cluster-enabled yes` on free
//! loopback ports, joined with `redis-cli --cluster create`, every node killed on drop.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use redis::cluster::{ClusterClient, ClusterConnection};

use crate::free_port;
use crate::redis_server::RedisServer;

/// A running cluster.
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
    /// `redis://127.0.0.1:PORT` of every master.
    pub urls: Vec<String>,
}

/// A free port whose cluster bus port (+10000) is free too.
fn free_cluster_port() -> u16 {
    loop {
        let port = free_port();
        if port < 55_000 && std::net::TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
}

fn node_answers(url: &str, command: &str) -> Option<String> {
    let client = redis::Client::open(url).ok()?;
    let mut connection = client.get_connection().ok()?;
    redis::cmd(command)
        .arg("INFO")
        .query::<String>(&mut connection)
        .ok()
}

impl RedisCluster {
    /// Starts `masters` nodes (cluster state files under `dir`) and waits until every node
    /// reports the cluster ok.
    pub fn start(masters: usize, dir: &Path) -> Self {
        let mut nodes = Vec::new();
        let mut urls = Vec::new();
        let mut addresses = Vec::new();
        for _ in 0..masters {
            let port = free_cluster_port();
            let url = format!("redis://127.0.0.1:{port}");
            let args = [
                "--port".to_owned(),
                port.to_string(),
                "--cluster-enabled".to_owned(),
                "yes".to_owned(),
                "--cluster-config-file".to_owned(),
                dir.join(format!("nodes-{port}.conf")).display().to_string(),
                "--cluster-node-timeout".to_owned(),
                "5000".to_owned(),
            ];
            let ready_url = url.clone();
            nodes.push(RedisServer::start_with(&args, url.clone(), move || {
                node_answers(&ready_url, "CLUSTER").is_some()
            }));
            urls.push(url);
            addresses.push(format!("127.0.0.1:{port}"));
        }
        let created = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("redis-cli is installed (apt-get install -y redis-tools)");
        assert!(
            created.status.success(),
            "redis-cli --cluster create: {}",
            String::from_utf8_lossy(&created.stdout)
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if urls.iter().all(|url| {
                node_answers(url, "CLUSTER").is_some_and(|info| info.contains("cluster_state:ok"))
            }) {
                return Self { nodes, urls };
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the cluster did not come up");
    }

    /// A connection routing by key slot.
    pub fn connection(&self) -> ClusterConnection {
        ClusterClient::new(self.urls.clone())
            .expect("cluster client")
            .get_connection()
            .expect("cluster connection")
    }

    /// Empties every master.
    pub fn flush_all(&self) {
        for url in &self.urls {
            let client = redis::Client::open(url.as_str()).expect("url");
            let mut connection = client.get_connection().expect("connection");
            redis::cmd("FLUSHALL")
                .query::<()>(&mut connection)
                .expect("flushall");
        }
    }

    /// How many masters hold at least one key matching `pattern` (zones spread over shards).
    pub fn masters_holding(&self, pattern: &str) -> usize {
        self.urls
            .iter()
            .filter(|url| {
                let client = redis::Client::open(url.as_str()).expect("url");
                let mut connection = client.get_connection().expect("connection");
                let keys: Vec<String> = redis::cmd("KEYS")
                    .arg(pattern)
                    .query(&mut connection)
                    .unwrap_or_default();
                !keys.is_empty()
            })
            .count()
    }

    /// The number of masters (every node is one).
    pub fn masters(&self) -> usize {
        self.nodes.len()
    }
}
