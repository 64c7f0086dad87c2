//! The OpenAI-compatible chat-completions provider (async-openai over reqwest with rustls).
//! It owns prompt rendering, the HTTP call and the structured-output mode perception asks
//! for: the strongest the server accepts, a refusal answered by the next weaker mode within
//! the same call and remembered (see [`crate::structured`]). It never retries otherwise (the
//! client's own retry layer is replaced by a bare `ReqwestService`, so the breaker sees every
//! failure) and never reads a base URL from the environment. The API key is read from the
//! environment variable the config names, kept out of `Debug` output and never logged.

use std::time::Duration;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::middleware::ReqwestService;
use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestUserMessage, CreateChatCompletionRequestArgs,
    CreateChatCompletionResponse,
};
use serde_json::{Value, json};

use crate::assets::{PromptSet, render};
use crate::config::{OpenAiProviderConfig, PerceptionLimits};
use crate::perception::{
    candidate_json_schema, parse_model_output, same_zone_npcs, truncate_chars,
};
use crate::provider::{Provider, ProviderError, ProviderFuture};
use crate::request::{NarrationRequest, PerceptionRequest};
use crate::secret::{Secret, SecretError, read_secret};
use crate::structured::{LearnedMode, StructuredMode};

/// Why the provider could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ProviderBuildError {
    /// The HTTP client could not be built (TLS backend).
    #[error("http client: {0}")]
    Http(String),
    /// The config is unusable.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The key file cannot be read.
    #[error("api key: {0}")]
    Secret(#[from] SecretError),
}

/// An API key: a [`Secret`], so its `Debug` never shows the key.
pub type ApiKey = Secret;

/// A chat-completions endpoint serving both seams.
#[derive(Debug)]
pub struct OpenAiProvider {
    name: String,
    model: String,
    narration_max_tokens: u32,
    perception_max_tokens: u32,
    temperature: f32,
    structured: LearnedMode,
    prompts: PromptSet,
    limits: PerceptionLimits,
    client: Client<OpenAIConfig>,
}

