//! From ledger records to the numbers of `stats.json`.
//!
//! Exists to keep every statistical decision of a report in one pure, tested place:
//!
//! * **Value order.** The bootstrap resamples positions, so its CI depends on the order the
//!   values are handed over. A cell's values are in ascending seed order; a pooled row's in
//!   ascending (task, seed) order. A reader recomputing a CI must use the same order.
//! * **Exclusions.** Infra-error episodes and episodes without the chosen metric are left
//!   out and listed; nothing else is.
//! * **Reliability gap** (SPEC §7, "static mean − hardest-level worst case") is reported only
//!   where a run has a static and a hardest difficulty level: a degradation curve whose lowest
//!   dose is 0 ([`crate::model::CurveStats::is_reliability_gap`]). Every other "mean − worst"
//!   is a different quantity with a different name, the **worst-case shortfall**
//!   ([`crate::model::Shortfall`]): a table row's own mean minus its own worst case, and, for
//!   a policy run at several scaffolding levels, [`crate::model::LevelShortfall`], the mean at
//!   the most scaffolded level present (L0 before L1 before L2) minus the worst case at the
//!   least scaffolded one, per task and pooled.
//! * **Pooled intervals** resample seeds within each task (the stratified bootstrap,
//!   [`benchaudit_stats::stratified_bootstrap_mean_ci`]), so a replicate keeps the run's task
//!   mix; a cell's interval is the plain bootstrap of its seeds.
//!
//! The submodules: [`levels`] (gaps across levels, judge vs ground truth), [`paired`] (A/B
//! arms, run-vs-run comparisons, Holm), [`curves`] (degradation doses). The 2×2 joint
//! intervention is the audit's one computation ([`benchaudit_audit::joint::compute`]).

mod curves;
mod extras;
mod levels;
mod paired;

use std::collections::{BTreeMap, BTreeSet};

use benchaudit_agents::{Level, Outcome};
use benchaudit_runs::{ArmSetting, JUDGE_SCALE};
use benchaudit_stats::{PairedConfig, SummaryConfig, five_numbers, mean, summarize, worst};

pub use curves::arm_dose;
pub use paired::compare_stats;

use crate::error::{Error, Result, stats};
use crate::load::{Group, Loaded};
use crate::model::{
    CellStats, Condition, Excluded, Metric, PooledStats, RecordTally, RunStats, SCHEMA, SeedValue,
    Settings, Shortfall, Tool,
};

/// Largest bootstrap B a report accepts (each row resamples B times).
pub const MAX_RESAMPLES: usize = 1_000_000;

/// A CVaR tail fraction α, in (0, 1] (a flag's value parser).
///
/// # Errors
/// Not a number, or outside (0, 1].
pub fn parse_alpha(s: &str) -> Result<f64, String> {
    let a = number(s)?;
    if a > 0.0 && a <= 1.0 {
        Ok(a)
    } else {
        Err(format!("α must be in (0, 1], got {s}"))
    }
}

/// A reliability threshold τ, in (0, 1]: R@τ is the share of episodes whose metric is at
/// least τ, and the metrics benchaudit records are on 0–1, so τ ≤ 0 would count every
/// episode and τ > 1 none.
///
/// # Errors
/// Not a number, or outside (0, 1].
pub fn parse_tau(s: &str) -> Result<f64, String> {
    let t = number(s)?;
    if t > 0.0 && t <= 1.0 {
        Ok(t)
    } else {
        Err(format!("τ must be in (0, 1], got {s}"))
    }
}

/// A success threshold (pass@k): any finite number, since an imported reward may have any
/// scale.
///
/// # Errors
/// Not a number, or not finite.
pub fn parse_threshold(s: &str) -> Result<f64, String> {
    let t = number(s)?;
    if t.is_finite() {
        Ok(t)
    } else {
        Err(format!("the threshold must be finite, got {s}"))
    }
}

