//! What one model call cost in tokens: read from the server's `usage` when it reports one,
//! estimated from the text when it does not (and then marked as estimated), and turned into
//! money by a model's price. This module owns the estimate and the arithmetic, not the totals
//! (`spend`) nor the limits (`spend_budget`).

use serde::{Deserialize, Serialize};

/// Billionths of the price table's currency unit: spend is counted in whole nanos so totals
/// add up exactly and compare with `==`.
pub const NANOS_PER_UNIT: f64 = 1e9;

/// Tokens of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read (the prompt).
    pub prompt_tokens: u64,
    /// Tokens written (the completion).
    pub completion_tokens: u64,
    /// True when the server reported no `usage` and the counts are estimated from the text.
    pub estimated: bool,
}

impl Usage {
    /// Usage as the server reported it.
    #[must_use]
    pub fn reported(prompt_tokens: u64, completion_tokens: u64) -> Self {
        Self {
            prompt_tokens,
            completion_tokens,
            estimated: false,
        }
    }

    /// Usage estimated from the prompt's and the answer's lengths in characters, at
    /// `chars_per_token` characters a token (rounded up: a non-empty text is at least one
    /// token).
    #[must_use]
    pub fn estimated(prompt_chars: usize, completion_chars: usize, chars_per_token: f64) -> Self {
        Self {
            prompt_tokens: tokens_for_chars(prompt_chars, chars_per_token),
            completion_tokens: tokens_for_chars(completion_chars, chars_per_token),
            estimated: true,
        }
    }

    /// The sum of two calls' usage (estimated if either is).
    #[must_use]
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_add(other.completion_tokens),
            estimated: self.estimated || other.estimated,
        }
    }

    /// Prompt and completion tokens together.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }
}

/// Tokens a text of `chars` characters is taken to hold at `chars_per_token` characters a
/// token, rounded up. A ratio that is not a positive finite number counts a token a character.
#[must_use]
pub fn tokens_for_chars(chars: usize, chars_per_token: f64) -> u64 {
    let ratio = if chars_per_token.is_finite() && chars_per_token > 0.0 {
        chars_per_token
    } else {
        1.0
    };
    // Lengths are far below 2^52, so the float division is exact enough to round up.
    let tokens = (chars as f64 / ratio).ceil();
    if tokens >= u64::MAX as f64 {
        u64::MAX
    } else {
        tokens as u64
    }
}

/// A model's price in nanos a token, in and out.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Price {
    /// Nanos a prompt token.
    pub input_nanos_per_token: f64,
    /// Nanos a completion token.
    pub output_nanos_per_token: f64,
}

impl Price {
    /// The price of a model priced per million tokens.
    #[must_use]
    pub fn per_million(input: f64, output: f64) -> Self {
        let per_token = NANOS_PER_UNIT / 1e6;
        Self {
            input_nanos_per_token: input * per_token,
            output_nanos_per_token: output * per_token,
        }
    }

    /// What `usage` costs, in nanos (each direction rounded to the nearest nano).
    #[must_use]
    pub fn cost_nanos(&self, usage: &Usage) -> u64 {
        nanos(usage.prompt_tokens, self.input_nanos_per_token)
            .saturating_add(nanos(usage.completion_tokens, self.output_nanos_per_token))
    }
}

fn nanos(tokens: u64, per_token: f64) -> u64 {
    let cost = (tokens as f64 * per_token).round();
    if !cost.is_finite() || cost <= 0.0 {
        0
    } else if cost >= u64::MAX as f64 {
        u64::MAX
    } else {
        cost as u64
    }
}

/// Money in the price table's unit, from nanos.
#[must_use]
pub fn money(nanos: u64) -> f64 {
    nanos as f64 / NANOS_PER_UNIT
}

/// Nanos of `money` units (negative or not finite: none).
#[must_use]
pub fn nanos_of_money(money: f64) -> u64 {
    nanos(1, money * NANOS_PER_UNIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_round_up_and_are_marked() {
        let usage = Usage::estimated(9, 0, 4.0);
        assert_eq!(
            usage,
            Usage {
                prompt_tokens: 3,
                completion_tokens: 0,
                estimated: true
            }
        );
        assert_eq!(tokens_for_chars(8, 4.0), 2);
        assert_eq!(
            tokens_for_chars(8, 0.0),
            8,
            "a bad ratio counts a token a character"
        );
    }

    #[test]
    fn prices_per_million_cost_whole_nanos() {
        let price = Price::per_million(2.0, 8.0);
        let usage = Usage::reported(1000, 500);
        // 1000 × 2000 nanos + 500 × 8000 nanos.
        assert_eq!(price.cost_nanos(&usage), 2_000_000 + 4_000_000);
        assert!((money(price.cost_nanos(&usage)) - 0.006).abs() < 1e-12);
        assert_eq!(nanos_of_money(0.5), 500_000_000);
        assert_eq!(nanos_of_money(-1.0), 0);
    }

    #[test]
    fn sums_keep_the_estimated_mark() {
        let sum = Usage::reported(1, 2).plus(Usage::estimated(4, 4, 4.0));
        assert_eq!(sum.total(), 5);
        assert!(sum.estimated);
    }
}
