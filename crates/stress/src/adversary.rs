//! Intensity → perturbation intents.

use serde::{Deserialize, Serialize};

use crate::error::{StressError, check_range, unit};
use crate::perturbation::{CorruptionKind, Perturbation};
use crate::progress::AgentProgress;
use crate::rng::StepRng;

/// Decides, for one step, which perturbations to ask for.
///
/// A policy sees the step's intensity (from the [`Schedule`](crate::Schedule)), the agent's
/// progress, and the step's [`StepRng`]. It must be a pure function of those three: all
/// randomness comes from `rng`, drawn in an order that depends on nothing else, so the
/// intents of step `(seed, step)` can be regenerated exactly. Whatever the policy leaves
/// unconsumed in `rng` is handed on to the adapter, which continues the same stream.
pub trait AdversaryPolicy {
    /// The intents for this step, in the order they should be realised.
    fn perturb(
        &self,
        intensity: f64,
        progress: &AgentProgress,
        rng: &mut StepRng,
    ) -> Vec<Perturbation>;

    /// Checks the policy's parameters; the wrapper calls it once at construction.
    fn validate(&self) -> Result<(), StressError> {
        Ok(())
    }
}

impl<P: AdversaryPolicy + ?Sized> AdversaryPolicy for &P {
    fn perturb(
        &self,
        intensity: f64,
        progress: &AgentProgress,
        rng: &mut StepRng,
    ) -> Vec<Perturbation> {
        (**self).perturb(intensity, progress, rng)
    }

    fn validate(&self) -> Result<(), StressError> {
        (**self).validate()
    }
}

/// The reference adversary: faults and duplicates grow with intensity, and a distractor
/// appears past a threshold. It knows nothing about any domain.
///
/// For intensity `i` (first mapped into `[0, 1]`, NaN → 0), each step:
///
/// 1. **Exactly one** uniform draw `u = rng.uniform()` is taken, always, whatever the
///    parameters, so every step consumes the same amount of the stream and the adapter's
///    draws start at the same position.
/// 2. If `u < clamp(fault_base + fault_scale·i, 0, 1)`, the step faults and the intents are
///    just `[TransientFault { status: fault_status }]`: a failed step has no observation to
///    corrupt.
/// 3. Otherwise, in this order: `Corruption { kind: Duplicate, rate: clamp(corruption_scale·i,
///    0, 1) }` if that rate is positive, then `Distractor` if `distractor_at` is set and
///    `i >= distractor_at`.
///
/// The fields are public for struct-literal construction in experiment code; prefer
/// [`new`](Self::new), which validates. `perturb` never panics on unvalidated fields.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EscalatingAdversary {
    /// Fault probability at intensity 0, in `[0, 1]`.
    pub fault_base: f64,
    /// Added fault probability per unit of intensity, in `[0, 1]`.
    pub fault_scale: f64,
    /// Duplicate-corruption rate per unit of intensity, in `[0, 1]`.
    pub corruption_scale: f64,
    /// Intensity from which a distractor is injected on every non-faulted step; `None` never.
    /// A constant arm held below it never sees one, which is the nonlinearity the matched-mean
    /// design probes.
    pub distractor_at: Option<f64>,
    /// Status carried by the fault intents (429 for a rate limit).
    pub fault_status: u16,
}

impl EscalatingAdversary {
    /// The status used by the paper's adversary: HTTP 429, a retryable rate limit.
    pub const RATE_LIMITED: u16 = 429;

    /// A validated adversary: probabilities and scales finite in `[0, 1]`, `distractor_at` in
    /// `[0, 1]`, `fault_status` in `100..=599`.
    pub fn new(
        fault_base: f64,
        fault_scale: f64,
        corruption_scale: f64,
        distractor_at: Option<f64>,
        fault_status: u16,
    ) -> Result<Self, StressError> {
        let a = Self {
            fault_base,
            fault_scale,
            corruption_scale,
            distractor_at,
            fault_status,
        };
        a.check()?;
        Ok(a)
    }

    /// The fault probability at intensity `i`: `clamp(fault_base + fault_scale·i, 0, 1)`.
    pub fn fault_probability(&self, intensity: f64) -> f64 {
        unit(self.fault_base + self.fault_scale * unit(intensity))
    }

    /// The duplicate-corruption rate at intensity `i`: `clamp(corruption_scale·i, 0, 1)`.
    pub fn corruption_rate(&self, intensity: f64) -> f64 {
        unit(self.corruption_scale * unit(intensity))
    }

