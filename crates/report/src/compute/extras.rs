//! pass@k / pass^k and cost: the report's reliability-over-trials and dollar sections.

use std::collections::BTreeMap;

use benchaudit_stats::{BootstrapConfig, PassKConfig, pass_k_curve_lazy};

use super::{Grid, Options, label};
use crate::cost::{dollars, provider_model};
use crate::error::{Result, stats};
use crate::load::Loaded;
use crate::model::Metric;
use crate::model::{Condition, CostRow, CostSection, PassKSection, PassKStats};

/// pass@k and pass^k of every condition: a task's trials are its seeds (in seed order), a
/// trial succeeds when its metric is ≥ `opts.pass_threshold`, k runs from 1 to the fewest
/// seeds of any of the condition's tasks, and the pooled curve's CIs resample seeds within
/// each task (seed `opts.seed`, `opts.resamples` replicates).
pub(super) fn pass_k(grid: &Grid, opts: &Options, show_hash: bool) -> Result<Option<PassKSection>> {
    let mut rows = Vec::new();
    for (c, tasks) in grid {
        let lbl = label(c, show_hash);
        let values: Vec<Vec<f64>> = tasks
            .values()
            .map(|s| s.values().copied().collect())
            .collect();
        let config = PassKConfig {
            threshold: opts.pass_threshold,
            max_k: None,
            bootstrap: BootstrapConfig {
                seed: opts.seed,
                resamples: opts.resamples,
                ..BootstrapConfig::default()
            },
        };
        let curve = pass_k_curve_lazy(&values, &config)
            .map_err(stats(&format!("pass-k of {lbl} {}", c.level)))?;
        rows.push(PassKStats {
            condition: c.clone(),
            label: lbl,
            tasks: tasks.keys().cloned().collect(),
            curve,
        });
    }
    Ok((!rows.is_empty()).then_some(PassKSection {
        threshold: opts.pass_threshold,
        rows,
    }))
}

/// condition → (input, output) tokens over the episodes the metric uses, for every condition
/// with such an episode that recorded token usage or model requests.
pub(super) fn tokens(
    loaded: &Loaded,
    conditions: &[Condition],
    metric: Metric,
) -> BTreeMap<Condition, (u64, u64)> {
    let mut tokens: BTreeMap<Condition, (u64, u64)> = BTreeMap::new();
    for (e, c) in loaded.episodes.iter().zip(conditions) {
        let t = e.tokens(metric);
        if t.any {
            let sum = tokens.entry(c.clone()).or_default();
            sum.0 = sum.0.wrapping_add(t.input);
            sum.1 = sum.1.wrapping_add(t.output);
        }
    }
    tokens
}

/// Cost of every condition with LLM episodes (token usage recorded), over the episodes that
/// entered the statistics ([`tokens`]); `None` when the run has none.
pub(super) fn cost(
    tokens: BTreeMap<Condition, (u64, u64)>,
    grid: &Grid,
    opts: &Options,
    show_hash: bool,
) -> Option<CostSection> {
    if tokens.is_empty() {
        return None;
    }
    let mut rows: Vec<CostRow> = tokens
        .into_iter()
        .map(|(c, (input, output))| {
            let values: Vec<f64> = grid
                .get(&c)
                .map(|t| t.values().flat_map(|s| s.values().copied()).collect())
                .unwrap_or_default();
            let episodes = values.len();
            let solved = values.iter().filter(|&&v| v >= opts.pass_threshold).count();
            let mean = values.iter().sum::<f64>() / episodes.max(1) as f64;
            let (provider, model) = provider_model(&c.policy);
            let price = opts.prices.price(provider, model).cloned();
            let total = price.as_ref().map(|p| dollars(p, input, output));
            CostRow {
                label: label(&c, show_hash),
                provider: provider.map(str::to_string),
                model: model.to_string(),
                condition: c,
                episodes,
                solved,
                input_tokens: input,
                output_tokens: output,
                per_episode_usd: total.map(|t| t / episodes.max(1) as f64),
                per_solved_usd: total.filter(|_| solved > 0).map(|t| t / solved as f64),
                total_usd: total,
                price,
                mean,
                pareto: false,
            }
        })
        .collect();
    // The front: priced rows no other priced row dominates (cost ≤, mean ≥, one strictly).
    let priced: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| r.per_episode_usd.map(|c| (c, r.mean)))
        .collect();
    for r in &mut rows {
        if let Some(cost) = r.per_episode_usd {
            r.pareto = !priced
                .iter()
                .any(|&(c, m)| c <= cost && m >= r.mean && (c < cost || m > r.mean));
        }
    }
    let unknown = rows.iter().filter(|r| r.price.is_none()).count();
    Some(CostSection {
        price_file: opts
            .prices
            .user_file
            .as_ref()
            .map(|p| p.display().to_string()),
        rows,
        unknown,
    })
}
