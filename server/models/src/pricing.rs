//! What a call costs, and how large a model's context window is.
//!
//! Prices are USD per million tokens, from the providers' pricing pages as
//! of 2026-11 (Anthropic: platform.claude.com/docs/en/about-claude/pricing;
//! OpenAI: platform.openai.com/docs/pricing). They change: users override
//! or extend the table in config (`[prices."model-id"]`). A model that is
//! not in the table has no price: its cost is reported as unknown rather
//! than guessed, and a USD budget cannot be enforced for it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::types::Usage;

/// Per-million-token prices and the context window of one model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    /// Tokens the model accepts in one request (input + output).
    pub context_window: u64,
}

impl Price {
    const fn new(
        input: f64,
        output: f64,
        cache_read: f64,
        cache_write: f64,
        context_window: u64,
    ) -> Self {
        Self {
            input,
            output,
            cache_read,
            cache_write,
            context_window,
        }
    }

    pub fn cost_usd(&self, usage: &Usage) -> f64 {
        (usage.input_tokens as f64 * self.input
            + usage.output_tokens as f64 * self.output
            + usage.cache_read_tokens as f64 * self.cache_read
            + usage.cache_write_tokens as f64 * self.cache_write)
            / 1_000_000.0
    }
}

/// Built-in prices, matched by the longest prefix of the model id, so
/// dated ids (`claude-haiku-4-5-20251001`) find their family.
/// Anthropic cache writes are the 5-minute rate (1.25× input).
const BUILT_IN: &[(&str, Price)] = &[
    // Anthropic
    (
        "claude-opus-4-0",
        Price::new(15.0, 75.0, 1.50, 18.75, 200_000),
    ),
    (
        "claude-opus-4-1",
        Price::new(15.0, 75.0, 1.50, 18.75, 200_000),
    ),
    (
        "claude-opus-4-2025",
        Price::new(15.0, 75.0, 1.50, 18.75, 200_000),
    ),
    (
        "claude-opus-4-5",
        Price::new(5.0, 25.0, 0.50, 6.25, 200_000),
    ),
    (
        "claude-opus-4-6",
        Price::new(5.0, 25.0, 0.50, 6.25, 1_000_000),
    ),
    (
        "claude-opus-4-7",
        Price::new(5.0, 25.0, 0.50, 6.25, 1_000_000),
    ),
    (
        "claude-opus-4-8",
        Price::new(5.0, 25.0, 0.50, 6.25, 1_000_000),
    ),
    (
        "claude-opus-5",
        Price::new(5.0, 25.0, 0.50, 6.25, 1_000_000),
    ),
    (
        "claude-sonnet-4",
        Price::new(3.0, 15.0, 0.30, 3.75, 200_000),
    ),
    (
        "claude-sonnet-4-6",
        Price::new(3.0, 15.0, 0.30, 3.75, 1_000_000),
    ),
    (
        "claude-sonnet-5",
        Price::new(2.0, 10.0, 0.20, 2.50, 1_000_000),
    ),
    (
        "claude-sonnet-5-5",
        Price::new(2.0, 10.0, 0.10, 2.50, 1_000_000),
    ),
    (
        "claude-haiku-4-5",
        Price::new(1.0, 5.0, 0.10, 1.25, 200_000),
    ),
    (
        "claude-3-5-haiku",
        Price::new(0.80, 4.0, 0.08, 1.0, 200_000),
    ),
    // OpenAI: cached input is the cache-read rate; writes are not billed.
    ("gpt-4o", Price::new(2.50, 10.0, 1.25, 0.0, 128_000)),
    ("gpt-4o-mini", Price::new(0.15, 0.60, 0.075, 0.0, 128_000)),
    ("gpt-4.1", Price::new(2.0, 8.0, 0.50, 0.0, 1_047_576)),
    ("gpt-4.1-mini", Price::new(0.40, 1.60, 0.10, 0.0, 1_047_576)),
    (
        "gpt-4.1-nano",
        Price::new(0.10, 0.40, 0.025, 0.0, 1_047_576),
    ),
    ("gpt-5", Price::new(1.25, 10.0, 0.125, 0.0, 400_000)),
    ("gpt-5-mini", Price::new(0.25, 2.0, 0.025, 0.0, 400_000)),
    ("gpt-5-nano", Price::new(0.05, 0.40, 0.005, 0.0, 400_000)),
    ("gpt-5.1", Price::new(1.25, 10.0, 0.125, 0.0, 400_000)),
    ("o3", Price::new(2.0, 8.0, 0.50, 0.0, 200_000)),
    ("o4-mini", Price::new(1.10, 4.40, 0.275, 0.0, 200_000)),
];

