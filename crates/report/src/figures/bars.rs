//! Grouped bar figures: the judge probe (judge vs ground truth per submission kind) and the
//! scaffolding spectrum (one bar per scaffolding level per model).

use super::bail;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::style::{self, JUDGE, TRUTH, anchored, num, series_color};
use super::{DrawResult, Figure, check_finite};

/// Judge vs ground truth for each forged submission kind (or each policy of a run).
///
/// Exists to make the two scorer artifacts visible at a glance: a floored empty submission
/// and a fabricated one the judge cannot tell from the correct one. `judge[i]` and `truth[i]`
/// belong to `kinds[i]`, both on the same 0–1 scale (judge total / 100).
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeBarsData {
    /// Title.
    pub title: String,
    /// Submission kinds (correct, empty, fabricated, …) or policies.
    pub kinds: Vec<String>,
    /// Judge score per kind, on 0–1.
    pub judge: Vec<f64>,
    /// Ground-truth score per kind.
    pub truth: Vec<f64>,
    /// Legend text of the judge bars.
    pub judge_label: String,
    /// Legend text of the ground-truth bars.
    pub truth_label: String,
    /// Y axis description.
    pub y_label: String,
}

impl ProbeBarsData {
    fn bars(&self) -> GroupedBars {
        GroupedBars {
            title: self.title.clone(),
            note: None,
            groups: self.kinds.clone(),
            series: vec![
                (self.judge_label.clone(), JUDGE),
                (self.truth_label.clone(), TRUTH),
            ],
            values: self
                .judge
                .iter()
                .zip(&self.truth)
                .map(|(j, t)| vec![Some(*j), Some(*t)])
                .collect(),
            y_label: self.y_label.clone(),
        }
    }
}

impl Figure for ProbeBarsData {
    fn validate(&self) -> crate::Result<()> {
        if self.judge.len() != self.kinds.len() || self.truth.len() != self.kinds.len() {
            bail!(
                "judge probe: {} kinds, {} judge values, {} ground-truth values",
                self.kinds.len(),
                self.judge.len(),
                self.truth.len()
            );
        }
        self.bars().validate()
    }

    fn size(&self) -> crate::Result<(u32, u32)> {
        self.bars().size()
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        self.bars().draw(root)
    }
}

/// Mean score per model at each scaffolding level (`None` = not run at that level).
///
/// Exists because a number quoted without its scaffolding level is not interpretable: the
/// same models side by side at each level show where differences appear and vanish.
/// `values[m][l]` is model `m` at `levels[l]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaffoldingData {
    /// Title.
    pub title: String,
    /// Models or policies.
    pub models: Vec<String>,
    /// Level names, in bar order (e.g. "L0", "L1", "L2", possibly with the metric).
    pub levels: Vec<String>,
    /// Values, one inner vector per model with one entry per level.
    pub values: Vec<Vec<Option<f64>>>,
    /// Y axis description.
    pub y_label: String,
    /// A caption line under the title (e.g. which metric each level uses).
    pub note: Option<String>,
}

impl ScaffoldingData {
    fn bars(&self) -> GroupedBars {
        GroupedBars {
            title: self.title.clone(),
            note: self.note.clone(),
            groups: self.models.clone(),
            series: self
                .levels
                .iter()
                .enumerate()
                .map(|(i, l)| (l.clone(), series_color(i)))
                .collect(),
            values: self.values.clone(),
            y_label: self.y_label.clone(),
        }
    }
}

impl Figure for ScaffoldingData {
    fn validate(&self) -> crate::Result<()> {
        self.bars().validate()
    }

    fn size(&self) -> crate::Result<(u32, u32)> {
        self.bars().size()
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        self.bars().draw(root)
    }
}

/// Groups of bars, one bar per series in each group.
struct GroupedBars {
    title: String,
    note: Option<String>,
    groups: Vec<String>,
    series: Vec<(String, RGBColor)>,
    values: Vec<Vec<Option<f64>>>,
    y_label: String,
}

const BAR: u32 = 48;
const HEIGHT: u32 = 580;
const LEFT_AXIS: u32 = 84;

/// Height of one line of a group label.
const LABEL_LINE: u32 = 18;

impl GroupedBars {
    /// The width a group's bars need, whatever its label.
    fn bars_width(&self) -> u32 {
        BAR * self.series.len() as u32 + 36
    }

    /// A group label in lines: on one line when it fits over the group's bars, else split at
    /// the `_` nearest its middle (`contradictory_` / `report`), so one long name does not
    /// widen every group of the figure.
    fn label_lines(&self, label: &str) -> Vec<String> {
        let fits = |t: &str| {
            style::text_size(t, style::LABEL).is_ok_and(|(w, _)| w + 28 <= self.bars_width())
        };
        if fits(label) {
            return vec![label.to_string()];
        }
        let middle = label.len() / 2;
        let split = (label.match_indices('_'))
            .map(|(i, _)| i)
            .min_by_key(|i| i.abs_diff(middle));
        match split {
            Some(i) => vec![label[..=i].to_string(), label[i + 1..].to_string()],
            None => vec![label.to_string()],
        }
    }

