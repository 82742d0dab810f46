//! pass@k and pass^k: the unbiased estimators over n trials with c successes.
//!
//! Why both: pass@k ("at least one of k tries succeeds", Chen et al. 2021) rewards a model
//! that sometimes gets it right; pass^k ("all k tries succeed", τ-bench, Yao et al. 2025)
//! measures whether it gets it right every time, which is what a deployment relies on. As k
//! grows the two fan out, and the gap is the unreliability the mean hides.
//!
//! * pass@k = 1 − C(n−c, k) / C(n, k)
//! * pass^k = C(c, k) / C(n, k)
//!
//! Both ratios are evaluated as the product `∏_{i<k} (a − i) / (n − i)` (a = n − c, resp. c),
//! left to right in `i`, which never forms a large binomial and is exact-order deterministic.
//! A trial succeeds when its score is at least the threshold (F1 = 1 by default).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::bootstrap::{BootstrapCi, BootstrapConfig, percentile_interval};
use crate::error::{Result, StatsError};
use crate::stratified::stratified_bootstrap_map;

/// Default success threshold: a perfect ground-truth F1.
pub const DEFAULT_PASS_THRESHOLD: f64 = 1.0;

fn check_counts(n: u64, c: u64, k: u64) -> Result<()> {
    if c > n {
        return Err(StatsError::CountExceedsTrials {
            successes: c,
            trials: n,
        });
    }
    if k == 0 || k > n {
        return Err(StatsError::CountOutOfRange {
            name: "k",
            value: k,
            range: "1..=n (the number of trials)",
        });
    }
    Ok(())
}

/// `C(a, k) / C(n, k)` for `a ≤ n`, `1 ≤ k ≤ n`, as a left-to-right product.
fn binomial_ratio(a: u64, n: u64, k: u64) -> f64 {
    if a < k {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * ((a - i) as f64 / (n - i) as f64))
}

/// Unbiased pass@k: the probability that at least one of k trials drawn without replacement
/// from the n observed succeeds.
///
/// # Errors
/// [`StatsError::CountExceedsTrials`] if `c > n`; [`StatsError::CountOutOfRange`] unless
/// `1 ≤ k ≤ n`.
pub fn pass_at_k(n: u64, c: u64, k: u64) -> Result<f64> {
    check_counts(n, c, k)?;
    Ok(1.0 - binomial_ratio(n - c, n, k))
}

/// Unbiased pass^k: the probability that all k trials drawn without replacement from the n
/// observed succeed.
///
/// # Errors
/// As [`pass_at_k`].
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> Result<f64> {
    check_counts(n, c, k)?;
    Ok(binomial_ratio(c, n, k))
}

/// How to compute a pass-k curve.
///
/// Exists so a report records every input its pass-k numbers depend on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassKConfig {
    /// A trial succeeds when its score is ≥ this (default 1.0: F1 = 1).
    pub threshold: f64,
    /// Largest k (default: the fewest trials of any task).
    pub max_k: Option<u64>,
    /// Bootstrap of the pooled curve (seeds resampled within each task).
    pub bootstrap: BootstrapConfig,
}

impl Default for PassKConfig {
    fn default() -> Self {
        Self {
            threshold: DEFAULT_PASS_THRESHOLD,
            max_k: None,
            bootstrap: BootstrapConfig::default(),
        }
    }
}

/// Both estimators at one k.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassKPoint {
    /// k.
    pub k: u64,
    /// pass@k.
    pub pass_at_k: f64,
    /// pass^k.
    pub pass_hat_k: f64,
}

/// One task's trials and its curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskPassK {
    /// Trials (seeds).
    pub n: u64,
    /// Trials at or above the threshold.
    pub successes: u64,
    /// k = 1 … min(n, max_k).
    pub points: Vec<PassKPoint>,
}

/// The pooled estimators at one k: the mean over tasks, with stratified bootstrap CIs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PooledPassK {
    /// k.
    pub k: u64,
    /// Mean over tasks of pass@k.
    pub pass_at_k: BootstrapCi,
    /// Mean over tasks of pass^k.
    pub pass_hat_k: BootstrapCi,
}

