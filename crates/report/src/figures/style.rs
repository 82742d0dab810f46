//! Shared look of every figure: font family and sizes, a colour-blind-safe palette, a
//! sequential colour map and small layout helpers.
//!
//! Exists so the figure kinds read as one family and so layout arithmetic (label
//! widths, axis ranges, number formats) is written once.

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontDesc, FontStyle};

use super::DrawResult;

/// Font family every text uses (registered from the embedded DejaVu Sans).
pub const FONT: &str = "sans-serif";
/// Widest a figure that grows with its arms, tasks or policies may get (issue 13: a 12-arm
/// sweep drew 9 220 px wide): such a figure wraps into rows of panels at this width and grows
/// in height instead. Only a single label or title wider than this can widen a figure.
pub const MAX_WIDTH: u32 = 1600;
/// The canvas of the x–y plots (degradation curves, cost scatter), legend column aside.
pub const PLOT_WIDTH: u32 = 1000;
/// Its height.
pub const PLOT_HEIGHT: u32 = 640;
/// Title size in pixels.
pub const TITLE: f64 = 24.0;
/// Subtitle / legend size.
pub const SUBTITLE: f64 = 16.0;
/// Axis description size.
pub const AXIS: f64 = 17.0;
/// Tick and row label size.
pub const LABEL: f64 = 15.0;
/// In-plot annotation size (values on bars, cells).
pub const ANNOTATION: f64 = 14.0;

/// Okabe–Ito palette (colour-blind safe), in the order series use it.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(230, 159, 0),   // orange
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(240, 228, 66),  // yellow
    RGBColor(0, 0, 0),       // black
];
/// Colour of the judge (shape scorer) in judge-vs-truth figures.
pub const JUDGE: RGBColor = RGBColor(150, 150, 150);
/// Colour of ground truth in judge-vs-truth figures.
pub const TRUTH: RGBColor = RGBColor(0, 114, 178);
/// Emphasis colour (CVaR tick).
pub const ACCENT: RGBColor = RGBColor(213, 94, 0);
/// Dark text.
pub const INK: RGBColor = RGBColor(25, 25, 25);
/// Grid and secondary lines.
pub const GRID: RGBColor = RGBColor(225, 225, 225);
/// Axis lines.
pub const AXIS_LINE: RGBColor = RGBColor(90, 90, 90);

/// The colour of series `i`: the palette first, then hues spaced by the golden angle at a
/// darker lightness, so no two series of one figure share a colour however many there are.
pub fn series_color(i: usize) -> RGBColor {
    if let Some(c) = PALETTE.get(i) {
        return *c;
    }
    let n = (i - PALETTE.len()) as f64;
    let hue = (0.07 + n * 0.618_033_988_749_895).fract();
    let lightness = [0.38, 0.52, 0.30][(i - PALETTE.len()) % 3];
    let (r, g, b) = HSLColor(hue, 0.75, lightness).rgb();
    RGBColor(r, g, b)
}

/// A text style of `size` in the figure font, dark ink.
pub fn text(size: f64) -> TextStyle<'static> {
    TextStyle::from(FontDesc::new(
        FontFamily::Name(FONT),
        size,
        FontStyle::Normal,
    ))
    .color(&INK)
}

/// A bold text style of `size`.
pub fn bold(size: f64) -> TextStyle<'static> {
    TextStyle::from(FontDesc::new(FontFamily::Name(FONT), size, FontStyle::Bold)).color(&INK)
}

/// `style` anchored at (h, v).
pub fn anchored(style: TextStyle<'_>, h: HPos, v: VPos) -> TextStyle<'_> {
    style.pos(Pos::new(h, v))
}

/// Fills `root` white and draws the title (and the caption line under it, if any), centred:
/// every figure's head.
pub fn head<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    note: Option<&str>,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let cx = root.dim_in_pixel().0 as i32 / 2;
    root.draw(&Text::new(
        title.to_string(),
        (cx, 22),
        anchored(bold(TITLE), HPos::Center, VPos::Center),
    ))?;
    if let Some(note) = note {
        root.draw(&Text::new(
            note.to_string(),
            (cx, 52),
            anchored(text(SUBTITLE), HPos::Center, VPos::Center),
        ))?;
    }
    Ok(())
}

/// The width a figure's head needs: its title and caption line with 20 pixels either side.
pub fn head_width(title: &str, note: Option<&str>) -> crate::Result<u32> {
    let note = match note {
        Some(n) => text_size(n, SUBTITLE)?.0 + 40,
        None => 0,
    };
    Ok((text_size(title, TITLE)?.0 + 40).max(note))
}

/// The house style of a chart's mesh: label and axis-description fonts, light grid, dark axes.
pub fn house_mesh<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
    axis_desc: f64,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged,
    Y: Ranged,
    DB: DrawingBackend,
{
    mesh.label_style(text(LABEL))
        .axis_desc_style(text(axis_desc))
        .bold_line_style(GRID)
        .light_line_style(WHITE)
        .axis_style(AXIS_LINE)
}

