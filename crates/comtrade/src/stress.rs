//! The stress engine on ComtradeBench: [`StressConfig`] chooses an arm (escalating ramp or a
//! constant level) and [`ComtradeAdapter`] realises the engine's intents on served pages —
//! transient faults as HTTP 429, duplicate corruption as injected copies of the page's rows, a
//! distractor as a totals row. It is the only domain-coupled piece of the engine.
//!
//! Per-step randomness is the engine's: SHA-256 of `"{seed}:{step}"` (paper A.11), where the
//! step counts the episode's valid requests from 0.

use benchaudit_stress::{
    Arm, CorruptionKind, EnvironmentAdapter, EscalatingAdversary, Perturbation, QuotaConfig,
    Realisation, Realised, Schedule, StepRng, StressError, matched_mean,
};
use serde::{Deserialize, Serialize};

use crate::record::{Record, Row, Totals};
use crate::task::TaskSpec;

/// The reference adversary on ComtradeBench: fault probability `0.05 + 0.30·i`, duplicate rate
/// `0.20·i`, and a totals-row distractor once intensity reaches 0.70 (paper A.11's threshold).
pub fn reference_adversary() -> EscalatingAdversary {
    EscalatingAdversary {
        fault_base: 0.05,
        fault_scale: 0.30,
        corruption_scale: 0.20,
        distractor_at: Some(0.70),
        fault_status: 429,
    }
}

/// One arm of stress on one episode.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StressConfig {
    /// Which arm this is (recorded in the episode key).
    pub arm: Arm,
    /// Progress → intensity.
    pub schedule: Schedule,
    /// Intensity → intents.
    pub adversary: EscalatingAdversary,
    /// An enforced quota with an optional squeeze (B2), or free requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<QuotaConfig>,
}

impl StressConfig {
    /// The escalating arm: a linear ramp 0 → 1 reaching 1 on the task's last page.
    pub fn escalating(task: &TaskSpec) -> Result<Self, StressError> {
        Ok(StressConfig {
            arm: Arm::Escalating,
            schedule: Schedule::linear(1.0, task.total_pages().saturating_sub(1).max(1))?,
            adversary: reference_adversary(),
            quota: None,
        })
    }

    /// A constant arm held at `level`.
    pub fn constant(level: f64) -> Result<Self, StressError> {
        Ok(StressConfig {
            arm: Arm::Constant,
            schedule: Schedule::constant(level)?,
            adversary: reference_adversary(),
            quota: None,
        })
    }

    /// The constant level matching the escalating arm's realised mean intensity over `seeds`
    /// (computed with the engine's always-retry simulation; paper: "the ramp's mean").
    pub fn matched_level(task: &TaskSpec, seeds: &[u64]) -> Result<f64, StressError> {
        let esc = StressConfig::escalating(task)?;
        matched_mean(&esc.schedule, &esc.adversary, task.total_pages(), seeds)
    }

    /// The same arm under a quota.
    pub fn with_quota(mut self, quota: Option<QuotaConfig>) -> Self {
        self.quota = quota;
        self
    }

    /// The label recorded as the episode key's `arm`: `escalating`, or `constant@0.4756`.
    pub fn label(&self) -> String {
        match (self.arm, self.schedule) {
            (Arm::Escalating, _) => "escalating".into(),
            (Arm::Constant, Schedule::Constant(level)) => format!("constant@{level:.4}"),
            (Arm::Constant, _) => "constant".into(),
        }
    }
}

/// Realises intents on one served page.
pub struct ComtradeAdapter<'a> {
    /// Task whose totals rows are built.
    pub task: &'a TaskSpec,
    /// Page being served.
    pub page: u32,
    /// The page's canonical records (the distractor sums them).
    pub records: &'a [Record],
}

fn count_for(rate: f64, len: usize) -> usize {
    let n = (rate * len as f64).round_ties_even();
    if n.is_finite() && n > 0.0 {
        (n as usize).min(len.max(1) * 4)
    } else {
        0
    }
}

impl EnvironmentAdapter for ComtradeAdapter<'_> {
    type Observation = Vec<Row>;

    fn realise(
        &mut self,
        intents: &[Perturbation],
        mut rows: Vec<Row>,
        rng: &mut StepRng,
    ) -> Realised<Vec<Row>> {
        let mut applied = Vec::new();
        for intent in intents {
            let affected = match *intent {
                Perturbation::Corruption { kind, rate } if !rows.is_empty() => {
                    let n = count_for(rate, rows.len());
                    match kind {
                        CorruptionKind::Duplicate => {
                            for _ in 0..n {
                                let src = rng.below(rows.len() as u64).unwrap_or(0) as usize;
                                let at = rng.below(rows.len() as u64 + 1).unwrap_or(0) as usize;
                                let row = rows[src];
                                rows.insert(at, row);
                            }
                            n
                        }
                        CorruptionKind::Reorder => {
                            rng.shuffle(&mut rows);
                            rows.len()
                        }
                        CorruptionKind::Noise => {
                            for _ in 0..n {
                                let at = rng.below(rows.len() as u64).unwrap_or(0) as usize;
                                if let Row::Record(r) = &mut rows[at] {
                                    r.trade_value += 1 + rng.below(1000).unwrap_or(0);
                                }
                            }
                            n
                        }
                        CorruptionKind::Drop => {
                            let n = n.min(rows.len());
                            for _ in 0..n {
                                let at = rng.below(rows.len() as u64).unwrap_or(0) as usize;
                                rows.remove(at);
                            }
                            n
                        }
                    }
                }
                Perturbation::Distractor if !self.records.is_empty() => {
                    rows.insert(
                        0,
                        Row::Totals(Totals::of(self.page, self.records.iter().copied())),
                    );
                    1
                }
                _ => 0,
            };
            applied.push(Realisation {
                intent: *intent,
                affected: affected as u32,
            });
        }
        Realised {
            observation: rows,
            applied,
        }
    }
}

/// The status of a transient-fault intent among a step's intents, if any.
pub fn fault_status(intents: &[Perturbation]) -> Option<u16> {
    intents.iter().find_map(|p| match p {
        Perturbation::TransientFault { status } => Some(*status),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::task;

    #[test]
    fn escalating_reaches_one_on_the_last_page_and_labels_arms() {
        let t = task("T9_clean_ab").expect("registry");
        let esc = StressConfig::escalating(t).expect("valid");
        assert_eq!(esc.schedule, Schedule::linear(1.0, 4).expect("valid"));
        assert_eq!(esc.label(), "escalating");
        assert_eq!(
            StressConfig::constant(0.5).expect("valid").label(),
            "constant@0.5000"
        );
        let level =
            StressConfig::matched_level(t, &(0..20).collect::<Vec<_>>()).expect("computable");
        assert!(level > 0.3 && level < 0.7, "{level}");
    }
}
