//! Deterministic keys and values of the benchmarks.
//!
//! A key is the zero-padded decimal of its index (`min(key_size − 1, 20)`
//! digits), one marker byte — `'0'` for the keys the fill benchmarks write,
//! `'1'` for keys that are never written — and, for keys longer than 21 bytes,
//! `'.'` filler up to the key size (like db_bench, whose long keys are padded
//! after the distinguishing bytes: comparisons stop early, hashing still covers
//! the whole key). Key `i` with marker `'1'` sorts right after the written key
//! `i` and before the written key `i + 1`, so missing keys interleave with
//! existing ones across every file of the database: a lookup of a missing key
//! cannot be answered by key ranges (fence pointers, file boundaries) and must
//! go through the filters.
//!
//! The counters `mergerandom` merges into have keys of their own: `'m'`, the
//! zero-padded decimal of the counter's index (as many digits as a written
//! key) and the same filler ([`KeyGen::fill_counter`]). They are neither
//! written nor missing keys, and sort after all of them.

use rand::{rngs::SmallRng, RngCore, SeedableRng};

/// Marker byte of keys the fill benchmarks write.
const EXISTING: u8 = b'0';
/// Marker byte of keys that are never written.
const MISSING: u8 = b'1';
/// Most decimal digits of an index (`u64::MAX` has 20).
const MAX_DIGITS: usize = 20;
/// Byte that pads long keys after the marker.
const FILLER: u8 = b'.';
/// First byte of the counter keys of `mergerandom` (above every digit, so
/// the counters sort after the written and the missing keys).
const COUNTER_PREFIX: u8 = b'm';

/// Number of decimal digits of `n` (1 for 0).
fn decimal_digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Writes the zero-padded decimal of `n` into `buf` (its low digits).
fn decimal_into(buf: &mut [u8], mut n: u64) {
    for b in buf.iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// Generates the fixed-size keys of a benchmark run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyGen {
    key_size: usize,
    /// Grouped layout: prefix bytes and keys per prefix (see the module docs).
    group: Option<(usize, u64)>,
}

impl KeyGen {
    /// A generator of `key_size`-byte keys for indices `0..num`.
    ///
    /// Fails when `key_size` cannot hold the decimal of `num - 1` plus the marker byte.
    pub fn new(key_size: usize, num: u64) -> Result<Self, String> {
        let digits = decimal_digits(num.saturating_sub(1));
        if key_size < digits + 1 {
            return Err(format!(
                "--key-size {key_size} is too small for --num {num}: keys need at least {} bytes \
                 ({digits} decimal digits and one marker byte)",
                digits + 1
            ));
        }
        Ok(KeyGen {
            key_size,
            group: None,
        })
    }

    /// A generator of keys in groups of `per_prefix` sharing their first
    /// `prefix_len` bytes (see the module docs). Fails when the prefix
    /// cannot hold the decimal of the last group plus the marker, or the
    /// rest of the key the decimal of `per_prefix − 1`.
    pub fn grouped(
        key_size: usize,
        num: u64,
        prefix_len: usize,
        per_prefix: u64,
    ) -> Result<Self, String> {
        let per_prefix = per_prefix.max(1);
        let groups = num.div_ceil(per_prefix);
        let gd = decimal_digits(groups.saturating_sub(1));
        let sd = decimal_digits(per_prefix - 1);
        if prefix_len < gd + 1 || prefix_len - 1 > MAX_DIGITS || key_size < prefix_len + sd {
            return Err(format!(
                "--key-size {key_size} with a {prefix_len}-byte prefix cannot hold --num {num}                  in groups of {per_prefix}: the prefix needs {} bytes ({gd} digits and the                  marker, at most {}), the rest {sd}",
                gd + 1,
                MAX_DIGITS + 1
            ));
        }
        Ok(KeyGen {
            key_size,
            group: Some((prefix_len, per_prefix)),
        })
    }

