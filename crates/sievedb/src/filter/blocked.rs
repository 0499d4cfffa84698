//! The cache-blocked Bloom filter (Putze, Sanders & Singler): the digest's
//! high bits choose one 512-bit line (`fast_range(h1, lines)`), and all `k`
//! probes fall inside it.
//!
//! In-line positions: the index scheme runs on `r`, the low 64 bits of
//! `h1 · lines` (the bits of `h1` not consumed by the line choice), with its
//! usual arithmetic on 64 bits (rotation, double with `h2`) or on the two 32-bit
//! halves of `r` (enhanced double, modulo 2^32). Each scheme value `v` is mixed
//! into `x = (v ^ (v >> 32)) · LINE_MIX` ([`line_mix`]) and yields the 9-bit
//! fields of `x` from the top down as positions: one field per value in filter
//! format version 2, [`V3_FIELDS_PER_VALUE`] in version 3 (so a probe of
//! `k = 7` mixes 3 values instead of 7, the cheapest probe that still keeps the
//! FPR on the blocked-Bloom theory). Taking `v mod 512` directly would make the
//! positions an arithmetic progression modulo 512 (only 2^18 patterns), which
//! costs up to +70% FPR over the theory at 16 bits/key; the mix removes that.
//! The independent scheme uses `fast_range(r, 512)` then
//! `fast_range(primary(i), 512)`.

use std::sync::atomic::{AtomicU64, Ordering};

use super::bloom::BitOp;
use super::digest::HashSource;
use super::scheme::{rotation_delta, Independent, Positions};
use super::{IndexScheme, Params};

/// Bits per line.
pub const LINE_BITS: u64 = 512;

/// One cache line of filter bits.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Line(pub [u64; 8]);

/// One cache line of atomically updated filter bits.
#[derive(Default, Debug)]
#[repr(C, align(64))]
pub struct AtomicLine(pub [AtomicU64; 8]);

/// Lines for `n` keys at `b` bits per key: `⌈n·b / 512⌉`, at least 1.
#[expect(
    clippy::cast_sign_loss,
    reason = "the count is checked finite and at least 1 before the cast"
)]
pub fn lines_for(n: usize, bits_per_key: f64) -> u64 {
    let lines = (n as f64 * bits_per_key / LINE_BITS as f64).ceil();
    if lines.is_finite() && lines >= 1.0 {
        lines as u64
    } else {
        1
    }
}

/// Positions taken from each mixed scheme value in filter format version 3.
pub const V3_FIELDS_PER_VALUE: u32 = 3;

/// Runs `op` on the line and in-line positions of a key.
#[inline(always)]
pub(crate) fn run<S: HashSource, O: BitOp>(p: &Params, src: &mut S, op: &mut O) -> bool {
    if p.line_fields == V3_FIELDS_PER_VALUE {
        run_fields::<S, O, V3_FIELDS_PER_VALUE>(p, src, op)
    } else {
        run_fields::<S, O, 1>(p, src, op)
    }
}

/// [`run`] taking `F` positions from each mixed scheme value.
#[inline(always)]
fn run_fields<S: HashSource, O: BitOp, const F: u32>(p: &Params, src: &mut S, op: &mut O) -> bool {
    let h = src.primary(0);
    let prod = u128::from(h) * u128::from(p.lines);
    let line = (prod >> 64) as usize;
    let rest = prod as u64;
    let k = p.k;
    match p.scheme {
        IndexScheme::Rotation => op.apply(
            line,
            k,
            &mut LineFields::<_, F>::new(Step {
                g: rest,
                d: rotation_delta(rest),
            }),
        ),
        IndexScheme::Double => {
            let d = src.secondary(0);
            op.apply(line, k, &mut LineFields::<_, F>::new(Step { g: rest, d }))
        }
        IndexScheme::EnhancedDouble => op.apply(
            line,
            k,
            &mut LineFields::<_, F>::new(Enhanced {
                x: (rest >> 32) as u32,
                y: rest as u32,
                i: 0,
            }),
        ),
        IndexScheme::Independent => op.apply(
            line,
            k,
            &mut Independent {
                src,
                idx: 0,
                m: LINE_BITS,
                first: Some(rest),
            },
        ),
    }
}

/// Multiplier of [`line_mix`] (the 64-bit golden ratio, odd).
const LINE_MIX: u64 = 0x9e37_79b9_7f4a_7c15;

/// The mixed word of scheme value `v`: `(v ^ (v >> 32)) · LINE_MIX`; its top
/// 9 bits are the first in-line position taken from `v`.
#[inline]
pub fn line_mix(v: u64) -> u64 {
    (v ^ (v >> 32)).wrapping_mul(LINE_MIX)
}

/// A stream of in-line scheme values.
trait Values {
    /// The next value.
    fn next_value(&mut self) -> u64;
}

/// Rotation / double hashing in a line: `v_{i+1} = v_i + d`.
struct Step {
    g: u64,
    d: u64,
}

impl Values for Step {
    #[inline(always)]
    fn next_value(&mut self) -> u64 {
        let v = self.g;
        self.g = self.g.wrapping_add(self.d);
        v
    }
}

