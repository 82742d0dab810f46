//! From ledger records to the numbers of `stats.json`.
//!
//! Exists to keep every statistical decision of a report in one pure, tested place:
//!
//! * **Value order.** The bootstrap resamples positions, so its CI depends on the order the
//!   values are handed over. A cell's values are in ascending seed order; a pooled row's in
//!   ascending (task, seed) order. A reader recomputing a CI must use the same order.
//! * **Exclusions.** Infra-error episodes and episodes without the chosen metric are left
//!   out and listed; nothing else is.
//! * **Reliability gap** (SPEC §7, "static mean − hardest-level worst case"). Every row of a
//!   table is one condition at one level, so its static and hardest sets coincide and the gap
//!   is the row's mean minus its worst case (the paper's "mean–worst gap", Figure A9). For a
//!   policy run at several scaffolding levels, [`LevelGap`] is the mean at the most scaffolded
//!   level present (L0 before L1 before L2) minus the worst case at the least scaffolded one,
//!   per task and pooled. For numeric dose arms the curve's gap is the mean at the lowest dose
//!   minus the worst case at the highest dose.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::Context;
use benchaudit_agents::{EpisodeRecord, Level, Outcome};
use benchaudit_stats::{
    PairedComparison, PairedConfig, SummaryConfig, compare_paired, degradation_curve, holm_adjust,
    mean, reliability_gap, summarize,
};

use super::model::{
    CellSpread, CellStats, CompareStats, Condition, CurveStats, DoseSeed, EpisodeCounts, Excluded,
    FiveNumbers, JointRow, JointSection, LevelGap, Metric, PairedRow, PairedSection, PooledStats,
    RunStats, SCHEMA, ScorerContrast, SeedValue, Settings, Source, Tool,
};
use crate::UsageError;
use crate::ledger::{Manifest, read_records};

/// Points of a perfect judge total; the judge metric is `judge_total / JUDGE_SCALE`.
pub const JUDGE_SCALE: f64 = 100.0;

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
}

impl Options {
    fn summary_config(&self) -> SummaryConfig {
        SummaryConfig {
            alpha: self.alpha,
            taus: self.taus.clone(),
            seed: self.seed,
            resamples: self.resamples,
            ..SummaryConfig::default()
        }
    }

    fn paired_config(&self) -> PairedConfig {
        PairedConfig {
            seed: self.seed,
            resamples: self.resamples,
            ..PairedConfig::default()
        }
    }

    fn settings(&self) -> Settings {
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

/// A run directory's records and provenance.
///
/// Exists so loading (IO, validation) is separate from computing (pure).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Every complete record of the ledger.
    pub records: Vec<EpisodeRecord>,
    /// Provenance.
    pub source: Source,
}

/// Reads a run directory: `episodes.jsonl` (a torn last line is skipped and noted) and, when
/// present, `manifest.json`.
///
/// Exists as the one place that decides what a readable run is.
///
/// # Errors
/// [`UsageError`] when the directory, the ledger or the manifest is missing or unreadable,
/// the ledger is empty, or an episode key appears twice.
pub fn load_run(dir: &Path) -> anyhow::Result<Loaded> {
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "{} is not a directory (give a run directory written by `benchaudit run`)",
            dir.display()
        ))
        .into());
    }
    let episodes = dir.join("episodes.jsonl");
    if !episodes.is_file() {
        return Err(UsageError(format!(
            "{} has no episodes.jsonl: not a run directory",
            dir.display()
        ))
        .into());
    }
    let (records, torn) = read_records(&episodes).map_err(|e| UsageError(format!("{e:#}")))?;
    if records.is_empty() {
        return Err(UsageError(format!(
            "{} holds no complete episode record",
            episodes.display()
        ))
        .into());
    }
    let mut seen = BTreeSet::new();
    for r in &records {
        if !seen.insert(&r.key) {
            return Err(UsageError(format!(
                "{}: episode {} {} {} seed {} appears twice; the ledger is corrupt",
                episodes.display(),
                r.key.policy,
                r.key.level,
                r.key.task_id,
                r.key.seed
            ))
            .into());
        }
    }
    let manifest_path = dir.join("manifest.json");
    let manifest: Option<Manifest> = if manifest_path.is_file() {
        let bytes = std::fs::read(&manifest_path)
            .with_context(|| format!("reading {}", manifest_path.display()))?;
        Some(serde_json::from_slice(&bytes).map_err(|e| {
            UsageError(format!(
                "{} is not a benchaudit manifest: {e}",
                manifest_path.display()
            ))
        })?)
    } else {
        None
    };
    Ok(Loaded {
        records,
        source: Source {
            run_dir: dir.display().to_string(),
            episodes_file: episodes.display().to_string(),
            run_tool_version: manifest.as_ref().map(|m| m.version.clone()),
            registry_sha256: manifest.map(|m| m.registry_sha256),
            torn_last_line: torn.is_some(),
        },
    })
}

