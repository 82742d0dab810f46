//! Seeded, bit-reproducible bootstrap percentile confidence intervals.
//!
//! A bootstrap here is a pure function of `(data, seed, resamples, level)`; the thread count
//! only changes speed. The exact contract:
//!
//! 1. Replicate `b` (for `b` in `0..B`) uses its own stream
//!    [`stream_rng(seed, b)`](crate::rng::stream_rng) (ChaCha8, `seed_from_u64(seed)` then
//!    `set_stream(b)`), so it depends only on `(seed, b)`.
//! 2. It draws `n` indices in order with [`uniform_below`](crate::rng::uniform_below)
//!    (Lemire multiply-and-reject on `next_u64`) and builds the resample
//!    `x[i₀], x[i₁], …, x[iₙ₋₁]` in draw order.
//! 3. The statistic is evaluated on that resample (for the mean: left-to-right summation in
//!    draw order, divided by `n`), and stored at position `b`.
//! 4. The `B` replicate statistics are sorted with [`f64::total_cmp`] and the percentile rule
//!    of [`percentile_indices`] picks the interval ends.

use std::num::NonZeroU64;

use serde::{Deserialize, Serialize};

use crate::error::{Result, StatsError, check_draws, check_level, check_values};
use crate::numeric::{sequential_mean, snap, to_index};
use crate::par::map_indexed_with;
use crate::rng::{stream_rng, uniform_below};

/// Default number of bootstrap replicates (SPEC §7: B = 2000).
pub const DEFAULT_RESAMPLES: usize = 2000;

/// Default confidence level of every interval (95%).
pub const DEFAULT_LEVEL: f64 = 0.95;

/// How to run a bootstrap: the seed, the number of replicates, the level and the threads.
///
/// Exists so every caller states the full set of inputs a reproducible interval depends on;
/// `threads` is the only field that does not change the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BootstrapConfig {
    /// Seed of the replicate streams.
    pub seed: u64,
    /// Number of replicates B, in `1..=10_000_000`.
    pub resamples: usize,
    /// Confidence level in `(0, 1)`, e.g. 0.95.
    pub level: f64,
    /// Worker threads (0 or 1 = run on the calling thread; at most 256 are used).
    /// Does not affect the result.
    pub threads: usize,
}

impl Default for BootstrapConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            resamples: DEFAULT_RESAMPLES,
            level: DEFAULT_LEVEL,
            threads: 1,
        }
    }
}

impl BootstrapConfig {
    /// A configuration from its four settings (how the larger configurations that contain a
    /// bootstrap hand theirs over).
    #[must_use]
    pub const fn of(seed: u64, resamples: usize, level: f64, threads: usize) -> Self {
        Self {
            seed,
            resamples,
            level,
            threads,
        }
    }
}

/// A bootstrap percentile interval together with the point estimate and its provenance.
///
/// Exists so a report carries not just `[lo, hi]` but also what produced it (seed, B, level),
/// which is what a reader needs to reproduce the numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BootstrapCi {
    /// The statistic on the original data.
    pub estimate: f64,
    /// Lower interval end.
    pub lo: f64,
    /// Upper interval end.
    pub hi: f64,
    /// Confidence level the interval was built for.
    pub level: f64,
    /// Number of replicates B.
    pub resamples: usize,
    /// Seed of the replicate streams.
    pub seed: u64,
}

impl BootstrapCi {
    /// True when the interval lies strictly above zero.
    ///
    /// Exists because "the CI excludes 0 on the positive side" is the pre-registered
    /// decision criterion of paired A/B tests.
    #[must_use]
    pub fn excludes_zero_above(&self) -> bool {
        self.lo > 0.0
    }

    /// True when the interval lies strictly below zero.
    ///
    /// Exists as the mirror criterion for a predicted negative effect.
    #[must_use]
    pub fn excludes_zero_below(&self) -> bool {
        self.hi < 0.0
    }
}

/// The sorted-replicate positions of the lower and upper ends of a percentile interval.
///
/// Exists to pin the percentile rule exactly. With `B` replicates sorted ascending
/// (0-based) and `a = 1 − level`:
///
/// * `lo = floor(B·a/2)`
/// * `hi = ceil(B·(1 − a/2)) − 1`, computed as `ceil(B·(1 + level)/2) − 1`
///
/// where each product is first snapped to the nearest integer if within 1e-9 of it (so
/// float noise in `level` cannot move an index), and `hi` is clamped to `[lo, B−1]`.
/// Exactly `lo` replicates lie below the lower end and `B − 1 − hi` above the upper end.
/// For `B = 2000`, `level = 0.95`: `lo = 50`, `hi = 1949` (50 trimmed on each side).
///
/// # Errors
/// [`StatsError::CountOutOfRange`] if `resamples` is 0 or above 10⁷;
/// [`StatsError::OutOfRange`] if `level` is not in `(0, 1)`.
pub fn percentile_indices(resamples: usize, level: f64) -> Result<(usize, usize)> {
    check_draws("resamples", resamples)?;
    check_level(level)?;
    let b = resamples as f64;
    let lo = to_index(snap(b * (1.0 - level) / 2.0).floor());
    let hi_plus_one = to_index(snap(b * (1.0 + level) / 2.0).ceil());
    let last = resamples - 1;
    let lo = lo.min(last);
    let hi = hi_plus_one.saturating_sub(1).clamp(lo, last);
    Ok((lo, hi))
}

