//! Figures of SPEC §10, drawn with plotters from plain data structs into SVG and PNG.
//!
//! Why a module of its own: `benchaudit report`, `benchaudit audit` and anything else that
//! shows results draw the same figure kinds, and a figure must never compute a number
//! itself — callers pass the values they also write to JSON, so every plotted number is
//! traceable. Each kind is one data struct implementing [`Figure`]; [`write`] validates it,
//! sizes it, draws it into `NAME.svg` and `NAME.png` and returns the SVG text for inlining:
//!
//! | data | figure |
//! |---|---|
//! | [`SpectrumData`] | box = IQR, whiskers = min–max, dot = mean, tick = CVaR@α, rows sorted by mean |
//! | [`HeatmapData`] | per-task mean per model / policy |
//! | [`JointPanelData`] | harness {L0, L2} × scorer {judge, ground truth}, one dot per model |
//! | [`ProbeBarsData`] | judge vs ground truth per forged submission kind (or per policy) |
//! | [`ScaffoldingData`] | mean score per model at L0 / L1 / L2 (n/a where not run) |
//! | [`ForestData`] | Δ with CI per row; filled marker when the CI excludes 0 |
//! | [`DegradationData`] | dose → mean with CI band and per-seed dots |
//! | [`PassKData`] | pass@k and pass^k over k, one panel per condition, task dots in k's slot |
//! | [`CostScatterData`] | dollars per episode vs mean metric, Pareto front joined |
//!
//! Text is laid out and rasterised from DejaVu Sans compiled into the binary (no system fonts
//! are read). The PNG carries the glyphs; the SVG carries the same layout as `<text>` elements
//! that ask for DejaVu Sans first ([`SVG_FONT_STACK`]) and fall back to the viewer's sans-serif.

mod bars;
mod cost;
mod degradation;
mod forest;
mod glyphs;
mod heatmap;
mod joint;
mod passk;
mod spectrum;
mod stream;
mod style;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

pub use bars::{ProbeBarsData, ScaffoldingData};
pub use cost::{CostPoint, CostScatterData};
pub use degradation::{DegradationData, DegradationPoint, DegradationSeries};
pub use forest::{ForestData, ForestRow};
pub use heatmap::HeatmapData;
pub use joint::{JointPanelData, JointSeries};
pub use passk::{PassKData, PassKPanel};
pub use spectrum::{SpectrumData, SpectrumRow};
pub use style::{NO_DATA, num, num_or_no_data};

use crate::error::{Error, Result, io};

/// Returns early with a [`Error::Figure`] naming what cannot be drawn.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::Error::Figure(format!($($arg)*)))
    };
}
pub(crate) use bail;

/// Font stack written into SVG text: the face the layout was measured with first.
pub const SVG_FONT_STACK: &str = "DejaVu Sans, Bitstream Vera Sans, Verdana, sans-serif";

/// Result of drawing onto a plotters backend `DB`.
pub type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A figure written to disk: where and how big.
///
/// Exists so callers can list the files in their JSON, check the PNG size and embed the SVG
/// (read back from its file as the page is written: a figure's text follows its data, 10 MB
/// for the pass@k figure at 1 000 seeds).
#[derive(Debug, Clone)]
pub struct Rendered {
    /// Path of the SVG file.
    pub svg_path: PathBuf,
    /// Path of the PNG file.
    pub png_path: PathBuf,
    /// Newlines in the SVG file.
    pub svg_lines: usize,
    /// Width in pixels (SVG and PNG).
    pub width: u32,
    /// Height in pixels (SVG and PNG).
    pub height: u32,
}

impl Rendered {
    /// The SVG document, read from its file.
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn svg_text(&self) -> Result<String> {
        std::fs::read_to_string(&self.svg_path)
            .map_err(io(format!("reading {}", self.svg_path.display())))
    }

    /// The SVG as a page inlines it: from its file.
    #[must_use]
    pub fn inline(&self) -> crate::doc::InlineSvg {
        crate::doc::InlineSvg::File {
            path: self.svg_path.clone(),
            lines: self.svg_lines,
        }
    }
}

/// One figure kind: its pixel size and how to draw it on any plotters backend.
///
/// Exists so the SVG and the PNG are drawn by the same code from the same data.
pub trait Figure {
    /// Rejects data that cannot be drawn (non-finite values, empty rows, mismatched lengths).
    fn validate(&self) -> Result<()>;
    /// Pixel size; may depend on the data (rows, label widths).
    fn size(&self) -> Result<(u32, u32)>;
    /// Draws the whole figure onto `root`.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB>;
}

