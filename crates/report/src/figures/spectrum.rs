//! The reliability spectrum (paper Figure 2): one row per model or policy, sorted by mean —
//! box = interquartile range, whiskers = min–max (drawn here, not plotters' 1.5·IQR
//! `Boxplot`), dot = mean, tick = CVaR@α, and the mean as a number column.

use super::bail;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::style::{self, ACCENT, INK, anchored, num};
use super::{DrawResult, Figure, check_finite};

/// Pixel geometry: the figure's width, one row's height, the bands above and below the rows,
/// and the mean column at the right.
const WIDTH: u32 = 1100;
const ROW: u32 = 38;
const TOP: u32 = 96;
const BOTTOM: u32 = 64;
const NUMBER_COLUMN: u32 = 96;

/// One row of the spectrum: the five-number summary plus mean and CVaR of one set of runs.
///
/// Exists so the caller supplies exactly the numbers it also reports (the figure computes
/// nothing). `worst` is the minimum, the left whisker end.
#[derive(Debug, Clone, PartialEq)]
pub struct SpectrumRow {
    /// Row label (model or policy, plus any qualifier).
    pub label: String,
    /// Number of runs (shown next to the label).
    pub n: usize,
    /// Minimum (worst case).
    pub worst: f64,
    /// First quartile.
    pub q1: f64,
    /// Median.
    pub median: f64,
    /// Third quartile.
    pub q3: f64,
    /// Maximum.
    pub max: f64,
    /// Mean.
    pub mean: f64,
    /// CVaR@α.
    pub cvar: f64,
}

/// A reliability spectrum: title, axis label, α and the rows (any order; drawn by mean).
///
/// Exists because the mean alone hides the floor: the spectrum shows where each model's
/// worst runs fall and how the mean ranking reorders under the worst case.
#[derive(Debug, Clone, PartialEq)]
pub struct SpectrumData {
    /// Title.
    pub title: String,
    /// X axis description (the metric).
    pub x_label: String,
    /// CVaR tail fraction, for the legend.
    pub alpha: f64,
    /// Rows.
    pub rows: Vec<SpectrumRow>,
}

impl SpectrumData {
    /// Rows sorted for drawing: highest mean first, ties by label.
    fn sorted(&self) -> Vec<&SpectrumRow> {
        let mut rows: Vec<&SpectrumRow> = self.rows.iter().collect();
        rows.sort_by(|a, b| {
            b.mean
                .total_cmp(&a.mean)
                .then_with(|| a.label.cmp(&b.label))
        });
        rows
    }

    fn row_label(row: &SpectrumRow) -> String {
        format!("{} (n = {})", row.label, row.n)
    }

    fn label_width(&self) -> crate::Result<u32> {
        let labels: Vec<String> = self.rows.iter().map(Self::row_label).collect();
        Ok(style::max_width(labels.iter().map(String::as_str), style::LABEL)? + 24)
    }
}

impl Figure for SpectrumData {
    fn validate(&self) -> crate::Result<()> {
        if self.rows.is_empty() {
            bail!("a reliability spectrum needs at least one row");
        }
        for r in &self.rows {
            check_finite(
                &r.label,
                [&r.worst, &r.q1, &r.median, &r.q3, &r.max, &r.mean, &r.cvar],
            )?;
            if !(r.worst <= r.q1 && r.q1 <= r.median && r.median <= r.q3 && r.q3 <= r.max) {
                bail!(
                    "row {}: quartiles are not ordered min ≤ q1 ≤ median ≤ q3 ≤ max",
                    r.label
                );
            }
        }
        check_finite("alpha", [&self.alpha])
    }

    fn size(&self) -> crate::Result<(u32, u32)> {
        let width = WIDTH.max(self.label_width()? + NUMBER_COLUMN + 600);
        Ok((width, TOP + BOTTOM + ROW * self.rows.len() as u32 + 12))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        style::head(root, &self.title, None)?;
        let (width, _) = root.dim_in_pixel();
        let rows = self.sorted();
        let n = rows.len();
        let label_width = self.label_width().unwrap_or(200);
        draw_legend(root, self.alpha, width as i32 / 2, 62)?;

        let area = root.margin(TOP, 12, 12, 12);
        let values = rows.iter().flat_map(|r| [r.worst, r.max]);
        let (x0, x1) = style::axis_range(values, 0.0, 1.0, 0.02);
        let mut chart = ChartBuilder::on(&area)
            .x_label_area_size(BOTTOM - 8)
            .y_label_area_size(label_width)
            .margin_right(NUMBER_COLUMN)
            .build_cartesian_2d(x0..x1, -0.5..n as f64 - 0.5)?;
        style::house_mesh(
            chart
                .configure_mesh()
                .disable_y_mesh()
                .x_labels(11)
                .y_labels(0)
                .x_label_formatter(&|x| format!("{x:.1}"))
                .x_desc(self.x_label.clone()),
            style::AXIS,
        )
        .draw()?;

        let box_fill = RGBColor(198, 219, 239);
        let box_edge = RGBColor(33, 102, 172);
        for (i, r) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let whisker = ShapeStyle::from(&INK).stroke_width(2);
            chart.draw_series([
                PathElement::new(vec![(r.worst, y), (r.max, y)], whisker),
                PathElement::new(vec![(r.worst, y - 0.16), (r.worst, y + 0.16)], whisker),
                PathElement::new(vec![(r.max, y - 0.16), (r.max, y + 0.16)], whisker),
            ])?;
            chart.draw_series([
                Rectangle::new([(r.q1, y - 0.28), (r.q3, y + 0.28)], box_fill.filled()),
                Rectangle::new(
                    [(r.q1, y - 0.28), (r.q3, y + 0.28)],
                    box_edge.stroke_width(2),
                ),
            ])?;
            chart.draw_series([
                PathElement::new(
                    vec![(r.median, y - 0.28), (r.median, y + 0.28)],
                    box_edge.stroke_width(2),
                ),
                PathElement::new(
                    vec![(r.cvar, y - 0.38), (r.cvar, y + 0.38)],
                    ACCENT.stroke_width(4),
                ),
            ])?;
            chart.draw_series([Circle::new((r.mean, y), 6, INK.filled())])?;
            let (lx, ly) = chart.backend_coord(&(x0, y));
            root.draw(&Text::new(
                SpectrumData::row_label(r),
                (lx - 10, ly),
                anchored(style::text(style::LABEL), HPos::Right, VPos::Center),
            ))?;
            let (px, py) = chart.backend_coord(&(x1, y));
            root.draw(&Text::new(
                num(r.mean),
                (px + 14 + 12, py),
                anchored(style::text(style::LABEL), HPos::Left, VPos::Center),
            ))?;
        }
        let (px, py) = chart.backend_coord(&(x1, n as f64 - 0.5));
        root.draw(&Text::new(
            "mean",
            (px + 14 + 12, py - 12),
            anchored(style::bold(style::LABEL), HPos::Left, VPos::Center),
        ))?;
        Ok(())
    }
}

