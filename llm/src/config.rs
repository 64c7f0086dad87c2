//! The LLM seams' tunables: one struct per concern, every field named and its default
//! documented on the field. This module owns
//! parsing and validating those numbers; it does not read files or the environment.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::Quota;
use serde::Deserialize;

use crate::structured_mode::StructuredMode;
use crate::usage::Price;

mod budget;

pub use budget::BudgetConfig;

/// A config value that cannot work, refused before anything starts.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// A count or rate that must be at least 1 is 0.
    #[error("`{field}` must be at least 1")]
    Zero {
        /// The offending field's path.
        field: &'static str,
    },
    /// A bound pair is inverted or not finite.
    #[error("`{field}` is invalid: {reason}")]
    Invalid {
        /// The offending field's path.
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// Everything the queue, the worker and the providers need. Unknown keys are refused so a
/// misspelt tunable fails at load instead of silently taking its default.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// Hard capacity of the off-tick request queue. Default 50.
    pub queue_capacity: usize,
    /// Sustained calls per second to all providers together, enforced by a GCRA limiter.
    /// Default 10.
    pub max_qps: u32,
    /// Calls the limiter lets through back to back before spacing them at `1/max_qps`.
    /// Default 1, so no one-second window ever sees more than `max_qps` calls.
    pub rate_burst: u32,
    /// Provider calls allowed between two tick boundaries signalled by the caller; past it
    /// requests take the deterministic fallback. Default 5.
    pub calls_per_tick: u32,
    /// Hard ceiling of one provider call (perception, and narration nobody witnessed),
    /// including a structured-output mode refused and asked again in the same call.
    /// Default 10000 ms.
    pub call_timeout_ms: u64,
    /// Hard ceiling of one call narrating a player-witnessed interaction. The template line
    /// already went out with the intent, so the model's text is worth waiting for as long as
    /// a player may still be in the room (the delivery guard drops it once none is). Default
    /// 8000 ms.
    pub witnessed_narration_timeout_ms: u64,
    /// Provider calls in flight at once. Default 4.
    pub max_in_flight_calls: usize,
    /// Longest narrative text delivered, in characters; longer model output is cut at a
    /// character boundary. Default 400.
    pub narration_max_chars: usize,
    /// How long a provider that answered HTTP 429 without a `Retry-After` is left alone;
    /// requests in that window fall back with reason `rate_limited`. A 429 never counts
    /// against the breaker. Default 30000 ms.
    pub rate_limited_backoff_ms: u64,
    /// The longest back-off a `Retry-After` (seconds or an HTTP date) may ask for; a longer
    /// ask is cut to this. Default 600000 ms (ten minutes).
    pub rate_limited_max_backoff_ms: u64,
    /// Model calls kept one by one in the spend's record of recent calls (provider, seam,
    /// zone, class, tier, usage, cost, latency, outcome), the oldest dropped first; a bound,
    /// so a long run holds no more. Default 256.
    pub recent_calls: usize,
    /// The per-provider circuit breaker.
    pub breaker: BreakerConfig,
    /// Bounds applied to perceived events.
    pub perception: PerceptionLimits,
    /// What each model costs, by model name (`[llm.prices.<model>]`); a model not listed
    /// costs nothing (its tokens are still counted). Default empty.
    pub prices: BTreeMap<String, ModelPrice>,
    /// Token and money allowances over rolling windows (`[llm.budget]`). Default: none.
    pub budget: BudgetConfig,
    /// The OpenAI-compatible endpoint. Default none: only the template provider runs.
    pub provider: Option<OpenAiProviderConfig>,
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            queue_capacity: 50,
            max_qps: 10,
            rate_burst: 1,
            calls_per_tick: 5,
            call_timeout_ms: 10_000,
            witnessed_narration_timeout_ms: 8_000,
            max_in_flight_calls: 4,
            narration_max_chars: 400,
            rate_limited_backoff_ms: 30_000,
            rate_limited_max_backoff_ms: 600_000,
            recent_calls: 256,
            breaker: BreakerConfig::default(),
            perception: PerceptionLimits::default(),
            prices: BTreeMap::new(),
            budget: BudgetConfig::default(),
            provider: None,
        }
    }
}

