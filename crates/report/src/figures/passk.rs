//! pass@k and pass^k over k, one small panel per condition on shared axes.
//!
//! Why panels and not one plot: a run report may compare sixteen conditions, and their curves
//! sit on the same few values (1 and 0 above all), so in one plot they hide each other and
//! the task dots of every condition, spread apart to stay visible, left k's range. A panel per
//! condition holds two curves and its own tasks, always readable; the panels wrap into rows at
//! [`style::MAX_WIDTH`].

use std::collections::HashMap;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use benchaudit_stats::TaskTrials;

use super::degradation::DegradationPoint;
use super::style::{self, anchored, series_color};
use super::{DrawResult, Figure, bail, check_finite};

/// One condition's curves: pass@k and pass^k pooled over tasks, and each task's pass^k.
///
/// Exists so the caller passes the values stats.json holds, not raw episodes.
#[derive(Debug, Clone, PartialEq)]
pub struct PassKPanel {
    /// The condition (e.g. `oracle L2`), the panel's title.
    pub label: String,
    /// pass@k by k, with its interval.
    pub at_k: Vec<DegradationPoint>,
    /// pass^k by k, with its interval.
    pub hat_k: Vec<DegradationPoint>,
    /// Every task's trials: its dots are its curve's pass^k at each k ([`PassKPanel::dots`]),
    /// read from the curve stats.json writes rather than held (a dot per task and k).
    pub tasks: Vec<TaskTrials>,
}

impl PassKPanel {
    /// Every task's pass^k as (k, value), task by task, k ascending.
    pub fn dots(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.tasks
            .iter()
            .flat_map(|t| t.points().map(|q| (q.k as f64, q.pass_hat_k)))
    }
}

/// The pass@k / pass^k figure of a run report.
///
/// Exists to show, condition by condition, how fast "all k trials succeed" falls below "one
/// of k succeeds".
#[derive(Debug, Clone, PartialEq)]
pub struct PassKData {
    /// Title.
    pub title: String,
    /// The caption line under it (what the band and dots are).
    pub note: String,
    /// X axis description.
    pub x_label: String,
    /// Y axis description.
    pub y_label: String,
    /// One panel per condition.
    pub panels: Vec<PassKPanel>,
}

/// One panel's size in pixels, axes and title included.
const PANEL_W: u32 = 370;
/// Its height.
const PANEL_H: u32 = 270;
/// Where the panels start below the head and the key.
const TOP: u32 = 104;
/// Margin left and right of the grid.
const SIDE: u32 = 20;

/// The key under the title, once for every panel.
const KEY: [&str; 2] = [
    "pass@k: at least one of k trials succeeds",
    "pass^k: all k trials succeed (dots: tasks)",
];

impl PassKData {
    /// A panel's width: [`PANEL_W`], or more for a long condition label.
    fn panel_width(&self) -> crate::Result<u32> {
        let labels = style::max_width(self.panels.iter().map(|p| p.label.as_str()), style::LABEL)?;
        Ok(PANEL_W.max(labels + 90))
    }

    /// Panels per row: as many as fit in [`style::MAX_WIDTH`], at most one per condition.
    fn columns(&self) -> crate::Result<u32> {
        let fit = ((style::MAX_WIDTH - 2 * SIDE) / self.panel_width()?).max(1);
        Ok(fit
            .min(u32::try_from(self.panels.len()).unwrap_or(u32::MAX))
            .max(1))
    }

    /// The key's entries' widths (line, gap, text), and the whole key's.
    fn key_widths() -> crate::Result<([u32; 2], u32)> {
        let a = style::text_size(KEY[0], style::LABEL)?.0 + 32;
        let b = style::text_size(KEY[1], style::LABEL)?.0 + 32;
        Ok(([a, b], a + b + 40))
    }

    /// The largest k of any panel.
    fn k_max(&self) -> f64 {
        self.panels
            .iter()
            .flat_map(|p| p.at_k.iter().chain(&p.hat_k))
            .map(|p| p.dose)
            .fold(1.0, f64::max)
    }
}

/// A key under which two finite k are equal exactly when they are `==` (0 and −0 as one).
fn same_k(k: f64) -> u64 {
    if k == 0.0 { 0 } else { k.to_bits() }
}

