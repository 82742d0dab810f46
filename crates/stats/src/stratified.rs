//! Stratified bootstrap: resample within each stratum (e.g. seeds within each task).
//!
//! Why: a pooled row of a report mixes tasks of very different difficulty. Resampling the
//! pooled values as one bag lets a replicate draw, say, 30 runs of the easy task and none of
//! the hard one, so its interval describes a different task mix than the one run. Resampling
//! within each task keeps the design's mix fixed and varies only the seeds, which is the
//! uncertainty a pooled mean over a fixed task set actually has.
//!
//! The contract extends [`crate::bootstrap`]'s: replicate `b` uses
//! [`stream_rng(seed, b)`](crate::rng::stream_rng) and draws, stratum by stratum in the order
//! given, `n_s` indices of stratum `s` with [`uniform_below`](crate::rng::uniform_below). With
//! one stratum the draws — and so the interval — equal [`crate::bootstrap_mean_ci`]'s.

use std::num::NonZeroU64;

use crate::bootstrap::{BootstrapCi, BootstrapConfig, percentile_interval};
use crate::error::{Result, StatsError, check_draws, check_level, check_values};
use crate::par::map_indexed_with;
use crate::rng::{stream_rng, uniform_below};

/// Applies `f` to each of the B stratified resamples, results indexed by replicate number.
///
/// Exists as the one engine behind every stratified quantity (pooled means, pass^k curves,
/// which need several statistics of the same resample). `f` receives the resampled strata
/// (same count and sizes as the input, each in draw order) and must be a pure function for
/// the thread-count independence to hold.
///
/// # Errors
/// [`StatsError::Empty`] when there are no strata or a stratum is empty; the errors of
/// [`crate::bootstrap_replicates`] for bad values or a bad config.
pub fn stratified_bootstrap_map<T, F>(
    strata: &[Vec<f64>],
    config: &BootstrapConfig,
    f: F,
) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(&[Vec<f64>]) -> T + Sync,
{
    check_strata(strata)?;
    check_draws("resamples", config.resamples)?;
    check_level(config.level)?;
    let sizes: Vec<NonZeroU64> = strata
        .iter()
        .map(|s| NonZeroU64::new(s.len() as u64).ok_or(StatsError::Empty { what: "stratum" }))
        .collect::<Result<_>>()?;
    let seed = config.seed;
    Ok(map_indexed_with(
        config.resamples,
        config.threads,
        || strata.iter().map(|s| Vec::with_capacity(s.len())).collect(),
        |resample: &mut Vec<Vec<f64>>, b| {
            let mut rng = stream_rng(seed, b as u64);
            for ((out, values), &n) in resample.iter_mut().zip(strata).zip(&sizes) {
                out.clear();
                out.extend((0..values.len()).map(|_| {
                    // The draw is < n = values.len(), so it fits in usize.
                    let i = uniform_below(&mut rng, n) as usize;
                    values.get(i).copied().unwrap_or(0.0)
                }));
            }
            f(resample)
        },
    ))
}

/// The B replicates of a stratified bootstrap of `statistic`, indexed by replicate number.
///
/// # Errors
/// As [`stratified_bootstrap_map`].
pub fn stratified_bootstrap_replicates<S>(
    strata: &[Vec<f64>],
    config: &BootstrapConfig,
    statistic: S,
) -> Result<Vec<f64>>
where
    S: Fn(&[Vec<f64>]) -> f64 + Sync,
{
    stratified_bootstrap_map(strata, config, statistic)
}

/// Stratified bootstrap percentile CI of an arbitrary statistic of the strata.
///
/// Exists so pooled pass^k and pooled means share one engine and one percentile rule.
/// `estimate` is `statistic(strata)`.
///
/// # Errors
/// As [`stratified_bootstrap_replicates`].
pub fn stratified_bootstrap_ci<S>(
    strata: &[Vec<f64>],
    config: &BootstrapConfig,
    statistic: S,
) -> Result<BootstrapCi>
where
    S: Fn(&[Vec<f64>]) -> f64 + Sync,
{
    let replicates = stratified_bootstrap_replicates(strata, config, &statistic)?;
    let (lo, hi) = percentile_interval(&replicates, config.level)?;
    Ok(BootstrapCi {
        estimate: statistic(strata),
        lo,
        hi,
        level: config.level,
        resamples: config.resamples,
        seed: config.seed,
    })
}

