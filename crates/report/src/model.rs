//! The `stats.json` schema (`benchaudit.report/1`): every number a report prints or plots.
//!
//! Why the types live apart from the computation: the Markdown, the HTML and the figures are
//! rendered from these structs only, and the number guard checks the prose against their
//! JSON, so "every number comes from stats.json" holds by construction and by check.

use std::collections::BTreeMap;

use benchaudit_agents::Level;
use benchaudit_audit::joint::Joint;
pub use benchaudit_runs::Metric;
pub use benchaudit_stats::FiveNumbers;
use benchaudit_stats::{BootstrapCi, CurvePoint, ReliabilityGap, SignFlipMethod, Summary};
use serde::{Deserialize, Serialize};

/// Schema identifier written into every `stats.json`.
pub const SCHEMA: &str = "benchaudit.report/1";

/// The tool that wrote the report.
///
/// Exists so a reader knows which version's definitions produced the numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// Always "benchaudit".
    pub name: String,
    /// Crate version.
    pub version: String,
}

/// Where the records came from.
///
/// Exists for provenance: which run directory, which ledger, which registry and tool version
/// wrote it, and whether a torn last line was skipped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The run directory as given on the command line.
    pub run_dir: String,
    /// The ledger file read.
    pub episodes_file: String,
    /// Tool version recorded in the run's manifest, when present.
    pub run_tool_version: Option<String>,
    /// Task-registry hash recorded in the run's manifest, when present.
    pub registry_sha256: Option<String>,
    /// Whether a torn (incomplete) last ledger line was skipped.
    pub torn_last_line: bool,
    /// Episodes the run's plan holds, when its manifest records it.
    #[serde(default)]
    pub planned: Option<usize>,
    /// Episodes recorded (effective records, infra errors included).
    #[serde(default)]
    pub recorded: usize,
    /// Whether a `run` or `ab` process was still writing the ledger when it was read.
    #[serde(default)]
    pub being_written: bool,
}

/// The statistical settings every number depends on.
///
/// Exists so the report states them and the guard can find them (CVaR@α, τ, B, level, seed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Metric the statistics are computed on.
    pub metric: Metric,
    /// Its human name.
    pub metric_label: String,
    /// CVaR tail fraction α.
    pub alpha: f64,
    /// Reliability thresholds τ.
    pub taus: Vec<f64>,
    /// Bootstrap seed.
    pub seed: u64,
    /// Bootstrap replicates B.
    pub resamples: usize,
    /// Confidence level of every interval.
    pub level: f64,
    /// Monte-Carlo sign patterns of the permutation test (used when n > 20).
    pub permutation_samples: usize,
    /// The judge's full scale: judge totals are points out of this, divided by it for the
    /// 0–1 judge metric.
    pub judge_scale: f64,
}

/// The tally of a ledger's records: what was read, used and excluded (not to be confused
/// with a record's own counts, `benchaudit_agents::AgentCounts`).
///
/// Exists because excluded episodes (infra errors, a missing metric) must be counted and
/// listed, never silently dropped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordTally {
    /// Records in the ledger.
    pub total: usize,
    /// Records that entered the statistics.
    pub used: usize,
    /// Infra-error records (excluded).
    pub infra_errors: usize,
    /// Records without the chosen metric (excluded; e.g. coverage at L2).
    pub missing_metric: usize,
    /// Records per outcome (`submitted`, `no_submission`, …).
    pub outcomes: BTreeMap<String, usize>,
}

/// One excluded episode.
///
/// Exists so the report can name every episode it left out, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Excluded {
    /// Policy or model.
    pub policy: String,
    /// Level.
    pub level: Level,
    /// Task.
    pub task_id: String,
    /// Seed.
    pub seed: u64,
    /// Arm, if any.
    pub arm: Option<String>,
    /// `infra_error` or `missing_metric`.
    pub reason: String,
    /// The recorded error message, for infra errors.
    pub error: Option<String>,
}