    /// The bytes of a key's prefix under the grouped layout (`None`: plain keys).
    pub fn prefix_len(&self) -> Option<usize> {
        self.group.map(|(p, _)| p)
    }

    /// Size of every key in bytes.
    pub fn key_size(&self) -> usize {
        self.key_size
    }

    /// Writes the key of `index` into `buf` (which must be `key_size` bytes long):
    /// an existing key, or when `missing` is true a key that is never written.
    pub fn fill(&self, buf: &mut [u8], index: u64, missing: bool) {
        debug_assert_eq!(buf.len(), self.key_size);
        let end = match self.group {
            Some((p, _)) => p + (buf.len() - p).min(MAX_DIGITS),
            None => (buf.len() - 1).min(MAX_DIGITS) + 1,
        };
        buf[end..].fill(FILLER);
        self.refill(buf, index, missing);
    }

    /// [`KeyGen::fill`] for a buffer that already holds a key of this
    /// generator: rewrites only the index and the marker (the filler of long
    /// keys is the same for every key).
    pub fn refill(&self, buf: &mut [u8], index: u64, missing: bool) {
        debug_assert_eq!(buf.len(), self.key_size);
        if let Some((p, per)) = self.group {
            buf[p - 1] = if missing { MISSING } else { EXISTING };
            decimal_into(&mut buf[..p - 1], index / per);
            let sd = (buf.len() - p).min(MAX_DIGITS);
            decimal_into(&mut buf[p..p + sd], index % per);
            return;
        }
        let digits = (buf.len() - 1).min(MAX_DIGITS);
        buf[digits] = if missing { MISSING } else { EXISTING };
        let mut n = index;
        for b in buf[..digits].iter_mut().rev() {
            *b = b'0' + (n % 10) as u8;
            n /= 10;
        }
    }

    /// The key of `index` as a new vector; see [`KeyGen::fill`].
    pub fn key(&self, index: u64, missing: bool) -> Vec<u8> {
        let mut k = vec![0; self.key_size];
        self.fill(&mut k, index, missing);
        k
    }

    /// Writes the key of `mergerandom`'s counter `index` into `buf` (which
    /// must be `key_size` bytes long): `'m'`, then the index in as many
    /// decimal digits as [`KeyGen::fill`] writes, then the filler of long
    /// keys. It is never a key the fills write or a missing key, and sorts
    /// after all of them.
    pub fn fill_counter(&self, buf: &mut [u8], index: u64) {
        debug_assert_eq!(buf.len(), self.key_size);
        let digits = (buf.len() - 1).min(MAX_DIGITS);
        buf[0] = COUNTER_PREFIX;
        buf[digits + 1..].fill(FILLER);
        let mut n = index;
        for b in buf[1..=digits].iter_mut().rev() {
            *b = b'0' + (n % 10) as u8;
            n /= 10;
        }
    }

    /// The key of counter `index` as a new vector; see [`KeyGen::fill_counter`].
    pub fn counter_key(&self, index: u64) -> Vec<u8> {
        let mut k = vec![0; self.key_size];
        self.fill_counter(&mut k, index);
        k
    }
}

/// Pseudo-random values: slices of a seeded random pool, chosen by key index,
/// so the value of a key is the same in every fill and can be checked.
#[derive(Clone, Debug)]
pub struct ValueGen {
    pool: Vec<u8>,
    size: usize,
    /// Value offsets are multiples of this (1, or the piece size of
    /// compressible values, so each value starts on a piece).
    align: usize,
}

impl ValueGen {
    /// Extra pool bytes beyond one value, from which value offsets are drawn.
    const SPREAD: usize = 1 << 20;

    /// Values of `size` bytes drawn from a pool seeded with `seed`.
    pub fn new(size: usize, seed: u64) -> Self {
        let mut pool = vec![0u8; size + Self::SPREAD];
        SmallRng::seed_from_u64(seed ^ 0x5eed_7a1e_0000_0001).fill_bytes(&mut pool);
        ValueGen {
            pool,
            size,
            align: 1,
        }
    }

