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
//! intervention is the audit's one computation ([`benchaudit_audit::joint::compute_grouped`]).

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
use crate::load::{Group, GroupEpisodes, Loaded, PayloadKey};
use crate::model::{
    CellStats, Condition, Excluded, Metric, PooledStats, RecordTally, RunStats, SCHEMA, SeedValues,
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

/// A run's usable episodes: the condition of each group, and the (seed, value) of every
/// episode of it with the metric.
pub(super) struct Observed {
    /// By group index ([`Loaded::groups`]).
    pub conditions: Vec<Condition>,
    /// By group index: its episodes with the metric, by seed.
    pub values: Vec<SeedValues>,
}

impl Observed {
    /// Episodes with the metric.
    pub fn used(&self) -> usize {
        self.values.iter().map(SeedValues::len).sum()
    }

    /// The groups with an episode with the metric.
    pub fn used_groups(&self) -> impl Iterator<Item = usize> + '_ {
        (self.values.iter().enumerate())
            .filter(|(_, v)| !v.is_empty())
            .map(|(g, _)| g)
    }

    /// condition → task → seed → value, the values moved in.
    pub fn into_grid(self, groups: &[Group]) -> Grid {
        let mut grid: Grid = BTreeMap::new();
        for ((c, values), g) in self.conditions.into_iter().zip(self.values).zip(groups) {
            if !values.is_empty() {
                grid.entry(c).or_default().insert(g.task_id.clone(), values);
            }
        }
        grid
    }
}