/// What makes a set of episodes one experimental condition (everything but task and seed).
///
/// Exists so rows are never pooled across policies, levels, arms or option sets.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Condition {
    /// Policy or model.
    pub policy: String,
    /// Scaffolding level.
    pub level: Level,
    /// Stress arm, if any.
    pub arm: Option<String>,
    /// Hash of the run options.
    pub options_hash: String,
    /// The arm's quota setting, for the A/B arms of a run `benchaudit ab` wrote (read from its
    /// manifest): sweep arms are labelled by quota and slack, not by their options hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<benchaudit_runs::ArmSetting>,
}

/// A metric value of one seed.
///
/// Exists so per-seed values (the raw data of a cell) are in the JSON for recomputation and
/// for the degradation figure's dots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedValue {
    /// Seed.
    pub seed: u64,
    /// Metric value.
    pub value: f64,
}

/// A cell's values by seed, ascending: the values the bootstraps resample, with their seeds.
///
/// Exists to hold them in 8 bytes a value: seeds that run without a gap (a plan's `0..n`) are
/// kept as their first seed and count. Serialised as the list of [`SeedValue`]s it holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeedValues {
    seeds: Seeds,
    values: Vec<f64>,
}

/// The seeds of [`SeedValues`].
#[derive(Debug, Clone, PartialEq)]
enum Seeds {
    /// `first`, `first + 1`, … (`len` of them).
    Run { first: u64, len: usize },
    /// Any others, ascending.
    List(Vec<u64>),
}

impl Default for Seeds {
    fn default() -> Self {
        Seeds::Run { first: 0, len: 0 }
    }
}

impl SeedValues {
    /// Room for `n` values.
    #[must_use]
    pub fn with_capacity(n: usize) -> Self {
        Self {
            seeds: Seeds::default(),
            values: Vec::with_capacity(n),
        }
    }

    /// Appends the value of `seed`, which must be above every seed held (a seed out of order
    /// is kept, but [`SeedValues::get`] may miss it).
    pub fn push(&mut self, seed: u64, value: f64) {
        match &mut self.seeds {
            Seeds::Run { len: 0, first } => *first = seed,
            Seeds::Run { first, len } if first.checked_add(*len as u64) == Some(seed) => {}
            Seeds::Run { first, len } => {
                let mut list: Vec<u64> = (*first..).take(*len).collect();
                list.push(seed);
                self.seeds = Seeds::List(list);
                self.values.push(value);
                return;
            }
            Seeds::List(list) => list.push(seed),
        }
        if let Seeds::Run { len, .. } = &mut self.seeds {
            *len += 1;
        }
        self.values.push(value);
    }

    /// Frees unused room.
    pub fn shrink_to_fit(&mut self) {
        self.values.shrink_to_fit();
        if let Seeds::List(list) = &mut self.seeds {
            list.shrink_to_fit();
        }
    }

    /// The values, by seed.
    pub fn values(&self) -> std::slice::Iter<'_, f64> {
        self.values.iter()
    }

    /// The seeds, ascending.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.seed_at(i))
    }

    fn seed_at(&self, i: usize) -> u64 {
        match &self.seeds {
            Seeds::Run { first, .. } => first + i as u64,
            Seeds::List(list) => list.get(i).copied().unwrap_or(u64::MAX),
        }
    }

    /// (seed, value) pairs, ascending seed.
    pub fn iter(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        self.keys().zip(self.values.iter().copied())
    }

    /// Values held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether none is.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    fn index(&self, seed: u64) -> Option<usize> {
        match &self.seeds {
            Seeds::Run { first, len } => seed
                .checked_sub(*first)
                .and_then(|i| usize::try_from(i).ok())
                .filter(|i| i < len),
            Seeds::List(list) => list.binary_search(&seed).ok(),
        }
    }

    /// The value of `seed`.
    #[must_use]
    pub fn get(&self, seed: &u64) -> Option<&f64> {
        self.index(*seed).and_then(|i| self.values.get(i))
    }

    /// Whether `seed` has a value.
    #[must_use]
    pub fn contains_key(&self, seed: &u64) -> bool {
        self.index(*seed).is_some()
    }
}

impl Serialize for SeedValues {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(|(seed, value)| SeedValue { seed, value }))
    }
}