/// The chosen metric of one record, if it has one.
///
/// Exists as the single definition of each metric's per-episode value.
#[must_use]
pub fn metric_value(record: &EpisodeRecord, metric: Metric) -> Option<f64> {
    let v = match metric {
        Metric::F1 => record.scores.as_ref().map(|s| s.f1),
        Metric::Judge => record.scores.as_ref().map(|s| s.judge_total / JUDGE_SCALE),
        Metric::Coverage => record.coverage,
    };
    v.filter(|x| x.is_finite())
}

/// Quantile `p` of ascending `sorted` values, Hyndman–Fan type 7 (linear interpolation at
/// position `(n − 1)·p`). `sorted` must be non-empty.
fn quantile(sorted: &[f64], p: f64) -> f64 {
    let last = sorted.len().saturating_sub(1);
    let h = last as f64 * p;
    let lo = (h.floor() as usize).min(last);
    let hi = (h.ceil() as usize).min(last);
    let (a, b) = (sorted[lo], sorted[hi]);
    (a + (h - lo as f64) * (b - a)).clamp(a.min(b), a.max(b))
}

/// Minimum, quartiles (type 7) and maximum of non-empty `values`.
///
/// Exists so the spectrum's boxes are defined once and stored in the JSON.
#[must_use]
pub fn five_numbers(values: &[f64]) -> FiveNumbers {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return FiveNumbers {
            min: 0.0,
            q1: 0.0,
            median: 0.0,
            q3: 0.0,
            max: 0.0,
        };
    }
    FiveNumbers {
        min: sorted[0],
        q1: quantile(&sorted, 0.25),
        median: quantile(&sorted, 0.5),
        q3: quantile(&sorted, 0.75),
        max: sorted[sorted.len() - 1],
    }
}

/// Whether labels must show the options hash: only when some (policy, level, arm) occurs
/// under several option sets (a stress arm changes the options, so arms alone differ in hash).
fn hash_needed<'a>(conditions: impl IntoIterator<Item = &'a Condition>) -> bool {
    let mut seen: BTreeMap<(&str, Level, Option<&str>), &str> = BTreeMap::new();
    for c in conditions {
        let key = (c.policy.as_str(), c.level, c.arm.as_deref());
        if seen
            .insert(key, c.options_hash.as_str())
            .is_some_and(|h| h != c.options_hash)
        {
            return true;
        }
    }
    false
}

/// The display label of a condition: the policy, its arm in brackets, and the options hash
/// when the same (policy, level, arm) occurs under several option sets.
fn label(c: &Condition, show_hash: bool) -> String {
    let mut s = c.policy.clone();
    if let Some(arm) = &c.arm {
        s.push_str(&format!(" [{arm}]"));
    }
    if show_hash {
        s.push_str(&format!(" #{}", c.options_hash));
    }
    s
}

fn condition(r: &EpisodeRecord) -> Condition {
    Condition {
        policy: r.key.policy.clone(),
        level: r.key.level,
        arm: r.key.arm.clone(),
        options_hash: r.key.options_hash.clone(),
    }
}

/// A numeric dose in an arm label: `constant@0.5000` (a constant-stress arm, as `benchaudit
/// ab` records it), `dose=0.5`, `dose:0.5` or `0.5`.
#[must_use]
pub fn arm_dose(arm: &str) -> Option<f64> {
    let t = arm.trim();
    let t = ["constant@", "dose=", "dose:"]
        .iter()
        .find_map(|p| t.strip_prefix(p))
        .unwrap_or(t);
    t.parse::<f64>().ok().filter(|d| d.is_finite())
}

/// The side of a constant-vs-escalating A/B design an arm label belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Constant,
    Escalating,
}

fn arm_side(arm: Option<&str>) -> Option<Side> {
    let a = arm?.trim().to_ascii_lowercase();
    if a == "escalating" {
        Some(Side::Escalating)
    } else if a == "constant" || a.starts_with("constant@") {
        Some(Side::Constant)
    } else {
        None
    }
}

fn stats_err(what: &str, e: benchaudit_stats::StatsError) -> anyhow::Error {
    anyhow::anyhow!("{what}: {e}")
}

