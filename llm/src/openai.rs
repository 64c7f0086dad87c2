//! The OpenAI-compatible chat-completions provider (async-openai over reqwest with rustls).
//! It owns prompt rendering, the HTTP call and the structured-output mode perception asks
//! for: the strongest the server accepts, a refusal answered by the next weaker mode within
//! the same call and remembered (see [`crate::structured`]). It never retries otherwise (the
//! client's own retry layer is replaced by a bare `ReqwestService`, so the breaker sees every
//! failure) and never reads a base URL from the environment. The API key is read from the
//! environment variable the config names, kept out of `Debug` output and never logged. Every
//! answer carries its tokens: the server's `usage` when it reports one, else an estimate from
//! the text at `chars_per_token` (marked estimated); a 429 carries its `Retry-After`, read by
//! a thin layer over the HTTP service since the client's error keeps only the status.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::middleware::{HttpRequestFactory, ReqwestService};
use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestUserMessage, CreateChatCompletionRequestArgs,
    CreateChatCompletionResponse,
};
use serde_json::{Value, json};

use crate::assets::{PromptSet, render};
use crate::backoff::RetryAfter;
use crate::config::{OpenAiProviderConfig, PerceptionLimits};
use crate::perception::{
    candidate_json_schema, parse_model_output, same_zone_npcs, truncate_chars,
};
use crate::provider::{Metered, Provider, ProviderError, ProviderFuture};
use crate::request::{LlmRequest, NarrationRequest, PerceptionRequest};
use crate::secret::{Secret, SecretError, read_secret};
use crate::structured::{LearnedMode, StructuredMode};
use crate::usage::{Usage, tokens_for_chars};

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
    chars_per_token: f64,
    reserve_chars_per_token: f64,
    message_overhead_tokens: u64,
    cache_prompt: bool,
    http: reqwest::Client,
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
            Client::with_config(openai_config).with_http_service(ReqwestService::new(http.clone()));
        Ok(Self {
            name: config.name.clone(),
            model: config.model.clone(),
            narration_max_tokens: config.narration_max_tokens,
            perception_max_tokens: config.perception_max_tokens,
            temperature: config.temperature,
            structured: LearnedMode::new(&config.name, config.structured_output),
            prompts,
            limits,
            chars_per_token: config.chars_per_token,
            reserve_chars_per_token: config.reserve_chars_per_token,
            message_overhead_tokens: config.message_overhead_tokens,
            cache_prompt: config.cache_prompt,
            http,
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

    /// One chat completion and its tokens. The token cap goes out as `max_tokens`, the field
    /// every OpenAI-compatible server reads (llama.cpp's ignores `max_completion_tokens` and
    /// generates until its context is full), and the response format as given, so it may
    /// carry fields the typed request does not know.
    async fn complete(
        &self,
        messages: (String, String),
        max_tokens: u32,
        seed: u64,
        response_format: Option<Value>,
    ) -> Result<Metered<String>, ProviderError> {
        let prompt_chars = messages.0.chars().count() + messages.1.chars().count();
        let body = self.request_body(messages, max_tokens, seed, response_format)?;
        // A client of its own for this call (cheap: it shares the connection pool), so the
        // `Retry-After` its layer reads is this call's.
        let retry_after = Arc::new(Mutex::new(None));
        let client = self.client.clone().with_http_service(RetryAfterLayer {
            inner: ReqwestService::new(self.http.clone()),
            seen: Arc::clone(&retry_after),
        });
        let response: CreateChatCompletionResponse = match client.chat().create_byot(body).await {
            Ok(response) => response,
            Err(error) => {
                let seen = *retry_after.lock().unwrap_or_else(PoisonError::into_inner);
                return Err(match classify(error) {
                    ProviderError::RateLimited { .. } => {
                        ProviderError::RateLimited { retry_after: seen }
                    }
                    other => other,
                });
            }
        };
        let usage = response.usage.as_ref().map(|usage| {
            Usage::reported(
                u64::from(usage.prompt_tokens),
                u64::from(usage.completion_tokens),
            )
        });
        let text = response
            .choices
            .into_iter()
            .next()
            .and_then(|choice| choice.message.content)
            .ok_or_else(|| ProviderError::InvalidResponse("no message content".to_owned()))?;
        let usage = usage.unwrap_or_else(|| {
            Usage::estimated(prompt_chars, text.chars().count(), self.chars_per_token)
        });
        Ok(Metered { value: text, usage })
    }

    /// The body of one chat completion: the system message (the stable instructions) before
    /// the user message (the scene or line), `max_tokens`, the response format as given, and
    /// `cache_prompt` when the config asks for it.
    fn request_body(
        &self,
        (system, user): (String, String),
        max_tokens: u32,
        seed: u64,
        response_format: Option<Value>,
    ) -> Result<Value, ProviderError> {
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
            if self.cache_prompt {
                fields.insert("cache_prompt".to_owned(), json!(true));
            }
            if let Some(format) = response_format {
                fields.insert("response_format".to_owned(), format);
            }
        }
        Ok(body)
    }

    /// What to reserve for a call whose prompt is `messages` (and `format`), capped at
    /// `max_tokens`.
    fn reserve_for(
        &self,
        messages: &(String, String),
        format: Option<&Value>,
        max_tokens: u32,
    ) -> Usage {
        let chars = messages.0.chars().count()
            + messages.1.chars().count()
            + format.map_or(0, |format| format.to_string().chars().count());
        Usage {
            prompt_tokens: tokens_for_chars(chars, self.reserve_chars_per_token)
                + 2 * self.message_overhead_tokens,
            completion_tokens: u64::from(max_tokens),
            estimated: true,
        }
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

    fn model(&self) -> &str {
        &self.model
    }

    fn reservation(&self, request: &LlmRequest) -> Usage {
        match request {
            LlmRequest::Narration(narration) => self.reserve_for(
                &self.narration_messages(narration),
                None,
                self.narration_max_tokens,
            ),
            LlmRequest::Perception(perception) => {
                let format = self.response_format(self.structured.current(), perception);
                self.reserve_for(
                    &self.perception_messages(perception),
                    format.as_ref(),
                    self.perception_max_tokens,
                )
            }
        }
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
            let candidates =
                parse_model_output(&text.value).ok_or(ProviderError::MalformedOutput)?;
            Ok(Metered {
                value: candidates,
                usage: text.usage,
            })
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
                ProviderError::RateLimited { retry_after: None }
            } else {
                ProviderError::Http {
                    status,
                    message: truncate_chars(&response.api_error.message, ERROR_MESSAGE_CHARS)
                        .to_owned(),
                }
            }
        }
        OpenAIError::Reqwest(error) => match error.status() {
            Some(status) if status.as_u16() == 429 => {
                ProviderError::RateLimited { retry_after: None }
            }
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

/// The HTTP service under one call's client: passes everything through and keeps the
/// `Retry-After` of a 429 answer, which the client's error would drop.
#[derive(Clone)]
struct RetryAfterLayer {
    inner: ReqwestService,
    seen: Arc<Mutex<Option<RetryAfter>>>,
}

type HttpResult = Result<reqwest::Response, OpenAIError>;

impl tower_service::Service<HttpRequestFactory> for RetryAfterLayer {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = Pin<Box<dyn Future<Output = HttpResult> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), OpenAIError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: HttpRequestFactory) -> Self::Future {
        let answer = self.inner.call(request);
        let seen = Arc::clone(&self.seen);
        Box::pin(async move {
            let response = answer.await?;
            if response.status().as_u16() == 429 {
                let asked = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(RetryAfter::parse);
                *seen.lock().unwrap_or_else(PoisonError::into_inner) = asked;
            }
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{NpcRef, PerceptionContext, Priority};

    fn provider(cache_prompt: bool) -> OpenAiProvider {
        let prompts = PromptSet::from_yaml_strs(
            include_str!("../../config/prompts/narration.yaml"),
            include_str!("../../config/prompts/perception.yaml"),
        )
        .expect("shipped prompts");
        let config = OpenAiProviderConfig {
            cache_prompt,
            ..OpenAiProviderConfig::default()
        };
        let key = ApiKey::new(String::new());
        OpenAiProvider::new(
            &config,
            key,
            prompts,
            PerceptionLimits::default(),
            Duration::from_secs(1),
        )
        .expect("provider")
    }

    fn line(speaker: &str, text: &str) -> PerceptionRequest {
        let npc = |id: &str, name: &str| NpcRef {
            id: id.to_owned(),
            name: name.to_owned(),
            zone: "village".to_owned(),
        };
        PerceptionRequest {
            utterance_id: format!("{speaker}-{text}"),
            speaker: speaker.to_owned(),
            text: text.to_owned(),
            context: PerceptionContext {
                zone: "village".to_owned(),
                room: "tavern".to_owned(),
                addressee: Some("bram".to_owned()),
                npcs: vec![npc("bram", "Bram"), npc("nell", "Nell")],
            },
            priority: Priority::Witnessed,
            seed: 1,
            tags: crate::request::SpendTags::default(),
        }
    }

    /// The prompt as the server's chat template reads it: system, then user.
    fn prompt((system, user): (String, String)) -> String {
        format!("{system}\n{user}")
    }

    #[test]
    fn two_lines_in_a_room_share_the_instructions_and_the_npc_list_as_a_prefix() {
        let provider = provider(false);
        let first = prompt(provider.perception_messages(&line("ann", "You cheat!")));
        let second = prompt(provider.perception_messages(&line("tom", "Good morning.")));
        let shared = first
            .chars()
            .zip(second.chars())
            .take_while(|(a, b)| a == b)
            .count();
        let npc_list_end = first.find("- nell: Nell\n").expect("npc list") + "- nell: Nell\n".len();
        assert!(
            shared >= npc_list_end,
            "only {shared} of the {npc_list_end} stable characters are a shared prefix:\n{first}"
        );
        assert!(
            shared * 10 >= first.chars().count() * 9,
            "{shared} of {first}"
        );
    }

    #[test]
    fn cache_prompt_is_sent_only_when_the_config_asks() {
        let messages = || ("system".to_owned(), "user".to_owned());
        let asked = provider(true)
            .request_body(messages(), 10, 1, None)
            .expect("body");
        assert_eq!(asked["cache_prompt"], json!(true));
        assert_eq!(asked["messages"][0]["role"], json!("system"));
        let plain = provider(false)
            .request_body(messages(), 10, 1, None)
            .expect("body");
        assert!(plain.get("cache_prompt").is_none(), "{plain}");
    }

    #[test]
    fn the_key_never_appears_in_debug_output() {
        let key = ApiKey::new("sk-very-secret".to_owned());
        assert!(!format!("{key:?}").contains("sk-very-secret"));
    }
}
