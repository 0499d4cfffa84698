//! Building a wide Ribbon solution: on-the-fly banding of 128-bit rows, then
//! back-substitution into the interleaved solution whose first `u` blocks
//! keep `r + 1` columns.
//!
//! Two variants share the band ([`Band`], generic over what a slot keeps):
//! the **homogeneous** one ([`solve_homogeneous_within`], layout 7, what the
//! builder writes) bands coefficients only, every right-hand side 0, so a
//! row that reduces to zero is redundant and dropped, never a contradiction:
//! one pass, no retry; its free slots get pseudo-random bits
//! ([`free_bits`]), which make an absent key's parities random. The
//! **standard** one (`solve_within`, layout 5, kept for tests of the files
//! written with it) bands each row with its `r + 1` fingerprint bits and
//! retries with a new seed on a contradiction.

#[cfg(test)]
use super::grown;
use super::{block_offset, result_bits_for, upper_blocks, words_for, WideRow, BLOCK, WIDTH};
use crate::filter::ribbon::result_mask;
#[cfg(test)]
use crate::filter::ribbon::{MAX_SEEDS, TRIES_PER_SIZE};

/// A solved wide Ribbon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Solved {
    /// Seed the digests were remixed with (0 for the homogeneous variant).
    pub seed: u8,
    /// Slots (a multiple of 64, at least 128).
    pub slots: u64,
    /// [`words_for`] words, interleaved column-major.
    pub words: Box<[u64]>,
    /// Seeds that failed before this one (0 for the homogeneous variant).
    pub failed_seeds: u32,
}

/// Rows computed (and prefetched) ahead of the one added.
const AHEAD: usize = 16;

/// What a band slot keeps: the pivot row's coefficients (0 = empty) and,
/// for the standard variant, its accumulated fingerprint.
trait Pivot: Copy {
    /// An empty slot.
    #[cfg(test)]
    const EMPTY: Self;
    /// A pivot of coefficients `c` and fingerprint `fp`.
    fn new(c: u128, fp: u64) -> Self;
    /// The coefficients (0 when empty).
    fn coeff(self) -> u128;
    /// The fingerprint (always 0 for the homogeneous variant).
    fn fp(self) -> u64;
}

/// Homogeneous slot: coefficients only (16 bytes a slot, not 32).
impl Pivot for u128 {
    #[cfg(test)]
    const EMPTY: Self = 0;
    #[inline(always)]
    fn new(c: u128, _fp: u64) -> Self {
        c
    }
    #[inline(always)]
    fn coeff(self) -> u128 {
        self
    }
    #[inline(always)]
    fn fp(self) -> u64 {
        0
    }
}

/// Standard slot: coefficients and fingerprint.
impl Pivot for (u128, u64) {
    #[cfg(test)]
    const EMPTY: Self = (0, 0);
    #[inline(always)]
    fn new(c: u128, fp: u64) -> Self {
        (c, fp)
    }
    #[inline(always)]
    fn coeff(self) -> u128 {
        self.0
    }
    #[inline(always)]
    fn fp(self) -> u64 {
        self.1
    }
}

/// The band: per slot, the pivot row (one at most) starting there.
struct Band<P> {
    slots: Vec<P>,
}

impl<P: Pivot> Band<P> {
    #[cfg(test)]
    fn new() -> Self {
        Band { slots: Vec::new() }
    }

    #[cfg(test)]
    fn clear(&mut self, slots: u64) {
        self.slots.clear();
        self.slots.resize(slots as usize, P::EMPTY);
    }

    #[inline(always)]
    fn prefetch(&self, row: &WideRow) {
        for at in [row.start as usize, row.start as usize + 2] {
            if let Some(slot) = self.slots.get(at) {
                crate::prefetch::prefetch_read(slot);
            }
        }
    }

    /// Adds every digest's row with the low `fp_bits` bits of its remix as
    /// the fingerprint (0 bits: homogeneous); false at the first
    /// contradiction (never with 0 bits).
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

