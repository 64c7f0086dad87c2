//! The admin API's read-only service pages: `GET /healthz`, `GET /metrics` (Prometheus text)
//! and `GET /inspector` (the web inspector, one embedded page with no external assets).

use actix_web::{HttpResponse, web};
use serde_json::json;

use super::AdminState;

/// `GET /healthz`.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// `GET /metrics`: the Prometheus recorder's text, when one is installed.
pub async fn metrics(state: web::Data<AdminState>) -> HttpResponse {
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

/// `GET /inspector`.
pub async fn inspector() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(include_str!("../../assets/inspector.html"))
}
