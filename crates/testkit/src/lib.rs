//! Test helpers shared by the benchaudit test suites (a dev-dependency only): running the
//! binary and reading what it wrote, recomputing SPEC §7 statistics from a ledger by their
//! definitions, and building ledgers with chosen scores.
//!
//! Helpers panic with a message instead of returning errors: a failed helper is a failed test.
//!
//! ```
//! let values = [1.0, 0.5, 0.0, 1.0, 1.0];
//! let (mean, worst, cvar, reliability) = benchaudit_testkit::recompute(&values);
//! assert_eq!((mean, worst, cvar), (0.7, 0.0, 0.0));
//! assert_eq!(reliability, [0.6, 0.8]);
//! ```
#![deny(missing_docs)]
#![allow(
    clippy::unwrap_used,
    reason = "test helpers fail the test that calls them with the panic's message"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use benchaudit_agents::{Level, RuleKind};
use benchaudit_runs::{Plan, Player, run_all};
use benchaudit_stats::{SummaryConfig, summarize};
use serde_json::{Value, json};

/// The `benchaudit` binary under test (`env!("CARGO_BIN_EXE_benchaudit")` in the cli's tests).
#[derive(Debug, Clone, Copy)]
pub struct Benchaudit(pub &'static str);

impl Benchaudit {
    /// A command running the binary.
    pub fn command(&self) -> Command {
        Command::new(self.0)
    }

    /// Runs the binary with `args` and waits for it.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("run benchaudit")
    }

    /// Runs the binary and fails the test, showing both streams, unless it exits 0.
    #[track_caller]
    pub fn ok(&self, args: &[&str]) -> Output {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "benchaudit {args:?} exited {:?}\nstdout:\n{}\nstderr:\n{}",
            o.status.code(),
            text(&o.stdout),
            text(&o.stderr)
        );
        o
    }
}

/// Output bytes as text (lossy).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A path as a command-line argument.
pub fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 test path")
}