    /// Lines of the tallest group label.
    fn label_rows(&self) -> u32 {
        (self.groups.iter())
            .map(|g| self.label_lines(g).len() as u32)
            .max()
            .unwrap_or(1)
    }

    fn group_width(&self) -> crate::Result<u32> {
        let lines: Vec<String> = (self.groups.iter())
            .flat_map(|g| self.label_lines(g))
            .collect();
        let label = style::max_width(lines.iter().map(String::as_str), style::LABEL)? + 28;
        Ok(label.max(self.bars_width()))
    }

    fn top(&self) -> u32 {
        if self.note.is_some() { 112 } else { 88 }
    }

    /// Groups per row of panels: the groups spread evenly over as few rows as
    /// [`style::MAX_WIDTH`] allows (11 groups that fit 9 to a row make rows of 6 and 5, not 9
    /// and 2); the rows share that many slots so bars line up from row to row.
    fn per_row(&self) -> crate::Result<usize> {
        let fit = style::MAX_WIDTH.saturating_sub(LEFT_AXIS + 40) / self.group_width()?.max(1);
        let n = self.groups.len().max(1);
        let fit = (fit as usize).clamp(1, n);
        Ok(n.div_ceil(n.div_ceil(fit)))
    }

    fn rows(&self) -> crate::Result<usize> {
        Ok(self.groups.len().div_ceil(self.per_row()?).max(1))
    }
}

impl Figure for GroupedBars {
    fn validate(&self) -> crate::Result<()> {
        if self.groups.is_empty() || self.series.is_empty() {
            bail!("a bar figure needs at least one group and one series");
        }
        if self.values.len() != self.groups.len() {
            bail!(
                "{} value rows for {} groups",
                self.values.len(),
                self.groups.len()
            );
        }
        for (g, row) in self.groups.iter().zip(&self.values) {
            if row.len() != self.series.len() {
                bail!(
                    "group {g} has {} values for {} series",
                    row.len(),
                    self.series.len()
                );
            }
            check_finite(g, row.iter().flatten())?;
        }
        Ok(())
    }

    fn size(&self) -> crate::Result<(u32, u32)> {
        let plot = self.group_width()? * self.per_row()? as u32;
        let head = style::head_width(&self.title, self.note.as_deref())?;
        let panels =
            (HEIGHT - self.top() + LABEL_LINE * (self.label_rows() - 1)) * self.rows()? as u32;
        Ok((
            (LEFT_AXIS + plot + 40).max(head).max(640),
            self.top() + panels,
        ))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        style::head(root, &self.title, self.note.as_deref())?;
        let (width, _) = root.dim_in_pixel();
        let cx = width as i32 / 2;
        let legend_y = if self.note.is_some() { 84 } else { 58 };
        // Legend: swatch + name per series, centred.
        let widths: Vec<i32> = self
            .series
            .iter()
            .map(|(s, _)| style::text_size(s, style::SUBTITLE).map_or(100, |(w, _)| w as i32))
            .collect();
        let total: i32 =
            widths.iter().map(|w| w + 30).sum::<i32>() + 24 * (widths.len() as i32 - 1);
        let mut x = cx - total / 2;
        for ((name, color), w) in self.series.iter().zip(&widths) {
            root.draw(&Rectangle::new(
                [(x, legend_y - 8), (x + 20, legend_y + 8)],
                color.filled(),
            ))?;
            root.draw(&Text::new(
                name.clone(),
                (x + 28, legend_y),
                anchored(style::text(style::SUBTITLE), HPos::Left, VPos::Center),
            ))?;
            x += w + 30 + 24;
        }

        let values = self.values.iter().flatten().flatten().copied();
        let (y0, y1) = style::axis_range(values, 0.0, 1.0, 0.0);
        let y1 = y1 + 0.1 * (y1 - y0);
        let per_row = self.per_row().unwrap_or(1);
        let rows = self.rows().unwrap_or(1);
        let body = root.margin(self.top(), 0, 0, 0);
        for (row, area) in body.split_evenly((rows, 1)).iter().enumerate() {
            let start = row * per_row;
            let end = (start + per_row).min(self.groups.len());
            self.draw_panel(root, area, start..end, per_row, (y0, y1))?;
        }
        Ok(())
    }
}

