//! The source of every random decision the generator makes.
//!
//! The generator never touches an RNG directly: it asks a [`Choices`] for "a number below n"
//! or "yes with probability p". Two implementations share all generation code:
//! * [`SeededChoices`] — a PCG-64 stream seeded from a `u64` (`rand_pcg` and `rand_core` are
//!   pinned to exact versions in the workspace so a seed keeps meaning the same program);
//! * [`UnstructuredChoices`] — raw fuzzer bytes through `arbitrary::Unstructured`, so
//!   libFuzzer's mutations steer the generator. When the bytes run out every answer becomes
//!   0 / "no", and the generator is written so that option 0 is always the smallest one: an
//!   exhausted input still yields a small valid program.

use arbitrary::Unstructured;
use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// A stream of decisions.
pub trait Choices {
    /// A number uniformly in `0..n`; `n == 0` is treated as 1 (answer 0).
    fn below(&mut self, n: u64) -> u64;

    /// `true` with probability `p` (clamped to `[0, 1]`).
    fn chance(&mut self, p: f64) -> bool;

    /// A number uniformly in `lo..=hi` (`lo` if `hi < lo`).
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo) as u64 + 1;
        lo + self.below(span) as i64
    }

    /// `true` with probability `percent / 100`.
    fn percent(&mut self, percent: u8) -> bool {
        self.chance(percent as f64 / 100.0)
    }

    /// An index into `weights`, each picked with probability proportional to its weight.
    /// All-zero (or empty) weights answer 0.
    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| w as u64).sum();
        if total == 0 {
            return 0;
        }
        let mut x = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if x < w as u64 {
                return i;
            }
            x -= w as u64;
        }
        weights.len() - 1
    }
}

/// Decisions drawn from a seeded PCG-64 generator.
pub struct SeededChoices {
    rng: Pcg64,
}

impl SeededChoices {
    pub fn new(seed: u64) -> SeededChoices {
        SeededChoices {
            rng: Pcg64::seed_from_u64(seed),
        }
    }
}

impl Choices for SeededChoices {
    fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        // Multiply-shift: maps 64 random bits onto 0..n with negligible bias.
        ((self.rng.next_u64() as u128 * n as u128) >> 64) as u64
    }

    fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        if p >= 1.0 {
            return true;
        }
        // 53 random bits as a float in [0, 1).
        ((self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

/// Decisions read from fuzzer bytes.
pub struct UnstructuredChoices<'a, 'b> {
    u: &'a mut Unstructured<'b>,
}

impl<'a, 'b> UnstructuredChoices<'a, 'b> {
    pub fn new(u: &'a mut Unstructured<'b>) -> UnstructuredChoices<'a, 'b> {
        UnstructuredChoices { u }
    }
}

impl Choices for UnstructuredChoices<'_, '_> {
    fn below(&mut self, n: u64) -> u64 {
        if n <= 1 || self.u.is_empty() {
            return 0;
        }
        self.u.int_in_range(0..=n - 1).unwrap_or(0)
    }

    fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 || self.u.is_empty() {
            return false;
        }
        if p >= 1.0 {
            return true;
        }
        let x: u16 = self.u.arbitrary().unwrap_or(u16::MAX);
        (x as f64) < p * 65536.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_stream_is_reproducible_and_in_range() {
        let mut a = SeededChoices::new(42);
        let mut b = SeededChoices::new(42);
        let xs: Vec<u64> = (0..200).map(|i| a.below(i % 17 + 1)).collect();
        let ys: Vec<u64> = (0..200).map(|i| b.below(i % 17 + 1)).collect();
        assert_eq!(xs, ys);
        assert!(xs.iter().enumerate().all(|(i, &x)| x < (i as u64 % 17) + 1));
        let mut c = SeededChoices::new(43);
        let zs: Vec<u64> = (0..200).map(|i| c.below(i % 17 + 1)).collect();
        assert_ne!(xs, zs);
    }

    #[test]
    fn seeded_weights_follow_probabilities() {
        let mut c = SeededChoices::new(7);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            counts[c.weighted(&[1, 0, 3])] += 1;
        }
        assert_eq!(counts[1], 0);
        // Expected 7500 / 22500.
        assert!((6_900..8_100).contains(&counts[0]), "{counts:?}");
        let yes = (0..10_000).filter(|_| c.chance(0.25)).count();
        assert!((2_200..2_800).contains(&yes), "{yes}");
        assert!((0..100).all(|_| (-3..=5).contains(&c.range(-3, 5))));
    }

    #[test]
    fn exhausted_bytes_answer_zero_and_no() {
        let data = [0xffu8; 4];
        let mut u = Unstructured::new(&data);
        let mut c = UnstructuredChoices::new(&mut u);
        for _ in 0..10 {
            c.below(1000);
        }
        assert_eq!(c.below(1000), 0);
        assert!(!c.chance(0.99));
        assert_eq!(
            c.weighted(&[0, 5, 5]),
            1,
            "the first non-zero weight when exhausted"
        );
    }
}
