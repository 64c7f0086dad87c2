//! The shared-deployment snapshot store: snapshots in Redis.
//!
//! Owns the Redis side of the `SnapshotStore` contract and its key layout. Per zone:
//!
//! - `{prefix}:{zone}:snapshot:<sequence, 20 digits>`: the encoded snapshot, which carries the
//!   stream id it covers (`last_event_id`) in its header — one value, so the snapshot and its
//!   stream id are written together or not at all;
//! - `{prefix}:{zone}:snapshot:index`: a sorted set of the zero-padded sequences (all scored 0,
//!   so they sort lexically, which for equal-length digits is numerically).
//!
//! The zone is the Redis Cluster hash tag, so a zone's snapshots and its streams
//! (`geppetto:{zone}:world`) live on one shard. `put` runs one Lua script: the monotonic check,
//! the write, the index update and the pruning happen atomically. The connection sets its
//! response timeout from config (redis-rs would time out after 500 ms).
//!
//! A zone held under a lease is *fenced* ([`RedisSnapshotStore::fence`]): its `put` script first
//! checks that the lease key still holds this instance's value, so an instance that lost the
//! zone while paused cannot write a snapshot over the new owner's. Every call that fails on a
//! dropped connection (a Redis restart leaves the shared connection stale: `broken pipe`) is
//! sent once more on the re-established connection; a `put` whose first attempt may have
//! landed is recognised on the second by its identical stored bytes.
//!
//! It does not own the world stream (the event bus does) and does not set Redis persistence:
//! snapshots are as durable as the server's AOF/RDB settings make them.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use geppetto_redis_target::{RedisConnection, RedisTarget, SharedSettings};
use redis::{Client, RedisError, Script};

use crate::config::{ConfigError, StorageConfig};
use crate::lease_fence::LeaseFence;
use crate::snapshot::{MAX_HEADER_BYTES, Snapshot, SnapshotDefect, SnapshotHeader};
use crate::store::{
    LatestValid, ListedSnapshot, PutOutcome, SnapshotError, SnapshotStore, StoreFuture,
    accept_or_skip, decode_for_get, encode_for_put,
};
use crate::zone::ZoneName;

/// Checks the lease (when fenced) and the sequence, writes the snapshot, indexes it and prunes,
/// atomically. KEYS: index, snapshot key, and the lease key when fenced. ARGV: member, bytes,
/// keep, snapshot key prefix, and the lease value held when fenced. Reply: `{"fenced"}`,
/// `{"stale", newest}` or `{"ok", removed members…}`. The pruned keys and the lease share the
/// zone's hash tag, so they are on the script's shard.
const PUT_SCRIPT: &str = r"
if KEYS[3] ~= nil and redis.call('GET', KEYS[3]) ~= ARGV[5] then
  return {'fenced'}
end
local newest = redis.call('ZRANGE', KEYS[1], -1, -1)
if newest[1] ~= nil and newest[1] >= ARGV[1] then
  return {'stale', newest[1]}
end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[1], 0, ARGV[1])
local reply = {'ok'}
local excess = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if excess > 0 then
  local removed = redis.call('ZRANGE', KEYS[1], 0, excess - 1)
  for _, member in ipairs(removed) do
    redis.call('DEL', ARGV[4] .. member)
    table.insert(reply, member)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, excess - 1)
end
return reply
";

/// Removes all but the newest ARGV[1] snapshots. KEYS: index. ARGV: keep, snapshot key prefix.
/// Reply: the removed members, oldest first.
const PRUNE_SCRIPT: &str = r"
local reply = {}
local excess = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[1])
if excess > 0 then
  local removed = redis.call('ZRANGE', KEYS[1], 0, excess - 1)
  for _, member in ipairs(removed) do
    redis.call('DEL', ARGV[2] .. member)
    table.insert(reply, member)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, excess - 1)
end
return reply
";

