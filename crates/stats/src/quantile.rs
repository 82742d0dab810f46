//! Quantiles and the five-number summary behind a box plot.
//!
//! One definition for every box, whisker and quartile benchaudit prints: Hyndman–Fan type 7
//! (R's default, `numpy.percentile`'s `linear`), linear interpolation between order
//! statistics at position `(n − 1)·p`.

use serde::{Deserialize, Serialize};

use crate::error::{Result, StatsError, check_values};

/// Minimum, quartiles and maximum of a set of values.
///
/// Exists so a spectrum's box and whiskers are numbers stored in JSON, not computed by the
/// figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FiveNumbers {
    /// Minimum.
    pub min: f64,
    /// First quartile.
    pub q1: f64,
    /// Median.
    pub median: f64,
    /// Third quartile.
    pub q3: f64,
    /// Maximum.
    pub max: f64,
}

/// Quantile `p` of **ascending** `sorted` values, type 7. The result is clamped to its two
/// neighbouring order statistics (floating-point interpolation never leaves them).
///
/// # Errors
/// [`StatsError::Empty`], [`StatsError::NonFinite`], and [`StatsError::OutOfRange`] for `p`
/// outside `[0, 1]`.
pub fn quantile(sorted: &[f64], p: f64) -> Result<f64> {
    check_values(sorted, "quantile")?;
    if !(0.0..=1.0).contains(&p) {
        return Err(StatsError::OutOfRange {
            name: "p",
            value: p,
            range: "[0, 1]",
        });
    }
    let last = sorted.len() - 1;
    let h = last as f64 * p;
    let lo = (h.floor() as usize).min(last);
    let hi = (h.ceil() as usize).min(last);
    let (a, b) = (sorted[lo], sorted[hi]);
    Ok((a + (h - lo as f64) * (b - a)).clamp(a.min(b), a.max(b)))
}

/// Minimum, type-7 quartiles and maximum of `values` (any order).
///
/// # Errors
/// [`StatsError::Empty`], [`StatsError::NonFinite`].
pub fn five_numbers(values: &[f64]) -> Result<FiveNumbers> {
    check_values(values, "five-number summary")?;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Ok(FiveNumbers {
        min: sorted[0],
        q1: quantile(&sorted, 0.25)?,
        median: quantile(&sorted, 0.5)?,
        q3: quantile(&sorted, 0.75)?,
        max: sorted[sorted.len() - 1],
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn quartiles_are_type_7() {
        // numpy.percentile([1, 2, 3, 4], [25, 50, 75]) = 1.75, 2.5, 3.25
        let f = five_numbers(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(
            (f.min, f.q1, f.median, f.q3, f.max),
            (1.0, 1.75, 2.5, 3.25, 4.0)
        );
        let f = five_numbers(&[0.5]).unwrap();
        assert_eq!(
            (f.min, f.q1, f.median, f.q3, f.max),
            (0.5, 0.5, 0.5, 0.5, 0.5)
        );
        // Ten values 0, 0.1, …, 0.9: q1 at position 2.25 → 0.225.
        let v: Vec<f64> = (0..10).map(|i| f64::from(i) / 10.0).collect();
        assert!((five_numbers(&v).unwrap().q1 - 0.225).abs() < 1e-12);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(five_numbers(&[]).is_err());
        assert!(quantile(&[1.0, f64::NAN], 0.5).is_err());
        assert!(quantile(&[1.0, 2.0], 1.5).is_err());
        assert_eq!(quantile(&[1.0, 2.0], 1.0).unwrap(), 2.0);
    }
}
