//! Per-set-of-runs summary: mean, worst case, CVaR@α, Reliability@τ and the mean's CI.
//!
//! These are the reliability metrics of paper §4.4: the mean alone hides the deployment
//! floor, so every report also carries the minimum, the mean of the worst α-fraction and the
//! fraction of runs clearing each threshold.

use serde::{Deserialize, Serialize};

use crate::bootstrap::{BootstrapCi, BootstrapConfig, bootstrap_mean_ci};
use crate::error::{Result, StatsError, check_values};
use crate::numeric::{sequential_mean, sequential_sum, snap, to_index};

/// Default tail fraction α of CVaR (SPEC §7: 0.2).
pub const DEFAULT_ALPHA: f64 = 0.2;

/// Default Reliability thresholds τ (SPEC §7: 0.9, also reported at 0.5).
pub const DEFAULT_TAUS: [f64; 2] = [0.9, 0.5];

/// Arithmetic mean (left-to-right summation, divided by n).
///
/// Exists as the one definition of "mean" used everywhere in the crate, so a summary's mean
/// and a bootstrap replicate's mean are computed the same way.
///
/// # Errors
/// [`StatsError::Empty`], [`StatsError::NonFinite`], [`StatsError::Overflow`].
pub fn mean(values: &[f64]) -> Result<f64> {
    check_values(values, "mean")?;
    Ok(sequential_mean(values))
}

/// The worst case: the minimum value.
///
/// Exists because the minimum over tested seeds estimates the deployment floor, the
/// quantity that pages a human.
///
/// # Errors
/// [`StatsError::Empty`], [`StatsError::NonFinite`], [`StatsError::Overflow`].
pub fn worst(values: &[f64]) -> Result<f64> {
    check_values(values, "worst")?;
    Ok(values.iter().copied().fold(f64::INFINITY, f64::min))
}

/// Number of lowest values CVaR@α averages: `k = ceil(α·n)`, at least 1 and at most n.
///
/// Exists to pin the tail size exactly. `α·n` is snapped to the nearest integer when within
/// 1e-9 of it, so `α = 0.1, n = 30` gives `k = 3`, not 4 from float noise.
///
/// # Errors
/// [`StatsError::OutOfRange`] unless `0 < α ≤ 1`; [`StatsError::Empty`] if `n = 0`.
pub fn cvar_tail_size(alpha: f64, n: usize) -> Result<usize> {
    check_alpha(alpha)?;
    if n == 0 {
        return Err(StatsError::Empty { what: "cvar" });
    }
    let k = to_index(snap(alpha * n as f64).ceil());
    Ok(k.clamp(1, n))
}

/// CVaR@α: the mean of the `k = ceil(α·n)` lowest values (see [`cvar_tail_size`]).
///
/// Exists because it measures how bad the bad runs are, between the mean and the single
/// worst run (Rockafellar & Uryasev 2000). The k lowest are summed in ascending order.
///
/// # Errors
/// As [`mean`] and [`cvar_tail_size`].
pub fn cvar(values: &[f64], alpha: f64) -> Result<f64> {
    check_values(values, "cvar")?;
    let k = cvar_tail_size(alpha, values.len())?;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let tail = sorted.get(..k).unwrap_or(&sorted);
    Ok(sequential_sum(tail) / k as f64)
}

/// Reliability@τ: the fraction of values `≥ τ`.
///
/// Exists because "how often does a run clear the bar" is what a deployment cares about
/// (akin to pass^k).
///
/// # Errors
/// As [`mean`]; [`StatsError::OutOfRange`] if `τ` is not finite.
pub fn reliability(values: &[f64], tau: f64) -> Result<f64> {
    check_values(values, "reliability")?;
    check_tau(tau)?;
    let hits = values.iter().filter(|&&x| x >= tau).count();
    Ok(hits as f64 / values.len() as f64)
}

/// One unit's trials (a task's or a sample's seeds): their mean, worst case, CVaR@α and
/// pass^k with k the number of trials.
///
/// Exists as the one per-unit reliability row of the external audits (a model under each
/// shipped agent implementation, a model through an Inspect task), so both read the same.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Trials {
    /// Trials.
    pub seeds: usize,
    /// Mean.
    pub mean: f64,
    /// Lowest value.
    pub worst: f64,
    /// CVaR at the α given.
    pub cvar: f64,
    /// pass^k with k the trials: whether every trial is at or above the pass threshold.
    pub pass_hat_k: f64,
}

/// [`Trials`] of `values`, a trial passing at `pass_at` or above.
///
/// # Errors
/// As [`mean`] and [`cvar`].
pub fn trials(values: &[f64], pass_at: f64, alpha: f64) -> Result<Trials> {
    let n = values.len() as u64;
    let passed = values.iter().filter(|x| **x >= pass_at).count() as u64;
    Ok(Trials {
        seeds: values.len(),
        mean: mean(values)?,
        worst: worst(values)?,
        cvar: cvar(values, alpha)?,
        pass_hat_k: crate::passk::pass_hat_k(n, passed, n)?,
    })
}

