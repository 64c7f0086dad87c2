//! The admin HTTP API (actix-web), loopback by default: `GET /healthz`, `GET /metrics`
//! (Prometheus text), `GET /npcs`, `GET /npcs/{id}/brain` (JSON, or `?format=text`),
//! `POST /npcs` (spawn) and `DELETE /npcs/{id}` (despawn). Mutating calls need
//! `Authorization: Bearer <token>` with the token from the environment variable the config
//! names; with no token configured they are refused.
//!
//! Spawns and despawns are not applied here: they are written to the zone's world stream as
//! `npc_spawned` / `npc_despawned` events, so they are logged and replayed like any input.

use std::collections::BTreeMap;
use std::sync::Arc;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use geppetto_core::consideration::Updater;
use geppetto_core::rng::derive_seed;
use geppetto_core::wire::response::round4;
use geppetto_llm::Secret;
use metrics_exporter_prometheus::PrometheusHandle;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::actor::ZoneHandle;
use crate::bus::envelope::{WorldEvent, WorldMessage, header};
use crate::bus::{EventBus, StreamKind};
use crate::zone::Zone;

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
    pub controls: Option<tokio::sync::mpsc::Sender<crate::service::ZoneControl>>,
}

impl ZoneDirectory {
    /// Adds (or replaces) a running zone.
    pub fn insert(&self, zone: RunningZone) {
        if let Ok(mut zones) = self.0.write() {
            zones.insert(zone.handle.name.clone(), zone);
        }
    }

    /// Removes the zone `name`.
    pub fn remove(&self, name: &str) {
        if let Ok(mut zones) = self.0.write() {
            zones.remove(name);
        }
    }

    /// The zone `name`, if it runs here.
    pub fn get(&self, name: &str) -> Option<RunningZone> {
        self.0
            .read()
            .ok()
            .and_then(|zones| zones.get(name).cloned())
    }

    /// The actors of every zone running here, by name.
    pub fn handles(&self) -> Vec<ZoneHandle> {
        self.0
            .read()
            .map(|zones| zones.values().map(|z| z.handle.clone()).collect())
            .unwrap_or_default()
    }

    /// The names of the zones running here.
    pub fn names(&self) -> Vec<String> {
        self.0
            .read()
            .map(|zones| zones.keys().cloned().collect())
            .unwrap_or_default()
    }
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

/// Whether `given` equals `expected`, in a time that does not depend on where they differ.
fn constant_time_eq(given: &[u8], expected: &[u8]) -> bool {
    if given.len() != expected.len() {
        return false;
    }
    let difference = given
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    std::hint::black_box(difference) == 0
}

fn authorised(state: &AdminState, request: &HttpRequest) -> bool {
    let Some(token) = &state.token else {
        return false;
    };
    request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|given| constant_time_eq(given.as_bytes(), token.expose().as_bytes()))
}

async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

async fn metrics(state: web::Data<AdminState>) -> HttpResponse {
    match &state.metrics {
        Some(handle) => {
            handle.run_upkeep();
            HttpResponse::Ok()
                .content_type("text/plain; version=0.0.4")
                .body(handle.render())
        }
        None => HttpResponse::ServiceUnavailable().body("no metrics recorder installed"),
    }
}

