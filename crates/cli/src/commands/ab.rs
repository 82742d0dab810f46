//! `benchaudit ab`: the stress designs of SPEC §5 — matched-mean A/B, quota and squeeze (with a
//! slack sweep), and constant-dose degradation — run into a ledger, paired by seed, and tested.
//! Δ = constant − escalating (positive = escalation penalty).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use benchaudit_agents::{EpisodeRecord, Level, Outcome, RunOptions};
use benchaudit_comtrade::{EpisodeOptions, StressConfig};
use benchaudit_stats::{
    PairedComparison, PairedConfig, SummaryConfig, compare_paired, decision_rule,
    degradation_curve, holm_adjust,
};
use benchaudit_stress::{DEGRADATION_DOSES, QuotaConfig, Squeeze};
use clap::{Args, ValueEnum};
use serde::Serialize;
use serde_json::json;

use crate::UsageError;
use crate::args::{InterfaceArg, SubmissionArg};
use crate::commands::prereg::{self, Predicted};
use crate::commands::run::{Agent, execute};
use crate::ledger::write_atomic;
use crate::output::print;
use crate::select;

/// Intensity at which the squeeze fires and totals rows start (paper A.11: 0.70).
pub const SQUEEZE_AT: f64 = 0.7;

/// The design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DesignArg {
    /// Escalating ramp vs constant at its realised mean; free retries.
    MatchedMean,
    /// As matched-mean, under an enforced quota with a squeeze only the escalating arm crosses.
    Quota,
    /// Constant intensity at doses 0, 0.25, 0.5, 0.75, 1.
    Degradation,
}

/// The outcome compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricArg {
    /// Share of G among rows the harness accepted (L0/L1).
    Coverage,
    /// Ground-truth F1.
    F1,
    /// Legacy judge total / 100.
    Judge,
}

/// `benchaudit ab`
#[derive(Debug, Args)]
pub struct AbArgs {
    /// Rule policies, comma-separated.
    #[arg(long)]
    pub policy: Option<String>,
    /// Scaffolding level (L1: the model decides retry/skip; L2: everything).
    #[arg(long, default_value = "L1")]
    pub level: String,
    /// Design.
    #[arg(long, value_enum, default_value = "matched-mean")]
    pub design: DesignArg,
    /// Enforced request quota (quota design; optional for degradation).
    #[arg(long)]
    pub quota: Option<u32>,
    /// Requests removed by the squeeze (quota design).
    #[arg(long, default_value_t = 3)]
    pub squeeze: u32,
    /// Post-squeeze slacks to sweep (quota = pages + squeeze + slack), e.g. 0,1,2,4.
    #[arg(long, value_delimiter = ',')]
    pub slack_sweep: Vec<u32>,
    /// Substrate task.
    #[arg(long, default_value = "T9_clean_ab")]
    pub task: String,
    /// Seeds (pairs share a seed).
    #[arg(long, default_value = "0..19")]
    pub seeds: String,
    /// Outcome metric (default: coverage at L0/L1, F1 at L2).
    #[arg(long, value_enum)]
    pub metric: Option<MetricArg>,
    /// Run directory.
    #[arg(long)]
    pub out: PathBuf,
    /// Episodes in parallel.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Seed of the bootstrap and permutation streams.
    #[arg(long, default_value_t = 0)]
    pub stats_seed: u64,
    /// A frozen pre-registration (`benchaudit prereg freeze`) whose decision rule to apply.
    #[arg(long)]
    pub prereg: Option<PathBuf>,
    /// Argument-error envelope.
    #[arg(long, value_enum, default_value = "legacy")]
    pub interface: InterfaceArg,
    /// Submission protocol.
    #[arg(long, value_enum, default_value = "full")]
    pub submission: SubmissionArg,
}

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

fn metric_name(m: MetricArg) -> &'static str {
    match m {
        MetricArg::Coverage => "coverage",
        MetricArg::F1 => "ground-truth F1",
        MetricArg::Judge => "legacy judge",
    }
}

