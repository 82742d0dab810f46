//! The function-call probe family: criterion sensitivity of a function-calling benchmark's
//! checker (BFCL's AST checker), measured without a model.
//!
//! For every probed category the audit takes a seeded sample of entries, forges outputs of
//! known quality from each entry and its possible answer ([`forge`]), has the benchmark's own
//! checker score every forged output in one batch, scores the same batch again in a second
//! process (replay), and reads the pass rates against the forgery table ([`verdict`]). The
//! module does no IO itself: the checker is reached through [`CallChecker`], which the external
//! target implements with two batch hooks.
//!
//! ```
//! use benchaudit_audit::calls::{forge::{forge, Forgery}, CallEntry, CategoryKind, Language};
//! use serde_json::json;
//! let entry = CallEntry {
//!     id: "simple_python_0".into(),
//!     functions: vec![json!({"name": "area", "parameters": {"properties": {"r": {"type": "integer"}}, "required": ["r"]}})],
//!     answer: Some(vec![json!({"area": {"r": [2]}})]),
//! };
//! let out = forge(Forgery::WrongType, CategoryKind::Ast, Language::Python, &entry);
//! assert_eq!(out.as_deref(), Some(r#"[area(r="2")]"#));
//! ```

pub mod forge;
pub mod render;
pub mod verdict;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::battery::Rollup;
use crate::card::{Card, Cell, Status};
use crate::external::{HookFailure, failure_text};
use forge::{Forgery, Quality};
use verdict::{CategoryResult, GROUPS};

/// How a category is scored, by BFCL's own category predicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CategoryKind {
    /// The AST checker against a possible answer.
    Ast,
    /// Relevance: any decodable call passes.
    Relevance,
    /// Irrelevance: passing means no decodable call.
    Irrelevance,
}

impl CategoryKind {
    /// Every kind, in table order.
    pub const ALL: [CategoryKind; 3] = [
        CategoryKind::Ast,
        CategoryKind::Relevance,
        CategoryKind::Irrelevance,
    ];

    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            CategoryKind::Ast => "ast",
            CategoryKind::Relevance => "relevance",
            CategoryKind::Irrelevance => "irrelevance",
        }
    }
}

/// The syntax a category's calls are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// Python call syntax with Python literals.
    Python,
    /// Python call syntax with Java literals.
    Java,
    /// Python call syntax with JavaScript literals.
    #[serde(rename = "javascript")]
    JavaScript,
}

/// One entry: its functions and, where the benchmark has one, its possible answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallEntry {
    /// Entry id.
    pub id: String,
    /// The function documents offered to the model.
    pub functions: Vec<Value>,
    /// The possible answer: one `{name: {param: [accepted values]}}` per call.
    #[serde(default)]
    pub answer: Option<Vec<Value>>,
}

/// One category as the entries hook returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Category {
    /// BFCL category name.
    pub name: String,
    /// How it is scored.
    pub kind: CategoryKind,
    /// Its call syntax.
    pub language: Language,
    /// Every entry.
    pub entries: Vec<CallEntry>,
}

/// The entries hook's answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Entries {
    /// What the checker is (package, version, decoder), as the hook describes it.
    pub checker: Value,
    /// The requested categories.
    pub categories: Vec<Category>,
}

/// One output for the score hook.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreItem {
    /// Category.
    pub category: String,
    /// Entry id.
    pub id: String,
    /// The raw model output.
    pub output: String,
}

/// The checker's verdict on one output.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckVerdict {
    /// Passed.
    pub valid: bool,
    /// BFCL's error type when it failed.
    #[serde(default)]
    pub error_type: Option<String>,
    /// The checker raised instead of answering.
    #[serde(default)]
    pub raised: bool,
}

/// The benchmark's checker, reached by whatever IO the implementation needs.
pub trait CallChecker {
    /// The entries of the named categories.
    fn entries(&self, categories: &[String]) -> Result<Entries, HookFailure>;
    /// One verdict per item, in order.
    fn score(&self, items: &[ScoreItem]) -> Result<Vec<CheckVerdict>, HookFailure>;
}

/// What to probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallsConfig {
    /// BFCL categories.
    pub categories: Vec<String>,
    /// Entries per category (seeded sample); `None` = every entry.
    pub sample: Option<usize>,
    /// Sample seed.
    pub seed: u64,
    /// The forgeries to build, by name, when a battery was given as data (`--battery`,
    /// [`crate::proposed`]); the anchor always runs. `None`: every forgery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forgeries: Option<Vec<String>>,
}

