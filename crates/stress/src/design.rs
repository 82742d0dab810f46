//! The experimental designs built on the engine: matched-mean A/B arms and degradation doses.

use serde::{Deserialize, Serialize};

use crate::adversary::AdversaryPolicy;
use crate::error::StressError;
use crate::schedule::Schedule;
use crate::wrapper::{AdversarialWrapper, StepOutcome, Trace, WrapperConfig};

/// The constant intensities of the degradation curve (paper C.9): coverage is measured at each
/// dose under a `Schedule::Constant(dose)`.
pub const DEGRADATION_DOSES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// Most steps a simulated always-retry episode may take before it is declared unfinishable.
pub const SIMULATION_STEP_LIMIT: u32 = 10_000;

/// The two arms of the matched-mean A/B design. Pairs share a seed and a policy; only the
/// difficulty *trajectory* differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    /// Intensity follows the escalating schedule (e.g. a ramp 0 → 1).
    Escalating,
    /// Intensity held at the escalating arm's realised mean ([`matched_mean`]).
    Constant,
}

impl Arm {
    /// Both arms, escalating first.
    pub const ALL: [Self; 2] = [Self::Escalating, Self::Constant];

    /// This arm's schedule: the escalating schedule itself, or `Constant(matched_level)`.
    /// Errors if `matched_level` is not a valid level.
    pub fn schedule(
        self,
        escalating: &Schedule,
        matched_level: f64,
    ) -> Result<Schedule, StressError> {
        match self {
            Self::Escalating => escalating.validate().map(|()| *escalating),
            Self::Constant => Schedule::constant(matched_level),
        }
    }
}

/// Runs one episode of the no-LLM **always-retry** rule agent against `policy` under
/// `schedule`, with no quota, and returns its trace.
///
/// Each step is begun on an [`AdversarialWrapper`] seeded `seed`; if the policy's intents
/// contain a [`TransientFault`](crate::Perturbation::TransientFault) the step ends as
/// [`StepOutcome::Fault`] (cancelling a success, so intensity drops back), otherwise as
/// [`StepOutcome::Success`]. The agent simply retries after a fault; the episode ends right after
/// the step that brings raw `successes` to `required_successes`. Corruption and distractor
/// intents do not affect this agent. Errors if the parameters are invalid,
/// `required_successes == 0` or `> SIMULATION_STEP_LIMIT`, or the episode needs more than
/// [`SIMULATION_STEP_LIMIT`] steps.
pub fn simulate_always_retry<P: AdversaryPolicy>(
    seed: u64,
    schedule: &Schedule,
    policy: &P,
    required_successes: u32,
) -> Result<Trace, StressError> {
    if required_successes == 0 {
        return Err(StressError::Zero {
            what: "required_successes",
        });
    }
    if required_successes > SIMULATION_STEP_LIMIT {
        return Err(StressError::EpisodeTooLong {
            seed,
            limit: SIMULATION_STEP_LIMIT,
        });
    }
    let config = WrapperConfig {
        seed,
        schedule: *schedule,
        quota: None,
    };
    let mut wrapper = AdversarialWrapper::new(config, policy)?;
    while wrapper.progress().successes < required_successes {
        if wrapper.progress().steps >= SIMULATION_STEP_LIMIT {
            return Err(StressError::EpisodeTooLong {
                seed,
                limit: SIMULATION_STEP_LIMIT,
            });
        }
        let plan = wrapper.begin_step()?;
        let outcome = if plan.faulted() {
            StepOutcome::Fault
        } else {
            StepOutcome::Success
        };
        wrapper.end_step(outcome)?;
    }
    Ok(wrapper.into_trace())
}