impl LlmConfig {
    /// Parses a YAML document into a config, defaults filling omitted fields.
    ///
    /// # Errors
    /// The YAML error, with its location, when the text is not a valid config.
    pub fn from_yaml_str(text: &str) -> Result<Self, crate::file_error::AssetError> {
        serde_saphyr::from_str(text).map_err(|source| crate::file_error::AssetError::Parse {
            what: "llm config",
            message: source.to_string(),
        })
    }

    /// Checks every field that has a hard lower bound or an ordering.
    ///
    /// # Errors
    /// The first field that cannot work.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let nonzero: [(&'static str, u64); 9] = [
            ("queue_capacity", self.queue_capacity as u64),
            ("max_qps", u64::from(self.max_qps)),
            ("rate_burst", u64::from(self.rate_burst)),
            ("call_timeout_ms", self.call_timeout_ms),
            (
                "witnessed_narration_timeout_ms",
                self.witnessed_narration_timeout_ms,
            ),
            ("max_in_flight_calls", self.max_in_flight_calls as u64),
            ("narration_max_chars", self.narration_max_chars as u64),
            ("recent_calls", self.recent_calls as u64),
            (
                "rate_limited_max_backoff_ms",
                self.rate_limited_max_backoff_ms,
            ),
        ];
        if let Some((field, _)) = nonzero.iter().find(|(_, value)| *value == 0) {
            return Err(ConfigError::Zero { field });
        }
        if self.rate_limited_backoff_ms > self.rate_limited_max_backoff_ms {
            return Err(ConfigError::Invalid {
                field: "rate_limited_backoff_ms",
                reason: "is above rate_limited_max_backoff_ms",
            });
        }
        self.breaker.validate()?;
        self.perception.validate()?;
        for price in self.prices.values() {
            price.validate()?;
        }
        self.budget.validate()?;
        if let Some(provider) = &self.provider {
            provider.validate()?;
        }
        Ok(())
    }

    /// The GCRA quota: `max_qps` per second, `rate_burst` back to back.
    ///
    /// # Errors
    /// `max_qps` or `rate_burst` is 0.
    pub fn quota(&self) -> Result<Quota, ConfigError> {
        let qps = NonZeroU32::new(self.max_qps).ok_or(ConfigError::Zero { field: "max_qps" })?;
        let burst = NonZeroU32::new(self.rate_burst).ok_or(ConfigError::Zero {
            field: "rate_burst",
        })?;
        Ok(Quota::per_second(qps).allow_burst(burst))
    }

    /// The ceiling for ordinary calls.
    #[must_use]
    pub fn call_timeout(&self) -> Duration {
        Duration::from_millis(self.call_timeout_ms)
    }

    /// The ceiling for witnessed narration calls.
    #[must_use]
    pub fn witnessed_narration_timeout(&self) -> Duration {
        Duration::from_millis(self.witnessed_narration_timeout_ms)
    }

    /// The back-off after a 429 that names no `Retry-After`.
    #[must_use]
    pub fn rate_limited_backoff(&self) -> Duration {
        Duration::from_millis(self.rate_limited_backoff_ms)
    }

    /// The longest back-off a 429 may start.
    #[must_use]
    pub fn rate_limited_max_backoff(&self) -> Duration {
        Duration::from_millis(self.rate_limited_max_backoff_ms)
    }

    /// The price of `model` (nothing when it is not listed).
    #[must_use]
    pub fn price_of(&self, model: &str) -> Price {
        self.prices
            .get(model)
            .map(|price| Price::per_million(price.input_per_million, price.output_per_million))
            .unwrap_or_default()
    }
}

/// One model's price, in money (whatever unit the studio plans in) per million tokens.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelPrice {
    /// Per million prompt tokens. Default 0.
    pub input_per_million: f64,
    /// Per million completion tokens. Default 0.
    pub output_per_million: f64,
}