/// Where a task's dot goes on the x axis: spread around its k by its rank among the tasks, at
/// most a quarter of the way to the next k, so it never leaves k's slot (nor the axis).
pub(crate) fn task_offset(rank: usize, tasks: usize) -> f64 {
    if tasks <= 1 {
        return 0.0;
    }
    let step = (0.5 / tasks as f64).min(0.08);
    (rank as f64 - (tasks as f64 - 1.0) / 2.0) * step
}

impl Figure for PassKData {
    fn validate(&self) -> crate::Result<()> {
        if self.panels.is_empty() {
            bail!("a pass@k figure needs at least one condition");
        }
        for p in &self.panels {
            if p.at_k.is_empty() || p.hat_k.is_empty() {
                bail!("condition {} has no k", p.label);
            }
            for q in p.at_k.iter().chain(&p.hat_k) {
                check_finite(&p.label, [&q.dose, &q.mean, &q.lo, &q.hi])?;
                if q.lo > q.hi {
                    bail!(
                        "condition {}: interval at k = {} is reversed",
                        p.label,
                        q.dose
                    );
                }
                if q.dose < 1.0 || q.dose.fract() != 0.0 {
                    bail!("condition {}: k = {} is not a whole k ≥ 1", p.label, q.dose);
                }
            }
            if let Some((k, v)) = p.dots().find(|(k, v)| !(k.is_finite() && v.is_finite())) {
                bail!(
                    "{} holds a non-finite value ({})",
                    p.label,
                    if k.is_finite() { v } else { k }
                );
            }
        }
        Ok(())
    }