    /// Adds one row; false when it reduces to zero with a nonzero result
    /// (a row that reduces to zero with result 0 is implied by the others).
    #[inline]
    fn add(&mut self, mut s: usize, mut c: u128, mut fp: u64) -> bool {
        loop {
            let pivot = self.slots[s];
            if pivot.coeff() == 0 {
                self.slots[s] = P::new(c, fp);
                return true;
            }
            c ^= pivot.coeff();
            fp ^= pivot.fp();
            if c == 0 {
                return fp == 0;
            }
            let tz = c.trailing_zeros();
            s += tz as usize;
            c >>= tz;
        }
    }

    /// Back-substitution of `cols` columns, free slot `i` given the result
    /// bits `free(i)`; block `b` keeps `r + 1` columns when `b < upper`,
    /// else `r`.
    fn solve(&self, r: u32, upper: u64, cols: u32, free: impl Fn(usize) -> u64) -> Box<[u64]> {
        let slots = self.slots.len() as u64;
        let blocks = slots / BLOCK;
        let total = (blocks * u64::from(r) + upper.min(blocks)) as usize;
        let mut words = vec![0u64; total];
        let mut window = vec![0u128; cols as usize];
        for i in (0..slots as usize).rev() {
            let pivot = self.slots[i];
            let (c, res) = (pivot.coeff(), pivot.fp());
            let given = if c == 0 { free(i) } else { 0 };
            for (j, w) in window.iter_mut().enumerate() {
                let shifted = *w << 1;
                let bit = if c == 0 {
                    (given >> j) & 1
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

impl Band<u128> {
    /// A homogeneous band of `slots` empty slots, fresh from [`zeroed`].
    fn zeroed(slots: u64) -> Band<u128> {
        Band {
            slots: zeroed(slots as usize),
        }
    }

    /// Adds the rows of `xs`, remixed digests ([`super::remix`]) in order of
    /// start slot by bucket ([`by_start`]): each row lands near the previous
    /// one's, so the band is walked once in order instead of probed at random
    /// (a 1M-key band is 16 MB; banding in digest order spent most of its
    /// time waiting on those loads). Homogeneous only (every right-hand
    /// side 0, so no row contradicts).
    ///
    /// A row's elimination is a chain of dependent steps (load the pivot at
    /// `s`, XOR, find the next set bit, move `s`; about 9 per key at 1M
    /// keys), so each step is kept short: the row as two 64-bit halves, the
    /// emptiness test on the pivot's low word (a pivot has bit 0 set), the
    /// next set bit found in the low half (the high half only when the low
    /// one cancelled out, which random rows practically never do).
    fn add_sorted(&mut self, xs: &[u64], slots: u64) {
        let band = &mut self.slots[..];
        for &x in xs {
            let row = WideRow::from_x(x, slots);
            let mut s = row.start as usize;
            let (mut lo, mut hi) = (row.coeff as u64, (row.coeff >> 64) as u64);
            loop {
                let pivot = band[s];
                let p_lo = pivot as u64;
                if p_lo & 1 == 0 {
                    band[s] = (u128::from(hi) << 64) | u128::from(lo);
                    break;
                }
                lo ^= p_lo;
                hi ^= (pivot >> 64) as u64;
                if lo == 0 {
                    if hi == 0 {
                        // Implied by the rows before: dropped.
                        break;
                    }
                    // Bit 0 of `hi` is slot s + 64 (at most 63 more).
                    let tz = hi.trailing_zeros();
                    s += 64 + tz as usize;
                    (lo, hi) = (hi >> tz, 0);
                    continue;
                }
                // lo != 0 and its bit 0 is 0 (both rows had it): 1 ≤ tz ≤ 63.
                let tz = lo.trailing_zeros();
                s += tz as usize;
                lo = (lo >> tz) | (hi << (64 - tz));
                hi >>= tz;
            }
        }
    }
}

/// `n` zeros, in memory advised for transparent huge pages when large.
///
/// The homogeneous build touches about 24 bytes per key for the first time
/// (the band and the sorted remixes), and with 4 KB pages the page faults
/// cost a third of the build (measured, `timing::build_stages`: ~10 ns per
/// key of 1M keys for the band's 16 MB alone, against under 1 ns with 2 MB
/// pages). `vec!` of zeros takes fresh pages (untouched) for large sizes, so
/// the advice applies before their first fault; on reused memory it is
/// harmless.
fn zeroed<T: Copy + Default>(n: usize) -> Vec<T> {
    const HUGE: usize = 2 << 20;
    let v = vec![T::default(); n];
    #[cfg(target_os = "linux")]
    {
        let bytes = n * std::mem::size_of::<T>();
        let at = v.as_ptr() as usize;
        let from = at.next_multiple_of(HUGE);
        let to = (at + bytes) / HUGE * HUGE;
        if to > from {
            // SAFETY: `madvise` with MADV_HUGEPAGE only changes how the
            // kernel backs the pages of `from..to` (whole 2 MB pages inside
            // `v`'s allocation, which `v` owns for its whole life); it reads
            // and writes no memory and leaves the contents (zeros) as they
            // are. A failure (no THP support) only leaves 4 KB pages.
            unsafe {
                libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
            }
        }
    }
    v
}

/// Keys from which the homogeneous build sorts its rows by start first (a
/// smaller band, at most 256 KB, stays in cache).
const SORT_FROM_KEYS: usize = 16 * 1024;

/// Start slots per bucket of [`by_start`], at most: the band rows of one
/// bucket (16 bytes a slot, 16 KB) stay in the L1 cache.
const SLOTS_PER_BUCKET: u64 = 1024;

/// The digests remixed with seed 0 ([`super::remix`]), bucketed by their
/// high bits, i.e. by start slot, in a stable counting sort: bucket `d`
/// holds the rows starting in the `d`-th of `2^bits` equal ranges of start
/// slots, `bits` the least (at most 16) that puts at most
/// [`SLOTS_PER_BUCKET`] starts in a range. Rows of one bucket stay in digest
/// order, which is all the banding needs.
fn by_start(digests: &[u64], slots: u64) -> Vec<u64> {
    let bits = (slots
        .div_ceil(SLOTS_PER_BUCKET)
        .next_power_of_two()
        .trailing_zeros())
    .clamp(1, 16);
    let shift = 64 - bits;
    let mut at = vec![0usize; 1 << bits];
    // Two passes over the digests, remixing each twice (a few cycles), rather
    // than one pass keeping the remixes: a buffer as large as the output
    // would cost more in first-touch page faults than the remixes.
    for &h in digests {
        at[(super::remix(h, 0) >> shift) as usize] += 1;
    }
    let mut sum = 0;
    for a in &mut at {
        (*a, sum) = (sum, sum + *a);
    }
    let mut out = zeroed::<u64>(digests.len());
    for &h in digests {
        let x = super::remix(h, 0);
        let d = (x >> shift) as usize;
        out[at[d]] = x;
        at[d] += 1;
    }
    out
}

/// The pseudo-random result bits of free slot `i` in a homogeneous solution
/// (any fixed function of the slot works; these are reproducible).
#[inline]
pub(crate) fn free_bits(i: usize) -> u64 {
    crate::filter::hash::fmix64(FREE_SEED ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// Mixed into the slot index for [`free_bits`].
const FREE_SEED: u64 = 0x6a09_e667_f3bc_c908;

/// Solves the homogeneous wide Ribbon for `digests` within `bits_per_key`
/// bits per key over `slots` slots (rounded up to a multiple of 64, at least
/// 128), seed 0, `(r, q)` from [`result_bits_for`]: one banding pass, which
/// never fails. Returns the solution with its `(r, q)`.
pub(crate) fn solve_homogeneous_within(
    digests: &[u64],
    bits_per_key: f64,
    slots: u64,
) -> (Solved, u32, u8) {
    let slots = slots.max(WIDTH).div_ceil(BLOCK) * BLOCK;
    let (r, q) = result_bits_for(bits_per_key, digests.len(), slots);
    let upper = upper_blocks(slots / BLOCK, q);
    let mut band = Band::<u128>::zeroed(slots);
    if digests.len() < SORT_FROM_KEYS {
        let consistent = band.add_all(digests, 0, slots, 0);
        debug_assert!(consistent, "a homogeneous row never contradicts");
    } else {
        band.add_sorted(&by_start(digests, slots), slots);
    }
    let words = band.solve(r, upper, r + u32::from(upper > 0), free_bits);
    debug_assert_eq!(words.len() as u64, words_for(slots / BLOCK, r, q));
    let solved = Solved {
        seed: 0,
        slots,
        words,
        failed_seeds: 0,
    };
    (solved, r, q)
}

/// Solves the standard wide Ribbon (layout 5) for `digests` within
/// `bits_per_key` bits per key, starting at `slots` (rounded up to a
/// multiple of 64, at least 128) and seed 0; `(r, q)` are recomputed for
/// each size ([`result_bits_for`]): a band grown after failed seeds spends
/// the same bits over more slots (fewer per slot, a slightly higher FPR),
/// never more memory. Returns the solution with its `(r, q)`; `None` when
/// all [`MAX_SEEDS`] seeds failed.
#[cfg(test)]
pub(crate) fn solve_within(
    digests: &[u64],
    bits_per_key: f64,
    slots: u64,
) -> Option<(Solved, u32, u8)> {
    let mut slots = slots.max(WIDTH).div_ceil(BLOCK) * BLOCK;
    for attempt in 0..MAX_SEEDS {
        if attempt > 0 && attempt % TRIES_PER_SIZE == 0 {
            slots = grown(slots);
        }
        let (r, q) = result_bits_for(bits_per_key, digests.len(), slots);
        if let Some(solved) = solve_at(digests, r, q, slots, attempt) {
            return Some((solved, r, q));
        }
    }
    None
}

/// Solves the standard wide Ribbon for `digests` at `r + q/256` result bits
/// per slot, starting at `slots` (rounded up to a multiple of 64, at least
/// 128) and seed 0; the next seed after each failure, the band larger every
/// [`TRIES_PER_SIZE`] seeds. `None` when all [`MAX_SEEDS`] seeds failed.
#[cfg(test)]
pub(crate) fn solve(digests: &[u64], r: u32, q: u8, slots: u64) -> Option<Solved> {
    let mut slots = slots.max(WIDTH).div_ceil(BLOCK) * BLOCK;
    for attempt in 0..MAX_SEEDS {
        if attempt > 0 && attempt % TRIES_PER_SIZE == 0 {
            slots = grown(slots);
        }
        if let Some(solved) = solve_at(digests, r, q, slots, attempt) {
            return Some(solved);
        }
    }
    None
}

/// One standard banding of `digests` at `slots` with seed `attempt`.
#[cfg(test)]
fn solve_at(digests: &[u64], r: u32, q: u8, slots: u64, attempt: u32) -> Option<Solved> {
    let seed = u8::try_from(attempt).ok()?;
    let upper = upper_blocks(slots / BLOCK, q);
    let cols = r + u32::from(upper > 0);
    let mut band = Band::<(u128, u64)>::new();
    band.clear(slots);
    if !band.add_all(digests, seed, slots, cols) {
        return None;
    }
    let words = band.solve(r, upper, cols, |_| 0);
    debug_assert_eq!(words.len() as u64, words_for(slots / BLOCK, r, q));
    Some(Solved {
        seed,
        slots,
        words,
        failed_seeds: attempt,
    })
}

/// Time of each build stage at 1M keys (`--ignored --nocapture`, release).
#[cfg(test)]
mod timing {
    use super::*;
    use std::time::Instant;

    #[test]
    #[ignore = "measurement"]
    fn build_stages() {
        let n = 1_000_000;
        let keys: Vec<u64> = (0..n as u64)
            .map(|i| crate::filter::hash::fmix64(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1))
            .collect();
        for bpk in [4.0, 7.0, 10.0] {
            for _ in 0..3 {
                let slots = super::super::slots_for(n, super::super::epsilon_for(n));
                let (r, q) = result_bits_for(bpk, n, slots);
                let upper = upper_blocks(slots / BLOCK, q);
                let t0 = Instant::now();
                let xs = by_start(&keys, slots);
                let t1 = Instant::now();
                let mut band = Band::<u128>::zeroed(slots);
                let t2 = Instant::now();
                band.add_sorted(&xs, slots);
                let t3 = Instant::now();
                let words = band.solve(r, upper, r + u32::from(upper > 0), free_bits);
                let t4 = Instant::now();
                let ns = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e9 / n as f64;
                println!(
                    "bpk {bpk} r {r}: by_start {:.1} clear {:.1} band {:.1} solve {:.1} total {:.1} ns/key ({})",
                    ns(t0, t1), ns(t1, t2), ns(t2, t3), ns(t3, t4), ns(t0, t4), words.len()
                );
            }
        }
    }
}
