//! Money: a price table (USD per million input/output tokens per model, an editable JSON file
//! shipped as `prices.json` with each price's date and source), budgets, and pre-run estimates.

use crate::provider::{ProviderKind, Usage};
use serde::{Deserialize, Serialize};

/// The table shipped with ragscope (`crates/judge/prices.json`).
pub const BUILTIN_PRICES: &str = include_str!("../prices.json");

/// USD per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

impl Price {
    /// The price with `discount` (a fraction) taken off both rates.
    pub fn discounted(self, discount: f64) -> Price {
        Price {
            input: self.input * (1.0 - discount),
            output: self.output * (1.0 - discount),
        }
    }

    pub fn cost(&self, usage: Usage) -> f64 {
        (usage.input_tokens as f64 * self.input + usage.output_tokens as f64 * self.output) / 1e6
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriceEntry {
    pub provider: String,
    pub model: String,
    pub input: f64,
    pub output: f64,
    /// When the price was read (YYYY-MM or YYYY-MM-DD).
    #[serde(default)]
    pub as_of: String,
    #[serde(default)]
    pub source: String,
}

/// The batch APIs' discount on a provider's standard prices (0.5: half price).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchDiscount {
    pub provider: String,
    /// The fraction taken off (0.5 = 50% off).
    pub discount: f64,
    #[serde(default)]
    pub as_of: String,
    #[serde(default)]
    pub source: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriceTable {
    #[serde(default)]
    pub note: String,
    pub prices: Vec<PriceEntry>,
    /// Batch discounts by provider (absent in older price files: batch jobs are then priced at
    /// the standard rate, an over-estimate).
    #[serde(default)]
    pub batch: Vec<BatchDiscount>,
}

impl PriceTable {
    pub fn builtin() -> Self {
        // The shipped file is tested to parse (tests::builtin_parses).
        Self::from_json(BUILTIN_PRICES, "prices.json").unwrap_or(PriceTable {
            note: String::new(),
            prices: Vec::new(),
            batch: Vec::new(),
        })
    }

    /// Parses a price file; `name` is used in errors.
    pub fn from_json(text: &str, name: &str) -> Result<Self, String> {
        let t: PriceTable = serde_json::from_str(text)
            .map_err(|e| format!("{name}: line {}, column {}: {e}", e.line(), e.column()))?;
        for (i, p) in t.prices.iter().enumerate() {
            if !(p.input.is_finite() && p.output.is_finite() && p.input >= 0.0 && p.output >= 0.0) {
                return Err(format!(
                    "{name}: price {i} ({}): not a non-negative number",
                    p.model
                ));
            }
        }
        for b in &t.batch {
            if !(b.discount.is_finite() && (0.0..1.0).contains(&b.discount)) {
                return Err(format!(
                    "{name}: batch discount of {}: not a fraction in [0, 1)",
                    b.provider
                ));
            }
        }
        Ok(t)
    }

    /// The batch discount of `provider`, when the table has one.
    pub fn batch_discount(&self, provider: ProviderKind) -> Option<&BatchDiscount> {
        self.batch.iter().find(|b| b.provider == provider.name())
    }

    /// The entry for `model`: an exact name, else a dated snapshot of a listed name
    /// (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`, `...-latest`). Never a mere prefix:
    /// `gpt-4o-audio` is not priced as `gpt-4o`.
    pub fn lookup(&self, provider: ProviderKind, model: &str) -> Option<&PriceEntry> {
        let model = model.strip_prefix("models/").unwrap_or(model);
        let of_provider = || self.prices.iter().filter(|p| p.provider == provider.name());
        if let Some(p) = of_provider().find(|p| p.model == model) {
            return Some(p);
        }
        of_provider().find(|p| {
            model
                .strip_prefix(p.model.as_str())
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|rest| {
                    rest == "latest"
                        || (!rest.is_empty()
                            && rest.chars().all(|c| c.is_ascii_digit() || c == '-'))
                })
        })
    }
}

/// Stop before exceeding either.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Budget {
    pub max_cost: Option<f64>,
    /// Input plus output tokens.
    pub max_tokens: Option<u64>,
}

/// A deliberately high estimate of prompt tokens from characters: about 3 characters a token
/// (English averages near 4 with the providers' tokenizers) plus a per-request overhead for
/// roles and formatting. High, because budgets must stop *before* they are exceeded.
pub fn estimate_input_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(3) + 16
}

/// What a job would send.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Requests to send (cached ones excluded).
    pub requests: u64,
    /// Requests answered from the cache.
    pub cached: u64,
    /// Estimated prompt tokens of the requests to send.
    pub input_tokens: u64,
    /// Output tokens at most (max_tokens per request).
    pub max_output_tokens: u64,
    /// Cost of those tokens when the model has a price.
    pub max_cost: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_parses_and_looks_up_snapshots() {
        let t = PriceTable::from_json(BUILTIN_PRICES, "prices.json").unwrap();
        assert!(t.prices.len() >= 10);
        assert!(t.prices.iter().all(|p| !p.as_of.is_empty()));
        let p = t.lookup(ProviderKind::OpenAi, "gpt-4o-2024-08-06").unwrap();
        assert_eq!(p.model, "gpt-4o");
        assert_eq!(
            t.lookup(ProviderKind::OpenAi, "gpt-4o-mini").unwrap().model,
            "gpt-4o-mini"
        );
        assert!(t
            .lookup(ProviderKind::OpenAi, "gpt-4o-audio-preview")
            .is_none());
        assert!(t.lookup(ProviderKind::Anthropic, "gpt-4o").is_none());
        let c = t
            .lookup(ProviderKind::Anthropic, "claude-sonnet-4-5-20250929")
            .unwrap();
        assert_eq!((c.input, c.output), (3.0, 15.0));
        let cost = Price {
            input: 3.0,
            output: 15.0,
        }
        .cost(Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
        });
        assert!((cost - 4.5).abs() < 1e-12);
        // The providers' batch pages: half price at Anthropic, OpenAI and Gemini.
        for kind in [
            ProviderKind::Anthropic,
            ProviderKind::OpenAi,
            ProviderKind::Gemini,
        ] {
            let b = t.batch_discount(kind).unwrap();
            assert_eq!(b.discount, 0.5);
            assert!(!b.as_of.is_empty() && !b.source.is_empty());
        }
        assert!(t.batch_discount(ProviderKind::OpenAiCompatible).is_none());
        let half = Price {
            input: 3.0,
            output: 15.0,
        }
        .discounted(0.5);
        assert_eq!((half.input, half.output), (1.5, 7.5));
    }
}
