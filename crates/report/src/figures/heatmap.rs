//! The per-task heatmap: rows (models or policies) × columns (tasks), each cell coloured by
//! its value and labelled with it, so a reader sees which task breaks which model.

use super::bail;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::style::{self, AXIS_LINE, INK, anchored, ink_on, num, sequential};
use super::{DrawResult, Figure, check_finite};

/// A rows × columns grid of values (`None` = not run), with a colour scale.
///
/// Exists because a pooled mean hides which task breaks a model; the grid shows it.
/// Input of [`write`](super::write); `values[r][c]` is row `r`, column `c`.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatmapData {
    /// Title.
    pub title: String,
    /// Row labels, top to bottom.
    pub row_labels: Vec<String>,
    /// Column labels, left to right.
    pub col_labels: Vec<String>,
    /// Values, one inner vector per row with one entry per column.
    pub values: Vec<Vec<Option<f64>>>,
    /// What a cell's value is (shown under the colour bar).
    pub value_label: String,
    /// Ends of the colour scale (values outside are clamped to the end colours).
    pub range: (f64, f64),
}

const CELL_HEIGHT: u32 = 38;
const TITLE_BAND: u32 = 50;
const HEADER_BAND: u32 = 34;
const FOOTER: u32 = 104;
const MARGIN: u32 = 16;

/// Vertical space between two bands of a wrapped heatmap.
const BAND_GAP: u32 = 18;

struct Layout {
    label_width: u32,
    cell_width: u32,
    /// Columns per band: a heatmap wider than [`style::MAX_WIDTH`] wraps its columns into
    /// bands stacked vertically, each with the row labels and its column headers.
    per_band: usize,
    bands: usize,
    width: u32,
    height: u32,
}

impl HeatmapData {
    fn layout(&self) -> crate::Result<Layout> {
        let label_width =
            style::max_width(self.row_labels.iter().map(String::as_str), style::LABEL)? + 20;
        let col = style::max_width(self.col_labels.iter().map(String::as_str), style::LABEL)?;
        let cell_width = (col + 18).max(88);
        let fit = style::MAX_WIDTH.saturating_sub(MARGIN * 2 + label_width) / cell_width;
        let cols = self.col_labels.len().max(1);
        let per_band = (fit as usize).clamp(1, cols);
        let bands = cols.div_ceil(per_band);
        let grid = cell_width * per_band as u32;
        let title = style::text_size(&self.title, style::TITLE)?.0 + 40;
        let width = (MARGIN * 2 + label_width + grid).max(title).max(560);
        let band = HEADER_BAND + CELL_HEIGHT * self.row_labels.len() as u32;
        let height = TITLE_BAND + band * bands as u32 + BAND_GAP * (bands as u32 - 1) + FOOTER;
        Ok(Layout {
            label_width,
            cell_width,
            per_band,
            bands,
            width,
            height,
        })
    }
}

impl Figure for HeatmapData {
    fn validate(&self) -> crate::Result<()> {
        if self.row_labels.is_empty() || self.col_labels.is_empty() {
            bail!("a heatmap needs at least one row and one column");
        }
        if self.values.len() != self.row_labels.len() {
            bail!(
                "{} rows of values for {} row labels",
                self.values.len(),
                self.row_labels.len()
            );
        }
        for (label, row) in self.row_labels.iter().zip(&self.values) {
            if row.len() != self.col_labels.len() {
                bail!(
                    "row {label} has {} values for {} columns",
                    row.len(),
                    self.col_labels.len()
                );
            }
            check_finite(label, row.iter().flatten())?;
        }
        check_finite("colour range", [&self.range.0, &self.range.1])?;
        if self.range.0 >= self.range.1 {
            bail!("the colour range must be increasing");
        }
        Ok(())
    }