impl<'de> Deserialize<'de> for SeedValues {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let list = Vec::<SeedValue>::deserialize(d)?;
        let mut out = SeedValues::with_capacity(list.len());
        for v in list {
            out.push(v.seed, v.value);
        }
        Ok(out)
    }
}

/// Statistics of one (condition, task) cell.
///
/// Exists as one row of the per-task table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellStats {
    /// The condition.
    #[serde(flatten)]
    pub condition: Condition,
    /// Display label of the condition.
    pub label: String,
    /// Task.
    pub task_id: String,
    /// n, mean, worst, CVaR, Reliability@τ and the mean's CI.
    pub summary: Summary,
    /// Quartiles and extremes.
    pub five: FiveNumbers,
    /// Worst-case shortfall of the cell: its mean minus its worst case (not SPEC §7's
    /// reliability gap, which needs a static and a hardest difficulty level).
    pub shortfall: Shortfall,
    /// Per-seed values, by seed.
    pub values: SeedValues,
}

/// Statistics of one condition pooled over its tasks.
///
/// Exists as one row of the pooled table and one row of the reliability spectrum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PooledStats {
    /// The condition.
    #[serde(flatten)]
    pub condition: Condition,
    /// Display label of the condition.
    pub label: String,
    /// Number of tasks pooled.
    pub tasks: usize,
    /// n, mean, worst, CVaR, Reliability@τ and the mean's CI over all episodes.
    pub summary: Summary,
    /// Quartiles and extremes.
    pub five: FiveNumbers,
    /// Worst-case shortfall: mean minus worst case over all pooled episodes.
    pub shortfall: Shortfall,
}

/// A mean minus a worst case, with both: the "worst-case shortfall".
///
/// Exists as the name of the quantity that is *not* SPEC §7's reliability gap (static mean −
/// worst case at the hardest difficulty level, [`ReliabilityGap`], kept for degradation curves
/// whose lowest dose is the static one): a cell's own mean minus its own worst case, or the
/// mean at one scaffolding level minus the worst case at another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shortfall {
    /// The mean.
    pub mean: f64,
    /// The worst case.
    pub worst: f64,
    /// `mean − worst`.
    pub shortfall: f64,
}

/// Worst-case shortfall across scaffolding levels for one policy (or one of its tasks).
///
/// Exists for runs with several levels: the mean at the most scaffolded level present minus
/// the worst case at the least scaffolded level present. Scaffolding levels are not
/// difficulty levels of one environment, so this is not SPEC §7's reliability gap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelShortfall {
    /// Policy or model.
    pub policy: String,
    /// Arm, if any.
    pub arm: Option<String>,
    /// Options hash.
    pub options_hash: String,
    /// Display label.
    pub label: String,
    /// The task, or `None` for all tasks pooled.
    pub task_id: Option<String>,
    /// Most scaffolded level present: where the mean is taken.
    pub scaffolded_level: Level,
    /// Least scaffolded level present: where the worst case is taken.
    pub unscaffolded_level: Level,
    /// The shortfall and its components.
    pub shortfall: Shortfall,
}

/// Judge vs ground truth for one condition, pooled over tasks.
///
/// Exists because every episode is double-scored: the contrast between the shape scorer and
/// ground truth is itself evidence (paper §3.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScorerContrast {
    /// The condition.
    #[serde(flatten)]
    pub condition: Condition,
    /// Display label.
    pub label: String,
    /// Scored episodes.
    pub n: usize,
    /// Mean ground-truth F1.
    pub f1_mean: f64,
    /// Mean judge total / 100.
    pub judge_mean: f64,
}

/// A closed interval.
///
/// Exists to store CI ends compactly next to their estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

impl From<&BootstrapCi> for Interval {
    fn from(ci: &BootstrapCi) -> Self {
        Interval {
            lo: ci.lo,
            hi: ci.hi,
        }
    }
}

