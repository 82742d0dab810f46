//! Small numeric conventions shared by every module (crate-private).

/// Tolerance within which a product like `α·n` is treated as the integer it is meant to be.
///
/// `0.1 * 30.0` is `3.0000000000000004` in `f64`; without snapping, `ceil` would give 4.
pub(crate) const SNAP_TOLERANCE: f64 = 1e-9;

/// Returns the nearest integer if `x` is within [`SNAP_TOLERANCE`] of it, else `x` unchanged.
pub(crate) fn snap(x: f64) -> f64 {
    let r = x.round();
    if (x - r).abs() <= SNAP_TOLERANCE {
        r
    } else {
        x
    }
}

/// Sums in index order, left to right. This order is part of the bit-exact contract.
pub(crate) fn sequential_sum(values: &[f64]) -> f64 {
    values.iter().fold(0.0, |acc, &x| acc + x)
}

/// Sequential sum divided by the count; callers guarantee `values` is non-empty.
pub(crate) fn sequential_mean(values: &[f64]) -> f64 {
    sequential_sum(values) / values.len() as f64
}

/// Converts a non-negative, integer-valued, in-range `f64` to `usize`, saturating.
pub(crate) fn to_index(x: f64) -> usize {
    if x.is_nan() || x <= 0.0 {
        0
    } else {
        // Saturating float-to-int cast is the defined Rust behaviour.
        x as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snap_fixes_float_noise_only() {
        assert_eq!(snap(0.1 * 30.0), 3.0);
        assert_eq!(snap(2.5), 2.5);
        assert_eq!(snap(3.000_001), 3.000_001);
    }
}
