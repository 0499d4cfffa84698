//! Building a wide Ribbon solution: on-the-fly banding of 128-bit rows with
//! `r + 1` fingerprint bits, then back-substitution into the interleaved
//! solution whose first `u` blocks keep `r + 1` columns.

use super::{block_offset, grown, result_bits_for, upper_blocks, words_for, WideRow, BLOCK, WIDTH};
use crate::filter::ribbon::{result_mask, MAX_SEEDS, TRIES_PER_SIZE};

/// A solved wide Ribbon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Solved {
    /// Seed the digests were remixed with.
    pub seed: u8,
    /// Slots (a multiple of 64, at least 128).
    pub slots: u64,
    /// [`words_for`] words, interleaved column-major.
    pub words: Box<[u64]>,
    /// Seeds that failed before this one.
    pub failed_seeds: u32,
}

/// Rows computed (and prefetched) ahead of the one added.
const AHEAD: usize = 16;

/// The band: per slot, the pivot's coefficients (0 = empty) and fingerprint.
struct Band {
    slots: Vec<(u128, u64)>,
}

impl Band {
    fn clear(&mut self, slots: u64) {
        self.slots.clear();
        self.slots.resize(slots as usize, (0, 0));
    }

    #[inline(always)]
    fn prefetch(&self, row: &WideRow) {
        for at in [row.start as usize, row.start as usize + 2] {
            if let Some(slot) = self.slots.get(at) {
                crate::prefetch::prefetch_read(slot);
            }
        }
    }

    /// Adds every digest's row; false at the first contradiction.
    fn add_all(&mut self, digests: &[u64], seed: u8, slots: u64, fp_bits: u32) -> bool {
        let mask = result_mask(fp_bits);
        let mut ring = [WideRow {
            start: 0,
            coeff: 0,
            x: 0,
        }; AHEAD];
        for (slot, &h) in ring.iter_mut().zip(digests) {
            *slot = WideRow::new(h, seed, slots);
            self.prefetch(slot);
        }
        for i in 0..digests.len() {
            let this = ring[i % AHEAD];
            if let Some(&h) = digests.get(i + AHEAD) {
                let next = WideRow::new(h, seed, slots);
                self.prefetch(&next);
                ring[i % AHEAD] = next;
            }
            if !self.add(this.start as usize, this.coeff, this.x & mask) {
                return false;
            }
        }
        true
    }

    /// Adds one row; false when it reduces to zero with a nonzero result.
    #[inline]
    fn add(&mut self, mut s: usize, mut c: u128, mut fp: u64) -> bool {
        loop {
            let (pivot, result) = self.slots[s];
            if pivot == 0 {
                self.slots[s] = (c, fp);
                return true;
            }
            c ^= pivot;
            fp ^= result;
            if c == 0 {
                return fp == 0;
            }
            let tz = c.trailing_zeros();
            s += tz as usize;
            c >>= tz;
        }
    }

    /// Back-substitution of `cols` columns (free slots get 0); block `b`
    /// keeps `r + 1` columns when `b < upper`, else `r`.
    fn solve(&self, r: u32, upper: u64, cols: u32) -> Box<[u64]> {
        self.solve_free(r, upper, cols, |_| 0)
    }

    /// [`Band::solve`] with free slot `i` given the result bits `free(i)`.
    fn solve_free(&self, r: u32, upper: u64, cols: u32, free: impl Fn(usize) -> u64) -> Box<[u64]> {
        let slots = self.slots.len() as u64;
        let blocks = slots / BLOCK;
        let total = (blocks * u64::from(r) + upper.min(blocks)) as usize;
        let mut words = vec![0u64; total];
        let mut window = vec![0u128; cols as usize];
        for i in (0..slots as usize).rev() {
            let (c, res) = self.slots[i];
            for (j, w) in window.iter_mut().enumerate() {
                let shifted = *w << 1;
                let bit = if c == 0 {
                    (free(i) >> j) & 1
                } else {
                    ((res >> j) & 1) ^ u64::from((c & shifted).count_ones() & 1)
                };
                *w = shifted | u128::from(bit);
            }
            if (i as u64).is_multiple_of(BLOCK) {
                let b = i as u64 / BLOCK;
                let here = r + u32::from(b < upper);
                let at = block_offset(b, r, upper);
                for (j, w) in window.iter().take(here as usize).enumerate() {
                    words[at + j] = *w as u64;
                }
            }
        }
        words.into()
    }
}