impl ModelPrice {
    fn validate(&self) -> Result<(), ConfigError> {
        for (field, value) in [
            ("prices.input_per_million", self.input_per_million),
            ("prices.output_per_million", self.output_per_million),
        ] {
            if !value.is_finite() || value < 0.0 {
                return Err(ConfigError::Invalid {
                    field,
                    reason: "must be a finite number, 0 or more",
                });
            }
        }
        Ok(())
    }
}

/// When a provider is cut off and when it is tried again.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BreakerConfig {
    /// Consecutive failures or timeouts that open the circuit. Default 5.
    pub failure_threshold: u32,
    /// Time an open circuit rejects every call before one probe is let through.
    /// Default 60000 ms.
    pub recovery_window_ms: u64,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        Self {
            failure_threshold: 5,
            recovery_window_ms: 60_000,
        }
    }
}

impl BreakerConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        if self.failure_threshold == 0 {
            return Err(ConfigError::Zero {
                field: "breaker.failure_threshold",
            });
        }
        Ok(())
    }

    /// The recovery window as a duration.
    #[must_use]
    pub fn recovery_window(&self) -> Duration {
        Duration::from_millis(self.recovery_window_ms)
    }
}

/// The closed bounds a perceived event must fit, whoever produced it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PerceptionLimits {
    /// Lowest magnitude an event may carry; lower values are clamped up. Default 0.0.
    pub magnitude_min: f64,
    /// Highest magnitude an event may carry; higher values are clamped down. Default 1.0.
    pub magnitude_max: f64,
    /// Events accepted from one utterance; further valid candidates are rejected.
    /// Default 3.
    pub max_events_per_utterance: usize,
    /// Candidates examined from one utterance; the rest are rejected unread, so a model
    /// that floods output costs bounded work. Default 16.
    pub max_candidates_examined: usize,
    /// Longest `summary` accepted, in characters. Default 160.
    pub max_summary_chars: usize,
    /// Longest NPC id accepted, in characters. Default 64.
    pub max_id_chars: usize,
    /// Longest player utterance sent to a provider, in characters; the rest is cut.
    /// Default 400.
    pub max_utterance_chars: usize,
}

impl Default for PerceptionLimits {
    fn default() -> Self {
        Self {
            magnitude_min: 0.0,
            magnitude_max: 1.0,
            max_events_per_utterance: 3,
            max_candidates_examined: 16,
            max_summary_chars: 160,
            max_id_chars: 64,
            max_utterance_chars: 400,
        }
    }
}

impl PerceptionLimits {
    /// Checks the bounds.
    ///
    /// # Errors
    /// Inverted or non-finite magnitude bounds, or a zero count.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !self.magnitude_min.is_finite() || !self.magnitude_max.is_finite() {
            return Err(ConfigError::Invalid {
                field: "perception.magnitude_min/magnitude_max",
                reason: "bounds must be finite",
            });
        }
        if self.magnitude_min > self.magnitude_max {
            return Err(ConfigError::Invalid {
                field: "perception.magnitude_min/magnitude_max",
                reason: "magnitude_min is above magnitude_max",
            });
        }
        let nonzero: [(&'static str, usize); 5] = [
            (
                "perception.max_events_per_utterance",
                self.max_events_per_utterance,
            ),
            (
                "perception.max_candidates_examined",
                self.max_candidates_examined,
            ),
            ("perception.max_summary_chars", self.max_summary_chars),
            ("perception.max_id_chars", self.max_id_chars),
            ("perception.max_utterance_chars", self.max_utterance_chars),
        ];
        match nonzero.iter().find(|(_, value)| *value == 0) {
            Some((field, _)) => Err(ConfigError::Zero { field }),
            None => Ok(()),
        }
    }
}