/// Registers the embedded DejaVu Sans faces with plotters, once per process.
///
/// Exists because plotters' `ab_glyph` text path knows no fonts until one is registered, and
/// every text (SVG too) would fail with `FontUnavailable` otherwise (see notes/crates.md).
pub fn ensure_fonts() -> Result<()> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let faces = [
                (FontStyle::Normal, "regular", dejavu::sans::regular()),
                (FontStyle::Bold, "bold", dejavu::sans::bold()),
                (FontStyle::Italic, "oblique", dejavu::sans::oblique()),
                (FontStyle::Oblique, "oblique", dejavu::sans::oblique()),
            ];
            for (style, name, bytes) in faces {
                plotters::style::register_font(style::FONT, style, bytes).map_err(|_| {
                    format!("the embedded DejaVu Sans {name} face is not a valid font")
                })?;
            }
            Ok(())
        })
        .clone()
        .map_err(Error::Figure)
}

/// Validates, sizes and draws `figure` into `dir/name.svg` and `dir/name.png`.
///
/// # Errors
/// Data the figure cannot draw (see each kind's `validate`), a size out of range, or an IO /
/// drawing failure.
pub fn write<F: Figure>(figure: &F, dir: &Path, name: &str) -> Result<Rendered> {
    let named = |what: &str| {
        let what = what.to_string();
        move |e: Error| match e {
            Error::Figure(msg) => Error::Figure(format!("{what} {name}: {msg}")),
            other => other,
        }
    };
    ensure_fonts()?;
    figure.validate().map_err(named("figure"))?;
    let (width, height) = figure.size().map_err(named("laying out figure"))?;
    if width == 0 || height == 0 || width > 20_000 || height > 20_000 {
        bail!("figure {name} would be {width}×{height} pixels");
    }
    std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    // Drawn into the file call by call (figures::stream: plotters' own SVG backend, never the
    // whole text in memory). The layout was measured with DejaVu Sans; ask SVG viewers for it
    // (or its metric twins) before any other sans-serif face: the attribute is replaced on the
    // way, as `str::replace` on the text would replace it.
    let svg_path = dir.join(format!("{name}.svg"));
    let writing = || io(format!("writing {}", svg_path.display()));
    let (from, to) = (
        format!("font-family=\"{}\"", style::FONT),
        format!("font-family=\"{SVG_FONT_STACK}\""),
    );
    let file = std::fs::File::create(&svg_path).map_err(writing())?;
    let mut out = std::io::BufWriter::new(file);
    let lines = std::cell::Cell::new(0);
    {
        let backend = stream::PerCall::new(&mut out, (width, height), (&from, &to), &lines)
            .map_err(writing())?;
        let root = backend.into_drawing_area();
        figure
            .draw(&root)
            .map_err(|e| Error::Figure(format!("drawing {name}.svg: {e}")))?;
        root.present()
            .map_err(|e| Error::Figure(format!("drawing {name}.svg: {e}")))?;
    }
    stream::PerCall::close(&mut out, &lines).map_err(writing())?;
    let svg_lines = lines.get();
    out.flush().map_err(writing())?;
    let png_path = dir.join(format!("{name}.png"));
    {
        let bitmap = BitMapBackend::new(&png_path, (width, height));
        let Some(backend) = glyphs::GlyphBackend::new(bitmap) else {
            bail!("the embedded DejaVu Sans faces do not parse");
        };
        let root = backend.into_drawing_area();
        figure
            .draw(&root)
            .map_err(|e| Error::Figure(format!("drawing {name}.png: {e}")))?;
        root.present()
            .map_err(|e| Error::Figure(format!("writing {}: {e}", png_path.display())))?;
    }
    Ok(Rendered {
        svg_path,
        png_path,
        svg_lines,
        width,
        height,
    })
}