    fn size(&self) -> crate::Result<(u32, u32)> {
        let cols = self.columns()?;
        let n = u32::try_from(self.panels.len()).unwrap_or(u32::MAX);
        let rows = n.div_ceil(cols);
        let key = Self::key_widths()?.1 + 2 * SIDE;
        Ok((
            (cols * self.panel_width()? + 2 * SIDE)
                .max(style::head_width(&self.title, Some(&self.note))?)
                .max(key),
            TOP + rows * PANEL_H + 16,
        ))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        style::head(root, &self.title, Some(&self.note))?;
        let (width, height) = root.dim_in_pixel();
        let at_color = series_color(0);
        let hat_color = series_color(1);
        let layout = |_| plotters::drawing::DrawingAreaErrorKind::LayoutError;
        let ([first, _], total) = Self::key_widths().map_err(layout)?;
        let left = i32::try_from(width.saturating_sub(total) / 2).unwrap_or(0);
        let starts = [left, left + i32::try_from(first + 40).unwrap_or(0)];
        for ((x, color), text) in starts.into_iter().zip([at_color, hat_color]).zip(KEY) {
            root.draw(&PathElement::new(
                vec![(x, 80), (x + 24, 80)],
                color.stroke_width(3),
            ))?;
            root.draw(&Text::new(
                text.to_string(),
                (x + 32, 80),
                anchored(style::text(style::LABEL), HPos::Left, VPos::Center),
            ))?;
        }
        let cols = self.columns().map_err(layout)? as usize;
        let rows = self.panels.len().div_ceil(cols);
        let grid_w = width.saturating_sub(2 * SIDE);
        let panel_w = grid_w / cols as u32;
        let k_max = self.k_max();
        let ys = self.panels.iter().flat_map(|p| {
            p.at_k
                .iter()
                .chain(&p.hat_k)
                .flat_map(|q| [q.lo, q.hi])
                .chain(p.dots().map(|(_, v)| v))
        });
        let (y_lo, y_hi) = style::axis_range(ys, 0.0, 1.0, 0.04);
        let x_labels = (k_max as usize).min(8);
        for (i, panel) in self.panels.iter().enumerate() {
            let (row, col) = (i / cols, i % cols);
            let x0 = SIDE + col as u32 * panel_w;
            let y0 = TOP + row as u32 * PANEL_H;
            let area = root.margin(
                y0,
                height.saturating_sub(y0 + PANEL_H),
                x0,
                width.saturating_sub(x0 + panel_w),
            );
            let bottom = row + 1 == rows || i + cols >= self.panels.len();
            let mut chart = ChartBuilder::on(&area)
                .caption(&panel.label, style::bold(style::LABEL))
                .margin(6)
                .x_label_area_size(if bottom { 44 } else { 24 })
                .y_label_area_size(if col == 0 { 52 } else { 36 })
                .build_cartesian_2d(0.5..k_max + 0.5, y_lo..y_hi)?;
            let mut mesh = chart.configure_mesh();
            style::house_mesh(&mut mesh, style::LABEL)
                .x_labels(x_labels)
                .y_labels(6)
                .x_label_formatter(&|x| {
                    if (x - x.round()).abs() < 1e-9 {
                        format!("{x:.0}")
                    } else {
                        String::new()
                    }
                })
                .y_label_formatter(&|y| format!("{y:.1}"));
            if bottom {
                mesh.x_desc(self.x_label.clone());
            }
            if col == 0 {
                mesh.y_desc(self.y_label.clone());
            }
            mesh.draw()?;
            for (points, color, filled) in [
                (&panel.at_k, at_color, false),
                (&panel.hat_k, hat_color, true),
            ] {
                let mut points = points.clone();
                points.sort_by(|a, b| a.dose.total_cmp(&b.dose));
                let band: Vec<(f64, f64)> = points
                    .iter()
                    .map(|p| (p.dose, p.hi))
                    .chain(points.iter().rev().map(|p| (p.dose, p.lo)))
                    .collect();
                chart.draw_series([Polygon::new(band, color.mix(0.16).filled())])?;
                chart.draw_series(LineSeries::new(
                    points.iter().map(|p| (p.dose, p.mean)),
                    color.stroke_width(if filled { 3 } else { 2 }),
                ))?;
                chart.draw_series(points.iter().map(|p| {
                    let style = if filled {
                        color.filled()
                    } else {
                        color.stroke_width(2)
                    };
                    Circle::new((p.dose, p.mean), 4, style)
                }))?;
            }
            // Each task's dots at its rank's offset from k, the same offset at every k: a dot's
            // rank is the number of dots before it at the same k, out of all dots at that k.
            let mut per_k: HashMap<u64, usize> = HashMap::new();
            for (k, _) in panel.dots() {
                *per_k.entry(same_k(k)).or_default() += 1;
            }
            let mut by_k: HashMap<u64, usize> = HashMap::new();
            chart.draw_series(panel.dots().map(|(k, v)| {
                let seen = by_k.entry(same_k(k)).or_default();
                let rank = *seen;
                *seen += 1;
                let tasks = per_k.get(&same_k(k)).copied().unwrap_or(0);
                Circle::new(
                    (k + task_offset(rank, tasks), v),
                    3,
                    hat_color.mix(0.5).filled(),
                )
            }))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn panel(label: &str, ks: u32, tasks: usize) -> PassKPanel {
        let point = |k: u32, v: f64| DegradationPoint {
            dose: f64::from(k),
            mean: v,
            lo: v,
            hi: v,
        };
        PassKPanel {
            label: label.into(),
            at_k: (1..=ks).map(|k| point(k, 1.0)).collect(),
            hat_k: (1..=ks).map(|k| point(k, 1.0)).collect(),
            tasks: (0..tasks)
                .map(|_| TaskTrials {
                    n: u64::from(ks),
                    successes: u64::from(ks),
                    up_to: u64::from(ks),
                })
                .collect(),
        }
    }

    #[test]
    fn sixteen_conditions_wrap_into_rows_within_the_width_bound() {
        super::super::ensure_fonts().unwrap();
        let d = PassKData {
            title: "pass@k and pass^k".into(),
            note: "n".into(),
            x_label: "k".into(),
            y_label: "p".into(),
            panels: (0..16)
                .map(|i| panel(&format!("policy-{i} L2"), 6, 4))
                .collect(),
        };
        d.validate().unwrap();
        let (w, h) = d.size().unwrap();
        assert!(w <= style::MAX_WIDTH, "{w}");
        assert_eq!(d.columns().unwrap(), 4);
        assert_eq!(h, TOP + 4 * PANEL_H + 16);
    }

    #[test]
    fn task_dots_stay_in_their_k_slot() {
        for tasks in [1, 2, 5, 16, 100] {
            for rank in 0..tasks {
                let o = task_offset(rank, tasks);
                assert!(o.abs() <= 0.25 + 1e-12, "{tasks} tasks, rank {rank}: {o}");
            }
        }
        assert_eq!(task_offset(0, 1), 0.0);
    }

    #[test]
    fn a_k_that_is_not_whole_is_rejected() {
        let mut p = panel("a", 2, 1);
        p.at_k[0].dose = 0.5;
        let d = PassKData {
            title: "t".into(),
            note: "n".into(),
            x_label: "k".into(),
            y_label: "p".into(),
            panels: vec![p],
        };
        assert!(d.validate().is_err());
    }
}
