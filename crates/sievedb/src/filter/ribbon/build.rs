//! Building a Ribbon solution: on-the-fly banding of the keys' rows, then
//! back-substitution into the interleaved column-major solution.

use super::{grown, KeyRow, MAX_SEEDS, TRIES_PER_SIZE, W};

/// A solved Ribbon: the seed and size that banded, and the solution words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Solved {
    /// Seed the digests were remixed with.
    pub seed: u8,
    /// Slots (a multiple of 64).
    pub slots: u64,
    /// `slots / 64 · r` words, interleaved column-major.
    pub words: Box<[u64]>,
    /// Seeds that failed before this one.
    pub failed_seeds: u32,
}

/// The band under construction: per slot, the pivot row's coefficients
/// (bit 0 = the slot itself; 0 = empty slot) and its fingerprint, side by side
/// so that a slot is one cache miss.
struct Band {
    slots: Vec<[u64; 2]>,
}

/// Rows computed (and their first slot prefetched) ahead of the one added:
/// starts are random, so every row's first slot is a cache miss, which
/// prefetching overlaps with the adds before it.
const AHEAD: usize = 16;

impl Band {
    fn new(slots: u64) -> Band {
        Band {
            slots: vec![[0; 2]; slots as usize],
        }
    }

    fn clear(&mut self, slots: u64) {
        self.slots.clear();
        self.slots.resize(slots as usize, [0; 2]);
    }

    /// Hints that row `row` will be added soon.
    #[inline(always)]
    fn prefetch(&self, row: &KeyRow) {
        // The row's first slot and the next line: pivots are pushed right.
        for at in [row.start as usize, row.start as usize + 4] {
            if let Some(slot) = self.slots.get(at) {
                crate::prefetch::prefetch_read(slot);
            }
        }
    }

    /// Adds the rows of `digests` under `seed` in a band of `slots` slots;
    /// false at the first row that contradicts the rows before it.
    fn add_all(&mut self, digests: &[u64], seed: u8, slots: u64, r: u32) -> bool {
        let row = |h: u64| KeyRow::new(h, seed, slots, r);
        let mut ring = [KeyRow {
            start: 0,
            coeff: 0,
            fp: 0,
        }; AHEAD];
        for (slot, &h) in ring.iter_mut().zip(digests) {
            *slot = row(h);
            self.prefetch(slot);
        }
        for i in 0..digests.len() {
            let this = ring[i % AHEAD];
            if let Some(&h) = digests.get(i + AHEAD) {
                let next = row(h);
                self.prefetch(&next);
                ring[i % AHEAD] = next;
            }
            if !self.add(this) {
                return false;
            }
        }
        true
    }

    /// Adds one row; false when it contradicts the rows added before (it
    /// reduced to zero coefficients with a nonzero fingerprint).
    #[inline]
    fn add(&mut self, row: KeyRow) -> bool {
        let (mut s, mut c, mut fp) = (row.start as usize, row.coeff, row.fp);
        loop {
            let [pivot, result] = self.slots[s];
            if pivot == 0 {
                self.slots[s] = [c, fp];
                return true;
            }
            c ^= pivot;
            fp ^= result;
            if c == 0 {
                // The same row as a combination of earlier ones: fine when
                // its fingerprint agrees (e.g. two keys of equal digest).
                return fp == 0;
            }
            let tz = c.trailing_zeros();
            s += tz as usize;
            c >>= tz;
        }
    }

    /// Back-substitution: the solution of the banded system, interleaved
    /// column-major. Empty slots (free variables) get 0.
    fn solve(&self, r: u32) -> Box<[u64]> {
        let slots = self.slots.len();
        let blocks = slots / W as usize;
        let r = r as usize;
        let mut words = vec![0u64; blocks * r];
        // window[j] bit t = result bit j of slot i + t.
        let mut window = vec![0u64; r];
        for i in (0..slots).rev() {
            let [c, res] = self.slots[i];
            for (j, w) in window.iter_mut().enumerate() {
                let shifted = *w << 1;
                let bit = if c == 0 {
                    0
                } else {
                    ((res >> j) & 1) ^ u64::from((c & shifted).count_ones() & 1)
                };
                *w = shifted | bit;
            }
            if i % W as usize == 0 {
                let b = i / W as usize;
                words[b * r..(b + 1) * r].copy_from_slice(&window);
            }
        }
        words.into()
    }
}

/// Solves the Ribbon for `digests` with `r` result bits, starting at `slots`
/// slots (rounded up to a multiple of 64) and seed 0, the next seed after each
/// failure and a band 1/8 larger every [`TRIES_PER_SIZE`] seeds. `None` when
/// all [`MAX_SEEDS`] seeds failed, which random digests practically never do
/// (equal digests are no contradiction: their rows and fingerprints agree).
pub(crate) fn solve(digests: &[u64], r: u32, slots: u64) -> Option<Solved> {
    let mut slots = slots.max(W).div_ceil(W) * W;
    let mut band = Band::new(slots);
    for attempt in 0..MAX_SEEDS {
        if attempt > 0 && attempt % TRIES_PER_SIZE == 0 {
            slots = grown(slots);
        }
        let Ok(seed) = u8::try_from(attempt) else {
            break;
        };
        band.clear(slots);
        if band.add_all(digests, seed, slots, r) {
            return Some(Solved {
                seed,
                slots,
                words: band.solve(r),
                failed_seeds: attempt,
            });
        }
    }
    None
}
