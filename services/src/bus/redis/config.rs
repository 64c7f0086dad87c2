//! The Redis bus's settings (`[bus.redis]`) and where they point: the server or the cluster's
//! seed nodes with the password and CA they name ([`target_for`]), how they are shown with
//! passwords hidden, the TCP settings of every connection and the reconnect back-off.

use std::path::PathBuf;
use std::time::Duration;

use geppetto_llm::read_secret;
use geppetto_redis_target::RedisTarget;
use redis::cluster::ClusterClientBuilder;
use redis::{Client, IntoConnectionInfo, RedisError, TlsCertificates};
use serde::Deserialize;

use crate::bus::BusError;

/// Settings of the Redis bus (`[bus.redis]` in `geppetto.toml`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RedisBusConfig {
    /// Server URL (loopback by default): `redis://` or `rediss://` (TLS), with
    /// `user:password@` for AUTH when the password may sit in the config file.
    pub url: String,
    /// Seed nodes of a Redis Cluster (`redis://host:port` each); when given, the bus, the
    /// snapshot store and the zone leases use the cluster and `url` is not used. Default none.
    pub cluster_nodes: Vec<String>,
    /// Environment variable holding the AUTH password; when set it replaces the URL's.
    /// Default `GEPPETTO_REDIS_PASSWORD`.
    pub password_env: String,
    /// A file holding the AUTH password instead (relative to the config file); it wins over
    /// `password_env`. Default none.
    pub password_file: Option<PathBuf>,
    /// PEM file of the CA that signed the server's certificate, for `rediss://` to a server
    /// whose certificate the system's trust store does not know. Default none (system roots).
    pub tls_ca_file: Option<PathBuf>,
    /// Approximate length each stream is trimmed to (`XADD MAXLEN ~`).
    pub stream_maxlen: usize,
    /// Messages the outbound buffer holds before it drops; also how many of a zone's outputs
    /// the server refused are kept for its next round trip.
    pub outbound_buffer_messages: usize,
    /// Messages the writer task writes per pipeline.
    pub write_batch_messages: usize,
    /// How long a consumer's `XREADGROUP` blocks, milliseconds.
    pub read_block_ms: u64,
    /// Added to `read_block_ms` for a consumer connection's response timeout, milliseconds.
    pub response_timeout_margin_ms: u64,
    /// Pending entries idle this long are claimed from dead consumers, milliseconds.
    pub claim_min_idle_ms: u64,
    /// A consumer tries `XAUTOCLAIM` once every this many reads.
    pub claim_every_reads: u32,
    /// First reconnect delay, milliseconds.
    pub reconnect_backoff_initial_ms: u64,
    /// Longest reconnect delay, milliseconds.
    pub reconnect_backoff_max_ms: u64,
}

impl Default for RedisBusConfig {
    fn default() -> Self {
        Self {
            url: "redis://127.0.0.1:6379/".into(),
            cluster_nodes: Vec::new(),
            password_env: "GEPPETTO_REDIS_PASSWORD".into(),
            password_file: None,
            tls_ca_file: None,
            stream_maxlen: 100_000,
            outbound_buffer_messages: 65_536,
            write_batch_messages: 256,
            read_block_ms: 1_000,
            response_timeout_margin_ms: 2_000,
            claim_min_idle_ms: 30_000,
            claim_every_reads: 100,
            reconnect_backoff_initial_ms: 50,
            reconnect_backoff_max_ms: 5_000,
        }
    }
}

pub(super) fn redis_error<'a>(
    operation: &'static str,
    key: &'a str,
) -> impl FnOnce(RedisError) -> BusError + 'a {
    move |source| BusError::Redis {
        operation,
        key: key.to_owned(),
        source,
    }
}

/// `url` with the password of its `user:password@` part replaced by `***`: the form errors
/// and logs show.
pub fn redacted_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or("", |(user, _)| user);
            format!("{scheme}://{user}:***@{host}{path}")
        }
        None => url.to_owned(),
    }
}

/// The server (its URL) or the cluster's seed nodes of `config`, passwords as `***`: how errors
/// and logs name them.
pub(super) fn shown_servers(config: &RedisBusConfig) -> String {
    if config.cluster_nodes.is_empty() {
        redacted_url(&config.url)
    } else {
        config
            .cluster_nodes
            .iter()
            .map(|node| redacted_url(node))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Where `config` points — the server of `url`, or the cluster of `cluster_nodes` — with the
/// password from `password_file` / `password_env` when one is set there and the CA of
/// `tls_ca_file` for `rediss://`. The snapshot store and the zone leases use the same.
pub fn target_for(config: &RedisBusConfig) -> Result<RedisTarget, BusError> {
    let password = read_secret(&config.password_env, config.password_file.as_deref())
        .map_err(|e| BusError::Config(format!("bus.redis.password_file: {e}")))?;
    let certificates = match &config.tls_ca_file {
        None => None,
        Some(file) => Some(TlsCertificates {
            client_tls: None,
            root_cert: Some(std::fs::read(file).map_err(|e| {
                BusError::Config(format!("bus.redis.tls_ca_file {}: {e}", file.display()))
            })?),
        }),
    };
    if config.cluster_nodes.is_empty() {
        return server_client(config, password, certificates)
            .map(|client| RedisTarget::Server(Box::new(client)));
    }
    let seeds = shown_servers(config);
    let mut builder = ClusterClientBuilder::new(config.cluster_nodes.iter().map(String::as_str))
        .tcp_settings(tcp_settings());
    if let Some(password) = password {
        builder = builder.password(password.expose());
    }
    if let Some(certificates) = certificates {
        builder = builder.certs(certificates);
    }
    let client = builder.build().map_err(redis_error("open", &seeds))?;
    Ok(RedisTarget::Cluster {
        client: Box::new(client),
        seeds,
    })
}

/// How every connection of the bus uses TCP: `TCP_NODELAY`, as Redis clients usually do
/// (redis-rs leaves Nagle's algorithm on, which can hold a request's last bytes back until the
/// server acknowledges the ones before).
pub fn tcp_settings() -> redis::io::tcp::TcpSettings {
    redis::io::tcp::TcpSettings::default().set_nodelay(true)
}

/// The client of one server: `config.url` with `password` and the CA of `certificates`.
fn server_client(
    config: &RedisBusConfig,
    password: Option<geppetto_llm::Secret>,
    certificates: Option<TlsCertificates>,
) -> Result<Client, BusError> {
    let shown = redacted_url(&config.url);
    let mut info = config
        .url
        .as_str()
        .into_connection_info()
        .map_err(redis_error("open", &shown))?
        .set_tcp_settings(tcp_settings());
    if let Some(password) = password {
        let settings = info
            .redis_settings()
            .clone()
            .set_password(password.expose());
        info = info.set_redis_settings(settings);
    }
    match certificates {
        None => Client::open(info),
        Some(certificates) => Client::build_with_tls(info, certificates),
    }
    .map_err(redis_error("open", &shown))
}

/// The delay before reconnect attempt `attempt` (from 0): doubling from the first, at most the
/// longest.
pub(super) fn backoff(config: &RedisBusConfig, attempt: u32) -> Duration {
    let factor = 1u64 << attempt.min(16);
    Duration::from_millis(
        config
            .reconnect_backoff_initial_ms
            .saturating_mul(factor)
            .min(config.reconnect_backoff_max_ms),
    )
}
