//! Finding the blocks of an SST whose index cannot be read: every span of
//! the file that a block trailer with a matching checksum closes
//! (`docs/format.md`, "Block trailer"), found in two passes over the file
//! whatever damage lies between the blocks.
//!
//! A block is `body | c: u8 | crc: u32`, `c` a compression byte (0, 1 or
//! 2) and `crc` the masked CRC32C of `body ++ c`. Trying every start
//! against every end would be quadratic; the CRC's algebra matches them
//! instead. With polynomials over GF(2) modulo the CRC's, the CRC32C of the
//! bytes `[a, b)` of the file is `C(a, b) = F(b) + x^(8(b−a)) · F(a)`, where
//! `F(i) = C(0, i)` is the CRC of the file's first `i` bytes (the rule of
//! zlib's `crc32_combine`). So the checksum `T(q)` stored at `q..q + 4`
//! (unmasked) closes a block starting at `s`, covering `[s, q)`, exactly
//! when `x^(−8q) · (F(q) + T(q)) = x^(−8s) · F(s)`: each side depends on
//! one position only (`x` is invertible modulo the polynomial, whose
//! constant term is 1). The first pass computes the left side at every
//! possible end (a byte 0, 1 or 2 with four more bytes after it) and sorts
//! them; the second computes the right side at every start and looks it up.
//! Each match is then checked with the block's own checksum, so the algebra
//! only proposes; what is left is a span whose checksum matches, which a
//! random span does with probability 2^−32, and which the caller must still
//! decode as the block it wants.
//!
//! Cost: per byte, two CRC steps and about two multiplications modulo the
//! polynomial; 8 bytes of memory per possible end. Files of 4 GiB or more
//! are not scanned.

use crate::coding::u32_at;
use crate::sst::{block_crc, TRAILER_LEN};

/// The CRC32C polynomial, bit-reflected: bit 31 holds the coefficient of
/// `x^0`, bit 0 that of `x^31` (the `x^32` term is implied).
const POLY: u32 = 0x82F6_3B78;
/// The polynomial 1.
const ONE: u32 = 1 << 31;
/// `x^−1`: `(P(x) + 1) / x` for the polynomial `P`, whose terms above `x^0`
/// move one degree down (a left shift when reflected) and whose `x^32`
/// becomes `x^31` (bit 0).
const X_INV: u32 = ((POLY & !ONE) << 1) | 1;

/// `a · b` modulo the polynomial.
fn mul(a: u32, mut b: u32) -> u32 {
    let mut p = 0;
    let mut m = ONE;
    while m != 0 {
        p ^= b & u32::from(a & m != 0).wrapping_neg();
        m >>= 1;
        // b · x: one degree up, reduced when x^32 appears.
        b = (b >> 1) ^ (POLY & (b & 1).wrapping_neg());
    }
    p
}

/// Multiplication by one constant, by tables (the product is linear in
/// each byte of the other factor).
struct MulBy([[u32; 256]; 4]);

impl MulBy {
    fn new(c: u32) -> MulBy {
        let mut t = [[0; 256]; 4];
        for (k, row) in t.iter_mut().enumerate() {
            for (v, cell) in row.iter_mut().enumerate() {
                *cell = mul((v as u32) << (8 * k), c);
            }
        }
        MulBy(t)
    }

    fn apply(&self, a: u32) -> u32 {
        let t = &self.0;
        t[0][(a & 0xff) as usize]
            ^ t[1][((a >> 8) & 0xff) as usize]
            ^ t[2][((a >> 16) & 0xff) as usize]
            ^ t[3][(a >> 24) as usize]
    }
}

/// The checksum a block trailer stores, unmasked (the inverse of
/// `wal::mask_crc`).
fn unmask(m: u32) -> u32 {
    m.wrapping_sub(0xa282_ead8).rotate_left(15)
}