async fn npcs(state: web::Data<AdminState>) -> HttpResponse {
    let mut all = Vec::new();
    for handle in state.zones.handles() {
        let list = handle
            .with(|zone| {
                zone.agents
                    .iter()
                    .zip(&zone.meta)
                    .map(|(a, m)| {
                        json!({
                            "id": a.agent.id, "name": m.name, "zone": zone.name,
                            "archetype": m.archetype, "room": zone.room_name(m.room).0,
                            "tier": m.tier.tier.as_str(),
                            "mood": a.wellbeing.as_ref().map(|(_, w)| round4(w.mood)),
                            "action": a.running.as_ref().map(|r| format!("{}/{}", r.provider, r.action.id)),
                            "held": zone.isolation.is_held(&a.agent.id, m.archetype.as_deref()),
                        })
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

/// Points of a consideration's response curve drawn over its domain (`[value, pressure]`).
const CURVE_PREVIEW_POINTS: usize = 21;

/// A consideration's response curve sampled at [`CURVE_PREVIEW_POINTS`] values from `min` to
/// `max`: `[[value, pressure], …]` (the inspector draws it, the current value marked).
fn curve_preview(c: &geppetto_core::Consideration, convex_exponent: f64) -> Vec<[f64; 2]> {
    let steps = (CURVE_PREVIEW_POINTS - 1) as f64;
    (0..CURVE_PREVIEW_POINTS)
        .map(|i| {
            let value = c.min + (c.max - c.min) * i as f64 / steps;
            [
                round4(value),
                round4(c.curve.pressure(value, c.min, c.max, convex_exponent)),
            ]
        })
        .collect()
}

/// A utility-set consideration's shape sampled over its normalised input `[0, 1]`.
fn shape_preview(shape: &geppetto_core::Shape) -> Vec<[f64; 2]> {
    let steps = (CURVE_PREVIEW_POINTS - 1) as f64;
    (0..CURVE_PREVIEW_POINTS)
        .map(|i| {
            let x = i as f64 / steps;
            [round4(x), round4(shape.evaluate(x))]
        })
        .collect()
}

/// The debug-brain view of one NPC: considerations, current action, top candidates with the
/// breakdown of each score (from `Decider::rank`), and what was ruled out and why.
pub fn brain(zone: &Zone, id: &str, top: usize) -> Option<Value> {
    let index = zone.npc_index(id)?;
    let agent = &zone.agents[index];
    let meta = &zone.meta[index];
    let ranking = zone.decider().rank(
        &agent.agent,
        &zone.world,
        derive_seed(zone.tick, index as u64),
    );
    let names = |p: usize, a: usize| {
        let provider = zone.world.providers.get(p);
        (
            provider.map(|p| p.id.clone()).unwrap_or_default(),
            provider
                .and_then(|p| p.actions.get(a))
                .map(|a| a.id.clone())
                .unwrap_or_default(),
        )
    };
    Some(json!({
        "id": id, "name": meta.name, "zone": zone.name, "tier": meta.tier.tier.as_str(),
        "room": zone.room_name(meta.room).0, "game_time": zone.game_time,
        "considerations": agent.agent.considerations.iter().map(|c| json!({
            "name": zone.vocabulary.name(c.name), "value": round4(c.value), "min": c.min, "max": c.max,
            "weight": c.weight, "critical": c.is_critical(),
            "decay_per_hour": match c.updater { Updater::LinearDecay { rate } => rate, Updater::LinearRegen { rate } => -rate, _ => 0.0 },
            "curve": curve_preview(c, zone.decider().tuning().convex_exponent),
        })).collect::<Vec<_>>(),
        "mood": agent.wellbeing.as_ref().map(|(_, w)| round4(w.mood)),
        "stress": agent.wellbeing.as_ref().map(|(_, w)| round4(w.stress)),
        "schedule_block": agent.schedule.as_ref().and_then(|s| s.current).map(|a| zone.vocabulary.name(a).to_owned()),
        "goals": agent.goals.as_ref().map(|book| book.goals.iter().map(|g| {
            let mut record = serde_json::to_value(zone.goal_predicates.goal_record(g, &zone.vocabulary)).unwrap_or_default();
            let at = agent.running.as_ref().map(|r| r.provider.as_str());
            record["progress"] = json!(round4(g.progress(&agent.agent, &zone.world, at)));
            record
        }).collect::<Vec<_>>()).unwrap_or_default(),
        "feelings": agent.affect.as_ref().map(|layer| layer.model.state_names().iter().zip(&layer.state.values)
            .map(|(name, value)| json!({"name": name, "value": round4(*value)})).collect::<Vec<_>>()).unwrap_or_default(),
        "plan": agent.queue.iter().map(|q| json!({
            "provider": q.provider, "action": q.action, "player_queued": q.player_queued, "from_plan": q.from_plan,
        })).collect::<Vec<_>>(),
        "reactive_set": agent.reactive.as_ref().map(|layer| json!({
            "name": layer.set.name,
            "running": layer.state.running.and_then(|i| layer.set.actions.get(i)).map(|a| a.name.clone()),
            "curves": layer.set.actions.iter().flat_map(|action| action.considerations.iter().map(move |c| json!({
                "action": action.name, "consideration": c.name,
                "curve": shape_preview(&c.shape),
            }))).collect::<Vec<_>>(),
        })),
        "errors": zone.isolation.failures(id),
        "social": {
            "friends": zone.social.fabric.relationships.friends(id),
            "rivals": zone.social.fabric.relationships.rivals(id),
            "allies": zone.social.fabric.relationships.allies(id),
            "rumours": zone.social.fabric.rumours(id).iter().map(|r| json!({
                "subject": r.subject, "kind": r.kind.as_str(), "depth": r.depth,
                "confidence": round4(r.confidence),
            })).collect::<Vec<_>>(),
        },
        "current_action": agent.running.as_ref().map(|r| json!({
            "provider": r.provider, "action": r.action.id, "elapsed_hours": round4(r.elapsed_hours),
            "utility": round4(r.continuation_utility),
        })),
        "top_candidates": ranking.ranked.iter().take(top).map(|c| {
            let (provider, action) = names(c.provider, c.action);
            let b = c.breakdown;
            json!({"provider": provider, "action": action, "utility": round4(c.utility),
                   "breakdown": {"benefit": round4(b.benefit), "priority": round4(b.priority),
                   "personality": round4(b.personality), "context": round4(b.context),
                   "distance": round4(b.distance), "cost": round4(b.cost)}})
        }).collect::<Vec<_>>(),
        "ineligible": ranking.ineligible.iter().map(|i| {
            let (provider, action) = names(i.provider, i.action);
            json!({"provider": provider, "action": action, "reason": i.reason.as_str()})
        }).collect::<Vec<_>>(),
    }))
}

/// The text form of [`brain`].
pub fn brain_text(brain: &Value) -> String {
    use std::fmt::Write as _;
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}) in {}, tier {}",
        s(&brain["name"]),
        s(&brain["id"]),
        s(&brain["room"]),
        s(&brain["tier"])
    );
    if let Some(mood) = brain["mood"].as_f64() {
        let stress = brain["stress"].as_f64().unwrap_or_default();
        let _ = writeln!(
            out,
            "mood {mood:+.2}, stress {stress:.2}, errors {}",
            brain["errors"]
        );
    }
    if let Some(block) = brain["schedule_block"].as_str() {
        let _ = writeln!(out, "schedule: {block}");
    }
    for c in brain["considerations"].as_array().into_iter().flatten() {
        let value = c["value"].as_f64().unwrap_or_default();
        let (min, max) = (
            c["min"].as_f64().unwrap_or_default(),
            c["max"].as_f64().unwrap_or(1.0),
        );
        let filled = if max > min {
            (((value - min) / (max - min)) * 20.0)
                .round()
                .clamp(0.0, 20.0) as usize
        } else {
            0
        };
        let bar = format!("{}{}", "#".repeat(filled), ".".repeat(20 - filled));
        let flag = if c["critical"] == true {
            " CRITICAL"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {:<9} [{bar}] {value:>7.2}  weight {}  decay/h {}{flag}",
            s(&c["name"]),
            c["weight"],
            c["decay_per_hour"]
        );
    }
    for g in brain["goals"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "goal: {} ({}, {:.0} %)",
            s(&g["description"]),
            s(&g["category"]),
            g["progress"].as_f64().unwrap_or_default() * 100.0
        );
    }
    let names = |key: &str| {
        brain["social"][key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    for key in ["friends", "rivals", "allies"] {
        let list = names(key);
        if !list.is_empty() {
            let _ = writeln!(out, "{key}: {list}");
        }
    }
    for r in brain["social"]["rumours"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "rumour: {} about {} (depth {}, confidence {:.2})",
            s(&r["kind"]),
            s(&r["subject"]),
            r["depth"],
            r["confidence"].as_f64().unwrap_or_default()
        );
    }
    match brain["current_action"].as_object() {
        Some(a) => {
            let _ = writeln!(
                out,
                "doing: {}/{}",
                a["provider"].as_str().unwrap_or_default(),
                a["action"].as_str().unwrap_or_default()
            );
        }
        None => {
            let _ = writeln!(out, "doing: nothing");
        }
    }
    for (i, c) in brain["top_candidates"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let b = &c["breakdown"];
        let _ = writeln!(
            out,
            "{}. {}/{} -> {:.2}  (benefit {}, priority {}, personality {}, context {}, distance {}, cost {})",
            i + 1,
            s(&c["provider"]),
            s(&c["action"]),
            c["utility"].as_f64().unwrap_or_default(),
            b["benefit"],
            b["priority"],
            b["personality"],
            b["context"],
            b["distance"],
            b["cost"]
        );
    }
    out
}

#[derive(Deserialize)]
struct BrainQuery {
    #[serde(default)]
    format: Option<String>,
}

/// Candidates the brain view lists.
pub const BRAIN_TOP_CANDIDATES: usize = 5;

async fn npc_brain(
    state: web::Data<AdminState>,
    path: web::Path<String>,
    query: web::Query<BrainQuery>,
) -> HttpResponse {
    let id = path.into_inner();
    for handle in state.zones.handles() {
        let wanted = id.clone();
        if let Ok(Some(view)) = handle
            .with(move |zone| brain(zone, &wanted, BRAIN_TOP_CANDIDATES))
            .await
        {
            return if query.format.as_deref() == Some("text") {
                HttpResponse::Ok()
                    .content_type("text/plain")
                    .body(brain_text(&view))
            } else {
                HttpResponse::Ok().json(view)
            };
        }
    }
    HttpResponse::NotFound().json(json!({"error": format!("no NPC `{id}`")}))
}

#[derive(Deserialize)]
struct SpawnRequest {
    zone: String,
    npc: Value,
}

async fn spawn(
    state: web::Data<AdminState>,
    request: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    if !authorised(&state, &request) {
        return HttpResponse::Unauthorized().json(json!({"error": "bearer token required"}));
    }
    let spawn: SpawnRequest = match serde_json::from_slice(&body) {
        Ok(spawn) => spawn,
        Err(e) => return HttpResponse::BadRequest().json(json!({"error": e.to_string()})),
    };
    let Some(handle) = state.zones.get(&spawn.zone).map(|z| z.handle) else {
        return HttpResponse::NotFound()
            .json(json!({"error": format!("no zone `{}`", spawn.zone)}));
    };
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
    // Checked now so the caller hears about a bad spec; the zone applies it from the log.
    if let Err(e) = crate::bus::envelope::parse_world(&message.to_json()) {
        return HttpResponse::BadRequest().json(json!({"error": e.to_string()}));
    }
    state
        .bus
        .publish(&spawn.zone, StreamKind::World, message.to_json());
    HttpResponse::Accepted().json(json!({"queued": true}))
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

/// Writes `event` about NPC `id` into its zone's world stream (the zone applies it from the
/// log, like any world event); `what` names it in the message id.
async fn queue_for_npc(
    state: &AdminState,
    id: &str,
    what: &str,
    event: WorldEvent,
) -> HttpResponse {
    let Some((handle, game_time)) = locate(state, id).await else {
        return HttpResponse::NotFound().json(json!({"error": format!("no NPC `{id}`")}));
    };
    let message = WorldMessage {
        header: header(
            format!("{}:admin:{what}:{id}:{game_time}", handle.name),
            &handle.name,
            game_time,
        ),
        event,
    };
    // Checked now so the caller hears about a bad request; the zone applies it from the log.
    if let Err(e) = crate::bus::envelope::parse_world(&message.to_json()) {
        return HttpResponse::BadRequest().json(json!({"error": e.to_string()}));
    }
    state
        .bus
        .publish(&handle.name, StreamKind::World, message.to_json());
    HttpResponse::Accepted().json(json!({"queued": true}))
}

/// `GET /npcs/{id}/decisions`: the NPC's recent decisions, oldest first.
async fn decisions(state: web::Data<AdminState>, path: web::Path<String>) -> HttpResponse {
    let id = path.into_inner();
    let not_found = || HttpResponse::NotFound().json(json!({"error": format!("no NPC `{id}`")}));
    let Some((handle, _)) = locate(&state, &id).await else {
        return not_found();
    };
    let wanted = id.clone();
    let trace = handle
        .with(move |zone| {
            zone.npc_index(&wanted).map(|index| {
                zone.meta[index]
                    .decisions
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
            })
        })
        .await;
    match trace {
        Ok(Some(trace)) => HttpResponse::Ok().json(trace),
        _ => not_found(),
    }
}

async fn despawn(
    state: web::Data<AdminState>,
    request: HttpRequest,
    path: web::Path<String>,
) -> HttpResponse {
    if !authorised(&state, &request) {
        return HttpResponse::Unauthorized().json(json!({"error": "bearer token required"}));
    }
    let id = path.into_inner();
    let event = WorldEvent::NpcDespawned { npc: id.clone() };
    queue_for_npc(&state, &id, "despawn", event).await
}

/// `POST /npcs/{id}/schedule_override`: a temporary schedule block (`{activity, location?,
/// tags?, hours}`), queued as a `schedule_override` world event.
async fn schedule_override(
    state: web::Data<AdminState>,
    request: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    if !authorised(&state, &request) {
        return HttpResponse::Unauthorized().json(json!({"error": "bearer token required"}));
    }
    // The body is the event's payload: the world-event parser checks it, as it would the
    // game's own `schedule_override`.
    let id = path.into_inner();
    let mut fields = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => {
            return HttpResponse::BadRequest().json(json!({"error": "expected a JSON object"}));
        }
        Err(e) => return HttpResponse::BadRequest().json(json!({"error": e.to_string()})),
    };
    let header =
        json!({"v": 1, "type": "schedule_override", "id": "admin", "zone": "", "game_time": 0});
    if let Value::Object(header) = header {
        fields.extend(header);
    }
    fields.insert("npc".into(), Value::String(id.clone()));
    let event = match crate::bus::envelope::parse_world(&Value::Object(fields).to_string()) {
        Ok(message) => message.event,
        Err(e) => return HttpResponse::BadRequest().json(json!({"error": e.to_string()})),
    };
    queue_for_npc(&state, &id, "schedule_override", event).await
}

/// `POST /zones/{zone}/snapshot`: writes a snapshot of the zone now (bearer token); answers
/// with its sequence, the last world-log id it covers, tick, game time and size.
async fn snapshot_now(
    state: web::Data<AdminState>,
    request: HttpRequest,
    path: web::Path<String>,
) -> HttpResponse {
    if !authorised(&state, &request) {
        return HttpResponse::Unauthorized().json(json!({"error": "bearer token required"}));
    }
    let zone = path.into_inner();
    let Some(requests) = state.zones.get(&zone).and_then(|running| running.controls) else {
        return HttpResponse::NotFound()
            .json(json!({"error": format!("no zone `{zone}` keeps snapshots here")}));
    };
    let (reply, answer) = tokio::sync::oneshot::channel();
    if requests
        .send(crate::service::ZoneControl::Snapshot(reply))
        .await
        .is_err()
    {
        return HttpResponse::ServiceUnavailable()
            .json(json!({"error": format!("zone `{zone}` is not running")}));
    }
    match answer.await {
        Ok(Ok(report)) => HttpResponse::Ok().json(report),
        Ok(Err(reason)) => HttpResponse::Conflict().json(json!({"error": reason})),
        Err(_) => HttpResponse::ServiceUnavailable()
            .json(json!({"error": format!("zone `{zone}` stopped before answering")})),
    }
}

/// Reads the content files again (world files, profile and archetype directories) and hands
/// out one rebuild per running zone; an error names the file, path and reason.
pub type ContentReload =
    Arc<dyn Fn(&[String]) -> Result<Vec<(String, crate::service::Rebuild)>, String> + Send + Sync>;

/// `POST /content/reload` (bearer token): reads the content files again and rebuilds every
/// zone running here from them, each keeping its state (needs, goals, memories, positions);
/// answers each zone's outcome. Content that does not load is refused whole (400) and nothing
/// changes; a zone whose state no longer fits the new content (a room removed, an NPC's layers
/// changed) keeps running as it was and is reported (409).
async fn reload_content(state: web::Data<AdminState>, request: HttpRequest) -> HttpResponse {
    if !authorised(&state, &request) {
        return HttpResponse::Unauthorized().json(json!({"error": "bearer token required"}));
    }
    let Some(reload) = state.content_reload.clone() else {
        return HttpResponse::NotFound()
            .json(json!({"error": "content reload needs `geppetto serve`"}));
    };
    let zones = state.zones.names();
    let rebuilds = match web::block(move || reload(&zones)).await {
        Ok(Ok(rebuilds)) => rebuilds,
        Ok(Err(error)) => return HttpResponse::BadRequest().json(json!({"error": error})),
        Err(error) => {
            return HttpResponse::InternalServerError().json(json!({"error": error.to_string()}));
        }
    };
    let mut reloaded = Vec::new();
    let mut refused = Vec::new();
    for (zone, rebuild) in rebuilds {
        let Some(controls) = state.zones.get(&zone).and_then(|running| running.controls) else {
            refused.push(json!({"zone": zone, "error": "the zone is not running here"}));
            continue;
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        let request = crate::service::ReloadRequest { rebuild, reply };
        if controls
            .send(crate::service::ZoneControl::Reload(request))
            .await
            .is_err()
        {
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
    if refused.is_empty() {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::Conflict().json(body)
    }
}

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
    pub log: crate::recovery::WorldLog,
    /// Its snapshots.
    pub store: Arc<dyn geppetto_storage::SnapshotStore>,
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

/// `POST /whatif`: replays the zone's recorded window (from its newest snapshot) as it was and
/// with `changes`, offline on a blocking thread — the live zone is never touched — and answers
/// both timelines of `npc` and the first divergence. One at a time (409 while one runs).
async fn whatif(state: web::Data<AdminState>, body: web::Bytes) -> HttpResponse {
    use std::sync::atomic::Ordering;
    let request: WhatIfRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(e) => return HttpResponse::BadRequest().json(json!({"error": e.to_string()})),
    };
    let Some(source) = state.whatif.get(&request.zone).cloned() else {
        return HttpResponse::NotFound().json(json!({"error": format!(
            "zone `{}` keeps no world log here (run with a redb file or Redis)", request.zone)}));
    };
    let mut changes = Vec::new();
    for text in &request.changes {
        match text.parse::<crate::commands::whatif::Change>() {
            Ok(change) => changes.push(change),
            Err(e) => return HttpResponse::BadRequest().json(json!({"error": e})),
        }
    }
    // Start from the newest snapshot when there is one, else from the world file.
    let mut from_snapshot = request.from_snapshot;
    if from_snapshot {
        let key = geppetto_storage::Zone::new(request.zone.as_str());
        let newest = match key {
            Ok(key) => source
                .store
                .latest_valid(&key, crate::zone::ZONE_STATE_SCHEMA_VERSION)
                .await
                .ok()
                .and_then(|latest| latest.snapshot),
            Err(_) => None,
        };
        from_snapshot = newest.is_some();
    }
    if state.whatif_busy.swap(true, Ordering::AcqRel) {
        return HttpResponse::Conflict().json(json!({"error": "a what-if is already running"}));
    }
    let busy = Arc::clone(&state.whatif_busy);
    let answer = tokio::task::spawn_blocking(move || {
        let options = crate::commands::replay::ReplayOptions {
            source: crate::commands::replay::LogSource::Service {
                log: source.log,
                store: source.store,
            },
            zone_config: source.zone_config,
            limits: source.limits,
            world: source.world,
            zone: Some(request.zone),
            from_snapshot: from_snapshot.then_some(crate::commands::replay::SnapshotPick::Latest),
            store: None,
            compare: None,
            threads: 1,
        };
        crate::commands::whatif::what_if(&options, &request.npc, &changes, request.ticks)
    })
    .await;
    busy.store(false, Ordering::Release);
    match answer {
        Ok(Ok(report)) => HttpResponse::Ok().json(report),
        Ok(Err(e)) => HttpResponse::BadRequest().json(json!({"error": e.to_string()})),
        Err(e) => HttpResponse::InternalServerError().json(json!({"error": e.to_string()})),
    }
}

/// Story signals a slow `/events` reader may fall behind by before it skips ahead.
const STORY_FEED_BUFFER: usize = 256;

/// Starts one reader per zone of its `story` stream (consumer group `group`: each instance of
/// a cluster has its own, so each sees every signal) and returns the channel they broadcast
/// to; each `GET /events` subscribes to it. Stops with `stopped`.
pub fn story_feed(
    bus: &Arc<dyn EventBus>,
    zones: impl IntoIterator<Item = String>,
    group: &str,
    stopped: &tokio::sync::watch::Receiver<bool>,
) -> tokio::sync::broadcast::Sender<String> {
    let (sender, _) = tokio::sync::broadcast::channel(STORY_FEED_BUFFER);
    for zone in zones {
        let (bus, sender, mut stopped) = (Arc::clone(bus), sender.clone(), stopped.clone());
        let group = group.to_owned();
        tokio::spawn(async move {
            let Ok(mut consumer) = bus
                .consumer(&zone, StreamKind::Story, &group, "inspector")
                .await
            else {
                tracing::warn!(zone, "inspector: the story stream cannot be read");
                return;
            };
            loop {
                let batch = tokio::select! {
                    batch = consumer.next_batch(64, std::time::Duration::from_millis(500)) => batch,
                    _ = stopped.changed() => return,
                };
                let Ok(batch) = batch else {
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                    continue;
                };
                let ids: Vec<String> = batch.iter().map(|d| d.id.clone()).collect();
                for delivery in batch {
                    // No subscriber is not an error: the feed is live only.
                    let _ = sender.send(delivery.body);
                }
                let _ = consumer.ack(&ids).await;
            }
        });
    }
    sender
}

/// `GET /events`: story signals as Server-Sent Events (`event: story_signal`, the envelope as
/// data), live from the moment of connecting.
async fn events(state: web::Data<AdminState>) -> HttpResponse {
    use tokio::sync::broadcast::error::RecvError;
    let receiver = state.story_feed.subscribe();
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        loop {
            match receiver.recv().await {
                Ok(body) => {
                    let event = format!("event: story_signal\ndata: {body}\n\n");
                    return Some((Ok::<_, actix_web::Error>(web::Bytes::from(event)), receiver));
                }
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            }
        }
    });
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .streaming(stream)
}

/// `GET /inspector`: the web inspector (one embedded page, no external assets).
async fn inspector() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(include_str!("../assets/inspector.html"))
}

/// Binds `address` and returns the running server (spawn or await it).
pub fn start(state: AdminState, address: &str) -> std::io::Result<actix_web::dev::Server> {
    let payload = web::PayloadConfig::new(state.max_body_bytes);
    let data = web::Data::new(state);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .app_data(payload.clone())
            .route("/healthz", web::get().to(healthz))
            .route("/metrics", web::get().to(metrics))
            .route("/npcs", web::get().to(npcs))
            .route("/inspector", web::get().to(inspector))
            .route("/events", web::get().to(events))
            .route("/whatif", web::post().to(whatif))
            .route("/zones/{zone}/snapshot", web::post().to(snapshot_now))
            .route("/content/reload", web::post().to(reload_content))
            .route("/npcs", web::post().to(spawn))
            .route("/npcs/{id}", web::delete().to(despawn))
            .route("/npcs/{id}/brain", web::get().to(npc_brain))
            .route("/npcs/{id}/decisions", web::get().to(decisions))
            .route(
                "/npcs/{id}/schedule_override",
                web::post().to(schedule_override),
            )
    })
    .workers(1)
    .bind(address)?
    .disable_signals()
    .run();
    Ok(server)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"s3cret", b"s3cret"));
        assert!(!constant_time_eq(b"s3cres", b"s3cret"));
        assert!(!constant_time_eq(b"s3cre", b"s3cret"));
        assert!(!constant_time_eq(b"", b"s3cret"));
    }

    #[test]
    fn the_brain_view_explains_the_ranking() {
        let zone = crate::zone::testing::village();
        let view = brain(&zone, "bram", 3).expect("bram");
        assert_eq!(view["considerations"].as_array().map(Vec::len), Some(7));
        let top = view["top_candidates"].as_array().expect("top");
        assert_eq!(top.len(), 3);
        assert!(top[0]["utility"].as_f64() >= top[1]["utility"].as_f64());
        assert!(top[0]["breakdown"]["benefit"].is_number());
        let text = brain_text(&view);
        assert!(text.starts_with("Bram the smith (bram) in forge"), "{text}");
        assert!(brain(&zone, "nobody", 3).is_none());
    }
}
