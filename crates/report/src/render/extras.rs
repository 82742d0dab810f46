//! The pass@k / pass^k and cost sections of a run report.

use super::{Drawn, figures_with, level_pct};
use crate::doc::Align::{Left as L, Right as R};
use crate::doc::Block;
use crate::figures::num;
use crate::model::{CostSection, PassKSection, RunStats};

/// Whether k gets a row of the pass-k table: 1–4, powers of two, multiples of ten and the
/// largest k (every k is in stats.json).
fn shown(k: u64, max_k: u64) -> bool {
    k <= 4 || k.is_power_of_two() || k.is_multiple_of(10) || k == max_k
}

/// Dollars with three significant digits (at least three decimals), `unknown` for no price.
pub fn usd(x: Option<f64>) -> String {
    match x {
        None => "unknown".to_string(),
        Some(0.0) => "$0".to_string(),
        Some(x) => {
            let magnitude = x.abs().log10().floor();
            // Three significant digits: 2 − ⌊log10 x⌋ decimals, between 3 and 9.
            let decimals = (2.0 - magnitude).clamp(3.0, 9.0) as usize;
            format!("${x:.decimals$}")
        }
    }
}

fn pass_k_blocks(p: &PassKSection, level: f64, figures: &[Drawn<'_>]) -> Vec<Block> {
    let mut b = vec![
        Block::Heading(2, "pass@k and pass^k".to_string()),
        Block::Paragraph(format!(
            "A task's trials are its seeds; a trial succeeds when the metric is at least {}. pass@k = chance that at least \
             one of k trials drawn without replacement succeeds, pass^k = chance that all k do (unbiased estimators from n \
             trials with c successes: 1 − C(n−c, k)/C(n, k) and C(c, k)/C(n, k)). Rows are means over tasks with {} \
             stratified bootstrap CIs (seeds resampled within each task); k runs to the fewest seeds of any task. \
             Per-task values and every k are in stats.json (`pass_k`).",
            p.threshold,
            level_pct(level)
        )),
    ];
    let columns = [
        ("policy", L),
        ("level", L),
        ("tasks", R),
        ("k", R),
        ("pass@k", R),
        ("pass@k CI", R),
        ("pass^k", R),
        ("pass^k CI", R),
    ];
    let mut rows = Vec::new();
    for r in &p.rows {
        for q in r.curve.pooled.iter().filter(|q| shown(q.k, r.curve.max_k)) {
            rows.push(vec![
                r.label.clone(),
                r.condition.level.to_string(),
                r.tasks.len().to_string(),
                q.k.to_string(),
                num(q.pass_at_k.estimate),
                format!("[{}, {}]", num(q.pass_at_k.lo), num(q.pass_at_k.hi)),
                num(q.pass_hat_k.estimate),
                format!("[{}, {}]", num(q.pass_hat_k.lo), num(q.pass_hat_k.hi)),
            ]);
        }
    }
    b.push(Block::table(&columns, rows));
    b.extend(figures_with(figures, "passk"));
    b
}

fn cost_blocks(c: &CostSection, figures: &[Drawn<'_>]) -> Vec<Block> {
    let source = match &c.price_file {
        Some(f) => format!("the prices of `{f}`, then the table shipped with benchaudit"),
        None => {
            "the price table shipped with benchaudit (`crates/report/data/prices.json`)".to_string()
        }
    };
    let mut b = vec![
        Block::Heading(2, "Cost".to_string()),
        Block::Paragraph(format!(
            "Dollars from each episode's token usage (prompt tokens × input price + completion tokens × output price) \
             at {source}. A model without a price costs \"unknown\", never 0 (local models included: give their price \
             with `--prices FILE`); {} of {} conditions are unknown. Per solved = total / episodes at or above the pass \
             threshold. Pareto = no other priced condition is as good for as little.",
            c.unknown,
            c.rows.len()
        )),
    ];
    let columns = [
        ("policy", L),
        ("level", L),
        ("episodes", R),
        ("solved", R),
        ("input tokens", R),
        ("output tokens", R),
        ("$ / episode", R),
        ("$ / solved", R),
        ("total", R),
        ("mean", R),
        ("Pareto", L),
        ("price (date, source)", L),
    ];
    let rows = c
        .rows
        .iter()
        .map(|r| {
            vec![
                r.label.clone(),
                r.condition.level.to_string(),
                r.episodes.to_string(),
                r.solved.to_string(),
                r.input_tokens.to_string(),
                r.output_tokens.to_string(),
                usd(r.per_episode_usd),
                usd(r.per_solved_usd),
                usd(r.total_usd),
                num(r.mean),
                if r.pareto { "yes" } else { "" }.to_string(),
                r.price.as_ref().map_or_else(
                    || "unknown".to_string(),
                    |p| format!("{}: {} (`{}`)", p.model, p.date, p.source),
                ),
            ]
        })
        .collect();
    b.push(Block::table(&columns, rows));
    b.extend(figures_with(figures, "cost"));
    b
}

/// The pass-k and cost sections of `stats`, when it has them.
#[must_use]
pub fn extra_blocks(stats: &RunStats, figures: &[Drawn<'_>]) -> Vec<Block> {
    let mut b = Vec::new();
    if let Some(p) = &stats.pass_k {
        b.extend(pass_k_blocks(p, stats.settings.level, figures));
    }
    if let Some(c) = &stats.cost {
        b.extend(cost_blocks(c, figures));
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_keep_three_significant_digits_and_unknown_is_not_zero() {
        assert_eq!(usd(None), "unknown");
        assert_eq!(usd(Some(0.0)), "$0");
        assert_eq!(usd(Some(7.5)), "$7.500");
        assert_eq!(usd(Some(0.001234)), "$0.00123");
        assert_eq!(usd(Some(123.456)), "$123.456");
        assert!(shown(1, 12) && shown(8, 12) && shown(12, 12) && !shown(7, 12));
    }
}
