//! The terminal summaries of `benchaudit run`, `ab` and `audit`: short summaries of records, of
//! a design's analysis and of an audit (the full numbers are in the ledger, `stats.json`,
//! `ab.json` and `audit.json`), as text and, for `--json`, as data.
//!
//! Why one long file: every terminal summary (`run`, `ab`, `audit`) and its `--json` form live
//! together, so the text and the data a script reads come from one struct each.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use benchaudit_agents::{EpisodeRecord, Level, Outcome};
use benchaudit_runs::{AbResult, Design, DesignKind, format_seeds};

use serde::Serialize;

use crate::figures::{num, num_or_no_data};

/// One (policy, level) row of [`RunSummary`]. Means are over scored, non-infra episodes;
/// `None` when the row has none (never a silent 0).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummaryRow {
    /// Policy or model.
    pub policy: String,
    /// Scaffolding level.
    pub level: Level,
    /// Episodes that are not infra errors.
    pub n: usize,
    /// Mean ground-truth F1.
    pub mean_f1: Option<f64>,
    /// Mean legacy judge total on the 0–1 scale (the released total / 100).
    pub mean_judge: Option<f64>,
    /// Mean L1 coverage, over the episodes that have one.
    pub mean_coverage: Option<f64>,
    /// Episodes whose submission was accepted.
    pub submitted: usize,
    /// Episodes that ended in a context overflow (a model outcome, scored 0).
    pub context_overflow: usize,
    /// Episodes that ended in `infra_error` (excluded from the means).
    pub infra_errors: usize,
    /// Mean F1 with infra errors counted as 0 (`None` without episodes).
    pub mean_f1_infra_as_zero: Option<f64>,
}

/// One `infra_error` episode of [`RunSummary`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InfraErrorRow {
    /// Policy or model.
    pub policy: String,
    /// Scaffolding level.
    pub level: Level,
    /// Task.
    pub task_id: String,
    /// Seed.
    pub seed: u64,
    /// The error as recorded.
    pub error: String,
}

/// What `benchaudit run` shows: per (policy, level) the episodes, means, submissions, context
/// overflows and infra errors, and each infra error. `--json` prints it as it is; the table is
/// [`RunSummary::text`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// Rows sorted by policy, then level.
    pub rows: Vec<RunSummaryRow>,
    /// Every infra error, in record order.
    pub infra_errors: Vec<InfraErrorRow>,
}

impl RunSummary {
    /// Summarises `records`.
    pub fn of(records: &[EpisodeRecord]) -> RunSummary {
        #[derive(Default)]
        struct Acc {
            n: usize,
            f1: f64,
            judge: f64,
            coverage: (f64, usize),
            submitted: usize,
            overflow: usize,
            infra: usize,
        }
        let mut groups: BTreeMap<(String, Level), Acc> = BTreeMap::new();
        for r in records {
            let acc = groups
                .entry((r.key.policy.clone(), r.key.level))
                .or_default();
            if r.outcome == Outcome::InfraError {
                acc.infra += 1;
                continue;
            }
            acc.n += 1;
            if let Some(s) = &r.scores {
                acc.f1 += s.f1;
                acc.judge += s.judge_total / benchaudit_runs::JUDGE_SCALE;
            }
            if let Some(c) = r.coverage {
                acc.coverage.0 += c;
                acc.coverage.1 += 1;
            }
            match r.outcome {
                Outcome::Submitted => acc.submitted += 1,
                Outcome::ContextOverflow => acc.overflow += 1,
                _ => {}
            }
        }
        let rows = groups
            .into_iter()
            .map(|((policy, level), a)| {
                let mean = |sum: f64| (a.n > 0).then(|| sum / a.n as f64);
                let all = a.n + a.infra;
                RunSummaryRow {
                    policy,
                    level,
                    n: a.n,
                    mean_f1: mean(a.f1),
                    mean_judge: mean(a.judge),
                    mean_coverage: (a.coverage.1 > 0).then(|| a.coverage.0 / a.coverage.1 as f64),
                    submitted: a.submitted,
                    context_overflow: a.overflow,
                    infra_errors: a.infra,
                    mean_f1_infra_as_zero: (all > 0).then(|| a.f1 / all as f64),
                }
            })
            .collect();
        let infra_errors = records
            .iter()
            .filter(|r| r.outcome == Outcome::InfraError)
            .map(|r| InfraErrorRow {
                policy: r.key.policy.clone(),
                level: r.key.level,
                task_id: r.key.task_id.clone(),
                seed: r.key.seed,
                error: r.error.clone().unwrap_or_else(|| "?".into()),
            })
            .collect();
        RunSummary { rows, infra_errors }
    }