/// One forged output and the checker's verdicts on it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemRecord {
    /// Category.
    pub category: String,
    /// Entry id.
    pub id: String,
    /// Forgery.
    pub forgery: Forgery,
    /// The output sent to the checker.
    pub output: String,
    /// First run's verdict.
    pub valid: bool,
    /// First run's error type.
    pub error_type: Option<String>,
    /// The checker raised on it.
    pub raised: bool,
    /// The replay run's verdict (none when the replay could not run).
    pub replay_valid: Option<bool>,
}

/// One row of the forgery table as audit.json stores it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableRow {
    /// Forgery.
    pub forgery: Forgery,
    /// How it is built.
    pub construction: &'static str,
    /// Intended quality per kind (ast, relevance, irrelevance); none = not built.
    pub quality: [Option<Quality>; 3],
}

/// The forgery table.
pub fn table() -> Vec<TableRow> {
    Forgery::ALL
        .into_iter()
        .map(|f| TableRow {
            forgery: f,
            construction: f.construction(),
            quality: CategoryKind::ALL.map(|k| forge::intended(k, f)),
        })
        .collect()
}

/// The replay comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayResult {
    /// Items scored twice.
    pub items: usize,
    /// Items whose verdict or error type differed.
    pub mismatches: usize,
    /// The replay's cell.
    pub cell: Cell,
}

/// Everything the function-call audit found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallsAudit {
    /// Target name.
    pub target: String,
    /// The checker as its hook describes it.
    pub checker: Value,
    /// What was probed.
    pub config: CallsConfig,
    /// How the sample was drawn.
    pub sample_rule: &'static str,
    /// The forgery table.
    pub table: Vec<TableRow>,
    /// Per category.
    pub categories: Vec<CategoryResult>,
    /// Per group (AST track, relevance detection), with their totals.
    pub groups: Vec<Rollup>,
    /// Replay.
    pub replay: ReplayResult,
    /// The battery given as data (`--battery`), when one was: what ran and what it left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub battery: Option<crate::proposed::BatteryRun>,
    /// One card per category, then one per group (AST track, relevance detection).
    pub cards: Vec<Card>,
    /// Every forged output with its verdicts.
    pub items: Vec<ItemRecord>,
    /// Hook failures, when a stage could not run.
    pub failures: Vec<String>,
}

/// The sample rule, stated once.
pub const SAMPLE_RULE: &str = "per category, the entries with the smallest SHA-256 of \"{seed}:{category}:{id}\", in the category's order";