/// Snapshots in Redis, shared by every service instance.
#[derive(Clone)]
pub struct RedisSnapshotStore {
    connection: RedisConnection,
    key_prefix: String,
    snapshots_kept_per_zone: usize,
    put_script: Script,
    prune_script: Script,
    /// The lease each fenced zone's snapshots are checked against; shared by clones.
    fences: Arc<RwLock<HashMap<ZoneName, LeaseFence>>>,
}

impl std::fmt::Debug for RedisSnapshotStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSnapshotStore")
            .field("key_prefix", &self.key_prefix)
            .field("snapshots_kept_per_zone", &self.snapshots_kept_per_zone)
            .finish_non_exhaustive()
    }
}

/// The Redis store cannot start.
#[derive(Debug, thiserror::Error)]
pub enum RedisConnectError {
    /// The storage config is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The URL is not a Redis URL.
    #[error("invalid redis URL: {source}")]
    InvalidUrl {
        /// redis-rs's error.
        source: Box<redis::RedisError>,
    },
    /// The server cannot be reached.
    #[error("redis at {address}: cannot connect: {source}")]
    Connect {
        /// Host and port (no credentials).
        address: String,
        /// redis-rs's error.
        source: Box<redis::RedisError>,
    },
}

impl RedisSnapshotStore {
    /// Connects to the server at `url` with the timeouts and retries of `config.redis`.
    pub async fn connect(url: &str, config: &StorageConfig) -> Result<Self, RedisConnectError> {
        let client = Client::open(url).map_err(|source| RedisConnectError::InvalidUrl {
            source: Box::new(source),
        })?;
        Self::with_client(client, config).await
    }

    /// Connects through `client` (built by the caller with its credentials and TLS roots, as
    /// the service's bus does) with the timeouts and retries of `config.redis`.
    pub async fn with_client(
        client: Client,
        config: &StorageConfig,
    ) -> Result<Self, RedisConnectError> {
        Self::with_target(RedisTarget::Server(Box::new(client)), config).await
    }

    /// Connects to `target` — one server or a cluster — with the timeouts and retries of
    /// `config.redis`.
    pub async fn with_target(
        target: RedisTarget,
        config: &StorageConfig,
    ) -> Result<Self, RedisConnectError> {
        config.validate()?;
        let settings = SharedSettings {
            response_timeout: Duration::from_millis(config.redis.response_timeout_ms),
            connection_timeout: Duration::from_millis(config.redis.connection_timeout_ms),
            retries: config.redis.reconnect_retries,
        };
        let connection =
            target
                .shared(settings)
                .await
                .map_err(|source| RedisConnectError::Connect {
                    address: target.describe(),
                    source: Box::new(source),
                })?;
        Ok(Self {
            connection,
            key_prefix: config.redis.key_prefix.clone(),
            snapshots_kept_per_zone: config.snapshots_kept_per_zone,
            put_script: Script::new(PUT_SCRIPT),
            prune_script: Script::new(PRUNE_SCRIPT),
            fences: Arc::default(),
        })
    }

    /// From now on `zone`'s snapshots are written only while `fence` holds (this instance took
    /// the zone's lease); a `put` that finds the lease gone writes nothing, marks the fence
    /// lost and fails with [`SnapshotError::Fenced`].
    pub fn fence(&self, zone: &ZoneName, fence: LeaseFence) {
        self.fences
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(zone.clone(), fence);
    }

    /// `zone` was released or lost here: no snapshot of it is written any more.
    pub fn unfence(&self, zone: &ZoneName) {
        if let Some(fence) = self
            .fences
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(zone)
        {
            fence.token.clear();
            fence.mark_lost();
        }
    }

    fn fence_of(&self, zone: &ZoneName) -> Option<LeaseFence> {
        self.fences
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(zone)
            .cloned()
    }

    /// `{prefix}:{zone}:snapshot:` — the common start of a zone's snapshot keys.
    fn key_base(&self, zone: &ZoneName) -> String {
        format!("{}:{{{zone}}}:snapshot:", self.key_prefix)
    }

    fn index_key(&self, zone: &ZoneName) -> String {
        format!("{}index", self.key_base(zone))
    }