impl GroupedBars {
    /// One row of panels: the groups `range` in `slots` equal slots, on the y range `y`.
    fn draw_panel<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        area: &DrawingArea<DB, Shift>,
        range: std::ops::Range<usize>,
        slots: usize,
        (y0, y1): (f64, f64),
    ) -> DrawResult<DB> {
        let area = area.margin(0, 12, 12, 20);
        let mut chart = ChartBuilder::on(&area)
            .x_label_area_size(44 + LABEL_LINE * (self.label_rows() - 1))
            .y_label_area_size(LEFT_AXIS - 20)
            .build_cartesian_2d(0.0..slots as f64, y0..y1)?;
        style::house_mesh(
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(0)
                .y_labels(11)
                .y_label_formatter(&|y| format!("{y:.1}"))
                .y_desc(self.y_label.clone()),
            style::AXIS,
        )
        .draw()?;
        let s = self.series.len() as f64;
        let pad = 0.12;
        let bw = (1.0 - 2.0 * pad) / s;
        let groups = self.groups.get(range.clone()).unwrap_or_default();
        let values = self.values.get(range).unwrap_or_default();
        for (g, label) in groups.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(g as f64 + 0.5, y0));
            for (i, line) in self.label_lines(label).into_iter().enumerate() {
                let dy = 18 + LABEL_LINE as i32 * i32::try_from(i).unwrap_or(0);
                root.draw(&Text::new(
                    line,
                    (px, py + dy),
                    anchored(style::text(style::LABEL), HPos::Center, VPos::Center),
                ))?;
            }
        }
        for (g, row) in values.iter().enumerate() {
            for (k, (value, (_, color))) in row.iter().zip(&self.series).enumerate() {
                let x0 = g as f64 + pad + k as f64 * bw;
                let x1 = x0 + bw * 0.92;
                let xm = (x0 + x1) / 2.0;
                match value {
                    Some(v) => {
                        chart.draw_series([Rectangle::new(
                            [(x0, 0.0_f64.max(y0)), (x1, *v)],
                            color.filled(),
                        )])?;
                        let (px, py) = chart.backend_coord(&(xm, v.max(0.0)));
                        root.draw(&Text::new(
                            num(*v),
                            (px, py - 10),
                            anchored(style::text(style::ANNOTATION), HPos::Center, VPos::Center),
                        ))?;
                    }
                    None => {
                        let (px, py) = chart.backend_coord(&(xm, 0.0_f64.max(y0)));
                        root.draw(&Text::new(
                            "n/a",
                            (px, py - 12),
                            anchored(style::text(style::ANNOTATION), HPos::Center, VPos::Center),
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
    fn probe_bars_need_matching_lengths() {
        let data = ProbeBarsData {
            title: "t".into(),
            kinds: vec!["correct".into(), "empty".into()],
            judge: vec![0.987],
            truth: vec![1.0, 0.0],
            judge_label: "judge".into(),
            truth_label: "truth".into(),
            y_label: "score".into(),
        };
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        assert!(super::super::write(&data, dir.path(), "p").is_err());
    }

    #[test]
    fn the_judge_probe_keeps_its_eleven_forgeries_on_one_row() {
        super::super::ensure_fonts().unwrap_or_else(|e| panic!("{e}"));
        let kinds = [
            "correct",
            "empty",
            "fabricated",
            "duplicate_laden",
            "totals_leaked",
            "partial",
            "contradictory_report",
            "wrong_task_id",
            "wrong_query",
            "row_count_off",
            "contradicted_claim",
        ];
        let data = ProbeBarsData {
            title: "Judge probe on T2_multi_page".into(),
            kinds: kinds.iter().map(|k| (*k).to_string()).collect(),
            judge: vec![0.9; 11],
            truth: vec![0.5; 11],
            judge_label: "legacy judge (0–1)".into(),
            truth_label: "ground-truth F1".into(),
            y_label: "score".into(),
        };
        let bars = data.bars();
        assert_eq!(bars.rows().unwrap_or(0), 1);
        assert_eq!(
            bars.label_lines("contradictory_report"),
            ["contradictory_", "report"]
        );
        assert_eq!(bars.label_lines("correct"), ["correct"]);
        let (w, _) = data.size().unwrap_or((u32::MAX, 0));
        assert!(w <= style::MAX_WIDTH, "{w}");
    }

    #[test]
    fn wrapped_rows_are_balanced() {
        let bars = GroupedBars {
            title: "t".into(),
            note: None,
            groups: (0..20).map(|i| format!("policy-number-{i}")).collect(),
            series: (0..3).map(|i| (format!("L{i}"), series_color(i))).collect(),
            values: vec![vec![Some(0.5); 3]; 20],
            y_label: "y".into(),
        };
        super::super::ensure_fonts().unwrap_or_else(|e| panic!("{e}"));
        let (per_row, rows) = (bars.per_row().unwrap_or(0), bars.rows().unwrap_or(0));
        assert!(rows >= 2, "{rows}");
        // No row is left with a few groups: the last one is at most one group short.
        assert!(per_row * rows - 20 < rows, "{per_row} per row, {rows} rows");
    }

    #[test]
    fn grouped_bars_validate_shape() {
        let bars = GroupedBars {
            title: "t".into(),
            note: None,
            groups: vec!["a".into()],
            series: vec![
                ("L0".into(), series_color(0)),
                ("L2".into(), series_color(1)),
            ],
            values: vec![vec![Some(0.5)]],
            y_label: "y".into(),
        };
        assert!(bars.validate().is_err());
        let bars = GroupedBars {
            values: vec![vec![Some(0.5), None]],
            ..bars
        };
        assert!(bars.validate().is_ok());
    }
}
