//! Querying a Ribbon solution with a key's row.

use super::{KeyRow, W};

/// The `r` result bits the solution `words` (interleaved column-major, `r`
/// words per block of 64 slots) gives row `row`: for each result bit `j`, the
/// parity of the solution bits `j` of the slots whose coefficient is set.
#[inline(always)]
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

/// Whether the key of digest `h1` may be in the filter.
#[inline(always)]
pub(crate) fn may_contain(words: &[u64], seed: u8, slots: u64, r: u32, h1: u64) -> bool {
    let row = KeyRow::new(h1, seed, slots, r);
    result(words, r, &row) == row.fp
}
