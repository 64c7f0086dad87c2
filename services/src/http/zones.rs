//! The admin API's zone calls (bearer token unless noted): `POST /zones/{zone}/snapshot`
//! (a snapshot now), `POST /content/reload` (rebuild every zone from the content files) and
//! `POST /whatif` (no token: replays a recorded window offline, the live zone untouched).
//!
//! Snapshots and reloads are requests to the zone's own loop, which answers once it has acted:
//! the HTTP side never touches a zone's state.

use std::sync::Arc;

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use serde_json::json;

use super::auth::require_token;
use super::error::{ApiError, ApiResult};
use super::{AdminState, WhatIfSource};
use crate::bus::StreamKind;
use crate::bus::envelope::{WorldEvent, WorldMessage, header};
use crate::history::log_source::LogSource;
use crate::history::replay::{ReplayOptions, SnapshotPick};
use crate::history::whatif::{Change, what_if};
use crate::runtime::zone_control::{ReloadRequest, ZoneControl};

/// `POST /zones/{zone}/snapshot`: writes a snapshot of the zone now; answers with its sequence,
/// the last world-log id it covers, tick, game time and size.
pub async fn snapshot_now(
    state: web::Data<AdminState>,
    request: HttpRequest,
    path: web::Path<String>,
) -> ApiResult {
    require_token(&state, &request)?;
    let zone = path.into_inner();
    let requests = state
        .zones
        .get(&zone)
        .and_then(|running| running.controls)
        .ok_or_else(|| ApiError::NotFound(format!("no zone `{zone}` keeps snapshots here")))?;
    let (reply, answer) = tokio::sync::oneshot::channel();
    if requests.send(ZoneControl::Snapshot(reply)).await.is_err() {
        return Err(ApiError::Unavailable(format!(
            "zone `{zone}` is not running"
        )));
    }
    match answer.await {
        Ok(Ok(report)) => Ok(HttpResponse::Ok().json(report)),
        Ok(Err(reason)) => Err(ApiError::Conflict(reason)),
        Err(_) => Err(ApiError::Unavailable(format!(
            "zone `{zone}` stopped before answering"
        ))),
    }
}

/// `POST /content/reload`: reads the content files again and rebuilds every zone running here
/// from them, each keeping its state (needs, goals, memories, positions); answers each zone's
/// outcome. Content that does not load is refused whole (400) and nothing changes; a zone
/// whose state no longer fits the new content (a room removed, an NPC's layers changed) keeps
/// running as it was and is reported (409).
pub async fn reload_content(state: web::Data<AdminState>, request: HttpRequest) -> ApiResult {
    require_token(&state, &request)?;
    let reload = state
        .content_reload
        .clone()
        .ok_or_else(|| ApiError::NotFound("content reload needs `geppetto serve`".into()))?;
    let zones = state.zones.names();
    let rebuilds = match web::block(move || reload(&zones)).await {
        Ok(Ok(rebuilds)) => rebuilds,
        Ok(Err(error)) => return Err(ApiError::BadRequest(error)),
        Err(error) => return Err(ApiError::Internal(error.to_string())),
    };
    let mut reloaded = Vec::new();
    let mut refused = Vec::new();
    for (zone, rebuild) in rebuilds {
        let Some(controls) = state.zones.get(&zone).and_then(|running| running.controls) else {
            refused.push(json!({"zone": zone, "error": "the zone is not running here"}));
            continue;
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        let request = ReloadRequest { rebuild, reply };
        if controls.send(ZoneControl::Reload(request)).await.is_err() {
            refused.push(json!({"zone": zone, "error": "the zone stopped"}));
            continue;
        }
        match answer.await {
            Ok(Ok(report)) => reloaded.push(json!(report)),
            Ok(Err(error)) => refused.push(json!({"zone": zone, "error": error})),
            Err(_) => refused.push(json!({"zone": zone, "error": "the zone stopped"})),
        }
    }
    let body = json!({"reloaded": reloaded, "refused": refused});
    Ok(if refused.is_empty() {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::Conflict().json(body)
    })
}

/// The body of `POST /whatif`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WhatIfRequest {
    zone: String,
    npc: String,
    /// `tuning.FIELD=V`, `profile.PATH=V`, `need.NAME=V`.
    changes: Vec<String>,
    /// Game ticks of the window (default: to the end of the log).
    #[serde(default)]
    ticks: Option<u64>,
    /// Start from the zone's newest snapshot (default) or from the world file.
    #[serde(default = "from_snapshot_default")]
    from_snapshot: bool,
}

