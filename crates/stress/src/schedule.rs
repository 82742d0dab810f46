//! The *shape* of the non-stationarity: agent progress → intensity in `[0, 1]`.

use serde::{Deserialize, Serialize};

use crate::error::{StressError, check_range, unit};
use crate::progress::AgentProgress;

/// Maps an [`AgentProgress`] snapshot to an adversary intensity in `[0, 1]`.
///
/// Every schedule reads only `e = progress.effective_successes()` (successes minus faults,
/// saturating at 0) and never elapsed steps, so pressure rises with what the agent has achieved.
/// The formulas, with `e` and `span` converted to `f64` and evaluated left to right in IEEE-754
/// double precision, the result then clamped to `[0, 1]` (NaN → 0):
///
/// | variant | intensity |
/// |---|---|
/// | `Constant(level)` | `level` |
/// | `Linear { max, span }` | `max * e / span`: rises by `max / span` per effective success and keeps rising past `span` until it is clamped at 1 |
/// | `Step { before, after, at }` | `before` while `e < at`, `after` once `e >= at` |
/// | `Plateau { max, span }` | `max * min(e, span) / span`: the same ramp, then held at `max` |
///
/// A linear ramp from 0 to 1 over 4 successes reads 0, 0.25, 0.5, 0.75, 1, 1 at
/// `e` = 0, 1, 2, 3, 4, 5. `Linear` and `Plateau` differ only when `max < 1`: past `span`,
/// `Linear { max: 0.5, span: 4 }` keeps climbing (0.625 at `e = 5`) while the plateau holds 0.5.
///
/// The variants are public so that experiment files can name them; use the checked
/// constructors or [`validate`](Self::validate) to reject levels outside `[0, 1]`, NaN and
/// zero spans. [`intensity`](Self::intensity) never panics even on an unvalidated schedule
/// (a zero span is treated as a ramp already completed: intensity `max`).
///
/// Serialised externally tagged in snake case, e.g. `{"constant":0.6}` or
/// `{"linear":{"max":1.0,"span":5}}` (in TOML: `schedule = { linear = { max = 1.0, span = 5 } }`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// The same intensity throughout: the constant arm of the A/B design and the degradation
    /// doses.
    Constant(f64),
    /// A ramp from 0 rising by `max / span` per effective success, clamped at 1.
    Linear {
        /// Intensity reached after `span` effective successes.
        max: f64,
        /// Effective successes it takes to reach `max`.
        span: u32,
    },
    /// A single jump once the agent has made enough progress.
    Step {
        /// Intensity while `e < at`.
        before: f64,
        /// Intensity once `e >= at`.
        after: f64,
        /// Effective successes at which the jump happens.
        at: u32,
    },
    /// A ramp from 0 to `max` over `span` effective successes, then held at `max`.
    Plateau {
        /// Intensity reached and then held.
        max: f64,
        /// Effective successes it takes to reach `max`.
        span: u32,
    },
}

impl Schedule {
    /// A constant schedule; `level` must be finite and in `[0, 1]`.
    pub fn constant(level: f64) -> Result<Self, StressError> {
        let s = Self::Constant(level);
        s.validate()?;
        Ok(s)
    }

    /// A linear ramp; `max` in `[0, 1]`, `span >= 1`.
    pub fn linear(max: f64, span: u32) -> Result<Self, StressError> {
        let s = Self::Linear { max, span };
        s.validate()?;
        Ok(s)
    }

    /// A step; `before` and `after` in `[0, 1]`.
    pub fn step(before: f64, after: f64, at: u32) -> Result<Self, StressError> {
        let s = Self::Step { before, after, at };
        s.validate()?;
        Ok(s)
    }

    /// A ramp then plateau; `max` in `[0, 1]`, `span >= 1`.
    pub fn plateau(max: f64, span: u32) -> Result<Self, StressError> {
        let s = Self::Plateau { max, span };
        s.validate()?;
        Ok(s)
    }

    /// Checks every level is finite and in `[0, 1]` and every span is at least 1.
    pub fn validate(&self) -> Result<(), StressError> {
        match *self {
            Self::Constant(level) => check_range("constant level", level, 0.0, 1.0).map(drop),
            Self::Linear { max, span } | Self::Plateau { max, span } => {
                check_range("ramp max", max, 0.0, 1.0)?;
                if span == 0 {
                    return Err(StressError::ZeroSpan);
                }
                Ok(())
            }
            Self::Step { before, after, .. } => {
                check_range("step level before", before, 0.0, 1.0)?;
                check_range("step level after", after, 0.0, 1.0).map(drop)
            }
        }
    }

