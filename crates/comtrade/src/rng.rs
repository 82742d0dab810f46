//! Counter-based randomness: every draw in ComtradeBench comes from a ChaCha8 stream keyed by
//! `SHA-256("comtrade:{task_id}:{seed}")`, positioned by a stream number, so any record or any
//! request's injections can be recomputed in O(1) without replaying the episode.
//!
//! The algorithm is written down in the generator card (`benchaudit tasks --card`) so a third
//! party can re-implement it:
//!
//! * key = SHA-256 of the UTF-8 string `comtrade:{task_id}:{seed}` (seed in decimal);
//! * stream 0 holds the canonical records, record `i` from 32-bit word `8·i`;
//!   stream `2³² + r` belongs to the r-th valid request (1-based); stream `2³³` to the fault plan;
//! * a draw is ChaCha8's `next_u64` (rand_chacha's word order: two little-endian u32 words);
//! * `below(n)` is Lemire's multiply-and-reject on `next_u64`;
//! * shuffles are Fisher–Yates from the last index down, `j = below(i + 1)`.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use sha2::{Digest, Sha256};

/// Stream of the canonical records.
pub(crate) const RECORD_STREAM: u64 = 0;
/// 32-bit words reserved per record on the record stream.
pub(crate) const RECORD_WORDS: u128 = 8;
/// Stream offset of per-request injection streams.
pub(crate) const REQUEST_STREAM_BASE: u64 = 1 << 32;
/// Stream of the episode's fault plan.
pub(crate) const FAULT_PLAN_STREAM: u64 = 1 << 33;

/// The 32-byte key of a (task, seed): every stream of that pair is derived from it.
pub fn task_key(task_id: &str, seed: u64) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(format!("comtrade:{task_id}:{seed}").as_bytes());
    hasher.finalize().into()
}

/// A positioned ChaCha8 stream with value-stable helpers (no `rand` distributions, which are
/// not value-stable across versions).
pub struct Stream(ChaCha8Rng);

impl Stream {
    /// Opens stream `stream` of `key` at its beginning.
    pub fn new(key: &[u8; 32], stream: u64) -> Self {
        let mut rng = ChaCha8Rng::from_seed(*key);
        rng.set_stream(stream);
        Stream(rng)
    }

    /// Moves to 32-bit word `word` of the stream unless already there (seeking regenerates
    /// the block buffer, so sequential reads skip it).
    pub fn seek_word(&mut self, word: u128) {
        if self.0.get_word_pos() != word {
            self.0.set_word_pos(word);
        }
    }

    /// Fills `out` with the next `out.len() / 4` words of the stream, little-endian: eight
    /// words read this way are the same bits as four `next_u64` draws.
    pub fn fill(&mut self, out: &mut [u8]) {
        self.0.fill_bytes(out);
    }

    /// The next raw 64-bit draw.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// An unbiased integer in `0..n` (Lemire); `n = 0` yields 0. See [`below_first`] for the
    /// case that needs no further draw.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }

    /// A uniform float in `[0, 1)` from the top 53 bits of one draw.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Fisher–Yates shuffle, last index first.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// `below(n)` when its first draw `x` decides it — always but with odds `n / 2⁶⁴`, when the
/// low half of `x·n` falls under `n` and Lemire's method may have to draw again (`None`).
pub fn below_first(x: u64, n: u64) -> Option<u64> {
    let m = u128::from(x) * u128::from(n);
    ((m as u64) >= n).then_some((m >> 64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let key = task_key("T1_single_page", 0);
        let mut s = Stream::new(&key, 0);
        let mut seen = [false; 7];
        for _ in 0..200 {
            let v = s.below(7) as usize;
            assert!(v < 7);
            seen[v] = true;
        }
        assert!(seen.iter().all(|&b| b));
        assert_eq!(s.below(0), 0);
    }

    #[test]
    fn below_first_agrees_with_below_when_it_decides() {
        let key = task_key("T2_multi_page", 4);
        let (mut a, mut b) = (Stream::new(&key, 0), Stream::new(&key, 0));
        for n in [1u64, 7, 10_000, 50_000, 1_000_000] {
            for _ in 0..50 {
                let x = a.next_u64();
                assert_eq!(below_first(x, n), Some(b.below(n)));
            }
        }
        // Low half under n: the first draw does not decide.
        assert_eq!(below_first(0, 10), None);
        assert_eq!(below_first(u64::MAX, 1), Some(0));
    }

    #[test]
    fn streams_differ_and_repeat() {
        let key = task_key("T3_duplicates", 1);
        let a: Vec<u64> = (0..4).map(|_| Stream::new(&key, 5).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(
            Stream::new(&key, 5).next_u64(),
            Stream::new(&key, 6).next_u64()
        );
    }
}
