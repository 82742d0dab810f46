//! The crate's one error type.
//!
//! Every constructor validates its parameters and every stateful operation checks its
//! preconditions, returning a [`StressError`] instead of panicking: parameters come from
//! experiment files written by people, so a NaN, a negative rate or a zero span is an input
//! error to report, not a bug to crash on.

use thiserror::Error;

/// Everything that can go wrong in the non-stationarity engine.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum StressError {
    /// A parameter that must be a real number was NaN or infinite.
    #[error("{what} must be a finite number, got {value}")]
    NotFinite {
        /// Which parameter (e.g. `"fault_scale"`).
        what: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A finite parameter lay outside its allowed closed interval.
    #[error("{what} must lie in [{min}, {max}], got {value}")]
    OutOfRange {
        /// Which parameter.
        what: &'static str,
        /// The offending value.
        value: f64,
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// A ramp schedule was given a span of zero successes, which has no slope.
    #[error("a ramp schedule needs a span of at least one success, got 0")]
    ZeroSpan,
    /// A fault status outside the HTTP-like range `100..=599`.
    #[error("fault status must lie in 100..=599, got {0}")]
    InvalidStatus(u16),
    /// A count that must be at least one was zero (e.g. required successes).
    #[error("{what} must be at least 1")]
    Zero {
        /// Which count.
        what: &'static str,
    },
    /// `matched_mean` was given no seeds to average over.
    #[error("the matched mean needs at least one seed")]
    NoSeeds,
    /// `begin_step` was called while the previous step had not been ended.
    #[error("step {step} is still open: end it before beginning the next one")]
    StepAlreadyOpen {
        /// The step that is still open.
        step: u32,
    },
    /// A step-scoped call (`record_realised`, `end_step`) was made with no step open.
    #[error("no step is open")]
    NoOpenStep,
    /// The enforced request quota is used up: the agent asked for a step it could not pay for
    /// ("quota death").
    #[error("request quota exhausted at step {step}")]
    QuotaExhausted {
        /// The step index the refused request would have had.
        step: u32,
    },
    /// The step counter reached `u32::MAX`; step indices would repeat.
    #[error("the step counter is exhausted")]
    StepCounterExhausted,
    /// A simulated episode did not reach its required successes within the step limit
    /// (e.g. a policy that faults every step).
    #[error("simulated episode for seed {seed} did not finish within {limit} steps")]
    EpisodeTooLong {
        /// The seed whose episode ran over.
        seed: u64,
        /// The step limit it hit.
        limit: u32,
    },
}

/// Checks that `value` is finite and lies in `[min, max]`.
pub(crate) fn check_range(
    what: &'static str,
    value: f64,
    min: f64,
    max: f64,
) -> Result<f64, StressError> {
    if !value.is_finite() {
        return Err(StressError::NotFinite { what, value });
    }
    if value < min || value > max {
        return Err(StressError::OutOfRange {
            what,
            value,
            min,
            max,
        });
    }
    Ok(value)
}

/// Maps any `f64` into `[0, 1]`: NaN becomes 0, everything else is clamped.
///
/// Used on the hot path so that even unvalidated values (public fields, deserialised
/// schedules) can never produce an intensity or probability outside the unit interval.
pub(crate) fn unit(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}
