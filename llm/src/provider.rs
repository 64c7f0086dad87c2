//! The provider seam: one trait for anything that can narrate an interaction or read
//! candidate events out of an utterance, and the typed error of one call. This module owns no
//! policy (timeouts, breakers, rate limits and fallback live in the worker).

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::backoff::RetryAfter;
use crate::request::{LlmRequest, NarrationRequest, PerceptionRequest};
use crate::usage::Usage;

/// A provider's answer and the tokens it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Metered<T> {
    /// The answer.
    pub value: T,
    /// What the call read and wrote, as the server reported it or estimated.
    pub usage: Usage,
}

impl<T> Metered<T> {
    /// An answer that cost nothing (no model was called).
    pub fn free(value: T) -> Self {
        Self {
            value,
            usage: Usage::default(),
        }
    }
}

/// The future of one provider call.
pub type ProviderFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<Metered<T>, ProviderError>> + Send + 'a>>;

/// How one provider call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// The call outlived its ceiling.
    #[error("call timed out")]
    Timeout,
    /// The provider refused for rate (HTTP 429). It is up and asks for less: this does not
    /// count against its breaker; the worker backs off instead.
    #[error("provider rate limited the call (HTTP 429)")]
    RateLimited {
        /// When it said to come back (`Retry-After`), if it did.
        retry_after: Option<RetryAfter>,
    },
    /// Any other non-success HTTP status.
    #[error("provider answered HTTP {status}: {message}")]
    Http {
        /// The status code.
        status: u16,
        /// The start of the server's error message.
        message: String,
    },
    /// The connection failed or broke.
    #[error("transport error: {0}")]
    Transport(String),
    /// The answer is not a chat completion or carries no text.
    #[error("invalid response: {0}")]
    InvalidResponse(String),
    /// The answer is a completion, but its text is not candidate JSON. The provider is up;
    /// this does not count against its breaker.
    #[error("model output is not candidate JSON")]
    MalformedOutput,
    /// The request could not be built.
    #[error("request could not be built: {0}")]
    Request(String),
}

impl ProviderError {
    /// Whether the provider itself failed (counts toward opening its breaker). Malformed
    /// output and a 429 do not: the provider answered.
    #[must_use]
    pub fn is_provider_failure(&self) -> bool {
        !matches!(
            self,
            ProviderError::MalformedOutput | ProviderError::RateLimited { .. }
        )
    }

    /// Whether the error may be the server refusing a request's structured-output mode: an
    /// HTTP error other than authentication, not-found, rate and overload answers, or an
    /// answer that is not a completion (a validation error in another shape). The call is
    /// then tried once with the next weaker mode, and only an answer to that teaches
    /// anything; transport errors and timeouts never do.
    #[must_use]
    pub fn may_refuse_format(&self) -> bool {
        match self {
            ProviderError::Http { status, .. } => {
                !matches!(status, 401 | 403 | 404 | 408 | 429 | 502 | 503 | 504)
            }
            ProviderError::InvalidResponse(_) => true,
            _ => false,
        }
    }

    /// Stable snake_case name, used as the `outcome` metric label.
    #[must_use]
    pub fn as_str(&self) -> &'static str {
        match self {
            ProviderError::Timeout => "timeout",
            ProviderError::RateLimited { .. } => "rate_limited",
            ProviderError::Http { .. } => "http_error",
            ProviderError::Transport(_) => "transport_error",
            ProviderError::InvalidResponse(_) => "invalid_response",
            ProviderError::MalformedOutput => "malformed_output",
            ProviderError::Request(_) => "request_error",
        }
    }
}

/// Something that serves the two seams. Implementations must be cheap to call concurrently;
/// they receive owned-by-the-caller, immutable requests and return data, never touching state.
pub trait Provider: Send + Sync {
    /// Name used in metrics, events and logs.
    fn name(&self) -> &str;

    /// The instructions this provider sends with a narration, which its answers must not
    /// echo (the worker refuses an answer that repeats them). Default: none.
    fn narration_instructions(&self) -> &str {
        ""
    }

    /// The model whose price applies to this provider's calls. Default: its name.
    fn model(&self) -> &str {
        self.name()
    }

    /// What to reserve of the spend budget before calling for `request`: an estimate of its
    /// prompt that the server's count should not pass, and the completion cap. Default:
    /// nothing (a provider that costs nothing).
    fn reservation(&self, request: &LlmRequest) -> Usage {
        let _ = request;
        Usage::default()
    }

    /// Writes flavour text for an interaction.
    fn narrate<'a>(&'a self, request: &'a NarrationRequest) -> ProviderFuture<'a, String>;

    /// Proposes candidate events (unvalidated JSON values) for an utterance.
    fn perceive<'a>(&'a self, request: &'a PerceptionRequest) -> ProviderFuture<'a, Vec<Value>>;
}
