//! Report prose and tables, built from `stats.json` structs only.
//!
//! Exists so every number a reader sees is a formatted field of [`RunStats`] or
//! [`CompareStats`]: nothing here computes a statistic, and numbers are printed with the
//! formats below so the number guard's normalisation accepts them (scores and intervals with
//! three decimals, p-values with three decimals or, below 0.001, in scientific notation,
//! counts as integers, α and τ as stored, the confidence level as a whole percentage).

mod extras;
mod paired;
mod run;

use benchaudit_stats::Summary;

pub use paired::compare_blocks;
pub use run::run_blocks;

use crate::doc::{Align, Block, FigureBlock, tagged};
use crate::figures::{Rendered, num};
use crate::model::{PooledStats, Settings};

/// A figure as written, for embedding.
pub struct Drawn<'a> {
    /// Caption.
    pub caption: &'a str,
    /// SVG path relative to the report.
    pub svg: &'a str,
    /// PNG path relative to the report.
    pub png: &'a str,
    /// The rendered figure.
    pub rendered: &'a Rendered,
}

/// The blocks of the figures whose file name contains `marker`.
fn figures_with<'a>(figures: &'a [Drawn<'_>], marker: &'a str) -> impl Iterator<Item = Block> + 'a {
    figures
        .iter()
        .filter(move |f| f.svg.contains(marker))
        .map(figure_block)
}

fn figure_block(d: &Drawn<'_>) -> Block {
    Block::Figure(FigureBlock {
        caption: d.caption.to_string(),
        svg: d.svg.to_string(),
        png: d.png.to_string(),
        inline_svg: d.rendered.inline(),
    })
}

/// A p-value: three decimals, or two significant digits in scientific notation below 0.001
/// (so a tiny p never prints as a misleading 0.000).
fn p_value(p: f64) -> String {
    if p >= 0.001 || p == 0.0 {
        num(p)
    } else {
        format!("{p:.1e}")
    }
}

/// The confidence level as a percentage (0.95 → "95%").
fn level_pct(level: f64) -> String {
    format!("{:.0}%", level * 100.0)
}

fn r_header(tau: f64) -> String {
    format!("R@{tau}")
}

fn settings_paragraph(s: &Settings) -> String {
    let taus: Vec<String> = s.taus.iter().map(|t| format!("Reliability@{t}")).collect();
    format!(
        "Statistics: worst = minimum; CVaR@{} = mean of the ⌈α·n⌉ lowest values; {} = share of episodes scoring at least τ; \
         {} CI = seeded percentile bootstrap of the mean (B = {}, seed {}), bit-reproducible. \
         Boxes use quartiles by linear interpolation between order statistics.",
        s.alpha,
        taus.join(" and "),
        level_pct(s.level),
        s.resamples,
        s.seed
    )
}

fn pooled_sort(rows: &[PooledStats]) -> Vec<&PooledStats> {
    let mut v: Vec<&PooledStats> = rows.iter().collect();
    v.sort_by(|a, b| {
        a.condition
            .level
            .cmp(&b.condition.level)
            .then(b.summary.mean.total_cmp(&a.summary.mean))
            .then_with(|| a.label.cmp(&b.label))
    });
    v
}

fn summary_header(s: &Settings, leading: &[&str]) -> (Vec<String>, Vec<Align>) {
    let mut header: Vec<String> = leading.iter().map(|h| (*h).to_string()).collect();
    let mut align = vec![Align::Left; leading.len()];
    for h in [
        "n".to_string(),
        "mean".to_string(),
        format!("{} CI", level_pct(s.level)),
        "worst".to_string(),
        format!("CVaR@{}", s.alpha),
    ]
    .into_iter()
    .chain(s.taus.iter().map(|t| r_header(*t)))
    .chain(["shortfall".to_string()])
    {
        header.push(h);
        align.push(Align::Right);
    }
    (header, align)
}

/// A table of summaries: the leading cells of each row, then n, mean, CI, worst, CVaR,
/// Reliability@τ and the worst-case shortfall (mean − worst). Each row comes with the JSON
/// pointer of its object in `stats.json` (holding `summary` and `shortfall`), and its figures
/// are tagged with their paths for the number guard.
fn summary_table<'a>(
    s: &Settings,
    leading: &[&str],
    rows: impl Iterator<Item = (Vec<String>, &'a Summary, f64, String)>,
) -> Block {
    let (header, align) = summary_header(s, leading);
    let row = |(leading, summary, shortfall, base): (Vec<String>, &Summary, f64, String)| {
        let mut cells = summary_cells(summary, &format!("{base}/summary"));
        cells.push(tagged(
            num(shortfall),
            &format!("{base}/shortfall/shortfall"),
        ));
        [leading, cells].concat()
    };
    Block::Table {
        header,
        align,
        rows: rows.map(row).collect(),
    }
}

/// n, mean, CI, worst, CVaR and Reliability@τ of the summary at JSON pointer `path`, each
/// tagged with its path.
fn summary_cells(s: &Summary, path: &str) -> Vec<String> {
    let mut cells = vec![
        tagged(s.n, &format!("{path}/n")),
        tagged(num(s.mean), &format!("{path}/mean")),
        format!(
            "[{}, {}]",
            tagged(num(s.mean_ci.lo), &format!("{path}/mean_ci/lo")),
            tagged(num(s.mean_ci.hi), &format!("{path}/mean_ci/hi"))
        ),
        tagged(num(s.worst), &format!("{path}/worst")),
        tagged(num(s.cvar), &format!("{path}/cvar")),
    ];
    cells.extend(
        s.reliability
            .iter()
            .enumerate()
            .map(|(k, r)| tagged(num(r.fraction), &format!("{path}/reliability/{k}/fraction"))),
    );
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_values_never_print_as_zero() {
        assert_eq!(p_value(0.5), "0.500");
        assert_eq!(p_value(0.001953125), "0.002");
        assert_eq!(p_value(9.999e-6), "1.0e-5");
        assert_eq!(p_value(0.0), "0.000");
        assert_eq!(level_pct(0.95), "95%");
        assert_eq!(r_header(0.9), "R@0.9");
    }
}
