//! The bus a drive runs on — in-process, or Redis Streams at a URL — and the check that a
//! drive starting from an empty log does not write into a zone someone else uses.

use std::sync::Arc;

use crate::bus::memory::{DEFAULT_STREAM_CAPACITY, InProcessBus};
use crate::bus::redis::{RedisBus, RedisBusConfig};
use crate::bus::{EventBus, StreamKind};
use crate::drive::error::DriveError;

/// Readies a zone's streams for a run that starts from an empty log (the demo, the load
/// generator): when any of them holds entries — a zone a `serve` or an earlier run uses — it
/// refuses, unless `reset`, which deletes them. Nothing is deleted without being asked.
pub async fn reset_redis_zone(url: &str, zone: &str, reset: bool) -> Result<(), DriveError> {
    let failed = DriveError::redis(url);
    let client = redis::Client::open(url).map_err(&failed)?;
    let mut connection = client
        .get_multiplexed_async_connection()
        .await
        .map_err(&failed)?;
    let keys: Vec<String> = StreamKind::VARIANTS.iter().map(|s| s.key(zone)).collect();
    let mut held = Vec::new();
    for key in &keys {
        let entries: u64 = redis::cmd("XLEN")
            .arg(key)
            .query_async(&mut connection)
            .await
            .map_err(&failed)?;
        if entries > 0 {
            held.push(format!("{key} ({entries} entries)"));
        }
    }
    if held.is_empty() {
        return Ok(());
    }
    if !reset {
        return Err(DriveError::ZoneInUse {
            zone: zone.to_owned(),
            url: url.to_owned(),
            held: held.join(", "),
        });
    }
    redis::cmd("DEL")
        .arg(&keys)
        .query_async::<()>(&mut connection)
        .await
        .map_err(&failed)
}

/// The Redis bus at `redis`, or the in-process bus.
pub async fn open_bus(redis: Option<&str>) -> Result<Arc<dyn EventBus>, DriveError> {
    Ok(match redis {
        Some(url) => {
            let config = RedisBusConfig {
                url: url.to_owned(),
                ..RedisBusConfig::default()
            };
            Arc::new(RedisBus::connect(config).await?)
        }
        None => Arc::new(InProcessBus::new(DEFAULT_STREAM_CAPACITY)),
    })
}