/// pass@k and pass^k per task and pooled over tasks, k = 1 … K.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassKCurve {
    /// The success threshold used.
    pub threshold: f64,
    /// K: the largest k (at most the fewest trials of any task).
    pub max_k: u64,
    /// Per task, in input order.
    pub tasks: Vec<TaskPassK>,
    /// Pooled, k = 1 … K.
    pub pooled: Vec<PooledPassK>,
}

fn successes(values: &[f64], threshold: f64) -> u64 {
    values.iter().filter(|&&v| v >= threshold).count() as u64
}

/// One more factor of [`binomial_ratio`]'s product: given `C(a, i) / C(n, i)` (as `product`),
/// `C(a, i + 1) / C(n, i + 1)`, with the same operations in the same order, so a running
/// product gives every k's ratio with the bits `binomial_ratio(a, n, k)` gives.
fn next_ratio(product: f64, a: u64, n: u64, i: u64) -> f64 {
    if a <= i {
        0.0
    } else {
        product * ((a - i) as f64 / (n - i) as f64)
    }
}

/// `C(a, k) / C(n, k)` for k = 1 … `max_k` (`max_k ≤ n`), each with the bits
/// [`binomial_ratio`] gives it.
fn ratios(a: u64, n: u64, max_k: u64) -> Vec<f64> {
    let mut product = 1.0;
    (0..max_k)
        .map(|i| {
            product = next_ratio(product, a, n, i);
            product
        })
        .collect()
}

/// The pooled estimators for k = 1 … `max_k` of each resample, given as the success count of
/// every task in it (`sizes[t]` trials): for each k the mean over tasks, left to right, of
/// pass@k and of pass^k.
///
/// Exists so the curve costs O(B · tasks · K), not O(B · tasks · K · (n + K)): a resample's
/// tasks are counted once (by the caller), and a task's ratios over every k are computed once
/// per distinct count ([`ratios`]) and then looked up. The sums are formed in the order
/// [`pass_at_k`] and [`pass_hat_k`] averaged task by task would form them, so the values are
/// the same bits.
fn pooled_curves(resamples: &[Vec<u64>], sizes: &[u64], max_k: u64) -> Vec<Vec<(f64, f64)>> {
    // Per task: a → C(a, k) / C(n, k) for every k, for each a some resample needs (its
    // successes for pass^k, its failures for pass@k).
    let mut rows: Vec<HashMap<u64, Vec<f64>>> = vec![HashMap::new(); sizes.len()];
    for counts in resamples {
        for ((row, &n), &c) in rows.iter_mut().zip(sizes).zip(counts) {
            for a in [c, n - c] {
                row.entry(a).or_insert_with(|| ratios(a, n, max_k));
            }
        }
    }
    let tasks = sizes.len() as f64;
    let none: &[f64] = &[];
    resamples
        .iter()
        .map(|counts| {
            let (mut at, mut hat) = (Vec::new(), Vec::new());
            for ((row, &n), &c) in rows.iter().zip(sizes).zip(counts) {
                at.push(row.get(&(n - c)).map_or(none, Vec::as_slice));
                hat.push(row.get(&c).map_or(none, Vec::as_slice));
            }
            (0..max_k as usize)
                .map(|i| {
                    let (mut sum_at, mut sum_hat) = (0.0, 0.0);
                    for (at, hat) in at.iter().zip(&hat) {
                        sum_at += 1.0 - at.get(i).copied().unwrap_or(0.0);
                        sum_hat += hat.get(i).copied().unwrap_or(0.0);
                    }
                    (sum_at / tasks, sum_hat / tasks)
                })
                .collect()
        })
        .collect()
}

/// The success count of each task given as 0/1 indicator vectors.
fn counts(indicators: &[Vec<f64>]) -> Vec<u64> {
    indicators.iter().map(|t| successes(t, 1.0)).collect()
}

