//! The admin API's NPC calls: `GET /npcs` (every NPC with its room, tier, mood and action),
//! `GET /npcs/{id}/brain` (the [`Brain`] view, JSON or `?format=text`),
//! `GET /npcs/{id}/decisions`, and the mutating `POST /npcs` (spawn), `DELETE /npcs/{id}`
//! (despawn), `POST /npcs/{id}/schedule_override` and `POST /npcs/{id}/reinstate` (bearer
//! token).
//!
//! Mutations are not applied here: they are written to the zone's world stream as world events
//! (checked by the world-event parser first, so the caller hears about a bad request), and the
//! zone applies them from its log like any input.

use actix_web::{HttpRequest, HttpResponse, web};
use geppetto_core::wire::response::round4;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::AdminState;
use super::auth::require_token;
use super::error::{ApiError, ApiResult};
use crate::bus::StreamKind;
use crate::bus::envelope::{WorldEvent, WorldMessage, header, parse_world};
use crate::runtime::actor::ZoneHandle;
use crate::zone::brain::{BRAIN_TOP_CANDIDATES, Brain};

/// Why an NPC's `mood` is null in the list (the brain view says the same as `mood_note`).
const NO_MOOD: &str = "given inline, without an archetype: no mood";

/// One NPC in `GET /npcs`.
#[derive(Serialize)]
struct NpcSummary {
    id: String,
    name: String,
    zone: String,
    archetype: Option<String>,
    room: String,
    tier: &'static str,
    /// Mood in [−1, 1]; null for an NPC without an archetype (see `mood_note`).
    mood: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mood_note: Option<&'static str>,
    action: Option<String>,
    held: bool,
}

/// `GET /npcs`.
pub async fn list(state: web::Data<AdminState>) -> HttpResponse {
    let mut all = Vec::new();
    for handle in state.zones.handles() {
        let list = handle
            .with(|zone| {
                zone.agents
                    .iter()
                    .zip(&zone.meta)
                    .map(|(a, m)| NpcSummary {
                        id: a.agent.id.clone(),
                        name: m.name.to_string(),
                        zone: zone.name.clone(),
                        archetype: m.archetype.as_deref().map(str::to_owned),
                        room: zone.room_name(m.room).0.to_owned(),
                        tier: m.tier.tier.as_str(),
                        mood: a.layers.wellbeing.as_deref().map(|(_, w)| round4(w.mood)),
                        mood_note: a.layers.wellbeing.is_none().then_some(NO_MOOD),
                        action: a
                            .running
                            .as_ref()
                            .map(|r| format!("{}/{}", r.provider, r.action.id)),
                        held: zone.isolation.is_held(&a.agent.id, m.archetype.as_deref()),
                    })
                    .collect::<Vec<_>>()
            })
            .await;
        if let Ok(list) = list {
            all.extend(list);
        }
    }
    HttpResponse::Ok().json(all)
}

/// `?format=text` asks for the brain view as text.
#[derive(Deserialize)]
pub struct BrainQuery {
    #[serde(default)]
    format: Option<String>,
}

/// `GET /npcs/{id}/brain`.
pub async fn brain(
    state: web::Data<AdminState>,
    path: web::Path<String>,
    query: web::Query<BrainQuery>,
) -> ApiResult {
    let id = path.into_inner();
    for handle in state.zones.handles() {
        let wanted = id.clone();
        if let Ok(Some(view)) = handle
            .with(move |zone| Brain::of(zone, &wanted, BRAIN_TOP_CANDIDATES))
            .await
        {
            return Ok(if query.format.as_deref() == Some("text") {
                HttpResponse::Ok()
                    .content_type("text/plain")
                    .body(view.to_string())
            } else {
                HttpResponse::Ok().json(view)
            });
        }
    }
    Err(ApiError::no_npc(&id))
}

/// The zone holding NPC `id` and its game time, if any zone does.
async fn locate(state: &AdminState, id: &str) -> Option<(ZoneHandle, u64)> {
    for handle in state.zones.handles() {
        let wanted = id.to_owned();
        if let Ok(Some(game_time)) = handle
            .with(move |zone| zone.npc_index(&wanted).map(|_| zone.game_time))
            .await
        {
            return Some((handle, game_time));
        }
    }
    None
}

/// Checks `message` with the world-event parser and writes it to `zone`'s world stream.
fn queue(state: &AdminState, zone: &str, message: &WorldMessage) -> ApiResult {
    let json = message.to_json();
    parse_world(&json).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    state.bus.publish(zone, StreamKind::World, json);
    Ok(HttpResponse::Accepted().json(json!({"queued": true})))
}

