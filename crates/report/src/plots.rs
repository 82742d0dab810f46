//! Which figures a report draws, built from `stats.json` structs only.
//!
//! Exists to decide what the data supports — the spectrum, the heatmap and the scorer
//! contrast at every level; the scaffolding spectrum with several levels; the 2×2 panel with
//! L0 and L2; the forest plot with constant/escalating arms or a run comparison; the
//! degradation curve with dose arms — and to hand each figure function exactly the numbers
//! `stats.json` holds.

use std::collections::BTreeMap;
use std::path::Path;

use benchaudit_agents::Level;
use benchaudit_audit::joint::Joint;

use crate::error::Result;
use crate::figures::{
    self, DegradationData, DegradationPoint, DegradationSeries, ForestData, ForestRow, HeatmapData,
    JointPanelData, JointSeries, PassKData, PassKPanel, ProbeBarsData, Rendered, ScaffoldingData,
    SpectrumData, SpectrumRow,
};
use crate::model::{CompareStats, FigureInfo, PairedRow, PooledStats, RunStats};

/// Subdirectory of the report directory that holds the figures.
pub const FIGURE_DIR: &str = "figures";

/// A figure written with a report: its entry in `stats.json` and the rendered files.
pub struct Written {
    /// The `stats.json` entry.
    pub info: FigureInfo,
    /// The rendered figure (SVG text for inlining).
    pub rendered: Rendered,
}

/// `path` relative to the report directory, with `/` separators (it is a link in the report).
fn relative(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    format!("{FIGURE_DIR}/{file}")
}

fn written(id: &str, kind: &str, title: String, rendered: Rendered) -> Written {
    Written {
        info: FigureInfo {
            id: id.to_string(),
            kind: kind.to_string(),
            title,
            svg: relative(&rendered.svg_path),
            png: relative(&rendered.png_path),
            width: rendered.width,
            height: rendered.height,
        },
        rendered,
    }
}

/// Pooled rows at `level`, highest mean first.
fn at_level(stats: &RunStats, level: Level) -> Vec<&PooledStats> {
    let mut rows: Vec<&PooledStats> = stats
        .pooled
        .iter()
        .filter(|p| p.condition.level == level)
        .collect();
    rows.sort_by(|a, b| {
        b.summary
            .mean
            .total_cmp(&a.summary.mean)
            .then_with(|| a.label.cmp(&b.label))
    });
    rows
}

