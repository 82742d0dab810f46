//! The audit of ComtradeBench (both configurations) and of external targets: every stage of
//! SPEC §8, the cards, and the oracle checks the audit asserts about its own numbers.

use benchaudit_agents::{Decision, EpisodeRecord, Level, RuleKind, RunOptions};
use benchaudit_comtrade::{TaskSpec, task, tasks};
use benchaudit_stats::{Summary, SummaryConfig, summarize};
use serde::Serialize;

use crate::card::{Card, Cell, Status};
use crate::comtrade_target::{ComtradeTarget, Configuration, decision_name};
use crate::joint::{self, Joint};
use crate::ownership::{self, Channel, MeasuredCell};
use crate::probes::{self, ProbeKind, ProbeResult, Sensitivity};
use crate::replay::{self, Replay};
use crate::runs::{Player, product, run_jobs};
use crate::solvability::{self, OracleSolve, ReEmission};
use crate::target::{Owner, Target};

/// The execution tasks of the reliability spectrum (paper Figure 2 plus T7's diagnostic).
pub const EXECUTION_TASKS: [&str; 6] = [
    "T3_duplicates",
    "T4_rate_limit_429",
    "T5_server_error_500",
    "T6_page_drift",
    "T7_totals_trap",
    "T8_mixed_faults",
];

/// Tasks the forged-submission battery runs on (T2: the paper's probe; T3: its card; T7: totals).
pub const PROBE_TASKS: [&str; 3] = ["T2_multi_page", "T3_duplicates", "T7_totals_trap"];

/// How the audit runs.
pub struct AuditConfig {
    /// Seeds per cell (0..seeds).
    pub seeds: u64,
    /// Worker threads.
    pub threads: usize,
    /// Who plays the model: the oracle and the stand-ins by default, plus any LLMs.
    pub players: Vec<Player>,
    /// LLM step limit assumed by the solvability stage.
    pub step_limit: u32,
}

impl AuditConfig {
    /// The key-free default: oracle + every stand-in.
    pub fn key_free(seeds: u64, threads: usize) -> Self {
        let mut players = vec![Player::rule(RuleKind::Oracle)];
        players.extend(RuleKind::STAND_INS.iter().map(|k| Player::rule(*k)));
        AuditConfig {
            seeds,
            threads,
            players,
            step_limit: 30,
        }
    }
}

/// Reliability of one player at one level (SPEC §7 metrics on ground-truth F1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlayerReliability {
    /// Player.
    pub player: String,
    /// Level.
    pub level: String,
    /// Summary over execution tasks × seeds.
    pub summary: Summary,
    /// Quartiles (linear interpolation between order statistics, R type 7) and maximum, for
    /// the spectrum's box and whisker.
    pub q1: f64,
    /// Median.
    pub median: f64,
    /// Third quartile.
    pub q3: f64,
    /// Maximum.
    pub max: f64,
}

/// The R type-7 quantile of sorted values.
fn quantile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * p;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// One of the audit's regression assertions about its own numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// What is asserted.
    pub name: String,
    /// Expected, in words.
    pub expected: String,
    /// Observed, in words.
    pub observed: String,
    /// Whether it held.
    pub pass: bool,
}

/// Everything the ComtradeBench audit found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComtradeAudit {
    /// Seeds per cell.
    pub seeds: Vec<u64>,
    /// Players.
    pub players: Vec<String>,
    /// Probe battery under each configuration's scorer.
    pub probes: Vec<(Configuration, Vec<ProbeResult>)>,
    /// Criterion sensitivity per configuration and task.
    pub sensitivity: Vec<(Configuration, Vec<Sensitivity>)>,
    /// Measured vs declared ownership.
    pub ownership: Vec<MeasuredCell>,
    /// Non-degeneracy of the decision channels per level.
    pub channels: Vec<(String, Vec<Channel>)>,
    /// The 2×2.
    pub joint: Joint,
    /// Replay.
    pub replay: Replay,
    /// Reliability per player and level.
    pub reliability: Vec<PlayerReliability>,
    /// Oracle solvability per task.
    pub oracle: Vec<OracleSolve>,
    /// Re-emission bounds per task.
    pub re_emission: Vec<ReEmission>,
    /// The cards: as shipped, repaired.
    pub cards: Vec<Card>,
    /// Oracle checks.
    pub checks: Vec<Check>,
}