/// The pooled mean of strata: every value summed left to right, stratum by stratum, over the
/// total count — the mean of the concatenation.
///
/// Exists as the statistic of [`stratified_bootstrap_mean_ci`], written so that one stratum
/// gives bit-for-bit the plain mean.
#[must_use]
pub fn pooled_mean(strata: &[Vec<f64>]) -> f64 {
    let n: usize = strata.iter().map(Vec::len).sum();
    let sum = strata
        .iter()
        .fold(0.0, |acc, s| s.iter().fold(acc, |a, &x| a + x));
    if n == 0 { f64::NAN } else { sum / n as f64 }
}

/// Stratified bootstrap percentile CI of the pooled mean.
///
/// Exists for the pooled rows of reports (SPEC §7 CI of the mean, with seeds resampled
/// within each task).
///
/// # Errors
/// As [`stratified_bootstrap_replicates`].
pub fn stratified_bootstrap_mean_ci(
    strata: &[Vec<f64>],
    config: &BootstrapConfig,
) -> Result<BootstrapCi> {
    stratified_bootstrap_ci(strata, config, pooled_mean)
}

fn check_strata(strata: &[Vec<f64>]) -> Result<()> {
    if strata.is_empty() {
        return Err(StatsError::Empty { what: "strata" });
    }
    for s in strata {
        check_values(s, "stratum")?;
    }
    // The pooled sums must stay finite too.
    let total: usize = strata.iter().map(Vec::len).sum();
    let max_abs = strata
        .iter()
        .flat_map(|s| s.iter())
        .fold(0.0_f64, |m, x| m.max(x.abs()));
    if !(max_abs * total as f64).is_finite() {
        return Err(StatsError::Overflow { what: "strata" });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::bootstrap_mean_ci;

    #[test]
    fn one_stratum_equals_the_plain_bootstrap() {
        let v = vec![0.1, 0.9, 0.4, 1.0, 0.0, 0.7, 0.3];
        let cfg = BootstrapConfig::default();
        let plain = bootstrap_mean_ci(&v, &cfg).unwrap();
        let strat = stratified_bootstrap_mean_ci(&[v], &cfg).unwrap();
        assert_eq!(plain, strat);
    }

    #[test]
    fn strata_keep_the_task_mix_fixed() {
        // Two tasks with constant scores: any within-task resample keeps the pooled mean at
        // exactly (3·0 + 3·1)/6, so the stratified interval has zero width; pooling the six
        // values as one bag does not.
        let strata = vec![vec![0.0; 3], vec![1.0; 3]];
        let cfg = BootstrapConfig::default();
        let s = stratified_bootstrap_mean_ci(&strata, &cfg).unwrap();
        assert_eq!((s.estimate, s.lo, s.hi), (0.5, 0.5, 0.5));
        let bag: Vec<f64> = strata.concat();
        let b = bootstrap_mean_ci(&bag, &cfg).unwrap();
        assert!(b.lo < 0.5 && b.hi > 0.5);
    }

    #[test]
    fn thread_count_does_not_change_the_result() {
        let strata = vec![
            vec![0.2, 0.5, 0.9],
            vec![1.0, 0.0],
            vec![0.3, 0.3, 0.8, 0.1],
        ];
        let one = stratified_bootstrap_mean_ci(&strata, &BootstrapConfig::default()).unwrap();
        let four = stratified_bootstrap_mean_ci(
            &strata,
            &BootstrapConfig {
                threads: 4,
                ..BootstrapConfig::default()
            },
        )
        .unwrap();
        assert_eq!(one, four);
    }

    #[test]
    fn bad_strata_are_errors() {
        let cfg = BootstrapConfig::default();
        assert!(stratified_bootstrap_mean_ci(&[], &cfg).is_err());
        assert!(stratified_bootstrap_mean_ci(&[vec![1.0], vec![]], &cfg).is_err());
        assert!(stratified_bootstrap_mean_ci(&[vec![f64::NAN]], &cfg).is_err());
    }
}
