//! Cliff's δ, the ordinal dominance effect size.
//!
//! Exists as the effect-size companion of the sign-flip test (Cliff 1993): it says how often
//! one arm beats the other, ignoring by how much, so a handful of huge differences cannot
//! masquerade as a consistent effect.

use crate::bootstrap::{BootstrapCi, BootstrapConfig, bootstrap_ci};
use crate::error::{Result, check_values};

/// Within-pair Cliff's δ: `(#{Δᵢ > 0} − #{Δᵢ < 0}) / n`; zero differences count as ties.
///
/// Exists for the paired A/B design of SPEC §7, where Δᵢ = constant − escalating.
///
/// # Errors
/// [`StatsError::Empty`](crate::StatsError::Empty), `NonFinite`, `Overflow`.
pub fn cliffs_delta_paired(deltas: &[f64]) -> Result<f64> {
    check_values(deltas, "cliff's delta differences")?;
    Ok(dominance(deltas))
}

/// Seeded bootstrap percentile CI of the within-pair Cliff's δ (pairs are resampled).
///
/// Exists so the effect size carries the same reproducible uncertainty as the mean.
///
/// # Errors
/// As [`crate::bootstrap_ci`].
pub fn cliffs_delta_paired_ci(deltas: &[f64], config: &BootstrapConfig) -> Result<BootstrapCi> {
    bootstrap_ci(deltas, config, dominance)
}

/// Two-sample Cliff's δ: `(#{xᵢ > yⱼ} − #{xᵢ < yⱼ}) / (m·n)` over all pairs.
///
/// Exists for unpaired comparisons (e.g. two models on different seeds). Computed in
/// `O((m + n) log n)` by sorting `y`.
///
/// # Errors
/// [`StatsError::Empty`](crate::StatsError::Empty), `NonFinite`, `Overflow` for either sample.
pub fn cliffs_delta(x: &[f64], y: &[f64]) -> Result<f64> {
    check_values(x, "cliff's delta x")?;
    check_values(y, "cliff's delta y")?;
    let mut sorted = y.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut score: i128 = 0;
    for &xi in x {
        let below = sorted.partition_point(|&yj| yj < xi);
        let above = sorted.len() - sorted.partition_point(|&yj| yj <= xi);
        score += below as i128 - above as i128;
    }
    let pairs = x.len() as f64 * y.len() as f64;
    Ok(score as f64 / pairs)
}

/// Dominance statistic of a non-empty slice of differences.
pub(crate) fn dominance(deltas: &[f64]) -> f64 {
    let mut score: i64 = 0;
    for &d in deltas {
        if d > 0.0 {
            score += 1;
        } else if d < 0.0 {
            score -= 1;
        }
    }
    score as f64 / deltas.len() as f64
}