/// Reliability at one threshold, as stored in a [`Summary`].
///
/// Exists so a report lists each τ next to its fraction rather than relying on positions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReliabilityAt {
    /// Threshold τ.
    pub tau: f64,
    /// Fraction of values `≥ τ`.
    pub fraction: f64,
}

/// What to compute in a [`Summary`]: CVaR's α, the τ thresholds and the bootstrap settings.
///
/// Exists so a report states every parameter its numbers depend on; the default is the SPEC
/// §7 configuration (α = 0.2, τ ∈ {0.9, 0.5}, B = 2000, 95%, seed 0, one thread).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryConfig {
    /// CVaR tail fraction, `0 < α ≤ 1`.
    pub alpha: f64,
    /// Reliability thresholds, each finite.
    pub taus: Vec<f64>,
    /// Bootstrap seed.
    pub seed: u64,
    /// Bootstrap replicates B.
    pub resamples: usize,
    /// Confidence level of the mean's CI.
    pub level: f64,
    /// Bootstrap worker threads; does not change results.
    pub threads: usize,
}

impl Default for SummaryConfig {
    fn default() -> Self {
        // The bootstrap part defaults as a bootstrap does.
        let BootstrapConfig {
            seed,
            resamples,
            level,
            threads,
        } = BootstrapConfig::default();
        let taus = DEFAULT_TAUS.to_vec();
        Self {
            alpha: DEFAULT_ALPHA,
            taus,
            seed,
            resamples,
            level,
            threads,
        }
    }
}

impl SummaryConfig {
    /// The bootstrap part of this configuration, so the summary and any stand-alone CI use
    /// identical settings.
    #[must_use]
    pub fn bootstrap(&self) -> BootstrapConfig {
        BootstrapConfig::of(self.seed, self.resamples, self.level, self.threads)
    }
}

/// The reliability summary of one set of runs (one row of a stats report).
///
/// Exists to bundle every SPEC §7 per-set statistic so they are always reported together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of runs.
    pub n: usize,
    /// Mean.
    pub mean: f64,
    /// Minimum (worst case).
    pub worst: f64,
    /// CVaR tail fraction used.
    pub cvar_alpha: f64,
    /// CVaR@α.
    pub cvar: f64,
    /// Reliability@τ for each configured τ, in the configured order.
    pub reliability: Vec<ReliabilityAt>,
    /// Seeded bootstrap percentile CI of the mean.
    pub mean_ci: BootstrapCi,
}

/// Computes the full [`Summary`] of a set of run scores.
///
/// Exists as the one call report writers make per set of runs.
///
/// # Errors
/// Any input error of [`mean`], [`cvar`], [`reliability`] or the bootstrap configuration.
pub fn summarize(values: &[f64], config: &SummaryConfig) -> Result<Summary> {
    check_values(values, "summary")?;
    let mean_ci = bootstrap_mean_ci(values, &config.bootstrap())?;
    summary_with_ci(values, config, mean_ci)
}

/// [`summarize`] of pooled `values` whose mean CI is the stratified bootstrap over `strata`
/// (the same values grouped by task, seeds resampled within each task:
/// [`crate::stratified_bootstrap_mean_ci`]), so pooled rows bootstrap once, not once per bag.
///
/// # Errors
/// As [`summarize`] and [`crate::stratified_bootstrap_mean_ci`].
pub fn summarize_stratified(
    values: &[f64],
    strata: &[Vec<f64>],
    config: &SummaryConfig,
) -> Result<Summary> {
    check_values(values, "summary")?;
    let mean_ci = crate::stratified_bootstrap_mean_ci(strata, &config.bootstrap())?;
    summary_with_ci(values, config, mean_ci)
}

/// The point statistics of `values` (already checked) beside a given mean CI.
fn summary_with_ci(
    values: &[f64],
    config: &SummaryConfig,
    mean_ci: BootstrapCi,
) -> Result<Summary> {
    let reliability = config
        .taus
        .iter()
        .map(|&tau| {
            Ok(ReliabilityAt {
                tau,
                fraction: reliability(values, tau)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Summary {
        n: values.len(),
        mean: sequential_mean(values),
        worst: worst(values)?,
        cvar_alpha: config.alpha,
        cvar: cvar(values, config.alpha)?,
        reliability,
        mean_ci,
    })
}

fn check_alpha(alpha: f64) -> Result<()> {
    if alpha > 0.0 && alpha <= 1.0 {
        Ok(())
    } else {
        Err(StatsError::OutOfRange {
            name: "alpha",
            value: alpha,
            range: "(0, 1]",
        })
    }
}

fn check_tau(tau: f64) -> Result<()> {
    if tau.is_finite() {
        Ok(())
    } else {
        Err(StatsError::OutOfRange {
            name: "tau",
            value: tau,
            range: "finite",
        })
    }
}
