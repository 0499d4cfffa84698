//! The cache-blocked Bloom filter (Putze, Sanders & Singler): the digest's
//! high bits choose one 512-bit line (`fast_range(h1, lines)`), and all `k`
//! probes fall inside it.
//!
//! In-line positions: the index scheme runs on `r`, the low 64 bits of
//! `h1 · lines` (the bits of `h1` not consumed by the line choice), with its
//! usual arithmetic on 64 bits (rotation, double with `h2`) or on the two 32-bit
//! halves of `r` (enhanced double, modulo 2^32), and each value `g_i` becomes a
//! position by [`line_pos`], a xor-shift-multiply taking the top 9 bits. Taking
//! `g_i mod 512` directly would make the positions an arithmetic progression
//! modulo 512 (only 2^18 patterns), which costs up to +70% FPR over the
//! blocked-Bloom theory at 16 bits/key; the mix removes that. The independent
//! scheme uses `fast_range(r, 512)` then `fast_range(primary(i), 512)`.

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
pub fn lines_for(n: usize, bits_per_key: f64) -> u64 {
    let lines = (n as f64 * bits_per_key / LINE_BITS as f64).ceil();
    if lines.is_finite() && lines >= 1.0 {
        lines as u64
    } else {
        1
    }
}

/// Runs `op` on the line and in-line positions of a key.
#[inline]
pub(crate) fn run<S: HashSource, O: BitOp>(p: &Params, src: &mut S, op: &mut O) -> bool {
    let h = src.primary(0);
    let prod = u128::from(h) * u128::from(p.lines);
    let line = (prod >> 64) as usize;
    let rest = prod as u64;
    let k = p.k;
    match p.scheme {
        IndexScheme::Rotation => op.apply(
            line,
            k,
            &mut LineStep {
                g: rest,
                d: rotation_delta(rest),
            },
        ),
        IndexScheme::Double => {
            let h2 = src.secondary(0);
            op.apply(line, k, &mut LineStep { g: rest, d: h2 })
        }
        IndexScheme::EnhancedDouble => op.apply(
            line,
            k,
            &mut LineEnhanced {
                x: (rest >> 32) as u32,
                y: rest as u32,
                i: 0,
            },
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

/// Multiplier of [`line_pos`] (the 64-bit golden ratio, odd).
const LINE_MIX: u64 = 0x9e37_79b9_7f4a_7c15;

/// In-line position of scheme value `v`: `((v ^ (v >> 32)) · LINE_MIX) >> 55`.
#[inline]
pub fn line_pos(v: u64) -> u64 {
    (v ^ (v >> 32)).wrapping_mul(LINE_MIX) >> 55
}

/// Rotation / double hashing in a line: `g_{i+1} = g_i + d`, `p_i = line_pos(g_i)`.
struct LineStep {
    g: u64,
    d: u64,
}

impl Positions for LineStep {
    #[inline]
    fn next_pos(&mut self) -> u64 {
        let p = line_pos(self.g);
        self.g = self.g.wrapping_add(self.d);
        p
    }
    #[inline]
    fn skip(&mut self, n: u32) {
        self.g = self.g.wrapping_add(self.d.wrapping_mul(u64::from(n)));
    }
}

/// Enhanced double hashing in a line, modulo 2^32:
/// `p_i = line_pos(x_i << 32 | y_i)`, `x_{i+1} = x_i + y_i`, `y_{i+1} = y_i + (i+1)`.
struct LineEnhanced {
    x: u32,
    y: u32,
    i: u32,
}

impl Positions for LineEnhanced {
    #[inline]
    fn next_pos(&mut self) -> u64 {
        let p = line_pos((u64::from(self.x) << 32) | u64::from(self.y));
        self.i += 1;
        self.x = self.x.wrapping_add(self.y);
        self.y = self.y.wrapping_add(self.i);
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
    #[inline]
    fn apply<P: Positions>(&mut self, u: usize, k: u32, pos: &mut P) -> bool {
        // Branch-free: all probes hit the same cache line, so testing every
        // bit costs less than mispredicting an early exit.
        let line = &self.lines[u].0;
        let mut missing = 0u64;
        for _ in 0..k {
            let (w, bit) = word_bit(pos.next_pos());
            missing |= !line[w] & bit;
        }
        missing == 0
    }
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