    fn snapshot_key(&self, zone: &ZoneName, sequence: u64) -> String {
        format!("{}{}", self.key_base(zone), member(sequence))
    }

    /// The zone's sequences, oldest first.
    async fn sequences(
        &self,
        zone: &ZoneName,
        operation: &'static str,
    ) -> Result<Vec<u64>, SnapshotError> {
        let index = self.index_key(zone);
        let members: Vec<String> = once_more(&index, operation, || {
            let mut connection = self.connection.clone();
            let index = &index;
            async move {
                redis::cmd("ZRANGE")
                    .arg(index)
                    .arg(0)
                    .arg(-1)
                    .query_async(&mut connection)
                    .await
            }
        })
        .await?;
        members
            .iter()
            .map(|member| parse_member(&index, member))
            .collect()
    }

    async fn fetch(
        &self,
        key: &str,
        operation: &'static str,
    ) -> Result<Option<Vec<u8>>, SnapshotError> {
        once_more(key, operation, || {
            let mut connection = self.connection.clone();
            async move {
                redis::cmd("GET")
                    .arg(key)
                    .query_async(&mut connection)
                    .await
            }
        })
        .await
    }

    async fn put_now(&self, snapshot: Snapshot) -> Result<PutOutcome, SnapshotError> {
        let zone = &snapshot.zone;
        let bytes = encode_for_put(&snapshot)?;
        let index = self.index_key(zone);
        let key = self.snapshot_key(zone, snapshot.sequence);
        let fence = self.fence_of(zone);
        if let Some(fence) = &fence
            && !fence.may_write()
        {
            return Err(fenced(zone, fence));
        }
        let mut first_failed = false;
        let reply = once_more(&index, "put", || {
            let mut invocation = self.put_script.key(&index);
            invocation
                .key(&key)
                .arg(member(snapshot.sequence))
                .arg(bytes.as_slice())
                .arg(self.snapshots_kept_per_zone)
                .arg(self.key_base(zone));
            if let Some(fence) = &fence {
                invocation.key(&fence.lease_key).arg(&fence.token);
            }
            let mut connection = self.connection.clone();
            let attempt_after_failure = first_failed;
            first_failed = true;
            async move {
                let reply: Vec<String> = invocation.invoke_async(&mut connection).await?;
                Ok((reply, attempt_after_failure))
            }
        })
        .await?;
        let (reply, retried) = reply;
        match reply.split_first() {
            Some((status, removed)) if status == "ok" => Ok(PutOutcome {
                encoded_bytes: bytes.len() as u64,
                pruned: removed
                    .iter()
                    .map(|member| parse_member(&index, member))
                    .collect::<Result<_, _>>()?,
            }),
            Some((status, [])) if status == "fenced" => {
                let fence = fence.as_ref().ok_or_else(|| SnapshotError::RedisContent {
                    key: index.clone(),
                    reason: "the put script answered `fenced` to an unfenced put".into(),
                })?;
                fence.mark_lost();
                tracing::warn!(zone = %zone, sequence = snapshot.sequence, "snapshot fenced off: the zone's lease is no longer ours");
                Err(fenced(zone, fence))
            }
            Some((status, [newest])) if status == "stale" => {
                let newest = parse_member(&index, newest)?;
                // The first attempt may have landed before its reply was lost: the same bytes
                // under the same sequence are that write, not a stale one.
                if retried
                    && newest == snapshot.sequence
                    && self.fetch(&key, "put: check").await?.as_deref() == Some(bytes.as_slice())
                {
                    return Ok(PutOutcome {
                        encoded_bytes: bytes.len() as u64,
                        pruned: Vec::new(),
                    });
                }
                Err(SnapshotError::SequenceNotIncreasing {
                    zone: zone.clone(),
                    sequence: snapshot.sequence,
                    newest,
                })
            }
            _ => Err(SnapshotError::RedisContent {
                key: index,
                reason: format!("unexpected reply from the put script: {reply:?}"),
            }),
        }
    }

