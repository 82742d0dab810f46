//! The degradation curve: adversity dose → mean score with its confidence band, and every
//! seed as a dot, one colour per series (model or policy).

use super::bail;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{self, series_color};
use super::{DrawResult, Figure, check_finite};

/// One dose of a curve: the mean and its interval.
///
/// Exists so the caller passes the summary it reports, not raw data to re-summarise.
#[derive(Debug, Clone, PartialEq)]
pub struct DegradationPoint {
    /// Dose (x).
    pub dose: f64,
    /// Mean at this dose.
    pub mean: f64,
    /// Lower end of the mean's interval.
    pub lo: f64,
    /// Upper end of the mean's interval.
    pub hi: f64,
}

/// One curve: its points and the per-seed values behind them.
///
/// Exists so the spread below the mean (the tail) is visible next to the mean.
#[derive(Debug, Clone, PartialEq)]
pub struct DegradationSeries {
    /// Legend label.
    pub label: String,
    /// Points (any order; drawn by dose).
    pub points: Vec<DegradationPoint>,
    /// Per-seed values as (dose, value).
    pub seeds: Vec<(f64, f64)>,
}

/// A degradation figure: one or more series over a common dose axis.
///
/// Exists to show how the mean and, more tellingly, the worst seeds move as adversity rises.
#[derive(Debug, Clone, PartialEq)]
pub struct DegradationData {
    /// Title.
    pub title: String,
    /// X axis description (what the dose is).
    pub x_label: String,
    /// Y axis description (the metric).
    pub y_label: String,
    /// A caption line under the title (what the band and dots are).
    pub note: String,
    /// Series.
    pub series: Vec<DegradationSeries>,
}

/// Height of one legend row.
const LEGEND_ROW: i32 = 24;

impl DegradationData {
    /// Width of the legend column right of the plot (it never covers data).
    fn legend_width(&self) -> crate::Result<u32> {
        Ok(style::max_width(self.series.iter().map(|s| s.label.as_str()), style::LABEL)? + 56)
    }

    /// Whether every dose is a whole number (k of pass@k): the axis then labels whole numbers.
    fn whole_doses(&self) -> bool {
        self.series
            .iter()
            .flat_map(|s| s.points.iter())
            .all(|p| p.dose.fract() == 0.0)
    }
}

impl Figure for DegradationData {
    fn validate(&self) -> crate::Result<()> {
        if self.series.is_empty() {
            bail!("a degradation figure needs at least one series");
        }
        for s in &self.series {
            if s.points.is_empty() {
                bail!("series {} has no points", s.label);
            }
            for p in &s.points {
                check_finite(&s.label, [&p.dose, &p.mean, &p.lo, &p.hi])?;
                if p.lo > p.hi {
                    bail!(
                        "series {}: interval at dose {} is reversed",
                        s.label,
                        p.dose
                    );
                }
            }
            check_finite(&s.label, s.seeds.iter().flat_map(|(d, v)| [d, v]))?;
        }
        Ok(())
    }

