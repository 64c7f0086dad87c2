//! Zones shared among service instances over Redis: which zones this instance
//! runs, taken and given up by lease.
//!
//! Owns the ownership loop ([`Ownership::run`]). Every
//! `renew_every_ms` the loop announces the instance, renews the leases it holds, reaps zones
//! whose loop ended (lease lost, failure), and balances: with `zones = "auto"` it holds its
//! fair share of the configured zones (zones / live instances, one more for the first
//! `zones % live` instances by name, so shares differ by at most one), taking free
//! zones in its own preference order (a hash of instance and zone, so instances prefer
//! different zones and rarely contend) and giving up its least preferred ones beyond the share;
//! with a list it takes every listed zone that is free.
//!
//! Taking a zone: acquire the lease, fence the bus's writes and the snapshot store's for the
//! zone with it (a Redis snapshot store checks the lease in its write script), then recover
//! and run the zone in a task of its own (recovery may take a while; renewals never wait for
//! it). Giving one up: stop its loop (which flushes and writes a snapshot), then release the
//! lease so the next owner starts from that snapshot. A lease that is lost stops the zone's
//! loop before its next read, and the fence has already refused its writes. The status of
//! every zone (`geppetto cluster status`) is read from the same keys ([`status`]).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use geppetto_core::rng::stable_hash;
use geppetto_storage::ZoneName;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::bus::StreamKind;
use crate::bus::redis::{RedisBus, group_field};
use crate::config::cluster::{LeaseConfig, ZoneSelection};
use crate::runtime::lease::{HeldLease, LeaseError, Leases, fair_share};
use crate::runtime::starter::ZoneStarter;

/// The cluster cannot be joined.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The bus is not Redis.
    #[error("cluster.enabled needs bus.kind = \"redis\"")]
    NotRedis,
    /// A listed zone has no world file here.
    #[error("cluster.zones: `{0}` is not the zone of any configured world")]
    UnknownZone(String),
}

/// A zone this instance holds.
struct HeldZone {
    lease: HeldLease,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
    /// Being given up: its loop was told to stop; the lease goes when it has.
    releasing: bool,
}

/// The ownership loop of one instance.
pub struct Ownership {
    starter: Arc<ZoneStarter>,
    bus: Arc<RedisBus>,
    leases: Leases,
    /// The zones this instance may take, most preferred first.
    candidates: Vec<String>,
    /// Whether it takes a fair share (auto) or all its candidates (a list).
    auto: bool,
    held: BTreeMap<String, HeldZone>,
}

impl Ownership {
    /// The loop for `starter`'s config over `worlds` (the configured world files).
    pub fn new(starter: Arc<ZoneStarter>, zones: Vec<String>) -> Result<Self, ClusterError> {
        let bus = starter
            .durable
            .redis
            .clone()
            .ok_or(ClusterError::NotRedis)?;
        let config = &starter.config.cluster;
        let instance = config.instance_name(&starter.config.consumer);
        let mut candidates = zones;
        let auto = match &config.zones {
            ZoneSelection::Auto => true,
            ZoneSelection::Listed(listed) => {
                if let Some(unknown) = listed.iter().find(|zone| !candidates.contains(zone)) {
                    return Err(ClusterError::UnknownZone(unknown.clone()));
                }
                candidates.retain(|zone| listed.contains(zone));
                false
            }
        };
        candidates.sort_by_key(|zone| preference(&instance, zone));
        let leases = Leases::new(bus.shared_connection(), &instance, config.lease.clone());
        Ok(Self {
            starter,
            bus,
            leases,
            candidates,
            auto,
            held: BTreeMap::new(),
        })
    }

    /// Runs until `stopped` turns true, then gives every held zone up cleanly (each loop
    /// writes its snapshot; the leases are released so others take over at once).
    pub async fn run(mut self, mut stopped: watch::Receiver<bool>) {
        let period = Duration::from_millis(self.leases.config().renew_every_ms.max(1));
        let mut interval = tokio::time::interval(period);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut rounds = 0u64;
        tracing::info!(
            instance = self.leases.instance(),
            zones = self.candidates.len(),
            "joining the cluster"
        );
        loop {
            tokio::select! {
                _ = interval.tick() => {}
                _ = stopped.changed() => break,
            }
            let live = match self.leases.heartbeat().await {
                Ok(live) => live,
                Err(error) => {
                    tracing::warn!(%error, "cluster: heartbeat failed");
                    Vec::new()
                }
            };
            self.renew().await;
            self.reap().await;
            rounds += 1;
            // The first round only announces: instances started together see each other
            // before any of them takes zones.
            if rounds < 2 || live.is_empty() {
                continue;
            }
            let share = if self.auto {
                fair_share(self.candidates.len(), &live, self.leases.instance())
            } else {
                self.candidates.len()
            };
            self.balance(share).await;
        }
        self.leave().await;
    }

