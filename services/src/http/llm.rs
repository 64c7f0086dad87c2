//! The admin API's LLM spend calls: `GET /llm/spend` (no token: what the model calls cost
//! since the service started, per hour and per NPC-hour, which the inspector shows) and
//! `/llm/budget` (bearer token): `GET` the `[llm.budget]` allowances and shares in force and
//! what every scope spent in its rolling hour and day, `PUT` new allowances (fields left out
//! take their defaults) or `PATCH` some of them (`null` unsets an allowance or a share). A
//! change is validated whole and refused with the field at fault, changing nothing; it applies
//! from the next call on, and what the windows hold counts against it.

use std::time::Instant;

use actix_web::{HttpRequest, HttpResponse, web};
use geppetto_llm::{Amount, BudgetConfig, SpendBudgetHandle, WorkerStats};
use serde_json::{Map, Value, json};

use super::AdminState;
use super::auth::require_token;
use super::error::{ApiError, ApiResult};

/// The LLM worker's spend as the admin API reads and changes it.
#[derive(Clone, Debug)]
pub struct LlmAdmin {
    /// The budget: allowances in force and what the windows hold.
    pub spend: SpendBudgetHandle,
    /// The calls' totals since the start.
    pub stats: WorkerStats,
    /// When the worker started (the hours `GET /llm/spend` divides by).
    pub started: Instant,
}

/// The budget fields read only at start, which a change may not carry.
const READ_AT_START: [&str; 1] = ["save_within_ms"];

fn llm(state: &AdminState) -> Result<&LlmAdmin, ApiError> {
    state
        .llm
        .as_ref()
        .ok_or_else(|| ApiError::NotFound("no LLM seams run here".to_owned()))
}

fn amount_json(amount: Amount) -> Value {
    json!({"tokens": amount.tokens, "money": geppetto_llm::usage::money(amount.nanos)})
}

/// `GET /llm/budget`: `{"allowances": {...}, "spent": [{"scope", "hour", "day"}]}`, each
/// window as `{"tokens", "money"}` (spent and reserved for calls in flight).
pub async fn budget(state: web::Data<AdminState>, request: HttpRequest) -> ApiResult {
    require_token(&state, &request)?;
    let llm = llm(&state)?;
    Ok(HttpResponse::Ok().json(budget_json(&llm.spend)))
}

fn budget_json(spend: &SpendBudgetHandle) -> Value {
    let spent: Vec<Value> = (spend.spent().into_iter())
        .map(|(scope, hour, day)| {
            json!({"scope": scope.key(), "hour": amount_json(hour), "day": amount_json(day)})
        })
        .collect();
    json!({"allowances": spend.allowances(), "spent": spent})
}

/// `PUT /llm/budget`: the body is the whole allowances object; fields left out take their
/// defaults (an allowance left out does not limit). Answers as `GET`.
pub async fn replace_budget(
    state: web::Data<AdminState>,
    request: HttpRequest,
    body: web::Bytes,
) -> ApiResult {
    require_token(&state, &request)?;
    let llm = llm(&state)?;
    let start = BudgetConfig {
        save_within_ms: llm.spend.allowances().save_within_ms,
        ..BudgetConfig::default()
    };
    change_budget(llm, start, &request, &body)
}

/// `PATCH /llm/budget`: the body's fields replace those in force (a share map's entries one
/// by one); `null` unsets an allowance or removes a share. Answers as `GET`.
pub async fn patch_budget(
    state: web::Data<AdminState>,
    request: HttpRequest,
    body: web::Bytes,
) -> ApiResult {
    require_token(&state, &request)?;
    let llm = llm(&state)?;
    change_budget(llm, llm.spend.allowances(), &request, &body)
}

