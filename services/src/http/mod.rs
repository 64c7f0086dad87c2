//! The admin HTTP API (actix-web), loopback by default, and the web inspector it serves.
//!
//! | route | module | token |
//! |---|---|---|
//! | `GET /healthz`, `GET /metrics`, `GET /inspector` | [`pages`] | — |
//! | `GET /events` (story signals as Server-Sent Events) | [`feed`] | — |
//! | `GET /npcs`, `GET /npcs/{id}/brain`, `GET /npcs/{id}/decisions` | [`npcs`] | — |
//! | `POST /npcs`, `DELETE /npcs/{id}`, `POST /npcs/{id}/schedule_override`, `POST /npcs/{id}/reinstate` | [`npcs`] | bearer |
//! | `POST /zones/{zone}/snapshot`, `POST /content/reload`, `POST /archetypes/{name}/reset-breaker` | [`zones`] | bearer |
//! | `POST /whatif` (JSON only) | [`zones`] | bearer |
//!
//! Mutating calls need `Authorization: Bearer <token>` ([`auth`]); every refusal is an
//! [`error::ApiError`] answered as `{"error": "…"}` with its status. This module owns what the
//! handlers share ([`AdminState`], the [`ZoneDirectory`] of zones running here) and the route
//! table; it changes no zone itself — spawns and the like go to a zone's world stream, snapshots
//! and reloads to its loop.

pub mod auth;
pub mod error;
pub mod feed;
pub mod npcs;
pub mod pages;
pub mod zones;

use std::collections::BTreeMap;
use std::sync::Arc;

use actix_web::{App, HttpServer, web};
use geppetto_llm::Secret;
use metrics_exporter_prometheus::PrometheusHandle;

use crate::bus::EventBus;
use crate::runtime::actor::ZoneHandle;

pub use feed::story_feed;

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
    pub controls: Option<tokio::sync::mpsc::Sender<crate::runtime::zone_loop::ZoneControl>>,
    /// The lease it runs under in a cluster: the zone is served here only while the lease
    /// certainly holds by this instance's clock (absent: no lease, always served).
    pub lease: Option<crate::runtime::lease::LeaseGuard>,
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
    pub fn lease(&self, name: &str, lease: crate::runtime::lease::LeaseGuard) {
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

/// Reads the content files again (world files, profile and archetype directories) and hands
/// out one rebuild per running zone; an error names the file, path and reason.
pub type ContentReload = Arc<
    dyn Fn(&[String]) -> Result<Vec<(String, crate::runtime::zone_loop::Rebuild)>, String>
        + Send
        + Sync,
>;

/// What a zone's what-if replays: its world file, zone settings, log and snapshots.
#[derive(Clone)]
pub struct WhatIfSource {
    /// The world file (path, or `village`).
    pub world: String,
    /// The zone's settings.
    pub zone_config: crate::zone::ZoneConfig,
    /// The world-message limits its loop reads under.
    pub limits: crate::bus::envelope::EnvelopeLimits,
    /// The zone's world log.
    pub log: crate::runtime::world_log::WorldLog,
    /// Its snapshots.
    pub store: Arc<dyn geppetto_storage::SnapshotStore>,
}

/// What the handlers share.
pub struct AdminState {
    /// The zones running here.
    pub zones: ZoneDirectory,
    /// Where `POST /whatif` replays from, by zone (zones with a durable log only).
    pub whatif: BTreeMap<String, WhatIfSource>,
    /// Set while a what-if runs (one at a time: it replays on a blocking thread).
    pub whatif_busy: Arc<std::sync::atomic::AtomicBool>,
    /// Story signals of every zone as they are published, for `GET /events`.
    pub story_feed: tokio::sync::broadcast::Sender<String>,
    /// The bus (spawn/despawn go to the world stream).
    pub bus: Arc<dyn EventBus>,
    /// How `POST /content/reload` reads the content again (`serve` only).
    pub content_reload: Option<ContentReload>,
    /// Metrics, when a recorder is installed.
    pub metrics: Option<PrometheusHandle>,
    /// The bearer token for mutating calls (none: they are refused).
    pub token: Option<Secret>,
    /// Largest request body, bytes (`admin.max_body_bytes`); bigger ones are answered 413.
    pub max_body_bytes: usize,
}

/// Binds `address` and returns the running server (spawn or await it).
pub fn start(state: AdminState, address: &str) -> std::io::Result<actix_web::dev::Server> {
    let payload = web::PayloadConfig::new(state.max_body_bytes);
    let data = web::Data::new(state);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .app_data(payload.clone())
            .route("/healthz", web::get().to(pages::healthz))
            .route("/metrics", web::get().to(pages::metrics))
            .route("/inspector", web::get().to(pages::inspector))
            .route("/events", web::get().to(feed::events))
            .route("/whatif", web::post().to(zones::whatif))
            .route(
                "/zones/{zone}/snapshot",
                web::post().to(zones::snapshot_now),
            )
            .route("/content/reload", web::post().to(zones::reload_content))
            .route("/npcs", web::get().to(npcs::list))
            .route("/npcs", web::post().to(npcs::spawn))
            .route("/npcs/{id}", web::delete().to(npcs::despawn))
            .route("/npcs/{id}/brain", web::get().to(npcs::brain))
            .route("/npcs/{id}/decisions", web::get().to(npcs::decisions))
            .route(
                "/npcs/{id}/schedule_override",
                web::post().to(npcs::schedule_override),
            )
            .route("/npcs/{id}/reinstate", web::post().to(npcs::reinstate))
            .route(
                "/archetypes/{name}/reset-breaker",
                web::post().to(zones::reset_breaker),
            )
    })
    .workers(1)
    .bind(address)?
    .disable_signals()
    .run();
    Ok(server)
}
