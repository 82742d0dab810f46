//!
//! Why one long file: schedule, policy, quota and trace advance in one step function; the
//! step's order is the engine's semantics. Over a third of it is tests.
// Over 600 lines: the step protocol and the unit tests that pin it (368 lines of code) read together.
//! The agent–environment boundary: schedule, policy, quota and trace tied together.

use serde::{Deserialize, Serialize};

use crate::adapter::{EnvironmentAdapter, Realisation, Realised};
use crate::adversary::AdversaryPolicy;
use crate::error::{StressError, check_range};
use crate::perturbation::Perturbation;
use crate::progress::AgentProgress;
use crate::rng::StepRng;
use crate::schedule::Schedule;

/// Everything that fixes an adversarial episode apart from the policy; it belongs in the run
/// manifest and in experiment files.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WrapperConfig {
    /// The episode seed; step `n` draws from `StepRng::new(seed, n)`.
    pub seed: u64,
    /// The shape of the stress.
    pub schedule: Schedule,
    /// An enforced request quota, if the design has one (B2); `None` means requests are free.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<QuotaConfig>,
}

/// An enforced request quota: every step the wrapper begins consumes one request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuotaConfig {
    /// Requests the agent may make before any squeeze.
    pub limit: u32,
    /// An optional one-shot mid-episode cut to the quota.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub squeeze: Option<Squeeze>,
}

/// A one-shot cut of `by` requests from the quota, triggered by intensity.
///
/// **Trigger:** at the start of the first step whose intensity (computed from progress before
/// that step) is `>= at`, the quota limit drops by `by` (saturating at 0), once per episode.
/// The triggering step is itself charged against the reduced quota. Because the trigger is an
/// intensity threshold, a constant arm held at a level below `at` (e.g. the matched mean of a
/// ramp) never reaches it, while an escalating arm that ramps past `at` does: only the
/// escalating arm gets squeezed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Squeeze {
    /// Intensity threshold in `[0, 1]` that triggers the squeeze.
    pub at: f64,
    /// Requests removed from the quota when it triggers (the paper's `k`).
    pub by: u32,
}

impl QuotaConfig {
    /// The quota limit after the squeeze (the limit itself when there is none).
    pub const fn post_squeeze_limit(&self) -> u32 {
        match self.squeeze {
            Some(s) => self.limit.saturating_sub(s.by),
            None => self.limit,
        }
    }

    /// Spare requests after the squeeze: see [`slack`].
    pub const fn slack(&self, required_successes: u32) -> i64 {
        self.post_squeeze_limit() as i64 - required_successes as i64
    }
}

/// Post-squeeze slack: `(quota − squeeze_by) − required_successes`, with `quota − squeeze_by`
/// saturating at 0. The number of faults an agent can absorb (by retrying) and still finish
/// once the squeeze has landed; negative means it cannot finish even without faults.
/// The paper's B2 runs quota 8, squeeze 3, 5 pages: slack 0; its slack ablation uses quota 10:
/// slack 2.
pub const fn slack(quota: u32, squeeze_by: u32, required_successes: u32) -> i64 {
    quota.saturating_sub(squeeze_by) as i64 - required_successes as i64
}

/// How a step ended, as reported by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
    /// The step made progress (e.g. a page was fetched).
    Success,
    /// The step failed; it cancels one success.
    Fault,
    /// The step neither progressed nor failed (e.g. a metadata call).
    Neutral,
}

/// One step of the adversarial trace: what the metrics consume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceStep {
    /// Step index, from 0.
    pub step: u32,
    /// The schedule's intensity at the start of the step.
    pub intensity: f64,
    /// Effective successes at the start of the step (what the intensity was computed from).
    pub effective_successes: u32,
    /// The policy's intents for this step.
    pub intents: Vec<Perturbation>,
    /// What the adapter reported actually happening.
    pub realised: Vec<Realisation>,
    /// How the step ended; `None` while it is open.
    pub outcome: Option<StepOutcome>,
    /// Whether the quota squeeze fired at this step.
    pub squeezed: bool,
    /// Requests left after this step was charged; `None` without a quota.
    pub quota_remaining: Option<u32>,
}

