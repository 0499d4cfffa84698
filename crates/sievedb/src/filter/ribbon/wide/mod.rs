//! The wide Ribbon filter: homogeneous Ribbon (Dillinger & Walzer 2021,
//! layout id 7, what [`crate::FilterLayout::Ribbon`] writes) with 128-bit
//! coefficient rows and fractional result bits per slot, built from the
//! stored digests and probed with the lookup's one digest remixed with the
//! seed, as the 64-bit variant ([`super`], layout id 4). Files of its
//! standard predecessor (layout id 5: fingerprints, seed retries) decode and
//! answer unchanged.
//!
//! Two changes make it smaller than layout 4 at the same FPR:
//!
//! * **128-bit rows.** A row covers slots `s .. s + 128`, so a band needs far
//!   less room to hold every key: [`epsilon_for`] (measured, see there).
//! * **Fractional result bits.** The solution is interleaved column-major in
//!   blocks of 64 slots, and the first `u` blocks keep `r + 1` columns, the
//!   others `r`: with `u = ⌊B · q / 256⌋` of `B` blocks, the solution costs
//!   `r + q/256` bits per slot, so the bits per key are any value, not a
//!   multiple of `1 + ε`. A key whose row lies in the first `u` blocks
//!   (start block `b` with `b + 2 < u`) is checked on `r + 1` bits, the
//!   others on `r`: FPR `f · 2^-(r+1) + (1 − f) · 2^-r`, `f` the fraction of
//!   start slots below `64 · (u − 2)` ([`crate::filter::theory::ribbon_wide_fpr`]).
//!   Every row is banded with `r + 1` fingerprint bits and all `r + 1`
//!   columns are back-substituted over every slot; the last column is stored
//!   for the first `u` blocks only, which are all the slots an `r + 1`-bit key
//!   reads, so no key added is ever missed.
//!
//! Row of digest `h1` under seed `σ`: `x = fmix64(h1 ^ ((σ + 1) · φ))`,
//! start `⌊x · (m − 127) / 2^64⌋`, coefficients from two odd multipliers of
//! `x` (bit 0 forced to 1); the standard variant's fingerprint is the low
//! `r + 1` bits of `x`, the homogeneous one's 0.
//!
//! The standard variant's band, grown after failed seeds, kept the bits per
//! key: `(r, q)` were recomputed for the larger band (`build::solve_within`),
//! so a filter never spent more than it was given, at a slightly higher FPR
//! (which [`crate::filter::theory::ribbon_wide_fpr`] of the stored `r`,
//! slots and upper blocks states exactly).
//!
//! Measured (`scripts/filter-layouts.sh`, 1M keys, release, BENCHMARKS.md
//! "Filter layouts"): at 7.2 bits per key the FPR is 0.817% (theory
//! 0.818%), Bloom-10's 0.819%; layout 4 needed 7.70 bits. FPR within 1% of
//! theory from 2 to 11.3 bits per key in fractional steps and within 4.2%
//! up to 16 (20M absent probes each: 460 false positives at 16 bits, ±5%).
//!
//! **Homogeneous, not standard.** The standard variant checks each key's
//! row parity against a fingerprint, and banding fails when a row reduces to
//! zero with a nonzero fingerprint; at this module's ε its first seed bands
//! only 2 times in 6 at 1M keys (1/6 at 3%, 6/6 at 5%), so a build bands
//! about 2.5 times. The homogeneous variant sets every fingerprint to 0, so
//! a row that reduces to zero is implied by the others: it bands once, never
//! fails, and its free slots get pseudo-random bits, which make an absent
//! key's parities random. Its FPR is `2^-r` only statistically (a locally
//! overloaded band lets more absent keys through), so it needs the same ε:
//! measured (`homogeneous_fpr_by_epsilon`, r = 7, 4M absent probes, one key
//! set each) 1M keys at 3.5%: 1.001 × 2^-r, at 2.5%: 1.85×, at 2%: 6.5×;
//! 100K keys at 2.5%: 1.000×, at 2%: 1.02×, at 1.5%: 3.97×. Same memory and
//! FPR as the standard variant, one banding instead of ~2.5.

