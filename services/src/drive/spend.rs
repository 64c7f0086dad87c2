//! What the demo and the load generator share about the model's spend: the price options
//! (`--llm-price-input`, `--llm-price-output`, declared once and flattened into both commands'
//! arguments) and the closing line that prices a run's tokens per game hour and per NPC-hour.

use std::collections::BTreeMap;

use geppetto_llm::{ModelPrice, OpenAiProviderConfig, SpendCounts};

/// The model's price, for a run with `--llm-url`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct PriceOptions {
    /// What the model at `--llm-url` costs per million prompt tokens (in whatever money unit
    /// you plan in); the closing lines price its tokens with it.
    #[arg(long, requires = "llm_url", default_value_t = 0.0)]
    pub llm_price_input: f64,
    /// Likewise per million completion tokens.
    #[arg(long, requires = "llm_url", default_value_t = 0.0)]
    pub llm_price_output: f64,
}

impl PriceOptions {
    /// The price table of a run: this price for `provider`'s model, if there is one.
    #[must_use]
    pub fn prices(&self, provider: Option<&OpenAiProviderConfig>) -> BTreeMap<String, ModelPrice> {
        let price = ModelPrice {
            input_per_million: self.llm_price_input,
            output_per_million: self.llm_price_output,
        };
        (provider.iter())
            .map(|provider| (provider.model.clone(), price.clone()))
            .collect()
    }
}

/// What the model cost a run: calls, tokens in and out (the estimated share when a server
/// reported no usage), money at the price table's rates, and both per game hour and per
/// NPC-hour over `npcs` NPCs living `game_hours`.
#[must_use]
pub fn spend_line(spend: &SpendCounts, npcs: usize, game_hours: f64) -> String {
    let total = &spend.total;
    let tokens = total.tokens_in + total.tokens_out;
    let estimated = total.estimated_tokens_in + total.estimated_tokens_out;
    let per = |value: f64, hours: f64| if hours > 0.0 { value / hours } else { 0.0 };
    let npc_hours = npcs as f64 * game_hours;
    format!(
        "llm spend: {} calls, {} tokens in + {} out ({estimated} estimated), cost {:.6}; per game hour {:.1} tokens, {:.6}; per NPC-hour {:.2} tokens, {:.8}",
        total.calls,
        total.tokens_in,
        total.tokens_out,
        total.cost(),
        per(tokens as f64, game_hours),
        per(total.cost(), game_hours),
        per(tokens as f64, npc_hours),
        per(total.cost(), npc_hours),
    )
}