/// The constant arm's level: the **realised mean intensity** of the escalating arm.
///
/// Exactly: for each seed `s` in `seeds`, in order, run [`simulate_always_retry`]`(s,
/// escalating, policy, required_successes)`, which uses the adversary's own seeded fault draws
/// (the same draws the real escalating episode with seed `s` would see, as long as the agent
/// behaves like the always-retry rule); let `m_s` be the arithmetic mean of the intensities
/// of that episode's steps (summed in step order). The result is the unweighted mean of the
/// `m_s` (summed in `seeds` order), so every seed counts equally whatever its episode length.
/// Duplicate seeds count as often as they appear.
///
/// Holding a constant arm at this level matches the escalating arm's mean intensity on the
/// same seeds while removing its trajectory; any threshold above it (the distractor's, the
/// squeeze's) is then crossed by the escalating arm only.
///
/// Errors: no seeds, invalid schedule or policy, `required_successes == 0`, or an episode that
/// does not finish within [`SIMULATION_STEP_LIMIT`] steps.
pub fn matched_mean<P: AdversaryPolicy>(
    escalating: &Schedule,
    policy: &P,
    required_successes: u32,
    seeds: &[u64],
) -> Result<f64, StressError> {
    if seeds.is_empty() {
        return Err(StressError::NoSeeds);
    }
    let mut sum = 0.0;
    for &seed in seeds {
        let trace = simulate_always_retry(seed, escalating, policy, required_successes)?;
        // required_successes >= 1, so the trace has at least one step.
        sum += trace.mean_intensity().unwrap_or(0.0);
    }
    Ok(sum / seeds.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adversary::EscalatingAdversary;

    #[test]
    fn no_faults_means_the_plain_ramp_mean() {
        let calm = EscalatingAdversary::new(0.0, 0.0, 0.3, Some(0.7), 429).expect("valid");
        let ramp = Schedule::linear(1.0, 5).expect("valid");
        // Intensities at the five steps: 0, .2, .4, .6, .8.
        let m = matched_mean(&ramp, &calm, 5, &[0, 1, 2]).expect("finishes");
        assert!((m - 0.4).abs() < 1e-12, "{m}");
    }

    #[test]
    fn constant_schedule_matches_itself() {
        let a = EscalatingAdversary::new(0.1, 0.3, 0.3, None, 429).expect("valid");
        let c = Schedule::constant(0.35).expect("valid");
        let m = matched_mean(&c, &a, 4, &[3, 4]).expect("finishes");
        assert_eq!(m, 0.35);
    }

    #[test]
    fn always_faulting_policy_is_an_error_not_a_hang() {
        let a = EscalatingAdversary::new(1.0, 0.0, 0.0, None, 429).expect("valid");
        let c = Schedule::constant(0.5).expect("valid");
        assert_eq!(
            matched_mean(&c, &a, 3, &[0]),
            Err(StressError::EpisodeTooLong {
                seed: 0,
                limit: SIMULATION_STEP_LIMIT
            })
        );
    }

    #[test]
    fn bad_inputs_are_errors() {
        let a = EscalatingAdversary::new(0.0, 0.3, 0.3, None, 429).expect("valid");
        let ramp = Schedule::linear(1.0, 5).expect("valid");
        assert_eq!(matched_mean(&ramp, &a, 5, &[]), Err(StressError::NoSeeds));
        assert!(matches!(
            matched_mean(&ramp, &a, 0, &[1]),
            Err(StressError::Zero { .. })
        ));
        assert!(matched_mean(&Schedule::Constant(f64::NAN), &a, 5, &[1]).is_err());
    }

    #[test]
    fn arms_and_doses() {
        let ramp = Schedule::linear(1.0, 5).expect("valid");
        assert_eq!(Arm::Escalating.schedule(&ramp, 0.4), Ok(ramp));
        assert_eq!(
            Arm::Constant.schedule(&ramp, 0.4),
            Ok(Schedule::Constant(0.4))
        );
        assert!(Arm::Constant.schedule(&ramp, 1.2).is_err());
        assert_eq!(DEGRADATION_DOSES, [0.0, 0.25, 0.5, 0.75, 1.0]);
        for d in DEGRADATION_DOSES {
            assert!(Schedule::constant(d).is_ok());
        }
    }
}
