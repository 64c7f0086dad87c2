//! Zone leases: which service instance runs which zone.
//!
//! Owns the `[cluster]` config (which zones an instance may take, its name, lease timing), the
//! lease protocol on Redis and the local view of a held lease. Per zone, next to its
//! streams (same hash tag, same shard):
//!
//! - `geppetto:{zone}:lease` — `owner#token#acquired_ms`, set with `NX PX ttl` and renewed by
//!   its owner well before it expires; nobody else may set it while it lives;
//! - `geppetto:{zone}:fence` — a counter incremented at every acquisition: the fencing token,
//!   so two holders of one zone at different times never hold the same value.
//!
//! Every step is one Lua script, so checking the owner and acting on the key are atomic. The
//! bus writes a leased zone's messages only while the lease holds the writer's value (see
//! `bus::redis`), so an instance whose lease lapsed cannot publish for the zone even if it
//! has not noticed yet. Instances announce themselves in `geppetto:instances` (a sorted set
//! scored by expiry in Redis time) so each can compute its fair share of zones.
//!
//! Locally a [`HeldLease`] knows until when it is certainly valid (measured from *before* the
//! request that set or renewed it, on the monotonic clock), and the zone loop reads its world
//! stream only while more than a read's block plus a margin remain: a paused instance wakes up
//! to a lease it no longer trusts and stops before taking another message.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use geppetto_redis_target::RedisConnection;
use redis::{RedisError, Script};

use crate::bus::redis::Fence;
pub use crate::config::cluster::LeaseConfig;

/// The sorted set of live instances.
pub const INSTANCES_KEY: &str = "geppetto:instances";

/// The lease key of `zone`.
pub fn lease_key(zone: &str) -> String {
    format!("geppetto:{{{zone}}}:lease")
}

/// The fencing counter of `zone`.
pub fn fence_key(zone: &str) -> String {
    format!("geppetto:{{{zone}}}:fence")
}

/// Redis time in milliseconds, inside a script.
const NOW_MS: &str = "local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
";

/// KEYS: lease, fence counter. ARGV: owner, ttl ms. Reply: the value taken, or nil when held.
fn acquire_script() -> Script {
    Script::new(&format!(
        "{NOW_MS}
if redis.call('EXISTS', KEYS[1]) == 1 then
  return false
end
local token = redis.call('INCR', KEYS[2])
local value = ARGV[1] .. '#' .. token .. '#' .. now
redis.call('SET', KEYS[1], value, 'NX', 'PX', ARGV[2])
return value
"
    ))
}

/// KEYS: lease. ARGV: value held, ttl ms. Reply: 1 renewed, 0 not ours any more.
const RENEW_SCRIPT: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

/// KEYS: lease. ARGV: value held. Reply: 1 released, 0 not ours.
const RELEASE_SCRIPT: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// KEYS: instances. ARGV: this instance ('' to only look), ttl ms. Reply: live instances.
fn heartbeat_script() -> Script {
    Script::new(&format!(
        "{NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[1] ~= '' then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
end
return redis.call('ZRANGE', KEYS[1], 0, -1)
"
    ))
}

/// A lease operation failed.
#[derive(Debug, thiserror::Error)]
#[error("lease {operation} of `{zone}`: {source}")]
pub struct LeaseError {
    /// What was attempted.
    pub operation: &'static str,
    /// The zone (or `instances`).
    pub zone: String,
    /// redis-rs's error.
    pub source: RedisError,
}

/// The local view of a held lease, shared with the zone loop and the bus's fence.
#[derive(Clone, Debug)]
pub struct LeaseGuard {
    epoch: Instant,
    /// Milliseconds after `epoch` until which the lease certainly holds.
    valid_until_ms: Arc<AtomicU64>,
    lost: Arc<AtomicBool>,
    margin: Duration,
}

