//! The A/B forest plot: one row per model, design or task — the paired mean difference Δ with
//! its confidence interval, a filled marker when the interval excludes 0 and a hollow one
//! when it does not, and the numbers in a column on the right.

use super::bail;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::style::{self, ACCENT, AXIS_LINE, INK, anchored, num};
use super::{DrawResult, Figure, check_finite};

/// One comparison: its estimate and interval.
///
/// Exists so the caller passes exactly the Δ and CI it reports.
#[derive(Debug, Clone, PartialEq)]
pub struct ForestRow {
    /// Row label.
    pub label: String,
    /// Point estimate (mean Δ).
    pub estimate: f64,
    /// Lower interval end.
    pub lo: f64,
    /// Upper interval end.
    pub hi: f64,
}

const ROW: u32 = 36;
const TOP: u32 = 120;
const BOTTOM: u32 = 64;

impl ForestRow {
    /// Whether the interval lies strictly on one side of zero.
    ///
    /// Exists as the one rule deciding filled vs hollow markers.
    #[must_use]
    pub fn excludes_zero(&self) -> bool {
        self.lo > 0.0 || self.hi < 0.0
    }
}

/// A forest plot: rows drawn top to bottom in the given order.
///
/// Exists so a family of paired comparisons reads at a glance: which effects are
/// distinguishable from zero, in which direction, and how uncertain.
#[derive(Debug, Clone, PartialEq)]
pub struct ForestData {
    /// Title.
    pub title: String,
    /// X axis description (what Δ is, e.g. "Δ F1 = B − A").
    pub x_label: String,
    /// A caption line under the title (e.g. the interval's level and method).
    pub note: String,
    /// Rows.
    pub rows: Vec<ForestRow>,
}

impl ForestData {
    fn label_width(&self) -> crate::Result<u32> {
        Ok(style::max_width(self.rows.iter().map(|r| r.label.as_str()), style::LABEL)? + 24)
    }

    fn number_text(row: &ForestRow) -> String {
        format!("{} [{}, {}]", num(row.estimate), num(row.lo), num(row.hi))
    }

    fn number_width(&self) -> crate::Result<u32> {
        let texts: Vec<String> = self.rows.iter().map(Self::number_text).collect();
        Ok(style::max_width(texts.iter().map(String::as_str), style::LABEL)?.max(110) + 36)
    }
}

impl Figure for ForestData {
    fn validate(&self) -> crate::Result<()> {
        if self.rows.is_empty() {
            bail!("a forest plot needs at least one row");
        }
        for r in &self.rows {
            check_finite(&r.label, [&r.estimate, &r.lo, &r.hi])?;
            if r.lo > r.hi {
                bail!("row {}: interval [{}, {}] is reversed", r.label, r.lo, r.hi);
            }
        }
        Ok(())
    }

