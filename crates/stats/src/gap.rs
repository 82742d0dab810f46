//! The reliability gap: static mean minus hardest-level worst case.
//!
//! Exists because the operative question for deployment is how far the floor under the
//! hardest adversity falls below the comfortable average (paper §4.4, §5).

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::summary::{mean, worst};

/// A reliability gap with the two numbers it is made of.
///
/// Exists so a report shows the components, not just the difference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReliabilityGap {
    /// Mean score at the static (no-escalation) level.
    pub static_mean: f64,
    /// Minimum score at the hardest level.
    pub hardest_worst: f64,
    /// `static_mean − hardest_worst`.
    pub gap: f64,
}

/// Reliability gap = `mean(static_values) − min(hardest_values)`.
///
/// Exists as the single definition of the gap used by reports and degradation curves.
///
/// # Errors
/// `Empty`, `NonFinite` or `Overflow` for either input.
pub fn reliability_gap(static_values: &[f64], hardest_values: &[f64]) -> Result<ReliabilityGap> {
    let static_mean = mean(static_values)?;
    let hardest_worst = worst(hardest_values)?;
    Ok(ReliabilityGap {
        static_mean,
        hardest_worst,
        gap: static_mean - hardest_worst,
    })
}
