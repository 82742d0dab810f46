//! The non-stationarity engine: seeded, success-driven adversarial stress for agent
//! environments (paper §4.5 and appendix A.11).
//!
//! A benchmark that injects faults at a fixed rate asks only "can the agent cope with this
//! much adversity?". This crate asks whether the *shape* of the adversity matters: pressure
//! that escalates as the agent makes progress, against a constant arm held at the same mean.
//! To make that a controlled experiment the stress has to be reproducible to the bit, so the
//! engine is pure and deterministic (no IO, no clock, no global randomness) and knows nothing
//! about any domain. It decouples:
//!
//! - [`AgentProgress`]: successes, steps and faults so far; a fault cancels a success.
//! - [`Schedule`]: progress → intensity in `[0, 1]` (constant, linear, step, plateau), driven
//!   by effective successes, not elapsed steps.
//! - [`AdversaryPolicy`]: intensity → [`Perturbation`] intents; [`EscalatingAdversary`] is the
//!   reference (fault probability `base + scale·i`, duplicate rate `scale·i`, a distractor
//!   past a threshold).
//! - [`StepRng`]: each step's randomness is ChaCha8 keyed by `sha256("{seed}:{step}")`, so
//!   the same seed yields a bit-identical adversarial sequence.
//! - [`EnvironmentAdapter`]: the only domain-coupled piece, implemented elsewhere (e.g. a
//!   trade-data API turns a fault intent into HTTP 429 and a distractor into a totals row).
//! - [`AdversarialWrapper`]: ties them at the agent–environment boundary, enforces an optional
//!   request quota with a one-shot squeeze, and writes the per-step [`Trace`] metrics consume.
//! - [`design`]: the matched-mean A/B arms ([`matched_mean`]) and the degradation doses.
//!
//! # Example
//!
//! An always-retry agent under a ramp, and the constant level that matches it:
//!
//! ```
//! use benchaudit_stress::{
//!     AdversarialWrapper, EscalatingAdversary, StepOutcome, Schedule, WrapperConfig, matched_mean,
//! };
//!
//! # fn main() -> Result<(), benchaudit_stress::StressError> {
//! let ramp = Schedule::linear(1.0, 5)?; // 0 → 1 over 5 effective successes
//! let adversary = EscalatingAdversary::new(0.0, 0.3, 0.3, Some(0.7), 429)?;
//! let config = WrapperConfig { seed: 7, schedule: ramp, quota: None };
//! let mut wrapper = AdversarialWrapper::new(config, adversary)?;
//!
//! while wrapper.progress().successes < 5 {
//!     let plan = wrapper.begin_step()?;
//!     // A real harness would realise `plan.intents` with its EnvironmentAdapter here.
//!     wrapper.end_step(if plan.faulted() { StepOutcome::Fault } else { StepOutcome::Success })?;
//! }
//! let trace = wrapper.into_trace();
//! assert!(trace.steps.len() >= 5);
//! assert_eq!(trace.steps[0].intensity, 0.0);
//!
//! // Replaying the seed reproduces the trace exactly.
//! let again = benchaudit_stress::simulate_always_retry(7, &ramp, &adversary, 5)?;
//! assert_eq!(again, trace);
//!
//! // The constant arm's level is computed, not hard-coded.
//! let seeds: Vec<u64> = (0..20).collect();
//! let level = matched_mean(&ramp, &adversary, 5, &seeds)?;
//! assert!(level > 0.0 && level < 0.7);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

pub mod adapter;
pub mod adversary;
pub mod design;
mod error;
pub mod perturbation;
pub mod progress;
pub mod rng;
pub mod schedule;
pub mod wrapper;

pub use adapter::{EnvironmentAdapter, Realisation, Realised};
pub use adversary::{AdversaryPolicy, EscalatingAdversary};
pub use design::{
    Arm, DEGRADATION_DOSES, SIMULATION_STEP_LIMIT, matched_mean, simulate_always_retry,
};
pub use error::StressError;
pub use perturbation::{CorruptionKind, Perturbation};
pub use progress::AgentProgress;
pub use rng::{StepRng, step_key};
pub use schedule::Schedule;
pub use wrapper::{
    AdversarialWrapper, QuotaConfig, Squeeze, StepOutcome, StepPlan, Trace, TraceStep,
    WrapperConfig, slack,
};
