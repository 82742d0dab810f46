//! Scorers for ComtradeBench episodes: ground-truth F1 (criterion-valid), coverage (the L1
//! outcome) and the legacy six-dimension judge (a shape scorer kept faithful as an object of
//! study). Every episode is scored by all of them; all are pure functions of
//! (task, seed, submission).
//!
//! ```
//! use benchaudit_comtrade::{Generator, Row, Submission, record::write_jsonl, task};
//! use benchaudit_scoring::Scores;
//!
//! let t = task("T3_duplicates").unwrap();
//! let rows: Vec<Row> = Generator::new(t, 0).truth().map(Row::Record).collect();
//! let mut data = String::new();
//! write_jsonl(t, &rows, &mut data);
//! let scores = Scores::compute(t, 0, &Submission::new(data, "{}", ""));
//! assert_eq!(scores.f1, 1.0);
//! ```
#![deny(missing_docs)]

pub mod coverage;
pub mod f1;
pub mod judge;
pub mod lite;
pub mod python;

use benchaudit_comtrade::{Generator, Submission, TaskSpec};

/// Maps and sets keyed by submitted text hash with SipHash (std's `DefaultHasher`, fixed keys,
/// so deterministic): with a fast unkeyed hash such as Fx a hostile submission can construct
/// keys that all collide, and every lookup turns linear; here it could only search for them,
/// a brute-force search per key (docs/decisions.md).
pub(crate) type Sip = std::hash::BuildHasherDefault<std::hash::DefaultHasher>;
/// A map keyed by submitted text (see [`Sip`]).
pub(crate) type SipMap<K, V> = std::collections::HashMap<K, V, Sip>;
/// A set of submitted text (see [`Sip`]).
pub(crate) type SipSet<K> = std::collections::HashSet<K, Sip>;
use serde::{Deserialize, Serialize};

pub use f1::F1Score;
pub use judge::{Breakdown, JudgeContext, JudgeOutcome};

/// A scorer maps a submission of (task, seed) to a reward in [0, 1]; the audit treats every
/// scorer through this one interface.
pub trait Scorer {
    /// Short stable name (`ground_truth_f1`, `legacy_judge`).
    fn name(&self) -> &'static str;
    /// The smallest reward difference the scorer can express (the audit's ε).
    fn resolution(&self) -> f64;
    /// The reward of a submission.
    fn reward(&self, task: &'static TaskSpec, seed: u64, submission: &Submission) -> f64;
}

/// Ground-truth F1 against the seeded canonical record set.
#[derive(Debug, Clone, Copy, Default)]
pub struct GroundTruthF1;

impl Scorer for GroundTruthF1 {
    fn name(&self) -> &'static str {
        "ground_truth_f1"
    }
    fn resolution(&self) -> f64 {
        1e-12
    }
    fn reward(&self, task: &'static TaskSpec, seed: u64, submission: &Submission) -> f64 {
        f1::f1_of_data(
            &Generator::new(task, seed),
            submission.data_jsonl.as_deref().unwrap_or(""),
        )
        .f1
    }
}

/// The released six-dimension judge; reward = total / 100.
#[derive(Debug, Clone, Copy, Default)]
pub struct LegacyJudge;

impl Scorer for LegacyJudge {
    fn name(&self) -> &'static str {
        "legacy_judge"
    }
    fn resolution(&self) -> f64 {
        // Totals are rounded to one decimal out of 100.
        0.001
    }
    fn reward(&self, task: &'static TaskSpec, _seed: u64, submission: &Submission) -> f64 {
        judge::judge(&JudgeContext::for_task(task), submission).reward()
    }
}

/// Points of a perfect legacy judge total: the released judge's scale, kept in the record
/// (`judge_total`) so the released vectors pin it. Everything benchaudit shows — `score`,
/// `run`, reports, cards, the server's answers — shows the judge on 0–1 ([`Scores::judge`]).
pub const JUDGE_POINTS: f64 = 100.0;

/// Decimals of the judge on the 0–1 scale: the released environment's reward is
/// `round(total / 100, 4)`, two decimals of a point (totals themselves are rounded to 0.1
/// point, except under the missing-file rule, whose thirds need the fourth decimal).
pub const JUDGE_DECIMALS: usize = 4;

