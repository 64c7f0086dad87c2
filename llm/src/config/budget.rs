//! `[llm.budget]`: the token and money allowances of model spend and their shares, validated
//! with the field named (the arithmetic that applies them is `spend_budget`'s).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Allowances of model spend over rolling windows of an hour and a day, in tokens (prompt and
/// completion together) and in money (priced by `[llm.prices]`), with shares of them per seam,
/// NPC class and tier. A call is admitted only if its reserved size (prompt estimate plus the
/// completion cap) fits every allowance that applies to it, so a burst never spends past one;
/// otherwise its request falls back with reason `spend_budget`. Unset allowances do not limit.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetConfig {
    /// Tokens in any rolling hour. Default none (unlimited).
    pub tokens_per_hour: Option<u64>,
    /// Tokens in any rolling 24 hours. Default none.
    pub tokens_per_day: Option<u64>,
    /// Money in any rolling hour. Default none.
    pub money_per_hour: Option<f64>,
    /// Money in any rolling 24 hours. Default none.
    pub money_per_day: Option<f64>,
    /// The fraction of every allowance kept for requests a player witnessed or waits for
    /// (`witnessed`): routine and story-relevant work stops at `1 - witnessed_reserve` of
    /// it. Default 0.2.
    pub witnessed_reserve: f64,
    /// The most of every allowance one seam may spend, by seam name (`narration`,
    /// `perception`), as a fraction in (0, 1]. Default empty: no seam is capped.
    pub seams: BTreeMap<String, f64>,
    /// The most of every allowance requests of one NPC class (archetype) may spend, as a
    /// fraction in (0, 1]. Default empty.
    pub classes: BTreeMap<String, f64>,
    /// The most of every allowance requests of one NPC tier may spend, as a fraction in
    /// (0, 1]. Default empty.
    pub tiers: BTreeMap<String, f64>,
    /// How soon after a call changes what the allowances hold `serve` saves it to its
    /// snapshot store (changes within the interval are saved together; and at shutdown), so
    /// a restart — a crash loop included — does not spend them again; milliseconds. Default
    /// 500.
    pub save_within_ms: u64,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        Self {
            tokens_per_hour: None,
            tokens_per_day: None,
            money_per_hour: None,
            money_per_day: None,
            witnessed_reserve: 0.2,
            seams: BTreeMap::new(),
            classes: BTreeMap::new(),
            tiers: BTreeMap::new(),
            save_within_ms: 500,
        }
    }
}

impl BudgetConfig {
    /// How soon after a change the spend is saved.
    #[must_use]
    pub fn save_within(&self) -> Duration {
        Duration::from_millis(self.save_within_ms)
    }

    /// Checks the allowances and shares.
    ///
    /// # Errors
    /// A negative or non-finite money allowance, a reserve outside [0, 1), a share outside
    /// (0, 1], a share of a seam that does not exist.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (field, value) in [
            ("budget.money_per_hour", self.money_per_hour),
            ("budget.money_per_day", self.money_per_day),
        ] {
            if value.is_some_and(|money| !money.is_finite() || money < 0.0) {
                return Err(ConfigError::Invalid {
                    field,
                    reason: "must be a finite number, 0 or more",
                });
            }
        }
        if self.save_within_ms == 0 {
            return Err(ConfigError::Invalid {
                field: "budget.save_within_ms",
                reason: "must be 1 or more",
            });
        }
        if !(0.0..1.0).contains(&self.witnessed_reserve) {
            return Err(ConfigError::Invalid {
                field: "budget.witnessed_reserve",
                reason: "must lie in 0..1",
            });
        }
        for (field, shares) in [
            ("budget.seams", &self.seams),
            ("budget.classes", &self.classes),
            ("budget.tiers", &self.tiers),
        ] {
            if shares
                .values()
                .any(|share| !(*share > 0.0 && *share <= 1.0))
            {
                return Err(ConfigError::Invalid {
                    field,
                    reason: "every share must lie in (0, 1]",
                });
            }
        }
        if self
            .seams
            .keys()
            .any(|seam| crate::request::Seam::from_wire(seam).is_none())
        {
            return Err(ConfigError::Invalid {
                field: "budget.seams",
                reason: "a seam is `narration` or `perception`",
            });
        }
        Ok(())
    }
}
