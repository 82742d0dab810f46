//! Report prose and tables, built from `stats.json` structs only.
//!
//! Exists so every number a reader sees is a formatted field of [`RunStats`] or
//! [`CompareStats`]: nothing here computes a statistic, and numbers are printed with the
//! formats below so the number guard's normalisation accepts them (scores and intervals with
//! three decimals, p-values with three decimals or, below 0.001, in scientific notation,
//! counts as integers, α and τ as stored, the confidence level as a whole percentage).

use benchaudit_agents::Level;

use super::doc::{Align, Block, FigureBlock};
use super::model::{
    CompareStats, Interval, PairedRow, PairedSection, PooledStats, RunStats, Settings,
};
use crate::figures::{Rendered, num};

/// A figure as written, for embedding.
pub struct Drawn<'a> {
    /// Caption.
    pub caption: &'a str,
    /// SVG path relative to the report.
    pub svg: &'a str,
    /// PNG path relative to the report.
    pub png: &'a str,
    /// The rendered figure.
    pub rendered: &'a Rendered,
}

fn figure_block(d: &Drawn<'_>) -> Block {
    Block::Figure(FigureBlock {
        caption: d.caption.to_string(),
        svg: d.svg.to_string(),
        png: d.png.to_string(),
        inline_svg: d.rendered.svg.clone(),
    })
}

fn interval(i: &Interval) -> String {
    format!("[{}, {}]", num(i.lo), num(i.hi))
}

/// A p-value: three decimals, or two significant digits in scientific notation below 0.001
/// (so a tiny p never prints as a misleading 0.000).
fn p_value(p: f64) -> String {
    if p >= 0.001 || p == 0.0 {
        num(p)
    } else {
        format!("{p:.1e}")
    }
}

/// The confidence level as a percentage (0.95 → "95%").
fn level_pct(level: f64) -> String {
    format!("{:.0}%", level * 100.0)
}

fn r_header(tau: f64) -> String {
    format!("R@{tau}")
}

fn settings_paragraph(s: &Settings) -> String {
    let taus: Vec<String> = s.taus.iter().map(|t| format!("Reliability@{t}")).collect();
    format!(
        "Statistics: worst = minimum; CVaR@{} = mean of the ⌈α·n⌉ lowest values; {} = share of episodes scoring at least τ; \
         {} CI = seeded percentile bootstrap of the mean (B = {}, seed {}), bit-reproducible. \
         Boxes use quartiles by linear interpolation between order statistics.",
        s.alpha,
        taus.join(" and "),
        level_pct(s.level),
        s.resamples,
        s.seed
    )
}

fn pooled_sort(rows: &[PooledStats]) -> Vec<&PooledStats> {
    let mut v: Vec<&PooledStats> = rows.iter().collect();
    v.sort_by(|a, b| {
        a.condition
            .level
            .cmp(&b.condition.level)
            .then(b.summary.mean.total_cmp(&a.summary.mean))
            .then_with(|| a.label.cmp(&b.label))
    });
    v
}

fn summary_header(s: &Settings, leading: &[&str]) -> (Vec<String>, Vec<Align>) {
    let mut header: Vec<String> = leading.iter().map(|h| (*h).to_string()).collect();
    let mut align = vec![Align::Left; leading.len()];
    for h in [
        "n".to_string(),
        "mean".to_string(),
        format!("{} CI", level_pct(s.level)),
        "worst".to_string(),
        format!("CVaR@{}", s.alpha),
    ]
    .into_iter()
    .chain(s.taus.iter().map(|t| r_header(*t)))
    .chain(["gap".to_string()])
    {
        header.push(h);
        align.push(Align::Right);
    }
    (header, align)
}

fn summary_cells(s: &benchaudit_stats::Summary, gap: f64) -> Vec<String> {
    let mut cells = vec![
        s.n.to_string(),
        num(s.mean),
        format!("[{}, {}]", num(s.mean_ci.lo), num(s.mean_ci.hi)),
        num(s.worst),
        num(s.cvar),
    ];
    cells.extend(s.reliability.iter().map(|r| num(r.fraction)));
    cells.push(num(gap));
    cells
}