fn change_budget(
    llm: &LlmAdmin,
    start: BudgetConfig,
    request: &HttpRequest,
    body: &[u8],
) -> ApiResult {
    let changes = json_object(request, body)?;
    let mut merged = serde_json::to_value(start)
        .map_err(|error| ApiError::Internal(format!("allowances: {error}")))?;
    for (field, value) in changes {
        if READ_AT_START.contains(&field.as_str()) {
            return Err(ApiError::BadRequest(format!(
                "`{field}` is read at start: change it in the config file"
            )));
        }
        merge_field(&mut merged, &field, value)?;
    }
    let config: BudgetConfig = serde_json::from_value(merged)
        .map_err(|error| ApiError::BadRequest(format!("allowances: {error}")))?;
    llm.spend
        .set_allowances(&config)
        .map_err(|error| ApiError::BadRequest(error.to_string()))?;
    tracing::info!(allowances = ?config, "LLM budget changed through the admin API");
    Ok(HttpResponse::Ok().json(budget_json(&llm.spend)))
}

/// The body as a JSON object, or the refusal naming what is wrong with it.
fn json_object(request: &HttpRequest, body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let json = request
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|value| value.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return Err(ApiError::UnsupportedMediaType(
            "the budget takes `Content-Type: application/json`".to_owned(),
        ));
    }
    match serde_json::from_slice(body) {
        Ok(Value::Object(fields)) => Ok(fields),
        Ok(_) => Err(ApiError::BadRequest(
            "the body must be a JSON object of allowances".to_owned(),
        )),
        Err(error) => Err(ApiError::BadRequest(format!("body: {error}"))),
    }
}

/// Puts `value` at `field` of `merged`, checked alone first so a refusal names the field (a
/// share map is merged entry by entry; `null` removes an entry).
fn merge_field(merged: &mut Value, field: &str, value: Value) -> Result<(), ApiError> {
    let checked = match &value {
        Value::Object(entries) => Value::Object(
            (entries.iter())
                .filter(|(_, share)| !share.is_null())
                .map(|(name, share)| (name.clone(), share.clone()))
                .collect(),
        ),
        other => other.clone(),
    };
    let alone = json!({ field: checked });
    if let Err(error) = serde_json::from_value::<BudgetConfig>(alone) {
        return Err(ApiError::BadRequest(format!("`{field}`: {error}")));
    }
    let Some(fields) = merged.as_object_mut() else {
        return Err(ApiError::Internal(
            "allowances are not an object".to_owned(),
        ));
    };
    match (fields.get_mut(field), value) {
        (Some(Value::Object(shares)), Value::Object(changes)) => {
            for (name, share) in changes {
                if share.is_null() {
                    shares.remove(&name);
                } else {
                    shares.insert(name, share);
                }
            }
        }
        (_, value) => {
            fields.insert(field.to_owned(), value);
        }
    }
    Ok(())
}

/// `GET /llm/spend`: calls, tokens and cost since the worker started, and the same per hour
/// (of wall-clock time) and per NPC-hour (over the NPCs running here now).
pub async fn spend(state: web::Data<AdminState>) -> ApiResult {
    let llm = llm(&state)?;
    let mut npcs = 0usize;
    for handle in state.zones.handles() {
        if let Ok(count) = handle.with(|zone| zone.agents.len()).await {
            npcs += count;
        }
    }
    let total = llm.stats.snapshot().spend.total;
    let hours = llm.started.elapsed().as_secs_f64() / 3600.0;
    let tokens = total.tokens_in + total.tokens_out;
    let rate = |value: f64, over: f64| if over > 0.0 { value / over } else { 0.0 };
    let npc_hours = hours * npcs as f64;
    Ok(HttpResponse::Ok().json(json!({
        "calls": total.calls,
        "tokens_in": total.tokens_in,
        "tokens_out": total.tokens_out,
        "estimated_tokens": total.estimated_tokens_in + total.estimated_tokens_out,
        "cost": total.cost(),
        "hours": hours,
        "npcs": npcs,
        "per_hour": {"tokens": rate(tokens as f64, hours), "cost": rate(total.cost(), hours)},
        "per_npc_hour": {
            "tokens": rate(tokens as f64, npc_hours),
            "cost": rate(total.cost(), npc_hours),
        },
    })))
}