    async fn renew(&mut self) {
        for (zone, held) in &self.held {
            if held.lease.guard.is_lost() {
                // A fenced write found it gone; the loop is stopping.
                let _ = held.stop.send(true);
                continue;
            }
            match self.leases.renew(&held.lease).await {
                Ok(true) => {}
                Ok(false) => {
                    tracing::warn!(zone, "cluster: lease lost; the zone stops here");
                    let _ = held.stop.send(true);
                }
                Err(error) => tracing::warn!(%error, "cluster: renewal failed"),
            }
        }
    }

    /// Forgets zones whose loop has ended: releases the lease when it is still ours (a zone
    /// given up, or a loop that failed) and lifts the fence.
    async fn reap(&mut self) {
        let ended: Vec<String> = self
            .held
            .iter()
            .filter(|(_, held)| held.task.is_finished())
            .map(|(zone, _)| zone.clone())
            .collect();
        for zone in ended {
            let Some(held) = self.held.remove(&zone) else {
                continue;
            };
            let lost = held.lease.guard.is_lost();
            self.unfence(&zone);
            if !lost {
                match self.leases.release(&held.lease).await {
                    Ok(_) => {}
                    Err(error) => {
                        tracing::warn!(%error, "cluster: release failed; the lease will expire")
                    }
                }
            }
            tracing::info!(
                zone,
                given_up = held.releasing,
                lost,
                "cluster: zone no longer held"
            );
        }
    }

    async fn balance(&mut self, share: usize) {
        let active = self.held.values().filter(|h| !h.releasing).count();
        if active < share {
            let wanted: Vec<String> = self
                .candidates
                .iter()
                .filter(|zone| !self.held.contains_key(*zone))
                .cloned()
                .collect();
            let mut taken = active;
            for zone in wanted {
                if taken >= share {
                    break;
                }
                match self.leases.try_acquire(&zone).await {
                    Ok(Some(lease)) => {
                        self.take(zone, lease);
                        taken += 1;
                    }
                    Ok(None) => {}
                    Err(error) => {
                        tracing::warn!(%error, "cluster: acquire failed");
                        break;
                    }
                }
            }
        } else if active > share {
            let excess = active - share;
            let least_preferred: Vec<String> = self
                .candidates
                .iter()
                .rev()
                .filter(|zone| self.held.get(*zone).is_some_and(|h| !h.releasing))
                .take(excess)
                .cloned()
                .collect();
            for zone in least_preferred {
                if let Some(held) = self.held.get_mut(&zone) {
                    tracing::info!(zone, share, "cluster: giving a zone up to rebalance");
                    held.releasing = true;
                    let _ = held.stop.send(true);
                }
            }
        }
    }

    /// Lifts the fences of `zone`: its messages and snapshots are written no more.
    fn unfence(&self, zone: &str) {
        self.bus.unfence(zone);
        if let (Some(store), Ok(key)) = (&self.starter.durable.redis_snapshots, ZoneName::new(zone))
        {
            store.unfence(&key);
        }
    }

    /// Fences the zone's writes (stream entries and snapshots) with `lease`, then recovers and runs it in a task of its own.
    fn take(&mut self, zone: String, lease: HeldLease) {
        tracing::info!(zone, token = lease.token(), "cluster: zone taken");
        self.bus.fence(&zone, lease.fence());
        if let (Some(store), Ok(key)) =
            (&self.starter.durable.redis_snapshots, ZoneName::new(&zone))
        {
            store.fence(&key, lease.fence());
        }
        let (stop, stopped) = watch::channel(false);
        let starter = Arc::clone(&self.starter);
        let guard = lease.guard.clone();
        let name = zone.clone();
        let task = tokio::spawn(async move {
            let opened = match starter.open(&name).await {
                Ok(opened) => opened,
                Err(error) => {
                    tracing::error!(zone = %name, %error, "cluster: recovery failed; giving the zone up");
                    return;
                }
            };
            if let Err(error) = starter.run(opened, stopped, Some(guard)).await {
                tracing::error!(zone = %name, %error, "cluster: zone loop failed");
            }
        });
        self.held.insert(
            zone,
            HeldZone {
                lease,
                stop,
                task,
                releasing: false,
            },
        );
    }

