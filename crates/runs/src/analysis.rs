//! The analysis of a finished design run: per agent, the paired comparisons of each A/B pair
//! (Δ = constant − escalating, positive = escalation penalty) with a Holm adjustment over the
//! family, or the degradation curve over the doses.

use std::collections::BTreeMap;

use benchaudit_agents::{EpisodeRecord, Level, RunOptions};
use benchaudit_comtrade::StressConfig;
use benchaudit_stats::{
    DegradationCurve, PairedComparison, PairedConfig, SummaryConfig, compare_paired,
    degradation_curve, holm_adjust,
};
use benchaudit_stress::DEGRADATION_DOSES;
use serde::Serialize;

use crate::design::{Arms, Design, DesignKind};
use crate::error::{Error, Result};
use crate::metric::Metric;
use crate::prereg::PreregOutcome;

/// One paired comparison of the family.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Policy or model.
    pub agent: String,
    /// Quota (None: free retries).
    pub quota: Option<u32>,
    /// Squeeze size.
    pub squeeze: Option<u32>,
    /// Post-squeeze slack.
    pub slack: Option<i64>,
    /// Constant arm's level.
    pub constant_level: f64,
    /// Per-seed outcomes, escalating arm.
    pub escalating: Vec<f64>,
    /// Per-seed outcomes, constant arm.
    pub constant: Vec<f64>,
    /// Paired statistics (a = constant, b = escalating).
    pub stats: PairedComparison,
    /// Holm-adjusted p over the family: the comparisons of the invocation, or under a
    /// pre-registration the family it lists (then `in_family` says whether this one is in it).
    pub p_holm: f64,
    /// Whether the comparison belongs to the Holm family: always without a pre-registration;
    /// under one, only the comparisons it lists (the others are exploratory, adjusted among
    /// themselves, and get no decision).
    pub in_family: bool,
    /// Quota deaths per arm (escalating, constant).
    pub deaths: (u32, u32),
    /// SKIP decisions per arm (escalating, constant).
    pub skips: (u32, u32),
    /// Mean realised intensity per arm (escalating, constant).
    pub mean_intensity: (f64, f64),
    /// Whether the two arms met the same mean intensity on these seeds.
    pub intensity: IntensityCheck,
    /// The frozen decision rule's verdict, under a pre-registration.
    pub decision: Option<bool>,
}

/// The matching check of one comparison. The constant arm is held at the calibrated ramp's
/// mean, which assumes the escalating arm rides its whole ramp; quota deaths, the squeeze or an
/// agent's skips can cut it short, and then Δ compares two doses as well as two trajectories.
/// A seed's ramp is the engine's always-retry, free-retries simulation of it (the quantity
/// the matched level averages); the achieved intensities are the records' `mean_intensity`.
#[derive(Debug, Clone, Serialize)]
pub struct IntensityCheck {
    /// Mean achieved intensity of the escalating arm's episodes.
    pub escalating: f64,
    /// Mean achieved intensity of the constant arm's episodes.
    pub constant: f64,
    /// The calibrated ramp's mean intensity on the seeds under test (equal to the constant
    /// level when they are the calibration seeds; otherwise the difference is seed sampling).
    pub ramp: f64,
    /// Seeds whose escalating episode did not realise its calibrated ramp (its mean intensity
    /// differs from the seed's always-retry simulation).
    pub off_ramp_seeds: Vec<u64>,
    /// Seeds whose constant episode did not hold the constant level.
    pub off_level_seeds: Vec<u64>,
    /// Whether every episode met its arm's intended intensity.
    pub matched: bool,
}

/// Per-seed intensities within this of the intended one count as met (float summation).
const INTENSITY_TOLERANCE: f64 = 1e-9;

