//! The standard Bloom filter: `k` probes spread over one bit array. Also the
//! storage of the filter units, which are standard Bloom filters laid end to
//! end over one word array.
//!
//! Bit `i` of a unit is bit `i % 64` of its word `i / 64`; words are stored
//! little-endian, so this is also bit `i % 8` of byte `i / 8` (the
//! version-1 byte order).

use super::scheme::Positions;

/// Applies `k` positions of a generator to unit (or line) `u` of a filter.
pub(crate) trait BitOp {
    /// Checks (or sets) the `k` next positions of `pos` in unit `u`; returns
    /// false as soon as a checked bit is clear.
    fn apply<P: Positions>(&mut self, u: usize, k: u32, pos: &mut P) -> bool;
}

/// Tests bits of units of `wpu` words.
pub(crate) struct Check<'a> {
    pub words: &'a [u64],
    pub wpu: usize,
}

impl BitOp for Check<'_> {
    #[inline]
    fn apply<P: Positions>(&mut self, u: usize, k: u32, pos: &mut P) -> bool {
        let unit = &self.words[u * self.wpu..(u + 1) * self.wpu];
        let mut missing = 0u64;
        for _ in 0..k {
            let p = pos.next_pos();
            missing |= !unit[(p >> 6) as usize] & (1 << (p & 63));
        }
        missing == 0
    }
}

/// Sets bits of units of `wpu` words.
pub(crate) struct Set<'a> {
    pub words: &'a mut [u64],
    pub wpu: usize,
}

impl BitOp for Set<'_> {
    #[inline]
    fn apply<P: Positions>(&mut self, u: usize, k: u32, pos: &mut P) -> bool {
        let unit = &mut self.words[u * self.wpu..(u + 1) * self.wpu];
        for _ in 0..k {
            let p = pos.next_pos();
            unit[(p >> 6) as usize] |= 1 << (p & 63);
        }
        true
    }
}

/// Bits of a standard Bloom filter (or of one unit) for `n` keys at `b` bits
/// per key: `⌈n·b⌉` rounded up to a multiple of 64, at least 64.
pub fn unit_bits_for(n: usize, bits_per_key: f64) -> u64 {
    let bits = (n as f64 * bits_per_key).ceil();
    #[expect(
        clippy::cast_sign_loss,
        reason = "the count is checked finite and positive before the cast"
    )]
    let bits = if bits.is_finite() && bits > 0.0 {
        bits as u64
    } else {
        0
    };
    bits.max(64).div_ceil(64) * 64
}