/// Draws every figure a run's data supports into `out/figures`.
///
/// Exists as the single decision of which run figures exist.
///
/// # Errors
/// A figure that cannot be drawn or written.
pub fn run_figures(stats: &RunStats, out: &Path) -> Result<Vec<Written>> {
    let dir = out.join(FIGURE_DIR);
    let s = &stats.settings;
    let mut figs = Vec::new();
    for &level in &stats.levels {
        let rows = at_level(stats, level);
        if rows.is_empty() {
            continue;
        }
        let title = format!("Reliability spectrum, {level}: {}", s.metric_label);
        let data = SpectrumData {
            title: title.clone(),
            x_label: format!("{} per episode (all tasks pooled)", s.metric_label),
            alpha: s.alpha,
            rows: rows
                .iter()
                .map(|p| SpectrumRow {
                    label: p.label.clone(),
                    n: p.summary.n,
                    worst: p.summary.worst,
                    q1: p.five.q1,
                    median: p.five.median,
                    q3: p.five.q3,
                    max: p.five.max,
                    mean: p.summary.mean,
                    cvar: p.summary.cvar,
                })
                .collect(),
        };
        let id = format!("spectrum_{level}");
        figs.push(written(
            &id,
            "spectrum",
            title,
            figures::write(&data, &dir, &id)?,
        ));

        let tasks: Vec<String> = {
            let mut t: Vec<String> = stats
                .cells
                .iter()
                .filter(|c| c.condition.level == level)
                .map(|c| c.task_id.clone())
                .collect();
            t.sort_by(|a, b| crate::order::natural(a, b));
            t.dedup();
            t
        };
        let values = rows
            .iter()
            .map(|p| {
                tasks
                    .iter()
                    .map(|t| {
                        stats
                            .cells
                            .iter()
                            .find(|c| c.condition == p.condition && &c.task_id == t)
                            .map(|c| c.summary.mean)
                    })
                    .collect()
            })
            .collect();
        let title = format!("Mean {} per task, {level}", s.metric_label);
        let data = HeatmapData {
            title: title.clone(),
            row_labels: rows.iter().map(|p| p.label.clone()).collect(),
            col_labels: tasks,
            values,
            value_label: format!("mean {} over seeds", s.metric_label),
            range: (0.0, 1.0),
        };
        let id = format!("heatmap_{level}");
        figs.push(written(
            &id,
            "heatmap",
            title,
            figures::write(&data, &dir, &id)?,
        ));

        let contrast: Vec<_> = rows
            .iter()
            .filter_map(|p| stats.scorers.iter().find(|c| c.condition == p.condition))
            .collect();
        if !contrast.is_empty() {
            let title = format!("Judge vs ground truth per policy, {level}");
            let data = ProbeBarsData {
                title: title.clone(),
                kinds: contrast.iter().map(|c| c.label.clone()).collect(),
                judge: contrast.iter().map(|c| c.judge_mean).collect(),
                truth: contrast.iter().map(|c| c.f1_mean).collect(),
                judge_label: "legacy judge (0–1, mean)".to_string(),
                truth_label: "ground-truth F1 (mean)".to_string(),
                y_label: "mean score over episodes".to_string(),
            };
            let id = format!("scorers_{level}");
            figs.push(written(
                &id,
                "probe",
                title,
                figures::write(&data, &dir, &id)?,
            ));
        }
    }

    if stats.levels.len() > 1 {
        let mut by_label: BTreeMap<&str, BTreeMap<Level, f64>> = BTreeMap::new();
        for p in &stats.pooled {
            by_label
                .entry(p.label.as_str())
                .or_default()
                .insert(p.condition.level, p.summary.mean);
        }
        // Best first at the least scaffolded level (where models separate); absent there, last.
        let mut models: Vec<(&str, &BTreeMap<Level, f64>)> =
            by_label.iter().map(|(l, m)| (*l, m)).collect();
        let key = |m: &BTreeMap<Level, f64>| m.last_key_value().map(|(l, v)| (*l, *v));
        models.sort_by(|a, b| match (key(a.1), key(b.1)) {
            (Some((la, va)), Some((lb, vb))) => lb
                .cmp(&la)
                .then(vb.total_cmp(&va))
                .then_with(|| a.0.cmp(b.0)),
            _ => a.0.cmp(b.0),
        });
        let title = format!("Scaffolding spectrum: mean {} per level", s.metric_label);
        let data = ScaffoldingData {
            title: title.clone(),
            models: models.iter().map(|(l, _)| (*l).to_string()).collect(),
            levels: stats.levels.iter().map(Level::to_string).collect(),
            values: models
                .iter()
                .map(|(_, m)| stats.levels.iter().map(|l| m.get(l).copied()).collect())
                .collect(),
            y_label: format!("mean {}", s.metric_label),
            note: Some(
                "all tasks and seeds pooled per level; n/a = not run at that level".to_string(),
            ),
        };
        figs.push(written(
            "scaffolding",
            "scaffolding",
            title,
            figures::write(&data, &dir, "scaffolding")?,
        ));
    }

    if let Some(j) = &stats.joint {
        let title = "Joint intervention: harness × scorer".to_string();
        let data = joint_panel(
            j,
            title.clone(),
            "legacy judge (0–1)",
            "mean over the (task, seed) episodes each policy has at both levels",
        );
        figs.push(written(
            "joint",
            "joint",
            title,
            figures::write(&data, &dir, "joint")?,
        ));
    }

    if let Some(ab) = &stats.ab
        && !(ab.pooled.is_empty() && ab.rows.is_empty())
    {
        let title = "A/B: constant − escalating".to_string();
        let data = forest(
            title.clone(),
            format!("Δ {} = constant − escalating", s.metric_label),
            format!(
                "{:.0}% paired bootstrap CI (all tasks: stratified by task), Holm-adjusted p; positive = escalation penalty",
                s.level * 100.0
            ),
            &ab.pooled,
            &ab.rows,
        );
        figs.push(written(
            "forest",
            "forest",
            title,
            figures::write(&data, &dir, "forest")?,
        ));
    }

    if !stats.degradation.is_empty() {
        let title = format!("Degradation: {} by constant-stress dose", s.metric_label);
        let data = DegradationData {
            title: title.clone(),
            x_label: "constant-stress dose".to_string(),
            y_label: s.metric_label.clone(),
            note: format!(
                "line = mean, band = {:.0}% bootstrap CI stratified by task, dots = seeds (mean over tasks)",
                s.level * 100.0
            ),
            series: stats
                .degradation
                .iter()
                .map(|c| DegradationSeries {
                    label: c.label.clone(),
                    points: c
                        .points
                        .iter()
                        .map(|p| DegradationPoint {
                            dose: p.dose,
                            mean: p.summary.mean,
                            lo: p.summary.mean_ci.lo,
                            hi: p.summary.mean_ci.hi,
                        })
                        .collect(),
                    seeds: c.seeds.iter().map(|d| (d.dose, d.value)).collect(),
                })
                .collect(),
        };
        figs.push(written(
            "degradation",
            "degradation",
            title,
            figures::write(&data, &dir, "degradation")?,
        ));
    }

    if let Some(p) = &stats.pass_k {
        figs.push(pass_k_figure(p, s.level, &dir)?);
    }

    if let Some(c) = &stats.cost
        && c.rows.iter().any(|r| r.per_episode_usd.is_some())
    {
        let unknown: Vec<&str> = c
            .rows
            .iter()
            .filter(|r| r.per_episode_usd.is_none())
            .map(|r| r.label.as_str())
            .collect();
        let title = format!("Cost vs {}", s.metric_label);
        let data = figures::CostScatterData {
            title: title.clone(),
            y_label: format!("mean {}", s.metric_label),
            note: if unknown.is_empty() {
                "ringed = Pareto front (no condition as good for as little)".to_string()
            } else {
                format!(
                    "ringed = Pareto front; cost unknown, not drawn: {}",
                    unknown.join(", ")
                )
            },
            points: c
                .rows
                .iter()
                .filter_map(|r| {
                    r.per_episode_usd.map(|usd| figures::CostPoint {
                        label: format!("{} {}", r.label, r.condition.level),
                        usd,
                        mean: r.mean,
                        pareto: r.pareto,
                    })
                })
                .collect(),
        };
        figs.push(written(
            "cost",
            "cost",
            title,
            figures::write(&data, &dir, "cost")?,
        ));
    }
    Ok(figs)
}

