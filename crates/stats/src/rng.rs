//! Seeded, portable random streams.
//!
//! Every random quantity in this crate is a pure function of explicit seeds. The generator is
//! ChaCha8 (`rand_chacha`), whose output for a given `seed_from_u64` seed and `set_stream`
//! stream is stable across `rand_chacha` 0.9/0.10. Integers in `[0, n)` are drawn with our
//! own Lemire multiply-and-reject on `next_u64` rather than `rand`'s distributions, which are
//! not value-stable across versions. All index arithmetic is done in `u64`/`u128`, never in
//! platform-width `usize`, so results are identical on 32- and 64-bit targets.

use std::num::NonZeroU64;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// The generator type used for every stream in this crate.
///
/// Re-exported so callers can hold a stream made by [`stream_rng`] without naming
/// `rand_chacha` themselves.
pub type StreamRng = ChaCha8Rng;

/// Builds the ChaCha8 stream `stream` of `seed`.
///
/// Exists so that "replicate b of a bootstrap with seed s" has exactly one definition:
/// `ChaCha8Rng::seed_from_u64(seed)` followed by `set_stream(stream)`. A stream's values
/// depend only on `(seed, stream)`, which is what makes results independent of the number
/// of threads.
#[must_use]
pub fn stream_rng(seed: u64, stream: u64) -> StreamRng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

/// Draws an integer uniformly from `[0, n)` (Lemire's multiply-and-reject method).
///
/// Exists because `rand`'s range sampling is not value-stable across versions; this is
/// unbiased, portable, and fixed forever: take `x = next_u64()`, form the 128-bit product
/// `m = x · n`; if the low 64 bits are below `2⁶⁴ mod n`, reject and redraw; otherwise return
/// the high 64 bits. Taking `NonZeroU64` makes the empty range unrepresentable.
pub fn uniform_below<R: RngCore + ?Sized>(rng: &mut R, n: NonZeroU64) -> u64 {
    let n = n.get();
    let mut m = u128::from(rng.next_u64()) * u128::from(n);
    // Truncation to the low 64 bits is the point of the method.
    #[allow(clippy::cast_possible_truncation)]
    let mut low = m as u64;
    if low < n {
        let threshold = n.wrapping_neg() % n;
        while low < threshold {
            m = u128::from(rng.next_u64()) * u128::from(n);
            #[allow(clippy::cast_possible_truncation)]
            {
                low = m as u64;
            }
        }
    }
    #[allow(clippy::cast_possible_truncation)]
    let high = (m >> 64) as u64;
    high
}

/// Draws a uniform `f64` in the half-open interval `(0, 1]` with 53 random bits.
///
/// Exists for Box–Muller, which needs a strictly positive uniform to take a logarithm of.
/// The value is `((next_u64() >> 11) + 1) · 2⁻⁵³`, exact and portable.
pub fn unit_open_closed<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    const SCALE: f64 = 1.0 / 9_007_199_254_740_992.0; // 2^-53
    // (x >> 11) + 1 ≤ 2^53, exactly representable in f64.
    #[allow(clippy::cast_precision_loss)]
    let numerator = ((rng.next_u64() >> 11) + 1) as f64;
    numerator * SCALE
}

/// Draws a standard normal variate by Box–Muller (cosine branch only).
///
/// Exists for the Monte-Carlo power study. It uses `ln`, `sqrt` and `cos`, whose last bits
/// may differ between platform math libraries, so it is deliberately kept off the
/// bit-exact paths (bootstrap CIs and permutation p-values never call it).
pub fn standard_normal<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    let u1 = unit_open_closed(rng);
    let u2 = unit_open_closed(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// SplitMix64 finaliser: a fixed bijective mixing of a `u64`.
///
/// Exists to derive well-spread child seeds from (seed, index) pairs.
#[must_use]
pub const fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Derives the child seed number `index` of `seed`.
///
/// Exists so nested seeded procedures (e.g. the bootstrap inside replication `r` of a power
/// study) get their own seeds as a pure, documented function:
/// `splitmix64(seed ^ splitmix64(index))`.
#[must_use]
pub const fn derive_seed(seed: u64, index: u64) -> u64 {
    splitmix64(seed ^ splitmix64(index))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn lemire_stays_in_range_and_covers_it() {
        let mut rng = stream_rng(7, 0);
        let n = NonZeroU64::new(5).unwrap();
        let mut seen = [0u32; 5];
        for _ in 0..5000 {
            let x = uniform_below(&mut rng, n);
            seen[usize::try_from(x).unwrap()] += 1;
        }
        assert!(seen.iter().all(|&c| c > 800 && c < 1200), "{seen:?}");
    }

    #[test]
    fn lemire_with_n_one_is_zero() {
        let mut rng = stream_rng(1, 2);
        assert_eq!(uniform_below(&mut rng, NonZeroU64::MIN), 0);
    }

    #[test]
    fn streams_differ_and_repeat() {
        let a: Vec<u64> = (0..4).map(|_| stream_rng(3, 0).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(stream_rng(3, 0).next_u64(), stream_rng(3, 1).next_u64());
        assert_ne!(stream_rng(3, 0).next_u64(), stream_rng(4, 0).next_u64());
    }

    #[test]
    fn unit_is_in_open_closed_interval() {
        let mut rng = stream_rng(9, 9);
        for _ in 0..10_000 {
            let u = unit_open_closed(&mut rng);
            assert!(u > 0.0 && u <= 1.0);
        }
    }
}
