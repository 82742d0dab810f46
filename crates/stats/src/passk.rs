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

/// One task's trials and successes, and how far its curve goes: [`TaskPassK`] without its
/// points, which [`TaskTrials::points`] computes when they are read.
///
/// Exists because a curve has a point for every k up to the trials: a report of 1 000 seeds
/// holds as many task points as episodes, and needs each only once, to write or draw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskTrials {
    /// Trials (seeds).
    pub n: u64,
    /// Trials at or above the threshold.
    pub successes: u64,
    /// The largest k of the task's curve (at most `n`).
    pub up_to: u64,
}

impl TaskTrials {
    /// The points k = 1 … `up_to`, each equal to [`pass_at_k`] and [`pass_hat_k`] at k (a
    /// running product per estimator, bit for bit the ratios those compute).
    pub fn points(&self) -> impl Iterator<Item = PassKPoint> + '_ {
        let (n, c) = (self.n, self.successes.min(self.n));
        let (mut at, mut hat) = (1.0, 1.0);
        (0..self.up_to.min(n)).map(move |i| {
            at = next_ratio(at, n - c, n, i);
            hat = next_ratio(hat, c, n, i);
            PassKPoint {
                k: i + 1,
                pass_at_k: 1.0 - at,
                pass_hat_k: hat,
            }
        })
    }

    /// The task with its points.
    #[must_use]
    pub fn to_task(&self) -> TaskPassK {
        TaskPassK {
            n: self.n,
            successes: self.successes,
            points: self.points().collect(),
        }
    }
}

/// Serialised as the [`TaskPassK`] it stands for, the points written as they are computed.
impl Serialize for TaskTrials {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Points<'a>(&'a TaskTrials);
        impl Serialize for Points<'_> {
            fn serialize<S: serde::Serializer>(
                &self,
                s: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                s.collect_seq(self.0.points())
            }
        }
        let mut st = s.serialize_struct("TaskPassK", 3)?;
        st.serialize_field("n", &self.n)?;
        st.serialize_field("successes", &self.successes)?;
        st.serialize_field("points", &Points(self))?;
        st.end()
    }
}

/// [`PassKCurve`] with each task's points computed when read ([`TaskTrials`]); it serialises
/// to the same JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LazyPassKCurve {
    /// The success threshold used.
    pub threshold: f64,
    /// K: the largest k (at most the fewest trials of any task).
    pub max_k: u64,
    /// Per task, in input order.
    pub tasks: Vec<TaskTrials>,
    /// Pooled, k = 1 … K.
    pub pooled: Vec<PooledPassK>,
}

impl LazyPassKCurve {
    /// The curve with every task's points.
    #[must_use]
    pub fn to_curve(&self) -> PassKCurve {
        PassKCurve {
            threshold: self.threshold,
            max_k: self.max_k,
            tasks: self.tasks.iter().map(TaskTrials::to_task).collect(),
            pooled: self.pooled.clone(),
        }
    }
}

/// Read as the [`PassKCurve`] it serialises to; a task's points must be the ones its trials
/// and successes give (they are not stored).
impl<'de> Deserialize<'de> for LazyPassKCurve {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let curve = PassKCurve::deserialize(d)?;
        let tasks = curve
            .tasks
            .iter()
            .map(|t| {
                let trials = TaskTrials {
                    n: t.n,
                    successes: t.successes,
                    up_to: t.points.len() as u64,
                };
                if t.successes > t.n || !trials.points().eq(t.points.iter().cloned()) {
                    return Err(serde::de::Error::custom(format!(
                        "a task's pass-k points are not the ones {} successes of {} trials give",
                        t.successes, t.n
                    )));
                }
                Ok(trials)
            })
            .collect::<std::result::Result<_, D::Error>>()?;
        Ok(LazyPassKCurve {
            threshold: curve.threshold,
            max_k: curve.max_k,
            tasks,
            pooled: curve.pooled,
        })
    }
}

/// The success count of each task given as 0/1 indicator vectors.
fn counts(indicators: &[Vec<f64>]) -> Vec<u64> {
    indicators.iter().map(|t| successes(t, 1.0)).collect()
}

/// What [`pooled_by_k`] hands each k: k, then pass@k and pass^k of every resample.
type EachK<'a> = dyn FnMut(u64, &[f64], &[f64]) -> Result<()> + 'a;