fn run_battery(
    target: &dyn Target,
    seed: u64,
) -> Result<(Vec<ProbeResult>, Vec<Sensitivity>), String> {
    let mut results = Vec::new();
    let mut sens = Vec::new();
    for id in PROBE_TASKS {
        if let Some(r) = probes::battery(target, id, seed, target.pages(id)) {
            let r = r?;
            if let Some(s) = probes::sensitivity(&r, target.resolution()) {
                sens.push(s);
            }
            results.extend(r);
        }
    }
    Ok((results, sens))
}

fn criterion_cell(sens: &[Sensitivity], probes: &[ProbeResult], epsilon: f64) -> Cell {
    if sens.is_empty() {
        return Cell::not_probed("no canonical-truth oracle or scorer hook");
    }
    let score = |task: &str, kind: ProbeKind| {
        probes
            .iter()
            .find(|p| p.task == task && p.kind == kind)
            .and_then(|p| p.target_score)
    };
    let summary: Vec<String> = sens
        .iter()
        .map(|s| {
            let j = |k| score(&s.task, k).map_or("-".into(), |v| format!("{v:.3}"));
            format!(
                "{}: correct {}, fabricated {}, empty {}",
                s.task,
                j(ProbeKind::Correct),
                j(ProbeKind::Fabricated),
                j(ProbeKind::Empty)
            )
        })
        .collect();
    let violations: Vec<String> = sens
        .iter()
        .flat_map(|s| s.violations.iter().map(move |v| format!("{} {v}", s.task)))
        .collect();
    let grades = sens.iter().filter(|s| s.grades_the_report).count();
    let graded = if grades > 0 {
        format!(
            " The scorer grades the report: a contradictory self-report lowers the score at equal ground truth on {grades} task(s)."
        )
    } else {
        String::new()
    };
    if violations.is_empty() {
        Cell {
            status: Status::Pass,
            evidence: format!(
                "j(correct) > j(x) + ε (ε = {epsilon:e}) for every lower-quality forgery. {}.{graded}",
                summary.join("; ")
            ),
        }
    } else {
        Cell {
            status: Status::Fail,
            evidence: format!(
                "{} tie or inversion: {}. {}.{graded}",
                violations.len(),
                violations.join("; "),
                summary.join("; ")
            ),
        }
    }
}