/// Every block of `bytes`: `(offset, body length)` of each non-empty span
/// followed by a trailer with a compression byte of 0, 1 or 2 whose
/// checksum matches it, in order of offset (spans may overlap: a span that
/// happens to check inside a real block is the caller's to reject).
pub(super) fn checksummed_blocks(bytes: &[u8]) -> Vec<(usize, usize)> {
    let n = bytes.len();
    if n <= TRAILER_LEN || u32::try_from(n).is_err() {
        return Vec::new();
    }
    let x_inv_8 = (0..8).fold(ONE, |p, _| mul(p, X_INV));
    let step = MulBy::new(x_inv_8);
    // Pass 1: at each end `q` (just past a compression byte, with its
    // checksum at q..q+4), `x^(−8q) · (F(q) + T(q))`. At the top of the
    // loop, f = F(q) and p = x^(−8q).
    let mut ends: Vec<(u32, u32)> = Vec::new();
    let (mut f, mut p) = (0u32, ONE);
    for q in 0..=n - 4 {
        if q >= 2 && bytes[q - 1] <= 2 {
            let t = unmask(u32_at(bytes, q));
            ends.push((mul(p, f ^ t), q as u32));
        }
        f = crc32c::crc32c_append(f, &bytes[q..q + 1]);
        p = step.apply(p);
    }
    ends.sort_unstable();
    // Pass 2: at each start `s`, `x^(−8s) · F(s)`, looked up among the ends.
    let mut out = Vec::new();
    let (mut f, mut p) = (0u32, ONE);
    for s in 0..n - TRAILER_LEN {
        let a = mul(p, f);
        let from = ends.partition_point(|e| e.0 < a);
        for &(_, q) in ends[from..].iter().take_while(|e| e.0 == a) {
            let q = q as usize;
            // A body of at least one byte, and the checksum confirmed.
            if q >= s + 2 && block_crc(&bytes[s..q - 1], bytes[q - 1]) == u32_at(bytes, q) {
                out.push((s, q - 1 - s));
            }
        }
        f = crc32c::crc32c_append(f, &bytes[s..s + 1]);
        p = step.apply(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x`.
    const X: u32 = ONE >> 1;

    fn pow(base: u32, mut e: u64) -> u32 {
        let (mut r, mut b) = (ONE, base);
        while e > 0 {
            if e & 1 == 1 {
                r = mul(r, b);
            }
            b = mul(b, b);
            e >>= 1;
        }
        r
    }

    /// Bytes of a simple generator (no dependency on a seed's library).
    fn noise(seed: u64, len: usize) -> Vec<u8> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 24) as u8
            })
            .collect()
    }

    #[test]
    fn the_algebra_is_the_crcs() {
        assert_eq!(mul(X_INV, X), ONE);
        assert_eq!(mul(ONE, 0x1234_5678), 0x1234_5678);
        let x_inv_8 = (0..8).fold(ONE, |p, _| mul(p, X_INV));
        assert_eq!(mul(x_inv_8, pow(X, 8)), ONE);
        let t = MulBy::new(x_inv_8);
        for v in [0u32, 1, 0xdead_beef, u32::MAX, ONE] {
            assert_eq!(t.apply(v), mul(v, x_inv_8));
        }
        for (la, lb) in [(0, 5), (7, 1), (100, 33), (1, 300)] {
            let a = noise(la as u64, la);
            let b = noise(lb as u64 + 99, lb);
            let whole = crc32c::crc32c(&[a.clone(), b.clone()].concat());
            let shifted = mul(pow(X, 8 * lb as u64), crc32c::crc32c(&a));
            assert_eq!(whole, shifted ^ crc32c::crc32c(&b), "{la}+{lb}");
        }
        assert_eq!(unmask(crate::wal::mask_crc(0x0bad_cafe)), 0x0bad_cafe);
    }

    /// `body` with its trailer (compression byte `c`).
    fn block(body: &[u8], c: u8) -> Vec<u8> {
        let mut b = body.to_vec();
        b.push(c);
        b.extend_from_slice(&block_crc(body, c).to_le_bytes());
        b
    }

    #[test]
    fn finds_every_intact_block_whatever_lies_between() {
        let mut file = noise(1, 37);
        let mut want = Vec::new();
        for (i, len) in [300usize, 1, 4096, 77, 1000, 9].into_iter().enumerate() {
            let body = noise(i as u64 + 10, len);
            let mut b = block(&body, (i % 3) as u8);
            if i == 2 {
                // Damaged: no longer closed by its checksum.
                b[len / 2] ^= 0x40;
            } else {
                want.push((file.len(), len));
            }
            file.extend_from_slice(&b);
            if i == 3 {
                file.extend_from_slice(&noise(5, 123));
            }
        }
        file.extend_from_slice(&noise(2, 64));
        assert_eq!(checksummed_blocks(&file), want);
        // A cut through the last block loses it only.
        let (last, len) = want[want.len() - 1];
        assert_eq!(
            checksummed_blocks(&file[..last + len]),
            want[..want.len() - 1]
        );
        assert!(checksummed_blocks(&file[..4]).is_empty());
    }

    #[test]
    fn unknown_compression_bytes_close_no_block() {
        let body = noise(3, 50);
        let mut b = body.clone();
        b.push(7);
        b.extend_from_slice(&block_crc(&body, 7).to_le_bytes());
        assert!(checksummed_blocks(&b).is_empty());
    }
}
