//! The single error type of the crate.
//!
//! Every public function validates its inputs and returns [`StatsError`] instead of
//! panicking, so a malformed run set (an empty arm, a NaN reward, a typo in α) turns into a
//! readable report error rather than a crashed audit.

/// Why a statistic could not be computed from the given inputs.
///
/// Exists so callers (the CLI, report writers) can tell the user which input was bad;
/// the variants carry enough context to print a useful message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StatsError {
    /// A statistic was asked of zero observations.
    #[error("{what}: no observations")]
    Empty {
        /// Which input was empty.
        what: &'static str,
    },
    /// An observation was NaN or infinite.
    #[error("{what}: value at index {index} is not finite ({value})")]
    NonFinite {
        /// Which input held the value.
        what: &'static str,
        /// Position of the first offending value.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// Values are so large that sums over them could overflow `f64`.
    #[error("{what}: values too large in magnitude, sums would overflow f64")]
    Overflow {
        /// Which input was too large.
        what: &'static str,
    },
    /// A real-valued parameter (α, level, τ, effect, …) was outside its valid range or NaN.
    #[error("{name} = {value} is outside its valid range {range}")]
    OutOfRange {
        /// Parameter name.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// Human-readable description of the valid range.
        range: &'static str,
    },
    /// A count parameter (resamples, replications, samples) was outside its valid range.
    #[error("{name} = {value} is outside its valid range {range}")]
    CountOutOfRange {
        /// Parameter name.
        name: &'static str,
        /// The rejected value.
        value: u64,
        /// Human-readable description of the valid range.
        range: &'static str,
    },
    /// Two inputs that must be paired element-by-element have different lengths.
    #[error("paired inputs have different lengths ({left} vs {right})")]
    LengthMismatch {
        /// Length of the first input.
        left: usize,
        /// Length of the second input.
        right: usize,
    },
    /// More successes than trials were given to a rate interval.
    #[error("{successes} successes exceed {trials} trials")]
    CountExceedsTrials {
        /// Number of successes.
        successes: u64,
        /// Number of trials.
        trials: u64,
    },
    /// The same dose appeared twice in a degradation curve.
    #[error("dose {dose} appears more than once")]
    DuplicateDose {
        /// The repeated dose.
        dose: f64,
    },
    /// All values are identical, so a variance decomposition is undefined.
    #[error("{what}: all values are identical, total variation is zero")]
    NoVariation {
        /// Which input had no variation.
        what: &'static str,
    },
}

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, StatsError>;

/// Largest number of bootstrap replicates or Monte-Carlo samples accepted.
///
/// Exists so a typo (e.g. `resamples = 2_000_000_000`) fails fast instead of trying to
/// allocate many gigabytes; 10⁷ replicates is far beyond any use in a report.
pub const MAX_DRAWS: u64 = 10_000_000;

/// Rejects empty input, non-finite values and magnitudes whose n-fold sums could overflow.
///
/// The overflow bound (`n · max|x|` finite) guarantees every bootstrap or sign-flip sum over
/// the data stays finite, so downstream results are always finite numbers.
pub(crate) fn check_values(values: &[f64], what: &'static str) -> Result<()> {
    if values.is_empty() {
        return Err(StatsError::Empty { what });
    }
    let mut max_abs = 0.0_f64;
    for (index, &value) in values.iter().enumerate() {
        if !value.is_finite() {
            return Err(StatsError::NonFinite { what, index, value });
        }
        max_abs = max_abs.max(value.abs());
    }
    // `len as f64` is exact for any realistic length and only used as a bound.
    if !(max_abs * values.len() as f64).is_finite() {
        return Err(StatsError::Overflow { what });
    }
    Ok(())
}

/// Checks a confidence level lies strictly between 0 and 1.
pub(crate) fn check_level(level: f64) -> Result<()> {
    if level > 0.0 && level < 1.0 {
        Ok(())
    } else {
        Err(StatsError::OutOfRange {
            name: "level",
            value: level,
            range: "(0, 1)",
        })
    }
}

/// Checks a replicate / sample count lies in `1..=MAX_DRAWS`.
pub(crate) fn check_draws(name: &'static str, count: usize) -> Result<()> {
    let value = u64::try_from(count).unwrap_or(u64::MAX);
    if (1..=MAX_DRAWS).contains(&value) {
        Ok(())
    } else {
        Err(StatsError::CountOutOfRange {
            name,
            value,
            range: "1..=10_000_000",
        })
    }
}
