//! `geppetto cluster status --config FILE [--json]`: the live instances sharing the config's
//! zones, and each zone's owner, fencing token, lease age and expiry, and world-stream lag, read
//! from Redis (see [`crate::runtime::cluster`]).

use std::path::Path;

use crate::bus::redis::RedisBus;
use crate::cli::error::CommandError;
use crate::config::load_config;
use crate::content::world_file::load_world_file;
use crate::runtime::cluster::{ClusterStatus, status};

/// `geppetto cluster status --config FILE`: the status of every zone the config's worlds
/// name, as a table (or JSON).
pub fn status_command(config_path: &Path, json: bool) -> Result<String, CommandError> {
    let config = load_config(config_path)?;
    let zones = config
        .worlds
        .iter()
        .map(|path| load_world_file(path).map(|world| world.zone))
        .collect::<Result<Vec<_>, _>>()?;
    let read = async {
        let bus = RedisBus::connect(config.bus.redis.clone()).await?;
        Ok::<_, CommandError>(
            status(&bus, &config.cluster.lease, &zones, &config.consumer.group).await?,
        )
    };
    let status = crate::runtime::block_on(1, read)??;
    if json {
        Ok(serde_json::to_string_pretty(&status)?)
    } else {
        Ok(status_text(&status))
    }
}

/// The status as a table for people.
pub fn status_text(status: &ClusterStatus) -> String {
    let mut text = format!(
        "instances ({}): {}\n",
        status.instances.len(),
        status.instances.join(", ")
    );
    text.push_str(&format!(
        "{:<16} {:<16} {:>6} {:>10} {:>10} {:>8} {:>8}\n",
        "zone", "owner", "token", "held", "expires", "lag", "pending"
    ));
    let ms = |v: Option<u64>| {
        v.map_or_else(
            || "-".to_owned(),
            |ms| format!("{:.1}s", ms as f64 / 1000.0),
        )
    };
    let count = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |n| n.to_string());
    for zone in &status.zones {
        text.push_str(&format!(
            "{:<16} {:<16} {:>6} {:>10} {:>10} {:>8} {:>8}\n",
            zone.zone,
            zone.owner.as_deref().unwrap_or("(free)"),
            count(zone.token),
            ms(zone.held_for_ms),
            ms(zone.expires_in_ms),
            count(zone.lag),
            count(zone.pending),
        ));
    }
    text
}
