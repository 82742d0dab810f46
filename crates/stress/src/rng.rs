//! Per-step randomness that a third party can regenerate exactly.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use sha2::{Digest, Sha256};

/// The random stream of one environment step, a pure function of `(seed, step)`.
///
/// "Non-stationary" must not mean "non-reproducible": the same seed yields a bit-identical
/// adversarial sequence, and any single step's draws can be regenerated without replaying the
/// steps before it. The algorithm, precisely enough to re-implement:
///
/// 1. **Key.** Format the seed and the step index as unsigned decimal integers with no
///    padding or sign, joined by a colon: `"{seed}:{step}"` (seed 7, step 3 → the five ASCII
///    bytes `7:3`). Hash those bytes with SHA-256; the 32-byte digest is the key.
/// 2. **Stream.** Use the key as the 256-bit key of ChaCha with 8 rounds (`ChaCha8Rng::from_seed`
///    in `rand_chacha` 0.9): 64-bit block counter starting at 0, 64-bit stream id (nonce) 0,
///    key words read little-endian. Each 64-byte block yields sixteen 32-bit little-endian
///    output words `w0, w1, …`; blocks follow in counter order.
/// 3. **`next_u64`.** Consecutive word pairs, low word first: the k-th call returns
///    `w[2k] | (w[2k+1] << 32)`. (This crate never draws 32-bit values, so pairs never
///    straddle.)
/// 4. **[`uniform`](Self::uniform)** in `[0, 1)`: `(next_u64 >> 11) as f64 * 2^-53`, i.e.
///    the top 53 bits as a dyadic fraction (exact, no rounding).
/// 5. **[`below(n)`](Self::below)** in `0..n`, unbiased, by Lemire's multiply-and-reject:
///    `x = next_u64`, `m = x as u128 * n as u128`, `lo = m mod 2^64`. If `lo < n`, compute
///    `t = (2^64 − n) mod n`; while `lo < t`, draw a fresh `x` and recompute `m`, `lo`.
///    Return `m >> 64`. `below(0)` returns `None` and consumes nothing.
/// 6. **[`shuffle`](Self::shuffle)**: Fisher–Yates from the back: for `i` from `len − 1` down
///    to 1, `j = below(i + 1)`, swap `i` and `j`.
///
/// `rand`'s distributions are deliberately not used: they are not value-stable across minor
/// versions, and these few lines are.
#[derive(Debug, Clone)]
pub struct StepRng {
    /// The ChaCha8 stream keyed by `sha256("{seed}:{step}")`.
    inner: ChaCha8Rng,
}

impl StepRng {
    /// The stream for step `step` of the episode seeded `seed`.
    pub fn new(seed: u64, step: u64) -> Self {
        Self::from_key(&step_key(seed, step))
    }

    /// The stream for an arbitrary 32-byte key (step 2 of the algorithm above).
    pub fn from_key(key: &[u8; 32]) -> Self {
        Self {
            inner: ChaCha8Rng::from_seed(*key),
        }
    }

    /// The next 64 raw bits.
    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// A uniform draw in `[0, 1)` from the top 53 bits of one `next_u64`.
    pub fn uniform(&mut self) -> f64 {
        const SCALE: f64 = 1.0 / (1u64 << 53) as f64;
        (self.next_u64() >> 11) as f64 * SCALE
    }

    /// `true` with probability `p` (one uniform draw, always consumed, compared as
    /// `uniform() < p`). NaN and `p <= 0` never fire; `p >= 1` always does.
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// An unbiased integer in `0..n` by Lemire's multiply-and-reject; `None` when `n == 0`.
    pub fn below(&mut self, n: u64) -> Option<u64> {
        if n == 0 {
            return None;
        }
        let n128 = u128::from(n);
        let mut m = u128::from(self.next_u64()) * n128;
        let mut lo = m as u64;
        if lo < n {
            let t = n.wrapping_neg() % n;
            while lo < t {
                m = u128::from(self.next_u64()) * n128;
                lo = m as u64;
            }
        }
        Some((m >> 64) as u64)
    }

    /// Shuffles `items` in place by Fisher–Yates driven by [`below`](Self::below).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            // `i + 1 >= 2`, so `below` always returns `Some`.
            if let Some(j) = self.below(i as u64 + 1) {
                items.swap(i, j as usize);
            }
        }
    }
}

/// `sha256("{seed}:{step}")`: the key of a step's stream.
pub fn step_key(seed: u64, step: u64) -> [u8; 32] {
    Sha256::digest(format!("{seed}:{step}").as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_sha256_of_seed_colon_step() {
        // sha256("7:3"), computed independently (e.g. `printf 7:3 | sha256sum`).
        let hex: String = step_key(7, 3).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, GOLDEN_KEY_7_3);
    }

    const GOLDEN_KEY_7_3: &str = "111c309fc0cfd2b772a26b9c6f05c0e3b19eaa2ccf302881b9eed7faeab435f0";

    #[test]
    fn same_seed_and_step_same_stream() {
        let mut a = StepRng::new(42, 9);
        let mut b = StepRng::new(42, 9);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn neighbouring_steps_and_seeds_differ() {
        let first = |seed, step| StepRng::new(seed, step).next_u64();
        assert_ne!(first(0, 0), first(0, 1));
        assert_ne!(first(0, 0), first(1, 0));
        // "1:23" and "12:3" are different strings, so no collision by concatenation.
        assert_ne!(first(1, 23), first(12, 3));
    }

    #[test]
    fn uniform_is_top_53_bits() {
        let mut a = StepRng::new(3, 4);
        let mut b = StepRng::new(3, 4);
        for _ in 0..50 {
            let u = a.uniform();
            let x = b.next_u64();
            assert_eq!(u, (x >> 11) as f64 / 9_007_199_254_740_992.0);
            assert!((0.0..1.0).contains(&u));
        }
    }

    #[test]
    fn below_is_in_range_and_covers_it() {
        let mut r = StepRng::new(0, 0);
        let mut seen = [false; 7];
        for _ in 0..500 {
            let x = r.below(7).expect("n > 0");
            assert!(x < 7);
            seen[x as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(r.below(0), None);
        assert_eq!(r.below(1), Some(0));
        assert!(r.below(u64::MAX).is_some_and(|x| x < u64::MAX));
    }

    #[test]
    fn below_consumes_nothing_for_zero() {
        let mut a = StepRng::new(5, 5);
        let mut b = StepRng::new(5, 5);
        assert_eq!(a.below(0), None);
        assert_eq!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut r = StepRng::new(11, 2);
        let mut v: Vec<u32> = (0..20).collect();
        r.shuffle(&mut v);
        let mut sorted = v.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..20).collect::<Vec<_>>());
        assert_ne!(v, sorted, "20 elements shuffled into identity is ~1/20!");
        let mut empty: [u8; 0] = [];
        r.shuffle(&mut empty);
    }
}