/// Bootstrap replicates B, 1 to [`MAX_RESAMPLES`].
///
/// # Errors
/// Not a whole number, or out of range.
pub fn parse_resamples(s: &str) -> Result<usize, String> {
    let b: usize = (s.trim().parse()).map_err(|_| format!("`{s}` is not a whole number"))?;
    if (1..=MAX_RESAMPLES).contains(&b) {
        Ok(b)
    } else {
        Err(format!("B must be in 1..={MAX_RESAMPLES}, got {s}"))
    }
}

fn number(s: &str) -> Result<f64, String> {
    (s.trim().parse()).map_err(|_| format!("`{s}` is not a number"))
}

/// Report settings chosen on the command line.
///
/// Exists so the computation receives one value with every parameter its numbers depend on.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Metric.
    pub metric: Metric,
    /// CVaR α.
    pub alpha: f64,
    /// Reliability thresholds.
    pub taus: Vec<f64>,
    /// Bootstrap seed.
    pub seed: u64,
    /// Bootstrap replicates.
    pub resamples: usize,
    /// pass@k / pass^k success threshold: a trial succeeds when its metric is ≥ this.
    pub pass_threshold: f64,
    /// Prices for the cost section (the shipped table, and the user's file if given).
    pub prices: crate::cost::PriceTable,
}

impl Options {
    /// The defaults of `benchaudit report` on `metric`: CVaR@0.2, Reliability@0.9 and @0.5,
    /// bootstrap seed 0, B = 2000, pass threshold 1 (F1 = 1), the shipped price table.
    pub fn new(metric: Metric) -> Self {
        Options {
            metric,
            alpha: benchaudit_stats::DEFAULT_ALPHA,
            taus: benchaudit_stats::DEFAULT_TAUS.to_vec(),
            seed: 0,
            resamples: benchaudit_stats::DEFAULT_RESAMPLES,
            pass_threshold: benchaudit_stats::DEFAULT_PASS_THRESHOLD,
            // The shipped table is checked by a test; were it damaged, costs show as unknown.
            prices: crate::cost::PriceTable::shipped()
                .unwrap_or_else(|_| crate::cost::PriceTable::empty()),
        }
    }

    pub(super) fn summary_config(&self) -> SummaryConfig {
        SummaryConfig {
            alpha: self.alpha,
            taus: self.taus.clone(),
            seed: self.seed,
            resamples: self.resamples,
            ..SummaryConfig::default()
        }
    }

    pub(super) fn paired_config(&self) -> PairedConfig {
        PairedConfig {
            seed: self.seed,
            resamples: self.resamples,
            ..PairedConfig::default()
        }
    }

    pub(super) fn settings(&self) -> Settings {
        let s = self.summary_config();
        Settings {
            metric: self.metric,
            metric_label: self.metric.label().to_string(),
            alpha: self.alpha,
            taus: self.taus.clone(),
            seed: self.seed,
            resamples: self.resamples,
            level: s.level,
            permutation_samples: self.paired_config().permutation_samples,
            judge_scale: JUDGE_SCALE,
        }
    }
}

/// Whether labels must show the options hash: only when some (policy, level, arm, setting) occurs
/// under several option sets (a stress arm changes the options, so arms alone differ in hash).
fn hash_needed<'a>(conditions: impl IntoIterator<Item = &'a Condition>) -> bool {
    type Key<'a> = (&'a str, Level, Option<&'a str>, Option<ArmSetting>);
    let mut seen: BTreeMap<Key<'_>, &str> = BTreeMap::new();
    for c in conditions {
        let key = (c.policy.as_str(), c.level, c.arm.as_deref(), c.setting);
        if seen
            .insert(key, c.options_hash.as_str())
            .is_some_and(|h| h != c.options_hash)
        {
            return true;
        }
    }
    false
}

