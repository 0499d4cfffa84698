//! Index schemes: the generators of a key's bit positions in a range `[0, m)`.
//!
//! Positions are reduced with Lemire's multiply-shift ([`fast_range`]) or, for
//! enhanced double hashing, with conditional subtraction; no `%` is evaluated
//! on the probe path.

use super::digest::HashSource;

/// Maps a 64-bit hash onto `[0, n)` without division (Lemire's multiply-shift:
/// the high word of `h·n`).
#[inline]
pub fn fast_range(h: u64, n: u64) -> u64 {
    ((u128::from(h) * u128::from(n)) >> 64) as u64
}

/// `fast_range` for a 32-bit value: `(x·n) >> 32`, in `[0, n)`.
#[inline]
pub fn fast_range32(x: u32, n: u64) -> u64 {
    ((u128::from(x) * u128::from(n)) >> 32) as u64
}

/// A sequence of positions in `[0, m)`.
pub(crate) trait Positions {
    /// The next position.
    fn next_pos(&mut self) -> u64;
    /// Skips `n` positions (without hashing for the independent scheme).
    fn skip(&mut self, n: u32);
}

/// `g_i = g_0 + i·d` on 64 bits, position `fast_range(g_i, m)`: the rotation
/// scheme (`d = rotl(h, 17)`) and double hashing (`d = h2`).
#[derive(Clone, Copy)]
pub(crate) struct Stepper {
    g: u64,
    d: u64,
    m: u64,
}

/// The rotation increment: the 64-bit analogue of LevelDB's
/// `(h >> 17) | (h << 15)` on 32 bits, `δ = rotl64(h, 17)`.
#[inline]
pub fn rotation_delta(h: u64) -> u64 {
    h.rotate_left(17)
}

impl Stepper {
    /// The rotation scheme on digest `h`.
    #[inline]
    pub fn rotation(h: u64, m: u64) -> Self {
        Stepper {
            g: h,
            d: rotation_delta(h),
            m,
        }
    }

    /// Double hashing on `h1`, `h2`.
    #[inline]
    pub fn double(h1: u64, h2: u64, m: u64) -> Self {
        Stepper { g: h1, d: h2, m }
    }
}

impl Positions for Stepper {
    #[inline]
    fn next_pos(&mut self) -> u64 {
        let p = fast_range(self.g, self.m);
        self.g = self.g.wrapping_add(self.d);
        p
    }
    #[inline]
    fn skip(&mut self, n: u32) {
        self.g = self.g.wrapping_add(self.d.wrapping_mul(u64::from(n)));
    }
}

/// Enhanced double hashing (Dillinger & Manolios 2004; Kirsch & Mitzenmacher's
/// `g_i = h1 + i·h2 + (i³ − i)/6 mod m`): `a`, `b` are the high and low 32-bit
/// halves of one digest, `x = fast_range32(a, m)`, `y = fast_range32(b, m)`;
/// each step `x ← x + y`, `y ← y + i` modulo `m` by a branch-free conditional
/// subtraction.
/// Requires `m ≥ 64` (at most 64 probes, so `i < m`).
#[derive(Clone, Copy)]
pub(crate) struct Enhanced {
    x: u64,
    y: u64,
    i: u64,
    m: u64,
}

impl Enhanced {
    /// The scheme on digest `h` over `[0, m)`.
    #[inline]
    pub fn new(h: u64, m: u64) -> Self {
        debug_assert!(m >= 64);
        Enhanced {
            x: fast_range32((h >> 32) as u32, m),
            y: fast_range32(h as u32, m),
            i: 0,
            m,
        }
    }
}

impl Positions for Enhanced {
    #[inline]
    fn next_pos(&mut self) -> u64 {
        let p = self.x;
        self.i += 1;
        // Branch-free `v mod m` for `v < 2m`: when `v < m`, `v − m` wraps to a
        // larger number and `min` keeps `v`.
        let x = self.x + self.y;
        self.x = x.min(x.wrapping_sub(self.m));
        let y = self.y + self.i;
        self.y = y.min(y.wrapping_sub(self.m));
        p
    }
    #[inline]
    fn skip(&mut self, n: u32) {
        for _ in 0..n {
            self.next_pos();
        }
    }
}

/// The independent scheme: position `i` is `fast_range(hash_i, m)` with
/// `hash_i` the primary hash of seed index `i`, fetched only when needed.
/// `first` replaces `hash_0` (the blocked layout uses the bits of `h1` left
/// over after choosing the line).
pub(crate) struct Independent<'s, S: HashSource> {
    pub src: &'s mut S,
    pub idx: u32,
    pub m: u64,
    pub first: Option<u64>,
}

impl<S: HashSource> Positions for Independent<'_, S> {
    #[inline]
    fn next_pos(&mut self) -> u64 {
        let h = match (self.idx, self.first) {
            (0, Some(h)) => h,
            (i, _) => self.src.primary(i),
        };
        self.idx += 1;
        fast_range(h, self.m)
    }
    #[inline]
    fn skip(&mut self, n: u32) {
        self.idx += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enhanced_matches_closed_form() {
        // g_i = x0 + i·y0 + (i³ − i)/6 (mod m).
        for &(h, m) in &[
            (0x1234_5678_9abc_def0u64, 1000u64),
            (u64::MAX, 64),
            (7, 512),
        ] {
            let x0 = fast_range32((h >> 32) as u32, m);
            let y0 = fast_range32(h as u32, m);
            let mut e = Enhanced::new(h, m);
            for i in 0..64u64 {
                let want = (x0 + i * y0 + (i * i * i - i) / 6) % m;
                assert_eq!(e.next_pos(), want, "i={i} m={m}");
            }
        }
    }

    #[test]
    fn stepper_skip_matches_next() {
        let mut a = Stepper::rotation(0xdead_beef_1234_5678, 999);
        let mut b = a;
        for _ in 0..5 {
            a.next_pos();
        }
        b.skip(5);
        assert_eq!(a.next_pos(), b.next_pos());
        assert_eq!(fast_range(u64::MAX, 10), 9);
        assert_eq!(fast_range(0, 10), 0);
    }
}
