//! The admin API's one error type: every refusal a handler gives, with its HTTP status, as the
//! JSON body `{"error": "…"}` (actix-web's `ResponseError`).

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};

/// Why an admin call was refused.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A mutating call without the right bearer token (401).
    #[error("bearer token required")]
    Unauthorized,
    /// The request is malformed or refused by a parser (400).
    #[error("{0}")]
    BadRequest(String),
    /// No such NPC or zone here (404).
    #[error("{0}")]
    NotFound(String),
    /// The body is not of the type the call takes (415).
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// The call conflicts with the service's state (409).
    #[error("{0}")]
    Conflict(String),
    /// The zone that would answer is not running (503).
    #[error("{0}")]
    Unavailable(String),
    /// The service failed to answer (500).
    #[error("{0}")]
    Internal(String),
}

impl ApiError {
    /// `no NPC `{id}``.
    pub fn no_npc(id: &str) -> Self {
        Self::NotFound(format!("no NPC `{id}`"))
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::build(self.status_code()).json(serde_json::json!({"error": self.to_string()}))
    }
}

/// What a handler answers: a response, or an [`ApiError`].
pub type ApiResult = Result<HttpResponse, ApiError>;
