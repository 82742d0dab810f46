//! The terminal tables of `benchaudit run` and `benchaudit ab`: short summaries of records and
//! of a design's analysis (the full numbers are in the ledger, `stats.json` and `ab.json`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use benchaudit_agents::{EpisodeRecord, Level, Outcome};
use benchaudit_runs::{AbResult, Design, DesignKind, format_seeds};

use crate::figures::{num, num_or_no_data};

/// The table `benchaudit run` prints: per (policy, level) the episodes, mean F1, judge (on the
/// 0–1 scale every table uses) and coverage, submissions, context overflows and infra errors.
/// Infra errors are excluded from the means and also shown counted as 0, so neither reading
/// hides them; each is listed.
pub fn run_summary(records: &[EpisodeRecord]) -> String {
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
            acc.judge += s.judge_total / 100.0;
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
    for ((policy, level), a) in &groups {
        let cov = if a.coverage.1 > 0 {
            format!("{:.3}", a.coverage.0 / a.coverage.1 as f64)
        } else {
            "-".into()
        };
        let mean = |sum: f64| num_or_no_data((a.n > 0).then(|| sum / a.n as f64));
        let _ = writeln!(
            out,
            "{policy:<16} {:<5} {:>6} {:>8} {:>9} {cov:>9} {:>10} {:>8} {:>6}",
            level.to_string(),
            a.n,
            mean(a.f1),
            mean(a.judge),
            format!("{}/{}", a.submitted, a.n),
            a.overflow,
            a.infra
        );
    }
    let with_infra: Vec<_> = groups.iter().filter(|(_, a)| a.infra > 0).collect();
    if !with_infra.is_empty() {
        let _ = writeln!(
            out,
            "\nmean F1 with infra errors excluded (above) and counted as 0:"
        );
        for ((policy, level), a) in with_infra {
            let all = a.n + a.infra;
            let excluded = num_or_no_data((a.n > 0).then(|| a.f1 / a.n as f64));
            let _ = writeln!(
                out,
                "  {policy} {level}: {excluded} excluded, {} as 0 ({} of {all} episodes were infra errors)",
                num(a.f1 / all as f64),
                a.infra
            );
        }
    }
    let infra: Vec<&EpisodeRecord> = records
        .iter()
        .filter(|r| r.outcome == Outcome::InfraError)
        .collect();
    if !infra.is_empty() {
        let _ = writeln!(out, "\ninfra errors:");
        for r in infra {
            let _ = writeln!(
                out,
                "  {} {} {} seed {}: {}",
                r.key.policy,
                r.key.level,
                r.key.task_id,
                r.key.seed,
                r.error.as_deref().unwrap_or("?")
            );
        }
    }
    out
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
                "    reliability gap (mean at dose 0 − worst at dose 1): {:.3}",
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use benchaudit_agents::{Level, Outcome, RuleKind};
    use benchaudit_runs::{Plan, Player, run_all};

    use super::run_summary;

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
        let text = run_summary(&records);
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