impl LeaseGuard {
    fn new(valid_until: Instant, margin: Duration) -> Self {
        let epoch = Instant::now();
        let guard = Self {
            epoch,
            valid_until_ms: Arc::new(AtomicU64::new(0)),
            lost: Arc::new(AtomicBool::new(false)),
            margin,
        };
        guard.extend_to(valid_until);
        guard
    }

    fn extend_to(&self, until: Instant) {
        let ms = until.saturating_duration_since(self.epoch).as_millis();
        self.valid_until_ms
            .store(u64::try_from(ms).unwrap_or(u64::MAX), Ordering::Release);
    }

    /// Marks the lease lost (renewal refused, a fenced write refused, or given up).
    pub fn lose(&self) {
        self.lost.store(true, Ordering::Release);
    }

    /// Whether the lease is known lost.
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Whether the lease holds now by this instance's clock (and is not known lost).
    pub fn holds_now(&self) -> bool {
        !self.is_lost()
            && Instant::now()
                < self.epoch + Duration::from_millis(self.valid_until_ms.load(Ordering::Acquire))
    }

    /// Whether the lease certainly holds for a read that may block `block`, plus the margin.
    pub fn may_read(&self, block: Duration) -> bool {
        if self.is_lost() {
            return false;
        }
        let needed = Instant::now() + block + self.margin;
        let until = self.epoch + Duration::from_millis(self.valid_until_ms.load(Ordering::Acquire));
        needed < until
    }
}

/// A lease this instance holds.
#[derive(Clone, Debug)]
pub struct HeldLease {
    /// The zone.
    pub zone: String,
    /// The value it is held with (`owner#token#acquired_ms`).
    pub value: String,
    /// Its local view.
    pub guard: LeaseGuard,
}

impl HeldLease {
    /// The fence the bus checks this zone's writes against.
    pub fn fence(&self) -> Fence {
        Fence {
            lease_key: lease_key(&self.zone),
            token: self.value.clone(),
            lost: Arc::clone(&self.guard.lost),
        }
    }

    /// The fencing token (the counter's value at acquisition).
    pub fn token(&self) -> u64 {
        parse_lease_value(&self.value).map_or(0, |v| v.token)
    }
}

/// A lease value, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseValue {
    /// The owning instance.
    pub owner: String,
    /// The fencing token.
    pub token: u64,
    /// When it was acquired, Redis time in milliseconds.
    pub acquired_ms: u64,
}

/// Parses `owner#token#acquired_ms` (the owner may itself contain `#`).
pub fn parse_lease_value(value: &str) -> Option<LeaseValue> {
    let (rest, acquired) = value.rsplit_once('#')?;
    let (owner, token) = rest.rsplit_once('#')?;
    Some(LeaseValue {
        owner: owner.to_owned(),
        token: token.parse().ok()?,
        acquired_ms: acquired.parse().ok()?,
    })
}

/// What `geppetto cluster status` shows of a zone's lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseState {
    /// The holder, if any.
    pub holder: Option<LeaseValue>,
    /// Milliseconds until it expires, if held.
    pub expires_in_ms: Option<u64>,
}

/// The lease protocol of one instance.
pub struct Leases {
    connection: RedisConnection,
    instance: String,
    config: LeaseConfig,
    acquire: Script,
    renew: Script,
    release: Script,
    heartbeat: Script,
}

impl Leases {
    /// The protocol for `instance` over `connection`.
    pub fn new(connection: RedisConnection, instance: &str, config: LeaseConfig) -> Self {
        Self {
            connection,
            instance: instance.to_owned(),
            config,
            acquire: acquire_script(),
            renew: Script::new(RENEW_SCRIPT),
            release: Script::new(RELEASE_SCRIPT),
            heartbeat: heartbeat_script(),
        }
    }

    /// This instance's name.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// The timing in use.
    pub fn config(&self) -> &LeaseConfig {
        &self.config
    }