/// One paired comparison (Δ = first − second, see the section's `delta`).
///
/// Exists as one row of an A/B or run-vs-run table and one row of the forest plot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedRow {
    /// Policy or model.
    pub policy: String,
    /// Level.
    pub level: Level,
    /// Arm (run-vs-run comparisons only).
    pub arm: Option<String>,
    /// The quota setting both arms of a constant-vs-escalating pair ran under, for the arms
    /// of an `ab` run (a quota or slack sweep has one pair per setting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<benchaudit_runs::ArmSetting>,
    /// The task, or `None` for all tasks pooled.
    pub task_id: Option<String>,
    /// Display label.
    pub label: String,
    /// Pairs.
    pub n: usize,
    /// Mean of the first side (see the section's `a`).
    pub mean_a: f64,
    /// Mean of the second side (see the section's `b`).
    pub mean_b: f64,
    /// Mean paired difference, signed as the section's `delta` says.
    pub delta: f64,
    /// Paired bootstrap CI of the mean difference.
    pub delta_ci: Interval,
    /// Two-sided sign-flip p-value.
    pub p_value: f64,
    /// Exact or Monte Carlo.
    pub p_method: SignFlipMethod,
    /// Holm-adjusted p-value within the row's family (per-task rows or pooled rows).
    pub p_holm: f64,
    /// Within-pair Cliff's δ.
    pub cliffs_delta: f64,
    /// Bootstrap CI of Cliff's δ.
    pub cliffs_ci: Interval,
    /// Pairs with Δ > 0.
    pub positive: usize,
    /// Pairs with Δ < 0.
    pub negative: usize,
    /// Pairs with Δ = 0.
    pub ties: usize,
    /// Whether the CI of Δ excludes 0.
    pub ci_excludes_zero: bool,
}

/// A family of paired comparisons with the sign convention spelled out.
///
/// Exists so a Δ is never read with the wrong sign: `a` and `b` name the two sides and
/// `delta` says which is subtracted from which.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedSection {
    /// What side A is (e.g. "constant" or RUN_A's path).
    pub a: String,
    /// What side B is.
    pub b: String,
    /// The sign convention, e.g. "a - b" or "b - a".
    pub delta: String,
    /// How pairs are formed.
    pub paired_by: String,
    /// Pairs found.
    pub pairs: usize,
    /// Episodes on side A without a partner.
    pub unpaired_a: usize,
    /// Episodes on side B without a partner.
    pub unpaired_b: usize,
    /// Groups left unpaired because the pairing was ambiguous (e.g. several constant arms).
    pub skipped: Vec<String>,
    /// Per-task rows (one Holm family).
    pub rows: Vec<PairedRow>,
    /// Rows pooled over tasks (another Holm family).
    pub pooled: Vec<PairedRow>,
}

/// The mean over tasks of one seed at one dose (a dot of the degradation figure).
///
/// Exists so the dots are in the JSON; with one task it is that task's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoseSeed {
    /// Dose.
    pub dose: f64,
    /// Seed.
    pub seed: u64,
    /// Mean metric over the seed's tasks at this dose.
    pub value: f64,
    /// Tasks averaged.
    pub tasks: usize,
}

/// A degradation curve for one (policy, level) over numeric dose arms.
///
/// Exists for runs whose `key.arm` holds doses: the per-dose summaries, the curve's
/// mean at the lowest dose − worst at the highest, and the per-seed dots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveStats {
    /// Policy or model.
    pub policy: String,
    /// Level.
    pub level: Level,
    /// The arm labels of the doses, in dose order.
    pub arms: Vec<String>,
    /// Display label.
    pub label: String,
    /// Points by ascending dose (each with its full summary over all tasks and seeds).
    pub points: Vec<CurvePoint>,
    /// Mean at the lowest dose − worst case at the highest dose: SPEC §7's reliability gap
    /// when the lowest dose is 0 (the static environment; see [`CurveStats::is_reliability_gap`]).
    pub gap: ReliabilityGap,
    /// Per-seed means over tasks.
    pub seeds: Vec<DoseSeed>,
}

impl CurveStats {
    /// Whether the curve's gap is SPEC §7's reliability gap: its lowest dose is 0, the static
    /// (no-stress) environment, so the gap is the static mean minus the worst case at the
    /// hardest dose. Otherwise it is the mean at the lowest dose tested minus that worst case.
    #[must_use]
    pub fn is_reliability_gap(&self) -> bool {
        self.points.first().is_some_and(|p| p.dose == 0.0)
    }
}

