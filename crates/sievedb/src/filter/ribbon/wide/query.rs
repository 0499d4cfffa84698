//! Querying a wide Ribbon solution with a key's digest.

use super::{block_offset, checked_bits, WideRow, BLOCK};

/// Whether the key of digest `h1` may be in the wide Ribbon `words` of
/// `slots` slots, `r` base result bits, `upper` blocks of `r + 1` columns and
/// seed `seed`: for each checked column `j`, the parity of the solution bits
/// under the row's 128 coefficients (spread over up to three 64-slot blocks)
/// against fingerprint bit `j` (0 when `homogeneous`), four columns at a
/// time with an early exit.
#[inline(always)]
pub(crate) fn may_contain(
    words: &[u64],
    seed: u8,
    slots: u64,
    r: u32,
    upper: u64,
    homogeneous: bool,
    h1: u64,
) -> bool {
    let row = WideRow::new(h1, seed, slots);
    let bits = checked_bits(row.start, r, upper);
    let b = row.start / BLOCK;
    let o = (row.start % BLOCK) as u32;
    let shifted = row.coeff << o;
    let c0 = shifted as u64;
    let c1 = (shifted >> 64) as u64;
    // Bits of the row pushed past block b + 1 (none when o = 0, and then
    // block b + 2 may not exist: block b is read again under a zero mask).
    let (c2, b2) = if o == 0 {
        (0, b)
    } else {
        ((row.coeff >> (128 - o)) as u64, b + 2)
    };
    let n = bits as usize;
    let w0 = &words[block_offset(b, r, upper)..][..n];
    let w1 = &words[block_offset(b + 1, r, upper)..][..n];
    let w2 = &words[block_offset(b2, r, upper)..][..n];
    let mut fp = if homogeneous { 0 } else { row.fp(bits) };
    for ((x, y), z) in w0.chunks(GROUP).zip(w1.chunks(GROUP)).zip(w2.chunks(GROUP)) {
        let mut diff = 0u64;
        for (j, ((a, bb), c)) in x.iter().zip(y).zip(z).enumerate() {
            let bit = u64::from(((a & c0) ^ (bb & c1) ^ (c & c2)).count_ones() & 1);
            diff |= (bit ^ (fp >> j)) & 1;
        }
        if diff != 0 {
            return false;
        }
        fp >>= GROUP;
    }
    true
}

/// Result columns compared between two early exits.
const GROUP: usize = 4;