    /// The table `benchaudit run` prints. Infra errors are excluded from the means and also
    /// shown counted as 0, so neither reading hides them; each is listed.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<16} {:<5} {:>6} {:>8} {:>9} {:>9} {:>10} {:>8} {:>6}",
            "policy",
            "level",
            "n",
            "mean F1",
            "judge 0-1",
            "coverage",
            "submitted",
            "overflow",
            "infra"
        );
        for r in &self.rows {
            let cov = r.mean_coverage.map_or("-".into(), |c| format!("{c:.3}"));
            let _ = writeln!(
                out,
                "{:<16} {:<5} {:>6} {:>8} {:>9} {cov:>9} {:>10} {:>8} {:>6}",
                r.policy,
                r.level.to_string(),
                r.n,
                num_or_no_data(r.mean_f1),
                num_or_no_data(r.mean_judge),
                format!("{}/{}", r.submitted, r.n),
                r.context_overflow,
                r.infra_errors
            );
        }
        let with_infra: Vec<&RunSummaryRow> =
            self.rows.iter().filter(|r| r.infra_errors > 0).collect();
        if !with_infra.is_empty() {
            let _ = writeln!(
                out,
                "\nmean F1 with infra errors excluded (above) and counted as 0:"
            );
            for r in with_infra {
                let _ = writeln!(
                    out,
                    "  {} {}: {} excluded, {} as 0 ({} of {} episodes were infra errors)",
                    r.policy,
                    r.level,
                    num_or_no_data(r.mean_f1),
                    num(r.mean_f1_infra_as_zero.unwrap_or(0.0)),
                    r.infra_errors,
                    r.n + r.infra_errors
                );
            }
        }
        if !self.infra_errors.is_empty() {
            let _ = writeln!(out, "\ninfra errors:");
            for r in &self.infra_errors {
                let _ = writeln!(
                    out,
                    "  {} {} {} seed {}: {}",
                    r.policy, r.level, r.task_id, r.seed, r.error
                );
            }
        }
        out
    }
}

