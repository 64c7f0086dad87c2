//! The zones this process runs now, by name, with what the admin API needs of each (its actor,
//! where its loop takes snapshot and reload requests, the lease it runs under): written by the
//! starter and the cluster, read by the admin API.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::runtime::actor::ZoneHandle;
use crate::runtime::lease::LeaseGuard;

/// The zones this process runs now, by name: fixed for a single instance, changing as a
/// clustered instance takes and gives up zone leases.
#[derive(Clone, Default)]
pub struct ZoneDirectory(Arc<std::sync::RwLock<BTreeMap<String, RunningZone>>>);

/// A zone this process runs: its actor and where its loop takes snapshot requests.
#[derive(Clone)]
pub struct RunningZone {
    /// The zone's actor.
    pub handle: ZoneHandle,
    /// Snapshot and reload requests to its loop (absent when the zone takes none).
    pub controls: Option<tokio::sync::mpsc::Sender<crate::runtime::zone_control::ZoneControl>>,
    /// The lease it runs under in a cluster: the zone is served here only while the lease
    /// certainly holds by this instance's clock (absent: no lease, always served).
    pub lease: Option<LeaseGuard>,
}

impl RunningZone {
    /// Whether this instance may answer for the zone now: no lease, or one that still holds.
    fn served(&self) -> bool {
        self.lease.as_ref().is_none_or(|lease| lease.holds_now())
    }
}

impl ZoneDirectory {
    /// Adds (or replaces) a running zone.
    pub fn insert(&self, zone: RunningZone) {
        if let Ok(mut zones) = self.0.write() {
            zones.insert(zone.handle.name.clone(), zone);
        }
    }

    /// Ties the zone `name` to the lease it now runs under.
    pub fn lease(&self, name: &str, lease: LeaseGuard) {
        if let Ok(mut zones) = self.0.write()
            && let Some(zone) = zones.get_mut(name)
        {
            zone.lease = Some(lease);
        }
    }

    /// Removes the zone `name`.
    pub fn remove(&self, name: &str) {
        if let Ok(mut zones) = self.0.write() {
            zones.remove(name);
        }
    }

    /// The zone `name`, if it runs here (and its lease, if any, still holds).
    pub fn get(&self, name: &str) -> Option<RunningZone> {
        self.0
            .read()
            .ok()
            .and_then(|zones| zones.get(name).filter(|z| z.served()).cloned())
    }

    /// The actors of every zone running here whose lease, if any, still holds, by name: an
    /// instance that has just lost a zone's lease (paused past it, say) no longer answers for
    /// it, even before its loop has stopped.
    pub fn handles(&self) -> Vec<ZoneHandle> {
        self.0
            .read()
            .map(|zones| {
                zones
                    .values()
                    .filter(|z| z.served())
                    .map(|z| z.handle.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The names of the zones running here whose lease, if any, still holds.
    pub fn names(&self) -> Vec<String> {
        self.0
            .read()
            .map(|zones| {
                zones
                    .iter()
                    .filter(|(_, z)| z.served())
                    .map(|(name, _)| name.clone())
                    .collect()
            })
            .unwrap_or_default()
    }
}