/// A judge total (0–100 points) on the 0–1 scale every benchaudit output shows, rounded as
/// the released environment rounds its reward ([`JUDGE_DECIMALS`]), so `37.8` points is
/// `0.378`, never `0.37799999999999995`.
pub fn judge_share(total: f64) -> f64 {
    python::round(total / JUDGE_POINTS, JUDGE_DECIMALS)
}

/// Both scorers on one submission, parsed once: what an episode records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scores {
    /// Ground-truth F1.
    pub f1: f64,
    /// Ground-truth precision.
    pub precision: f64,
    /// Ground-truth recall.
    pub recall: f64,
    /// Non-empty lines submitted (|S|).
    pub submitted: u32,
    /// Distinct true records submitted (|U|).
    pub true_unique: u32,
    /// Distinct record ids submitted (lines above this are duplicates).
    #[serde(default)]
    pub distinct_ids: u32,
    /// Totals rows submitted.
    #[serde(default)]
    pub totals_rows: u32,
    /// Legacy judge total out of 100.
    pub judge_total: f64,
    /// Legacy judge per-dimension points.
    pub judge_breakdown: Breakdown,
    /// Where the released judge would have raised (then judge_total is 0).
    pub judge_errors: Vec<String>,
}

impl Breakdown {
    /// The dimensions on the 0–1 scale of [`Scores::judge`] (points / [`JUDGE_POINTS`]; they
    /// sum to the judge before the released judge rounds its total to 0.1 points).
    #[must_use]
    pub fn shares(&self) -> Breakdown {
        let s = |v: f64| v / JUDGE_POINTS;
        Breakdown {
            correctness: s(self.correctness),
            completeness: s(self.completeness),
            robustness: s(self.robustness),
            efficiency: s(self.efficiency),
            data_quality: s(self.data_quality),
            observability: s(self.observability),
        }
    }
}

impl Scores {
    /// The legacy judge on the 0–1 scale shown everywhere: `judge_total / 100` to
    /// [`JUDGE_DECIMALS`] ([`judge_share`]).
    pub fn judge(&self) -> f64 {
        judge_share(self.judge_total)
    }

    /// Scores a submission of (task, seed) with both scorers, reading each data line once
    /// for both.
    pub fn compute(task: &'static TaskSpec, seed: u64, submission: &Submission) -> Self {
        let data = submission.data_jsonl.as_deref().unwrap_or("");
        let ctx = JudgeContext::for_task(task);
        let generator = Generator::new(task, seed);
        let mut f1 = f1::F1Tally::new(&generator);
        let j = match judge::prepare(submission) {
            Ok(metadata) => {
                let mut rows = judge::JudgeRows::new(&ctx, &metadata, data);
                lite::LineReader::new(data).for_each(|layout, line| {
                    f1.add(layout, line);
                    rows.add(layout, line);
                });
                judge::conclude(&ctx, submission, &metadata, rows)
            }
            // The judge decided before any row: the rows are read for F1 alone.
            Err(outcome) => {
                lite::LineReader::new(data).for_each(|layout, line| f1.add(layout, line));
                outcome
            }
        };
        let f = f1.finish();
        Scores {
            f1: f.f1,
            precision: f.precision,
            recall: f.recall,
            submitted: f.submitted,
            true_unique: f.true_unique,
            distinct_ids: f.distinct_ids,
            totals_rows: f.totals_rows,
            judge_total: j.total,
            judge_breakdown: j.breakdown,
            judge_errors: j.errors,
        }
    }

    /// The reward under the chosen primary scorer.
    pub fn reward(&self, primary: RewardScorer) -> f64 {
        match primary {
            RewardScorer::F1 => self.f1,
            RewardScorer::Judge => self.judge(),
        }
    }
}

/// Which scorer gives an episode its `reward`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum RewardScorer {
    /// Ground-truth F1 (default).
    #[default]
    F1,
    /// The legacy judge (total / 100, [`judge_share`]).
    Judge,
}
