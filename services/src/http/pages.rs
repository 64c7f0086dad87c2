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
        .body(with_charts(include_str!("../../assets/inspector.html")))
}

/// The charting the inspector and the village report share (`assets/chart.js`).
pub const CHART_JS: &str = include_str!("../../assets/chart.js");

/// A page with the shared charting put in its `/*CHART*/` script.
pub fn with_charts(page: &str) -> String {
    page.replacen("/*CHART*/", CHART_JS, 1)
}
