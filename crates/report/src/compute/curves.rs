//! Degradation curves over numeric dose arms, and reading an arm label's dose or A/B side.

use std::collections::BTreeMap;

use benchaudit_agents::Level;
use benchaudit_stats::{degradation_curve, mean, stratified_bootstrap_mean_ci};

use super::{Doses, Grid, Options};
use crate::error::{Result, stats};
use crate::model::{CurveStats, DoseSeed};

/// A numeric dose in an arm label: `constant@0.5000` (a constant-stress arm, as `benchaudit
/// ab` records it), `dose=0.5`, `dose:0.5` or `0.5`.
#[must_use]
pub fn arm_dose(arm: &str) -> Option<f64> {
    let t = arm.trim();
    let t = ["constant@", "dose=", "dose:"]
        .iter()
        .find_map(|p| t.strip_prefix(p))
        .unwrap_or(t);
    t.parse::<f64>().ok().filter(|d| d.is_finite())
}

/// The side of a constant-vs-escalating A/B design an arm label belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Constant,
    Escalating,
}

pub(super) fn arm_side(arm: Option<&str>) -> Option<Side> {
    let a = arm?.trim().to_ascii_lowercase();
    if a == "escalating" {
        Some(Side::Escalating)
    } else if a == "constant" || a.starts_with("constant@") {
        Some(Side::Constant)
    } else {
        None
    }
}

/// Degradation curves over numeric dose arms, per (policy, level).
///
/// Each dose is its own arm and so its own options hash; a (policy, level) whose doses repeat
/// (the same dose under several option sets) is ambiguous and gets no curve.
pub(super) fn curves(grid: &Grid, opts: &Options) -> Result<Vec<CurveStats>> {
    let mut by: BTreeMap<(String, Level), Doses<'_>> = BTreeMap::new();
    for (c, tasks) in grid {
        if let Some(dose) = c.arm.as_deref().and_then(arm_dose) {
            by.entry((c.policy.clone(), c.level))
                .or_default()
                .push((dose, c, tasks));
        }
    }
    let config = opts.summary_config();
    let mut out = Vec::new();
    for ((policy, level), mut doses) in by {
        doses.sort_by(|a, b| a.0.total_cmp(&b.0));
        if doses.len() < 2 || doses.windows(2).any(|w| w[0].0 == w[1].0) {
            continue;
        }
        let lbl = format!("{policy} {level}");
        let groups: Vec<(f64, Vec<f64>)> = doses
            .iter()
            .map(|(d, _, tasks)| {
                (
                    *d,
                    tasks.values().flat_map(|s| s.values().copied()).collect(),
                )
            })
            .collect();
        let mut curve = degradation_curve(&groups, &config).map_err(stats(&lbl))?;
        // A dose's episodes pool its tasks: its CI resamples seeds within each task (the
        // stratified bootstrap), as every pooled CI of a report does. Points and doses are
        // both in ascending dose order.
        for (point, (_, _, tasks)) in curve.points.iter_mut().zip(&doses) {
            let strata: Vec<Vec<f64>> = tasks
                .values()
                .map(|s| s.values().copied().collect())
                .collect();
            point.summary.mean_ci =
                stratified_bootstrap_mean_ci(&strata, &config.bootstrap()).map_err(stats(&lbl))?;
        }
        let mut seeds = Vec::new();
        for (dose, _, tasks) in &doses {
            let mut per_seed: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
            for s in tasks.values() {
                for (seed, v) in s.iter() {
                    per_seed.entry(seed).or_default().push(v);
                }
            }
            for (seed, vs) in per_seed {
                seeds.push(DoseSeed {
                    dose: *dose,
                    seed,
                    value: mean(&vs).map_err(stats(&lbl))?,
                    tasks: vs.len(),
                });
            }
        }
        out.push(CurveStats {
            policy,
            level,
            arms: doses.iter().filter_map(|(_, c, _)| c.arm.clone()).collect(),
            label: lbl,
            points: curve.points,
            gap: curve.gap,
            seeds,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doses_parse_from_arm_labels() {
        assert_eq!(arm_dose("0.5"), Some(0.5));
        assert_eq!(arm_dose("dose=1"), Some(1.0));
        assert_eq!(arm_dose("dose:0.25"), Some(0.25));
        assert_eq!(arm_dose("constant@0.4321"), Some(0.4321));
        assert_eq!(arm_dose("constant"), None);
        assert_eq!(arm_dose("escalating"), None);
        assert_eq!(arm_dose("NaN"), None);
        assert_eq!(arm_side(Some("Escalating")), Some(Side::Escalating));
        assert_eq!(arm_side(Some("constant@0.5000")), Some(Side::Constant));
        assert_eq!(arm_side(Some("constant")), Some(Side::Constant));
        assert_eq!(arm_side(Some("0.5")), None);
        assert_eq!(arm_side(None), None);
    }
}