    fn size(&self) -> crate::Result<(u32, u32)> {
        let l = self.layout()?;
        Ok((l.width, l.height))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        root.fill(&WHITE)?;
        let Ok(l) = self.layout() else {
            return Ok(());
        };
        let grid_width = l.cell_width * l.per_band as u32;
        // Centre the label column + grid block.
        let block = l.label_width + grid_width;
        let left = ((l.width - block) / 2) as i32;
        let grid_left = left + l.label_width as i32;
        let (cw, ch) = (l.cell_width as i32, CELL_HEIGHT as i32);
        let band_height =
            (HEADER_BAND + CELL_HEIGHT * self.row_labels.len() as u32 + BAND_GAP) as i32;
        root.draw(&Text::new(
            self.title.clone(),
            (l.width as i32 / 2, 24),
            anchored(style::bold(style::TITLE), HPos::Center, VPos::Center),
        ))?;
        let (lo, hi) = self.range;
        let mut grid_top = (TITLE_BAND + HEADER_BAND) as i32;
        for band in 0..l.bands {
            let start = band * l.per_band;
            let end = (start + l.per_band).min(self.col_labels.len());
            grid_top = (TITLE_BAND + HEADER_BAND) as i32 + band as i32 * band_height;
            let labels = self.col_labels.get(start..end).unwrap_or_default();
            for (c, label) in labels.iter().enumerate() {
                root.draw(&Text::new(
                    label.clone(),
                    (
                        grid_left + c as i32 * cw + cw / 2,
                        grid_top - HEADER_BAND as i32 / 2,
                    ),
                    anchored(style::text(style::LABEL), HPos::Center, VPos::Center),
                ))?;
            }
            for (r, (label, row)) in self.row_labels.iter().zip(&self.values).enumerate() {
                let y = grid_top + r as i32 * ch;
                root.draw(&Text::new(
                    label.clone(),
                    (grid_left - 10, y + ch / 2),
                    anchored(style::text(style::LABEL), HPos::Right, VPos::Center),
                ))?;
                for (c, value) in row.get(start..end).unwrap_or_default().iter().enumerate() {
                    let x = grid_left + c as i32 * cw;
                    let (fill, text) = match value {
                        Some(v) => (sequential(*v, lo, hi), num(*v)),
                        None => (RGBColor(235, 235, 235), "n/a".to_string()),
                    };
                    root.draw(&Rectangle::new([(x, y), (x + cw, y + ch)], fill.filled()))?;
                    root.draw(&Rectangle::new(
                        [(x, y), (x + cw, y + ch)],
                        WHITE.stroke_width(2),
                    ))?;
                    let ink = ink_on(fill);
                    root.draw(&Text::new(
                        text,
                        (x + cw / 2, y + ch / 2),
                        anchored(
                            style::text(style::ANNOTATION).color(&ink),
                            HPos::Center,
                            VPos::Center,
                        ),
                    ))?;
                }
            }
        }
        // Colour bar under the grid.
        let bar_top = grid_top + ch * self.row_labels.len() as i32 + 24;
        let bar_width = grid_width.max(240) as i32;
        let bar_left = grid_left + (grid_width as i32 - bar_width) / 2;
        let steps = 120;
        for s in 0..steps {
            let t0 = bar_left + bar_width * s / steps;
            let t1 = bar_left + bar_width * (s + 1) / steps;
            let v = lo + (hi - lo) * (f64::from(s) + 0.5) / f64::from(steps);
            root.draw(&Rectangle::new(
                [(t0, bar_top), (t1 + 1, bar_top + 14)],
                sequential(v, lo, hi).filled(),
            ))?;
        }
        root.draw(&Rectangle::new(
            [(bar_left, bar_top), (bar_left + bar_width, bar_top + 14)],
            AXIS_LINE.stroke_width(1),
        ))?;
        for k in 0..=4 {
            let x = bar_left + bar_width * k / 4;
            let v = lo + (hi - lo) * f64::from(k) / 4.0;
            root.draw(&PathElement::new(
                vec![(x, bar_top + 14), (x, bar_top + 19)],
                INK.stroke_width(1),
            ))?;
            root.draw(&Text::new(
                format!("{v:.2}"),
                (x, bar_top + 30),
                anchored(style::text(style::ANNOTATION), HPos::Center, VPos::Center),
            ))?;
        }
        root.draw(&Text::new(
            self.value_label.clone(),
            (bar_left + bar_width / 2, bar_top + 56),
            anchored(style::text(style::AXIS), HPos::Center, VPos::Center),
        ))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ragged_or_empty_grids_are_rejected() {
        let mut d = HeatmapData {
            title: "t".into(),
            row_labels: vec!["a".into()],
            col_labels: vec!["x".into(), "y".into()],
            values: vec![vec![Some(0.5)]],
            value_label: "v".into(),
            range: (0.0, 1.0),
        };
        assert!(d.validate().is_err());
        d.values = vec![vec![Some(0.5), None]];
        assert!(d.validate().is_ok());
        d.range = (1.0, 1.0);
        assert!(d.validate().is_err());
        d.range = (0.0, 1.0);
        d.values = vec![vec![Some(f64::INFINITY), None]];
        assert!(d.validate().is_err());
    }
}