/// An OpenAI-compatible chat-completions endpoint.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OpenAiProviderConfig {
    /// Name used in metrics, events and logs. Default `"openai"`.
    pub name: String,
    /// Base URL of the API, always set explicitly (the client never falls back to an
    /// environment variable). Default `http://127.0.0.1:8089/v1`, a local llama.cpp server.
    pub base_url: String,
    /// Model name sent with every request. Default `"smollm2"`.
    pub model: String,
    /// NAME of the environment variable holding the API key (the key itself never appears in
    /// config or logs). Unset or empty variable ⇒ no key is sent. Default
    /// `"GEPPETTO_LLM_API_KEY"`.
    pub api_key_env: String,
    /// A file holding the API key instead (a mounted secret); it wins over `api_key_env`.
    /// Default none.
    pub api_key_file: Option<std::path::PathBuf>,
    /// Completion token cap of a narration call (one line of prose). Default 60.
    pub narration_max_tokens: u32,
    /// Completion token cap of a perception call (the candidate JSON). Default 160.
    pub perception_max_tokens: u32,
    /// Sampling temperature. Default 0.2 (small models stay on task when it is low).
    pub temperature: f32,
    /// The strongest structured-output mode perception asks for: `json_schema`,
    /// `json_object` or `text`. A server that refuses a mode is asked for the next weaker one
    /// in the same call, and the weaker mode is kept from then on (learned once, counted in
    /// `geppetto_llm_structured_mode_downgrades_total`). The output is validated whatever the
    /// mode. Default `json_schema`.
    pub structured_output: StructuredMode,
    /// TCP connect timeout. Default 1000 ms.
    pub connect_timeout_ms: u64,
    /// Characters a token, for estimating a call's tokens from its text when the server's
    /// answer carries no `usage` (the estimate is marked as such). Default 4.0 (English prose
    /// under common tokenizers).
    pub chars_per_token: f64,
    /// Characters a token when reserving budget for a prompt before the call: low, so the
    /// reservation stays above what the server will count. Default 2.0.
    pub reserve_chars_per_token: f64,
    /// Tokens a chat template adds around each message (role markers, separators), reserved
    /// on top of a prompt's estimate for each of a call's two messages. Default 8.
    pub message_overhead_tokens: u64,
    /// Sends `cache_prompt: true` with every call, asking the server to keep the prompt's
    /// evaluated prefix and evaluate only what follows it next time (llama.cpp's server; the
    /// prompts put their stable text first for it). Off by default: hosted OpenAI-compatible
    /// APIs refuse fields they do not know, and hosted prefix caches need no field.
    pub cache_prompt: bool,
}

impl Default for OpenAiProviderConfig {
    fn default() -> Self {
        Self {
            name: "openai".to_owned(),
            base_url: "http://127.0.0.1:8089/v1".to_owned(),
            model: "smollm2".to_owned(),
            api_key_env: "GEPPETTO_LLM_API_KEY".to_owned(),
            api_key_file: None,
            narration_max_tokens: 60,
            perception_max_tokens: 160,
            temperature: 0.2,
            structured_output: StructuredMode::JsonSchema,
            connect_timeout_ms: 1000,
            chars_per_token: 4.0,
            reserve_chars_per_token: 2.0,
            message_overhead_tokens: 8,
            cache_prompt: false,
        }
    }
}