    async fn latest_valid_now(
        &self,
        zone: &ZoneName,
        supported: u32,
    ) -> Result<LatestValid, SnapshotError> {
        let mut skipped = Vec::new();
        for sequence in self
            .sequences(zone, "latest_valid: index")
            .await?
            .into_iter()
            .rev()
        {
            let key = self.snapshot_key(zone, sequence);
            let bytes = self.fetch(&key, "latest_valid: get").await?;
            if let Some(snapshot) = accept_or_skip(
                zone,
                sequence,
                || key.clone(),
                bytes.as_deref(),
                supported,
                &mut skipped,
            ) {
                return Ok(LatestValid {
                    snapshot: Some(snapshot),
                    skipped,
                });
            }
        }
        Ok(LatestValid {
            snapshot: None,
            skipped,
        })
    }

    async fn get_now(
        &self,
        zone: &ZoneName,
        sequence: u64,
        supported: u32,
    ) -> Result<Option<Snapshot>, SnapshotError> {
        let key = self.snapshot_key(zone, sequence);
        match self.fetch(&key, "get").await? {
            None => Ok(None),
            Some(bytes) => {
                decode_for_get(zone, sequence, || key.clone(), &bytes, supported).map(Some)
            }
        }
    }

    async fn list_now(&self, zone: &ZoneName) -> Result<Vec<ListedSnapshot>, SnapshotError> {
        let sequences = self.sequences(zone, "list: index").await?;
        if sequences.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipeline = redis::pipe();
        for &sequence in &sequences {
            pipeline
                .cmd("GETRANGE")
                .arg(self.snapshot_key(zone, sequence))
                .arg(0)
                .arg(MAX_HEADER_BYTES - 1);
        }
        let index = self.index_key(zone);
        let headers: Vec<Vec<u8>> = once_more(&index, "list: read headers", || {
            let mut connection = self.connection.clone();
            let pipeline = &pipeline;
            async move { pipeline.query_async(&mut connection).await }
        })
        .await?;
        Ok(sequences
            .into_iter()
            .zip(headers)
            .map(|(sequence, bytes)| ListedSnapshot {
                sequence,
                // GETRANGE answers "" for a missing key; no snapshot is empty.
                header: if bytes.is_empty() {
                    Err(SnapshotDefect::Missing)
                } else {
                    SnapshotHeader::decode(&bytes)
                },
            })
            .collect())
    }

    async fn prune_now(
        &self,
        zone: &ZoneName,
        keep_last: usize,
    ) -> Result<Vec<u64>, SnapshotError> {
        let index = self.index_key(zone);
        let base = self.key_base(zone);
        let removed: Vec<String> = once_more(&index, "prune", || {
            let mut connection = self.connection.clone();
            let (script, index, base) = (&self.prune_script, &index, &base);
            async move {
                script
                    .key(index)
                    .arg(keep_last)
                    .arg(base)
                    .invoke_async(&mut connection)
                    .await
            }
        })
        .await?;
        removed
            .iter()
            .map(|member| parse_member(&index, member))
            .collect()
    }

    async fn put_encoded_now(
        &self,
        zone: &ZoneName,
        sequence: u64,
        bytes: Vec<u8>,
    ) -> Result<(), SnapshotError> {
        let key = self.snapshot_key(zone, sequence);
        let mut pipeline = redis::pipe();
        pipeline
            .atomic()
            .cmd("SET")
            .arg(&key)
            .arg(bytes)
            .ignore()
            .cmd("ZADD")
            .arg(self.index_key(zone))
            .arg(0)
            .arg(member(sequence))
            .ignore();
        // Both commands set what they set: sending them twice is harmless.
        once_more(&key, "put_encoded", || {
            let mut connection = self.connection.clone();
            let pipeline = &pipeline;
            async move { pipeline.query_async::<()>(&mut connection).await }
        })
        .await
    }
}

/// The index member (and key suffix) of a sequence: 20 digits, so lexical order is numeric.
fn member(sequence: u64) -> String {
    format!("{sequence:020}")
}