/// Runs the function-call audit. Hook failures never become verdicts: the stages that needed
/// the failing hook are "not probed" with the cause and the hook's stderr on the card.
pub fn audit(target: &str, checker: &dyn CallChecker, config: &CallsConfig) -> CallsAudit {
    let mut failures = Vec::new();
    let mut out = CallsAudit {
        target: target.into(),
        checker: Value::Null,
        config: config.clone(),
        sample_rule: SAMPLE_RULE,
        table: table(),
        categories: Vec::new(),
        groups: Vec::new(),
        replay: ReplayResult {
            items: 0,
            mismatches: 0,
            cell: Cell::not_probed("nothing was scored"),
        },
        battery: None,
        cards: Vec::new(),
        items: Vec::new(),
        failures: Vec::new(),
    };
    let entries = match checker.entries(&config.categories) {
        Ok(e) => e,
        Err(f) => {
            let why = failure_text("entries", &f);
            failures.push(why.clone());
            out.replay.cell = Cell::not_probed(why.clone());
            out.cards = GROUPS
                .iter()
                .map(|g| {
                    verdict::card(
                        format!("{target}: {g}"),
                        Cell::not_probed(why.clone()),
                        Cell::not_probed(why.clone()),
                    )
                })
                .collect();
            out.failures = failures;
            return out;
        }
    };
    out.checker = entries.checker.clone();
    // Forge.
    let mut items = Vec::new();
    let mut meta = Vec::new();
    for cat in &entries.categories {
        let ids: Vec<&str> = cat.entries.iter().map(|e| e.id.as_str()).collect();
        let chosen = verdict::sample(&ids, &cat.name, config.seed, config.sample);
        meta.push((cat.name.clone(), cat.kind, cat.entries.len(), chosen.len()));
        for id in chosen {
            let Some(entry) = cat.entries.iter().find(|e| e.id == id) else {
                continue;
            };
            for forgery in Forgery::ALL {
                let quality = forge::intended(cat.kind, forgery);
                if quality.is_some_and(|q| {
                    !crate::proposed::runs(config.forgeries.as_deref(), forgery.name(), q)
                }) {
                    continue;
                }
                if let Some(output) = forge::forge(forgery, cat.kind, cat.language, entry) {
                    items.push((
                        forgery,
                        ScoreItem {
                            category: cat.name.clone(),
                            id: entry.id.clone(),
                            output,
                        },
                    ));
                }
            }
        }
    }
    let batch: Vec<ScoreItem> = items.iter().map(|(_, i)| i.clone()).collect();
    let first = checker
        .score(&batch)
        .and_then(|v| same_length(v, batch.len()));
    let first = match first {
        Ok(v) => v,
        Err(f) => {
            let why = failure_text("score", &f);
            failures.push(why.clone());
            out.replay.cell = Cell::not_probed(why.clone());
            out.categories = meta
                .iter()
                .map(|(n, k, total, probed)| {
                    let mut r = verdict::category(n, *k, *total, *probed, &[]);
                    r.separation.criterion = Cell::not_probed(why.clone());
                    r
                })
                .collect();
            (out.groups, out.cards) = cards(target, &out.categories, &out.replay.cell);
            out.failures = failures;
            return out;
        }
    };
    let second = checker
        .score(&batch)
        .and_then(|v| same_length(v, batch.len()));
    let records: Vec<ItemRecord> = items
        .into_iter()
        .zip(&first)
        .enumerate()
        .map(|(i, ((forgery, item), v))| ItemRecord {
            category: item.category,
            id: item.id,
            forgery,
            output: item.output,
            valid: v.valid,
            error_type: v.error_type.clone(),
            raised: v.raised,
            replay_valid: second.as_ref().ok().map(|s| s[i].valid),
        })
        .collect();
    out.replay = match &second {
        Ok(s) => {
            let mismatches = first.iter().zip(s).filter(|(a, b)| a != b).count();
            ReplayResult {
                items: first.len(),
                mismatches,
                cell: if mismatches == 0 {
                    Cell {
                        status: Status::Pass,
                        evidence: format!(
                            "a second checker process gave the same verdict and error type to all {} forged outputs",
                            first.len()
                        ),
                    }
                } else {
                    Cell {
                        status: Status::Fail,
                        evidence: format!(
                            "{mismatches} of {} forged outputs got a different verdict or error type from a second checker process",
                            first.len()
                        ),
                    }
                },
            }
        }
        Err(f) => {
            let why = failure_text("score (replay)", f);
            failures.push(why.clone());
            ReplayResult {
                items: 0,
                mismatches: 0,
                cell: Cell::not_probed(why),
            }
        }
    };
    out.categories = meta
        .iter()
        .map(|(n, k, total, probed)| {
            let mine: Vec<ItemRecord> = records
                .iter()
                .filter(|r| &r.category == n)
                .cloned()
                .collect();
            verdict::category(n, *k, *total, *probed, &mine)
        })
        .collect();
    (out.groups, out.cards) = cards(target, &out.categories, &out.replay.cell);
    out.items = records;
    out.failures = failures;
    out
}

fn same_length(v: Vec<CheckVerdict>, n: usize) -> Result<Vec<CheckVerdict>, HookFailure> {
    if v.len() == n {
        Ok(v)
    } else {
        Err(HookFailure {
            cause: format!("answered {} verdicts for {n} outputs", v.len()),
            stderr_tail: String::new(),
        })
    }
}

/// The groups, and the cards: per category, then per group.
fn cards(target: &str, categories: &[CategoryResult], replay: &Cell) -> (Vec<Rollup>, Vec<Card>) {
    let mut out: Vec<Card> = categories
        .iter()
        .map(|c| verdict::card(c.name.clone(), c.criterion().clone(), replay.clone()))
        .collect();
    let mut groups = Vec::new();
    for (g, name) in GROUPS.iter().enumerate() {
        let members: Vec<&CategoryResult> = categories
            .iter()
            .filter(|c| verdict::group_of(c.kind) == g)
            .collect();
        if members.is_empty() {
            continue;
        }
        let result = verdict::group(name, &members);
        out.push(verdict::card(
            format!("{target}: {name}"),
            result.criterion.clone(),
            replay.clone(),
        ));
        groups.push(result);
    }
    (groups, out)
}

