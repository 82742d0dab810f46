//! Degradation curves: how the summary statistics move as adversity (the dose) rises.

use serde::{Deserialize, Serialize};

use crate::error::{Result, StatsError};
use crate::gap::{ReliabilityGap, reliability_gap};
use crate::summary::{Summary, SummaryConfig, summarize};

/// One dose of a degradation curve with its full summary.
///
/// Exists so each point of the curve carries n, mean, worst, CVaR, Reliability@τ and the
/// mean's bootstrap CI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// The dose (difficulty level, fault rate, …).
    pub dose: f64,
    /// Summary of the runs at this dose.
    #[serde(flatten)]
    pub summary: Summary,
}

/// A degradation curve: points in ascending dose order and the resulting reliability gap.
///
/// Exists to summarize a whole difficulty sweep in one reportable value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DegradationCurve {
    /// Points sorted by ascending dose.
    pub points: Vec<CurvePoint>,
    /// Mean at the lowest dose minus worst case at the highest dose.
    pub gap: ReliabilityGap,
}

/// Builds a degradation curve from `(dose, values)` groups (any order).
///
/// Exists so a sweep over difficulty levels is summarized with one call. Every dose is
/// summarized with the same `config` (including the same bootstrap seed), so a dose's
/// numbers do not depend on which other doses are present. The lowest dose is taken as the
/// static level and the highest as the hardest one for the gap.
///
/// # Errors
/// [`StatsError::Empty`] if there are no groups; [`StatsError::OutOfRange`] for a non-finite
/// dose; [`StatsError::DuplicateDose`]; any error of [`summarize`] for a group.
pub fn degradation_curve<V: AsRef<[f64]>>(
    groups: &[(f64, V)],
    config: &SummaryConfig,
) -> Result<DegradationCurve> {
    let mut points = groups
        .iter()
        .map(|(dose, values)| {
            if !dose.is_finite() {
                return Err(StatsError::OutOfRange {
                    name: "dose",
                    value: *dose,
                    range: "finite",
                });
            }
            Ok((*dose, values.as_ref()))
        })
        .collect::<Result<Vec<_>>>()?;
    points.sort_by(|x, y| x.0.total_cmp(&y.0));
    if let Some(w) = points.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(StatsError::DuplicateDose { dose: w[0].0 });
    }
    let (Some(&(_, first)), Some(&(_, last))) = (points.first(), points.last()) else {
        return Err(StatsError::Empty {
            what: "degradation curve groups",
        });
    };
    let gap = reliability_gap(first, last)?;
    let points = points
        .into_iter()
        .map(|(dose, values)| {
            Ok(CurvePoint {
                dose,
                summary: summarize(values, config)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(DegradationCurve { points, gap })
}
