//! The blocks of a run report.

use benchaudit_agents::Level;

use super::paired::paired_blocks;
use super::{
    Drawn, figures_with, pooled_sort, settings_paragraph, summary_cells, summary_header,
    summary_table,
};
use crate::doc::Align::{Left as L, Right as R};
use crate::doc::{Block, tagged};
use crate::figures::{num, num_or_no_data};
use crate::model::{CellStats, RunStats};

/// A level-2 section: heading, one paragraph, one table.
fn section(heading: &str, text: String, table: Block) -> [Block; 3] {
    [
        Block::Heading(2, heading.to_string()),
        Block::Paragraph(text),
        table,
    ]
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
        "Column `shortfall` is the worst-case shortfall, mean − worst, of the row's own episodes (it is not the \
         reliability gap, the static mean minus the worst case at the hardest difficulty level, which needs both levels: see Degradation). Pooled rows' CIs \
         are stratified bootstrap intervals (seeds resampled within each task, the task mix fixed); a task's CI resamples its seeds."
            .to_string(),
    ));

    b.push(Block::Heading(2, "Pooled over tasks".to_string()));
    // A row: label, level, the third column, then the summary's cells at their JSON path.
    let row = |label: &str, level: Level, third: String, summary, shortfall: f64, base: String| {
        (
            vec![label.to_string(), level.to_string(), third],
            summary,
            shortfall,
            base,
        )
    };
    let pooled = pooled_sort(&stats.pooled).into_iter().map(|p| {
        let i = (stats.pooled.iter().position(|q| std::ptr::eq(q, p))).unwrap_or_default();
        let tasks = tagged(p.tasks, &format!("/pooled/{i}/tasks"));
        let (level, shortfall) = (p.condition.level, p.shortfall.shortfall);
        row(
            &p.label,
            level,
            tasks,
            &p.summary,
            shortfall,
            format!("/pooled/{i}"),
        )
    });
    b.push(summary_table(s, &["policy", "level", "tasks"], pooled));
    b.extend(figures_with(figures, "spectrum_"));

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
    let mut cells: Vec<(usize, &CellStats)> = stats.cells.iter().enumerate().collect();
    cells.sort_by(|(_, a), (_, b)| {
        rank(&a.label, a.condition.level)
            .cmp(&rank(&b.label, b.condition.level))
            .then_with(|| a.task_id.cmp(&b.task_id))
    });
    let per_task = cells.iter().map(|&(i, c)| {
        let task = format!("`{}`", c.task_id);
        let (base, shortfall) = (format!("/cells/{i}"), c.shortfall.shortfall);
        row(
            &c.label,
            c.condition.level,
            task,
            &c.summary,
            shortfall,
            base,
        )
    });
    b.push(summary_table(s, &["policy", "level", "task"], per_task));
    b.extend(figures_with(figures, "heatmap_"));

    if !stats.level_shortfalls.is_empty() {
        let rows = stats
            .level_shortfalls
            .iter()
            .enumerate()
            .map(|(i, g)| {
                vec![
                    g.label.clone(),
                    g.task_id
                        .as_ref()
                        .map_or_else(|| "all tasks".to_string(), |t| format!("`{t}`")),
                    g.scaffolded_level.to_string(),
                    tagged(
                        num(g.shortfall.mean),
                        &format!("/level_shortfalls/{i}/shortfall/mean"),
                    ),
                    g.unscaffolded_level.to_string(),
                    tagged(
                        num(g.shortfall.worst),
                        &format!("/level_shortfalls/{i}/shortfall/worst"),
                    ),
                    tagged(
                        num(g.shortfall.shortfall),
                        &format!("/level_shortfalls/{i}/shortfall/shortfall"),
                    ),
                ]
            })
            .collect();
        let columns = [
            ("policy", L),
            ("task", L),
            ("scaffolded level", L),
            ("mean", R),
            ("unscaffolded level", L),
            ("worst", R),
            ("shortfall", R),
        ];
        let text = "Worst-case shortfall across levels: the mean at the most scaffolded level present minus the worst case at the \
             least scaffolded level present, pooled over tasks and per task. Scaffolding levels are not difficulty levels of one \
             environment, so this is not the reliability gap.";
        b.extend(section(
            "Across scaffolding levels",
            text.into(),
            Block::table(&columns, rows),
        ));
        b.extend(figures_with(figures, "scaffolding"));
    }

    if !stats.scorers.is_empty() {
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
        let columns = [
            ("policy", L),
            ("level", L),
            ("n", R),
            ("ground-truth F1", R),
            ("judge (0–1)", R),
        ];
        let text = "Every episode is scored twice. The legacy judge grades the shape of the submission and its self-report; \
             ground-truth F1 grades the records against the seeded canonical set. Means over scored episodes:";
        b.extend(section(
            "Judge vs ground truth",
            text.into(),
            Block::table(&columns, rows),
        ));
        b.extend(figures_with(figures, "scorers_"));
    }

    if let Some(j) = &stats.joint {
        let text = format!(
            "Means over the (task, seed) episodes each policy has at both L0 and L2. At L0, {} of {} policy pairs \
             submitted byte-identical payloads (equal SHA256 hashes) on the same (task, seed). Spread across policies (max − min): \
             L0 judge {}, L0 ground truth {}, L2 judge {}, L2 ground truth {}.",
            j.l0_identical,
            j.l0_pairs,
            num_or_no_data(j.spread.l0_judge),
            num_or_no_data(j.spread.l0_truth),
            num_or_no_data(j.spread.l2_judge),
            num_or_no_data(j.spread.l2_truth)
        );
        let rows = j
            .rows
            .iter()
            .map(|r| {
                let cells = [r.l0_judge, r.l0_truth, r.l2_judge, r.l2_truth].map(num_or_no_data);
                [vec![r.label.clone(), r.n.to_string()], cells.to_vec()].concat()
            })
            .collect();
        let columns = [
            ("policy", L),
            ("n", R),
            ("L0 judge", R),
            ("L0 ground truth", R),
            ("L2 judge", R),
            ("L2 ground truth", R),
        ];
        let heading = "Joint intervention: harness × scorer";
        b.extend(section(heading, text, Block::table(&columns, rows)));
        b.extend(figures_with(figures, "joint"));
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
            "/ab",
        ));
        b.extend(figures_with(figures, "forest"));
    }

    if !stats.degradation.is_empty() {
        b.push(Block::Heading(2, "Degradation".to_string()));
        b.push(Block::Paragraph(
            "Constant-stress doses pooled over tasks. A curve whose lowest dose is 0 (the static environment) has a \
             reliability gap: the static mean minus the worst case at the highest (hardest) dose. A curve without dose 0 shows \
             the mean at its lowest dose minus that worst case instead, as the shortfall from the lowest dose."
                .to_string(),
        ));
        for (ci, c) in stats.degradation.iter().enumerate() {
            b.push(Block::Heading(
                3,
                if c.is_reliability_gap() {
                    format!(
                        "{} (reliability gap {})",
                        c.label,
                        tagged(num(c.gap.gap), &format!("/degradation/{ci}/gap/gap"))
                    )
                } else {
                    format!(
                        "{} (shortfall from the lowest dose {})",
                        c.label,
                        tagged(num(c.gap.gap), &format!("/degradation/{ci}/gap/gap"))
                    )
                },
            ));
            let (mut header, mut align) = summary_header(s, &["dose"]);
            header.pop();
            align.pop();
            let rows = c
                .points
                .iter()
                .enumerate()
                .map(|(k, p)| {
                    let mut row = vec![format!("{}", p.dose)];
                    row.extend(summary_cells(
                        &p.summary,
                        &format!("/degradation/{ci}/points/{k}"),
                    ));
                    row
                })
                .collect();
            b.push(Block::Table {
                header,
                align,
                rows,
            });
        }
        b.extend(figures_with(figures, "degradation"));
    }

    b.extend(super::extras::extra_blocks(stats, figures));

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