fn parse_member(index: &str, member: &str) -> Result<u64, SnapshotError> {
    member
        .parse::<u64>()
        .ok()
        .filter(|_| member.len() == 20)
        .ok_or_else(|| SnapshotError::RedisContent {
            key: index.to_owned(),
            reason: format!("index entry {member:?} is not a 20-digit sequence"),
        })
}

/// Runs `attempt`; when it fails because the connection dropped (a restarted Redis leaves the
/// shared connection stale), runs it once more on the connection re-established meanwhile,
/// and says when Redis answers again.
async fn once_more<T, F, Fut>(
    key: &str,
    operation: &'static str,
    mut attempt: F,
) -> Result<T, SnapshotError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, RedisError>>,
{
    match attempt().await {
        Ok(value) => Ok(value),
        Err(error) if error.is_unrecoverable_error() || error.is_connection_dropped() => {
            tracing::warn!(key, operation, %error, "redis snapshot store: connection lost; sending once more");
            let value = attempt().await.map_err(redis_failed(key, operation))?;
            tracing::info!(key, operation, "redis snapshot store: Redis is back");
            Ok(value)
        }
        Err(error) => Err(redis_failed(key, operation)(error)),
    }
}

fn fenced(zone: &ZoneName, fence: &LeaseFence) -> SnapshotError {
    SnapshotError::Fenced {
        zone: zone.clone(),
        lease_key: fence.lease_key.clone(),
    }
}

fn redis_failed(
    key: &str,
    operation: &'static str,
) -> impl FnOnce(redis::RedisError) -> SnapshotError {
    let key = key.to_owned();
    move |source| SnapshotError::Redis {
        key,
        operation,
        source: Box::new(source),
    }
}

impl SnapshotStore for RedisSnapshotStore {
    fn put(&self, snapshot: Snapshot) -> StoreFuture<'_, PutOutcome> {
        Box::pin(self.put_now(snapshot))
    }

    fn latest_valid<'a>(
        &'a self,
        zone: &'a ZoneName,
        supported_schema_version: u32,
    ) -> StoreFuture<'a, LatestValid> {
        Box::pin(self.latest_valid_now(zone, supported_schema_version))
    }

    fn get<'a>(
        &'a self,
        zone: &'a ZoneName,
        sequence: u64,
        supported_schema_version: u32,
    ) -> StoreFuture<'a, Option<Snapshot>> {
        Box::pin(self.get_now(zone, sequence, supported_schema_version))
    }

    fn list<'a>(&'a self, zone: &'a ZoneName) -> StoreFuture<'a, Vec<ListedSnapshot>> {
        Box::pin(self.list_now(zone))
    }

    fn prune<'a>(&'a self, zone: &'a ZoneName, keep_last: usize) -> StoreFuture<'a, Vec<u64>> {
        Box::pin(self.prune_now(zone, keep_last))
    }

    fn get_encoded<'a>(
        &'a self,
        zone: &'a ZoneName,
        sequence: u64,
    ) -> StoreFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            let key = self.snapshot_key(zone, sequence);
            self.fetch(&key, "get_encoded").await
        })
    }

    fn put_encoded<'a>(
        &'a self,
        zone: &'a ZoneName,
        sequence: u64,
        bytes: Vec<u8>,
    ) -> StoreFuture<'a, ()> {
        Box::pin(self.put_encoded_now(zone, sequence, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_sort_lexically_as_numbers_and_parse_back() {
        let mut members: Vec<String> = [10u64, 9, u64::MAX, 0].iter().map(|&s| member(s)).collect();
        members.sort();
        let parsed: Vec<u64> = members
            .iter()
            .map(|m| parse_member("index", m).expect("own member parses"))
            .collect();
        assert_eq!(parsed, vec![0, 9, 10, u64::MAX]);
        assert!(parse_member("index", "12").is_err());
        assert!(parse_member("index", "0000000000000000000x").is_err());
    }
}
