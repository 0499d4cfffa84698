//! The Ribbon filter (Dillinger & Walzer, "Ribbon filter: practically smaller
//! than Bloom and Xor", 2021), standard Ribbon with 64-bit coefficient rows,
//! built from the digests a file's builder stored and probed with the lookup's
//! one digest.
//!
//! A key's digest `h1` is remixed with the filter's seed into one 64-bit value
//! `x` (`KeyRow::new`), which gives
//!
//! * the start slot `s = ⌊x · (m − 63) / 2^64⌋` of `m` slots,
//! * the coefficient row `c`, 64 bits whose bit `t` stands for slot `s + t`,
//!   bit 0 forced to 1,
//! * the fingerprint: the `r` low bits of `x`.
//!
//! The filter stores a solution `S` (`r` bits per slot) with
//! `⊕_{t : c_t = 1} S[s + t] = fingerprint` for every key; a query recomputes
//! the XOR and compares, so a key added is always found and another key
//! matches with probability `2^-r`. The solution is kept *interleaved
//! column-major* (the paper's ICML): slots in blocks of 64, block `b` holding
//! `r` words, word `b·r + j` has bit `i` = result bit `j` of slot `64·b + i`.
//! A query (`query.rs`) reads up to `2r` words of two neighbouring blocks,
//! four columns at a time, and stops at the first group that differs; a
//! row-major solution (the `r` bits of each slot together) would instead XOR
//! up to 64 slots' bits, one per set coefficient.
//!
//! Sizing: `m = ⌈n (1 + ε(n))⌉ + 64` rounded up to a multiple of 64
//! ([`epsilon_for`]: 4% at 10K keys to 10% at 1M), `r = ⌊b / (1 + ε(n))⌋`.
//! Building (`build.rs`) bands the rows on the fly (Gaussian elimination into
//! an upper-triangular band, one row per slot at most), then back-substitutes.
//! Banding fails when a row reduces to zero with a nonzero fingerprint; the
//! builder then retries with the next seed, growing `m` after
//! [`TRIES_PER_SIZE`] failed seeds.

pub(crate) mod build;
pub(crate) mod query;
pub mod wide;

/// Width of a coefficient row, in slots.
pub const W: u64 = 64;

/// Slots added to `n · (1 + ε)` before rounding up to a multiple of 64:
/// small sets need relatively more room (their load fluctuates more).
pub const EXTRA_SLOTS: u64 = 64;

/// Seeds tried at one size before the band grows.
pub const TRIES_PER_SIZE: u32 = 2;

/// Seeds tried in all (the seed is one header byte).
pub const MAX_SEEDS: u32 = 256;

/// Most result bits (the fingerprint is a `u64`).
pub const MAX_RESULT_BITS: u32 = 64;

/// Keys of the file [`crate::FilterOptions::probes_per_unit`] reports the
/// result bits of (a file's own `r` depends on its key count).
pub const NOMINAL_KEYS: usize = 1_000_000;

/// Slot overhead `ε` for `n` keys: `m ≈ n · (1 + ε)` (see [`slots_for`]).
///
/// With 64-bit rows a band needs more room the more keys it holds
/// (pivots are pushed right as in linear probing, and a key is lost when
/// pushed past its 64-slot window). Measured first-seed banding success
/// (`banding_success_by_epsilon`, 8 to 40 sets each): 10K keys 80% at
/// ε = 0.04, 100K 85% at 0.07, 300K 75% at 0.08 / 85% at 0.10, 1M 62% at
/// 0.09 / 75% at 0.10 / 88% at 0.12, while at ε = 0.05 1M keys never band.
/// So `ε = 0.04 + 0.03 · log10(n / 10⁴)` (0.04 below 10K keys, where
/// [`EXTRA_SLOTS`] adds room too; 0.10 at 1M): a seed bands in about 3 tries
/// out of 4, a failed one costs one more banding, and [`grown`] adds 1.6%
/// after two failures.
pub fn epsilon_for(n: usize) -> f64 {
    let decades = (n.max(1) as f64 / 1e4).log10().max(0.0);
    (0.04 + 0.03 * decades).min(0.25)
}

/// Result bits for `bits_per_key` in a file of `n` keys:
/// `⌊b / (1 + ε(n))⌋` ([`epsilon_for`]), clamped to `1..=`[`MAX_RESULT_BITS`],
/// so that `r` bits per slot over `n (1 + ε)` slots stay within the budget:
/// the bits per key are rounded down to a multiple of `1 + ε` (at least one
/// result bit).
#[expect(
    clippy::cast_sign_loss,
    reason = "`as` saturates a negative or NaN count to 0, which the clamp raises to 1"
)]
pub fn result_bits_for(bits_per_key: f64, n: usize) -> u32 {
    let r = (bits_per_key / (1.0 + epsilon_for(n)) + 1e-9).floor();
    (r as u32).clamp(1, MAX_RESULT_BITS)
}

/// Slots for `n` keys at overhead `epsilon`: `⌈n (1 + ε)⌉ +`
/// [`EXTRA_SLOTS`], rounded up to a multiple of 64 (at least 64).
#[expect(
    clippy::cast_sign_loss,
    reason = "the count is checked finite and non-negative before the cast"
)]
pub fn slots_for(n: usize, epsilon: f64) -> u64 {
    let want = (n as f64 * (1.0 + epsilon.max(0.0))).ceil();
    let base = if want.is_finite() && want >= 0.0 {
        want as u64
    } else {
        u64::MAX / 2
    };
    base.saturating_add(EXTRA_SLOTS).div_ceil(W).max(1) * W
}

/// The band's next size after [`TRIES_PER_SIZE`] failed seeds: 1/64 more
/// plus 64 slots, a multiple of 64.
pub fn grown(slots: u64) -> u64 {
    (slots + slots / 64).div_ceil(W) * W + W
}

/// The 64-bit value of seed `seed` that remixes a digest.
#[inline]
fn seed_word(seed: u8) -> u64 {
    (u64::from(seed) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Multiplier deriving the coefficient row (odd).
const COEFF_MIX: u64 = 0xd6e8_feb8_6659_fd93;

/// A key's row of the linear system: start slot, coefficients, fingerprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeyRow {
    /// First slot the row covers.
    pub start: u64,
    /// Coefficients of slots `start..start + 64` (bit 0 always set).
    pub coeff: u64,
    /// The `r`-bit fingerprint (result).
    pub fp: u64,
}

impl KeyRow {
    /// The row of digest `h1` in a filter of `slots` slots, `r` result bits
    /// and seed `seed` (`slots` a multiple of 64, at least 64).
    #[inline(always)]
    pub fn new(h1: u64, seed: u8, slots: u64, r: u32) -> KeyRow {
        let x = super::hash::fmix64(h1 ^ seed_word(seed));
        let starts = slots - (W - 1);
        let start = ((u128::from(x) * u128::from(starts)) >> 64) as u64;
        let c = (x ^ (x >> 29)).wrapping_mul(COEFF_MIX);
        let coeff = (c ^ (c >> 32)) | 1;
        KeyRow {
            start,
            coeff,
            fp: x & result_mask(r),
        }
    }
}

/// The low `r` bits set.
#[inline(always)]
pub fn result_mask(r: u32) -> u64 {
    if r >= 64 {
        u64::MAX
    } else {
        (1u64 << r) - 1
    }
}

#[cfg(test)]
mod tests;