/// The full record of one adversarial episode, serialisable for the run ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// The episode's configuration (seed, schedule, quota).
    pub config: WrapperConfig,
    /// One entry per step begun.
    pub steps: Vec<TraceStep>,
    /// The step at which the squeeze fired, if it did.
    pub squeezed_at_step: Option<u32>,
    /// The step index of the request refused for lack of quota ("quota death"), if any.
    pub quota_death_at_step: Option<u32>,
    /// Progress at the end of the last completed step.
    pub progress: AgentProgress,
}

impl Trace {
    /// Mean intensity over the trace's steps, summed in step order; `None` for no steps.
    pub fn mean_intensity(&self) -> Option<f64> {
        if self.steps.is_empty() {
            return None;
        }
        let sum = self.steps.iter().fold(0.0, |acc, s| acc + s.intensity);
        Some(sum / self.steps.len() as f64)
    }
}

/// What the caller needs to carry out one step.
#[derive(Debug, Clone)]
pub struct StepPlan {
    /// Step index, from 0.
    pub step: u32,
    /// The step's intensity.
    pub intensity: f64,
    /// The intents to realise, in order.
    pub intents: Vec<Perturbation>,
    /// The step's random stream, positioned after the policy's draws: pass it to the adapter.
    pub rng: StepRng,
}

impl StepPlan {
    /// Whether any intent is a fault (the step cannot succeed).
    pub fn faulted(&self) -> bool {
        self.intents.iter().any(Perturbation::is_fault)
    }
}

/// Ties a [`Schedule`], an [`AdversaryPolicy`] and an optional quota together at the
/// agent–environment boundary, and records every step.
///
/// Per environment step the caller:
/// 1. calls [`begin_step`](Self::begin_step): the wrapper computes the intensity from current
///    progress, applies the squeeze if it triggers, charges one request against the quota
///    (refusing the step with [`StressError::QuotaExhausted`] if none is left), derives
///    `StepRng::new(seed, step)`, asks the policy for intents and opens a trace entry;
/// 2. realises the intents with its [`EnvironmentAdapter`] using the plan's `rng`, and reports
///    what happened with [`record_realised`](Self::record_realised) (or does 1–2 in one call
///    with [`step_with`](Self::step_with));
/// 3. reports the outcome with [`end_step`](Self::end_step), which updates progress.
#[derive(Debug, Clone)]
pub struct AdversarialWrapper<P> {
    /// Decides the intents.
    policy: P,
    /// Progress so far; drives the schedule.
    progress: AgentProgress,
    /// The record, including the configuration.
    trace: Trace,
    /// Current quota limit (after any squeeze) and requests used, when a quota is enforced.
    quota: Option<(u32, u32)>,
    /// Whether a step has been begun and not ended.
    open: bool,
}

impl<P: AdversaryPolicy> AdversarialWrapper<P> {
    /// A wrapper at the start of an episode. Validates the schedule, the squeeze threshold
    /// (finite, in `[0, 1]`) and the policy.
    pub fn new(config: WrapperConfig, policy: P) -> Result<Self, StressError> {
        config.schedule.validate()?;
        if let Some(s) = config.quota.and_then(|q| q.squeeze) {
            check_range("squeeze threshold", s.at, 0.0, 1.0)?;
        }
        policy.validate()?;
        Ok(Self {
            policy,
            progress: AgentProgress::new(),
            quota: config.quota.map(|q| (q.limit, 0)),
            trace: Trace {
                config,
                steps: Vec::new(),
                squeezed_at_step: None,
                quota_death_at_step: None,
                progress: AgentProgress::new(),
            },
            open: false,
        })
    }