/// The blocks of a run report.
///
/// Exists as the one description of what report.md and report.html say about a run.
#[must_use]
pub fn run_blocks(stats: &RunStats, figures: &[Drawn<'_>]) -> Vec<Block> {
    let s = &stats.settings;
    let e = &stats.episodes;
    let mut b = vec![Block::Heading(
        1,
        format!("benchaudit report: `{}`", stats.source.run_dir),
    )];
    let levels: Vec<String> = stats.levels.iter().map(Level::to_string).collect();
    b.push(Block::Paragraph(format!(
        "Metric: {} (`--metric {}`). Levels: {}. {} policies, {} tasks, {} seeds, {} conditions.",
        s.metric_label,
        s.metric.flag(),
        levels.join(", "),
        stats.policy_count,
        stats.task_count,
        stats.seed_count,
        stats.conditions
    )));
    b.push(Block::Paragraph(format!(
        "Episodes: {} recorded, {} used; {} infra errors and {} without the metric excluded{}.",
        e.total,
        e.used,
        e.infra_errors,
        e.missing_metric,
        if stats.source.torn_last_line {
            "; a torn last ledger line was skipped"
        } else {
            ""
        }
    )));
    b.push(Block::Paragraph(settings_paragraph(s)));
    b.push(Block::Paragraph(
        "Reliability gap (column `gap`): each row is one condition at one level, so its static mean and its hardest-level \
         worst case come from the same episodes: gap = mean − worst. Across levels (below, when a policy was run at several) \
         the gap is the mean at the most scaffolded level present minus the worst case at the least scaffolded one."
            .to_string(),
    ));

    b.push(Block::Heading(2, "Pooled over tasks".to_string()));
    let (header, align) = summary_header(s, &["policy", "level", "tasks"]);
    let rows = pooled_sort(&stats.pooled)
        .into_iter()
        .map(|p| {
            let mut row = vec![
                p.label.clone(),
                p.condition.level.to_string(),
                p.tasks.to_string(),
            ];
            row.extend(summary_cells(&p.summary, p.gap.gap));
            row
        })
        .collect();
    b.push(Block::Table {
        header,
        align,
        rows,
    });
    for f in figures.iter().filter(|f| f.svg.contains("spectrum_")) {
        b.push(figure_block(f));
    }

    b.push(Block::Heading(2, "Per task".to_string()));
    let order: Vec<(&str, Level)> = pooled_sort(&stats.pooled)
        .iter()
        .map(|p| (p.label.as_str(), p.condition.level))
        .collect();
    let rank = |label: &str, level: Level| {
        order
            .iter()
            .position(|o| *o == (label, level))
            .unwrap_or(usize::MAX)
    };
    let mut cells: Vec<_> = stats.cells.iter().collect();
    cells.sort_by(|a, b| {
        rank(&a.label, a.condition.level)
            .cmp(&rank(&b.label, b.condition.level))
            .then_with(|| a.task_id.cmp(&b.task_id))
    });
    let (header, align) = summary_header(s, &["policy", "level", "task"]);
    let rows = cells
        .iter()
        .map(|c| {
            let mut row = vec![
                c.label.clone(),
                c.condition.level.to_string(),
                format!("`{}`", c.task_id),
            ];
            row.extend(summary_cells(&c.summary, c.gap.gap));
            row
        })
        .collect();
    b.push(Block::Table {
        header,
        align,
        rows,
    });
    for f in figures.iter().filter(|f| f.svg.contains("heatmap_")) {
        b.push(figure_block(f));
    }

    if !stats.level_gaps.is_empty() {
        b.push(Block::Heading(2, "Across scaffolding levels".to_string()));
        b.push(Block::Paragraph(
            "Reliability gap across levels: mean at the most scaffolded level present (static) minus the worst case at the \
             least scaffolded level present (hardest), pooled over tasks and per task."
                .to_string(),
        ));
        let header = [
            "policy",
            "task",
            "static level",
            "static mean",
            "hardest level",
            "hardest worst",
            "gap",
        ]
        .map(str::to_string)
        .to_vec();
        let align = vec![
            Align::Left,
            Align::Left,
            Align::Left,
            Align::Right,
            Align::Left,
            Align::Right,
            Align::Right,
        ];
        let rows = stats
            .level_gaps
            .iter()
            .map(|g| {
                vec![
                    g.label.clone(),
                    g.task_id
                        .as_ref()
                        .map_or_else(|| "all tasks".to_string(), |t| format!("`{t}`")),
                    g.static_level.to_string(),
                    num(g.gap.static_mean),
                    g.hardest_level.to_string(),
                    num(g.gap.hardest_worst),
                    num(g.gap.gap),
                ]
            })
            .collect();
        b.push(Block::Table {
            header,
            align,
            rows,
        });
        for f in figures.iter().filter(|f| f.svg.contains("scaffolding")) {
            b.push(figure_block(f));
        }
    }

    if !stats.scorers.is_empty() {
        b.push(Block::Heading(2, "Judge vs ground truth".to_string()));
        b.push(Block::Paragraph(
            "Every episode is scored twice. The legacy judge grades the shape of the submission and its self-report; \
             ground-truth F1 grades the records against the seeded canonical set. Means over scored episodes:"
                .to_string(),
        ));
        let header = ["policy", "level", "n", "ground-truth F1", "judge / 100"]
            .map(str::to_string)
            .to_vec();
        let align = vec![
            Align::Left,
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
        ];
        let rows = stats
            .scorers
            .iter()
            .map(|c| {
                vec![
                    c.label.clone(),
                    c.condition.level.to_string(),
                    c.n.to_string(),
                    num(c.f1_mean),
                    num(c.judge_mean),
                ]
            })
            .collect();
        b.push(Block::Table {
            header,
            align,
            rows,
        });
        for f in figures.iter().filter(|f| f.svg.contains("scorers_")) {
            b.push(figure_block(f));
        }
    }

    if let Some(j) = &stats.joint {
        b.push(Block::Heading(
            2,
            "Joint intervention: harness × scorer".to_string(),
        ));
        b.push(Block::Paragraph(format!(
            "Means over the (task, seed) episodes each policy has at both L0 and L2. At L0, {} of {} policy pairs \
             submitted byte-identical payloads (equal SHA256 hashes) on the same (task, seed). Spread across policies (max − min): \
             L0 judge {}, L0 ground truth {}, L2 judge {}, L2 ground truth {}.",
            j.l0_identical_pairs,
            j.l0_pairs,
            num(j.spread.l0_judge),
            num(j.spread.l0_f1),
            num(j.spread.l2_judge),
            num(j.spread.l2_f1)
        )));
        let header = [
            "policy",
            "n",
            "L0 judge",
            "L0 ground truth",
            "L2 judge",
            "L2 ground truth",
        ]
        .map(str::to_string)
        .to_vec();
        let align = vec![
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
        ];
        let rows = j
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.label.clone(),
                    r.n.to_string(),
                    num(r.l0_judge),
                    num(r.l0_f1),
                    num(r.l2_judge),
                    num(r.l2_f1),
                ]
            })
            .collect();
        b.push(Block::Table {
            header,
            align,
            rows,
        });
        for f in figures.iter().filter(|f| f.svg.contains("joint")) {
            b.push(figure_block(f));
        }
    }

    if let Some(ab) = &stats.ab {
        b.push(Block::Heading(
            2,
            "A/B: constant vs escalating stress".to_string(),
        ));
        b.extend(paired_blocks(
            ab,
            s,
            "constant",
            "escalating",
            "Δ = constant − escalating (positive = escalation penalty)",
        ));
        for f in figures.iter().filter(|f| f.svg.contains("forest")) {
            b.push(figure_block(f));
        }
    }

    if !stats.degradation.is_empty() {
        b.push(Block::Heading(2, "Degradation".to_string()));
        b.push(Block::Paragraph(
            "Constant-stress doses pooled over tasks; the curve's gap is the mean at the lowest dose minus the worst case at \
             the highest dose."
                .to_string(),
        ));
        for c in &stats.degradation {
            b.push(Block::Heading(
                3,
                format!("{} (gap {})", c.label, num(c.gap.gap)),
            ));
            let (mut header, mut align) = summary_header(s, &["dose"]);
            header.pop();
            align.pop();
            let rows = c
                .points
                .iter()
                .map(|p| {
                    let mut row = vec![format!("{}", p.dose)];
                    let mut cells = summary_cells(&p.summary, 0.0);
                    cells.pop();
                    row.extend(cells);
                    row
                })
                .collect();
            b.push(Block::Table {
                header,
                align,
                rows,
            });
        }
        for f in figures.iter().filter(|f| f.svg.contains("degradation")) {
            b.push(figure_block(f));
        }
    }

    // Infra errors are named one by one; episodes merely without the metric (e.g. coverage at
    // L2) are counted above and listed in stats.json.
    let infra: Vec<_> = stats
        .excluded
        .iter()
        .filter(|x| x.reason == "infra_error")
        .collect();
    if !infra.is_empty() {
        b.push(Block::Heading(2, "Infra errors".to_string()));
        b.push(Block::Paragraph(
            "Left out of every statistic (error messages are in stats.json, `excluded`):"
                .to_string(),
        ));
        b.push(Block::List(
            infra
                .iter()
                .map(|x| {
                    let arm = x
                        .arm
                        .as_ref()
                        .map(|a| format!(" [{a}]"))
                        .unwrap_or_default();
                    format!(
                        "{}{arm} {} `{}` seed {}",
                        x.policy, x.level, x.task_id, x.seed
                    )
                })
                .collect(),
        ));
    }

    b.push(Block::Heading(2, "Reproduce".to_string()));
    let taus: Vec<String> = s.taus.iter().map(|t| format!("{t}")).collect();
    b.push(Block::Paragraph(format!(
        "`benchaudit report {} --metric {} --alpha {} --tau {} --seed {} --resamples {}` rewrites these numbers bit for bit; \
         every number above is a field of stats.json (tool {} {}).",
        stats.source.run_dir,
        s.metric.flag(),
        s.alpha,
        taus.join(","),
        s.seed,
        s.resamples,
        stats.tool.name,
        stats.tool.version
    )));
    b
}

