//! Querying a Ribbon solution with a key's row.

use super::{KeyRow, W};

/// The `r` result bits the solution `words` (interleaved column-major, `r`
/// words per block of 64 slots) gives row `row`: for each result bit `j`, the
/// parity of the solution bits `j` of the slots whose coefficient is set (the
/// plain form of [`may_contain`], its test oracle).
#[cfg(test)]
pub(crate) fn result(words: &[u64], r: u32, row: &KeyRow) -> u64 {
    let r = r as usize;
    let block = (row.start / W) as usize;
    let offset = (row.start % W) as u32;
    let lo = &words[block * r..(block + 1) * r];
    let mut out = 0u64;
    if offset == 0 {
        for (j, w) in lo.iter().enumerate() {
            out |= u64::from((w & row.coeff).count_ones() & 1) << j;
        }
    } else {
        // Slots start..start+64 are bits offset..64 of block `block` and
        // bits 0..offset of the next one (which exists: start ≤ slots − 64).
        let hi = &words[(block + 1) * r..(block + 2) * r];
        let c_lo = row.coeff << offset;
        let c_hi = row.coeff >> (W as u32 - offset);
        for (j, (a, b)) in lo.iter().zip(hi).enumerate() {
            out |= u64::from(((a & c_lo) ^ (b & c_hi)).count_ones() & 1) << j;
        }
    }
    out
}

/// Whether the key of digest `h1` may be in the filter: `result` compared
/// with the fingerprint, column by column in groups of [`GROUP`], stopping at
/// the first group that differs (an absent key differs in the first group
/// with probability `1 − 2^-GROUP`).
#[inline(always)]
pub(crate) fn may_contain(words: &[u64], seed: u8, slots: u64, r: u32, h1: u64) -> bool {
    let row = KeyRow::new(h1, seed, slots, r);
    let r = r as usize;
    let block = (row.start / W) as usize;
    let offset = (row.start % W) as u32;
    let lo = &words[block * r..(block + 1) * r];
    // The next block, or (offset 0: all 64 slots in this block) `lo` again
    // under an all-zero mask.
    let (hi, c_hi) = if offset == 0 {
        (lo, 0)
    } else {
        (
            &words[(block + 1) * r..(block + 2) * r],
            row.coeff >> (W as u32 - offset),
        )
    };
    let c_lo = row.coeff << offset;
    let mut fp = row.fp;
    for (a, b) in lo.chunks(GROUP).zip(hi.chunks(GROUP)) {
        let mut diff = 0u64;
        for (j, (x, y)) in a.iter().zip(b).enumerate() {
            let bit = u64::from(((x & c_lo) ^ (y & c_hi)).count_ones() & 1);
            diff |= (bit ^ (fp >> j)) & 1;
        }
        if diff != 0 {
            return false;
        }
        fp >>= GROUP;
    }
    true
}

/// Result columns compared between two early exits of [`may_contain`].
const GROUP: usize = 4;