/// Enhanced double hashing in a line, modulo 2^32: `v_i = x_i << 32 | y_i`,
/// `x_{i+1} = x_i + y_i`, `y_{i+1} = y_i + (i+1)`.
struct Enhanced {
    x: u32,
    y: u32,
    i: u32,
}

impl Values for Enhanced {
    #[inline(always)]
    fn next_value(&mut self) -> u64 {
        let v = (u64::from(self.x) << 32) | u64::from(self.y);
        self.i += 1;
        self.x = self.x.wrapping_add(self.y);
        self.y = self.y.wrapping_add(self.i);
        v
    }
}

/// In-line positions: the 9-bit fields of each value's [`line_mix`] from the
/// top down, `F` per value.
struct LineFields<V, const F: u32> {
    values: V,
    /// The current mixed word, shifted so that the next field is on top.
    x: u64,
    /// Fields of `x` not yet used.
    left: u32,
}

impl<V: Values, const F: u32> LineFields<V, F> {
    #[inline(always)]
    fn new(values: V) -> Self {
        LineFields {
            values,
            x: 0,
            left: 0,
        }
    }
}

impl<V: Values, const F: u32> Positions for LineFields<V, F> {
    #[inline(always)]
    fn next_pos(&mut self) -> u64 {
        if self.left == 0 {
            self.x = line_mix(self.values.next_value());
            self.left = F;
        }
        let p = self.x >> 55;
        self.x <<= 9;
        self.left -= 1;
        p
    }
    #[inline]
    fn skip(&mut self, n: u32) {
        for _ in 0..n {
            self.next_pos();
        }
    }
}

#[inline]
fn word_bit(p: u64) -> (usize, u64) {
    (((p >> 6) & 7) as usize, 1u64 << (p & 63))
}

/// Tests bits of lines.
pub(crate) struct Check<'a> {
    pub lines: &'a [Line],
}

impl BitOp for Check<'_> {
    #[inline(always)]
    fn apply<P: Positions>(&mut self, u: usize, k: u32, pos: &mut P) -> bool {
        // Branch-free: all probes hit the same cache line, so testing every
        // bit costs less than mispredicting an early exit.
        let line = &self.lines[u].0;
        // The usual probe counts get a fully unrolled loop.
        let all = match k {
            6 => test_bits::<P, 6>(line, pos),
            7 => test_bits::<P, 7>(line, pos),
            8 => test_bits::<P, 8>(line, pos),
            _ => (0..k).fold(!0, |acc, _| acc & shifted_bit(line, pos.next_pos())),
        };
        all & 1 == 1
    }
}

/// The word of `line` holding in-line position `p`, shifted so that the bit
/// of `p` is bit 0 (the shift count is taken modulo 64, as x86's shifts do,
/// so the compiler emits no mask for it).
#[inline(always)]
fn shifted_bit(line: &[u64; 8], p: u64) -> u64 {
    line[((p >> 6) & 7) as usize] >> (p & 63)
}

/// AND of [`shifted_bit`] over the next `K` positions: bit 0 is set iff every
/// position's bit is.
#[inline(always)]
fn test_bits<P: Positions, const K: u32>(line: &[u64; 8], pos: &mut P) -> u64 {
    let mut all = !0u64;
    for _ in 0..K {
        all &= shifted_bit(line, pos.next_pos());
    }
    all
}

/// Sets bits of lines.
pub(crate) struct Set<'a> {
    pub lines: &'a mut [Line],
}

impl BitOp for Set<'_> {
    #[inline]
    fn apply<P: Positions>(&mut self, u: usize, k: u32, pos: &mut P) -> bool {
        let line = &mut self.lines[u].0;
        for _ in 0..k {
            let (w, bit) = word_bit(pos.next_pos());
            line[w] |= bit;
        }
        true
    }
}

/// Tests bits of atomic lines (acquire loads).
pub(crate) struct AtomicCheck<'a> {
    pub lines: &'a [AtomicLine],
}

impl BitOp for AtomicCheck<'_> {
    #[inline]
    fn apply<P: Positions>(&mut self, u: usize, k: u32, pos: &mut P) -> bool {
        let line = &self.lines[u].0;
        for _ in 0..k {
            let (w, bit) = word_bit(pos.next_pos());
            if line[w].load(Ordering::Acquire) & bit == 0 {
                return false;
            }
        }
        true
    }
}

/// Sets bits of atomic lines (release `fetch_or`, skipped when already set).
pub(crate) struct AtomicSet<'a> {
    pub lines: &'a [AtomicLine],
}

impl BitOp for AtomicSet<'_> {
    #[inline]
    fn apply<P: Positions>(&mut self, u: usize, k: u32, pos: &mut P) -> bool {
        let line = &self.lines[u].0;
        for _ in 0..k {
            let (w, bit) = word_bit(pos.next_pos());
            if line[w].load(Ordering::Relaxed) & bit == 0 {
                line[w].fetch_or(bit, Ordering::Release);
            }
        }
        true
    }
}