/// Fails unless every value is finite.
pub(crate) fn check_finite<'a>(
    what: &str,
    values: impl IntoIterator<Item = &'a f64>,
) -> Result<()> {
    match values.into_iter().find(|v| !v.is_finite()) {
        Some(v) => Err(Error::Figure(format!(
            "{what} holds a non-finite value ({v})"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn fonts_register_and_measure_text() {
        ensure_fonts().unwrap();
        let (w, h) = style::text_size("Reliability", style::LABEL).unwrap();
        assert!(w > 40 && h > 5, "{w}×{h}");
        // Registering twice is harmless.
        ensure_fonts().unwrap();
    }
}

#[cfg(test)]
mod render_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    type Samples = (
        SpectrumData,
        HeatmapData,
        ProbeBarsData,
        ScaffoldingData,
        ForestData,
        DegradationData,
        JointPanelData,
    );

    /// Every figure kind drawn from [`sample_data`].
    fn render_all(dir: &Path) -> Vec<Rendered> {
        let (spectrum, heat, probe, scaffold, forest, degradation, joint) = sample_data();
        vec![
            write(&spectrum, dir, "spectrum").unwrap(),
            write(&heat, dir, "heatmap").unwrap(),
            write(&probe, dir, "probe").unwrap(),
            write(&scaffold, dir, "scaffolding").unwrap(),
            write(&forest, dir, "forest").unwrap(),
            write(&degradation, dir, "degradation").unwrap(),
            write(&joint, dir, "joint").unwrap(),
        ]
    }

    /// Sample data for every figure kind, as a report would pass it.
    fn sample_data() -> Samples {
        let rows = [
            ("oracle", 1.0, 1.0, 1.0),
            ("no-dedup", 0.6, 0.887, 0.65),
            ("skips-faults", 0.0, 0.88, 0.41),
            ("empty", 0.0, 0.0, 0.0),
        ];
        let spectrum = SpectrumData {
            title: "Reliability spectrum, L2, ground-truth F1".into(),
            x_label: "ground-truth F1 per episode".into(),
            alpha: 0.2,
            rows: rows
                .iter()
                .map(|&(l, w, m, c)| SpectrumRow {
                    label: l.into(),
                    n: 60,
                    worst: w,
                    q1: (w + m) / 2.0,
                    median: m,
                    q3: m.max((m + 1.0) / 2.0).min(1.0),
                    max: 1.0_f64.max(m),
                    mean: m,
                    cvar: c,
                })
                .collect(),
        };
        let heat = HeatmapData {
            title: "Mean ground-truth F1 per task, L2".into(),
            row_labels: rows.iter().map(|r| r.0.to_string()).collect(),
            col_labels: vec![
                "T3_duplicates".into(),
                "T5_server_error_500".into(),
                "T8_mixed_faults".into(),
            ],
            values: vec![
                vec![Some(1.0), Some(1.0), Some(1.0)],
                vec![Some(0.6), Some(1.0), None],
                vec![Some(0.3), Some(0.0), Some(0.5)],
                vec![Some(0.0); 3],
            ],
            value_label: "mean ground-truth F1".into(),
            range: (0.0, 1.0),
        };
        let probe = ProbeBarsData {
            title: "Judge vs ground truth".into(),
            kinds: vec!["correct".into(), "empty".into(), "fabricated".into()],
            judge: vec![0.987, 0.648, 0.987],
            truth: vec![1.0, 0.0, 0.0],
            judge_label: "legacy judge (0–1)".into(),
            truth_label: "ground-truth F1".into(),
            y_label: "score".into(),
        };
        let scaffold = ScaffoldingData {
            title: "Scaffolding spectrum".into(),
            models: vec!["oracle".into(), "no-dedup".into()],
            levels: vec!["L0".into(), "L1".into(), "L2".into()],
            values: vec![
                vec![Some(1.0), Some(0.95), Some(1.0)],
                vec![Some(1.0), None, Some(0.887)],
            ],
            y_label: "mean ground-truth F1".into(),
            note: Some("mean over all tasks and seeds at each level".into()),
        };
        let forest = ForestData {
            title: "Paired differences".into(),
            x_label: "Δ F1 (B − A)".into(),
            note: "95% paired bootstrap CI".into(),
            rows: vec![
                ForestRow {
                    label: "oracle L2".into(),
                    estimate: 0.0,
                    lo: 0.0,
                    hi: 0.0,
                },
                ForestRow {
                    label: "no-dedup L2".into(),
                    estimate: 0.11,
                    lo: 0.05,
                    hi: 0.17,
                },
                ForestRow {
                    label: "skips-faults L2".into(),
                    estimate: -0.05,
                    lo: -0.2,
                    hi: 0.08,
                },
            ],
        };
        let degradation = DegradationData {
            title: "Degradation".into(),
            x_label: "dose".into(),
            y_label: "coverage".into(),
            note: "band = 95% CI of the mean; dots = seeds".into(),
            series: (0..2)
                .map(|s| DegradationSeries {
                    label: format!("policy {s}"),
                    points: (0..5)
                        .map(|d| {
                            let m = 1.0 - 0.1 * f64::from(d) * f64::from(s + 1);
                            DegradationPoint {
                                dose: f64::from(d) / 4.0,
                                mean: m,
                                lo: m - 0.05,
                                hi: (m + 0.05).min(1.0),
                            }
                        })
                        .collect(),
                    seeds: (0..5)
                        .flat_map(|d| {
                            (0..4).map(move |k| {
                                (
                                    f64::from(d) / 4.0,
                                    1.0 - 0.05 * f64::from(k)
                                        - 0.1 * f64::from(d) * f64::from(s + 1),
                                )
                            })
                        })
                        .collect(),
                })
                .collect(),
        };
        let joint = JointPanelData {
            title: "Joint intervention".into(),
            row_labels: ["harness L0".into(), "harness L2".into()],
            col_labels: ["legacy judge (0–1)".into(), "ground-truth F1".into()],
            note: "mean over shared episodes".into(),
            models: vec![
                JointSeries {
                    label: "oracle".into(),
                    values: [[Some(0.971), Some(1.0)], [Some(0.971), Some(1.0)]],
                },
                JointSeries {
                    label: "empty".into(),
                    values: [[Some(0.971), Some(1.0)], [Some(0.641), Some(0.0)]],
                },
            ],
        };
        (spectrum, heat, probe, scaffold, forest, degradation, joint)
    }

    /// Renders every kind from sample data. Set `BENCHAUDIT_FIGURE_SMOKE_DIR=DIR` to keep the
    /// files in DIR and look at them (a figure is only checked when a person has seen it).
    #[test]
    fn every_kind_writes_svg_and_a_png_of_its_size() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::env::var_os("BENCHAUDIT_FIGURE_SMOKE_DIR")
            .map_or_else(|| tmp.path().to_path_buf(), PathBuf::from);
        for r in render_all(&dir) {
            let svg = r.svg_text().unwrap();
            assert_eq!(svg.matches('\n').count(), r.svg_lines);
            assert!(
                svg.starts_with("<svg") && svg.contains("</svg>"),
                "{}",
                r.svg_path.display()
            );
            assert!(svg.contains("<text"), "no text in {}", r.svg_path.display());
            assert!(svg.contains(SVG_FONT_STACK) && !svg.contains("font-family=\"sans-serif\""));
            let png = image::open(&r.png_path).unwrap();
            assert_eq!(
                (png.width(), png.height()),
                (r.width, r.height),
                "{}",
                r.png_path.display()
            );
            // Text was rasterised: some pixels are dark ink, not only white and fills.
            let rgb = png.to_rgb8();
            assert!(
                rgb.pixels().filter(|p| p.0.iter().all(|&c| c < 60)).count() > 200,
                "{}",
                r.png_path.display()
            );
        }
    }

    /// Issue 13: a 12-arm sweep (24 conditions) drew a bar figure 9 220 px wide. Figures that
    /// grow with arms, tasks or policies wrap into rows within [`style::MAX_WIDTH`] and grow in
    /// height instead; the PNG has the size the layout says. Set
    /// `BENCHAUDIT_FIGURE_SMOKE_DIR=DIR` to look at them.
    #[test]
    fn wide_inputs_wrap_into_rows_of_bounded_width() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::env::var_os("BENCHAUDIT_FIGURE_SMOKE_DIR")
            .map_or_else(|| tmp.path().to_path_buf(), PathBuf::from);
        let arms: Vec<String> = (0..12u32)
            .flat_map(|k| {
                [
                    format!("always-retry [escalating; quota {}, slack {k}]", 8 + k),
                    format!("always-retry [constant@0.4756; quota {}, slack {k}]", 8 + k),
                ]
            })
            .collect();
        let few = ScaffoldingData {
            title: "Mean ground-truth F1 by scaffolding level".into(),
            models: arms[..2].to_vec(),
            levels: vec!["L1".into(), "L2".into()],
            values: vec![vec![Some(0.5), Some(0.9)]; 2],
            y_label: "mean".into(),
            note: None,
        };
        let many = ScaffoldingData {
            models: arms.clone(),
            values: (0..arms.len())
                .map(|i| vec![Some(i as f64 / 24.0), None])
                .collect(),
            ..few.clone()
        };
        let narrow = write(&few, &dir, "bars_2").unwrap();
        let wide = write(&many, &dir, "bars_24").unwrap();
        assert!(wide.width <= style::MAX_WIDTH, "{} px wide", wide.width);
        assert!(
            wide.height >= 3 * (narrow.height - 88),
            "rows stack: {}",
            wide.height
        );
        let tasks: Vec<String> = (1..=30).map(|t| format!("T{t}_task")).collect();
        let heat = HeatmapData {
            title: "Mean ground-truth F1 per task".into(),
            row_labels: arms[..4].to_vec(),
            col_labels: tasks.clone(),
            values: vec![(0..30).map(|t| Some(f64::from(t) / 30.0)).collect(); 4],
            value_label: "mean F1".into(),
            range: (0.0, 1.0),
        };
        let h = write(&heat, &dir, "heatmap_30").unwrap();
        assert!(h.width <= style::MAX_WIDTH, "{} px wide", h.width);
        assert!(
            h.height > 2 * (50 + 34 + 4 * 38),
            "bands stack: {}",
            h.height
        );
        for r in [&narrow, &wide, &h] {
            let png = image::open(&r.png_path).unwrap();
            assert_eq!((png.width(), png.height()), (r.width, r.height));
            // Every label is drawn: the last arm and the last task are in the SVG.
            assert!(r.svg_text().unwrap().contains("<text"));
        }
        assert!(
            wide.svg_text().unwrap().contains("slack 11]"),
            "the 24th group is drawn"
        );
        assert!(
            h.svg_text().unwrap().contains("T30_task"),
            "the 30th column is drawn"
        );
    }

    /// The SVG as plotters' own backend draws it into a string, with the font replaced.
    fn plotters_svg<F: Figure>(figure: &F) -> String {
        let (width, height) = figure.size().unwrap();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
            figure.draw(&root).unwrap();
            root.present().unwrap();
        }
        svg.replace(
            &format!("font-family=\"{}\"", style::FONT),
            &format!("font-family=\"{SVG_FONT_STACK}\""),
        )
    }

    /// Every kind's file is byte for byte what plotters' string backend draws, with the font
    /// replaced as `str::replace` replaces it.
    #[test]
    fn svg_files_are_what_plotters_draws_with_the_font_stack() {
        ensure_fonts().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let rendered = render_all(dir.path());
        let data = sample_data();
        let expected = [
            plotters_svg(&data.0),
            plotters_svg(&data.1),
            plotters_svg(&data.2),
            plotters_svg(&data.3),
            plotters_svg(&data.4),
            plotters_svg(&data.5),
            plotters_svg(&data.6),
        ];
        assert_eq!(rendered.len(), expected.len());
        for (r, e) in rendered.iter().zip(&expected) {
            assert_eq!(&r.svg_text().unwrap(), e, "{}", r.svg_path.display());
        }
        let point = |k: u32, v: f64| DegradationPoint {
            dose: f64::from(k),
            mean: v,
            lo: v * 0.9,
            hi: v,
        };
        let passk = PassKData {
            title: "pass@k & pass^k <L2>".into(),
            note: "line = mean".into(),
            x_label: "k (trials)".into(),
            y_label: "probability".into(),
            panels: ["oracle L2", "no-dedup \"L0\""]
                .iter()
                .map(|label| PassKPanel {
                    label: (*label).into(),
                    at_k: (1..=12)
                        .map(|k| point(k, 1.0 - 0.5 / f64::from(k)))
                        .collect(),
                    hat_k: (1..=12).map(|k| point(k, 0.5 / f64::from(k))).collect(),
                    tasks: (0..3)
                        .map(|t| benchaudit_stats::TaskTrials {
                            n: 12,
                            successes: 12 - t,
                            up_to: 12,
                        })
                        .collect(),
                })
                .collect(),
        };
        let cost = CostScatterData {
            title: "Cost vs F1".into(),
            y_label: "mean F1".into(),
            note: "ringed = Pareto front".into(),
            points: vec![
                CostPoint {
                    label: "openai:gpt-4o L2".into(),
                    usd: 0.012,
                    mean: 0.8,
                    pareto: true,
                },
                CostPoint {
                    label: "local L2".into(),
                    usd: 0.002,
                    mean: 0.4,
                    pareto: false,
                },
            ],
        };
        let r = write(&passk, dir.path(), "passk").unwrap();
        assert_eq!(r.svg_text().unwrap(), plotters_svg(&passk));
        let r = write(&cost, dir.path(), "cost").unwrap();
        assert_eq!(r.svg_text().unwrap(), plotters_svg(&cost));
    }
}
