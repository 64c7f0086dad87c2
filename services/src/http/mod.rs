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
//! | `GET /llm/spend` | [`llm`] | — |
//! | `GET /llm/budget`, `PUT /llm/budget`, `PATCH /llm/budget` (JSON only) | [`llm`] | bearer |
//!
//! Mutating calls need `Authorization: Bearer <token>` ([`auth`]); every refusal is an
//! [`error::ApiError`] answered as `{"error": "…"}` with its status. This module owns what the
//! handlers share ([`AdminState`]: among others the runtime's [`ZoneDirectory`] of zones running here) and the route
//! table; it changes no zone itself — spawns and the like go to a zone's world stream, snapshots
//! and reloads to its loop.

pub mod auth;
pub mod error;
pub mod feed;
pub mod llm;
pub mod npcs;
pub mod pages;
pub mod zones;

use std::collections::BTreeMap;
use std::sync::Arc;

use actix_web::{App, HttpServer, web};
use geppetto_llm::Secret;
use metrics_exporter_prometheus::PrometheusHandle;

use crate::bus::EventBus;
use crate::runtime::directory::ZoneDirectory;

pub use feed::story_feed;

/// Reads the content files again (world files, profile and archetype directories) and hands
/// out one rebuild per running zone; an error names the file, path and reason.
pub type ContentReload = Arc<
    dyn Fn(&[String]) -> Result<Vec<(String, crate::runtime::zone_control::Rebuild)>, String>
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
    /// The LLM worker's spend and budget, when the seams run here.
    pub llm: Option<llm::LlmAdmin>,
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
            .route("/llm/spend", web::get().to(llm::spend))
            .route("/llm/budget", web::get().to(llm::budget))
            .route("/llm/budget", web::put().to(llm::replace_budget))
            .route("/llm/budget", web::patch().to(llm::patch_budget))
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
