//! The analysis of a finished design run: per agent, the paired comparisons of each A/B pair
//! (Δ = constant − escalating, positive = escalation penalty) with a Holm adjustment over the
//! family, or the degradation curve over the doses.

use std::collections::BTreeMap;

use benchaudit_agents::{EpisodeRecord, Level, RunOptions};
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
    /// Holm-adjusted p over the family.
    pub p_holm: f64,
    /// Quota deaths per arm (escalating, constant).
    pub deaths: (u32, u32),
    /// SKIP decisions per arm (escalating, constant).
    pub skips: (u32, u32),
    /// Mean realised intensity per arm (escalating, constant).
    pub mean_intensity: (f64, f64),
    /// The frozen decision rule's verdict, under a pre-registration.
    pub decision: Option<bool>,
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
    /// The constant arm's level.
    pub matched_level: f64,
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

/// Analyses the records of a finished run of `design` (its `arms`) for `agents` on `metric`;
/// `stats_seed` seeds the bootstrap and permutation streams.
///
/// # Errors
/// [`Error::Invalid`] when an episode is missing from `records`; a statistics error otherwise.
pub fn analyse(
    design: &Design,
    arms: &Arms,
    agents: &[String],
    records: &[EpisodeRecord],
    metric: Metric,
    stats_seed: u64,
) -> Result<AbResult> {
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
        matched_level: arms.matched_level,
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
            let stats = compare_paired(
                &c_vals,
                &e_vals,
                &PairedConfig {
                    seed: stats_seed,
                    ..PairedConfig::default()
                },
            )?;
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