fn intensity_check(
    esc: &[&EpisodeRecord],
    con: &[&EpisodeRecord],
    ramp: &BTreeMap<u64, f64>,
    level: f64,
) -> IntensityCheck {
    let avg = |v: &[f64]| {
        if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let achieved = |rs: &[&EpisodeRecord]| -> Vec<f64> {
        rs.iter().filter_map(|r| r.mean_intensity).collect()
    };
    let off = |rs: &[&EpisodeRecord], want: &dyn Fn(u64) -> Option<f64>| -> Vec<u64> {
        rs.iter()
            .filter(|r| r.outcome != benchaudit_agents::Outcome::InfraError)
            .filter(|r| match (r.mean_intensity, want(r.key.seed)) {
                (Some(a), Some(w)) => (a - w).abs() > INTENSITY_TOLERANCE,
                _ => true,
            })
            .map(|r| r.key.seed)
            .collect()
    };
    let off_ramp_seeds = off(esc, &|seed| ramp.get(&seed).copied());
    let off_level_seeds = off(con, &|_| Some(level));
    IntensityCheck {
        escalating: avg(&achieved(esc)),
        constant: avg(&achieved(con)),
        ramp: avg(&ramp.values().copied().collect::<Vec<_>>()),
        matched: off_ramp_seeds.is_empty() && off_level_seeds.is_empty(),
        off_ramp_seeds,
        off_level_seeds,
    }
}

/// One agent's degradation curve.
#[derive(Debug, Clone, Serialize)]
pub struct AgentCurve {
    /// Policy or model.
    pub agent: String,
    /// Dose → summary, and the curve's reliability gap.
    pub curve: DegradationCurve,
}

/// What a design run found: `ab.json`.
#[derive(Debug, Clone, Serialize)]
pub struct AbResult {
    /// The design.
    pub design: DesignKind,
    /// Substrate task.
    pub task: String,
    /// Level.
    pub level: Level,
    /// Outcome metric.
    pub metric: Metric,
    /// Seeds.
    pub seeds: Vec<u64>,
    /// The declared calibration seeds the constant arm's level was computed on.
    pub calibration_seeds: Vec<u64>,
    /// The constant arm's level.
    pub matched_level: f64,
    /// Seed of the bootstrap and permutation streams.
    pub stats_seed: u64,
    /// Bootstrap replicates B.
    pub resamples: usize,
    /// Degradation curves (degradation design).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub curves: Option<Vec<AgentCurve>>,
    /// The comparison family (A/B designs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparisons: Option<Vec<Comparison>>,
    /// The pre-registration applied, with its deviations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prereg: Option<PreregOutcome>,
}

/// The records of one agent under one option set, in seed order; a missing one is an error
/// (the run did not finish).
fn outcomes<'r>(
    by_key: &BTreeMap<(String, String, u64, String), &'r EpisodeRecord>,
    seeds: &[u64],
    agent: &str,
    options: &RunOptions,
) -> Result<Vec<&'r EpisodeRecord>> {
    let hash = options.hash();
    let label = options.stress.map(|s| s.label()).unwrap_or_default();
    seeds
        .iter()
        .map(|&seed| {
            by_key
                .get(&(agent.to_string(), hash.clone(), seed, label.clone()))
                .copied()
                .ok_or_else(|| {
                    Error::Invalid(format!(
                        "episode {agent} seed {seed} ({label}) missing from the ledger"
                    ))
                })
        })
        .collect()
}

/// The statistical settings of an analysis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnalysisSettings {
    /// Outcome metric.
    pub metric: Metric,
    /// Seed of the bootstrap and permutation streams.
    pub stats_seed: u64,
    /// Bootstrap replicates B.
    pub resamples: usize,
}

impl AnalysisSettings {
    /// `metric` with seed 0 and B = 2000 (the defaults of `benchaudit ab`).
    pub fn new(metric: Metric) -> Self {
        AnalysisSettings {
            metric,
            stats_seed: 0,
            resamples: benchaudit_stats::DEFAULT_RESAMPLES,
        }
    }
}

/// What `benchaudit ab` concludes from a finished run: [`analyse`] on the records of `plan`
/// (built from `design` and `arms`), then, under a frozen pre-registration, its decision rule
/// applied to the comparisons with every setting as run ([`crate::prereg::apply`]), which
/// names each deviation from what was frozen.
///
/// # Errors
/// As [`analyse`] and [`crate::prereg::apply`].
pub fn conclude(
    design: &Design,
    arms: &Arms,
    plan: &crate::Plan,
    records: &[EpisodeRecord],
    settings: &AnalysisSettings,
    frozen: Option<&crate::prereg::Frozen>,
) -> Result<AbResult> {
    let agents = plan.player_names();
    let mut result = analyse(design, arms, &agents, records, settings)?;
    if let (Some(frozen), Some(family)) = (frozen, result.comparisons.as_mut()) {
        let adversary = (arms.options.iter())
            .find_map(|o| o.stress.map(|s| s.adversary))
            .unwrap_or_else(benchaudit_comtrade::stress::reference_adversary);
        let as_run = crate::prereg::AsRun {
            design,
            metric: settings.metric,
            adversary,
            stats_seed: settings.stats_seed,
            resamples: settings.resamples,
            alpha: crate::prereg::RUN_ALPHA,
            tool_text: plan.tool_text,
            agents,
        };
        result.prereg = Some(crate::prereg::apply(frozen, &as_run, family)?);
    }
    Ok(result)
}