    fn ttl(&self) -> Duration {
        Duration::from_millis(self.config.ttl_ms)
    }

    /// How long an announcement lasts: half a renewal period short of a lease, so a dead
    /// instance leaves the set before its leases expire and the others' fair share already
    /// counts it out when its zones come free.
    fn membership_ttl_ms(&self) -> u64 {
        self.config
            .ttl_ms
            .saturating_sub(self.config.renew_every_ms / 2)
            .max(1)
    }

    /// Announces this instance (alive for one TTL) and returns the live instances, sorted.
    pub async fn heartbeat(&self) -> Result<Vec<String>, LeaseError> {
        self.members(&self.instance).await
    }

    /// The live instances, sorted, without announcing anyone.
    pub async fn live_instances(&self) -> Result<Vec<String>, LeaseError> {
        self.members("").await
    }

    async fn members(&self, announce: &str) -> Result<Vec<String>, LeaseError> {
        let mut live: Vec<String> = self
            .heartbeat
            .key(INSTANCES_KEY)
            .arg(announce)
            .arg(self.membership_ttl_ms())
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(|source| LeaseError {
                operation: "heartbeat",
                zone: "instances".into(),
                source,
            })?;
        live.sort();
        Ok(live)
    }

    /// Leaves the instance set at once (a clean shutdown), so the others rebalance now.
    pub async fn leave(&self) -> Result<(), LeaseError> {
        redis::cmd("ZREM")
            .arg(INSTANCES_KEY)
            .arg(&self.instance)
            .query_async::<()>(&mut self.connection.clone())
            .await
            .map_err(|source| LeaseError {
                operation: "leave",
                zone: "instances".into(),
                source,
            })
    }

    /// Takes `zone`'s lease if nobody holds it.
    pub async fn try_acquire(&self, zone: &str) -> Result<Option<HeldLease>, LeaseError> {
        let sent = Instant::now();
        let value: Option<String> = self
            .acquire
            .key(lease_key(zone))
            .key(fence_key(zone))
            .arg(&self.instance)
            .arg(self.config.ttl_ms)
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(|source| LeaseError {
                operation: "acquire",
                zone: zone.to_owned(),
                source,
            })?;
        Ok(value.map(|value| HeldLease {
            zone: zone.to_owned(),
            value,
            guard: LeaseGuard::new(
                sent + self.ttl(),
                Duration::from_millis(self.config.read_margin_ms),
            ),
        }))
    }

    /// Renews `lease`; when it is no longer this instance's, marks it lost and says so.
    pub async fn renew(&self, lease: &HeldLease) -> Result<bool, LeaseError> {
        let sent = Instant::now();
        let renewed: i64 = self
            .renew
            .key(lease_key(&lease.zone))
            .arg(&lease.value)
            .arg(self.config.ttl_ms)
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(|source| LeaseError {
                operation: "renew",
                zone: lease.zone.clone(),
                source,
            })?;
        if renewed == 1 {
            lease.guard.extend_to(sent + self.ttl());
            Ok(true)
        } else {
            lease.guard.lose();
            Ok(false)
        }
    }

    /// Gives `lease` up (after the zone's loop has stopped and its snapshot is written).
    pub async fn release(&self, lease: &HeldLease) -> Result<bool, LeaseError> {
        lease.guard.lose();
        let released: i64 = self
            .release
            .key(lease_key(&lease.zone))
            .arg(&lease.value)
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(|source| LeaseError {
                operation: "release",
                zone: lease.zone.clone(),
                source,
            })?;
        Ok(released == 1)
    }

    /// Who holds `zone` and for how much longer.
    pub async fn state(&self, zone: &str) -> Result<LeaseState, LeaseError> {
        let key = lease_key(zone);
        let (value, pttl): (Option<String>, i64) = redis::pipe()
            .get(&key)
            .pttl(&key)
            .query_async(&mut self.connection.clone())
            .await
            .map_err(|source| LeaseError {
                operation: "read",
                zone: zone.to_owned(),
                source,
            })?;
        Ok(LeaseState {
            holder: value.as_deref().and_then(parse_lease_value),
            expires_in_ms: u64::try_from(pttl).ok(),
        })
    }

