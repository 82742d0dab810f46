//! Paired tables (A/B arms within a run, run-vs-run comparisons) and the comparison report.

use super::{Drawn, figure_block, level_pct, p_value};
use crate::doc::{Align, Block, tagged};
use crate::figures::num;
use crate::model::{CompareStats, Interval, PairedRow, PairedSection, Settings};

pub(super) fn paired_blocks(
    section: &PairedSection,
    s: &Settings,
    a: &str,
    b_name: &str,
    convention: &str,
    path: &str,
) -> Vec<Block> {
    let mut b = vec![Block::Paragraph(format!(
        "{convention}. Pairs formed by {}: {} pairs; {} episodes of {a} and {} of {b_name} had no partner. \
         {} paired bootstrap CIs of the mean Δ and of Cliff's δ (pooled rows: stratified bootstrap, pairs resampled within \
         each task); p = two-sided sign-flip permutation test (exact enumeration \
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
    // `list` is the JSON pointer of the rows' array; every figure is tagged with its path.
    let table = |rows: &[PairedRow], with_task: bool, list: String| {
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
            .enumerate()
            .map(|(i, r)| {
                let at = |field: &str| format!("{list}/{i}/{field}");
                let pair = |ci: &Interval, field: &str| {
                    format!(
                        "[{}, {}]",
                        tagged(num(ci.lo), &at(&format!("{field}/lo"))),
                        tagged(num(ci.hi), &at(&format!("{field}/hi")))
                    )
                };
                let mut row = vec![r.label.clone()];
                if with_task {
                    row.push(
                        r.task_id
                            .as_ref()
                            .map_or_else(String::new, |t| format!("`{t}`")),
                    );
                }
                row.extend([
                    tagged(r.n, &at("n")),
                    tagged(num(r.mean_a), &at("mean_a")),
                    tagged(num(r.mean_b), &at("mean_b")),
                    tagged(num(r.delta), &at("delta")),
                    pair(&r.delta_ci, "delta_ci"),
                    tagged(p_value(r.p_value), &at("p_value")),
                    tagged(p_value(r.p_holm), &at("p_holm")),
                    tagged(num(r.cliffs_delta), &at("cliffs_delta")),
                    pair(&r.cliffs_ci, "cliffs_ci"),
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
        b.push(table(&section.pooled, false, format!("{path}/pooled")));
    }
    if !section.rows.is_empty() {
        b.push(Block::Heading(3, "Per task".to_string()));
        b.push(table(&section.rows, true, format!("{path}/rows")));
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
        "/comparison",
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