/// Splits a run's episodes into usable observations and exclusions (listed in ledger order).
pub(super) fn observations(
    loaded: &Loaded,
    metric: Metric,
) -> (Observed, RecordTally, Vec<Excluded>) {
    let conditions: Vec<Condition> = loaded
        .groups
        .iter()
        .map(|g| condition(g, &loaded.arm_settings))
        .collect();
    let mut values = Vec::with_capacity(loaded.groups.len());
    // (line, group, episode, reason) of each excluded episode.
    let mut left_out: Vec<(u32, usize, usize, &str)> = Vec::new();
    let mut by_outcome: Vec<(Outcome, usize)> = Vec::new();
    let (mut infra, mut missing, mut used) = (0, 0, 0);
    for (g, e) in loaded.episodes.iter().enumerate() {
        let mut kept = SeedValues::with_capacity(e.len());
        for i in 0..e.len() {
            let outcome = e.outcome(i);
            match by_outcome.iter_mut().find(|(o, _)| *o == outcome) {
                Some((_, n)) => *n += 1,
                None => by_outcome.push((outcome, 1)),
            }
            if outcome == Outcome::InfraError {
                infra += 1;
                left_out.push((e.line(i), g, i, "infra_error"));
            } else if let Some(v) = e.metric(i, metric) {
                kept.push(e.seeds()[i], v);
                used += 1;
            } else {
                missing += 1;
                left_out.push((e.line(i), g, i, "missing_metric"));
            }
        }
        kept.shrink_to_fit();
        values.push(kept);
    }
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    for (outcome, n) in by_outcome {
        let name = serde_json::to_value(outcome)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        *outcomes.entry(name).or_default() += n;
    }
    left_out.sort_by_key(|&(line, ..)| line);
    let excluded = left_out
        .into_iter()
        .map(|(line, g, i, reason)| {
            let group = &loaded.groups[g];
            Excluded {
                policy: group.policy.clone(),
                level: group.level,
                task_id: group.task_id.clone(),
                seed: loaded.episodes[g].seeds()[i],
                arm: group.arm.clone(),
                reason: reason.to_string(),
                error: loaded.error_at(line).map(str::to_string),
            }
        })
        .collect();
    let counts = RecordTally {
        total: loaded.episode_count(),
        used,
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
pub fn run_stats(mut loaded: Loaded, opts: &Options) -> Result<RunStats> {
    loaded.keep_for(opts.metric);
    // The labels show options hashes when the conditions with the metric need them.
    let conditions: Vec<Condition> = (loaded.groups.iter())
        .map(|g| condition(g, &loaded.arm_settings))
        .collect();
    let with_metric =
        (loaded.episodes.iter()).map(|e| (0..e.len()).any(|i| e.metric(i, opts.metric).is_some()));
    let show_hash = hash_needed(
        conditions
            .iter()
            .zip(with_metric)
            .filter_map(|(c, any)| any.then_some(c)),
    );
    // What reads the episodes' scores, payloads and tokens, before the payloads are dropped;
    // then the values the statistics resample are taken and the episodes dropped.
    let scorers = levels::scorer_contrast(&loaded, &conditions, show_hash)?;
    let joint = joint(&loaded, &loaded.arm_settings, show_hash);
    let tokens = extras::tokens(&loaded, &conditions, opts.metric);
    drop(conditions);
    loaded.drop_payloads();
    let (obs, episodes, excluded) = observations(&loaded, opts.metric);
    if obs.used() == 0 {
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

    // Groups with a usable episode, then what they hold.
    let used_groups = || obs.used_groups().map(|g| &loaded.groups[g]);
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
    // Inserted one by one: collecting a set would first gather every episode's seed.
    let mut seeds = BTreeSet::new();
    for s in obs.values.iter().flat_map(SeedValues::keys) {
        seeds.insert(s);
    }
    let seeds: Vec<u64> = seeds.into_iter().collect();
    let source = loaded.source.clone();
    let groups = std::mem::take(&mut loaded.groups);
    drop(loaded);
    // condition → task → seed → value (BTreeMaps give the documented orders).
    let grid = obs.into_grid(&groups);
    drop(groups);

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
                // Moved in from the grid once every section has read it.
                values: SeedValues::default(),
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

    let level_shortfalls = levels::level_shortfalls(&grid, show_hash)?;
    let ab = paired::ab_section(&grid, opts, show_hash)?;
    let degradation = curves::curves(&grid, opts)?;
    let pass_k = extras::pass_k(&grid, opts, show_hash)?;
    let cost = extras::cost(tokens, &grid, opts, show_hash);
    let conditions = grid.len();
    // Each cell's values, from the grid, in the order the cells were made.
    let mut unfilled = cells.iter_mut();
    for (_, tasks) in grid {
        let mut in_order: Vec<(String, SeedValues)> = tasks.into_iter().collect();
        in_order.sort_by(|a, b| crate::order::natural(&a.0, &b.0));
        for ((_, values), cell) in in_order.into_iter().zip(unfilled.by_ref()) {
            cell.values = values;
        }
    }
    Ok(RunStats {
        schema: SCHEMA.to_string(),
        kind: "run".to_string(),
        tool: tool(),
        source,
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
        conditions,
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

/// A group's episodes as the 2×2 reads them, from the columns.
struct Scored<'a>(&'a GroupEpisodes);

impl benchaudit_audit::joint::ScoredEpisodes for Scored<'_> {
    type Payload = PayloadKey;
    fn scored(
        &self,
    ) -> impl Iterator<Item = benchaudit_audit::joint::JointScored<Option<PayloadKey>>> + '_ {
        let e = self.0;
        (0..e.len()).filter_map(move |i| {
            let s =
                benchaudit_audit::joint::JointScored::of(e.outcome(i), e.scores(i), e.payload(i))?;
            Some(benchaudit_audit::joint::JointScored {
                seed: e.seeds()[i],
                ..s
            })
        })
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
    use benchaudit_audit::joint::JointGroup;
    let groups: Vec<JointGroup<'_, Scored<'_>>> = (loaded.groups.iter())
        .zip(&loaded.episodes)
        .filter(|(g, _)| matches!(g.level, Level::L0 | Level::L2))
        .map(|(g, e)| JointGroup {
            policy: &g.policy,
            level: g.level,
            task_id: &g.task_id,
            arm: g.arm.as_deref(),
            options_hash: &g.options_hash,
            // Players are in the order of their first episode in the ledger.
            first: (0..e.len()).map(|i| e.line(i)).min().unwrap_or(u32::MAX) as usize,
            scored: Scored(e),
        })
        .collect();
    let mut joint = benchaudit_audit::joint::compute_grouped(&groups, &label_of)?;
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
pub(super) type TaskSeeds = BTreeMap<String, SeedValues>;
/// condition → task → seed → value.
pub(super) type Grid = BTreeMap<Condition, TaskSeeds>;