    /// Redis's clock, milliseconds (lease ages are measured on it).
    pub async fn redis_time_ms(&self) -> Result<u64, LeaseError> {
        let (seconds, micros): (u64, u64) = redis::cmd("TIME")
            .query_async(&mut self.connection.clone())
            .await
            .map_err(|source| LeaseError {
                operation: "time",
                zone: "-".into(),
                source,
            })?;
        Ok(seconds * 1000 + micros / 1000)
    }
}

/// How many of `zones` the instance `me` should hold among the sorted `live` instances: the
/// even share rounded down, plus one for the first `zones % live` instances in name order, so
/// every share is within one of every other and the shares add up to `zones` (7 zones on 3
/// instances: 3/2/2; 5 on 4: 2/1/1/1, none idle). An instance missing from `live` (its
/// announcement failed) counts itself in last.
pub fn fair_share(zones: usize, live: &[String], me: &str) -> usize {
    let rank = live.iter().position(|name| name == me);
    let count = live.len() + usize::from(rank.is_none());
    let rank = rank.unwrap_or(count - 1);
    zones / count + usize::from(rank < zones % count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_values_parse_with_owners_that_contain_the_separator() {
        assert_eq!(
            parse_lease_value("node#a#17#1700000000000"),
            Some(LeaseValue {
                owner: "node#a".into(),
                token: 17,
                acquired_ms: 1_700_000_000_000,
            })
        );
        assert_eq!(parse_lease_value("garbage"), None);
        assert_eq!(parse_lease_value("a#x#1"), None);
    }

    #[test]
    fn lease_keys_share_the_zone_hash_tag_with_its_streams() {
        assert_eq!(lease_key("forest"), "geppetto:{forest}:lease");
        assert_eq!(fence_key("forest"), "geppetto:{forest}:fence");
    }

    #[test]
    fn the_fair_share_balances_to_within_one_zone() {
        let names = |n: usize| -> Vec<String> { (0..n).map(|i| format!("node-{i}")).collect() };
        let shares = |zones: usize, n: usize| -> Vec<usize> {
            let live = names(n);
            live.iter().map(|me| fair_share(zones, &live, me)).collect()
        };
        assert_eq!(shares(7, 3), [3, 2, 2]);
        assert_eq!(shares(5, 4), [2, 1, 1, 1]);
        assert_eq!(shares(12, 5), [3, 3, 2, 2, 2]);
        assert_eq!(shares(2, 3), [1, 1, 0]);
        assert_eq!(shares(0, 3), [0, 0, 0]);
        for zones in 0..40 {
            for n in 1..9 {
                let all = shares(zones, n);
                assert_eq!(all.iter().sum::<usize>(), zones, "{zones} on {n}");
                let (lo, hi) = (all.iter().min(), all.iter().max());
                assert!(
                    hi.zip(lo).is_some_and(|(h, l)| h - l <= 1),
                    "{zones} on {n}: {all:?}"
                );
            }
        }
        // Not (yet) in the live set: counted in, last.
        assert_eq!(fair_share(7, &names(2), "late"), 2);
        assert_eq!(fair_share(7, &[], "alone"), 7);
    }

    #[test]
    fn a_guard_refuses_reads_near_its_end_and_after_it_is_lost() {
        let guard = LeaseGuard::new(
            Instant::now() + Duration::from_secs(60),
            Duration::from_secs(1),
        );
        assert!(guard.may_read(Duration::from_secs(1)));
        assert!(!guard.may_read(Duration::from_secs(59)));
        guard.lose();
        assert!(!guard.may_read(Duration::ZERO));
    }
}