fn paired_blocks(
    section: &PairedSection,
    s: &Settings,
    a: &str,
    b_name: &str,
    convention: &str,
) -> Vec<Block> {
    let mut b = vec![Block::Paragraph(format!(
        "{convention}. Pairs formed by {}: {} pairs; {} episodes of {a} and {} of {b_name} had no partner. \
         {} paired bootstrap CIs of the mean Δ and of Cliff's δ; p = two-sided sign-flip permutation test (exact enumeration \
         or seeded Monte Carlo, see stats.json); Holm adjustment within each table.",
        section.paired_by,
        section.pairs,
        section.unpaired_a,
        section.unpaired_b,
        level_pct(s.level)
    ))];
    if !section.skipped.is_empty() {
        b.push(Block::Paragraph(format!(
            "Not paired (several arms of one side, ambiguous): {}.",
            section.skipped.join(", ")
        )));
    }
    let table = |rows: &[PairedRow], with_task: bool| {
        let mut header = vec!["comparison".to_string()];
        let mut align = vec![Align::Left];
        if with_task {
            header.push("task".to_string());
            align.push(Align::Left);
        }
        for h in [
            "n".to_string(),
            format!("mean {a}"),
            format!("mean {b_name}"),
            "Δ".to_string(),
            format!("{} CI", level_pct(s.level)),
            "p".to_string(),
            "p (Holm)".to_string(),
            "Cliff's δ".to_string(),
            format!("δ {} CI", level_pct(s.level)),
        ] {
            header.push(h);
            align.push(Align::Right);
        }
        let rows = rows
            .iter()
            .map(|r| {
                let mut row = vec![r.label.clone()];
                if with_task {
                    row.push(
                        r.task_id
                            .as_ref()
                            .map_or_else(String::new, |t| format!("`{t}`")),
                    );
                }
                row.extend([
                    r.n.to_string(),
                    num(r.mean_a),
                    num(r.mean_b),
                    num(r.delta),
                    interval(&r.delta_ci),
                    p_value(r.p_value),
                    p_value(r.p_holm),
                    num(r.cliffs_delta),
                    interval(&r.cliffs_ci),
                ]);
                row
            })
            .collect();
        Block::Table {
            header,
            align,
            rows,
        }
    };
    if !section.pooled.is_empty() {
        b.push(Block::Heading(3, "Pooled over tasks".to_string()));
        b.push(table(&section.pooled, false));
    }
    if !section.rows.is_empty() {
        b.push(Block::Heading(3, "Per task".to_string()));
        b.push(table(&section.rows, true));
    }
    b
}