/// One task's points k = 1 … `up_to`, each equal to [`pass_at_k`] and [`pass_hat_k`] at k.
fn task_points(n: u64, c: u64, up_to: u64) -> Vec<PassKPoint> {
    let (mut at, mut hat) = (1.0, 1.0);
    (0..up_to)
        .map(|i| {
            at = next_ratio(at, n - c, n, i);
            hat = next_ratio(hat, c, n, i);
            PassKPoint {
                k: i + 1,
                pass_at_k: 1.0 - at,
                pass_hat_k: hat,
            }
        })
        .collect()
}

/// pass@k and pass^k of each task's trials (`tasks[t]` = the scores of task t's seeds), and
/// their mean over tasks with stratified bootstrap CIs (seeds resampled within each task).
///
/// # Errors
/// [`StatsError::Empty`] for no tasks or a task without trials; [`StatsError::NonFinite`] for
/// a NaN score or threshold; [`StatsError::CountOutOfRange`] for `max_k = 0`; the bootstrap
/// config's errors.
pub fn pass_k_curve(tasks: &[Vec<f64>], config: &PassKConfig) -> Result<PassKCurve> {
    if !config.threshold.is_finite() {
        return Err(StatsError::NonFinite {
            what: "pass threshold",
            index: 0,
            value: config.threshold,
        });
    }
    let fewest = tasks
        .iter()
        .map(|t| t.len() as u64)
        .min()
        .ok_or(StatsError::Empty {
            what: "pass-k tasks",
        })?;
    if fewest == 0 {
        return Err(StatsError::Empty {
            what: "pass-k task trials",
        });
    }
    let max_k = match config.max_k {
        Some(0) => {
            return Err(StatsError::CountOutOfRange {
                name: "max_k",
                value: 0,
                range: "1..",
            });
        }
        Some(k) => k.min(fewest),
        None => fewest,
    };
    let indicators: Vec<Vec<f64>> = tasks
        .iter()
        .map(|t| {
            t.iter()
                .enumerate()
                .map(|(index, &v)| {
                    if v.is_finite() {
                        Ok(if v >= config.threshold { 1.0 } else { 0.0 })
                    } else {
                        Err(StatsError::NonFinite {
                            what: "pass-k score",
                            index,
                            value: v,
                        })
                    }
                })
                .collect::<Result<Vec<f64>>>()
        })
        .collect::<Result<_>>()?;
    let per_task = tasks
        .iter()
        .map(|t| {
            let n = t.len() as u64;
            let c = successes(t, config.threshold);
            TaskPassK {
                n,
                successes: c,
                points: task_points(n, c, n.min(config.max_k.unwrap_or(n))),
            }
        })
        .collect();
    // One resample serves every k: the replicate is the vector of per-k pooled estimates,
    // from each task's success count in the resample.
    let sizes: Vec<u64> = indicators.iter().map(|t| t.len() as u64).collect();
    let resampled = stratified_bootstrap_map(&indicators, &config.bootstrap, counts)?;
    let reps = pooled_curves(&resampled, &sizes, max_k);
    let estimates = pooled_curves(&[counts(&indicators)], &sizes, max_k)
        .pop()
        .unwrap_or_default();
    let b = &config.bootstrap;
    let mut curve = Vec::with_capacity(max_k as usize);
    for ((i, k), &(at_estimate, hat_estimate)) in (1..=max_k).enumerate().zip(&estimates) {
        let at: Vec<f64> = reps.iter().map(|r| r[i].0).collect();
        let hat: Vec<f64> = reps.iter().map(|r| r[i].1).collect();
        let ci = |reps: &[f64], estimate: f64| -> Result<BootstrapCi> {
            let (lo, hi) = percentile_interval(reps, b.level)?;
            Ok(BootstrapCi {
                estimate,
                lo,
                hi,
                level: b.level,
                resamples: b.resamples,
                seed: b.seed,
            })
        };
        curve.push(PooledPassK {
            k,
            pass_at_k: ci(&at, at_estimate)?,
            pass_hat_k: ci(&hat, hat_estimate)?,
        });
    }
    Ok(PassKCurve {
        threshold: config.threshold,
        max_k,
        tasks: per_task,
        pooled: curve,
    })
}