fn metric_of(r: &EpisodeRecord, m: MetricArg) -> Option<f64> {
    if r.outcome == Outcome::InfraError {
        return None;
    }
    match m {
        MetricArg::Coverage => r.coverage,
        MetricArg::F1 => r.scores.as_ref().map(|s| s.f1),
        MetricArg::Judge => r.scores.as_ref().map(|s| s.judge_total / 100.0),
    }
}

/// Runs the subcommand.
pub fn run(args: &AbArgs) -> anyhow::Result<ExitCode> {
    let task = crate::commands::resolve_task(&args.task)?;
    let level = Level::parse(&args.level)
        .ok_or_else(|| UsageError(format!("unknown level `{}`", args.level)))?;
    if level == Level::L0 {
        return Err(UsageError(
            "the A/B designs need a model-owned decision: use --level L1 or L2".into(),
        )
        .into());
    }
    let Some(policy_spec) = args.policy.as_deref() else {
        return Err(UsageError("give --policy NAME[,NAME..]".into()).into());
    };
    let agents: Vec<Agent> = select::rule_policies(policy_spec)?
        .into_iter()
        .map(Agent::Rule)
        .collect();
    let seeds = select::seeds(&args.seeds)?;
    let metric = args.metric.unwrap_or(if level == Level::L2 {
        MetricArg::F1
    } else {
        MetricArg::Coverage
    });
    if metric == MetricArg::Coverage && level == Level::L2 {
        return Err(UsageError(
            "coverage is an L0/L1 outcome; use --metric f1 or judge at L2".into(),
        )
        .into());
    }
    let frozen = match &args.prereg {
        Some(path) => Some(prereg::load_frozen(path)?),
        None => None,
    };
    let pages = task.total_pages();
    let base = EpisodeOptions {
        interface: args.interface.into(),
        submission: args.submission.into(),
        max_requests: None,
    };
    let level_matched = StressConfig::matched_level(task, &seeds)
        .map_err(|e| UsageError(format!("stress engine: {e}")))?;
    let escalating =
        StressConfig::escalating(task).map_err(|e| UsageError(format!("stress engine: {e}")))?;

    // The arms to run: (label for grouping, quota, squeeze, slack, escalating?, config).
    let mut settings: Vec<(Option<u32>, Option<u32>)> = Vec::new();
    match args.design {
        DesignArg::MatchedMean => settings.push((None, None)),
        DesignArg::Quota => {
            if args.slack_sweep.is_empty() {
                settings.push((
                    Some(args.quota.unwrap_or(pages + args.squeeze)),
                    Some(args.squeeze),
                ));
            } else {
                for slack in &args.slack_sweep {
                    settings.push((Some(pages + args.squeeze + slack), Some(args.squeeze)));
                }
            }
        }
        DesignArg::Degradation => {}
    }
    let config = json!({
        "command": "ab",
        "design": args.design,
        "task": task.task_id,
        "level": level,
        "policies": agents.iter().map(Agent::name).collect::<Vec<_>>(),
        "seeds": seeds,
        "settings": settings,
        "quota": args.quota,
        "matched_level": level_matched,
        "episode": base,
    });
    let mut options_list: Vec<RunOptions> = Vec::new();
    let quota_of = |q: Option<u32>, s: Option<u32>| {
        q.map(|limit| QuotaConfig {
            limit,
            squeeze: s.map(|by| Squeeze { at: SQUEEZE_AT, by }),
        })
    };
    if args.design == DesignArg::Degradation {
        for dose in DEGRADATION_DOSES {
            let arm = StressConfig::constant(dose)
                .map_err(|e| UsageError(format!("stress engine: {e}")))?;
            options_list.push(RunOptions {
                episode: base,
                stress: Some(arm.with_quota(quota_of(args.quota, None))),
                ..RunOptions::default()
            });
        }
    } else {
        let constant = StressConfig::constant(level_matched)
            .map_err(|e| UsageError(format!("stress engine: {e}")))?;
        for &(q, s) in &settings {
            for arm in [escalating, constant] {
                options_list.push(RunOptions {
                    episode: base,
                    stress: Some(arm.with_quota(quota_of(q, s))),
                    ..RunOptions::default()
                });
            }
        }
    }
    let mut records = Vec::new();
    for options in &options_list {
        records = execute(
            &args.out,
            config.clone(),
            &agents,
            &[level],
            &[task],
            &seeds,
            *options,
            args.jobs,
        )?;
    }
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
    let outcomes = |agent: &str, options: &RunOptions| -> Result<Vec<&EpisodeRecord>, UsageError> {
        let hash = options.hash();
        let label = options.stress.map(|s| s.label()).unwrap_or_default();
        seeds
            .iter()
            .map(|&seed| {
                by_key
                    .get(&(agent.to_string(), hash.clone(), seed, label.clone()))
                    .copied()
                    .ok_or_else(|| {
                        UsageError(format!(
                            "episode {agent} seed {seed} ({label}) missing from the ledger"
                        ))
                    })
            })
            .collect()
    };
    let mut text = String::new();
    let mut report = json!({"design": args.design, "task": task.task_id, "level": level, "metric": metric, "seeds": seeds, "matched_level": level_matched});
    if args.design == DesignArg::Degradation {
        let mut curves = Vec::new();
        writeln!(
            text,
            "degradation on {} at {level} ({}), quota {}, {} seeds",
            task.task_id,
            metric_name(metric),
            args.quota.map_or("free".into(), |q| q.to_string()),
            seeds.len()
        )?;
        for agent in &agents {
            let mut groups = Vec::new();
            for (dose, options) in DEGRADATION_DOSES.iter().zip(&options_list) {
                let values: Vec<f64> = outcomes(&agent.name(), options)?
                    .iter()
                    .filter_map(|r| metric_of(r, metric))
                    .collect();
                groups.push((*dose, values));
            }
            let curve = degradation_curve(
                &groups,
                &SummaryConfig {
                    seed: args.stats_seed,
                    ..SummaryConfig::default()
                },
            )?;
            writeln!(text, "  {}:", agent.name())?;
            for p in &curve.points {
                writeln!(
                    text,
                    "    dose {:.2}  mean {:.3}  worst {:.3}  CI [{:.3}, {:.3}]  n {}",
                    p.dose,
                    p.summary.mean,
                    p.summary.worst,
                    p.summary.mean_ci.lo,
                    p.summary.mean_ci.hi,
                    p.summary.n
                )?;
            }
            writeln!(
                text,
                "    reliability gap (mean at dose 0 − worst at dose 1): {:.3}",
                curve.gap.gap
            )?;
            curves.push(json!({"agent": agent.name(), "curve": curve}));
        }
        report["curves"] = json!(curves);
    } else {
        let mut family: Vec<Comparison> = Vec::new();
        for agent in &agents {
            for (i, &(q, s)) in settings.iter().enumerate() {
                let esc = outcomes(&agent.name(), &options_list[2 * i])?;
                let con = outcomes(&agent.name(), &options_list[2 * i + 1])?;
                let pairs: Vec<(f64, f64)> = esc
                    .iter()
                    .zip(&con)
                    .filter_map(|(e, c)| Some((metric_of(e, metric)?, metric_of(c, metric)?)))
                    .collect();
                let (e_vals, c_vals): (Vec<f64>, Vec<f64>) = pairs.into_iter().unzip();
                let stats = compare_paired(
                    &c_vals,
                    &e_vals,
                    &PairedConfig {
                        seed: args.stats_seed,
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
                    agent: agent.name(),
                    quota: q,
                    squeeze: s,
                    slack: q.map(|q| i64::from(q) - i64::from(s.unwrap_or(0)) - i64::from(pages)),
                    constant_level: level_matched,
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
        writeln!(
            text,
            "{} on {} at {level}: Δ = constant − escalating ({}), {} paired seeds, constant level {:.4} (computed from the escalating arm)",
            match args.design {
                DesignArg::MatchedMean => "matched-mean A/B",
                _ => "quota + squeeze",
            },
            task.task_id,
            metric_name(metric),
            seeds.len(),
            level_matched
        )?;
        writeln!(
            text,
            "{:<14} {:>6} {:>6} {:>13} {:>8} {:>18} {:>7} {:>7} {:>24} {:>9} {:>9} {:>13}",
            "agent",
            "quota",
            "slack",
            "mean",
            "Δ",
            "95% CI",
            "p",
            "p_holm",
            "Cliff's δ [CI]",
            "deaths",
            "skips",
            "intensity"
        )?;
        for c in &family {
            let st = &c.stats;
            writeln!(
                text,
                "{:<14} {:>6} {:>6} {:>13} {:>+8.3} {:>18} {:>7.4} {:>7.4} {:>24} {:>9} {:>9} {:>13}",
                c.agent,
                c.quota.map_or("free".into(), |q| q.to_string()),
                c.slack.map_or("-".into(), |s| s.to_string()),
                format!("{:.3}/{:.3}", st.mean_b, st.mean_a),
                st.mean_delta,
                format!("[{:+.3}, {:+.3}]", st.delta_ci.lo, st.delta_ci.hi),
                st.p_value(),
                c.p_holm,
                format!(
                    "{:+.2} [{:+.2}, {:+.2}]",
                    st.cliffs_delta, st.cliffs_ci.lo, st.cliffs_ci.hi
                ),
                format!("{}/{}", c.deaths.0, c.deaths.1),
                format!("{}/{}", c.skips.0, c.skips.1),
                format!("{:.3}/{:.3}", c.mean_intensity.0, c.mean_intensity.1),
            )?;
        }
        writeln!(
            text,
            "(mean outcome, deaths, skips and intensity: escalating/constant arm)"
        )?;
        if let Some((experiment, hash)) = &frozen {
            writeln!(
                text,
                "\npre-registration {} (sha256 {hash}), predicted Δ {:?}:",
                experiment.name, experiment.predicted
            )?;
            let deviations = deviations(experiment, args, level, metric, &agents);
            if deviations.is_empty() {
                writeln!(text, "  no deviation from the frozen design")?;
            } else {
                writeln!(text, "  DISCLOSED DEVIATIONS from the frozen design:")?;
                for d in &deviations {
                    writeln!(text, "  - {d}")?;
                }
            }
            for c in family.iter_mut() {
                let fired = decision_rule(&c.stats, experiment.predicted == Predicted::Positive);
                c.decision = Some(fired);
                writeln!(
                    text,
                    "  {} (quota {}): {} under the frozen rule (CI excludes 0 on the predicted side and sign-flip p < 0.05)",
                    c.agent,
                    c.quota.map_or("free".into(), |q| q.to_string()),
                    if fired { "CONFIRMED" } else { "not confirmed" }
                )?;
            }
            report["prereg"] = json!({"name": experiment.name, "sha256": hash, "predicted": experiment.predicted, "deviations": deviations});
        }
        report["comparisons"] = serde_json::to_value(&family)?;
    }
    write_atomic(
        &args.out.join("ab.json"),
        serde_json::to_string_pretty(&report)?.as_bytes(),
    )?;
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Every field where the run differs from the frozen design.
fn deviations(
    e: &prereg::Experiment,
    args: &AbArgs,
    level: Level,
    metric: MetricArg,
    agents: &[Agent],
) -> Vec<String> {
    let mut out = Vec::new();
    let mut cmp = |what: &str, frozen: String, actual: String| {
        if frozen != actual {
            out.push(format!("{what}: frozen `{frozen}`, run `{actual}`"));
        }
    };
    let design = serde_json::to_value(args.design)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    cmp("design", e.design.kind.clone(), design);
    cmp("task", e.design.task.clone(), args.task.clone());
    cmp("level", e.design.level.to_uppercase(), level.to_string());
    cmp("seeds", e.design.seeds.clone(), args.seeds.clone());
    let metric = serde_json::to_value(metric)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    cmp("metric", e.design.metric.clone(), metric);
    cmp(
        "quota",
        format!("{:?}", e.design.quota),
        format!("{:?}", args.quota),
    );
    if args.design == DesignArg::Quota {
        cmp(
            "squeeze",
            format!("{:?}", e.design.squeeze),
            format!("{:?}", Some(args.squeeze)),
        );
    }
    let mut frozen_agents: Vec<String> = e
        .agents
        .policies
        .iter()
        .chain(&e.agents.models)
        .cloned()
        .collect();
    frozen_agents.sort();
    let mut actual: Vec<String> = agents.iter().map(Agent::name).collect();
    actual.sort();
    cmp("agents", frozen_agents.join(","), actual.join(","));
    out
}