    /// The intensity at this point of the episode, always in `[0, 1]` (see the table above).
    pub fn intensity(&self, progress: &AgentProgress) -> f64 {
        let e = progress.effective_successes();
        let raw = match *self {
            Self::Constant(level) => level,
            Self::Linear { max, span } => ramp(max, e, span),
            Self::Plateau { max, span } => ramp(max, e.min(span), span),
            Self::Step { before, after, at } => {
                if e >= at {
                    after
                } else {
                    before
                }
            }
        };
        unit(raw)
    }

    /// The schedule's name as it appears in its serialised form (`"constant"`, `"linear"`, …).
    pub const fn kind(&self) -> &'static str {
        match self {
            Self::Constant(_) => "constant",
            Self::Linear { .. } => "linear",
            Self::Step { .. } => "step",
            Self::Plateau { .. } => "plateau",
        }
    }
}

/// `max * e / span`, with a zero span read as a completed ramp.
fn ramp(max: f64, e: u32, span: u32) -> f64 {
    if span == 0 {
        return max;
    }
    max * f64::from(e) / f64::from(span)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(successes: u32, faults: u32) -> AgentProgress {
        AgentProgress {
            successes,
            steps: successes + faults,
            faults,
        }
    }

    fn series(s: &Schedule, upto: u32) -> Vec<f64> {
        (0..=upto).map(|e| s.intensity(&at(e, 0))).collect()
    }

    #[test]
    fn linear_zero_to_one_over_four() {
        let s = Schedule::linear(1.0, 4).expect("valid");
        assert_eq!(series(&s, 5), vec![0.0, 0.25, 0.5, 0.75, 1.0, 1.0]);
    }

    #[test]
    fn linear_keeps_climbing_past_span_but_plateau_holds() {
        let lin = Schedule::linear(0.5, 4).expect("valid");
        let pla = Schedule::plateau(0.5, 4).expect("valid");
        assert_eq!(
            series(&lin, 9),
            vec![0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0, 1.0]
        );
        assert_eq!(
            series(&pla, 6),
            vec![0.0, 0.125, 0.25, 0.375, 0.5, 0.5, 0.5]
        );
    }

    #[test]
    fn step_jumps_at_threshold() {
        let s = Schedule::step(0.1, 0.9, 3).expect("valid");
        assert_eq!(series(&s, 4), vec![0.1, 0.1, 0.1, 0.9, 0.9]);
    }

    #[test]
    fn constant_ignores_progress() {
        let s = Schedule::constant(0.6).expect("valid");
        assert_eq!(series(&s, 3), vec![0.6; 4]);
    }

    #[test]
    fn a_fault_cancels_a_success_in_the_schedule() {
        let s = Schedule::linear(1.0, 4).expect("valid");
        assert_eq!(s.intensity(&at(3, 0)), 0.75);
        assert_eq!(s.intensity(&at(3, 1)), 0.5);
        assert_eq!(s.intensity(&at(1, 5)), 0.0);
    }

    #[test]
    fn driven_by_successes_not_steps() {
        let s = Schedule::linear(1.0, 4).expect("valid");
        let idle = AgentProgress {
            successes: 1,
            steps: 1000,
            faults: 0,
        };
        assert_eq!(s.intensity(&idle), 0.25);
    }

    #[test]
    fn invalid_parameters_are_errors() {
        assert!(matches!(
            Schedule::constant(f64::NAN),
            Err(StressError::NotFinite { .. })
        ));
        assert!(matches!(
            Schedule::constant(1.5),
            Err(StressError::OutOfRange { .. })
        ));
        assert!(matches!(
            Schedule::linear(-0.1, 3),
            Err(StressError::OutOfRange { .. })
        ));
        assert_eq!(Schedule::plateau(1.0, 0), Err(StressError::ZeroSpan));
        assert!(Schedule::step(0.0, f64::INFINITY, 1).is_err());
    }

    #[test]
    fn unvalidated_schedules_still_clamp() {
        let p = at(2, 0);
        assert_eq!(Schedule::Constant(f64::NAN).intensity(&p), 0.0);
        assert_eq!(Schedule::Constant(-3.0).intensity(&p), 0.0);
        assert_eq!(Schedule::Constant(7.0).intensity(&p), 1.0);
        assert_eq!(Schedule::Linear { max: 0.4, span: 0 }.intensity(&p), 0.4);
        assert_eq!(
            Schedule::Linear {
                max: f64::INFINITY,
                span: 3
            }
            .intensity(&at(0, 0)),
            0.0
        );
    }

    #[test]
    fn serde_shape_is_stable() {
        let s = Schedule::linear(1.0, 5).expect("valid");
        let json = serde_json::to_string(&s).expect("serialise");
        assert_eq!(json, r#"{"linear":{"max":1.0,"span":5}}"#);
        assert_eq!(
            serde_json::to_string(&Schedule::Constant(0.6)).expect("serialise"),
            r#"{"constant":0.6}"#
        );
        let back: Schedule = serde_json::from_str(&json).expect("deserialise");
        assert_eq!(back, s);
        assert_eq!(s.kind(), "linear");
    }
}