    async fn leave(mut self) {
        for held in self.held.values_mut() {
            held.releasing = true;
            let _ = held.stop.send(true);
        }
        // A zone's loop stops after its read and writes its snapshot; one that takes longer
        // than a lease is abandoned (its lease expires, the next owner replays).
        let patience = Duration::from_millis(self.leases.config().ttl_ms.saturating_mul(2));
        for (zone, mut held) in std::mem::take(&mut self.held) {
            match tokio::time::timeout(patience, &mut held.task).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::error!(zone, %error, "cluster: zone task panicked"),
                Err(_) => {
                    tracing::error!(zone, "cluster: zone loop did not stop; abandoned");
                    held.task.abort();
                }
            }
            self.unfence(&zone);
            if let Err(error) = self.leases.release(&held.lease).await {
                tracing::warn!(%error, "cluster: release failed; the lease will expire");
            }
        }
        if let Err(error) = self.leases.leave().await {
            tracing::warn!(%error, "cluster: leaving failed; membership will expire");
        }
    }
}

/// Where `zone` ranks in `instance`'s preferences (lower first): a hash of both, so each
/// instance prefers a different spread of zones (rendezvous hashing).
fn preference(instance: &str, zone: &str) -> u64 {
    stable_hash(&format!("{instance}\u{1f}{zone}"))
}

/// One zone's lease and world-stream lag, as `geppetto cluster status` shows it (not the
/// zone's own [`crate::zone::ZoneStatus`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ZoneLeaseStatus {
    /// Zone.
    pub zone: String,
    /// The holding instance, if any.
    pub owner: Option<String>,
    /// The lease's fencing token.
    pub token: Option<u64>,
    /// How long the current owner has held it, milliseconds.
    pub held_for_ms: Option<u64>,
    /// Milliseconds until the lease expires unless renewed.
    pub expires_in_ms: Option<u64>,
    /// World entries not yet given to the service's consumer group.
    pub lag: Option<u64>,
    /// World entries given but not yet acknowledged.
    pub pending: Option<u64>,
}

/// The cluster as seen from Redis: live instances and every zone's lease and lag.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ClusterStatus {
    /// Live instances.
    pub instances: Vec<String>,
    /// Zones, in the order given.
    pub zones: Vec<ZoneLeaseStatus>,
}

/// Reads the status of `zones` (consumer group `group`) through `bus`.
pub async fn status(
    bus: &RedisBus,
    lease_config: &LeaseConfig,
    zones: &[String],
    group: &str,
) -> Result<ClusterStatus, StatusError> {
    let leases = Leases::new(bus.shared_connection(), "", lease_config.clone());
    let instances = leases.live_instances().await?;
    let now = leases.redis_time_ms().await?;
    let mut rows = Vec::with_capacity(zones.len());
    for zone in zones {
        let lease = leases.state(zone).await?;
        let groups = bus.groups(zone, StreamKind::World).await?;
        let ours = groups
            .iter()
            .find(|g| group_field::<String>(g, "name").as_deref() == Some(group));
        rows.push(ZoneLeaseStatus {
            zone: zone.clone(),
            owner: lease.holder.as_ref().map(|h| h.owner.clone()),
            token: lease.holder.as_ref().map(|h| h.token),
            held_for_ms: lease
                .holder
                .as_ref()
                .map(|h| now.saturating_sub(h.acquired_ms)),
            expires_in_ms: lease.holder.as_ref().and(lease.expires_in_ms),
            lag: ours.and_then(|g| group_field(g, "lag")),
            pending: ours.and_then(|g| group_field(g, "pending")),
        });
    }
    Ok(ClusterStatus {
        instances,
        zones: rows,
    })
}

/// Reading the cluster's status failed.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    /// A lease or membership read failed.
    #[error(transparent)]
    Lease(#[from] LeaseError),
    /// A stream read failed.
    #[error(transparent)]
    Bus(#[from] crate::bus::BusError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_prefer_different_zones() {
        let zones: Vec<String> = (0..12).map(|z| format!("zone{z}")).collect();
        let first = |instance: &str| {
            zones
                .iter()
                .min_by_key(|zone| preference(instance, zone))
                .cloned()
        };
        let firsts: std::collections::BTreeSet<_> =
            ["a", "b", "c", "d"].iter().map(|i| first(i)).collect();
        assert!(firsts.len() > 1, "every instance prefers the same zone");
    }
}
