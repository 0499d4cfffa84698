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
//! The match is exact (each side is a bijective image of the CRC
//! condition), so it finds what a check of every pair would.
//!
//! That includes chance: a span of random bytes closed by a random trailer
//! checks with probability 2^−32, and a file of `n` bytes with `m` possible
//! ends has about `n·m` pairs, so a file of megabytes holds hundreds of
//! spans that check by chance, most of them megabytes long. Blocks abut,
//! though: data blocks follow each other from offset 0, and the blocks after
//! them do too (but for the padding before a filter unit). A block of an
//! intact run starts at 0 or where another span ends, and ends where another
//! starts: it is kept. A span with one such side only (a block beside
//! damage) is kept unless it overlaps a block kept for both sides: a span
//! that checks by chance almost never starts where another ends, and when
//! it ends where a block ends, it starts at a random offset before, across
//! the blocks of an intact run. What is kept is checked again with its own
//! checksum (a guard against a mistake in the algebra, paid only by what is
//! kept), and must still decode as the block its caller wants. A block both
//! of whose neighbours are damaged (three blocks in a row, the middle one
//! intact) is not found.
//!
//! Cost: per byte, two CRC steps, about two multiplications modulo the
//! polynomial and a share of a sort of the starts (a chunk at a time);
//! 8 bytes of memory per possible end, 8 per start of a chunk and 16 per
//! match (about `n·m / 2^32` of them besides the blocks). Files of 4 GiB or
//! more are not scanned.

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

/// The CRC32C of `bytes`, one byte at a time: its register, the complement
/// of the CRC (the state the table steps; `!crc` of no bytes is `!0`).
struct Crc {
    table: [u32; 256],
    reg: u32,
}

impl Crc {
    fn new() -> Crc {
        let mut table = [0u32; 256];
        for (i, t) in table.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = (c >> 1) ^ (POLY & (c & 1).wrapping_neg());
            }
            *t = c;
        }
        Crc { table, reg: !0 }
    }

    /// The CRC32C of the bytes stepped so far.
    fn value(&self) -> u32 {
        !self.reg
    }

    fn step(&mut self, b: u8) {
        self.reg = self.table[((self.reg ^ u32::from(b)) & 0xff) as usize] ^ (self.reg >> 8);
    }
}

/// Starts looked up at once in pass 2: sorted, then merged with the ends.
const CHUNK: usize = 1 << 20;