impl OpenAiProviderConfig {
    /// Checks the endpoint settings.
    ///
    /// # Errors
    /// A base URL that is not http(s), an empty model or name, an out-of-range temperature,
    /// a zero token cap or connect timeout.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            return Err(ConfigError::Invalid {
                field: "provider.base_url",
                reason: "must start with http:// or https://",
            });
        }
        if self.model.trim().is_empty() {
            return Err(ConfigError::Invalid {
                field: "provider.model",
                reason: "must not be empty",
            });
        }
        if self.name.trim().is_empty() {
            return Err(ConfigError::Invalid {
                field: "provider.name",
                reason: "must not be empty",
            });
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(ConfigError::Invalid {
                field: "provider.temperature",
                reason: "must lie in 0..=2",
            });
        }
        if self.narration_max_tokens == 0 {
            return Err(ConfigError::Zero {
                field: "provider.narration_max_tokens",
            });
        }
        if self.perception_max_tokens == 0 {
            return Err(ConfigError::Zero {
                field: "provider.perception_max_tokens",
            });
        }
        if self.connect_timeout_ms == 0 {
            return Err(ConfigError::Zero {
                field: "provider.connect_timeout_ms",
            });
        }
        for (field, ratio) in [
            ("provider.chars_per_token", self.chars_per_token),
            (
                "provider.reserve_chars_per_token",
                self.reserve_chars_per_token,
            ),
        ] {
            if !(ratio.is_finite() && ratio > 0.0) {
                return Err(ConfigError::Invalid {
                    field,
                    reason: "must be a positive finite number",
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_document_gives_the_seed_defaults() {
        let config = LlmConfig::from_yaml_str("{}").expect("empty config parses");
        assert_eq!(config, LlmConfig::default());
        assert_eq!(config.queue_capacity, 50);
        assert_eq!(config.max_qps, 10);
        assert_eq!(config.calls_per_tick, 5);
        assert_eq!(config.call_timeout(), Duration::from_secs(10));
        assert_eq!(config.witnessed_narration_timeout(), Duration::from_secs(8));
        assert_eq!(config.breaker.failure_threshold, 5);
        assert_eq!(config.breaker.recovery_window(), Duration::from_secs(60));
        assert!(config.provider.is_none());
        assert_eq!(config.rate_limited_backoff(), Duration::from_secs(30));
        assert_eq!(config.rate_limited_max_backoff(), Duration::from_secs(600));
        assert_eq!(config.budget.tokens_per_hour, None);
        assert_eq!(config.budget.save_within(), Duration::from_millis(500));
        assert_eq!(config.budget.witnessed_reserve, 0.2);
        assert_eq!(config.price_of("any"), Price::default());
        assert_eq!(config.validate(), Ok(()));
    }

    #[test]
    fn a_budget_and_prices_parse_with_their_shares() {
        let config = LlmConfig::from_yaml_str(
            "prices:\n  small:\n    input_per_million: 0.5\n    output_per_million: 1.5\nbudget:\n  tokens_per_hour: 1000\n  money_per_day: 2.5\n  classes:\n    guard: 0.25\n  seams:\n    narration: 0.5\n",
        )
        .expect("parses");
        assert_eq!(config.budget.tokens_per_hour, Some(1000));
        assert_eq!(config.budget.money_per_day, Some(2.5));
        assert_eq!(config.budget.classes["guard"], 0.25);
        assert_eq!(config.budget.seams["narration"], 0.5);
        assert_eq!(config.price_of("small"), Price::per_million(0.5, 1.5));
        assert_eq!(config.validate(), Ok(()));
    }

    #[test]
    fn partial_documents_override_only_what_they_name() {
        let config = LlmConfig::from_yaml_str(
            "max_qps: 3\nbreaker:\n  recovery_window_ms: 10\nprovider:\n  base_url: http://127.0.0.1:1/v1\n",
        )
        .expect("parses");
        assert_eq!(config.max_qps, 3);
        assert_eq!(config.breaker.recovery_window_ms, 10);
        assert_eq!(config.breaker.failure_threshold, 5);
        let provider = config.provider.expect("provider present");
        assert_eq!(provider.base_url, "http://127.0.0.1:1/v1");
        assert_eq!(provider.model, "smollm2");
    }

    #[test]
    fn the_quota_admits_max_qps_per_second_and_no_more() {
        use governor::RateLimiter;
        use governor::clock::FakeRelativeClock;

        let config = LlmConfig::default();
        let clock = FakeRelativeClock::default();
        let limiter = RateLimiter::direct_with_clock(config.quota().expect("quota"), clock.clone());
        // A burst at one instant: the burst size (1) passes, the rest wait.
        let at_once = (0..20).filter(|_| limiter.check().is_ok()).count();
        assert_eq!(at_once, 1);
        // Hammering every millisecond for ten seconds admits 10 per second, never 11.
        // The instant-zero admission belongs to the first second.
        let mut admitted_per_second = vec![0_u32; 10];
        admitted_per_second[0] = u32::try_from(at_once).expect("small");
        for millisecond in 1..10_000_u64 {
            clock.advance(Duration::from_millis(1));
            if limiter.check().is_ok() {
                admitted_per_second[(millisecond / 1000) as usize] += 1;
            }
        }
        assert!(
            admitted_per_second.iter().all(|&n| n == config.max_qps),
            "{admitted_per_second:?}"
        );
    }

    #[test]
    fn misspelt_fields_are_refused() {
        assert!(LlmConfig::from_yaml_str("max_qsp: 3\n").is_err());
    }

    #[test]
    fn impossible_values_are_refused_with_the_field() {
        let cases: Vec<(LlmConfig, &str)> = vec![
            (
                LlmConfig {
                    max_qps: 0,
                    ..LlmConfig::default()
                },
                "max_qps",
            ),
            (
                LlmConfig {
                    queue_capacity: 0,
                    ..LlmConfig::default()
                },
                "queue_capacity",
            ),
            (
                LlmConfig {
                    breaker: BreakerConfig {
                        failure_threshold: 0,
                        recovery_window_ms: 1,
                    },
                    ..LlmConfig::default()
                },
                "breaker.failure_threshold",
            ),
            (
                LlmConfig {
                    perception: PerceptionLimits {
                        magnitude_min: 2.0,
                        ..PerceptionLimits::default()
                    },
                    ..LlmConfig::default()
                },
                "perception.magnitude_min/magnitude_max",
            ),
            (
                LlmConfig {
                    provider: Some(OpenAiProviderConfig {
                        base_url: "127.0.0.1:8089".to_owned(),
                        ..OpenAiProviderConfig::default()
                    }),
                    ..LlmConfig::default()
                },
                "provider.base_url",
            ),
            (
                LlmConfig {
                    rate_limited_backoff_ms: 700_000,
                    ..LlmConfig::default()
                },
                "rate_limited_backoff_ms",
            ),
            (
                LlmConfig {
                    budget: BudgetConfig {
                        witnessed_reserve: 1.0,
                        ..BudgetConfig::default()
                    },
                    ..LlmConfig::default()
                },
                "budget.witnessed_reserve",
            ),
            (
                LlmConfig {
                    budget: BudgetConfig {
                        classes: [("guard".to_owned(), 1.5)].into(),
                        ..BudgetConfig::default()
                    },
                    ..LlmConfig::default()
                },
                "budget.classes",
            ),
            (
                LlmConfig {
                    budget: BudgetConfig {
                        seams: [("gossip".to_owned(), 0.5)].into(),
                        ..BudgetConfig::default()
                    },
                    ..LlmConfig::default()
                },
                "budget.seams",
            ),
            (
                LlmConfig {
                    budget: BudgetConfig {
                        money_per_day: Some(f64::NAN),
                        ..BudgetConfig::default()
                    },
                    ..LlmConfig::default()
                },
                "budget.money_per_day",
            ),
            (
                LlmConfig {
                    prices: [(
                        "m".to_owned(),
                        ModelPrice {
                            input_per_million: -1.0,
                            output_per_million: 0.0,
                        },
                    )]
                    .into(),
                    ..LlmConfig::default()
                },
                "prices.input_per_million",
            ),
            (
                LlmConfig {
                    provider: Some(OpenAiProviderConfig {
                        chars_per_token: 0.0,
                        ..OpenAiProviderConfig::default()
                    }),
                    ..LlmConfig::default()
                },
                "provider.chars_per_token",
            ),
        ];
        for (config, field) in cases {
            let error = config.validate().expect_err("must be refused");
            assert!(error.to_string().contains(field), "{error} names {field}");
        }
    }
}