pub(crate) mod build;
pub(crate) mod query;

use super::{result_mask, seed_word, COEFF_MIX};

/// Width of a coefficient row, in slots.
pub const WIDTH: u64 = 128;

/// Slots per block of the interleaved solution (one word per column).
pub const BLOCK: u64 = 64;

/// Slots added to `n · (1 + ε)` before rounding up to a multiple of 64.
pub const EXTRA_SLOTS: u64 = 128;

/// Most base result bits `r` (keys in upper blocks use `r + 1 ≤ 64`).
pub const MAX_RESULT_BITS: u32 = 63;

/// Second multiplier deriving the high half of the coefficient row (odd).
const COEFF_MIX_HI: u64 = 0x94d0_49bb_1331_11eb;

/// Slot overhead `ε` for `n` keys with 128-bit rows.
///
/// Measured first-seed banding success (`wide_banding_success_by_epsilon`,
/// release): 10K keys 19/20 at every ε from 0.005 to 0.03; 100K keys 0/20 at
/// 0.005, 1/20 at 0.01, 6/20 at 0.015, 15/20 at 0.02, 17/20 at 0.03; 1M keys
/// 0/6 at 0.005 to 0.02, 1/6 at 0.03, 2/6 at 0.035 and 0.04, 6/6 at 0.05.
/// So `ε = 0.015 + 0.01 · log10(n / 10⁴)` (1.5% up to 10K keys, 3.5% at
/// 1M): the largest ε that still meets Bloom-10's FPR at 7.2 bits per key
/// at 1M keys (7.2 / 1.035 = 6.96 bits per slot), leaning on retries at 100K
/// keys and above (ε = 5% would band at once but need ~7.3 bits per key).
pub fn epsilon_for(n: usize) -> f64 {
    let decades = (n.max(1) as f64 / 1e4).log10().max(0.0);
    (EPS_BASE + EPS_PER_DECADE * decades).min(0.25)
}

/// `ε` below 10K keys ([`epsilon_for`]).
pub const EPS_BASE: f64 = 0.015;
/// `ε` added per decade of keys above 10K ([`epsilon_for`]).
pub const EPS_PER_DECADE: f64 = 0.01;

/// Slots for `n` keys at overhead `epsilon`: `⌈n (1 + ε)⌉ +`
/// [`EXTRA_SLOTS`], rounded up to a multiple of 64 (at least 128).
#[expect(
    clippy::cast_sign_loss,
    reason = "the count is checked finite and non-negative before the cast"
)]
pub fn slots_for(n: usize, epsilon: f64) -> u64 {
    let want = (n as f64 * (1.0 + epsilon.max(0.0))).ceil();
    let base = if want.is_finite() && want >= 0.0 {
        want as u64
    } else {
        u64::MAX / 4
    };
    (base.saturating_add(EXTRA_SLOTS).div_ceil(BLOCK) * BLOCK).max(WIDTH)
}

/// Result bits of `bits_per_key` over `n` keys in `slots` slots: `(r, q)`,
/// `r + q / 256` bits per slot, `r ≥ 1` and `r + q/256 ≤ ` the budget
/// (rounded down to 1/256; at least `(1, 0)`, at most `(63, 0)`).
#[expect(
    clippy::cast_sign_loss,
    clippy::cast_possible_truncation,
    reason = "`as` saturates NaN or negative values to 0; both are clamped"
)]
pub fn result_bits_for(bits_per_key: f64, n: usize, slots: u64) -> (u32, u8) {
    let per_slot = bits_per_key * n as f64 / slots.max(1) as f64;
    let in_256ths = (per_slot * 256.0 + 1e-6).floor();
    let v = if in_256ths.is_finite() {
        in_256ths as u64
    } else {
        0
    };
    let v = v.clamp(256, u64::from(MAX_RESULT_BITS) * 256);
    ((v / 256) as u32, (v % 256) as u8)
}