/// Every block of `bytes`: `(offset, body length)` of each non-empty span
/// followed by a trailer with a compression byte of 0, 1 or 2 whose
/// checksum matches it and which abuts others as the module docs say, in
/// order of offset (spans may overlap: a span that
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
    // loop, crc is F(q) and p = x^(−8q).
    let mut ends: Vec<(u32, u32)> = Vec::new();
    let (mut crc, mut p) = (Crc::new(), ONE);
    for q in 0..=n - 4 {
        if q >= 2 && bytes[q - 1] <= 2 {
            let t = unmask(u32_at(bytes, q));
            ends.push((mul(p, crc.value() ^ t), q as u32));
        }
        crc.step(bytes[q]);
        p = step.apply(p);
    }
    ends.sort_unstable();
    // Pass 2: at each start `s`, `x^(−8s) · F(s)`, matched with the ends:
    // every (start, end of the trailer) whose checksum matches. The starts
    // are taken a chunk at a time, sorted and merged with the sorted ends
    // (one lookup per byte in the ends would miss the cache every time).
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let (mut crc, mut p) = (Crc::new(), ONE);
    let mut chunk: Vec<u64> = Vec::with_capacity(CHUNK.min(n));
    let last = n - TRAILER_LEN;
    let mut from = 0;
    while from < last {
        let to = (from + CHUNK).min(last);
        chunk.clear();
        for (s, &b) in bytes.iter().enumerate().take(to).skip(from) {
            chunk.push((u64::from(mul(p, crc.value())) << 32) | s as u64);
            crc.step(b);
            p = step.apply(p);
        }
        chunk.sort_unstable();
        let mut j = 0;
        for &c in &chunk {
            let (a, s) = ((c >> 32) as u32, c as u32 as usize);
            while j < ends.len() && ends[j].0 < a {
                j += 1;
            }
            for &(_, q) in ends[j..].iter().take_while(|e| e.0 == a) {
                // A body of at least one byte.
                if q as usize >= s + 2 {
                    spans.push((s, q as usize + 4));
                }
            }
        }
        from = to;
    }
    spans.sort_unstable();
    // The spans that abut others (see the module docs), each confirmed by
    // its own checksum.
    let starts: std::collections::HashSet<usize> = spans.iter().map(|s| s.0).collect();
    let stops: std::collections::HashSet<usize> = spans.iter().map(|s| s.1).collect();
    let after = |s: usize| s == 0 || stops.contains(&s);
    let before = |e: usize| starts.contains(&e);
    // The blocks of intact runs, in order (disjoint, so their ends are too).
    let runs: Vec<(usize, usize)> = spans
        .iter()
        .copied()
        .filter(|&(s, e)| after(s) && before(e))
        .collect();
    let in_run = |s: usize, e: usize| {
        let i = runs.partition_point(|r| r.1 <= s);
        i < runs.len() && runs[i].0 < e
    };
    spans
        .into_iter()
        .filter(|&(s, e)| (after(s) && before(e)) || ((after(s) || before(e)) && !in_run(s, e)))
        .filter(|&(s, e)| {
            block_crc(&bytes[s..e - TRAILER_LEN], bytes[e - TRAILER_LEN]) == u32_at(bytes, e - 4)
        })
        .map(|(s, e)| (s, e - TRAILER_LEN - s))
        .collect()
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
        let data = noise(9, 1000);
        let mut crc = Crc::new();
        assert_eq!(crc.value(), 0);
        for &b in &data {
            crc.step(b);
        }
        assert_eq!(crc.value(), crc32c::crc32c(&data));
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
        let mut file = Vec::new();
        let mut want = Vec::new();
        let lens = [300usize, 1, 4096, 77, 1000, 9, 50, 40, 60, 70, 30, 20];
        for (i, len) in lens.into_iter().enumerate() {
            let body = noise(i as u64 + 10, len);
            let mut b = block(&body, (i % 3) as u8);
            if [2, 7, 9].contains(&i) {
                // Damaged: no longer closed by its checksum.
                b[len / 2] ^= 0x40;
            } else if i != 8 {
                // (8 lies between two damaged blocks: not found.)
                want.push((file.len(), len));
            }
            file.extend_from_slice(&b);
            if i == 4 {
                // Padding between blocks.
                file.extend_from_slice(&[0; 123]);
            }
        }
        file.extend_from_slice(&noise(2, 64));
        assert_eq!(checksummed_blocks(&file), want);
        // A cut through the last block loses it, and the one before, whose
        // only neighbour it was (the block before that is damaged).
        let (last, len) = want[want.len() - 1];
        assert_eq!(
            checksummed_blocks(&file[..last + len]),
            want[..want.len() - 2]
        );
        // A cut through the middle of the first run of blocks keeps those
        // before it.
        assert_eq!(checksummed_blocks(&file[..311]), want[..2]);
        assert!(checksummed_blocks(&file[..4]).is_empty());
    }

    /// A file of a megabyte, a quarter of its bytes zero (as in tables): tens
    /// of spans check by chance, and none is taken for a block.
    #[test]
    fn spans_that_check_by_chance_are_not_blocks() {
        let mut file = Vec::new();
        let mut want = Vec::new();
        let mut i = 0u64;
        while file.len() < 1 << 20 {
            let mut body = noise(i + 1000, 4000);
            for (j, b) in body.iter_mut().enumerate() {
                if j % 4 == 0 {
                    *b = 0;
                }
            }
            want.push((file.len(), body.len()));
            file.extend_from_slice(&block(&body, 0));
            i += 1;
        }
        assert_eq!(checksummed_blocks(&file), want);
    }

    /// Four bytes whose CRC32C is `target` (the CRC of four bytes is an
    /// affine bijection of them: solved by Gaussian elimination).
    fn forge(target: u32) -> [u8; 4] {
        let f = |w: u32| crc32c::crc32c(&w.to_le_bytes());
        // Rows: (column of the linear part, the unknown's bit).
        let mut rows: Vec<(u32, u32)> = (0..32).map(|i| (f(1 << i) ^ f(0), 1 << i)).collect();
        let mut want = target ^ f(0);
        let mut w = 0u32;
        for bit in 0..32 {
            let Some(i) = (bit..32).find(|&i| rows[i].0 & (1 << bit) != 0) else {
                continue;
            };
            rows.swap(bit, i);
            let (c, x) = rows[bit];
            for (j, r) in rows.iter_mut().enumerate() {
                if j != bit && r.0 & (1 << bit) != 0 {
                    r.0 ^= c;
                    r.1 ^= x;
                }
            }
        }
        for (bit, &(c, x)) in rows.iter().enumerate() {
            if want & (1 << bit) != 0 {
                assert_eq!(c, 1 << bit);
                w ^= x;
                want ^= c;
            }
        }
        assert_eq!(f(w), target);
        w.to_le_bytes()
    }

    /// A span forged to check by chance from inside the file to the end of a
    /// block (its start random, its end where the next block starts) is not
    /// taken: it overlaps an intact run of blocks.
    #[test]
    fn a_span_ending_where_a_block_ends_by_chance_is_not_a_block() {
        let run: Vec<u8> = (0..4).flat_map(|i| block(&noise(i + 50, 200), 0)).collect();
        let b = block(&noise(60, 100), 0);
        let c = block(&noise(61, 100), 1);
        // crc(w ++ run) = 0, so that crc(w ++ run ++ b's body) = b's checksum.
        let target = mul(pow(X_INV, 8 * run.len() as u64), crc32c::crc32c(&run));
        let w = forge(target);
        assert_eq!(crc32c::crc32c(&[&w[..], &run].concat()), 0);
        let mut file = vec![0xaa];
        file.extend_from_slice(&w);
        file.extend_from_slice(&run);
        let b_at = file.len();
        file.extend_from_slice(&b);
        file.extend_from_slice(&c);
        let q = b_at + b.len() - 4;
        assert_eq!(block_crc(&file[1..q - 1], file[q - 1]), u32_at(&file, q));
        let want: Vec<(usize, usize)> = (0..4)
            .map(|i| (5 + 205 * i, 200))
            .chain([(b_at, 100), (b_at + 105, 100)])
            .collect();
        assert_eq!(checksummed_blocks(&file), want);
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