/// A JSON file.
#[track_caller]
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Every file below `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// (policy, level, task) → seed → F1, read straight from a run directory's ledger (infra
/// errors skipped).
pub fn f1_by_cell(run_dir: &Path) -> BTreeMap<(String, String, String), BTreeMap<u64, f64>> {
    let text = std::fs::read_to_string(run_dir.join("episodes.jsonl")).unwrap();
    let mut cells: BTreeMap<_, BTreeMap<u64, f64>> = BTreeMap::new();
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        if r["outcome"] == "infra_error" {
            continue;
        }
        let key = &r["key"];
        cells
            .entry((
                key["policy"].as_str().unwrap().to_string(),
                key["level"].as_str().unwrap().to_string(),
                key["task_id"].as_str().unwrap().to_string(),
            ))
            .or_default()
            .insert(
                key["seed"].as_u64().unwrap(),
                r["scores"]["f1"].as_f64().unwrap(),
            );
    }
    cells
}

/// Mean, worst, CVaR@0.2 and Reliability@{0.9, 0.5} by their definitions (SPEC §7), written
/// out independently of the stats crate.
pub fn recompute(values: &[f64]) -> (f64, f64, f64, [f64; 2]) {
    let n = values.len();
    let mut sum = 0.0;
    for v in values {
        sum += v;
    }
    let mean = sum / n as f64;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let k = ((0.2 * n as f64) - 1e-9).ceil().max(1.0) as usize;
    let mut tail = 0.0;
    for v in &sorted[..k] {
        tail += v;
    }
    let share = |tau: f64| values.iter().filter(|&&v| v >= tau).count() as f64 / n as f64;
    (mean, sorted[0], tail / k as f64, [share(0.9), share(0.5)])
}

/// Equality up to a few ulps: stats.json holds the exact shortest representation, but
/// serde_json's default (non-`float_roundtrip`) parser may land one ulp off when reading it.
#[track_caller]
pub fn same(json: &Value, expected: f64, what: &str) {
    let got = json
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: {json} is not a number"));
    let tolerance = 4.0 * f64::EPSILON * got.abs().max(expected.abs());
    assert!(
        got == expected || (got - expected).abs() <= tolerance,
        "{what}: stats.json has {got}, recomputed {expected}"
    );
}

/// Checks a `stats.json` summary (default settings) against `values` recomputed by definition;
/// the CI against the stats crate's seeded bootstrap over the same value order, to the bit.
#[track_caller]
pub fn check_summary(what: &str, summary: &Value, values: &[f64]) {
    let (mean, worst, cvar, rel) = recompute(values);
    assert_eq!(
        summary["n"].as_u64().unwrap() as usize,
        values.len(),
        "{what} n"
    );
    same(&summary["mean"], mean, &format!("{what} mean"));
    same(&summary["worst"], worst, &format!("{what} worst"));
    same(&summary["cvar_alpha"], 0.2, &format!("{what} alpha"));
    same(&summary["cvar"], cvar, &format!("{what} cvar"));
    same(&summary["reliability"][0]["tau"], 0.9, "tau");
    same(
        &summary["reliability"][0]["fraction"],
        rel[0],
        &format!("{what} R@0.9"),
    );
    same(&summary["reliability"][1]["tau"], 0.5, "tau");
    same(
        &summary["reliability"][1]["fraction"],
        rel[1],
        &format!("{what} R@0.5"),
    );
    let expected = summarize(
        values,
        &SummaryConfig {
            threads: 2,
            ..SummaryConfig::default()
        },
    )
    .unwrap();
    let ci = &summary["mean_ci"];
    same(&ci["lo"], expected.mean_ci.lo, &format!("{what} CI lo"));
    same(&ci["hi"], expected.mean_ci.hi, &format!("{what} CI hi"));
    assert_eq!(
        (
            ci["resamples"].as_u64(),
            ci["seed"].as_u64(),
            ci["level"].as_f64()
        ),
        (Some(2000), Some(0), Some(0.95))
    );
    assert!(
        ci["lo"].as_f64().unwrap() <= mean && mean <= ci["hi"].as_f64().unwrap(),
        "{what}"
    );
}

/// [`check_summary`] for a pooled row: the statistics of all `strata` (one per task, in the
/// report's task order) concatenated, with the mean's CI from the stratified bootstrap (seeds
/// resampled within each task), which is what every pooled CI of a report is.
pub fn check_pooled_summary(what: &str, summary: &Value, strata: &[Vec<f64>]) {
    let values: Vec<f64> = strata.concat();
    let mut plain = summary.clone();
    let expected = summarize(&values, &SummaryConfig::default()).unwrap();
    plain["mean_ci"]["lo"] = serde_json::json!(expected.mean_ci.lo);
    plain["mean_ci"]["hi"] = serde_json::json!(expected.mean_ci.hi);
    check_summary(what, &plain, &values);
    let stratified = benchaudit_stats::stratified_bootstrap_mean_ci(
        strata,
        &benchaudit_stats::BootstrapConfig::default(),
    )
    .unwrap();
    let ci = &summary["mean_ci"];
    same(
        &ci["lo"],
        stratified.lo,
        &format!("{what} stratified CI lo"),
    );
    same(
        &ci["hi"],
        stratified.hi,
        &format!("{what} stratified CI hi"),
    );
}

/// A real episode record (the oracle at L2 on T3_duplicates, seed 0) as JSON, to build
/// ledgers with chosen keys and scores from.
pub fn template_record() -> Value {
    let plan = Plan::new(
        vec![Player::rule(RuleKind::Oracle)],
        vec![Level::L2],
        vec![benchaudit_comtrade::task("T3_duplicates").unwrap()],
        vec![0],
    );
    serde_json::to_value(&run_all(&plan, 1)[0]).unwrap()
}

/// `template` re-keyed to (policy, task, seed, arm) with ground-truth F1 `f1`. A stress arm is
/// part of the run options, so each arm gets its own options hash.
pub fn record(template: &Value, policy: &str, task: &str, seed: u64, arm: &str, f1: f64) -> Value {
    let mut r = template.clone();
    r["key"]["policy"] = json!(policy);
    r["key"]["task_id"] = json!(task);
    r["key"]["seed"] = json!(seed);
    r["key"]["arm"] = json!(arm);
    r["key"]["options_hash"] = json!(format!(
        "{:016x}",
        arm.len() * 7919 + arm.bytes().map(u64::from).sum::<u64>() as usize
    ));
    r["scores"]["f1"] = json!(f1);
    r["reward"] = json!(f1);
    r
}

/// Writes `records` as `dir/episodes.jsonl` (a run directory without a manifest).
pub fn write_ledger(dir: &Path, records: &[Value]) {
    std::fs::create_dir_all(dir).unwrap();
    let text: String = records.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("episodes.jsonl"), text).unwrap();
}