    /// Begins the next environment step (see the type's documentation for the order of
    /// operations). Errors: a step is already open; the quota is exhausted (quota death,
    /// recorded in the trace and final: every later call errors too); the step counter is
    /// exhausted.
    pub fn begin_step(&mut self) -> Result<StepPlan, StressError> {
        if self.open {
            return Err(StressError::StepAlreadyOpen {
                step: self.progress.steps.saturating_sub(1),
            });
        }
        if let Some(step) = self.trace.quota_death_at_step {
            return Err(StressError::QuotaExhausted { step });
        }
        let step = self.progress.steps;
        if step == u32::MAX {
            return Err(StressError::StepCounterExhausted);
        }
        let intensity = self.trace.config.schedule.intensity(&self.progress);

        let mut squeezed = false;
        let mut quota_remaining = None;
        if let Some((limit, used)) = self.quota.as_mut() {
            let squeeze = self.trace.config.quota.and_then(|q| q.squeeze);
            if let Some(s) = squeeze
                && self.trace.squeezed_at_step.is_none()
                && intensity >= s.at
            {
                *limit = limit.saturating_sub(s.by);
                self.trace.squeezed_at_step = Some(step);
                squeezed = true;
            }
            if *used >= *limit {
                self.trace.quota_death_at_step = Some(step);
                return Err(StressError::QuotaExhausted { step });
            }
            *used += 1;
            quota_remaining = Some(*limit - *used);
        }

        let mut rng = StepRng::new(self.trace.config.seed, u64::from(step));
        let intents = self.policy.perturb(intensity, &self.progress, &mut rng);
        self.trace.steps.push(TraceStep {
            step,
            intensity,
            effective_successes: self.progress.effective_successes(),
            intents: intents.clone(),
            realised: Vec::new(),
            outcome: None,
            squeezed,
            quota_remaining,
        });
        self.progress.record_step();
        self.open = true;
        Ok(StepPlan {
            step,
            intensity,
            intents,
            rng,
        })
    }

    /// Appends what the adapter did to the open step's trace entry.
    pub fn record_realised(&mut self, applied: &[Realisation]) -> Result<(), StressError> {
        match self.trace.steps.last_mut() {
            Some(entry) if self.open => {
                entry.realised.extend_from_slice(applied);
                Ok(())
            }
            _ => Err(StressError::NoOpenStep),
        }
    }

    /// Begins a step, realises its intents on `observation` with `adapter`, and records what
    /// was applied. The step stays open: report its outcome with [`end_step`](Self::end_step).
    pub fn step_with<A: EnvironmentAdapter>(
        &mut self,
        adapter: &mut A,
        observation: A::Observation,
    ) -> Result<Realised<A::Observation>, StressError> {
        let mut plan = self.begin_step()?;
        let realised = adapter.realise(&plan.intents, observation, &mut plan.rng);
        self.record_realised(&realised.applied)?;
        Ok(realised)
    }

    /// Ends the open step with its outcome: a success or a fault updates progress (a fault
    /// cancels a success), a neutral step does not.
    pub fn end_step(&mut self, outcome: StepOutcome) -> Result<(), StressError> {
        let Some(entry) = self.trace.steps.last_mut().filter(|_| self.open) else {
            return Err(StressError::NoOpenStep);
        };
        entry.outcome = Some(outcome);
        match outcome {
            StepOutcome::Success => self.progress.record_success(),
            StepOutcome::Fault => self.progress.record_fault(),
            StepOutcome::Neutral => {}
        }
        self.trace.progress = self.progress;
        self.open = false;
        Ok(())
    }

    /// Progress so far.
    pub const fn progress(&self) -> AgentProgress {
        self.progress
    }

    /// The intensity the next step would start from (before any squeeze).
    pub fn current_intensity(&self) -> f64 {
        self.trace.config.schedule.intensity(&self.progress)
    }

    /// Requests left under the enforced quota; `None` without one.
    pub fn quota_remaining(&self) -> Option<u32> {
        self.quota.map(|(limit, used)| limit.saturating_sub(used))
    }

    /// The current quota limit (after the squeeze, if it fired); `None` without a quota.
    pub fn quota_limit(&self) -> Option<u32> {
        self.quota.map(|(limit, _)| limit)
    }

    /// Whether an enforced quota has no requests left (the next `begin_step` would be refused).
    pub fn is_quota_exhausted(&self) -> bool {
        self.quota_remaining() == Some(0)
    }

    /// The step whose request was refused for lack of quota ("quota death"), if any.
    pub const fn quota_death_at_step(&self) -> Option<u32> {
        self.trace.quota_death_at_step
    }

    /// The step at which the squeeze fired, if it has.
    pub const fn squeezed_at_step(&self) -> Option<u32> {
        self.trace.squeezed_at_step
    }

    /// Whether a step is open.
    pub const fn is_step_open(&self) -> bool {
        self.open
    }

    /// The policy.
    pub const fn policy(&self) -> &P {
        &self.policy
    }

    /// The configuration.
    pub const fn config(&self) -> &WrapperConfig {
        &self.trace.config
    }