fn ownership_cell(
    target: &dyn Target,
    measured: &[MeasuredCell],
    channels: &[(String, Vec<Channel>)],
) -> Cell {
    let Some(declared) = target.ownership() else {
        return Cell::not_probed("no scaffold-ownership map (hook 1)");
    };
    let level = declared.scored_level.clone();
    let model: Vec<String> = measured
        .iter()
        .filter(|c| c.level == level && c.measured == Owner::Model)
        .map(|c| c.decision.clone())
        .collect();
    let missing: Vec<&String> = declared
        .claimed
        .iter()
        .filter(|d| !model.contains(d))
        .collect();
    let chans = channels
        .iter()
        .find(|(l, _)| *l == level)
        .map(|(_, c)| c.as_slice())
        .unwrap_or(&[]);
    let degenerate: Vec<String> = declared
        .claimed
        .iter()
        .filter(|d| model.contains(d))
        .filter(|d| !chans.iter().any(|c| &c.decision == *d && c.non_degenerate))
        .map(|d| {
            let c = chans.iter().find(|c| &c.decision == d);
            format!(
                "{d} ({} deviant of {} episodes)",
                c.map_or(0, |c| c.deviant),
                c.map_or(0, |c| c.episodes)
            )
        })
        .collect();
    let mismatched: Vec<String> = measured
        .iter()
        .filter(|c| c.declared.is_some_and(|d| d != c.measured))
        .map(|c| {
            format!(
                "{} at {} declared {:?}, measured {:?}",
                c.decision,
                c.level,
                c.declared.unwrap_or(Owner::Harness),
                c.measured
            )
        })
        .collect();
    let mism = if mismatched.is_empty() {
        " Declared map = measured map.".to_string()
    } else {
        format!(" Declaration contradicted: {}.", mismatched.join("; "))
    };
    if missing.is_empty() && degenerate.is_empty() && mismatched.is_empty() {
        Cell {
            status: Status::Pass,
            evidence: format!(
                "At {level} the model owns every claimed decision ({}), each non-degenerate.{mism}",
                declared.claimed.join(", ")
            ),
        }
    } else {
        let mut why = Vec::new();
        if !missing.is_empty() {
            why.push(format!(
                "harness owns {} of {} claimed decisions at {level} ({})",
                missing.len(),
                declared.claimed.len(),
                missing
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !degenerate.is_empty() {
            why.push(format!("degenerate: {}", degenerate.join(", ")));
        }
        Cell {
            status: Status::Fail,
            evidence: format!("{}.{mism}", why.join("; ")),
        }
    }
}

fn replay_cell(r: &Replay) -> Cell {
    if r.mismatches.is_empty() {
        Cell {
            status: Status::Pass,
            evidence: format!(
                "{} episodes replayed bit-for-bit (records outside timing identical).",
                r.episodes
            ),
        }
    } else {
        Cell {
            status: Status::Fail,
            evidence: format!(
                "{} of {} episodes differ on replay: {}",
                r.mismatches.len(),
                r.episodes,
                r.mismatches.join("; ")
            ),
        }
    }
}

fn mean_of(records: &[EpisodeRecord], player: &str, level: Level) -> Vec<f64> {
    records
        .iter()
        .filter(|r| r.key.policy == player && r.key.level == level)
        .filter_map(|r| r.scores.as_ref().map(|s| s.f1))
        .collect()
}

/// Runs the full ComtradeBench audit.
pub fn audit_comtrade(
    config: &AuditConfig,
    targets: &[ComtradeTarget],
) -> Result<ComtradeAudit, String> {
    let seeds: Vec<u64> = (0..config.seeds.max(1)).collect();
    let threads = config.threads;
    let mut probes_all = Vec::new();
    let mut sens_all = Vec::new();
    for t in targets {
        let (p, s) = run_battery(t, 0)?;
        probes_all.push((t.configuration, p));
        sens_all.push((t.configuration, s));
    }
    let declared = targets.first().and_then(|t| t.ownership());
    let measured = ownership::measure(declared.as_ref(), &seeds, threads);
    let exec: Vec<&'static TaskSpec> = EXECUTION_TASKS.iter().filter_map(|id| task(id)).collect();
    let pool = run_jobs(
        &product(
            &config.players,
            &Level::ALL,
            &exec,
            &seeds,
            RunOptions::default(),
        ),
        threads,
    );
    let channels: Vec<(String, Vec<Channel>)> = Level::ALL
        .iter()
        .map(|l| {
            (
                l.to_string(),
                ownership::channels(
                    &pool
                        .iter()
                        .filter(|r| r.key.level == *l)
                        .cloned()
                        .collect::<Vec<_>>(),
                ),
            )
        })
        .collect();
    let t3 = task("T3_duplicates").ok_or("registry lost T3")?;
    let (joint, _) = joint::run(&config.players, t3, &seeds, threads);
    let replay_players = [
        Player::rule(RuleKind::Oracle),
        Player::rule(RuleKind::NoDedup),
        Player::rule(RuleKind::PageZero),
    ];
    let replay = replay::run(
        &replay_players,
        &Level::ALL,
        &exec,
        &seeds[..seeds.len().min(3)],
        threads,
    );
    let mut reliability = Vec::new();
    for p in &config.players {
        for level in Level::ALL {
            let v = mean_of(&pool, &p.name, level);
            if let Ok(summary) = summarize(
                &v,
                &SummaryConfig {
                    threads,
                    ..SummaryConfig::default()
                },
            ) {
                let mut sorted = v.clone();
                sorted.sort_by(f64::total_cmp);
                reliability.push(PlayerReliability {
                    player: p.name.clone(),
                    level: level.to_string(),
                    summary,
                    q1: quantile(&sorted, 0.25),
                    median: quantile(&sorted, 0.5),
                    q3: quantile(&sorted, 0.75),
                    max: sorted.last().copied().unwrap_or(f64::NAN),
                });
            }
        }
    }
    let all: Vec<&'static TaskSpec> = tasks().iter().collect();
    let (oracle, _) = solvability::oracle(&all, &seeds, threads);
    let re_emission = all
        .iter()
        .map(|t| solvability::re_emission(t, config.step_limit))
        .collect::<Result<Vec<_>, _>>()?;
    let cards = targets
        .iter()
        .map(|t| {
            let (p, s) = (
                probes_all
                    .iter()
                    .find(|(c, _)| *c == t.configuration)
                    .map(|(_, p)| p.as_slice())
                    .unwrap_or(&[]),
                sens_all
                    .iter()
                    .find(|(c, _)| *c == t.configuration)
                    .map(|(_, s)| s.as_slice())
                    .unwrap_or(&[]),
            );
            Card::new(
                t.name(),
                t.declared_scorer_kind(),
                criterion_cell(s, p, t.resolution()),
                ownership_cell(t, &measured, &channels),
                replay_cell(&replay),
            )
        })
        .collect();
    let mut audit = ComtradeAudit {
        seeds,
        players: config.players.iter().map(|p| p.name.clone()).collect(),
        probes: probes_all,
        sensitivity: sens_all,
        ownership: measured,
        channels,
        joint,
        replay,
        reliability,
        oracle,
        re_emission,
        cards,
        checks: Vec::new(),
    };
    audit.checks = checks(&audit);
    Ok(audit)
}

/// The audit's assertions about its own numbers (the paper's oracle checks).
pub fn checks(a: &ComtradeAudit) -> Vec<Check> {
    let mut out = Vec::new();
    let mut check = |name: &str, expected: String, observed: String, pass: bool| {
        out.push(Check {
            name: name.into(),
            expected,
            observed,
            pass,
        })
    };
    let judge = |kind: ProbeKind| {
        a.probes
            .iter()
            .find(|(c, _)| *c == Configuration::AsShipped)
            .and_then(|(_, p)| {
                p.iter()
                    .find(|r| r.task == "T2_multi_page" && r.kind == kind)
            })
            .and_then(|r| r.target_score)
    };
    let (c, f, e) = (
        judge(ProbeKind::Correct),
        judge(ProbeKind::Fabricated),
        judge(ProbeKind::Empty),
    );
    let show = |v: Option<f64>| v.map_or("unscored".into(), |v| format!("{:.1}", v * 100.0));
    check(
        "T2 judge: fabricated = correct = 98.7",
        "98.7 and 98.7".into(),
        format!("{} and {}", show(f), show(c)),
        c.is_some() && c == f && c.is_some_and(|c| (c - 0.987).abs() < 1e-9),
    );
    check(
        "T2 judge: empty floors at 64.8",
        "64.8".into(),
        show(e),
        e.is_some_and(|e| (e - 0.648).abs() < 1e-9),
    );
    check(
        "L0 payloads identical across every player pair",
        format!("{} of {} pairs", a.joint.l0_pairs, a.joint.l0_pairs),
        format!("{} of {} pairs", a.joint.l0_identical, a.joint.l0_pairs),
        a.joint.l0_pairs > 0 && a.joint.l0_identical == a.joint.l0_pairs,
    );
    let l2 = |p: &str| {
        a.joint
            .rows
            .iter()
            .find(|r| r.player == p)
            .map(|r| r.l2_truth)
    };
    let sep = l2("oracle").zip(l2("empty")).map(|(o, e)| o - e);
    check(
        "L2 ground truth separates oracle from empty by 1.0",
        "1.000".into(),
        sep.map_or("missing".into(), |s| format!("{s:.3}")),
        sep == Some(1.0),
    );
    check(
        "replay identical",
        "0 mismatches".into(),
        format!(
            "{} mismatches of {}",
            a.replay.mismatches.len(),
            a.replay.episodes
        ),
        a.replay.mismatches.is_empty() && a.replay.episodes > 0,
    );
    let mism: Vec<&MeasuredCell> = a
        .ownership
        .iter()
        .filter(|c| c.level != "L1" && c.declared.is_some_and(|d| d != c.measured))
        .collect();
    check(
        "measured ownership = declared at L0 and L2",
        "0 mismatches".into(),
        format!("{} mismatches", mism.len()),
        mism.is_empty() && !a.ownership.is_empty(),
    );
    let unsolved: Vec<String> = a
        .oracle
        .iter()
        .filter(|o| o.solved < o.seeds)
        .map(|o| o.task.clone())
        .collect();
    check(
        "oracle solves every task at L2 within budget",
        "every seed".into(),
        if unsolved.is_empty() {
            "every seed".into()
        } else {
            format!("unsolved: {}", unsolved.join(", "))
        },
        unsolved.is_empty(),
    );
    let t7 = a.re_emission.iter().find(|r| r.task == "T7_totals_trap");
    let lifted =
        t7.is_some_and(|r| r.scale_bound && r.ids.iter().zip(&r.full).all(|(i, f)| i.1 > f.1));
    check(
        "T7 is scale-bound at L2 and the ids protocol lifts its cap",
        "full cap < 1 at both budgets; ids cap higher".into(),
        t7.map_or("missing".into(), |r| {
            format!(
                "full F1 caps {:.2}/{:.2}, ids {:.2}/{:.2}",
                r.full[0].2, r.full[1].2, r.ids[0].2, r.ids[1].2
            )
        }),
        lifted,
    );
    let claims: Vec<String> = a
        .cards
        .iter()
        .map(|c| c.licensed_claim.label().to_string())
        .collect();
    check(
        "licensed claims: as shipped → self-report compliance; repaired → model capability",
        "self-report compliance, model capability".into(),
        claims.join(", "),
        claims == ["self-report compliance", "model capability"],
    );
    out
}

/// The decisions in table order, by name (for reports).
pub fn decision_names() -> Vec<&'static str> {
    Decision::ALL.iter().map(|d| decision_name(*d)).collect()
}

/// An external target's audit: probes and criterion sensitivity (hooks 3+4), declared
/// ownership (hook 1; not measurable without runs), replay not probed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExternalAudit {
    /// Probe results.
    pub probes: Vec<ProbeResult>,
    /// Sensitivity per task.
    pub sensitivity: Vec<Sensitivity>,
    /// The card.
    pub card: Card,
}

/// Audits a target reached only through its hooks.
pub fn audit_external(target: &dyn Target, seed: u64) -> Result<ExternalAudit, String> {
    let registry = target.registry();
    let mut probes = Vec::new();
    let mut sensitivity = Vec::new();
    if let Some(reg) = &registry {
        for t in reg {
            let seed = t.seeds.first().copied().unwrap_or(seed);
            if let Some(r) = probes::battery(target, &t.task_id, seed, target.pages(&t.task_id)) {
                let r = r?;
                if let Some(s) = probes::sensitivity(&r, target.resolution()) {
                    sensitivity.push(s);
                }
                probes.extend(r);
            }
        }
    }
    let criterion = if registry.is_none() {
        Cell::not_probed("no task registry (hook 2)")
    } else if sensitivity.is_empty() {
        Cell::not_probed("no canonical-truth oracle or no scorer hook (hooks 3, 4)")
    } else {
        criterion_cell(&sensitivity, &probes, target.resolution())
    };
    let ownership = match target.ownership() {
        None => Cell::not_probed("no scaffold-ownership map (hook 1)"),
        Some(d) => {
            let model = d.model_owned(&d.scored_level);
            let missing: Vec<&String> = d.claimed.iter().filter(|c| !model.contains(c)).collect();
            if missing.is_empty() {
                Cell::not_probed(format!(
                    "declared: the model owns every claimed decision at {}, but the harness is not inspectable by runs, so neither the declaration nor non-degeneracy is measured",
                    d.scored_level
                ))
            } else {
                Cell {
                    status: Status::Fail,
                    evidence: format!(
                        "by the target's own declaration the harness owns {} at {}",
                        missing
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                        d.scored_level
                    ),
                }
            }
        }
    };
    let replay = Cell::not_probed("the target exposes no episode runner");
    let card = Card::new(
        target.name(),
        target.declared_scorer_kind(),
        criterion,
        ownership,
        replay,
    );
    Ok(ExternalAudit {
        probes,
        sensitivity,
        card,
    })
}