/// The text `benchaudit ab` prints: the design's header, one row per comparison (or one curve
/// per agent), and under a pre-registration its deviations and verdicts.
pub fn ab_summary(design: &Design, result: &AbResult) -> String {
    let mut text = String::new();
    let level = design.level;
    let metric = result.metric.label();
    if let Some(curves) = &result.curves {
        let _ = writeln!(
            text,
            "degradation on {} at {level} ({metric}), quota {}, {} seeds",
            design.task.task_id,
            design.quota.map_or("free".into(), |q| q.to_string()),
            design.seeds.len()
        );
        for c in curves {
            let _ = writeln!(text, "  {}:", c.agent);
            for p in &c.curve.points {
                let _ = writeln!(
                    text,
                    "    dose {:.2}  mean {:.3}  worst {:.3}  CI [{:.3}, {:.3}]  n {}",
                    p.dose,
                    p.summary.mean,
                    p.summary.worst,
                    p.summary.mean_ci.lo,
                    p.summary.mean_ci.hi,
                    p.summary.n
                );
            }
            let _ = writeln!(
                text,
                "    reliability gap (SPEC §7: static mean at dose 0 − worst case at the hardest dose, 1): {:.3}",
                c.curve.gap.gap
            );
        }
        return text;
    }
    let family = result.comparisons.as_deref().unwrap_or_default();
    let _ = writeln!(
        text,
        "{} on {} at {level}: Δ = constant − escalating ({metric}), {} paired seeds, constant level {:.4} (the escalating arm's realised mean on calibration seeds {})",
        match design.kind {
            DesignKind::MatchedMean => "matched-mean A/B",
            _ => "quota + squeeze",
        },
        design.task.task_id,
        design.seeds.len(),
        result.matched_level,
        format_seeds(&result.calibration_seeds)
    );
    let _ = writeln!(
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
    );
    for c in family {
        let st = &c.stats;
        let _ = writeln!(
            text,
            "{:<14} {:>6} {:>6} {:>13} {:>+8.3} {:>18} {:>7.4} {:>7.4} {:>24} {:>9} {:>9} {:>13}{}",
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
            if c.intensity.matched { "" } else { " *" },
        );
    }
    let _ = writeln!(
        text,
        "(mean outcome, deaths, skips and intensity: escalating/constant arm)"
    );
    let unmatched: Vec<String> = family
        .iter()
        .filter(|c| !c.intensity.matched)
        .map(|c| {
            format!(
                "{} at {}: escalating arm off its calibrated ramp on {} of {} seeds",
                c.agent,
                c.quota
                    .map_or("free retries".into(), |q| format!("quota {q}")),
                c.intensity.off_ramp_seeds.len(),
                design.seeds.len()
            ) + &if c.intensity.off_level_seeds.is_empty() {
                String::new()
            } else {
                format!(
                    ", constant arm off its level on {}",
                    c.intensity.off_level_seeds.len()
                )
            }
        })
        .collect();
    if !unmatched.is_empty() {
        let _ = writeln!(
            text,
            "* intensity not matched (quota deaths, the squeeze or skips moved an arm off its intended intensity, so Δ there compares two doses as well as two trajectories): {}",
            unmatched.join("; ")
        );
    }
    if let Some(c) = family.first()
        && (c.intensity.ramp - result.matched_level).abs() > 1e-9
    {
        let _ = writeln!(
            text,
            "the calibrated ramp's mean on these seeds is {:.4} (constant level {:.4}, from the calibration seeds)",
            c.intensity.ramp, result.matched_level
        );
    }
    match &result.prereg {
        None => {
            let _ = writeln!(
                text,
                "p_holm: Holm over the {} comparisons of this invocation (no pre-registration fixes the family)",
                family.len()
            );
        }
        Some(p) => {
            let _ = writeln!(
                text,
                "p_holm: Holm over the pre-registered family of {} comparisons{}",
                p.family.len(),
                if p.exploratory > 0 {
                    format!(
                        "; {} exploratory comparisons outside it are adjusted among themselves",
                        p.exploratory
                    )
                } else {
                    String::new()
                }
            );
        }
    }
    if let Some(p) = &result.prereg {
        let _ = writeln!(
            text,
            "\npre-registration {} (sha256 {}), predicted Δ {}:",
            p.name,
            p.sha256,
            p.predicted.name()
        );
        if p.deviations.is_empty() {
            let _ = writeln!(text, "  no deviation from the frozen design");
        } else {
            let _ = writeln!(
                text,
                "  DISCLOSED DEVIATIONS from the frozen design ({}):",
                p.deviations.len()
            );
            for d in &p.deviations {
                let _ = writeln!(text, "  - {d}");
            }
        }
        let qualifier = if p.with_deviations {
            format!(
                ", reached with {} disclosed deviation{}",
                p.deviations.len(),
                if p.deviations.len() == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        for c in family.iter().filter(|c| c.in_family) {
            let _ = writeln!(
                text,
                "  {} ({}): {} under the frozen rule (CI excludes 0 on the predicted side and sign-flip p < 0.05){qualifier}",
                c.agent,
                c.quota
                    .map_or("free retries".into(), |q| format!("quota {q}")),
                if c.decision == Some(true) {
                    "CONFIRMED"
                } else {
                    "not confirmed"
                }
            );
        }
        for c in family.iter().filter(|c| !c.in_family) {
            let _ = writeln!(
                text,
                "  {} ({}): exploratory (outside the pre-registered family), no decision",
                c.agent,
                c.quota
                    .map_or("free retries".into(), |q| format!("quota {q}")),
            );
        }
    }
    text
}

/// One card's verdicts as `benchaudit audit` prints them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CardVerdicts {
    /// Target name.
    pub target: String,
    /// Criterion sensitivity: pass, fail or not tested.
    pub criterion_sensitivity: &'static str,
    /// Ownership completeness.
    pub ownership: &'static str,
    /// Replay.
    pub replay: &'static str,
    /// The licensed claim.
    pub licensed_claim: &'static str,
    /// The tasks it holds on, when a stage limits it ("on T1, …; T7 excluded: scale-bound").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim_scope: Option<String>,
    /// Why a stage was not probed when a hook failed or refused (the first such cause), so the
    /// console says it and not only the card.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_probed_because: Option<String>,
}

/// Longest cause the console repeats from a card.
const CAUSE_CHARS: usize = 400;

/// The first not-probed cell's evidence when it reports a hook that failed or a refusal.
fn hook_cause(c: &benchaudit_audit::Card) -> Option<String> {
    [&c.criterion_sensitivity, &c.ownership, &c.replay]
        .into_iter()
        .find(|cell| {
            cell.status == benchaudit_audit::Status::NotProbed
                && (cell.evidence.contains("hook failed")
                    || cell.evidence.contains("cannot be loaded")
                    || cell.evidence.contains("sandbox")
                    || cell.evidence.contains("model-graded"))
        })
        .map(|cell| {
            let e = &cell.evidence;
            match e.char_indices().nth(CAUSE_CHARS) {
                Some((i, _)) => format!("{}…", &e[..i]),
                None => e.clone(),
            }
        })
}

/// What `benchaudit audit` prints: each card's verdicts, the oracle checks, the number guard on
/// both documents and where they are. `--json` prints it as it is; the text is
/// [`AuditSummary::text`].
#[derive(Debug, Clone, Serialize)]
pub struct AuditSummary {
    /// The output folder.
    pub out: std::path::PathBuf,
    /// The seeds of every cell.
    pub seeds: Vec<u64>,
    /// One entry per card.
    pub cards: Vec<CardVerdicts>,
    /// The audit's checks of its own numbers.
    pub oracle_checks: OracleChecks,
    /// The number guard on card.md and report.html.
    pub number_guard: DocumentGuards,
    /// Files written, relative to `out`.
    pub files: [&'static str; 5],
    /// Per agent-benchmark target: each stage not probed with its cause, and the do-nothing
    /// floor per group; per `--model` run through an external target, what ran or why not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Every oracle check passed and both documents passed the guard.
    pub passed: bool,
    /// Wall time of the whole command.
    pub seconds: f64,
}

/// The number guard's verdict on both documents of an audit.
#[derive(Debug, Clone, Serialize)]
pub struct DocumentGuards {
    /// On card.md.
    #[serde(rename = "card.md")]
    pub card_md: benchaudit_audit::guard::GuardReport,
    /// On report.html.
    #[serde(rename = "report.html")]
    pub report_html: benchaudit_audit::guard::GuardReport,
}

/// The oracle checks of [`AuditSummary`].
#[derive(Debug, Clone, Serialize)]
pub struct OracleChecks {
    /// Checks that passed.
    pub passed: usize,
    /// All checks.
    pub total: usize,
    /// The ones that failed.
    pub failed: Vec<benchaudit_audit::Check>,
}

impl AuditSummary {
    /// Summarises an audit written to `out` in `seconds`.
    pub fn of(
        report: &benchaudit_audit::AuditReport,
        written: &crate::card::CardOutput,
        out: &std::path::Path,
        seconds: f64,
    ) -> AuditSummary {
        let checks = &report.comtrade.checks;
        let passed = checks.iter().filter(|c| c.pass).count();
        let cards = report
            .cards()
            .iter()
            .map(|c| CardVerdicts {
                target: c.target.clone(),
                criterion_sensitivity: c.criterion_sensitivity.status.label(),
                ownership: c.ownership.status.label(),
                replay: c.replay.status.label(),
                licensed_claim: c.licensed_claim.label(),
                claim_scope: c.claim_scope.as_ref().map(|s| s.label()),
                not_probed_because: hook_cause(c),
            })
            .collect();
        AuditSummary {
            out: out.to_path_buf(),
            seeds: report.comtrade.seeds.clone(),
            cards,
            oracle_checks: OracleChecks {
                passed,
                total: checks.len(),
                failed: checks.iter().filter(|c| !c.pass).cloned().collect(),
            },
            number_guard: DocumentGuards {
                card_md: written.guard_markdown.clone(),
                report_html: written.guard_html.clone(),
            },
            files: [
                "card.md",
                "card.json",
                "audit.json",
                "report.html",
                "figures/",
            ],
            notes: trajectory_notes(report),
            passed: passed == checks.len() && written.passed(),
            seconds,
        }
    }

    /// The text `benchaudit audit` prints.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for c in &self.cards {
            let _ = writeln!(
                out,
                "{}\n  criterion sensitivity: {}\n  ownership:             {}\n  replay:                {}\n  licensed claim:        {}",
                c.target, c.criterion_sensitivity, c.ownership, c.replay, c.licensed_claim
            );
            if let Some(scope) = &c.claim_scope {
                let _ = writeln!(out, "                         {scope}");
            }
            if let Some(cause) = &c.not_probed_because {
                let _ = writeln!(out, "  not probed because:    {cause}");
            }
        }
        for n in &self.notes {
            let _ = writeln!(out, "{n}");
        }
        let checks = &self.oracle_checks;
        let _ = writeln!(
            out,
            "oracle checks: {}/{} pass",
            checks.passed, checks.total
        );
        for c in &checks.failed {
            let _ = writeln!(
                out,
                "  FAILED {}: expected {}, observed {}",
                c.name, c.expected, c.observed
            );
        }
        let verdict =
            |g: &benchaudit_audit::guard::GuardReport| if g.passed() { "pass" } else { "FAIL" };
        let (md, html) = (&self.number_guard.card_md, &self.number_guard.report_html);
        let _ = writeln!(
            out,
            "number guard: card.md {} ({} numbers), report.html {} ({} numbers)",
            verdict(md),
            md.checked,
            verdict(html),
            html.checked
        );
        for v in md.violations.iter().chain(&html.violations) {
            let _ = writeln!(
                out,
                "  {} at line {}: {}",
                v.number.text, v.number.line, v.context
            );
        }
        let unlisted = md.unlisted + html.unlisted;
        if unlisted > 0 {
            let _ = writeln!(out, "  … and {unlisted} more not listed");
        }
        let _ = writeln!(
            out,
            "wrote {} ({}) in {:.2} s",
            self.out.display(),
            self.files.join(", "),
            self.seconds
        );
        out
    }
}