    fn check(&self) -> Result<(), StressError> {
        check_range("fault_base", self.fault_base, 0.0, 1.0)?;
        check_range("fault_scale", self.fault_scale, 0.0, 1.0)?;
        check_range("corruption_scale", self.corruption_scale, 0.0, 1.0)?;
        if let Some(at) = self.distractor_at {
            check_range("distractor_at", at, 0.0, 1.0)?;
        }
        if !(100..=599).contains(&self.fault_status) {
            return Err(StressError::InvalidStatus(self.fault_status));
        }
        Ok(())
    }
}

impl AdversaryPolicy for EscalatingAdversary {
    fn perturb(
        &self,
        intensity: f64,
        _progress: &AgentProgress,
        rng: &mut StepRng,
    ) -> Vec<Perturbation> {
        let i = unit(intensity);
        let u = rng.uniform();
        if u < self.fault_probability(i) {
            return vec![Perturbation::TransientFault {
                status: self.fault_status,
            }];
        }
        let mut intents = Vec::new();
        let rate = self.corruption_rate(i);
        if rate > 0.0 {
            intents.push(Perturbation::Corruption {
                kind: CorruptionKind::Duplicate,
                rate,
            });
        }
        if self.distractor_at.is_some_and(|at| i >= at) {
            intents.push(Perturbation::Distractor);
        }
        intents
    }

    fn validate(&self) -> Result<(), StressError> {
        self.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adversary() -> EscalatingAdversary {
        EscalatingAdversary::new(0.0, 0.3, 0.3, Some(0.7), 429).expect("valid")
    }

    #[test]
    fn intensity_zero_is_calm() {
        let a = adversary();
        let p = AgentProgress::new();
        for step in 0..50 {
            let intents = a.perturb(0.0, &p, &mut StepRng::new(1, step));
            assert!(intents.is_empty(), "step {step}: {intents:?}");
        }
    }

    #[test]
    fn certain_fault_is_alone() {
        let a = EscalatingAdversary::new(1.0, 0.0, 0.5, Some(0.0), 503).expect("valid");
        let intents = a.perturb(1.0, &AgentProgress::new(), &mut StepRng::new(0, 0));
        assert_eq!(intents, vec![Perturbation::TransientFault { status: 503 }]);
    }

    #[test]
    fn corruption_and_distractor_follow_intensity() {
        let a = EscalatingAdversary::new(0.0, 0.0, 0.5, Some(0.7), 429).expect("valid");
        let p = AgentProgress::new();
        let at = |i| a.perturb(i, &p, &mut StepRng::new(0, 0));
        assert_eq!(
            at(0.5),
            vec![Perturbation::Corruption {
                kind: CorruptionKind::Duplicate,
                rate: 0.25
            }]
        );
        assert_eq!(
            at(0.7),
            vec![
                Perturbation::Corruption {
                    kind: CorruptionKind::Duplicate,
                    rate: 0.35
                },
                Perturbation::Distractor
            ]
        );
    }

    #[test]
    fn exactly_one_draw_per_step() {
        for (base, i) in [(0.0, 0.0), (1.0, 1.0), (0.2, 0.5)] {
            let a = EscalatingAdversary::new(base, 0.3, 0.3, Some(0.7), 429).expect("valid");
            let mut used = StepRng::new(9, 9);
            let mut fresh = StepRng::new(9, 9);
            a.perturb(i, &AgentProgress::new(), &mut used);
            fresh.next_u64();
            assert_eq!(used.next_u64(), fresh.next_u64());
        }
    }

    #[test]
    fn fault_rate_matches_probability() {
        let a = EscalatingAdversary::new(0.1, 0.4, 0.0, None, 429).expect("valid");
        let p = AgentProgress::new();
        let n = 4000;
        let faults = (0..n)
            .filter(|&s| {
                a.perturb(0.5, &p, &mut StepRng::new(123, s))
                    .iter()
                    .any(Perturbation::is_fault)
            })
            .count();
        let rate = faults as f64 / n as f64;
        assert!((rate - 0.3).abs() < 0.03, "observed {rate}");
    }

    #[test]
    fn invalid_parameters_are_errors() {
        assert!(EscalatingAdversary::new(f64::NAN, 0.3, 0.3, None, 429).is_err());
        assert!(EscalatingAdversary::new(0.0, -0.1, 0.3, None, 429).is_err());
        assert!(EscalatingAdversary::new(0.0, 0.3, 2.0, None, 429).is_err());
        assert!(EscalatingAdversary::new(0.0, 0.3, 0.3, Some(f64::INFINITY), 429).is_err());
        assert_eq!(
            EscalatingAdversary::new(0.0, 0.3, 0.3, None, 42),
            Err(StressError::InvalidStatus(42))
        );
    }
}