impl CallsAudit {
    /// The group cards (AST track, relevance detection), for the summary table.
    pub fn group_cards(&self) -> &[Card] {
        &self.cards[self.categories.len().min(self.cards.len())..]
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::cell::Cell as Counter;

    /// A checker that passes exactly the outputs equal to the anchor text it was given.
    struct Exact {
        fail_entries: bool,
        calls: Counter<usize>,
        flip_on_replay: bool,
    }

    fn category() -> Category {
        Category {
            name: "simple_python".into(),
            kind: CategoryKind::Ast,
            language: Language::Python,
            entries: (0..6)
                .map(|i| CallEntry {
                    id: format!("simple_python_{i}"),
                    functions: vec![json!({"name": "f", "parameters": {"properties": {"x": {"type": "integer"}}, "required": ["x"]}})],
                    answer: Some(vec![json!({"f": {"x": [i]}})]),
                })
                .collect(),
        }
    }

    impl CallChecker for Exact {
        fn entries(&self, _: &[String]) -> Result<Entries, HookFailure> {
            if self.fail_entries {
                return Err(HookFailure {
                    cause: "`python` exited with exit status: 1".into(),
                    stderr_tail: "ModuleNotFoundError: No module named 'bfcl_eval'".into(),
                });
            }
            Ok(Entries {
                checker: json!({"package": "test"}),
                categories: vec![category()],
            })
        }
        fn score(&self, items: &[ScoreItem]) -> Result<Vec<CheckVerdict>, HookFailure> {
            self.calls.set(self.calls.get() + 1);
            let flip = self.flip_on_replay && self.calls.get() == 2;
            Ok(items
                .iter()
                .map(|i| {
                    let n: String = i.id.chars().filter(char::is_ascii_digit).collect();
                    let valid = i.output == format!("[f(x={n})]");
                    CheckVerdict {
                        valid: valid != flip,
                        error_type: None,
                        raised: false,
                    }
                })
                .collect())
        }
    }

    fn config() -> CallsConfig {
        CallsConfig {
            categories: vec!["simple_python".into()],
            sample: Some(4),
            seed: 7,
            forgeries: None,
        }
    }

    #[test]
    fn an_exact_checker_separates_every_cell_and_replays() {
        let c = Exact {
            fail_entries: false,
            calls: Counter::new(0),
            flip_on_replay: false,
        };
        let a = audit("BFCL", &c, &config());
        assert_eq!(c.calls.get(), 2, "scored once, then replayed");
        let cat = &a.categories[0];
        assert_eq!(cat.entries_total, 6);
        assert_eq!(cat.entries_probed, 4);
        assert_eq!(
            cat.criterion().status,
            Status::Pass,
            "{}",
            cat.criterion().evidence
        );
        assert_eq!(a.replay.cell.status, Status::Pass);
        assert_eq!(a.cards.len(), 2, "one category card and the AST track card");
        assert_eq!(a.group_cards().len(), 1);
        assert_eq!(
            a.group_cards()[0].licensed_claim.label(),
            "specification compliance"
        );
        let correct = cat
            .separation
            .rates
            .iter()
            .find(|r| r.forgery == Forgery::Correct.name())
            .unwrap();
        assert_eq!((correct.passed, correct.applicable), (4, 4));
        assert!(a.items.iter().all(|i| i.replay_valid == Some(i.valid)));
    }

    #[test]
    fn a_battery_given_as_data_builds_its_forgeries_and_the_anchor_only() {
        let c = Exact {
            fail_entries: false,
            calls: Counter::new(0),
            flip_on_replay: false,
        };
        let only = CallsConfig {
            forgeries: Some(vec![Forgery::WrongName.name().into()]),
            ..config()
        };
        let a = audit("BFCL", &c, &only);
        let mut built: Vec<&str> = a.items.iter().map(|i| i.forgery.name()).collect();
        built.sort_unstable();
        built.dedup();
        assert_eq!(built, [Forgery::Correct.name(), Forgery::WrongName.name()]);
        assert_eq!(a.categories[0].criterion().status, Status::Pass);
    }

    #[test]
    fn a_replay_that_differs_fails_replay() {
        let c = Exact {
            fail_entries: false,
            calls: Counter::new(0),
            flip_on_replay: true,
        };
        let a = audit("BFCL", &c, &config());
        assert_eq!(a.replay.cell.status, Status::Fail);
        assert_eq!(a.replay.mismatches, a.items.len());
        assert_eq!(a.group_cards()[0].replay.status, Status::Fail);
    }

    #[test]
    fn a_failing_hook_is_not_probed_with_its_cause_never_a_verdict() {
        let c = Exact {
            fail_entries: true,
            calls: Counter::new(0),
            flip_on_replay: false,
        };
        let a = audit("BFCL", &c, &config());
        assert_eq!(c.calls.get(), 0);
        for card in &a.cards {
            assert_eq!(card.criterion_sensitivity.status, Status::NotProbed);
            assert!(
                card.criterion_sensitivity
                    .evidence
                    .contains("No module named 'bfcl_eval'")
            );
            assert_eq!(card.licensed_claim.label(), "none");
        }
        assert_eq!(a.failures.len(), 1);
    }
}