/// Solves the wide Ribbon for `digests` within `bits_per_key` bits per key,
/// starting at `slots` (rounded up to a multiple of 64, at least 128) and
/// seed 0, as [`solve`] does, except that `(r, q)` are recomputed for each
/// size ([`result_bits_for`]): a band grown after failed seeds spends the
/// same bits over more slots (fewer per slot, a slightly higher FPR), never
/// more memory. Returns the solution with its `(r, q)`.
pub(crate) fn solve_within(
    digests: &[u64],
    bits_per_key: f64,
    slots: u64,
) -> Option<(Solved, u32, u8)> {
    let mut slots = slots.max(WIDTH).div_ceil(BLOCK) * BLOCK;
    let mut band = Band { slots: Vec::new() };
    for attempt in 0..MAX_SEEDS {
        if attempt > 0 && attempt % TRIES_PER_SIZE == 0 {
            slots = grown(slots);
        }
        let Ok(seed) = u8::try_from(attempt) else {
            break;
        };
        let (r, q) = result_bits_for(bits_per_key, digests.len(), slots);
        let upper = upper_blocks(slots / BLOCK, q);
        let cols = r + u32::from(upper > 0);
        band.clear(slots);
        if band.add_all(digests, seed, slots, cols) {
            let words = band.solve(r, upper, cols);
            debug_assert_eq!(words.len() as u64, words_for(slots / BLOCK, r, q));
            let solved = Solved {
                seed,
                slots,
                words,
                failed_seeds: attempt,
            };
            return Some((solved, r, q));
        }
    }
    None
}

/// Solves the wide Ribbon for `digests` at `r + q/256` result bits per slot,
/// starting at `slots` (rounded up to a multiple of 64, at least 128) and
/// seed 0; the next seed after each failure, the band larger every
/// [`TRIES_PER_SIZE`] seeds. `None` when all [`MAX_SEEDS`] seeds failed.
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "the fixed-(r, q) entry point beside `solve_within`; tests use it"
    )
)]
pub(crate) fn solve(digests: &[u64], r: u32, q: u8, slots: u64) -> Option<Solved> {
    let mut slots = slots.max(WIDTH).div_ceil(BLOCK) * BLOCK;
    let mut band = Band { slots: Vec::new() };
    for attempt in 0..MAX_SEEDS {
        if attempt > 0 && attempt % TRIES_PER_SIZE == 0 {
            slots = grown(slots);
        }
        let Ok(seed) = u8::try_from(attempt) else {
            break;
        };
        let upper = upper_blocks(slots / BLOCK, q);
        let cols = r + u32::from(upper > 0);
        band.clear(slots);
        if band.add_all(digests, seed, slots, cols) {
            let words = band.solve(r, upper, cols);
            debug_assert_eq!(words.len() as u64, words_for(slots / BLOCK, r, q));
            return Some(Solved {
                seed,
                slots,
                words,
                failed_seeds: attempt,
            });
        }
    }
    None
}

/// The homogeneous variant (the paper's, measured against the standard one
/// by `homogeneous_fpr_by_epsilon`): every fingerprint 0, so banding never
/// fails, and free slots random (from `free_seed`); a key matches when its
/// row's parity is 0 on all `r` columns. Returns the `r`-column solution.
#[cfg(test)]
pub(crate) fn solve_homogeneous(digests: &[u64], r: u32, slots: u64, free_seed: u64) -> Box<[u64]> {
    let slots = slots.max(WIDTH).div_ceil(BLOCK) * BLOCK;
    let mut band = Band { slots: Vec::new() };
    band.clear(slots);
    for &h in digests {
        let row = WideRow::new(h, 0, slots);
        let consistent = band.add(row.start as usize, row.coeff, 0);
        debug_assert!(consistent, "a homogeneous row never contradicts");
    }
    band.solve_free(r, 0, r, |i| {
        crate::filter::hash::fmix64(free_seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
    })
}