/// pass@k and pass^k over k, one panel per condition, pooled over tasks with their CIs; the
/// dots of a panel are its tasks' own pass^k.
fn pass_k_figure(p: &crate::model::PassKSection, level: f64, dir: &Path) -> Result<Written> {
    let title = format!("pass@k and pass^k (success: metric ≥ {})", p.threshold);
    let point = |k: u64, ci: &benchaudit_stats::BootstrapCi| DegradationPoint {
        dose: k as f64,
        mean: ci.estimate,
        lo: ci.lo,
        hi: ci.hi,
    };
    let panels = p
        .rows
        .iter()
        .map(|r| PassKPanel {
            label: format!("{} {}", r.label, r.condition.level),
            at_k: (r.curve.pooled.iter())
                .map(|q| point(q.k, &q.pass_at_k))
                .collect(),
            hat_k: (r.curve.pooled.iter())
                .map(|q| point(q.k, &q.pass_hat_k))
                .collect(),
            tasks: r.curve.tasks.clone(),
        })
        .collect();
    let data = PassKData {
        title: title.clone(),
        note: format!(
            "line = mean over tasks, band = {:.0}% stratified bootstrap CI, dots = each task's pass^k",
            level * 100.0
        ),
        x_label: "k (trials)".to_string(),
        y_label: "probability".to_string(),
        panels,
    };
    Ok(written(
        "passk",
        "passk",
        title,
        figures::write(&data, dir, "passk")?,
    ))
}

/// The 2×2 panel of a [`Joint`], one dot per row (the report's and the card's).
pub fn joint_panel(j: &Joint, title: String, judge_label: &str, note: &str) -> JointPanelData {
    JointPanelData {
        title,
        row_labels: ["harness L0".to_string(), "harness L2".to_string()],
        col_labels: [judge_label.to_string(), "ground-truth F1".to_string()],
        note: note.to_string(),
        models: j
            .rows
            .iter()
            .map(|r| JointSeries {
                label: r.label.clone(),
                values: [[r.l0_judge, r.l0_truth], [r.l2_judge, r.l2_truth]],
            })
            .collect(),
    }
}

/// Forest rows: pooled rows first, then per-task rows when there are not too many to read
/// and they add something (with one task per row they repeat the pooled ones); each label
/// ends with the row's Holm-adjusted p within its table.
fn forest(
    title: String,
    x_label: String,
    note: String,
    pooled: &[PairedRow],
    rows: &[PairedRow],
) -> ForestData {
    const MAX_ROWS: usize = 40;
    let mut out: Vec<ForestRow> = pooled
        .iter()
        .map(|r| ForestRow {
            label: format!("{}, all tasks (Holm p {})", r.label, holm_text(r.p_holm)),
            estimate: r.delta,
            lo: r.delta_ci.lo,
            hi: r.delta_ci.hi,
        })
        .collect();
    if pooled.len() + rows.len() <= MAX_ROWS && rows.len() != pooled.len() {
        out.extend(rows.iter().map(|r| ForestRow {
            label: format!(
                "{}, {} (Holm p {})",
                r.label,
                r.task_id.as_deref().unwrap_or(""),
                holm_text(r.p_holm)
            ),
            estimate: r.delta,
            lo: r.delta_ci.lo,
            hi: r.delta_ci.hi,
        }));
    }
    ForestData {
        title,
        x_label,
        note,
        rows: out,
    }
}

/// A p-value as the tables print it: three decimals, scientific below 0.001.
fn holm_text(p: f64) -> String {
    if p >= 0.001 || p == 0.0 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// Draws the figures of a run comparison into `out/figures`.
///
/// Exists as the single decision of which comparison figures exist (the forest plot).
///
/// # Errors
/// A figure that cannot be drawn or written.
pub fn compare_figures(stats: &CompareStats, out: &Path) -> Result<Vec<Written>> {
    let dir = out.join(FIGURE_DIR);
    let s = &stats.settings;
    let c = &stats.comparison;
    let title = "Run B − run A, paired by seed".to_string();
    let data = forest(
        title.clone(),
        format!("Δ {} = B − A", s.metric_label),
        format!(
            "{:.0}% paired bootstrap CI (all tasks: stratified by task), Holm-adjusted p; positive = run B scores higher",
            s.level * 100.0
        ),
        &c.pooled,
        &c.rows,
    );
    Ok(vec![written(
        "forest",
        "forest",
        title,
        figures::write(&data, &dir, "forest")?,
    )])
}