/// The display label of a condition: the policy, its arm in brackets (with its quota and
/// slack for the arms of an `ab` run, as `ab` prints them), and the options hash when the same
/// (policy, level, arm, setting) occurs under several option sets.
pub(super) fn label(c: &Condition, show_hash: bool) -> String {
    let mut s = c.policy.clone();
    match (&c.arm, c.setting) {
        (Some(arm), Some(setting)) => s.push_str(&format!(" [{arm}; {}]", setting.label())),
        (Some(arm), None) => s.push_str(&format!(" [{arm}]")),
        (None, _) => {}
    }
    if show_hash {
        s.push_str(&format!(" #{}", c.options_hash));
    }
    s
}

/// The condition of an episode group (a group is a condition and a task).
pub(super) fn condition(g: &Group, arms: &ArmMap) -> Condition {
    Condition {
        policy: g.policy.clone(),
        level: g.level,
        arm: g.arm.clone(),
        options_hash: g.options_hash.clone(),
        setting: arms.get(&g.options_hash).copied(),
    }
}

/// A run's usable episodes: the condition of each group, and (group, seed, value) for every
/// episode with the metric.
pub(super) struct Observed {
    /// By group index ([`Loaded::groups`]).
    pub conditions: Vec<Condition>,
    /// (group, seed, metric value).
    pub values: Vec<(usize, u64, f64)>,
}

impl Observed {
    /// condition → task → seed → value.
    pub fn grid(&self, loaded: &Loaded) -> Grid {
        let mut grid: Grid = BTreeMap::new();
        for &(g, seed, v) in &self.values {
            let c = &self.conditions[g];
            if !grid.contains_key(c) {
                grid.insert(c.clone(), TaskSeeds::new());
            }
            let tasks = grid.get_mut(c).expect("inserted above");
            let task = &loaded.groups[g].task_id;
            if !tasks.contains_key(task) {
                tasks.insert(task.clone(), BTreeMap::new());
            }
            tasks.get_mut(task).expect("inserted above").insert(seed, v);
        }
        grid
    }
}

/// Splits a run's episodes into usable observations and exclusions.
pub(super) fn observations(
    loaded: &Loaded,
    metric: Metric,
) -> (Observed, RecordTally, Vec<Excluded>) {
    let conditions: Vec<Condition> = loaded
        .groups
        .iter()
        .map(|g| condition(g, &loaded.arm_settings))
        .collect();
    let mut values = Vec::new();
    let mut excluded = Vec::new();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let (mut infra, mut missing) = (0, 0);
    for e in &loaded.episodes {
        let outcome = serde_json::to_value(e.outcome)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        *outcomes.entry(outcome).or_default() += 1;
        let reason = if e.outcome == Outcome::InfraError {
            infra += 1;
            Some("infra_error")
        } else if let Some(v) = e.metric(metric) {
            values.push((e.group, e.seed, v));
            None
        } else {
            missing += 1;
            Some("missing_metric")
        };
        if let Some(reason) = reason {
            let g = loaded.group(e);
            excluded.push(Excluded {
                policy: g.policy.clone(),
                level: g.level,
                task_id: g.task_id.clone(),
                seed: e.seed,
                arm: g.arm.clone(),
                reason: reason.to_string(),
                error: e.error.clone(),
            });
        }
    }
    let counts = RecordTally {
        total: loaded.episodes.len(),
        used: values.len(),
        infra_errors: infra,
        missing_metric: missing,
        outcomes,
    };
    (Observed { conditions, values }, counts, excluded)
}