/// Splits records into usable (condition, task, seed, value) observations and exclusions.
fn observations(
    records: &[EpisodeRecord],
    metric: Metric,
) -> (Vec<Observation>, EpisodeCounts, Vec<Excluded>) {
    let mut obs = Vec::new();
    let mut excluded = Vec::new();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let (mut infra, mut missing) = (0, 0);
    for r in records {
        let outcome = serde_json::to_value(r.outcome)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        *outcomes.entry(outcome).or_default() += 1;
        let reason = if r.outcome == Outcome::InfraError {
            infra += 1;
            Some("infra_error")
        } else if let Some(v) = metric_value(r, metric) {
            obs.push((condition(r), r.key.task_id.clone(), r.key.seed, v));
            None
        } else {
            missing += 1;
            Some("missing_metric")
        };
        if let Some(reason) = reason {
            excluded.push(Excluded {
                policy: r.key.policy.clone(),
                level: r.key.level,
                task_id: r.key.task_id.clone(),
                seed: r.key.seed,
                arm: r.key.arm.clone(),
                reason: reason.to_string(),
                error: r.error.clone(),
            });
        }
    }
    let counts = EpisodeCounts {
        total: records.len(),
        used: obs.len(),
        infra_errors: infra,
        missing_metric: missing,
        outcomes,
    };
    (obs, counts, excluded)
}

/// Computes every statistic of a run report except the figure list.
///
/// Exists as the pure core of `benchaudit report RUN_DIR`.
///
/// # Errors
/// [`UsageError`] when no episode has the chosen metric or a setting is invalid (bad α/τ);
/// a statistics error otherwise.
pub fn run_stats(loaded: &Loaded, opts: &Options) -> anyhow::Result<RunStats> {
    let (obs, episodes, excluded) = observations(&loaded.records, opts.metric);
    if obs.is_empty() {
        return Err(UsageError(format!(
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
        ))
        .into());
    }
    let config = opts.summary_config();
    // condition → task → seed → value (BTreeMaps give the documented orders).
    let mut grid: Grid = BTreeMap::new();
    for (c, task, seed, v) in &obs {
        grid.entry(c.clone())
            .or_default()
            .entry(task.clone())
            .or_default()
            .insert(*seed, *v);
    }
    let show_hash = hash_needed(grid.keys());

    let mut cells = Vec::new();
    let mut pooled = Vec::new();
    for (c, tasks) in &grid {
        let lbl = label(c, show_hash);
        let mut all = Vec::new();
        for (task, seeds) in tasks {
            let values: Vec<f64> = seeds.values().copied().collect();
            let what = format!("{lbl} {} {task}", c.level);
            let summary = summarize(&values, &config)
                .map_err(|e| stats_err(&what, e))
                .map_err(usage_if_setting(opts))?;
            cells.push(CellStats {
                condition: c.clone(),
                label: lbl.clone(),
                task_id: task.clone(),
                gap: reliability_gap(&values, &values).map_err(|e| stats_err(&what, e))?,
                five: five_numbers(&values),
                summary,
                values: seeds
                    .iter()
                    .map(|(&seed, &value)| SeedValue { seed, value })
                    .collect(),
            });
            all.extend(values);
        }
        let what = format!("{lbl} {}", c.level);
        pooled.push(PooledStats {
            condition: c.clone(),
            label: lbl.clone(),
            tasks: tasks.len(),
            summary: summarize(&all, &config)
                .map_err(|e| stats_err(&what, e))
                .map_err(usage_if_setting(opts))?,
            five: five_numbers(&all),
            gap: reliability_gap(&all, &all).map_err(|e| stats_err(&what, e))?,
        });
    }

    let levels: Vec<Level> = obs
        .iter()
        .map(|o| o.0.level)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let tasks: Vec<String> = obs
        .iter()
        .map(|o| o.1.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let policies: Vec<String> = obs
        .iter()
        .map(|o| o.0.policy.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let seeds: Vec<u64> = obs
        .iter()
        .map(|o| o.2)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let level_gaps = level_gaps(&grid, show_hash)?;
    let scorers = scorer_contrast(&loaded.records, show_hash)?;
    let joint = joint_section(&loaded.records, show_hash)?;
    let ab = ab_section(&grid, opts, show_hash)?;
    let degradation = curves(&grid, opts)?;
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
        level_gaps,
        scorers,
        joint,
        ab,
        degradation,
        figures: Vec::new(),
    })
}

/// Bad α or τ values are the user's: report them as usage errors (exit 2).
fn usage_if_setting(opts: &Options) -> impl Fn(anyhow::Error) -> anyhow::Error + '_ {
    move |e| {
        let bad_alpha = !(opts.alpha > 0.0 && opts.alpha <= 1.0);
        let bad_tau = opts.taus.iter().any(|t| !t.is_finite());
        if bad_alpha || bad_tau || opts.resamples == 0 {
            UsageError(format!("{e}")).into()
        } else {
            e
        }
    }
}

