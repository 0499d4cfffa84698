//! The standard Bloom filter: `k` probes spread over one bit array.

use super::{fast_range, IndexScheme};

/// Number of probes for `bits_per_key`: round(b·ln 2), clamped to [1, 30].
pub fn optimal_probes(bits_per_key: f64) -> u32 {
    ((bits_per_key * std::f64::consts::LN_2).round() as u32).clamp(1, 30)
}

/// Sets the `k` bits of digest `h` in `bits` (length `nbits` bits).
pub fn insert(bits: &mut [u8], nbits: u64, k: u32, scheme: IndexScheme, h: u64) {
    let mut g = h;
    let delta = rotation_delta(h);
    for _ in 0..k {
        let pos = fast_range(g, nbits);
        bits[(pos >> 3) as usize] |= 1 << (pos & 7);
        g = next(scheme, g, delta);
    }
}

/// Whether all `k` bits of digest `h` are set.
#[inline]
pub fn contains(bits: &[u8], nbits: u64, k: u32, scheme: IndexScheme, h: u64) -> bool {
    let mut g = h;
    let delta = rotation_delta(h);
    for _ in 0..k {
        let pos = fast_range(g, nbits);
        if bits[(pos >> 3) as usize] & (1 << (pos & 7)) == 0 {
            return false;
        }
        g = next(scheme, g, delta);
    }
    true
}

#[inline]
fn rotation_delta(h: u64) -> u64 {
    h.rotate_left(17)
}

#[inline]
fn next(_scheme: IndexScheme, g: u64, delta: u64) -> u64 {
    g.wrapping_add(delta)
}