fn from_snapshot_default() -> bool {
    true
}

/// Whether `source` holds a snapshot of `zone` that fits this build.
async fn has_snapshot(source: &WhatIfSource, zone: &str) -> bool {
    let Ok(key) = geppetto_storage::ZoneName::new(zone) else {
        return false;
    };
    source
        .store
        .latest_valid(&key, crate::zone::ZONE_STATE_SCHEMA_VERSION)
        .await
        .ok()
        .and_then(|latest| latest.snapshot)
        .is_some()
}

/// `POST /whatif`: replays the zone's recorded window (from its newest snapshot when there is
/// one, else from the world file) as it was and with `changes`, offline on a blocking thread,
/// and answers both timelines of `npc`, the window replayed and the first divergence. One at a
/// time (409 while one runs). It replays the log, so it takes the bearer token, and a JSON body
/// only: a web page a browser opens can send neither (the inspector asks for the token).
pub async fn whatif(
    state: web::Data<AdminState>,
    request: HttpRequest,
    body: web::Bytes,
) -> ApiResult {
    use std::sync::atomic::Ordering;
    require_token(&state, &request)?;
    let json = request
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(ApiError::UnsupportedMediaType(
            "POST /whatif takes `Content-Type: application/json`".into(),
        ));
    }
    let request: WhatIfRequest =
        serde_json::from_slice(&body).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let source = state.whatif.get(&request.zone).cloned().ok_or_else(|| {
        ApiError::NotFound(format!(
            "zone `{}` keeps no world log here (run with a redb file or Redis)",
            request.zone
        ))
    })?;
    let changes = request
        .changes
        .iter()
        .map(|text| text.parse::<Change>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(ApiError::BadRequest)?;
    let from_snapshot = request.from_snapshot && has_snapshot(&source, &request.zone).await;
    if state.whatif_busy.swap(true, Ordering::AcqRel) {
        return Err(ApiError::Conflict("a what-if is already running".into()));
    }
    let busy = Arc::clone(&state.whatif_busy);
    let answer = tokio::task::spawn_blocking(move || {
        let options = ReplayOptions {
            source: LogSource::Service {
                log: source.log,
                store: source.store,
            },
            zone_config: source.zone_config,
            limits: source.limits,
            world: source.world,
            zone: Some(request.zone),
            from_snapshot: from_snapshot.then_some(SnapshotPick::Latest),
            store: None,
            compare: None,
            stream: crate::bus::StreamKind::Intents,
            threads: 2,
        };
        what_if(&options, &request.npc, &changes, request.ticks)
    })
    .await;
    busy.store(false, Ordering::Release);
    match answer {
        Ok(Ok(report)) => Ok(HttpResponse::Ok().json(report)),
        Ok(Err(e)) => Err(ApiError::BadRequest(e.to_string())),
        Err(e) => Err(ApiError::Internal(e.to_string())),
    }
}

/// `POST /archetypes/{name}/reset-breaker` (bearer token): resets the archetype's circuit
/// breaker in every zone here where it is tripped, through each zone's world stream.
pub async fn reset_breaker(
    state: web::Data<AdminState>,
    request: HttpRequest,
    path: web::Path<String>,
) -> ApiResult {
    require_token(&state, &request)?;
    let archetype = path.into_inner();
    let mut zones = Vec::new();
    for handle in state.zones.handles() {
        let wanted = archetype.clone();
        let tripped = handle
            .with(move |zone| {
                zone.isolation
                    .state
                    .demoted_archetypes
                    .contains(&wanted)
                    .then_some(zone.game_time)
            })
            .await;
        if let Ok(Some(game_time)) = tripped {
            let message = WorldMessage {
                header: header(
                    format!(
                        "{}:admin:reset-breaker:{archetype}:{game_time}",
                        handle.name
                    ),
                    &handle.name,
                    game_time,
                )
                .from_geppetto(),
                event: WorldEvent::BreakerReset {
                    archetype: archetype.clone(),
                },
            };
            state
                .bus
                .publish(&handle.name, StreamKind::World, message.to_json());
            zones.push(handle.name.clone());
        }
    }
    if zones.is_empty() {
        return Err(ApiError::NotFound(format!(
            "the breaker of archetype `{archetype}` is not tripped in any zone here"
        )));
    }
    Ok(HttpResponse::Accepted().json(json!({"queued": true, "zones": zones})))
}