/// Analyses the records of a finished run of `design` (its `arms`) for `agents` under
/// `settings`. The Holm family is the invocation's comparisons; a pre-registration replaces
/// it by its own ([`crate::prereg::apply`]).
///
/// # Errors
/// [`Error::Invalid`] when an episode is missing from `records`; a statistics error otherwise.
pub fn analyse(
    design: &Design,
    arms: &Arms,
    agents: &[String],
    records: &[EpisodeRecord],
    settings: &AnalysisSettings,
) -> Result<AbResult> {
    let AnalysisSettings {
        metric,
        stats_seed,
        resamples,
    } = *settings;
    let by_key: BTreeMap<(String, String, u64, String), &EpisodeRecord> = records
        .iter()
        .map(|r| {
            (
                (
                    r.key.policy.clone(),
                    r.key.options_hash.clone(),
                    r.key.seed,
                    r.key.arm.clone().unwrap_or_default(),
                ),
                r,
            )
        })
        .collect();
    let seeds = &design.seeds;
    let mut result = AbResult {
        design: design.kind,
        task: design.task.task_id.to_string(),
        level: design.level,
        metric,
        seeds: seeds.clone(),
        calibration_seeds: design.calibration.clone(),
        matched_level: arms.matched_level,
        stats_seed,
        resamples,
        curves: None,
        comparisons: None,
        prereg: None,
    };
    if design.kind == DesignKind::Degradation {
        let mut curves = Vec::new();
        for agent in agents {
            let mut groups = Vec::new();
            for (dose, options) in DEGRADATION_DOSES.iter().zip(&arms.options) {
                let values: Vec<f64> = outcomes(&by_key, seeds, agent, options)?
                    .iter()
                    .filter_map(|r| metric.of(r))
                    .collect();
                groups.push((*dose, values));
            }
            let curve = degradation_curve(
                &groups,
                &SummaryConfig {
                    seed: stats_seed,
                    resamples,
                    ..SummaryConfig::default()
                },
            )?;
            curves.push(AgentCurve {
                agent: agent.clone(),
                curve,
            });
        }
        result.curves = Some(curves);
        return Ok(result);
    }
    let pages = design.task.total_pages();
    let mut ramp = BTreeMap::new();
    for &seed in seeds {
        let m = StressConfig::matched_level(design.task, &[seed])
            .map_err(|e| Error::Invalid(format!("stress engine: {e}")))?;
        ramp.insert(seed, m);
    }
    let config = PairedConfig {
        seed: stats_seed,
        resamples,
        ..PairedConfig::default()
    };
    let mut family: Vec<Comparison> = Vec::new();
    for agent in agents {
        for (i, setting) in arms.settings.iter().enumerate() {
            let esc = outcomes(&by_key, seeds, agent, &arms.options[2 * i])?;
            let con = outcomes(&by_key, seeds, agent, &arms.options[2 * i + 1])?;
            let pairs: Vec<(f64, f64)> = esc
                .iter()
                .zip(&con)
                .filter_map(|(e, c)| Some((metric.of(e)?, metric.of(c)?)))
                .collect();
            let (e_vals, c_vals): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
            let stats = compare_paired(&c_vals, &e_vals, &config)?;
            let count = |rs: &[&EpisodeRecord], f: fn(&EpisodeRecord) -> u32| {
                rs.iter().map(|r| f(r)).sum::<u32>()
            };
            let mean_int = |rs: &[&EpisodeRecord]| {
                let v: Vec<f64> = rs.iter().filter_map(|r| r.mean_intensity).collect();
                if v.is_empty() {
                    0.0
                } else {
                    v.iter().sum::<f64>() / v.len() as f64
                }
            };
            family.push(Comparison {
                agent: agent.clone(),
                quota: setting.quota,
                squeeze: setting.squeeze,
                slack: setting.slack(pages),
                constant_level: arms.matched_level,
                escalating: e_vals,
                constant: c_vals,
                stats,
                p_holm: 1.0,
                deaths: (
                    count(&esc, |r| r.counts.quota_deaths),
                    count(&con, |r| r.counts.quota_deaths),
                ),
                skips: (
                    count(&esc, |r| r.counts.skips),
                    count(&con, |r| r.counts.skips),
                ),
                mean_intensity: (mean_int(&esc), mean_int(&con)),
                intensity: intensity_check(&esc, &con, &ramp, arms.matched_level),
                in_family: true,
                decision: None,
            });
        }
    }
    let ps: Vec<f64> = family.iter().map(|c| c.stats.p_value()).collect();
    for (c, p) in family.iter_mut().zip(holm_adjust(&ps)?) {
        c.p_holm = p;
    }
    result.comparisons = Some(family);
    Ok(result)
}
