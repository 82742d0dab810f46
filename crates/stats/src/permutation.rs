//! Two-sided sign-flip permutation test for paired differences.
//!
//! Under the null of no effect each paired difference Δᵢ is symmetric about zero, so flipping
//! its sign is as likely as not. The p-value is the share of sign patterns whose sum is at
//! least as far from zero as the observed sum.
//!
//! * `n ≤ 20` ([`EXACT_MAX_N`]): all `2ⁿ` patterns are enumerated exactly (meet-in-the-middle:
//!   all sign sums of the first `⌊n/2⌋` differences are combined with the sorted sign sums
//!   of the rest), `p = count / 2ⁿ`; the identity pattern is among them, so `p ≥ 2⁻ⁿ`.
//! * `n > 20`: `M` random patterns from the seeded stream
//!   [`stream_rng(seed, PERMUTATION_STREAM)`](crate::rng::stream_rng); pattern `j` takes
//!   `⌈n/64⌉` consecutive `next_u64` words, bit `i mod 64` (least significant first) of word
//!   `⌊i/64⌋` set meaning "flip Δᵢ"; `p = (count + 1) / (M + 1)`.
//!
//! Tolerance: a pattern with signs `sᵢ` counts as at least as extreme when
//! `|Σ sᵢΔᵢ| ≥ |ΣΔᵢ| − 1e-9 · Σ|Δᵢ|` ([`SIGN_FLIP_TOLERANCE`]). Comparing sums is the same as
//! comparing means (same n). The relative slack makes patterns that are *mathematically* as
//! extreme as the observed one count even when float rounding puts their computed sum a few
//! ulps below it (e.g. `0.1 + 0.2` vs `0.3`); it is far below any difference that matters in
//! scores on a `[0, 1]` scale. When every Δᵢ is 0 all patterns count and `p = 1`.

use serde::{Deserialize, Serialize};

use crate::error::{Result, check_draws, check_values};
use crate::numeric::sequential_sum;
use crate::rng::stream_rng;
use rand_core::RngCore;

/// Largest n for which the sign-flip p-value is computed by exact enumeration.
///
/// Exists because 2²⁰ ≈ 10⁶ patterns is still instant (meet-in-the-middle needs only
/// 2 · 2¹⁰ half-sums), while larger n switches to seeded Monte Carlo.
pub const EXACT_MAX_N: usize = 20;

/// Default Monte-Carlo sample count M for `n > 20`.
///
/// Exists to fix the default precision: at p ≈ 0.05 the Monte-Carlo standard error is
/// about 0.0007.
pub const DEFAULT_PERMUTATION_SAMPLES: usize = 100_000;

/// Relative tolerance of the "at least as extreme" comparison (see the module docs).
pub const SIGN_FLIP_TOLERANCE: f64 = 1e-9;

/// ChaCha8 stream used for Monte-Carlo sign patterns.
///
/// Exists to keep the permutation draws disjoint from bootstrap replicate streams
/// (which use streams `0..B`, `B ≤ 10⁷`) even when both share a seed.
pub const PERMUTATION_STREAM: u64 = u64::MAX;

/// How a sign-flip p-value was obtained.
///
/// Exists so a report can say whether p is exact or estimated, and from how many draws.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum SignFlipMethod {
    /// All `2ⁿ` sign patterns were enumerated.
    Exact {
        /// Number of patterns, `2ⁿ`.
        patterns: u64,
    },
    /// Seeded Monte Carlo with `(count + 1) / (samples + 1)`.
    MonteCarlo {
        /// Number of random sign patterns M.
        samples: usize,
        /// Seed of the pattern stream.
        seed: u64,
    },
}

/// Result of a sign-flip permutation test.
///
/// Exists to return the p-value together with the count behind it and the method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignFlipTest {
    /// Two-sided p-value.
    pub p_value: f64,
    /// Number of patterns (exact) or samples (Monte Carlo) at least as extreme.
    pub extreme: u64,
    /// Exact enumeration or Monte Carlo.
    pub method: SignFlipMethod,
}

/// Two-sided sign-flip permutation test of paired differences (see module docs for the rule).
///
/// Exists as the non-parametric companion of the paired bootstrap CI in the pre-registered
/// decision rule. `samples` and `seed` are used only when `n > 20`.
///
/// # Errors
/// [`StatsError::Empty`](crate::StatsError::Empty), `NonFinite` or `Overflow` for bad
/// differences; `CountOutOfRange` if `n > 20` and `samples` is 0 or above 10⁷.
pub fn sign_flip_test(deltas: &[f64], samples: usize, seed: u64) -> Result<SignFlipTest> {
    check_values(deltas, "sign-flip differences")?;
    let observed = sequential_sum(deltas).abs();
    let scale = deltas.iter().fold(0.0, |acc: f64, d| acc + d.abs());
    let threshold = observed - SIGN_FLIP_TOLERANCE * scale;
    if deltas.len() <= EXACT_MAX_N {
        Ok(exact(deltas, threshold))
    } else {
        check_draws("permutation samples", samples)?;
        Ok(monte_carlo(deltas, threshold, samples, seed))
    }
}

fn half_sums(part: &[f64]) -> Vec<f64> {
    (0u32..(1u32 << part.len()))
        .map(|mask| {
            part.iter().enumerate().fold(0.0, |acc, (i, &d)| {
                if (mask >> i) & 1 == 1 {
                    acc - d
                } else {
                    acc + d
                }
            })
        })
        .collect()
}

fn exact(deltas: &[f64], threshold: f64) -> SignFlipTest {
    let patterns = 1u64 << deltas.len();
    let extreme = if threshold <= 0.0 {
        patterns
    } else {
        let (left, right) = deltas.split_at(deltas.len() / 2);
        let left = half_sums(left);
        let mut right = half_sums(right);
        right.sort_by(f64::total_cmp);
        // `l + r` is non-decreasing in r, so both predicates partition the sorted sums.
        left.iter()
            .map(|&l| {
                let at_least = right.len() - right.partition_point(|&r| l + r < threshold);
                let at_most = right.partition_point(|&r| l + r <= -threshold);
                (at_least + at_most) as u64
            })
            .sum()
    };
    SignFlipTest {
        p_value: extreme as f64 / patterns as f64,
        extreme,
        method: SignFlipMethod::Exact { patterns },
    }
}

fn monte_carlo(deltas: &[f64], threshold: f64, samples: usize, seed: u64) -> SignFlipTest {
    let mut rng = stream_rng(seed, PERMUTATION_STREAM);
    let mut extreme = 0u64;
    for _ in 0..samples {
        let mut word = 0u64;
        let mut sum = 0.0;
        for (i, &d) in deltas.iter().enumerate() {
            if i % 64 == 0 {
                word = rng.next_u64();
            }
            // Branch-free negation: XOR of the sign bit is exactly `-d` when the bit is set.
            let flip = ((word >> (i % 64)) & 1) << 63;
            sum += f64::from_bits(d.to_bits() ^ flip);
        }
        if sum.abs() >= threshold {
            extreme += 1;
        }
    }
    SignFlipTest {
        p_value: (extreme + 1) as f64 / (samples as f64 + 1.0),
        extreme,
        method: SignFlipMethod::MonteCarlo { samples, seed },
    }
}