/// A figure written with the report.
///
/// Exists so the files and their pixel sizes are listed (a test checks the PNGs against it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureInfo {
    /// Stable identifier (also the file stem).
    pub id: String,
    /// Figure kind (spectrum, heatmap, joint, probe, scaffolding, forest, degradation).
    pub kind: String,
    /// Caption.
    pub title: String,
    /// SVG path relative to the report directory.
    pub svg: String,
    /// PNG path relative to the report directory.
    pub png: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// `stats.json` of `benchaudit report RUN_DIR`.
///
/// Exists as the single source of every number in report.md, report.html and the figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStats {
    /// [`SCHEMA`].
    pub schema: String,
    /// "run".
    pub kind: String,
    /// Writer.
    pub tool: Tool,
    /// Provenance.
    pub source: Source,
    /// Statistical settings.
    pub settings: Settings,
    /// Episode bookkeeping.
    pub episodes: RecordTally,
    /// Every excluded episode.
    pub excluded: Vec<Excluded>,
    /// Levels present (in order L0, L1, L2).
    pub levels: Vec<Level>,
    /// Tasks present (sorted).
    pub tasks: Vec<String>,
    /// Policies present (sorted).
    pub policies: Vec<String>,
    /// Seeds present (sorted).
    pub seeds: Vec<u64>,
    /// Number of policies (so prose can state it).
    pub policy_count: usize,
    /// Number of tasks.
    pub task_count: usize,
    /// Number of seeds.
    pub seed_count: usize,
    /// Number of distinct conditions.
    pub conditions: usize,
    /// Per (condition, task).
    pub cells: Vec<CellStats>,
    /// Per condition over tasks.
    pub pooled: Vec<PooledStats>,
    /// Across-level shortfalls (runs with several levels).
    pub level_shortfalls: Vec<LevelShortfall>,
    /// Judge vs ground truth per condition.
    pub scorers: Vec<ScorerContrast>,
    /// The 2×2 joint intervention (runs with L0 and L2), computed as the audit computes it.
    pub joint: Option<Joint>,
    /// Constant vs escalating arms (runs whose arms are `constant` / `escalating`).
    pub ab: Option<PairedSection>,
    /// Degradation curves (runs whose arms are numeric doses).
    pub degradation: Vec<CurveStats>,
    /// pass@k and pass^k per condition (a task's trials are its seeds).
    #[serde(default)]
    pub pass_k: Option<PassKSection>,
    /// Dollar cost of the LLM episodes, from a dated price table.
    #[serde(default)]
    pub cost: Option<CostSection>,
    /// Figures written.
    pub figures: Vec<FigureInfo>,
}

/// pass@k and pass^k of every condition at one success threshold.
///
/// Exists because the mean hides whether a model succeeds every time: pass^k (all k trials
/// succeed, τ-bench) falls with k where pass@k (at least one succeeds) rises, and the gap
/// between them is the unreliability a deployment meets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassKSection {
    /// A trial succeeds when its metric is ≥ this (`--pass-threshold`).
    pub threshold: f64,
    /// Per condition.
    pub rows: Vec<PassKStats>,
}

/// pass@k and pass^k of one condition: per task over its seeds, and the mean over tasks with
/// stratified bootstrap CIs (seeds resampled within each task).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassKStats {
    /// The condition.
    #[serde(flatten)]
    pub condition: Condition,
    /// Display label.
    pub label: String,
    /// Tasks, in the order of `curve.tasks`.
    pub tasks: Vec<String>,
    /// The estimators (`benchaudit_stats::pass_k_curve_lazy`: each task's points are
    /// computed when written or drawn).
    pub curve: benchaudit_stats::LazyPassKCurve,
}

/// A price of the table, as used.
///
/// Exists so every dollar figure names the price it rests on, its date and its source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Provider (`openai`, `anthropic`, `together`, …).
    pub provider: String,
    /// Model as the provider names it.
    pub model: String,
    /// Dollars per million input (prompt) tokens.
    pub input_per_mtok: f64,
    /// Dollars per million output (completion) tokens.
    pub output_per_mtok: f64,
    /// When the price held (YYYY-MM-DD).
    pub date: String,
    /// Where it comes from.
    pub source: String,
}

