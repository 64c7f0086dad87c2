//! What the admin API asks of a running zone loop, and how a reload is carried out: a
//! snapshot now ([`SnapshotRequest`]), or the zone rebuilt from reloaded content with its
//! state kept ([`ReloadRequest`], [`reload`]). The loop answers them between two reads of its
//! world stream ([`crate::runtime::zone_loop`]).

use tokio::sync::oneshot;

use crate::runtime::actor::ZoneHandle;
use crate::runtime::recovery::SnapshotReport;
use crate::zone::{Zone, ZoneError, ZoneState};

/// Asks a zone loop for a snapshot now (`POST /zones/{zone}/snapshot`); answered with what
/// was written or why not.
pub type SnapshotRequest = oneshot::Sender<Result<SnapshotReport, String>>;

/// Builds a zone from reloaded content over a vocabulary (the running zone's).
pub type Rebuild = Box<dyn FnOnce(&[String]) -> Result<Zone, ZoneError> + Send>;

/// Asks a zone loop to rebuild its zone from reloaded content, keeping its state
/// (`POST /content/reload`).
pub struct ReloadRequest {
    /// The rebuild.
    pub rebuild: Rebuild,
    /// Where the outcome goes.
    pub reply: oneshot::Sender<Result<ReloadReport, String>>,
}

/// A zone rebuilt from reloaded content.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ReloadReport {
    /// Zone.
    pub zone: String,
    /// NPCs after the reload.
    pub npcs: usize,
    /// Names the new content brought (appended to the zone's vocabulary).
    pub names_added: usize,
    /// The snapshot written right after, so a restart starts from the reloaded state.
    pub snapshot: Option<u64>,
}

/// What the admin API asks of a zone loop; handled between two reads of the world stream
/// (never by cancelling a read, which could leave delivered entries behind).
pub enum ZoneControl {
    /// Write a snapshot now.
    Snapshot(SnapshotRequest),
    /// Rebuild the zone from reloaded content.
    Reload(ReloadRequest),
}

/// Swaps `zone` for one rebuilt from new content with the same state: the state is captured,
/// the new zone built over its vocabulary, and the state laid over it — as a restart on the
/// new content would. On any refusal the running zone is left as it was.
pub(crate) async fn reload(zone: &ZoneHandle, rebuild: Rebuild) -> Result<ReloadReport, String> {
    // Only this loop changes the zone, so the state cannot move on between capture and swap;
    // the build runs off the actor, which keeps answering the admin API meanwhile.
    let saved = zone
        .with(|running| running.capture())
        .await
        .map_err(|e| e.to_string())?;
    let before = saved.vocabulary.len();
    let restored = tokio::task::spawn_blocking(move || rebuild_over(rebuild, saved))
        .await
        .map_err(|e| e.to_string())??;
    let report = ReloadReport {
        zone: restored.name.clone(),
        npcs: restored.agents.len(),
        names_added: restored.vocabulary.len().saturating_sub(before),
        snapshot: None,
    };
    zone.with(move |running| *running = restored)
        .await
        .map_err(|e| e.to_string())?;
    Ok(report)
}

/// The zone `rebuild` makes over `saved`'s vocabulary, with `saved` laid over it.
fn rebuild_over(rebuild: Rebuild, saved: ZoneState) -> Result<Zone, String> {
    let fresh = rebuild(&saved.vocabulary).map_err(|e| e.to_string())?;
    Zone::restored(fresh, saved).map_err(|e| e.to_string())
}