fn tool() -> Tool {
    Tool {
        name: "benchaudit".to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// One usable episode: (condition, task, seed, metric value).
type Observation = (Condition, String, u64, f64);
/// (policy, arm, options hash): a condition without its level.
type Family = (String, Option<String>, String);
/// (judge / 100, F1) of one episode.
type Scored = (f64, f64);
/// An episode's scores at L0 and at L2.
type Shared = (Scored, Scored);
/// (policy, level, arm or qualifier, task): one paired table row.
type PairKey = (String, Level, Option<String>, String);
/// Paired values per row: seed → (first, second).
type Pairs = BTreeMap<PairKey, BTreeMap<u64, (f64, f64)>>;
/// Dose arms of one (policy, level): (dose, condition, values).
type Doses<'a> = Vec<(f64, &'a Condition, &'a TaskSeeds)>;
/// task → seed → value.
type TaskSeeds = BTreeMap<String, BTreeMap<u64, f64>>;
/// condition → task → seed → value.
type Grid = BTreeMap<Condition, TaskSeeds>;

/// Across-level gaps per (policy, arm, options) family present at two or more levels.
fn level_gaps(grid: &Grid, show_hash: bool) -> anyhow::Result<Vec<LevelGap>> {
    let mut families: BTreeMap<Family, BTreeMap<Level, &TaskSeeds>> = BTreeMap::new();
    for (c, tasks) in grid {
        families
            .entry((c.policy.clone(), c.arm.clone(), c.options_hash.clone()))
            .or_default()
            .insert(c.level, tasks);
    }
    let mut out = Vec::new();
    for ((policy, arm, options_hash), by_level) in families {
        let (Some((&static_level, easy)), Some((&hardest_level, hard))) =
            (by_level.first_key_value(), by_level.last_key_value())
        else {
            continue;
        };
        if static_level == hardest_level {
            continue;
        }
        let cond = Condition {
            policy: policy.clone(),
            level: static_level,
            arm: arm.clone(),
            options_hash: options_hash.clone(),
        };
        let lbl = label(&cond, show_hash);
        let flat = |t: &BTreeMap<String, BTreeMap<u64, f64>>| {
            t.values()
                .flat_map(|s| s.values().copied())
                .collect::<Vec<_>>()
        };
        let gap = reliability_gap(&flat(easy), &flat(hard)).map_err(|e| stats_err(&lbl, e))?;
        out.push(LevelGap {
            policy: policy.clone(),
            arm: arm.clone(),
            options_hash: options_hash.clone(),
            label: lbl.clone(),
            task_id: None,
            static_level,
            hardest_level,
            gap,
        });
        for (task, easy_seeds) in easy.iter() {
            let Some(hard_seeds) = hard.get(task) else {
                continue;
            };
            let e: Vec<f64> = easy_seeds.values().copied().collect();
            let h: Vec<f64> = hard_seeds.values().copied().collect();
            out.push(LevelGap {
                policy: policy.clone(),
                arm: arm.clone(),
                options_hash: options_hash.clone(),
                label: lbl.clone(),
                task_id: Some(task.clone()),
                static_level,
                hardest_level,
                gap: reliability_gap(&e, &h).map_err(|err| stats_err(&lbl, err))?,
            });
        }
    }
    Ok(out)
}

/// Mean F1 and mean judge / 100 per condition over scored, non-infra episodes.
fn scorer_contrast(
    records: &[EpisodeRecord],
    show_hash: bool,
) -> anyhow::Result<Vec<ScorerContrast>> {
    let mut by: BTreeMap<Condition, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    let mut sorted: Vec<&EpisodeRecord> = records
        .iter()
        .filter(|r| r.outcome != Outcome::InfraError)
        .collect();
    sorted.sort_by(|a, b| a.key.cmp(&b.key));
    for r in sorted {
        if let Some(s) = &r.scores
            && s.f1.is_finite()
            && s.judge_total.is_finite()
        {
            let e = by.entry(condition(r)).or_default();
            e.0.push(s.f1);
            e.1.push(s.judge_total / JUDGE_SCALE);
        }
    }
    by.into_iter()
        .map(|(c, (f1, judge))| {
            let lbl = label(&c, show_hash);
            Ok(ScorerContrast {
                label: lbl.clone(),
                n: f1.len(),
                f1_mean: mean(&f1).map_err(|e| stats_err(&lbl, e))?,
                judge_mean: mean(&judge).map_err(|e| stats_err(&lbl, e))?,
                condition: c,
            })
        })
        .collect()
}

/// The 2×2 joint intervention, when the run holds L0 and L2 episodes with scores.
fn joint_section(
    records: &[EpisodeRecord],
    show_hash: bool,
) -> anyhow::Result<Option<JointSection>> {
    type ByEpisode = BTreeMap<(String, u64), BTreeMap<Level, Scored>>;
    type PayloadKey = (String, u64, Option<String>, String);
    // family → (task, seed) → level → (judge/100, f1)
    let mut by: BTreeMap<Family, ByEpisode> = BTreeMap::new();
    // (task, seed, arm, options) → policy → payload hash, at L0.
    let mut payloads: BTreeMap<PayloadKey, BTreeMap<String, Option<String>>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.outcome != Outcome::InfraError) {
        let Some(s) = r
            .scores
            .as_ref()
            .filter(|s| s.f1.is_finite() && s.judge_total.is_finite())
        else {
            continue;
        };
        if matches!(r.key.level, Level::L0 | Level::L2) {
            by.entry((
                r.key.policy.clone(),
                r.key.arm.clone(),
                r.key.options_hash.clone(),
            ))
            .or_default()
            .entry((r.key.task_id.clone(), r.key.seed))
            .or_default()
            .insert(r.key.level, (s.judge_total / JUDGE_SCALE, s.f1));
        }
        if r.key.level == Level::L0 {
            payloads
                .entry((
                    r.key.task_id.clone(),
                    r.key.seed,
                    r.key.arm.clone(),
                    r.key.options_hash.clone(),
                ))
                .or_default()
                .insert(r.key.policy.clone(), r.payload_sha256.clone());
        }
    }
    let mut rows = Vec::new();
    for ((policy, arm, options_hash), episodes) in by {
        let shared: Vec<Shared> = episodes
            .values()
            .filter_map(|levels| Some((*levels.get(&Level::L0)?, *levels.get(&Level::L2)?)))
            .collect();
        if shared.is_empty() {
            continue;
        }
        let cond = Condition {
            policy: policy.clone(),
            level: Level::L0,
            arm: arm.clone(),
            options_hash: options_hash.clone(),
        };
        let lbl = label(&cond, show_hash);
        let col = |f: &dyn Fn(&Shared) -> f64| -> anyhow::Result<f64> {
            mean(&shared.iter().map(f).collect::<Vec<_>>()).map_err(|e| stats_err(&lbl, e))
        };
        rows.push(JointRow {
            l0_judge: col(&|p| p.0.0)?,
            l0_f1: col(&|p| p.0.1)?,
            l2_judge: col(&|p| p.1.0)?,
            l2_f1: col(&|p| p.1.1)?,
            n: shared.len(),
            policy,
            arm,
            options_hash,
            label: lbl.clone(),
        });
    }
    if rows.is_empty() {
        return Ok(None);
    }
    // Model order as in the spectrum: by the repaired cell (L2, ground truth), best first.
    rows.sort_by(|a, b| {
        b.l2_f1
            .total_cmp(&a.l2_f1)
            .then_with(|| a.label.cmp(&b.label))
    });
    let (mut pairs, mut identical) = (0, 0);
    for by_policy in payloads.values() {
        let hashes: Vec<&Option<String>> = by_policy.values().collect();
        for i in 0..hashes.len() {
            for j in i + 1..hashes.len() {
                pairs += 1;
                if hashes[i].is_some() && hashes[i] == hashes[j] {
                    identical += 1;
                }
            }
        }
    }
    let spread = |f: fn(&JointRow) -> f64| {
        let (lo, hi) = rows
            .iter()
            .map(f)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        hi - lo
    };
    let spread = CellSpread {
        l0_judge: spread(|r| r.l0_judge),
        l0_f1: spread(|r| r.l0_f1),
        l2_judge: spread(|r| r.l2_judge),
        l2_f1: spread(|r| r.l2_f1),
    };
    Ok(Some(JointSection {
        rows,
        l0_pairs: pairs,
        l0_identical_pairs: identical,
        spread,
    }))
}

fn paired_row(
    policy: &str,
    level: Level,
    arm: Option<String>,
    task_id: Option<String>,
    label: String,
    cmp: &PairedComparison,
    b_minus_a: bool,
) -> PairedRow {
    // `cmp` was computed as first − second; for B − A the first argument was B.
    let (mean_a, mean_b) = if b_minus_a {
        (cmp.mean_b, cmp.mean_a)
    } else {
        (cmp.mean_a, cmp.mean_b)
    };
    PairedRow {
        policy: policy.to_string(),
        level,
        arm,
        task_id,
        label,
        n: cmp.n,
        mean_a,
        mean_b,
        delta: cmp.mean_delta,
        delta_ci: (&cmp.delta_ci).into(),
        p_value: cmp.sign_flip.p_value,
        p_method: cmp.sign_flip.method.clone(),
        p_holm: cmp.sign_flip.p_value,
        cliffs_delta: cmp.cliffs_delta,
        cliffs_ci: (&cmp.cliffs_ci).into(),
        positive: cmp.positive,
        negative: cmp.negative,
        ties: cmp.ties,
        ci_excludes_zero: cmp.delta_ci.excludes_zero_above() || cmp.delta_ci.excludes_zero_below(),
    }
}

/// Fills `p_holm` over one family of rows.
fn holm(rows: &mut [PairedRow]) -> anyhow::Result<()> {
    let p: Vec<f64> = rows.iter().map(|r| r.p_value).collect();
    let adjusted = holm_adjust(&p).map_err(|e| stats_err("Holm adjustment", e))?;
    for (r, a) in rows.iter_mut().zip(adjusted) {
        r.p_holm = a;
    }
    Ok(())
}

/// A paired table from matched values: `pairs` maps (policy, level, arm, task) → seed →
/// (first, second); Δ = first − second.
fn paired_tables(
    pairs: &Pairs,
    opts: &Options,
    b_minus_a: bool,
    label_of: &dyn Fn(&str, Level, Option<&str>) -> String,
) -> anyhow::Result<(Vec<PairedRow>, Vec<PairedRow>)> {
    let config = opts.paired_config();
    let mut rows = Vec::new();
    type GroupKey = (String, Level, Option<String>);
    let mut pooled_values: BTreeMap<GroupKey, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for ((policy, level, arm, task), seeds) in pairs {
        let first: Vec<f64> = seeds.values().map(|p| p.0).collect();
        let second: Vec<f64> = seeds.values().map(|p| p.1).collect();
        let lbl = label_of(policy, *level, arm.as_deref());
        let cmp = compare_paired(&first, &second, &config)
            .map_err(|e| stats_err(&format!("{lbl} {task}"), e))?;
        rows.push(paired_row(
            policy,
            *level,
            arm.clone(),
            Some(task.clone()),
            lbl,
            &cmp,
            b_minus_a,
        ));
        let e = pooled_values
            .entry((policy.clone(), *level, arm.clone()))
            .or_default();
        e.0.extend(first);
        e.1.extend(second);
    }
    let mut pooled = Vec::new();
    for ((policy, level, arm), (first, second)) in &pooled_values {
        let lbl = label_of(policy, *level, arm.as_deref());
        let cmp = compare_paired(first, second, &config).map_err(|e| stats_err(&lbl, e))?;
        pooled.push(paired_row(
            policy,
            *level,
            arm.clone(),
            None,
            lbl,
            &cmp,
            b_minus_a,
        ));
    }
    holm(&mut rows)?;
    holm(&mut pooled)?;
    Ok((rows, pooled))
}

/// Constant vs escalating arms paired by (task, seed) within (policy, level).
///
/// An arm changes the run options, so the two sides carry different options hashes; they are
/// paired when a (policy, level) holds exactly one constant and one escalating condition.
/// A (policy, level) with both sides but several of either (e.g. a quota sweep) is ambiguous
/// and listed in `skipped` rather than guessed; one with a single side is not an A/B design.
fn ab_section(
    grid: &Grid,
    opts: &Options,
    show_hash: bool,
) -> anyhow::Result<Option<PairedSection>> {
    type Sides<'a> = (
        Vec<(&'a Condition, &'a TaskSeeds)>,
        Vec<(&'a Condition, &'a TaskSeeds)>,
    );
    let mut by: BTreeMap<(String, Level), Sides<'_>> = BTreeMap::new();
    for (c, tasks) in grid {
        match arm_side(c.arm.as_deref()) {
            Some(Side::Constant) => by
                .entry((c.policy.clone(), c.level))
                .or_default()
                .0
                .push((c, tasks)),
            Some(Side::Escalating) => by
                .entry((c.policy.clone(), c.level))
                .or_default()
                .1
                .push((c, tasks)),
            None => {}
        }
    }
    // A design needs both sides; a (policy, level) with only constant doses is a degradation
    // sweep, not an A/B comparison.
    by.retain(|_, (constant, escalating)| !constant.is_empty() && !escalating.is_empty());
    if by.is_empty() {
        return Ok(None);
    }
    let mut pairs = BTreeMap::new();
    let (mut unpaired_a, mut unpaired_b, mut n_pairs) = (0, 0, 0);
    let mut skipped = Vec::new();
    let count = |t: &TaskSeeds| t.values().map(BTreeMap::len).sum::<usize>();
    for ((policy, level), (constant, escalating)) in &by {
        let (&[(c_cond, c_tasks)], &[(_, e_tasks)]) = (constant.as_slice(), escalating.as_slice())
        else {
            skipped.push(format!("{policy} {level}"));
            unpaired_a += constant.iter().map(|(_, t)| count(t)).sum::<usize>();
            unpaired_b += escalating.iter().map(|(_, t)| count(t)).sum::<usize>();
            continue;
        };
        let qualifier = show_hash.then(|| format!("#{}", c_cond.options_hash));
        for (task, c_seeds) in c_tasks {
            let e_seeds = e_tasks.get(task);
            for (seed, cv) in c_seeds {
                match e_seeds.and_then(|s| s.get(seed)) {
                    Some(ev) => {
                        pairs
                            .entry((policy.clone(), *level, qualifier.clone(), task.clone()))
                            .or_insert_with(BTreeMap::new)
                            .insert(*seed, (*cv, *ev));
                        n_pairs += 1;
                    }
                    None => unpaired_a += 1,
                }
            }
        }
        for (task, e_seeds) in e_tasks {
            unpaired_b += e_seeds
                .keys()
                .filter(|s| c_tasks.get(task).is_none_or(|c| !c.contains_key(s)))
                .count();
        }
    }
    if pairs.is_empty() && skipped.is_empty() {
        return Ok(None);
    }
    let label_of = |policy: &str, level: Level, q: Option<&str>| match q {
        Some(q) => format!("{policy} {level} {q}"),
        None => format!("{policy} {level}"),
    };
    let (mut rows, mut pooled) = paired_tables(&pairs, opts, false, &label_of)?;
    // The qualifier only disambiguated labels; the arms are the two sides here.
    for r in rows.iter_mut().chain(pooled.iter_mut()) {
        r.arm = None;
    }
    Ok(Some(PairedSection {
        a: "constant".to_string(),
        b: "escalating".to_string(),
        delta: "a - b".to_string(),
        paired_by: "(policy, level, task, seed)".to_string(),
        pairs: n_pairs,
        unpaired_a,
        unpaired_b,
        skipped,
        rows,
        pooled,
    }))
}

