//! Paired A/B comparison and the pre-registered decision rule.
//!
//! Two arms are run on the same seeds: `a` (the constant arm) and `b` (the escalating arm).
//! The paired difference is `Δᵢ = aᵢ − bᵢ`, so a positive Δ is an escalation penalty. One
//! call gives everything the pre-registration reports: mean Δ with its paired bootstrap CI
//! (pairs are resampled, i.e. the Δᵢ are), the sign-flip permutation p, and the within-pair
//! Cliff's δ with its bootstrap CI.

use serde::{Deserialize, Serialize};

use crate::bootstrap::{BootstrapCi, BootstrapConfig, bootstrap_mean_ci};
use crate::cliffs::cliffs_delta_paired_ci;
use crate::error::{Result, StatsError, check_values};
use crate::numeric::sequential_mean;
use crate::permutation::{DEFAULT_PERMUTATION_SAMPLES, SignFlipTest, sign_flip_test};

/// Significance threshold of the pre-registered decision rule (`p < 0.05`).
pub const DECISION_ALPHA: f64 = 0.05;

/// Settings of a paired comparison.
///
/// Exists so the seed, B, level and Monte-Carlo sample count behind a comparison are stated
/// once. The bootstrap of mean Δ and of Cliff's δ use the same seed, hence the same resampled
/// pairs; the permutation stream is disjoint from both (see
/// [`PERMUTATION_STREAM`](crate::PERMUTATION_STREAM)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedConfig {
    /// Seed of the bootstrap and Monte-Carlo permutation streams.
    pub seed: u64,
    /// Bootstrap replicates B.
    pub resamples: usize,
    /// Confidence level of both CIs.
    pub level: f64,
    /// Bootstrap worker threads; does not change results.
    pub threads: usize,
    /// Monte-Carlo sign patterns M, used only when n > 20.
    pub permutation_samples: usize,
}

impl Default for PairedConfig {
    fn default() -> Self {
        // The bootstrap part defaults as a bootstrap does.
        let b = BootstrapConfig::default();
        let permutation_samples = DEFAULT_PERMUTATION_SAMPLES;
        let (seed, resamples, level, threads) = (b.seed, b.resamples, b.level, b.threads);
        Self {
            seed,
            resamples,
            level,
            threads,
            permutation_samples,
        }
    }
}

impl PairedConfig {
    /// The bootstrap part of this configuration, so both CIs of a comparison are built with
    /// identical settings.
    #[must_use]
    pub fn bootstrap(&self) -> BootstrapConfig {
        BootstrapConfig::of(self.seed, self.resamples, self.level, self.threads)
    }
}

/// Everything reported for one paired A/B comparison.
///
/// Exists so the estimate, its CI, the permutation test and the effect size travel together
/// into `stats.json` and into [`decision_rule`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedComparison {
    /// Number of pairs.
    pub n: usize,
    /// Mean of the constant arm `a`.
    pub mean_a: f64,
    /// Mean of the escalating arm `b`.
    pub mean_b: f64,
    /// Mean paired difference `mean(aᵢ − bᵢ)`; positive = escalation penalty.
    pub mean_delta: f64,
    /// Paired bootstrap CI of the mean difference (its `estimate` is `mean_delta`).
    pub delta_ci: BootstrapCi,
    /// Two-sided sign-flip permutation test of the differences.
    pub sign_flip: SignFlipTest,
    /// Pairs with `Δᵢ > 0`.
    pub positive: usize,
    /// Pairs with `Δᵢ < 0`.
    pub negative: usize,
    /// Pairs with `Δᵢ = 0`.
    pub ties: usize,
    /// Within-pair Cliff's δ, `(positive − negative) / n`.
    pub cliffs_delta: f64,
    /// Bootstrap CI of Cliff's δ (its `estimate` is `cliffs_delta`).
    pub cliffs_ci: BootstrapCi,
}

impl PairedComparison {
    /// The sign-flip p-value.
    ///
    /// Exists as a shorthand for the field most callers want.
    #[must_use]
    pub fn p_value(&self) -> f64 {
        self.sign_flip.p_value
    }
}

/// The paired differences `Δᵢ = aᵢ − bᵢ`.
///
/// Exists so callers get the exact Δ vector the comparison is computed on.
///
/// # Errors
/// [`StatsError::LengthMismatch`]; `Empty`, `NonFinite` or `Overflow` for either arm or the
/// differences.
pub fn paired_differences(a: &[f64], b: &[f64]) -> Result<Vec<f64>> {
    if a.len() != b.len() {
        return Err(StatsError::LengthMismatch {
            left: a.len(),
            right: b.len(),
        });
    }
    check_values(a, "paired arm a (constant)")?;
    check_values(b, "paired arm b (escalating)")?;
    let deltas: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    check_values(&deltas, "paired differences")?;
    Ok(deltas)
}

/// Paired comparison of the constant arm `a` against the escalating arm `b` (pairs by index).
///
/// Exists as the one call behind every A/B row of a report.
///
/// # Errors
/// As [`paired_differences`], plus configuration errors of the bootstrap or permutation test.
pub fn compare_paired(a: &[f64], b: &[f64], config: &PairedConfig) -> Result<PairedComparison> {
    let deltas = paired_differences(a, b)?;
    let bootstrap = config.bootstrap();
    let delta_ci = bootstrap_mean_ci(&deltas, &bootstrap)?;
    let cliffs_ci = cliffs_delta_paired_ci(&deltas, &bootstrap)?;
    let sign_flip = sign_flip_test(&deltas, config.permutation_samples, config.seed)?;
    let positive = deltas.iter().filter(|&&d| d > 0.0).count();
    let negative = deltas.iter().filter(|&&d| d < 0.0).count();
    Ok(PairedComparison {
        n: deltas.len(),
        mean_a: sequential_mean(a),
        mean_b: sequential_mean(b),
        mean_delta: delta_ci.estimate,
        positive,
        negative,
        ties: deltas.len() - positive - negative,
        cliffs_delta: cliffs_ci.estimate,
        delta_ci,
        sign_flip,
        cliffs_ci,
    })
}

/// The pre-registered decision rule: does this comparison confirm the predicted direction?
///
/// Exists so the power study and the pre-registration checker apply literally the same rule.
/// It fires when the paired bootstrap CI of mean Δ excludes 0 on the predicted side
/// (`lo > 0` if `predicted_positive`, else `hi < 0`) **and** the two-sided sign-flip
/// `p < 0.05` ([`DECISION_ALPHA`]).
#[must_use]
pub fn decision_rule(comparison: &PairedComparison, predicted_positive: bool) -> bool {
    let excludes = if predicted_positive {
        comparison.delta_ci.excludes_zero_above()
    } else {
        comparison.delta_ci.excludes_zero_below()
    };
    excludes && comparison.sign_flip.p_value < DECISION_ALPHA
}
