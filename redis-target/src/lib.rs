//! How geppetto reaches Redis: one server ([`RedisTarget::Server`]) or a Redis Cluster
//! ([`RedisTarget::Cluster`]), from the same code.
//!
//! Owns the choice of connection kind and the [`RedisConnection`] that hides it: every user
//! (the snapshot store of `geppetto-storage`, the event bus and the zone leases of the service)
//! sends commands,
//! pipelines and scripts through `redis::aio::ConnectionLike` and never asks which kind it has.
//! With a cluster, commands are routed by key slot; geppetto's keys carry the zone as a hash tag
//! (`geppetto:{zone}:…`), so everything one script or pipeline touches lives on one shard.
//!
//! Two kinds of connection are handed out: a *shared* one that reconnects by itself (a
//! `ConnectionManager`, or a cluster connection, which reconnects per node) for short commands,
//! and a *dedicated* one for a caller that blocks (`XREADGROUP … BLOCK`), so its wait never
//! stalls anyone else's commands.

use std::time::Duration;

use redis::aio::{
    ConnectionLike, ConnectionManager, ConnectionManagerConfig, MultiplexedConnection,
};
use redis::cluster::{ClusterClient, ClusterConfig};
use redis::cluster_async::ClusterConnection;
use redis::{AsyncConnectionConfig, Client, Cmd, Pipeline, RedisFuture, RedisResult, Value};

/// Where Redis is.
#[derive(Clone)]
pub enum RedisTarget {
    /// One server.
    Server(Box<Client>),
    /// A Redis Cluster.
    Cluster {
        /// The client.
        client: Box<ClusterClient>,
        /// Its seed nodes as configured, host:port (for messages).
        seeds: String,
    },
}

impl std::fmt::Debug for RedisTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Timeouts and retries of a shared connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedSettings {
    /// How long a reply may take.
    pub response_timeout: Duration,
    /// How long connecting may take.
    pub connection_timeout: Duration,
    /// Reconnect attempts before a command fails.
    pub retries: usize,
}

impl RedisTarget {
    /// Host and port of the server, or of every seed node of the cluster (no credentials).
    pub fn describe(&self) -> String {
        match self {
            Self::Server(client) => client.get_connection_info().addr().to_string(),
            Self::Cluster { seeds, .. } => format!("redis cluster {seeds}"),
        }
    }

    /// A connection that reconnects by itself, for short commands; clones share it.
    pub async fn shared(&self, settings: SharedSettings) -> RedisResult<RedisConnection> {
        match self {
            Self::Server(client) => {
                let config = ConnectionManagerConfig::new()
                    .set_response_timeout(Some(settings.response_timeout))
                    .set_connection_timeout(Some(settings.connection_timeout))
                    .set_number_of_retries(settings.retries);
                Ok(RedisConnection::Managed(
                    client.get_connection_manager_with_config(config).await?,
                ))
            }
            Self::Cluster { client, .. } => Ok(RedisConnection::Cluster(
                client
                    .get_async_connection_with_config(
                        ClusterConfig::new()
                            .set_response_timeout(settings.response_timeout)
                            .set_connection_timeout(settings.connection_timeout),
                    )
                    .await?,
            )),
        }
    }

    /// A connection of the caller's own (never shared with another user), whose replies may
    /// take up to `response_timeout` — for a blocking read.
    pub async fn dedicated(&self, response_timeout: Duration) -> RedisResult<RedisConnection> {
        match self {
            Self::Server(client) => {
                let config =
                    AsyncConnectionConfig::new().set_response_timeout(Some(response_timeout));
                Ok(RedisConnection::Multiplexed(
                    client
                        .get_multiplexed_async_connection_with_config(&config)
                        .await?,
                ))
            }
            Self::Cluster { client, .. } => Ok(RedisConnection::Cluster(
                client
                    .get_async_connection_with_config(
                        ClusterConfig::new().set_response_timeout(response_timeout),
                    )
                    .await?,
            )),
        }
    }
}

/// A connection to a server or a cluster.
#[derive(Clone)]
pub enum RedisConnection {
    /// A plain multiplexed connection to one server (dedicated use).
    Multiplexed(MultiplexedConnection),
    /// A reconnecting connection to one server.
    Managed(ConnectionManager),
    /// A cluster connection (routes by slot, reconnects per node).
    Cluster(ClusterConnection),
}

impl ConnectionLike for RedisConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Multiplexed(c) => c.req_packed_command(cmd),
            Self::Managed(c) => c.req_packed_command(cmd),
            Self::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Multiplexed(c) => c.req_packed_commands(pipeline, offset, count),
            Self::Managed(c) => c.req_packed_commands(pipeline, offset, count),
            Self::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Multiplexed(c) => c.get_db(),
            Self::Managed(c) => c.get_db(),
            Self::Cluster(c) => c.get_db(),
        }
    }
}