    fn size(&self) -> crate::Result<(u32, u32)> {
        let width = (self.label_width()? + self.number_width()? + 560)
            .max(style::head_width(&self.title, Some(&self.note))?)
            .max(1000);
        Ok((width, TOP + BOTTOM + ROW * self.rows.len() as u32 + 12))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        style::head(root, &self.title, Some(&self.note))?;
        let (width, _) = root.dim_in_pixel();
        let cx = width as i32 / 2;
        let n = self.rows.len();
        // Legend: filled vs hollow marker.
        let filled = "CI excludes 0";
        let hollow = "CI includes 0";
        let fw = style::text_size(filled, style::SUBTITLE).map_or(110, |(w, _)| w as i32);
        let hw = style::text_size(hollow, style::SUBTITLE).map_or(110, |(w, _)| w as i32);
        let total = 22 + fw + 32 + 22 + hw;
        let (mut x, y) = (cx - total / 2, 84);
        root.draw(&Circle::new((x + 7, y), 7, ACCENT.filled()))?;
        root.draw(&Text::new(
            filled,
            (x + 22, y),
            anchored(style::text(style::SUBTITLE), HPos::Left, VPos::Center),
        ))?;
        x += 22 + fw + 32;
        root.draw(&Circle::new((x + 7, y), 7, WHITE.filled()))?;
        root.draw(&Circle::new((x + 7, y), 7, ACCENT.stroke_width(2)))?;
        root.draw(&Text::new(
            hollow,
            (x + 22, y),
            anchored(style::text(style::SUBTITLE), HPos::Left, VPos::Center),
        ))?;

        let label_width = self.label_width().unwrap_or(200);
        let number_width = self.number_width().unwrap_or(200);
        let area = root.margin(TOP, 12, 12, 12);
        let values = self.rows.iter().flat_map(|r| [r.lo, r.hi]);
        let (lo, hi) = {
            let (a, b) = style::axis_range(values, 0.0, 0.0, 0.08);
            // Keep zero visible and the axis symmetric enough to read direction.
            let m = a.abs().max(b.abs());
            if m < 1e-9 {
                (-1.0, 1.0)
            } else {
                (a.min(-0.05 * m), b.max(0.05 * m))
            }
        };
        let mut chart = ChartBuilder::on(&area)
            .x_label_area_size(BOTTOM - 8)
            .y_label_area_size(label_width)
            .margin_right(number_width)
            .build_cartesian_2d(lo..hi, -0.5..n as f64 - 0.5)?;
        let tick = |x: &f64| {
            num(*x)
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
        };
        let mut mesh = chart.configure_mesh();
        mesh.disable_y_mesh()
            .x_labels(9)
            .y_labels(0)
            .x_label_formatter(&tick)
            .x_desc(self.x_label.clone());
        style::house_mesh(&mut mesh, style::AXIS).draw()?;
        chart.draw_series([PathElement::new(
            vec![(0.0, -0.5), (0.0, n as f64 - 0.5)],
            AXIS_LINE.stroke_width(2),
        )])?;
        for (i, r) in self.rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let line = ShapeStyle::from(&INK).stroke_width(2);
            chart.draw_series([
                PathElement::new(vec![(r.lo, y), (r.hi, y)], line),
                PathElement::new(vec![(r.lo, y - 0.18), (r.lo, y + 0.18)], line),
                PathElement::new(vec![(r.hi, y - 0.18), (r.hi, y + 0.18)], line),
            ])?;
            if r.excludes_zero() {
                chart.draw_series([Circle::new((r.estimate, y), 7, ACCENT.filled())])?;
            } else {
                chart.draw_series([Circle::new((r.estimate, y), 7, WHITE.filled())])?;
                chart.draw_series([Circle::new((r.estimate, y), 7, ACCENT.stroke_width(2))])?;
            }
            let (lx, ly) = chart.backend_coord(&(lo, y));
            root.draw(&Text::new(
                r.label.clone(),
                (lx - 10, ly),
                anchored(style::text(style::LABEL), HPos::Right, VPos::Center),
            ))?;
            let (px, py) = chart.backend_coord(&(hi, y));
            root.draw(&Text::new(
                ForestData::number_text(r),
                (px + 24, py),
                anchored(style::text(style::LABEL), HPos::Left, VPos::Center),
            ))?;
        }
        let (px, py) = chart.backend_coord(&(hi, n as f64 - 0.5));
        root.draw(&Text::new(
            "Δ [CI]",
            (px + 24, py - 12),
            anchored(style::bold(style::LABEL), HPos::Left, VPos::Center),
        ))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_fill_follows_the_interval() {
        let row = |lo: f64, hi: f64| ForestRow {
            label: "m".into(),
            estimate: (lo + hi) / 2.0,
            lo,
            hi,
        };
        assert!(row(0.01, 0.2).excludes_zero());
        assert!(row(-0.3, -0.1).excludes_zero());
        assert!(!row(-0.1, 0.2).excludes_zero());
        assert!(!row(0.0, 0.2).excludes_zero());
    }

    #[test]
    fn reversed_intervals_are_rejected() {
        let data = ForestData {
            title: "t".into(),
            x_label: "x".into(),
            note: "n".into(),
            rows: vec![ForestRow {
                label: "m".into(),
                estimate: 0.0,
                lo: 0.1,
                hi: -0.1,
            }],
        };
        assert!(data.validate().is_err());
    }
}