    /// The trace so far.
    pub const fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The trace, consuming the wrapper.
    pub fn into_trace(self) -> Trace {
        self.trace
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adversary::EscalatingAdversary;

    /// A policy that never perturbs, so quota arithmetic is all that is exercised.
    struct Calm;
    impl AdversaryPolicy for Calm {
        fn perturb(&self, _: f64, _: &AgentProgress, _: &mut StepRng) -> Vec<Perturbation> {
            Vec::new()
        }
    }

    fn quota_wrapper(limit: u32, squeeze: Option<Squeeze>) -> AdversarialWrapper<Calm> {
        let config = WrapperConfig {
            seed: 0,
            schedule: Schedule::linear(1.0, 5).expect("valid"),
            quota: Some(QuotaConfig { limit, squeeze }),
        };
        AdversarialWrapper::new(config, Calm).expect("valid")
    }

    fn succeed(w: &mut AdversarialWrapper<Calm>) -> Result<(), StressError> {
        w.begin_step()?;
        w.end_step(StepOutcome::Success)
    }

    #[test]
    fn slack_arithmetic() {
        assert_eq!(slack(8, 3, 5), 0);
        assert_eq!(slack(10, 3, 5), 2);
        assert_eq!(slack(9, 3, 5), 1);
        assert_eq!(slack(12, 3, 5), 4);
        assert_eq!(slack(4, 0, 5), -1);
        assert_eq!(slack(2, 3, 5), -5);
        assert_eq!(slack(u32::MAX, 0, 0), i64::from(u32::MAX));
        let q = QuotaConfig {
            limit: 8,
            squeeze: Some(Squeeze { at: 0.7, by: 3 }),
        };
        assert_eq!(q.post_squeeze_limit(), 5);
        assert_eq!(q.slack(5), 0);
        assert_eq!(
            QuotaConfig {
                limit: 8,
                squeeze: None
            }
            .slack(5),
            3
        );
    }

    #[test]
    fn every_step_consumes_quota_until_death() {
        let mut w = quota_wrapper(3, None);
        assert_eq!(w.quota_remaining(), Some(3));
        for left in [2, 1, 0] {
            w.begin_step().expect("quota left");
            assert_eq!(w.quota_remaining(), Some(left));
            w.end_step(StepOutcome::Neutral).expect("open");
        }
        assert!(w.is_quota_exhausted());
        assert_eq!(
            w.begin_step().map(|p| p.step),
            Err(StressError::QuotaExhausted { step: 3 })
        );
        assert_eq!(w.quota_death_at_step(), Some(3));
        assert_eq!(w.trace().steps.len(), 3);
        // Death is final.
        assert!(w.begin_step().is_err());
    }

    #[test]
    fn squeeze_fires_once_when_intensity_crosses() {
        // Linear 0→1 over 5: intensities 0, .2, .4, .6, .8 at the five steps of a clean run.
        let mut w = quota_wrapper(10, Some(Squeeze { at: 0.7, by: 3 }));
        for _ in 0..4 {
            succeed(&mut w).expect("no squeeze yet");
        }
        assert_eq!(w.squeezed_at_step(), None);
        assert_eq!(w.quota_remaining(), Some(6));
        succeed(&mut w).expect("squeezed step still affordable");
        assert_eq!(w.squeezed_at_step(), Some(4));
        assert_eq!(w.quota_limit(), Some(7));
        // Charged against the reduced quota: 7 − 5 used.
        assert_eq!(w.quota_remaining(), Some(2));
        let flags: Vec<bool> = w.trace().steps.iter().map(|s| s.squeezed).collect();
        assert_eq!(flags, vec![false, false, false, false, true]);
        succeed(&mut w).expect("one-shot: no second squeeze");
        assert_eq!(w.quota_limit(), Some(7));
        assert_eq!(w.quota_remaining(), Some(1));
    }

    #[test]
    fn zero_slack_squeeze_leaves_exactly_enough() {
        // Quota 8, squeeze 3 at 0.7, 5 successes needed, no faults: slack 0, finishes exactly.
        let mut w = quota_wrapper(8, Some(Squeeze { at: 0.7, by: 3 }));
        for _ in 0..5 {
            succeed(&mut w).expect("affordable");
        }
        assert!(w.is_quota_exhausted());
        assert_eq!(w.progress().successes, 5);
    }

    #[test]
    fn squeeze_can_kill_at_the_triggering_step() {
        let config = WrapperConfig {
            seed: 0,
            schedule: Schedule::step(0.0, 1.0, 1).expect("valid"),
            quota: Some(QuotaConfig {
                limit: 4,
                squeeze: Some(Squeeze { at: 0.5, by: 3 }),
            }),
        };
        let mut w = AdversarialWrapper::new(config, Calm).expect("valid");
        w.begin_step().expect("step 0");
        w.end_step(StepOutcome::Fault).expect("open");
        w.begin_step().expect("step 1");
        w.end_step(StepOutcome::Success).expect("open");
        // Two used; effective successes 0 → still calm.
        w.begin_step().expect("step 2");
        w.end_step(StepOutcome::Success).expect("open");
        // Effective successes 1 → intensity 1 → squeeze to 1 < 3 used.
        assert_eq!(
            w.begin_step().map(|p| p.step),
            Err(StressError::QuotaExhausted { step: 3 })
        );
        assert_eq!(w.squeezed_at_step(), Some(3));
        assert_eq!(w.quota_death_at_step(), Some(3));
    }

    #[test]
    fn constant_arm_below_threshold_is_never_squeezed() {
        let config = WrapperConfig {
            seed: 0,
            schedule: Schedule::constant(0.6).expect("valid"),
            quota: Some(QuotaConfig {
                limit: 8,
                squeeze: Some(Squeeze { at: 0.7, by: 3 }),
            }),
        };
        let mut w = AdversarialWrapper::new(config, Calm).expect("valid");
        for _ in 0..8 {
            w.begin_step().expect("quota");
            w.end_step(StepOutcome::Success).expect("open");
        }
        assert_eq!(w.squeezed_at_step(), None);
        assert_eq!(w.quota_limit(), Some(8));
    }

    #[test]
    fn step_protocol_errors() {
        let mut w = quota_wrapper(5, None);
        assert_eq!(
            w.end_step(StepOutcome::Success),
            Err(StressError::NoOpenStep)
        );
        assert_eq!(w.record_realised(&[]), Err(StressError::NoOpenStep));
        w.begin_step().expect("first");
        assert_eq!(
            w.begin_step().map(|p| p.step),
            Err(StressError::StepAlreadyOpen { step: 0 })
        );
        w.end_step(StepOutcome::Success).expect("open");
        assert_eq!(
            w.end_step(StepOutcome::Success),
            Err(StressError::NoOpenStep)
        );
    }

    #[test]
    fn outcomes_drive_progress_and_intensity() {
        let config = WrapperConfig {
            seed: 1,
            schedule: Schedule::linear(1.0, 4).expect("valid"),
            quota: None,
        };
        let mut w = AdversarialWrapper::new(config, Calm).expect("valid");
        let mut seen = Vec::new();
        for outcome in [
            StepOutcome::Success,
            StepOutcome::Success,
            StepOutcome::Neutral,
            StepOutcome::Fault,
            StepOutcome::Success,
        ] {
            seen.push(w.begin_step().expect("no quota").intensity);
            w.end_step(outcome).expect("open");
        }
        assert_eq!(seen, vec![0.0, 0.25, 0.5, 0.5, 0.25]);
        assert_eq!(w.current_intensity(), 0.5);
        assert_eq!(w.quota_remaining(), None);
        assert!(!w.is_quota_exhausted());
        assert_eq!(
            w.progress(),
            AgentProgress {
                successes: 3,
                steps: 5,
                faults: 1
            }
        );
    }

    #[test]
    fn invalid_configs_are_errors() {
        let bad_squeeze = WrapperConfig {
            seed: 0,
            schedule: Schedule::Constant(0.5),
            quota: Some(QuotaConfig {
                limit: 3,
                squeeze: Some(Squeeze {
                    at: f64::NAN,
                    by: 1,
                }),
            }),
        };
        assert!(AdversarialWrapper::new(bad_squeeze, Calm).is_err());
        let bad_schedule = WrapperConfig {
            seed: 0,
            schedule: Schedule::Linear { max: 1.0, span: 0 },
            quota: None,
        };
        assert_eq!(
            AdversarialWrapper::new(bad_schedule, Calm).map(|_| ()),
            Err(StressError::ZeroSpan)
        );
        let bad_policy = EscalatingAdversary {
            fault_base: -1.0,
            fault_scale: 0.3,
            corruption_scale: 0.3,
            distractor_at: None,
            fault_status: 429,
        };
        let ok = WrapperConfig {
            seed: 0,
            schedule: Schedule::Constant(0.5),
            quota: None,
        };
        assert!(AdversarialWrapper::new(ok, bad_policy).is_err());
    }
}