/// Computes every statistic of a run report except the figure list.
///
/// Exists as the pure core of `benchaudit report RUN_DIR`.
///
/// # Errors
/// [`Error::Invalid`] when no episode has the chosen metric or a setting is invalid (bad
/// α/τ); a statistics error otherwise.
pub fn run_stats(loaded: &Loaded, opts: &Options) -> Result<RunStats> {
    let arms = &loaded.arm_settings;
    let (obs, episodes, excluded) = observations(loaded, opts.metric);
    if obs.values.is_empty() {
        return Err(Error::Invalid(format!(
            "no episode in {} has the metric `{}` ({} infra errors, {} without it){}",
            loaded.source.run_dir,
            opts.metric.flag(),
            episodes.infra_errors,
            episodes.missing_metric,
            if opts.metric == Metric::Coverage {
                "; coverage is recorded at L0 and L1 only"
            } else {
                ""
            }
        )));
    }
    let config = opts.summary_config();
    // condition → task → seed → value (BTreeMaps give the documented orders).
    let grid = obs.grid(loaded);
    let show_hash = hash_needed(grid.keys());

    let mut cells = Vec::new();
    let mut pooled = Vec::new();
    for (c, tasks) in &grid {
        let lbl = label(c, show_hash);
        let mut all = Vec::new();
        let mut strata = Vec::new();
        let mut in_order: Vec<_> = tasks.iter().collect();
        in_order.sort_by(|a, b| crate::order::natural(a.0, b.0));
        for (task, seeds) in in_order {
            let values: Vec<f64> = seeds.values().copied().collect();
            let what = format!("{lbl} {} {task}", c.level);
            let summary = summarize(&values, &config)
                .map_err(stats(&what))
                .map_err(usage_if_setting(opts))?;
            cells.push(CellStats {
                condition: c.clone(),
                label: lbl.clone(),
                task_id: task.clone(),
                shortfall: shortfall(&values, &values).map_err(stats(&what))?,
                five: five_numbers(&values).map_err(stats(&what))?,
                summary,
                values: seeds
                    .iter()
                    .map(|(&seed, &value)| SeedValue { seed, value })
                    .collect(),
            });
            all.extend(values.iter().copied());
            strata.push(values);
        }
        let what = format!("{lbl} {}", c.level);
        pooled.push(PooledStats {
            condition: c.clone(),
            label: lbl.clone(),
            tasks: tasks.len(),
            summary: pooled_summary(&all, &strata, &config)
                .map_err(stats(&what))
                .map_err(usage_if_setting(opts))?,
            five: five_numbers(&all).map_err(stats(&what))?,
            shortfall: shortfall(&all, &all).map_err(stats(&what))?,
        });
    }

    // Groups with a usable episode, then what they hold.
    let used: BTreeSet<usize> = obs.values.iter().map(|o| o.0).collect();
    let used_groups = || used.iter().map(|&g| &loaded.groups[g]);
    let levels: Vec<Level> = used_groups()
        .map(|g| g.level)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut tasks: Vec<String> = used_groups()
        .map(|g| g.task_id.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    tasks.sort_by(|a, b| crate::order::natural(a, b));
    let policies: Vec<String> = used_groups()
        .map(|g| g.policy.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let seeds: Vec<u64> = obs
        .values
        .iter()
        .map(|o| o.1)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let level_shortfalls = levels::level_shortfalls(&grid, show_hash)?;
    let scorers = levels::scorer_contrast(loaded, &obs.conditions, show_hash)?;
    let joint = joint(loaded, arms, show_hash);
    let ab = paired::ab_section(&grid, opts, show_hash)?;
    let degradation = curves::curves(&grid, opts)?;
    let pass_k = extras::pass_k(&grid, opts, show_hash)?;
    let cost = extras::cost(loaded, &obs.conditions, &grid, opts, show_hash);
    Ok(RunStats {
        schema: SCHEMA.to_string(),
        kind: "run".to_string(),
        tool: tool(),
        source: loaded.source.clone(),
        settings: opts.settings(),
        episodes,
        excluded,
        levels,
        policy_count: policies.len(),
        task_count: tasks.len(),
        seed_count: seeds.len(),
        tasks,
        policies,
        seeds,
        conditions: grid.len(),
        cells,
        pooled,
        level_shortfalls,
        scorers,
        joint,
        ab,
        degradation,
        pass_k,
        cost,
        figures: Vec::new(),
    })
}

/// The worst-case shortfall: the mean of `mean_values` minus the worst of `worst_values`.
pub(super) fn shortfall(
    mean_values: &[f64],
    worst_values: &[f64],
) -> benchaudit_stats::Result<Shortfall> {
    let (m, w) = (mean(mean_values)?, worst(worst_values)?);
    Ok(Shortfall {
        mean: m,
        worst: w,
        shortfall: m - w,
    })
}

/// The summary of a pooled row: the statistics of all its episodes (`all`, the concatenation
/// of `strata` in task order), with the mean's CI from the stratified bootstrap (seeds
/// resampled within each task, [`stratified_bootstrap_mean_ci`]) instead of one bag.
pub(super) fn pooled_summary(
    all: &[f64],
    strata: &[Vec<f64>],
    config: &SummaryConfig,
) -> benchaudit_stats::Result<benchaudit_stats::Summary> {
    benchaudit_stats::summarize_stratified(all, strata, config)
}

/// Bad α or τ values are the user's: report them as usage errors (exit 2).
fn usage_if_setting(opts: &Options) -> impl Fn(Error) -> Error + '_ {
    move |e| {
        let bad_alpha = !(opts.alpha > 0.0 && opts.alpha <= 1.0);
        let bad_tau = opts.taus.iter().any(|t| !t.is_finite());
        match e {
            Error::Stats { what, source } if bad_alpha || bad_tau || opts.resamples == 0 => {
                Error::Invalid(format!("{what}: {source}"))
            }
            e => e,
        }
    }
}

/// The 2×2, as the audit computes it, with rows best first in the repaired cell (L2 × ground
/// truth), as in the spectrum.
fn joint(
    loaded: &Loaded,
    arms: &ArmMap,
    show_hash: bool,
) -> Option<benchaudit_audit::joint::Joint> {
    let label_of = |policy: &str, arm: Option<&str>, options_hash: &str| {
        let c = Condition {
            policy: policy.to_string(),
            level: Level::L0,
            arm: arm.map(str::to_string),
            options_hash: options_hash.to_string(),
            setting: arms.get(options_hash).copied(),
        };
        label(&c, show_hash)
    };
    let episodes = loaded.episodes.iter().map(|e| {
        let g = loaded.group(e);
        benchaudit_audit::joint::JointEpisode {
            policy: &g.policy,
            level: g.level,
            task_id: &g.task_id,
            seed: e.seed,
            arm: g.arm.as_deref(),
            options_hash: &g.options_hash,
            outcome: e.outcome,
            scores: e.scores,
            payload_sha256: e.payload_sha256.as_deref(),
        }
    });
    let mut joint = benchaudit_audit::joint::compute_from(episodes, &label_of)?;
    joint.rows.sort_by(|a, b| {
        // Rows with data first (best first), rows without data last.
        let key = |r: &benchaudit_audit::joint::JointRow| r.l2_truth.unwrap_or(f64::NEG_INFINITY);
        key(b)
            .total_cmp(&key(a))
            .then_with(|| a.label.cmp(&b.label))
    });
    Some(joint)
}

pub(super) fn tool() -> Tool {
    Tool {
        name: "benchaudit".to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// Options hash → the quota setting of an `ab` run's arm ([`Loaded::arm_settings`]).
pub(super) type ArmMap = BTreeMap<String, ArmSetting>;
/// (policy, arm, options hash): a condition without its level.
pub(super) type Family = (String, Option<String>, String);
/// (policy, level, arm or qualifier, task): one paired table row.
pub(super) type PairKey = (String, Level, Option<String>, String);
/// Paired values per row: seed → (first, second).
pub(super) type Pairs = BTreeMap<PairKey, BTreeMap<u64, (f64, f64)>>;
/// Dose arms of one (policy, level): (dose, condition, values).
pub(super) type Doses<'a> = Vec<(f64, &'a Condition, &'a TaskSeeds)>;
/// task → seed → value.
pub(super) type TaskSeeds = BTreeMap<String, BTreeMap<u64, f64>>;
/// condition → task → seed → value.
pub(super) type Grid = BTreeMap<Condition, TaskSeeds>;