/// The cost of one condition's LLM episodes.
///
/// Exists as one row of the cost table and one dot of the cost–quality scatter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostRow {
    /// The condition.
    #[serde(flatten)]
    pub condition: Condition,
    /// Display label.
    pub label: String,
    /// Provider read from the policy name (`provider:model`), if it has one.
    pub provider: Option<String>,
    /// Model read from the policy name.
    pub model: String,
    /// Episodes used (the metric's episodes).
    pub episodes: usize,
    /// Of them, solved (metric ≥ the pass threshold).
    pub solved: usize,
    /// Prompt tokens over those episodes.
    pub input_tokens: u64,
    /// Completion tokens over those episodes.
    pub output_tokens: u64,
    /// The price used; `None` when the table has none for this model: cost unknown.
    pub price: Option<Price>,
    /// Dollars over all episodes (`None`: unknown).
    pub total_usd: Option<f64>,
    /// Dollars per episode (`None`: unknown).
    pub per_episode_usd: Option<f64>,
    /// Dollars per solved episode (`None`: unknown, or nothing solved).
    pub per_solved_usd: Option<f64>,
    /// Mean metric of the condition.
    pub mean: f64,
    /// Whether no other priced condition is at least as good for at most the cost (and
    /// strictly better in one): on the cost–quality Pareto front.
    pub pareto: bool,
}

/// Cost of every LLM condition.
///
/// Exists so model choice can weigh quality against dollars, with unknown prices shown as
/// unknown (never as free).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostSection {
    /// The user's price file, when one was given (its prices win over the shipped table).
    pub price_file: Option<String>,
    /// Per LLM condition.
    pub rows: Vec<CostRow>,
    /// Conditions whose cost is unknown.
    pub unknown: usize,
}

/// `stats.json` of `benchaudit report --compare RUN_A RUN_B`.
///
/// Exists as the single source of every number in a comparison report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareStats {
    /// [`SCHEMA`].
    pub schema: String,
    /// "compare".
    pub kind: String,
    /// Writer.
    pub tool: Tool,
    /// Run A.
    pub source_a: Source,
    /// Run B.
    pub source_b: Source,
    /// Statistical settings.
    pub settings: Settings,
    /// Episode bookkeeping of run A.
    pub episodes_a: RecordTally,
    /// Episode bookkeeping of run B.
    pub episodes_b: RecordTally,
    /// The comparisons.
    pub comparison: PairedSection,
    /// Figures written.
    pub figures: Vec<FigureInfo>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn seed_values_hold_a_run_of_seeds_compactly_and_serialise_as_the_list() {
        let mut run = SeedValues::default();
        for (s, v) in [(3, 0.5), (4, 1.0), (5, 0.25)] {
            run.push(s, v);
        }
        assert_eq!(run.seeds, Seeds::Run { first: 3, len: 3 });
        let mut gap = run.clone();
        gap.push(9, 0.0);
        assert_eq!(gap.seeds, Seeds::List(vec![3, 4, 5, 9]));
        for sv in [&run, &gap] {
            assert_eq!(sv.get(&4), Some(&1.0));
            assert_eq!(sv.get(&2), None);
            assert_eq!(sv.get(&6), None);
            assert!(sv.contains_key(&5) && !sv.contains_key(&7));
            let list: Vec<SeedValue> = sv
                .iter()
                .map(|(seed, value)| SeedValue { seed, value })
                .collect();
            assert_eq!(
                serde_json::to_value(sv).unwrap(),
                serde_json::to_value(&list).unwrap()
            );
            let back: SeedValues =
                serde_json::from_value(serde_json::to_value(sv).unwrap()).unwrap();
            assert_eq!(&back, sv);
        }
        assert_eq!(gap.get(&9), Some(&0.0));
        assert_eq!(gap.keys().collect::<Vec<_>>(), [3, 4, 5, 9]);
    }
}
