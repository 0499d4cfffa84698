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
    let b = row.start / BLOCK;
    let o = (row.start % BLOCK) as u32;
    let (lo, hi) = (row.coeff as u64, (row.coeff >> 64) as u64);
    // The row shifted by `o` over three words: `coeff << o` (mod 2^128) and
    // the bits pushed past 128, `coeff >> (128 − o)`. `(v >> 1) >> (63 − o)`
    // is `v >> (64 − o)` for o ≥ 1 and 0 for o = 0, with no shift of 64.
    let c0 = lo << o;
    let c1 = (hi << o) | ((lo >> 1) >> (63 - o));
    let c2 = (hi >> 1) >> (63 - o);
    // Blocks b, b + 1, b + 2 are consecutive in `words`, block `x` holding
    // `r + 1` words when `x < upper`. With o = 0 the row ends in block
    // b + 1 and block b + 2 may not exist: block b is read again under the
    // zero mask c2.
    let bits = checked_bits(row.start, r, upper);
    let n = bits as usize;
    let at0 = block_offset(b, r, upper);
    let at1 = at0 + (r + u32::from(b < upper)) as usize;
    let at2 = if o == 0 {
        at0
    } else {
        at1 + (r + u32::from(b + 1 < upper)) as usize
    };
    let w0 = &words[at0..at0 + n];
    let w1 = &words[at1..at1 + n];
    let w2 = &words[at2..at2 + n];
    let mut fp = if homogeneous { 0 } else { row.fp(bits) };
    for ((x, y), z) in w0.chunks(GROUP).zip(w1.chunks(GROUP)).zip(w2.chunks(GROUP)) {
        let mut diff = 0u64;
        for (j, ((a, bb), c)) in x.iter().zip(y).zip(z).enumerate() {
            let v = (a & c0) ^ (bb & c1) ^ (c & c2);
            diff |= (parity(v) ^ (fp >> j)) & 1;
        }
        if diff != 0 {
            return false;
        }
        fp >>= GROUP;
    }
    true
}

/// The parity of `v` (0 or 1).
#[inline(always)]
fn parity(v: u64) -> u64 {
    u64::from(v.count_ones() & 1)
}

/// Result columns compared between two early exits.
const GROUP: usize = 4;