/// Degradation curves over numeric dose arms, per (policy, level).
///
/// Each dose is its own arm and so its own options hash; a (policy, level) whose doses repeat
/// (the same dose under several option sets) is ambiguous and gets no curve.
fn curves(grid: &Grid, opts: &Options) -> anyhow::Result<Vec<CurveStats>> {
    let mut by: BTreeMap<(String, Level), Doses<'_>> = BTreeMap::new();
    for (c, tasks) in grid {
        if let Some(dose) = c.arm.as_deref().and_then(arm_dose) {
            by.entry((c.policy.clone(), c.level))
                .or_default()
                .push((dose, c, tasks));
        }
    }
    let config = opts.summary_config();
    let mut out = Vec::new();
    for ((policy, level), mut doses) in by {
        doses.sort_by(|a, b| a.0.total_cmp(&b.0));
        if doses.len() < 2 || doses.windows(2).any(|w| w[0].0 == w[1].0) {
            continue;
        }
        let lbl = format!("{policy} {level}");
        let groups: Vec<(f64, Vec<f64>)> = doses
            .iter()
            .map(|(d, _, tasks)| {
                (
                    *d,
                    tasks.values().flat_map(|s| s.values().copied()).collect(),
                )
            })
            .collect();
        let curve = degradation_curve(&groups, &config).map_err(|e| stats_err(&lbl, e))?;
        let mut seeds = Vec::new();
        for (dose, _, tasks) in &doses {
            let mut per_seed: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
            for s in tasks.values() {
                for (seed, v) in s {
                    per_seed.entry(*seed).or_default().push(*v);
                }
            }
            for (seed, vs) in per_seed {
                seeds.push(DoseSeed {
                    dose: *dose,
                    seed,
                    value: mean(&vs).map_err(|e| stats_err(&lbl, e))?,
                    tasks: vs.len(),
                });
            }
        }
        out.push(CurveStats {
            policy,
            level,
            arms: doses.iter().filter_map(|(_, c, _)| c.arm.clone()).collect(),
            label: lbl,
            points: curve.points,
            gap: curve.gap,
            seeds,
        });
    }
    Ok(out)
}

