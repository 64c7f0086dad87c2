//! A lease fence: what a write for a leased zone is checked against.
//!
//! Owns [`LeaseFence`], the zone's lease key and the value this instance holds it with, plus a
//! flag the checking side raises when a write finds the lease gone. The service's bus fences
//! its stream writes with it and [`crate::RedisSnapshotStore`] its snapshot writes, each inside
//! the Lua script that writes, so an instance whose lease lapsed (paused, partitioned) can
//! write neither once another instance took the zone. It does not take or renew leases (the
//! service's lease protocol does).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The lease a zone's writes are checked against.
#[derive(Clone, Debug)]
pub struct LeaseFence {
    /// The lease key (same hash tag as the zone's other keys).
    pub lease_key: String,
    /// The value this instance holds it with (owner and fencing token); empty = released.
    pub token: String,
    /// Set when a write found the lease held by someone else (or by no one).
    pub lost: Arc<AtomicBool>,
}

impl LeaseFence {
    /// Whether a write may still be tried: held (not released) and not known lost.
    pub fn may_write(&self) -> bool {
        !self.token.is_empty() && !self.lost.load(Ordering::Acquire)
    }

    /// Records that a write found the lease gone.
    pub fn mark_lost(&self) {
        self.lost.store(true, Ordering::Release);
    }
}