    /// Values of `size` bytes that compress to about `ratio` of their size
    /// (db_bench's `--compression_ratio`): the pool is made of 100-byte
    /// pieces, each a random head of `ratio · 100` bytes repeated to fill
    /// the piece, and every value starts on a piece (as db_bench's values of
    /// 100 bytes do). A ratio of 1 or more gives [`ValueGen::new`]'s
    /// incompressible values.
    pub fn with_compression_ratio(size: usize, seed: u64, ratio: f64) -> Self {
        let mut g = Self::new(size, seed);
        if ratio < 1.0 {
            const PIECE: usize = 100;
            #[expect(clippy::cast_sign_loss, reason = "clamped at zero before the cast")]
            let head = ((ratio.max(0.0) * PIECE as f64).round() as usize).max(1);
            for piece in g.pool.chunks_mut(PIECE) {
                // Double the periodic prefix until the piece is full.
                let mut filled = head.min(piece.len());
                while filled < piece.len() {
                    let n = filled.min(piece.len() - filled);
                    piece.copy_within(0..n, filled);
                    filled += n;
                }
            }
            g.align = PIECE;
        }
        g
    }

    /// Size of every value in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The value written for the key of `index`.
    pub fn value(&self, index: u64) -> &[u8] {
        let offset = (index.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as usize % Self::SPREAD;
        let offset = offset - offset % self.align;
        &self.pool[offset..offset + self.size]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn keys_have_fixed_size_and_decimal_form() {
        let g = KeyGen::new(16, 1_000_000).unwrap();
        assert_eq!(g.key(123, false), b"0000000000001230");
        assert_eq!(g.key(123, true), b"0000000000001231");
        assert_eq!(g.key(0, false).len(), 16);
        assert_eq!(g.key(999_999, true).len(), 16);
        let g24 = KeyGen::new(24, 1_000_000).unwrap();
        for i in [0, 7, 999_999] {
            assert_eq!(g24.key(i, false).len(), 24);
            assert_eq!(g24.key(i, true).len(), 24);
        }
        assert_eq!(g24.key(123, true), b"000000000000000001231...");
        let g512 = KeyGen::new(512, u64::MAX).unwrap();
        let k = g512.key(u64::MAX, false);
        assert_eq!(&k[..21], b"184467440737095516150");
        assert!(k[21..].iter().all(|&b| b == b'.') && k.len() == 512);
    }

    #[test]
    fn refill_of_a_filled_buffer_gives_the_same_keys() {
        for size in [8, 16, 512] {
            let g = KeyGen::new(size, 100_000).unwrap();
            let mut buf = g.key(7, false);
            for (i, missing) in [(0, true), (99_999, false), (123, true), (5, false)] {
                g.refill(&mut buf, i, missing);
                assert_eq!(buf, g.key(i, missing), "size {size} index {i}");
            }
        }
    }

    #[test]
    fn key_size_must_hold_the_largest_index() {
        assert!(KeyGen::new(7, 1_000_000).is_ok()); // 6 digits + marker
        assert!(KeyGen::new(6, 1_000_000).is_err());
        assert!(KeyGen::new(7, 1_000_001).is_err());
        assert!(KeyGen::new(2, 10).is_ok());
        assert!(KeyGen::new(1, 1).is_err());
    }

    #[test]
    fn existing_and_missing_keys_never_collide_and_interleave() {
        for size in [8, 512] {
            let g = KeyGen::new(size, 5000).unwrap();
            let existing: Vec<Vec<u8>> = (0..5000).map(|i| g.key(i, false)).collect();
            let missing: Vec<Vec<u8>> = (0..5000).map(|i| g.key(i, true)).collect();
            let set: HashSet<&Vec<u8>> = existing.iter().collect();
            assert_eq!(set.len(), 5000);
            assert!(missing.iter().all(|k| !set.contains(k)));
            // Sorted order alternates existing, missing, existing, missing, ...
            for i in 0..5000 {
                assert!(existing[i] < missing[i]);
                if i + 1 < 5000 {
                    assert!(missing[i] < existing[i + 1]);
                }
            }
        }
    }

    #[test]
    fn counter_keys_are_their_own_and_sort_last() {
        for (size, num) in [(2, 10), (7, 1_000_000), (16, 5000), (512, 5000)] {
            let g = KeyGen::new(size, num).unwrap();
            let last = num - 1;
            let mut counters: Vec<Vec<u8>> = [0, 1, num / 2, last]
                .iter()
                .map(|&i| g.counter_key(i))
                .collect();
            let sorted = counters.clone();
            counters.sort();
            assert_eq!(counters, sorted, "counters sort by index");
            for c in &counters {
                assert_eq!(c.len(), size);
                assert_eq!(c[0], b'm');
                for i in [0, 1, num / 2, last] {
                    for missing in [false, true] {
                        assert!(*c > g.key(i, missing), "size {size} index {i}");
                    }
                }
            }
            let distinct: HashSet<Vec<u8>> = (0..num.min(5000)).map(|i| g.counter_key(i)).collect();
            assert_eq!(distinct.len() as u64, num.min(5000));
        }
        let g = KeyGen::new(16, 1000).unwrap();
        assert_eq!(g.counter_key(123), b"m000000000000123");
        assert_eq!(
            KeyGen::new(24, 10).unwrap().counter_key(7),
            b"m00000000000000000007..."
        );
    }

    #[test]
    fn values_are_deterministic_and_sized() {
        let a = ValueGen::new(100, 301);
        let b = ValueGen::new(100, 301);
        assert_eq!(a.size(), 100);
        for i in [0, 1, 2, 99_999, u64::MAX] {
            assert_eq!(a.value(i).len(), 100);
            assert_eq!(a.value(i), b.value(i));
        }
        assert_ne!(a.value(1), a.value(2));
        assert_eq!(ValueGen::new(0, 1).value(5).len(), 0);
    }

    #[test]
    fn compressible_values_repeat_their_random_head() {
        let half = ValueGen::with_compression_ratio(100, 301, 0.5);
        let tenth = ValueGen::with_compression_ratio(250, 301, 0.1);
        for i in 0..1000 {
            let v = half.value(i);
            assert_eq!(v[50..], v[..50], "value {i}");
            let w = tenth.value(i);
            assert_eq!(w[10..100], w[..90], "value {i}");
        }
        let distinct: HashSet<&[u8]> = (0..1000).map(|i| half.value(i)).collect();
        assert!(distinct.len() > 900);
        // Ratio 1 keeps the incompressible values.
        let one = ValueGen::with_compression_ratio(100, 301, 1.0);
        let plain = ValueGen::new(100, 301);
        assert!((0..100).all(|i| one.value(i) == plain.value(i)));
    }

    #[test]
    fn grouped_keys_share_prefixes_and_missing_prefixes_interleave() {
        let g = KeyGen::grouped(16, 1_000_000, 8, 10).unwrap();
        assert_eq!(g.prefix_len(), Some(8));
        let k = |i, m| String::from_utf8(g.key(i, m)).unwrap();
        assert_eq!(k(0, false), "0000000000000000");
        assert_eq!(k(123_456, false), "0012345000000006");
        assert_eq!(&k(123_456, false)[..8], "00123450");
        assert_eq!(&k(123_459, false)[..8], "00123450");
        assert_eq!(&k(123_456, true)[..8], "00123451");
        assert!(k(123_459, false) < k(123_456, true) && k(123_456, true) < k(123_460, false));
        let mut buf = g.key(5, false);
        g.refill(&mut buf, 999_999, true);
        assert_eq!(buf, g.key(999_999, true));
        assert!(KeyGen::grouped(16, 1_000_000_000, 8, 10).is_err());
        assert!(KeyGen::grouped(8, 1000, 7, 100).is_err());
    }
}