    fn size(&self) -> crate::Result<(u32, u32)> {
        let legend = self.legend_width()?;
        let rows = u32::try_from(self.series.len()).unwrap_or(u32::MAX);
        Ok((
            (style::PLOT_WIDTH + legend).max(style::head_width(&self.title, Some(&self.note))?),
            style::PLOT_HEIGHT.max(120 + rows.saturating_mul(LEGEND_ROW as u32)),
        ))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        style::head(root, &self.title, Some(&self.note))?;
        let doses = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.dose));
        let (d_lo, d_hi) = {
            let (lo, hi) = doses.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), d| {
                (a.min(d), b.max(d))
            });
            style::axis_range([lo, hi], lo, hi, 0.06)
        };
        let ys = self.series.iter().flat_map(|s| {
            s.points
                .iter()
                .flat_map(|p| [p.lo, p.hi])
                .chain(s.seeds.iter().map(|(_, v)| *v))
        });
        let (y_lo, y_hi) = style::axis_range(ys, 0.0, 1.0, 0.03);
        let legend = self
            .legend_width()
            .map_err(|_| plotters::drawing::DrawingAreaErrorKind::LayoutError)?;
        let legend_px = i32::try_from(legend).unwrap_or(i32::MAX);
        let width = root.dim_in_pixel().0 as i32;
        let area = root.margin(72, 16, 16, 24).margin(0, 0, 0, legend);
        let whole = self.whole_doses();
        let mut chart = ChartBuilder::on(&area)
            .x_label_area_size(56)
            .y_label_area_size(72)
            .build_cartesian_2d(d_lo..d_hi, y_lo..y_hi)?;
        style::house_mesh(
            chart
                .configure_mesh()
                .x_labels(10)
                .y_labels(11)
                .x_label_formatter(&|x| {
                    if !whole {
                        format!("{x:.2}")
                    } else if x.fract().abs() < 1e-9 {
                        format!("{x:.0}")
                    } else {
                        String::new()
                    }
                })
                .y_label_formatter(&|y| format!("{y:.1}"))
                .x_desc(self.x_label.clone())
                .y_desc(self.y_label.clone()),
            style::AXIS,
        )
        .draw()?;
        let count = self.series.len() as f64;
        // Series' seed dots are spread apart to stay visible, but all of them within a
        // quarter of the smallest gap between doses: a dot never leaves its dose's slot (nor
        // the axis).
        let mut all: Vec<f64> = (self.series.iter())
            .flat_map(|s| s.points.iter().map(|p| p.dose))
            .collect();
        all.sort_by(f64::total_cmp);
        all.dedup();
        let gap = (all.windows(2).map(|w| w[1] - w[0])).fold(d_hi - d_lo, f64::min);
        let jitter = (0.012 * (d_hi - d_lo)).min(0.5 * gap / count.max(1.0));
        for (k, s) in self.series.iter().enumerate() {
            let color = series_color(k);
            let mut points = s.points.clone();
            points.sort_by(|a, b| a.dose.total_cmp(&b.dose));
            let band: Vec<(f64, f64)> = points
                .iter()
                .map(|p| (p.dose, p.hi))
                .chain(points.iter().rev().map(|p| (p.dose, p.lo)))
                .collect();
            chart.draw_series([Polygon::new(band, color.mix(0.18).filled())])?;
            let offset = (k as f64 - (count - 1.0) / 2.0) * jitter;
            chart.draw_series(
                s.seeds
                    .iter()
                    .map(|(d, v)| Circle::new((d + offset, *v), 3, color.mix(0.55).filled())),
            )?;
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|p| (p.dose, p.mean)),
                    color.stroke_width(3),
                ))?
                .label(s.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(3))
                });
            chart.draw_series(
                points
                    .iter()
                    .map(|p| Circle::new((p.dose, p.mean), 5, color.filled())),
            )?;
        }
        // The legend in its own column right of the plot, so it never covers data.
        let left = width - legend_px + 8;
        for (k, s) in self.series.iter().enumerate() {
            let y = 96 + LEGEND_ROW * i32::try_from(k).unwrap_or(i32::MAX / LEGEND_ROW - 96);
            let color = series_color(k);
            root.draw(&PathElement::new(
                vec![(left, y), (left + 22, y)],
                color.stroke_width(3),
            ))?;
            root.draw(&Text::new(
                s.label.clone(),
                (left + 30, y),
                style::text(style::LABEL).pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Left,
                    plotters::style::text_anchor::VPos::Center,
                )),
            ))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_legend_has_its_own_column_and_whole_doses_get_whole_labels() {
        super::super::ensure_fonts().unwrap();
        let series = |label: &str, doses: &[f64]| DegradationSeries {
            label: label.into(),
            points: doses
                .iter()
                .map(|&dose| DegradationPoint {
                    dose,
                    mean: 0.5,
                    lo: 0.4,
                    hi: 0.6,
                })
                .collect(),
            seeds: vec![],
        };
        let mut d = DegradationData {
            title: "t".into(),
            x_label: "k".into(),
            y_label: "p".into(),
            note: "n".into(),
            series: vec![series("oracle L2 pass@k", &[1.0, 2.0, 3.0])],
        };
        assert!(d.whole_doses());
        let (w, _) = d.size().unwrap();
        assert_eq!(
            w,
            style::PLOT_WIDTH + d.legend_width().unwrap(),
            "the plot keeps its width"
        );
        d.series.push(series(
            "a much longer series label for the legend",
            &[0.0, 0.25],
        ));
        assert!(!d.whole_doses());
        assert!(
            d.size().unwrap().0 > w,
            "a longer label widens the legend column"
        );
    }

    #[test]
    fn empty_or_reversed_series_are_rejected() {
        let mut d = DegradationData {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            note: "n".into(),
            series: vec![DegradationSeries {
                label: "a".into(),
                points: vec![],
                seeds: vec![],
            }],
        };
        assert!(d.validate().is_err());
        d.series[0].points.push(DegradationPoint {
            dose: 0.0,
            mean: 0.5,
            lo: 0.6,
            hi: 0.4,
        });
        assert!(d.validate().is_err());
        d.series[0].points[0] = DegradationPoint {
            dose: 0.0,
            mean: 0.5,
            lo: 0.4,
            hi: 0.6,
        };
        assert!(d.validate().is_ok());
        d.series[0].seeds.push((0.0, f64::NAN));
        assert!(d.validate().is_err());
    }
}
