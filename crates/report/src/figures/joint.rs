//! The joint intervention as a 2×2 panel (paper Figure A6): rows are the harness (L0, L2),
//! columns the scorer (judge, ground truth); each panel plots every model on the same axis.

use super::bail;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::style::{self, INK, anchored, num, series_color};
use super::{DrawResult, Figure, check_finite};

/// One model's four cell values: `values[row][column]` (`None` = not run).
///
/// Exists so a model missing from one cell is drawn as absent, not as zero.
#[derive(Debug, Clone, PartialEq)]
pub struct JointSeries {
    /// Model or policy.
    pub label: String,
    /// `[harness row][scorer column]`.
    pub values: [[Option<f64>; 2]; 2],
}

/// The 2×2 panel: row and column names and the models.
///
/// Exists to show the masking argument as a measurement: models collapse to one value in the
/// scaffolded row and separate only when both harness and scorer are repaired.
#[derive(Debug, Clone, PartialEq)]
pub struct JointPanelData {
    /// Title.
    pub title: String,
    /// Row (harness) names, top then bottom, e.g. "harness L0", "harness L2".
    pub row_labels: [String; 2],
    /// Column (scorer) names, left then right, e.g. "judge / 100", "ground-truth F1".
    pub col_labels: [String; 2],
    /// A caption line under the title.
    pub note: String,
    /// Models, drawn top to bottom in this order in every panel.
    pub models: Vec<JointSeries>,
}

const ROW: u32 = 30;
const PANEL_CHROME: u32 = 118;
const TOP: u32 = 78;
const PLOT: u32 = 380;

impl JointPanelData {
    fn label_width(&self) -> crate::Result<u32> {
        Ok(style::max_width(self.models.iter().map(|m| m.label.as_str()), style::LABEL)? + 20)
    }

    fn panel_size(&self) -> crate::Result<(u32, u32)> {
        Ok((
            self.label_width()? + PLOT + 80,
            PANEL_CHROME + ROW * self.models.len() as u32,
        ))
    }
}

impl Figure for JointPanelData {
    fn validate(&self) -> crate::Result<()> {
        if self.models.is_empty() {
            bail!("a 2×2 panel needs at least one model");
        }
        for m in &self.models {
            check_finite(&m.label, m.values.iter().flatten().flatten())?;
        }
        Ok(())
    }

    fn size(&self) -> crate::Result<(u32, u32)> {
        let (pw, ph) = self.panel_size()?;
        let head = style::head_width(&self.title, Some(&self.note))?;
        Ok(((2 * pw + 24).max(head), TOP + 2 * ph + 12))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        style::head(root, &self.title, Some(&self.note))?;
        let body = root.margin(TOP, 12, 12, 12);
        let panels = body.split_evenly((2, 2));
        let label_width = self.label_width().unwrap_or(160);
        let values = self
            .models
            .iter()
            .flat_map(|m| m.values.iter().flatten().flatten().copied());
        let (x0, x1) = style::axis_range(values, 0.0, 1.0, 0.04);
        let n = self.models.len();
        for (p, panel) in panels.iter().enumerate() {
            let (row, col) = (p / 2, p % 2);
            let title = format!("{} × {}", self.row_labels[row], self.col_labels[col]);
            let mut chart = ChartBuilder::on(panel)
                .caption(title, style::bold(style::AXIS))
                .margin(10)
                .x_label_area_size(48)
                .y_label_area_size(label_width)
                .build_cartesian_2d(x0..x1, -0.6..n as f64 - 0.4)?;
            style::house_mesh(
                chart
                    .configure_mesh()
                    .disable_y_mesh()
                    .x_labels(6)
                    .y_labels(0)
                    .x_label_formatter(&|x| format!("{x:.1}"))
                    .x_desc(self.col_labels[col].clone()),
                style::LABEL,
            )
            .draw()?;
            for (i, m) in self.models.iter().enumerate() {
                let y = (n - 1 - i) as f64;
                let (lx, ly) = chart.backend_coord(&(x0, y));
                root.draw(&Text::new(
                    m.label.clone(),
                    (lx - 10, ly),
                    anchored(style::text(style::LABEL), HPos::Right, VPos::Center),
                ))?;
                match m.values[row][col] {
                    Some(v) => {
                        chart.draw_series([Circle::new((v, y), 7, series_color(i).filled())])?;
                        chart.draw_series([Circle::new((v, y), 7, INK.stroke_width(1))])?;
                        // The value sits right of its dot, or left of it near the right edge.
                        let (px, py) = chart.backend_coord(&(v, y));
                        let near_right = v > x0 + 0.8 * (x1 - x0);
                        let (tx, h) = if near_right {
                            (px - 12, HPos::Right)
                        } else {
                            (px + 12, HPos::Left)
                        };
                        root.draw(&Text::new(
                            num(v),
                            (tx, py),
                            anchored(style::text(style::ANNOTATION), h, VPos::Center),
                        ))?;
                    }
                    None => {
                        let (px, py) = chart.backend_coord(&(x0, y));
                        root.draw(&Text::new(
                            "n/a",
                            (px + 8, py),
                            anchored(style::text(style::ANNOTATION), HPos::Left, VPos::Center),
                        ))?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_models_and_finite_values() {
        let mut d = JointPanelData {
            title: "t".into(),
            row_labels: ["L0".into(), "L2".into()],
            col_labels: ["judge".into(), "truth".into()],
            note: "n".into(),
            models: vec![],
        };
        assert!(d.validate().is_err());
        d.models.push(JointSeries {
            label: "a".into(),
            values: [[Some(0.9), None], [Some(0.5), Some(0.0)]],
        });
        assert!(d.validate().is_ok());
        d.models[0].values[1][1] = Some(f64::NAN);
        assert!(d.validate().is_err());
    }
}