/// Writes `event` about NPC `id` into its zone's world stream; `what` names it in the
/// message id.
async fn queue_for_npc(state: &AdminState, id: &str, what: &str, event: WorldEvent) -> ApiResult {
    let (handle, game_time) = locate(state, id)
        .await
        .ok_or_else(|| ApiError::no_npc(id))?;
    let message = WorldMessage {
        header: header(
            format!("{}:admin:{what}:{id}:{game_time}", handle.name),
            &handle.name,
            game_time,
        )
        .from_geppetto(),
        event,
    };
    queue(state, &handle.name, &message)
}

/// `POST /npcs/{id}/reinstate` (bearer token): gives back an NPC that isolation holds, through
/// its zone's world stream (so a replay reinstates it where it happened).
pub async fn reinstate(
    state: web::Data<AdminState>,
    request: HttpRequest,
    path: web::Path<String>,
) -> ApiResult {
    require_token(&state, &request)?;
    let id = path.into_inner();
    let (handle, _) = locate(&state, &id)
        .await
        .ok_or_else(|| ApiError::no_npc(&id))?;
    let wanted = id.clone();
    let held = handle
        .with(move |zone| {
            let index = zone.npc_index(&wanted)?;
            Some(
                zone.isolation
                    .is_held(&wanted, zone.meta[index].archetype.as_deref()),
            )
        })
        .await;
    if !matches!(held, Ok(Some(true))) {
        return Err(ApiError::NotFound(format!("NPC `{id}` is not held")));
    }
    let event = WorldEvent::NpcReinstated { npc: id.clone() };
    queue_for_npc(&state, &id, "reinstate", event).await
}

/// `GET /npcs/{id}/decisions`: the NPC's recent decisions, oldest first.
pub async fn decisions(state: web::Data<AdminState>, path: web::Path<String>) -> ApiResult {
    let id = path.into_inner();
    let (handle, _) = locate(&state, &id)
        .await
        .ok_or_else(|| ApiError::no_npc(&id))?;
    let wanted = id.clone();
    let trace = handle
        .with(move |zone| zone.npc_index(&wanted).map(|index| zone.decisions(index)))
        .await;
    match trace {
        Ok(Some(trace)) => Ok(HttpResponse::Ok().json(trace)),
        _ => Err(ApiError::no_npc(&id)),
    }
}

/// The body of `POST /npcs`.
#[derive(Deserialize)]
struct SpawnRequest {
    zone: String,
    npc: Value,
}

/// `POST /npcs` (bearer token): `{zone, npc}`, queued as `npc_spawned`.
pub async fn spawn(
    state: web::Data<AdminState>,
    request: HttpRequest,
    body: web::Bytes,
) -> ApiResult {
    require_token(&state, &request)?;
    let spawn: SpawnRequest =
        serde_json::from_slice(&body).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let handle = state
        .zones
        .get(&spawn.zone)
        .map(|z| z.handle)
        .ok_or_else(|| ApiError::NotFound(format!("no zone `{}`", spawn.zone)))?;
    let game_time = handle
        .status()
        .await
        .map(|s| s.game_time)
        .unwrap_or_default();
    let message = WorldMessage {
        header: header(
            format!("{}:admin:spawn:{game_time}", spawn.zone),
            &spawn.zone,
            game_time,
        ),
        event: WorldEvent::NpcSpawned { npc: spawn.npc },
    };
    queue(&state, &spawn.zone, &message)
}

/// `DELETE /npcs/{id}` (bearer token), queued as `npc_despawned`.
pub async fn despawn(
    state: web::Data<AdminState>,
    request: HttpRequest,
    path: web::Path<String>,
) -> ApiResult {
    require_token(&state, &request)?;
    let id = path.into_inner();
    let event = WorldEvent::NpcDespawned { npc: id.clone() };
    queue_for_npc(&state, &id, "despawn", event).await
}

/// `POST /npcs/{id}/schedule_override` (bearer token): a temporary schedule block
/// (`{activity, location?, tags?, hours}`), queued as a `schedule_override` world event.
pub async fn schedule_override(
    state: web::Data<AdminState>,
    request: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> ApiResult {
    require_token(&state, &request)?;
    // The body is the event's payload: the world-event parser checks it, as it would the
    // game's own `schedule_override`.
    let id = path.into_inner();
    let mut fields = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => return Err(ApiError::BadRequest("expected a JSON object".into())),
        Err(e) => return Err(ApiError::BadRequest(e.to_string())),
    };
    let header =
        json!({"v": 1, "type": "schedule_override", "id": "admin", "zone": "", "game_time": 0});
    if let Value::Object(header) = header {
        fields.extend(header);
    }
    fields.insert("npc".into(), Value::String(id.clone()));
    let event = parse_world(&Value::Object(fields).to_string())
        .map_err(|e| ApiError::BadRequest(e.to_string()))?
        .event;
    queue_for_npc(&state, &id, "schedule_override", event).await
}
