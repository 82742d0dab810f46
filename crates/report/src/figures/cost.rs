//! The cost–quality scatter: dollars per episode against the mean metric, one dot per priced
//! condition, the Pareto front joined by a line. Unpriced conditions are named in the
//! caption, never drawn at $0.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::style::{self, ACCENT, INK, series_color};
use super::{DrawResult, Figure, bail, check_finite};

/// One priced condition.
#[derive(Debug, Clone, PartialEq)]
pub struct CostPoint {
    /// Label (policy and level).
    pub label: String,
    /// Dollars per episode (x).
    pub usd: f64,
    /// Mean metric (y).
    pub mean: f64,
    /// On the Pareto front.
    pub pareto: bool,
}

/// A cost–quality figure.
///
/// Exists so model choice weighs quality against dollars at a glance.
#[derive(Debug, Clone, PartialEq)]
pub struct CostScatterData {
    /// Title.
    pub title: String,
    /// The metric (y axis).
    pub y_label: String,
    /// Caption line (e.g. which conditions have no price).
    pub note: String,
    /// Priced conditions.
    pub points: Vec<CostPoint>,
}

impl Figure for CostScatterData {
    fn validate(&self) -> crate::Result<()> {
        if self.points.is_empty() {
            bail!("a cost scatter needs at least one priced condition");
        }
        check_finite(
            "cost scatter",
            self.points.iter().flat_map(|p| [&p.usd, &p.mean]),
        )?;
        if self.points.iter().any(|p| p.usd < 0.0) {
            bail!("a cost is negative");
        }
        Ok(())
    }

    fn size(&self) -> crate::Result<(u32, u32)> {
        Ok((
            style::PLOT_WIDTH.max(style::head_width(&self.title, Some(&self.note))?),
            style::PLOT_HEIGHT,
        ))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        style::head(root, &self.title, Some(&self.note))?;
        let top = self.points.iter().map(|p| p.usd).fold(0.0, f64::max);
        let (x_lo, x_hi) = style::axis_range([top], 0.0, top.max(1e-6), 0.08);
        let (y_lo, y_hi) = style::axis_range(self.points.iter().map(|p| p.mean), 0.0, 1.0, 0.04);
        let area = root.margin(72, 16, 16, 24);
        let mut chart = ChartBuilder::on(&area)
            .x_label_area_size(56)
            .y_label_area_size(72)
            .build_cartesian_2d(x_lo.max(0.0) - (x_hi - x_lo) * 0.02..x_hi, y_lo..y_hi)?;
        style::house_mesh(
            chart
                .configure_mesh()
                .x_labels(8)
                .y_labels(11)
                .x_label_formatter(&|x| format!("${x:.4}"))
                .y_label_formatter(&|y| format!("{y:.1}"))
                .x_desc("dollars per episode")
                .y_desc(self.y_label.clone()),
            style::AXIS,
        )
        .draw()?;
        let mut front: Vec<(f64, f64)> = self
            .points
            .iter()
            .filter(|p| p.pareto)
            .map(|p| (p.usd, p.mean))
            .collect();
        front.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart.draw_series(LineSeries::new(front, ACCENT.stroke_width(2)))?;
        for (i, p) in self.points.iter().enumerate() {
            let color = series_color(i);
            let size = if p.pareto { 8 } else { 6 };
            chart.draw_series([Circle::new((p.usd, p.mean), size, color.filled())])?;
            if p.pareto {
                chart.draw_series([Circle::new(
                    (p.usd, p.mean),
                    size + 3,
                    ACCENT.stroke_width(2),
                )])?;
            }
            chart.draw_series([Text::new(
                p.label.clone(),
                (p.usd, p.mean),
                style::anchored(style::text(style::ANNOTATION), HPos::Left, VPos::Bottom)
                    .color(&INK),
            )])?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_or_negative_costs_are_rejected() {
        let mut d = CostScatterData {
            title: "t".into(),
            y_label: "y".into(),
            note: "n".into(),
            points: vec![],
        };
        assert!(d.validate().is_err());
        d.points.push(CostPoint {
            label: "a".into(),
            usd: -1.0,
            mean: 0.5,
            pareto: true,
        });
        assert!(d.validate().is_err());
        d.points[0].usd = 0.01;
        assert!(d.validate().is_ok());
        d.points[0].mean = f64::NAN;
        assert!(d.validate().is_err());
    }
}