/// The built-in table plus the user's overrides.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PriceTable {
    /// Exact model ids (or prefixes) with their prices; these win.
    pub overrides: BTreeMap<String, Price>,
}

impl PriceTable {
    /// The price for `model`: an override by exact id or longest prefix,
    /// then the built-in table by longest prefix.
    pub fn lookup(&self, model: &str) -> Option<Price> {
        longest_prefix(self.overrides.iter().map(|(k, v)| (k.as_str(), *v)), model)
            .or_else(|| longest_prefix(BUILT_IN.iter().copied(), model))
    }

    /// The cost of one call, or `None` for an unpriced model. Always a
    /// finite amount: absurd usage or prices cost at most `f64::MAX`, and a
    /// price that gives no amount at all (NaN, negative) counts as unknown.
    pub fn cost_usd(&self, model: &str, usage: &Usage) -> Option<f64> {
        let cost = self.lookup(model)?.cost_usd(usage);
        if cost == f64::INFINITY {
            Some(f64::MAX)
        } else {
            (cost.is_finite() && cost >= 0.0).then_some(cost)
        }
    }
}

/// `total + cost` in USD, saturating at `f64::MAX` so a sum of costs stays
/// a finite number (what the store and JSON can hold); a cost that is not a
/// number adds nothing.
pub fn add_usd(total: f64, cost: f64) -> f64 {
    let sum = total + cost;
    if sum.is_nan() {
        total
    } else {
        sum.min(f64::MAX)
    }
}

fn longest_prefix<'a>(
    entries: impl Iterator<Item = (&'a str, Price)>,
    model: &str,
) -> Option<Price> {
    entries
        .filter(|(prefix, _)| {
            // "gpt-5" must not match "gpt-50": a prefix ends at a separator.
            model
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.', '@', ':', '/']))
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, price)| price)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_longest_prefix() {
        let table = PriceTable::default();
        assert_eq!(
            table.lookup("claude-haiku-4-5-20251001").map(|p| p.input),
            Some(1.0)
        );
        assert_eq!(
            table.lookup("claude-sonnet-4-5").map(|p| p.input),
            Some(3.0)
        );
        assert_eq!(
            table.lookup("claude-sonnet-5-5").map(|p| p.cache_read),
            Some(0.10)
        );
        assert_eq!(
            table.lookup("gpt-5-mini-2025-08-07").map(|p| p.input),
            Some(0.25)
        );
        assert_eq!(table.lookup("gpt-4o-mini").map(|p| p.input), Some(0.15));
        assert_eq!(table.lookup("gpt-50"), None);
        assert_eq!(table.lookup("qwen2.5-coder:7b"), None);
    }

    #[test]
    fn overrides_win_and_cost_adds_up() {
        let mut table = PriceTable::default();
        table.overrides.insert(
            "qwen2.5-coder".into(),
            Price::new(0.0, 0.0, 0.0, 0.0, 32_768),
        );
        assert_eq!(
            table.cost_usd("qwen2.5-coder:7b", &Usage::default()),
            Some(0.0)
        );
        let usage = Usage {
            input_tokens: 10_000,
            output_tokens: 2_000,
            cache_read_tokens: 100_000,
            cache_write_tokens: 4_000,
        };
        // Sonnet 4.x: 10k×3 + 2k×15 + 100k×0.30 + 4k×3.75 per million.
        let cost = table.cost_usd("claude-sonnet-4-5", &usage).unwrap();
        assert!((cost - 0.105).abs() < 1e-9, "{cost}");
    }

    #[test]
    fn costs_stay_finite_whatever_the_usage_or_price() {
        let absurd = Usage {
            input_tokens: u64::MAX,
            output_tokens: u64::MAX,
            cache_read_tokens: u64::MAX,
            cache_write_tokens: u64::MAX,
        };
        let mut table = PriceTable::default();
        let sonnet = table.cost_usd("claude-sonnet-4-5", &absurd).unwrap();
        assert!(sonnet.is_finite() && sonnet > 1e14, "{sonnet}");
        for (model, price, cost) in [
            ("huge", f64::MAX, Some(f64::MAX)),
            ("infinite", f64::INFINITY, Some(f64::MAX)),
            ("nan", f64::NAN, None),
            ("negative", -1.0, None),
        ] {
            table
                .overrides
                .insert(model.into(), Price::new(price, price, price, price, 1_000));
            assert_eq!(table.cost_usd(model, &absurd), cost, "{model}");
        }
        assert_eq!(add_usd(f64::MAX, f64::MAX), f64::MAX);
        assert_eq!(add_usd(1.5, f64::NAN), 1.5);
        assert_eq!(add_usd(1.5, 0.25), 1.75);
    }
}
