//! Wilson score interval for a binomial rate.
//!
//! Exists because rates in reports (solve rates, SKIP rates, death rates) are often near 0 or
//! 1 on small n, where the Wald interval collapses or leaves `[0, 1]`; Wilson (1927) does not.

use serde::{Deserialize, Serialize};

use crate::error::{Result, StatsError};

/// The two-sided 95% standard-normal quantile, `Φ⁻¹(0.975)`.
///
/// Exists as a constant so no quantile function (libm / statrs) is needed at run time.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// A rate with its Wilson score interval.
///
/// Exists to report `k/n` together with its uncertainty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WilsonInterval {
    /// Successes k.
    pub successes: u64,
    /// Trials n.
    pub trials: u64,
    /// Observed rate k/n.
    pub rate: f64,
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// Normal quantile z used.
    pub z: f64,
}

/// Wilson score 95% interval for `successes` out of `trials` (z = [`Z_95`]).
///
/// Exists as the default rate interval of every report.
///
/// # Errors
/// As [`wilson_interval_z`].
pub fn wilson_interval(successes: u64, trials: u64) -> Result<WilsonInterval> {
    wilson_interval_z(successes, trials, Z_95)
}

/// Wilson score interval with an explicit normal quantile `z`.
///
/// Exists for other confidence levels. With `p̂ = k/n`:
/// `(p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)`, clamped to `[0, 1]`.
///
/// # Errors
/// [`StatsError::Empty`] if `trials = 0`; [`StatsError::CountExceedsTrials`] if `k > n`;
/// [`StatsError::OutOfRange`] unless `z` is finite and positive.
pub fn wilson_interval_z(successes: u64, trials: u64, z: f64) -> Result<WilsonInterval> {
    if trials == 0 {
        return Err(StatsError::Empty {
            what: "wilson interval trials",
        });
    }
    if successes > trials {
        return Err(StatsError::CountExceedsTrials { successes, trials });
    }
    if !(z.is_finite() && z > 0.0) {
        return Err(StatsError::OutOfRange {
            name: "z",
            value: z,
            range: "finite and > 0",
        });
    }
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    let lo = if successes == 0 {
        0.0
    } else {
        (center - half).clamp(0.0, 1.0)
    };
    let hi = if successes == trials {
        1.0
    } else {
        (center + half).clamp(0.0, 1.0)
    };
    Ok(WilsonInterval {
        successes,
        trials,
        rate: p,
        lo,
        hi,
        z,
    })
}