impl OpenAiProvider {
    /// Builds the provider. `request_timeout` is the HTTP client's own ceiling (the worker
    /// applies the per-call ceilings; this one only backs them up).
    ///
    /// # Errors
    /// An invalid config or an HTTP client that cannot be built.
    pub fn new(
        config: &OpenAiProviderConfig,
        api_key: ApiKey,
        prompts: PromptSet,
        limits: PerceptionLimits,
        request_timeout: Duration,
    ) -> Result<Self, ProviderBuildError> {
        config.validate()?;
        limits.validate()?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_millis(config.connect_timeout_ms))
            .timeout(request_timeout)
            .build()
            .map_err(|error| ProviderBuildError::Http(error.to_string()))?;
        // The key is always set, even when empty, so async-openai never falls back to
        // OPENAI_API_KEY and sends an unrelated key to this endpoint.
        let openai_config = OpenAIConfig::new()
            .with_api_base(config.base_url.clone())
            .with_api_key(api_key.expose());
        let client =
            Client::with_config(openai_config).with_http_service(ReqwestService::new(http));
        Ok(Self {
            name: config.name.clone(),
            model: config.model.clone(),
            narration_max_tokens: config.narration_max_tokens,
            perception_max_tokens: config.perception_max_tokens,
            temperature: config.temperature,
            structured: LearnedMode::new(&config.name, config.structured_output),
            prompts,
            limits,
            client,
        })
    }

    /// Builds the provider with the key from the file or environment variable the config
    /// names.
    ///
    /// # Errors
    /// As `new`, and a key file that cannot be read.
    pub fn from_env(
        config: &OpenAiProviderConfig,
        prompts: PromptSet,
        limits: PerceptionLimits,
        request_timeout: Duration,
    ) -> Result<Self, ProviderBuildError> {
        let key =
            read_secret(&config.api_key_env, config.api_key_file.as_deref())?.unwrap_or_default();
        if key.is_empty() {
            tracing::debug!(
                variable = %config.api_key_env,
                provider = %config.name,
                "no API key in the environment; calling without one"
            );
        }
        Self::new(config, key, prompts, limits, request_timeout)
    }

    /// The structured-output mode perception asks this provider for now.
    #[must_use]
    pub fn structured_mode(&self) -> StructuredMode {
        self.structured.current()
    }

    /// One chat completion. The token cap goes out as `max_tokens`, the field every
    /// OpenAI-compatible server reads (llama.cpp's ignores `max_completion_tokens` and
    /// generates until its context is full), and the response format as given, so it may
    /// carry fields the typed request does not know.
    async fn complete(
        &self,
        (system, user): (String, String),
        max_tokens: u32,
        seed: u64,
        response_format: Option<Value>,
    ) -> Result<String, ProviderError> {
        let messages: Vec<ChatCompletionRequestMessage> = vec![
            ChatCompletionRequestSystemMessage::from(system).into(),
            ChatCompletionRequestUserMessage::from(user).into(),
        ];
        let request = CreateChatCompletionRequestArgs::default()
            .model(self.model.clone())
            .messages(messages)
            .temperature(self.temperature)
            // The same request asks for the same sampling, where the server supports it.
            .seed(i64::from_ne_bytes(seed.to_ne_bytes()))
            .build()
            .map_err(|error| ProviderError::Request(error.to_string()))?;
        let mut body = serde_json::to_value(request)
            .map_err(|error| ProviderError::Request(error.to_string()))?;
        if let Some(fields) = body.as_object_mut() {
            fields.insert("max_tokens".to_owned(), json!(max_tokens));
            if let Some(format) = response_format {
                fields.insert("response_format".to_owned(), format);
            }
        }
        let response: CreateChatCompletionResponse = self
            .client
            .chat()
            .create_byot(body)
            .await
            .map_err(classify)?;
        response
            .choices
            .into_iter()
            .next()
            .and_then(|choice| choice.message.content)
            .ok_or_else(|| ProviderError::InvalidResponse("no message content".to_owned()))
    }

    fn narration_messages(&self, request: &NarrationRequest) -> (String, String) {
        let values = request.placeholder_values();
        (
            render(&self.prompts.narration.system, &values),
            render(&self.prompts.narration.user, &values),
        )
    }

    fn perception_messages(&self, request: &PerceptionRequest) -> (String, String) {
        let npcs: String = same_zone_npcs(request)
            .map(|npc| format!("- {}: {}\n", npc.id, npc.name))
            .collect();
        let utterance = truncate_chars(&request.text, self.limits.max_utterance_chars);
        let values = [
            ("speaker", request.speaker.as_str()),
            (
                "addressee",
                request
                    .context
                    .addressee
                    .as_deref()
                    .unwrap_or("nobody in particular"),
            ),
            ("npcs", npcs.as_str()),
            ("utterance", utterance),
        ];
        (
            render(&self.prompts.perception.system, &values),
            render(&self.prompts.perception.user, &values),
        )
    }

    /// The `response_format` of a perception call in `mode`. `json_object` carries the
    /// closed schema too: llama.cpp-compatible servers that refuse `json_schema` enforce it
    /// there, others ignore it.
    fn response_format(&self, mode: StructuredMode, request: &PerceptionRequest) -> Option<Value> {
        let schema = || candidate_json_schema(request, &self.limits);
        match mode {
            StructuredMode::JsonSchema => Some(json!({
                "type": "json_schema",
                "json_schema": {
                    "name": "perceived_events",
                    "description": "World events the utterance causes.",
                    "schema": schema(),
                    "strict": true
                }
            })),
            StructuredMode::JsonObject => {
                Some(json!({ "type": "json_object", "schema": schema() }))
            }
            StructuredMode::Text => None,
        }
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn narration_instructions(&self) -> &str {
        &self.prompts.narration.system
    }

    fn narrate<'a>(&'a self, request: &'a NarrationRequest) -> ProviderFuture<'a, String> {
        Box::pin(async move {
            let messages = self.narration_messages(request);
            self.complete(messages, self.narration_max_tokens, request.seed, None)
                .await
        })
    }

    fn perceive<'a>(&'a self, request: &'a PerceptionRequest) -> ProviderFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let messages = self.perception_messages(request);
            tracing::debug!(
                utterance_id = %request.utterance_id,
                utterance = %truncate_chars(&request.text, self.limits.max_utterance_chars),
                "perception prompt built"
            );
            let first = self.structured.current();
            let mut mode = first;
            let mut refusal = None;
            let text = loop {
                let format = self.response_format(mode, request);
                let answer = self
                    .complete(
                        messages.clone(),
                        self.perception_max_tokens,
                        request.seed,
                        format,
                    )
                    .await;
                match answer {
                    Ok(text) => break text,
                    Err(error) => {
                        let weaker = mode.weaker().filter(|_| error.may_refuse_format());
                        tracing::debug!(
                            provider = %self.name,
                            mode = mode.as_str(),
                            %error,
                            "perception call failed"
                        );
                        let first_error = refusal.get_or_insert(error);
                        match weaker {
                            Some(weaker) => mode = weaker,
                            None => return Err(first_error.clone()),
                        }
                    }
                }
            };
            if mode != first {
                self.structured.learn(first, mode);
            }
            parse_model_output(&text).ok_or(ProviderError::MalformedOutput)
        })
    }
}

/// Characters of a server's error message kept in a `ProviderError::Http`.
const ERROR_MESSAGE_CHARS: usize = 200;

/// Maps the client's error to the provider error the breaker and metrics use.
fn classify(error: OpenAIError) -> ProviderError {
    match error {
        OpenAIError::ApiError(response) => {
            let status = response.status_code.as_u16();
            if status == 429 {
                ProviderError::RateLimited
            } else {
                ProviderError::Http {
                    status,
                    message: truncate_chars(&response.api_error.message, ERROR_MESSAGE_CHARS)
                        .to_owned(),
                }
            }
        }
        OpenAIError::Reqwest(error) => match error.status() {
            Some(status) if status.as_u16() == 429 => ProviderError::RateLimited,
            Some(status) => ProviderError::Http {
                status: status.as_u16(),
                message: String::new(),
            },
            None if error.is_timeout() => ProviderError::Timeout,
            None => ProviderError::Transport(error.to_string()),
        },
        OpenAIError::JSONDeserialize(error, _) => ProviderError::InvalidResponse(error.to_string()),
        OpenAIError::InvalidArgument(message) => ProviderError::Request(message),
        other => ProviderError::Transport(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_never_appears_in_debug_output() {
        let key = ApiKey::new("sk-very-secret".to_owned());
        assert!(!format!("{key:?}").contains("sk-very-secret"));
    }
}