/// Blocks keeping `r + 1` columns among `blocks`, at fraction `q / 256`.
pub fn upper_blocks(blocks: u64, q: u8) -> u64 {
    ((u128::from(blocks) * u128::from(q)) >> 8) as u64
}

/// Solution words of `blocks` blocks at `r + q/256` columns.
pub fn words_for(blocks: u64, r: u32, q: u8) -> u64 {
    blocks * u64::from(r) + upper_blocks(blocks, q)
}

/// The blocks of a solution of `words` words at `r + q/256` columns, if any
/// (at least 2: the band holds one 128-slot row).
pub fn blocks_for_words(words: u64, r: u32, q: u8) -> Option<u64> {
    if r == 0 {
        return None;
    }
    // words_for is strictly increasing in blocks; start just below.
    let per = 256 * u128::from(r) + u128::from(q);
    let guess = (u128::from(words) * 256 / per) as u64;
    let mut b = guess.saturating_sub(2);
    while words_for(b, r, q) < words {
        b += 1;
    }
    (b >= WIDTH / BLOCK && words_for(b, r, q) == words).then_some(b)
}

/// Index of block `b`'s first word (blocks below `upper` have `r + 1`).
#[inline(always)]
pub fn block_offset(b: u64, r: u32, upper: u64) -> usize {
    (b * u64::from(r) + b.min(upper)) as usize
}

/// The band's next size after failed seeds: 1/128 more plus 64 slots.
pub fn grown(slots: u64) -> u64 {
    (slots + slots / 128).div_ceil(BLOCK) * BLOCK + BLOCK
}

/// A key's row: start slot, 128 coefficients, the full 64-bit remix (the
/// fingerprint is its low `r` or `r + 1` bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WideRow {
    /// First slot the row covers.
    pub start: u64,
    /// Coefficients of slots `start .. start + 128` (bit 0 always set).
    pub coeff: u128,
    /// The remixed digest.
    pub x: u64,
}

impl WideRow {
    /// The row of digest `h1` in a band of `slots ≥ 128` slots under `seed`.
    #[inline(always)]
    pub fn new(h1: u64, seed: u8, slots: u64) -> WideRow {
        WideRow::from_x(remix(h1, seed), slots)
    }

    /// The row of remixed digest `x` ([`remix`]) in a band of `slots ≥ 128`
    /// slots; its start is `⌊x · (slots − 127) / 2^64⌋`, nondecreasing in `x`.
    #[inline(always)]
    pub fn from_x(x: u64, slots: u64) -> WideRow {
        let starts = slots - (WIDTH - 1);
        let start = ((u128::from(x) * u128::from(starts)) >> 64) as u64;
        let a = (x ^ (x >> 29)).wrapping_mul(COEFF_MIX);
        let b = (x ^ (x >> 31)).wrapping_mul(COEFF_MIX_HI);
        let lo = a ^ (a >> 32);
        let hi = b ^ (b >> 29);
        WideRow {
            start,
            coeff: (u128::from(hi) << 64) | u128::from(lo) | 1,
            x,
        }
    }

    /// The fingerprint on `bits` bits.
    #[inline(always)]
    pub fn fp(&self, bits: u32) -> u64 {
        self.x & result_mask(bits)
    }
}

/// Digest `h1` remixed with `seed`: `fmix64(h1 ^ ((seed + 1) · φ))`.
#[inline(always)]
pub fn remix(h1: u64, seed: u8) -> u64 {
    crate::filter::hash::fmix64(h1 ^ seed_word(seed))
}

/// Result bits a key starting at `start` is checked on.
#[inline(always)]
pub fn checked_bits(start: u64, r: u32, upper: u64) -> u32 {
    r + u32::from(start / BLOCK + 2 < upper)
}

#[cfg(test)]
mod tests;