/// Computes a run-vs-run comparison: episodes of A and B paired by (policy, level, arm, task,
/// seed), Δ = B − A (positive = B scores higher).
///
/// Exists as the pure core of `benchaudit report --compare RUN_A RUN_B`. The options hash is
/// not part of the pairing key: comparing two option sets (e.g. submission protocols) is a
/// main use. A run that holds one key under several option sets is ambiguous and rejected.
///
/// # Errors
/// [`UsageError`] when nothing pairs or a run is ambiguous; a statistics error otherwise.
pub fn compare_stats(a: &Loaded, b: &Loaded, opts: &Options) -> anyhow::Result<CompareStats> {
    type Key = (String, Level, Option<String>, String, u64);
    let (obs_a, counts_a, _) = observations(&a.records, opts.metric);
    let (obs_b, counts_b, _) = observations(&b.records, opts.metric);
    let index = |obs: &[Observation], name: &str| -> anyhow::Result<BTreeMap<Key, f64>> {
        let mut m = BTreeMap::new();
        for (c, task, seed, v) in obs {
            let key = (
                c.policy.clone(),
                c.level,
                c.arm.clone(),
                task.clone(),
                *seed,
            );
            if m.insert(key, *v).is_some() {
                return Err(UsageError(format!(
                    "run {name} holds {} {} {task} seed {seed} under several option sets; compare runs with one option set each",
                    c.policy, c.level
                ))
                .into());
            }
        }
        Ok(m)
    };
    let va = index(&obs_a, "A")?;
    let vb = index(&obs_b, "B")?;
    let mut pairs: Pairs = BTreeMap::new();
    for ((policy, level, arm, task, seed), x) in &va {
        if let Some(y) = vb.get(&(policy.clone(), *level, arm.clone(), task.clone(), *seed)) {
            // First − second = B − A.
            pairs
                .entry((policy.clone(), *level, arm.clone(), task.clone()))
                .or_default()
                .insert(*seed, (*y, *x));
        }
    }
    let n_pairs: usize = pairs.values().map(BTreeMap::len).sum();
    if n_pairs == 0 {
        return Err(UsageError(format!(
            "no episode of {} has a partner in {} with the same (policy, level, arm, task, seed) and the metric `{}`",
            a.source.run_dir,
            b.source.run_dir,
            opts.metric.flag()
        ))
        .into());
    }
    let label_of = |policy: &str, level: Level, arm: Option<&str>| match arm {
        Some(arm) => format!("{policy} {level} [{arm}]"),
        None => format!("{policy} {level}"),
    };
    let (rows, pooled) = paired_tables(&pairs, opts, true, &label_of)?;
    Ok(CompareStats {
        schema: SCHEMA.to_string(),
        kind: "compare".to_string(),
        tool: tool(),
        source_a: a.source.clone(),
        source_b: b.source.clone(),
        settings: opts.settings(),
        episodes_a: counts_a,
        episodes_b: counts_b,
        comparison: PairedSection {
            a: a.source.run_dir.clone(),
            b: b.source.run_dir.clone(),
            delta: "b - a".to_string(),
            paired_by: "(policy, level, arm, task, seed)".to_string(),
            pairs: n_pairs,
            unpaired_a: va.len() - n_pairs,
            unpaired_b: vb.len() - n_pairs,
            skipped: Vec::new(),
            rows,
            pooled,
        },
        figures: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn quartiles_are_type_7() {
        // numpy.percentile([1, 2, 3, 4], [25, 50, 75]) = 1.75, 2.5, 3.25
        let f = five_numbers(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(
            (f.min, f.q1, f.median, f.q3, f.max),
            (1.0, 1.75, 2.5, 3.25, 4.0)
        );
        let f = five_numbers(&[0.5]);
        assert_eq!(
            (f.min, f.q1, f.median, f.q3, f.max),
            (0.5, 0.5, 0.5, 0.5, 0.5)
        );
        // Ten values 0, 0.1, …, 0.9: q1 at position 2.25 → 0.225.
        let v: Vec<f64> = (0..10).map(|i| f64::from(i) / 10.0).collect();
        assert!((five_numbers(&v).q1 - 0.225).abs() < 1e-12);
    }

    #[test]
    fn doses_parse_from_arm_labels() {
        assert_eq!(arm_dose("0.5"), Some(0.5));
        assert_eq!(arm_dose("dose=1"), Some(1.0));
        assert_eq!(arm_dose("dose:0.25"), Some(0.25));
        assert_eq!(arm_dose("constant@0.4321"), Some(0.4321));
        assert_eq!(arm_dose("constant"), None);
        assert_eq!(arm_dose("escalating"), None);
        assert_eq!(arm_dose("NaN"), None);
        assert_eq!(arm_side(Some("Escalating")), Some(Side::Escalating));
        assert_eq!(arm_side(Some("constant@0.5000")), Some(Side::Constant));
        assert_eq!(arm_side(Some("constant")), Some(Side::Constant));
        assert_eq!(arm_side(Some("0.5")), None);
        assert_eq!(arm_side(None), None);
    }
}
