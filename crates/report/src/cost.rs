//! Dollar cost of LLM episodes from a dated price table.
//!
//! The table ships in the repository (`crates/report/data/prices.json`): per provider and
//! model, dollars per million input and output tokens, each with the date it held and its
//! source (the numbers of litellm's price file in a pinned PyPI release). A user price file of
//! the same shape (`benchaudit report --prices FILE`) adds or overrides entries, e.g. for a
//! local model. A model without a price has an **unknown** cost — never 0: a local model
//! costs electricity and hardware, which the report cannot know.
//!
//! An episode's cost is `prompt_tokens · input + completion_tokens · output` (per million),
//! the tokens its records count; cached-input discounts and batch prices are not applied.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::Price;

/// The table shipped with benchaudit.
pub const SHIPPED: &str = include_str!("../data/prices.json");

/// A price table file (`benchaudit.prices/1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceFile {
    /// `benchaudit.prices/1`.
    pub schema: String,
    /// Always USD.
    pub currency: String,
    /// What the numbers mean.
    #[serde(default)]
    pub unit: String,
    /// The prices.
    pub prices: Vec<Price>,
}

/// The prices a report uses: the user's (if any) before the shipped ones.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    prices: Vec<Price>,
    /// The user's file, when one was read.
    pub user_file: Option<PathBuf>,
}

fn parse(text: &str, what: &str) -> Result<Vec<Price>> {
    let file: PriceFile = serde_json::from_str(text)
        .map_err(|e| Error::Invalid(format!("{what} is not a benchaudit price file: {e}")))?;
    if file.schema != "benchaudit.prices/1" || file.currency != "USD" {
        return Err(Error::Invalid(format!(
            "{what}: expected schema benchaudit.prices/1 in USD, got {} in {}",
            file.schema, file.currency
        )));
    }
    for p in &file.prices {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        if !ok(p.input_per_mtok) || !ok(p.output_per_mtok) {
            return Err(Error::Invalid(format!(
                "{what}: the price of {}:{} must be finite and ≥ 0",
                p.provider, p.model
            )));
        }
        if p.date.trim().is_empty() || p.source.trim().is_empty() {
            return Err(Error::Invalid(format!(
                "{what}: the price of {}:{} needs a date and a source",
                p.provider, p.model
            )));
        }
    }
    Ok(file.prices)
}

impl PriceTable {
    /// The shipped table.
    ///
    /// # Errors
    /// Only if the shipped file is damaged (a test reads it).
    pub fn shipped() -> Result<PriceTable> {
        Ok(PriceTable {
            prices: parse(SHIPPED, "the shipped price table")?,
            user_file: None,
        })
    }

    /// A table without prices (every cost unknown).
    #[must_use]
    pub fn empty() -> PriceTable {
        PriceTable {
            prices: Vec::new(),
            user_file: None,
        }
    }

    /// The shipped table, with `user`'s prices first when given.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the user file cannot be read or is not a price file.
    pub fn load(user: Option<&Path>) -> Result<PriceTable> {
        let mut table = PriceTable::shipped()?;
        if let Some(path) = user {
            let text = benchaudit_runs::files::read_text_bounded(
                path,
                benchaudit_runs::files::limits::SMALL,
            )
            .map_err(|e| Error::Invalid(format!("price file: {e}")))?;
            let mut mine = parse(&text, &path.display().to_string())?;
            mine.append(&mut table.prices);
            table.prices = mine;
            table.user_file = Some(path.to_path_buf());
        }
        Ok(table)
    }

    /// The price of `model` at `provider` (the first match: the user's before the shipped).
    #[must_use]
    pub fn price(&self, provider: Option<&str>, model: &str) -> Option<&Price> {
        self.prices
            .iter()
            .find(|p| p.model == model && provider.is_none_or(|pr| pr == p.provider))
    }
}

/// Provider and model of a policy name: `provider:model` (benchaudit players) or
/// `provider/model` (Inspect's model names); a bare name has no provider.
#[must_use]
pub fn provider_model(policy: &str) -> (Option<&str>, &str) {
    match policy.split_once(':').or_else(|| policy.split_once('/')) {
        Some((p, m)) => (Some(p), m),
        None => (None, policy),
    }
}

/// Dollars of `input` and `output` tokens at `price`.
#[must_use]
pub fn dollars(price: &Price, input: u64, output: u64) -> f64 {
    (input as f64 * price.input_per_mtok + output as f64 * price.output_per_mtok) / 1e6
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_shipped_table_is_dated_and_sourced() {
        let t = PriceTable::shipped().unwrap();
        assert!(t.prices.len() >= 10);
        let p = t.price(Some("openai"), "gpt-4o").unwrap();
        assert_eq!((p.input_per_mtok, p.output_per_mtok), (2.5, 10.0));
        assert!(p.source.contains("litellm 1.110.2") && p.date == "2026-11-20");
        assert!(t.price(Some("ollama"), "llama3.1:8b").is_none());
        assert!(t.price(Some("anthropic"), "gpt-4o").is_none());
        // 1 M prompt + 0.5 M completion tokens of gpt-4o: 2.5 + 5 dollars.
        assert_eq!(dollars(p, 1_000_000, 500_000), 7.5);
    }

    #[test]
    fn user_prices_come_first_and_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        let price = |x: f64| {
            format!(
                r#"{{"schema":"benchaudit.prices/1","currency":"USD","prices":[{{"provider":"openai","model":"gpt-4o","input_per_mtok":{x},"output_per_mtok":1,"date":"2026-12-01","source":"our contract"}}]}}"#
            )
        };
        std::fs::write(&path, price(1.0)).unwrap();
        let t = PriceTable::load(Some(&path)).unwrap();
        assert_eq!(
            t.price(Some("openai"), "gpt-4o").unwrap().input_per_mtok,
            1.0
        );
        std::fs::write(&path, price(-1.0)).unwrap();
        assert!(PriceTable::load(Some(&path)).is_err());
        std::fs::write(&path, "{}").unwrap();
        assert!(PriceTable::load(Some(&path)).is_err());
        assert_eq!(provider_model("openai:gpt-4o"), (Some("openai"), "gpt-4o"));
        assert_eq!(provider_model("mockllm/model"), (Some("mockllm"), "model"));
        assert_eq!(
            provider_model("together:meta-llama/Llama-3.3-70B-Instruct-Turbo"),
            (Some("together"), "meta-llama/Llama-3.3-70B-Instruct-Turbo")
        );
        assert_eq!(provider_model("oracle"), (None, "oracle"));
    }
}