/// The glyph legend: box, whiskers, median, mean dot and CVaR tick, centred at (cx, cy).
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    alpha: f64,
    cx: i32,
    cy: i32,
) -> DrawResult<DB> {
    let items = [
        "box = interquartile range".to_string(),
        "whiskers = min–max".to_string(),
        "bar = median".to_string(),
        "dot = mean".to_string(),
        format!("tick = CVaR@{alpha}"),
    ];
    let glyph = 26;
    let gap = 26;
    let widths: Vec<i32> = items
        .iter()
        .map(|s| style::text_size(s, style::SUBTITLE).map_or(120, |(w, _)| w as i32))
        .collect();
    let total: i32 =
        widths.iter().map(|w| w + glyph + 8).sum::<i32>() + gap * (items.len() as i32 - 1);
    let mut x = cx - total / 2;
    let box_fill = RGBColor(198, 219, 239);
    let box_edge = RGBColor(33, 102, 172);
    for (k, (item, w)) in items.iter().zip(&widths).enumerate() {
        let (gx, gy) = (x, cy);
        match k {
            0 => {
                root.draw(&Rectangle::new(
                    [(gx + 2, gy - 8), (gx + glyph - 2, gy + 8)],
                    box_fill.filled(),
                ))?;
                root.draw(&Rectangle::new(
                    [(gx + 2, gy - 8), (gx + glyph - 2, gy + 8)],
                    box_edge.stroke_width(2),
                ))?;
            }
            1 => {
                let s = ShapeStyle::from(&INK).stroke_width(2);
                root.draw(&PathElement::new(vec![(gx, gy), (gx + glyph, gy)], s))?;
                root.draw(&PathElement::new(vec![(gx, gy - 6), (gx, gy + 6)], s))?;
                root.draw(&PathElement::new(
                    vec![(gx + glyph, gy - 6), (gx + glyph, gy + 6)],
                    s,
                ))?;
            }
            2 => {
                root.draw(&PathElement::new(
                    vec![(gx + glyph / 2, gy - 8), (gx + glyph / 2, gy + 8)],
                    box_edge.stroke_width(2),
                ))?;
            }
            3 => {
                root.draw(&Circle::new((gx + glyph / 2, gy), 6, INK.filled()))?;
            }
            _ => {
                root.draw(&PathElement::new(
                    vec![(gx + glyph / 2, gy - 10), (gx + glyph / 2, gy + 10)],
                    ACCENT.stroke_width(4),
                ))?;
            }
        }
        root.draw(&Text::new(
            item.clone(),
            (gx + glyph + 8, gy),
            anchored(style::text(style::SUBTITLE), HPos::Left, VPos::Center),
        ))?;
        x += glyph + 8 + w + gap;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn row(label: &str, mean: f64) -> SpectrumRow {
        SpectrumRow {
            label: label.into(),
            n: 10,
            worst: 0.0,
            q1: 0.2,
            median: 0.5,
            q3: 0.8,
            max: 1.0,
            mean,
            cvar: 0.1,
        }
    }

    #[test]
    fn rows_are_drawn_by_descending_mean() {
        let data = SpectrumData {
            title: "t".into(),
            x_label: "x".into(),
            alpha: 0.2,
            rows: vec![row("b", 0.5), row("a", 0.9), row("c", 0.5)],
        };
        let order: Vec<&str> = data.sorted().iter().map(|r| r.label.as_str()).collect();
        assert_eq!(order, ["a", "b", "c"]);
    }

    #[test]
    fn bad_rows_are_rejected_not_drawn() {
        let mut data = SpectrumData {
            title: "t".into(),
            x_label: "x".into(),
            alpha: 0.2,
            rows: vec![],
        };
        assert!(data.validate().is_err());
        data.rows.push(SpectrumRow {
            mean: f64::NAN,
            ..row("a", 0.0)
        });
        assert!(data.validate().is_err());
        data.rows[0] = SpectrumRow {
            q1: 0.9,
            ..row("a", 0.5)
        };
        assert!(data.validate().is_err());
    }
}