/// Width and height in pixels of `s` in the figure font at `size`.
pub fn text_size(s: &str, size: f64) -> crate::Result<(u32, u32)> {
    FontDesc::new(FontFamily::Name(FONT), size, FontStyle::Normal)
        .box_size(s)
        .map_err(|e| crate::Error::Figure(format!("measuring text {s:?}: {e}")))
}

/// Width in pixels of the widest of `labels` at `size` (0 when there are none).
pub fn max_width<'a>(labels: impl IntoIterator<Item = &'a str>, size: f64) -> crate::Result<u32> {
    let mut widest = 0;
    for label in labels {
        widest = widest.max(text_size(label, size)?.0);
    }
    Ok(widest)
}

/// A score formatted as every report prints it: three decimals, never `-0.000`.
pub fn num(x: f64) -> String {
    let s = format!("{x:.3}");
    if s.chars().all(|c| matches!(c, '-' | '0' | '.')) {
        s.trim_start_matches('-').to_string()
    } else {
        s
    }
}

/// An aggregate as every report prints it: [`num`], or "no data" when it was computed over zero
/// episodes (never 0 or NaN).
pub fn num_or_no_data(x: Option<f64>) -> String {
    x.map_or_else(|| NO_DATA.to_string(), num)
}

/// What a cell computed over zero episodes reads.
pub const NO_DATA: &str = "no data";

/// An axis range covering `values` and `[floor, ceil]` (the natural scale, e.g. 0–1), with
/// `pad` of the span added on each side.
pub fn axis_range(
    values: impl IntoIterator<Item = f64>,
    floor: f64,
    ceil: f64,
    pad: f64,
) -> (f64, f64) {
    let (mut lo, mut hi) = (floor, ceil);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi - lo < 1e-9 {
        hi = lo + 1.0;
    }
    let span = hi - lo;
    (lo - pad * span, hi + pad * span)
}

/// A colour for `value` on a perceptually ordered dark-blue → green → yellow scale
/// (viridis anchors), `value` clamped to `[lo, hi]`.
pub fn sequential(value: f64, lo: f64, hi: f64) -> RGBColor {
    const ANCHORS: [(u8, u8, u8); 9] = [
        (68, 1, 84),
        (71, 44, 122),
        (59, 81, 139),
        (44, 113, 142),
        (33, 144, 141),
        (39, 173, 129),
        (92, 200, 99),
        (170, 220, 50),
        (253, 231, 37),
    ];
    let t = if hi > lo {
        ((value - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.5
    };
    let pos = t * (ANCHORS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(ANCHORS.len() - 2);
    let f = pos - i as f64;
    let (a, b) = (ANCHORS[i], ANCHORS[i + 1]);
    let mix = |x: u8, y: u8| {
        (f64::from(x) + (f64::from(y) - f64::from(x)) * f)
            .round()
            .clamp(0.0, 255.0) as u8
    };
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Black or white, whichever reads better on `background`.
pub fn ink_on(background: RGBColor) -> RGBColor {
    let RGBColor(r, g, b) = background;
    let luminance = 0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b);
    if luminance > 140.0 { INK } else { WHITE }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_never_print_negative_zero() {
        assert_eq!(num(-0.0001), "0.000");
        assert_eq!(num(-0.0), "0.000");
        assert_eq!(num(-0.0006), "-0.001");
        assert_eq!(num(0.8875), "0.887");
        assert_eq!(num(1.0), "1.000");
    }

    #[test]
    fn axis_range_covers_data_and_natural_scale() {
        assert_eq!(axis_range([0.2, 0.7], 0.0, 1.0, 0.0), (0.0, 1.0));
        let (lo, hi) = axis_range([-0.5, 1.5], 0.0, 1.0, 0.1);
        assert!((lo + 0.7).abs() < 1e-12 && (hi - 1.7).abs() < 1e-12);
        // A degenerate span is widened, not divided by zero.
        assert_eq!(axis_range([], 0.0, 0.0, 0.0), (0.0, 1.0));
    }

    #[test]
    fn series_colours_never_repeat_within_a_figure() {
        let colours: Vec<RGBColor> = (0..64).map(series_color).collect();
        for (i, a) in colours.iter().enumerate() {
            for b in &colours[i + 1..] {
                assert_ne!(a, b, "series {i} shares its colour");
            }
        }
        assert_eq!(series_color(0), PALETTE[0]);
    }

    #[test]
    fn colour_map_is_ordered_and_clamped() {
        assert_eq!(sequential(-1.0, 0.0, 1.0), RGBColor(68, 1, 84));
        assert_eq!(sequential(2.0, 0.0, 1.0), RGBColor(253, 231, 37));
        assert_eq!(ink_on(sequential(0.0, 0.0, 1.0)), WHITE);
        assert_eq!(ink_on(sequential(1.0, 0.0, 1.0)), INK);
    }
}