/// The console lines of the agent-benchmark targets: a failed hook's cause (the cards only say
/// "not probed"), and the do-nothing floor of each probed group.
fn trajectory_notes(report: &benchaudit_audit::AuditReport) -> Vec<String> {
    let mut out = Vec::new();
    for t in &report.trajectories {
        let a = &t.audit;
        for f in &a.failures {
            out.push(format!("{}: not probed: {f}", a.target));
        }
        let floors: Vec<String> = a
            .groups
            .iter()
            .filter(|g| g.floor.played > 0)
            .map(|g| format!("{} {} of {}", g.name, g.floor.passed, g.floor.played))
            .collect();
        if !floors.is_empty() {
            out.push(format!(
                "{}: do-nothing floor ({}): {}",
                a.target,
                a.groups
                    .first()
                    .map_or("reward", |g| g.floor.component.as_str()),
                floors.join(", ")
            ));
        }
        for c in &a.comparisons {
            if let Some(why) = &c.not_probed {
                out.push(format!("{}: {} not run: {why}", a.target, c.model));
            }
        }
    }
    // `--model` through an Inspect task: what ran, or why not, so a failed endpoint shows here.
    for t in &report.answers {
        let a = &t.audit;
        for m in &a.model_runs {
            let line = match &m.not_probed {
                Some(why) => format!("not run: {why}"),
                None => {
                    let scored: Vec<String> = (m.scorers.iter())
                        .filter(|s| s.excluded.is_none())
                        .map(|s| {
                            let mean = s.mean.map_or("-".into(), |x| format!("{x:.3}"));
                            format!(
                                "{} {} of {} trials scored, mean {mean}",
                                s.name,
                                s.scored,
                                s.scored + s.unscored
                            )
                        })
                        .collect();
                    format!(
                        "{} sample(s) × {} seed(s) through the task ({}; {} of {} model requests failed); logs in {}",
                        m.sample_count,
                        m.seed_count,
                        scored.join("; "),
                        m.failed_requests,
                        m.requests,
                        m.log_folder().unwrap_or("none kept")
                    )
                }
            };
            out.push(format!("{}: {}: {line}", a.target, m.model));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use benchaudit_agents::{Level, Outcome, RuleKind};
    use benchaudit_runs::{Plan, Player, run_all};

    use super::RunSummary;

    #[test]
    fn run_summary_aligns_counts_overflows_and_shows_infra_both_ways() {
        let t3 = benchaudit_comtrade::task("T3_duplicates").unwrap();
        let plan = Plan::new(
            vec![Player::rule(RuleKind::Oracle)],
            vec![Level::L2],
            vec![t3],
            (0..4).collect(),
        );
        let mut records = run_all(&plan, 1);
        records[0].outcome = Outcome::InfraError;
        records[0].scores = None;
        records[1].outcome = Outcome::ContextOverflow;
        let text = RunSummary::of(&records).text();
        let lines: Vec<&str> = text.lines().collect();
        // Header and row columns line up (the level is padded like its header).
        assert_eq!(
            lines[0].find(" n "),
            Some(lines[1].find(" 3 ").unwrap()),
            "{text}"
        );
        assert_eq!(lines[0].len(), lines[1].len(), "{text}");
        assert!(
            lines[1].starts_with("oracle           L2         3    1.000"),
            "{text}"
        );
        assert!(
            lines[1].ends_with("       1      1"),
            "overflow 1, infra 1: {text}"
        );
        // Three scored episodes of F1 1: 1.000 without the infra error, 0.750 with it as 0.
        assert!(
            text.contains(
                "oracle L2: 1.000 excluded, 0.750 as 0 (1 of 4 episodes were infra errors)"
            ),
            "{text}"
        );
    }
}