/// The pooled estimators for k = 1 … `max_k` of every resample, each given as the success
/// count of every task in it (`sizes[t]` trials), reduced k by k: for each k, `at_k(k, pass@k
/// of each resample, in order)` and likewise `hat_k` for pass^k, each resample's value the mean
/// over tasks, left to right.
///
/// Exists so the curve costs O(B · tasks · K) work and O(B · tasks) memory, never a value per
/// resample and k: a resample's tasks are counted once (by the caller); a running product per
/// task and distinct count a resample needs (its successes for pass^k, its failures for
/// pass@k) gives every k's ratio with the bits [`binomial_ratio`] gives, and the sums over
/// tasks are formed in the order [`pass_at_k`] and [`pass_hat_k`] averaged task by task would
/// form them.
fn pooled_by_k(
    resamples: &[Vec<u64>],
    sizes: &[u64],
    max_k: u64,
    each_k: &mut EachK<'_>,
) -> Result<()> {
    // Per task, its distinct counts a (slot → a) and, for each resample, the slots of its
    // failures and successes.
    let mut slot_of: Vec<HashMap<u64, usize>> = vec![HashMap::new(); sizes.len()];
    let mut slot_a: Vec<(u64, u64)> = Vec::new();
    let mut slots: Vec<(usize, usize)> = Vec::with_capacity(resamples.len() * sizes.len());
    for counts in resamples {
        for ((of, &n), &c) in slot_of.iter_mut().zip(sizes).zip(counts) {
            let mut slot = |a: u64| {
                *of.entry(a).or_insert_with(|| {
                    slot_a.push((a, n));
                    slot_a.len() - 1
                })
            };
            slots.push((slot(n - c), slot(c)));
        }
    }
    drop(slot_of);
    let tasks = sizes.len() as f64;
    let mut products = vec![1.0; slot_a.len()];
    let (mut at, mut hat) = (vec![0.0; resamples.len()], vec![0.0; resamples.len()]);
    for i in 0..max_k {
        for (p, &(a, n)) in products.iter_mut().zip(&slot_a) {
            *p = next_ratio(*p, a, n, i);
        }
        for (b, row) in slots.chunks(sizes.len().max(1)).enumerate() {
            let (mut sum_at, mut sum_hat) = (0.0, 0.0);
            for &(fail, succeed) in row {
                sum_at += 1.0 - products[fail];
                sum_hat += products[succeed];
            }
            at[b] = sum_at / tasks;
            hat[b] = sum_hat / tasks;
        }
        each_k(i + 1, &at, &hat)?;
    }
    Ok(())
}

/// pass@k and pass^k of each task's trials (`tasks[t]` = the scores of task t's seeds), and
/// their mean over tasks with stratified bootstrap CIs (seeds resampled within each task).
///
/// # Errors
/// [`StatsError::Empty`] for no tasks or a task without trials; [`StatsError::NonFinite`] for
/// a NaN score or threshold; [`StatsError::CountOutOfRange`] for `max_k = 0`; the bootstrap
/// config's errors.
pub fn pass_k_curve(tasks: &[Vec<f64>], config: &PassKConfig) -> Result<PassKCurve> {
    pass_k_curve_lazy(tasks, config).map(|c| c.to_curve())
}

/// [`pass_k_curve`] with each task's points left to be computed when read ([`TaskTrials`]):
/// the same numbers, held in memory that does not grow with the trials but for the pooled
/// curve (a point per k).
///
/// # Errors
/// As [`pass_k_curve`].
pub fn pass_k_curve_lazy(tasks: &[Vec<f64>], config: &PassKConfig) -> Result<LazyPassKCurve> {
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
            TaskTrials {
                n,
                successes: successes(t, config.threshold),
                up_to: n.min(config.max_k.unwrap_or(n)),
            }
        })
        .collect();
    // One resample serves every k: the replicate is the vector of per-k pooled estimates,
    // from each task's success count in the resample.
    let sizes: Vec<u64> = indicators.iter().map(|t| t.len() as u64).collect();
    let mut resampled = stratified_bootstrap_map(&indicators, &config.bootstrap, counts)?;
    // The point estimate is one more row, the observed counts, reduced with the resamples.
    resampled.push(counts(&indicators));
    drop(indicators);
    let b = &config.bootstrap;
    let replicates = resampled.len() - 1;
    let mut curve = Vec::with_capacity(max_k as usize);
    pooled_by_k(&resampled, &sizes, max_k, &mut |k, at, hat| {
        let ci = |values: &[f64]| -> Result<BootstrapCi> {
            let (lo, hi) = percentile_interval(&values[..replicates], b.level)?;
            Ok(BootstrapCi {
                estimate: values[replicates],
                lo,
                hi,
                level: b.level,
                resamples: b.resamples,
                seed: b.seed,
            })
        };
        curve.push(PooledPassK {
            k,
            pass_at_k: ci(at)?,
            pass_hat_k: ci(hat)?,
        });
        Ok(())
    })?;
    Ok(LazyPassKCurve {
        threshold: config.threshold,
        max_k,
        tasks: per_task,
        pooled: curve,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn curve() -> LazyPassKCurve {
        let tasks = vec![
            vec![1.0, 1.0, 0.5, 1.0, 0.0, 1.0],
            vec![0.95, 1.0, 0.0, 0.0, 1.0],
            vec![1.0; 7],
        ];
        let config = PassKConfig {
            max_k: Some(6),
            bootstrap: BootstrapConfig {
                resamples: 50,
                ..BootstrapConfig::default()
            },
            ..PassKConfig::default()
        };
        pass_k_curve_lazy(&tasks, &config).unwrap()
    }

    #[test]
    fn the_lazy_curve_serialises_and_reads_back_as_the_whole_one() {
        let lazy = curve();
        let whole = lazy.to_curve();
        assert_eq!(
            whole.tasks[2].points.len(),
            6,
            "a task's curve runs to max_k"
        );
        assert_eq!(whole.tasks[1].points.len(), 5, "or to its trials");
        assert_eq!(
            serde_json::to_string(&lazy).unwrap(),
            serde_json::to_string(&whole).unwrap()
        );
        assert_eq!(
            serde_json::to_value(&lazy).unwrap(),
            serde_json::to_value(&whole).unwrap()
        );
        let text = serde_json::to_string(&whole).unwrap();
        let read: LazyPassKCurve = serde_json::from_str(&text).unwrap();
        assert_eq!(read, lazy);
        // Points that do not follow from the counts are refused, not silently recomputed.
        let mut edited = whole;
        edited.tasks[0].points[1].pass_hat_k = 0.123;
        let text = serde_json::to_string(&edited).unwrap();
        assert!(serde_json::from_str::<LazyPassKCurve>(&text).is_err());
    }
}