/// Percentile interval of a set of replicate statistics (sorted internally).
///
/// Exists so callers who compute their own replicates (or want the raw replicate vector
/// from [`bootstrap_replicates`]) apply the same pinned rule as [`percentile_indices`].
///
/// # Errors
/// As [`percentile_indices`], with `resamples = replicates.len()`.
pub fn percentile_interval(replicates: &[f64], level: f64) -> Result<(f64, f64)> {
    let (lo, hi) = percentile_indices(replicates.len(), level)?;
    let mut sorted = replicates.to_vec();
    sorted.sort_by(f64::total_cmp);
    match (sorted.get(lo), sorted.get(hi)) {
        (Some(&l), Some(&h)) => Ok((l, h)),
        _ => Err(StatsError::Empty { what: "replicates" }),
    }
}

/// The B replicate statistics of a seeded bootstrap, indexed by replicate number.
///
/// Exists for callers who need the whole bootstrap distribution (e.g. to plot it or to
/// derive a different interval) under the same reproducibility contract as the CIs.
/// `statistic` receives each resample in draw order; it must be a pure function for the
/// thread-count independence to hold.
///
/// # Errors
/// [`StatsError::Empty`], [`StatsError::NonFinite`] or [`StatsError::Overflow`] for bad
/// data; [`StatsError::CountOutOfRange`] / [`StatsError::OutOfRange`] for a bad config.
pub fn bootstrap_replicates<S>(
    values: &[f64],
    config: &BootstrapConfig,
    statistic: S,
) -> Result<Vec<f64>>
where
    S: Fn(&[f64]) -> f64 + Sync,
{
    check_values(values, "bootstrap data")?;
    check_draws("resamples", config.resamples)?;
    check_level(config.level)?;
    let n = NonZeroU64::new(values.len() as u64).ok_or(StatsError::Empty {
        what: "bootstrap data",
    })?;
    let seed = config.seed;
    Ok(map_indexed_with(
        config.resamples,
        config.threads,
        || Vec::with_capacity(values.len()),
        |resample: &mut Vec<f64>, b| {
            let mut rng = stream_rng(seed, b as u64);
            resample.clear();
            resample.extend((0..values.len()).map(|_| {
                // The draw is < n = values.len(), so it fits in usize.
                let i = uniform_below(&mut rng, n) as usize;
                values.get(i).copied().unwrap_or(0.0)
            }));
            statistic(resample)
        },
    ))
}

/// Seeded bootstrap percentile CI of an arbitrary statistic.
///
/// Exists so the paired Δ mean, Cliff's δ and any future statistic share one engine and one
/// percentile rule. `estimate` is `statistic(values)`.
///
/// # Errors
/// As [`bootstrap_replicates`].
pub fn bootstrap_ci<S>(
    values: &[f64],
    config: &BootstrapConfig,
    statistic: S,
) -> Result<BootstrapCi>
where
    S: Fn(&[f64]) -> f64 + Sync,
{
    let replicates = bootstrap_replicates(values, config, &statistic)?;
    let (lo, hi) = percentile_interval(&replicates, config.level)?;
    Ok(BootstrapCi {
        estimate: statistic(values),
        lo,
        hi,
        level: config.level,
        resamples: config.resamples,
        seed: config.seed,
    })
}

/// Seeded bootstrap percentile CI of the mean (the SPEC §7 default: B = 2000, 95%).
///
/// Exists because the mean's CI is reported for every set of runs. The mean of a resample
/// is its left-to-right sum in draw order divided by `n`.
///
/// # Errors
/// As [`bootstrap_replicates`].
pub fn bootstrap_mean_ci(values: &[f64], config: &BootstrapConfig) -> Result<BootstrapCi> {
    bootstrap_ci(values, config, sequential_mean)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn percentile_rule_for_defaults() {
        assert_eq!(percentile_indices(2000, 0.95).unwrap(), (50, 1949));
        assert_eq!(percentile_indices(1000, 0.90).unwrap(), (50, 949));
        assert_eq!(percentile_indices(1, 0.95).unwrap(), (0, 0));
        assert_eq!(percentile_indices(10, 0.5).unwrap(), (2, 7));
        // B·a/2 = 2.5 → floor 2; B·(1+L)/2 = 17.5 → ceil 18 → 17.
        assert_eq!(percentile_indices(20, 0.75).unwrap(), (2, 17));
    }

    #[test]
    fn percentile_rule_rejects_bad_inputs() {
        assert!(percentile_indices(0, 0.95).is_err());
        assert!(percentile_indices(10, 1.0).is_err());
        assert!(percentile_indices(10, 0.0).is_err());
        assert!(percentile_indices(10, f64::NAN).is_err());
    }
}
