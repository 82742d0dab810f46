//! Holm's step-down adjustment for a family of p-values.
//!
//! Exists because a report tests several models (or conditions) at once; Holm (1979)
//! controls the family-wise error rate without assuming independence and is uniformly more
//! powerful than Bonferroni.

use crate::error::{Result, StatsError};

/// Holm-adjusted p-values, returned in the input order.
///
/// With `m` p-values sorted ascending as `p₍₁₎ ≤ … ≤ p₍ₘ₎` (ties kept in input order), the
/// adjusted value of `p₍ᵢ₎` is `min(1, max_{j ≤ i} (m − j + 1)·p₍ⱼ₎)`, which makes the
/// adjusted values monotone in the raw ones and never above 1. An empty family yields an
/// empty vector. Rejecting where the adjusted value is `< α` is Holm's procedure at level α.
///
/// # Errors
/// [`StatsError::OutOfRange`] if any p-value is NaN or outside `[0, 1]`.
pub fn holm_adjust(p_values: &[f64]) -> Result<Vec<f64>> {
    if let Some(&bad) = p_values.iter().find(|p| !(0.0..=1.0).contains(*p)) {
        return Err(StatsError::OutOfRange {
            name: "p-value",
            value: bad,
            range: "[0, 1]",
        });
    }
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]).then(i.cmp(&j)));
    let mut adjusted = vec![0.0; m];
    let mut running_max = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        let factor = (m - rank) as f64;
        running_max = running_max.max((factor * p_values[i]).min(1.0));
        adjusted[i] = running_max;
    }
    Ok(adjusted)
}