/// The blocks of a run-vs-run comparison report.
///
/// Exists as the one description of what a comparison's report.md and report.html say.
#[must_use]
pub fn compare_blocks(stats: &CompareStats, figures: &[Drawn<'_>]) -> Vec<Block> {
    let s = &stats.settings;
    let c = &stats.comparison;
    let mut b = vec![Block::Heading(
        1,
        format!(
            "benchaudit comparison: `{}` (A) vs `{}` (B)",
            stats.source_a.run_dir, stats.source_b.run_dir
        ),
    )];
    b.push(Block::Paragraph(format!(
        "Metric: {} (`--metric {}`). Run A: {} episodes recorded, {} used. Run B: {} recorded, {} used. \
         Infra errors and episodes without the metric are excluded on both sides.",
        s.metric_label,
        s.metric.flag(),
        stats.episodes_a.total,
        stats.episodes_a.used,
        stats.episodes_b.total,
        stats.episodes_b.used
    )));
    b.extend(paired_blocks(
        c,
        s,
        "A",
        "B",
        "Δ = B − A (positive = run B scores higher)",
    ));
    for f in figures {
        b.push(figure_block(f));
    }
    b.push(Block::Heading(2, "Reproduce".to_string()));
    b.push(Block::Paragraph(format!(
        "`benchaudit report --compare {} {} --metric {} --seed {} --resamples {}`; every number above is a field of \
         stats.json (tool {} {}).",
        stats.source_a.run_dir,
        stats.source_b.run_dir,
        s.metric.flag(),
        s.seed,
        s.resamples,
        stats.tool.name,
        stats.tool.version
    )));
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values_never_print_as_zero() {
        assert_eq!(p_value(0.5), "0.500");
        assert_eq!(p_value(0.001953125), "0.002");
        assert_eq!(p_value(9.999e-6), "1.0e-5");
        assert_eq!(p_value(0.0), "0.000");
        assert_eq!(level_pct(0.95), "95%");
        assert_eq!(r_header(0.9), "R@0.9");
    }
}
