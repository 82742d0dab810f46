//! Paired tables (A/B arms within a run, run-vs-run comparisons) and the comparison report.

use super::{Drawn, figure_block, interval, level_pct, p_value};
use crate::doc::{Align, Block};
use crate::figures::num;
use crate::model::{CompareStats, PairedRow, PairedSection, Settings};

pub(super) fn paired_blocks(
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
