//! The hash functions a filter can be built with, behind one seeded signature.
//!
//! Every function is exposed as `fn(key, seed) -> u64`. Seed 0 always gives the
//! published (reference) function, so the test vectors below apply directly;
//! other seeds are the function's own seeding where it has one, otherwise the
//! construction documented on each function. Filters derive their seeds from
//! [`PRIMARY_SEED`] / [`SECONDARY_SEED`] with [`seed_at`] (see
//! `docs/format.md`); those constants are part of the on-disk format.

use super::HashFn;
use md5::Digest as _;

/// Seed of the primary hash (seed index 0). Part of the format: version-1
/// filters were built with it as well.
pub const PRIMARY_SEED: u64 = 0x05ee_d0f5_137e;

/// Seed of the secondary hash of the double-hashing scheme (seed index 0).
pub const SECONDARY_SEED: u64 = 0x2545_f491_4f6c_dd1d;

/// Distance between consecutive seed indices (the 64-bit golden ratio).
pub const SEED_STEP: u64 = 0x9e37_79b9_7f4a_7c15;

/// Seed of index `index` derived from `base`: `base + index · SEED_STEP`
/// (wrapping). Index 0 is `base` itself.
#[inline]
pub fn seed_at(base: u64, index: u32) -> u64 {
    base.wrapping_add(u64::from(index).wrapping_mul(SEED_STEP))
}

/// Hashes `key` with `f` and `seed`.
#[inline]
pub fn hash(f: HashFn, key: &[u8], seed: u64) -> u64 {
    match f {
        HashFn::Murmur64A => murmur64a(key, seed),
        HashFn::Xxh3 => xxhash_rust::xxh3::xxh3_64_with_seed(key, seed),
        HashFn::Xxh64 => xxhash_rust::xxh64::xxh64(key, seed),
        HashFn::Murmur3 => murmur3_x64_128(key, seed).0,
        HashFn::Crc32c => crc32c_64(key, seed),
        HashFn::City64 => city64(key, seed),
        HashFn::Md5 => md5_64(key, seed),
        HashFn::Sha256 => sha256_64(key, seed),
    }
}

const M64A: u64 = 0xc6a4_a793_5bd1_e995;

/// MurmurHash64A (Austin Appleby's 64-bit MurmurHash2), little-endian reads.
pub fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const R: u32 = 47;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M64A);
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        #[expect(clippy::expect_used, reason = "`chunks_exact(8)` yields 8-byte chunks")]
        let mut k = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M64A);
        k ^= k >> R;
        k = k.wrapping_mul(M64A);
        h ^= k;
        h = h.wrapping_mul(M64A);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        h ^= le_partial(tail);
        h = h.wrapping_mul(M64A);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M64A);
    h ^= h >> R;
    h
}

/// Up to 8 bytes read as a little-endian integer.
#[inline]
fn le_partial(b: &[u8]) -> u64 {
    b.iter()
        .enumerate()
        .fold(0u64, |acc, (i, &x)| acc | (u64::from(x) << (8 * i)))
}

/// The MurmurHash3 64-bit finaliser (`fmix64`).
#[inline]
pub fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// MurmurHash3_x64_128; returns `(h1, h2)`, i.e. the two little-endian
/// halves of the 16-byte output. The reference takes a 32-bit seed and starts
/// both lanes at it; here both lanes start at the 64-bit `seed`, which is the
/// reference function for every seed below 2^32. [`HashFn::Murmur3`] uses `h1`
/// (the output truncated to its first 8 bytes).
pub fn murmur3_x64_128(key: &[u8], seed: u64) -> (u64, u64) {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    #[inline]
    fn mix1(k: u64) -> u64 {
        k.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
    }
    #[inline]
    fn mix2(k: u64) -> u64 {
        k.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
    }
    let (mut h1, mut h2) = (seed, seed);
    let mut blocks = key.chunks_exact(16);
    for b in &mut blocks {
        #[expect(
            clippy::expect_used,
            reason = "the halves of a 16-byte chunk are 8 bytes each"
        )]
        let k1 = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        #[expect(
            clippy::expect_used,
            reason = "the halves of a 16-byte chunk are 8 bytes each"
        )]
        let k2 = u64::from_le_bytes(b[8..].try_into().expect("8 bytes"));
        h1 ^= mix1(k1);
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= mix2(k2);
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    if tail.len() > 8 {
        h2 ^= mix2(le_partial(&tail[8..]));
    }
    if !tail.is_empty() {
        h1 ^= mix1(le_partial(&tail[..tail.len().min(8)]));
    }
    let len = key.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

/// Init of the high CRC lane (XORed with the seed's high half).
const CRC_HI_INIT: u32 = 0x9e37_79b9;

/// The two CRC32C lanes of [`crc32c_64`]: `(lo, hi)` with
/// `lo = CRC32C(key)` continued from `seed as u32` and
/// `hi = CRC32C(key)` continued from `(seed >> 32) as u32 ^ 0x9e3779b9`.
/// For seed 0, `lo` is the standard CRC-32C of `key`.
#[inline]
pub fn crc32c_lanes(key: &[u8], seed: u64) -> (u32, u32) {
    let lo = crc32c::crc32c_append(seed as u32, key);
    let hi = crc32c::crc32c_append((seed >> 32) as u32 ^ CRC_HI_INIT, key);
    (lo, hi)
}

/// CRC32C-based 64-bit hash: `fmix64(hi << 32 | lo)` over the two lanes of
/// [`crc32c_lanes`] (hardware CRC32C where available).
///
/// Two CRCs of the same bytes differ by a constant that depends only on the
/// length (CRC is affine in its init), so the concatenation alone carries 32
/// bits of key entropy and a linear structure; the MurmurHash3 finaliser makes
/// every output bit depend on both lanes so fast-range's high bits are well
/// mixed. Same-length keys still collide with probability 2^-32.
#[inline]
pub fn crc32c_64(key: &[u8], seed: u64) -> u64 {
    let (lo, hi) = crc32c_lanes(key, seed);
    fmix64((u64::from(hi) << 32) | u64::from(lo))
}

/// CityHash64 (v1.1): `CityHash64(key)` for seed 0, else
/// `CityHash64WithSeed(key, seed)`.
#[inline]
pub fn city64(key: &[u8], seed: u64) -> u64 {
    if seed == 0 {
        cityhasher::hash::<u64>(key)
    } else {
        cityhasher::hash_with_seed::<u64>(key, seed)
    }
}

/// The first 8 bytes of MD5, read little-endian: of `key` for seed 0, else of
/// `seed.to_le_bytes() ‖ key`.
pub fn md5_64(key: &[u8], seed: u64) -> u64 {
    let mut h = md5::Md5::new();
    if seed != 0 {
        h.update(seed.to_le_bytes());
    }
    h.update(key);
    first8(&h.finalize())
}

/// The first 8 bytes of SHA-256, read little-endian: of `key` for seed 0,
/// else of `seed.to_le_bytes() ‖ key`.
pub fn sha256_64(key: &[u8], seed: u64) -> u64 {
    let mut h = sha2::Sha256::new();
    if seed != 0 {
        h.update(seed.to_le_bytes());
    }
    h.update(key);
    first8(&h.finalize())
}

#[inline]
fn first8(d: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SMHasher's `VerificationTest` (Austin Appleby, smhasher `main.cpp` /
    /// `KeysetTest.cpp`): hash keys `{}`, `{0}`, `{0,1}`, … `{0..254}` with seed
    /// `256 - len`, concatenate the little-endian outputs, hash that with seed 0
    /// and take the first 4 bytes little-endian.
    fn smhasher_verification(hashbytes: usize, f: impl Fn(&[u8], u64) -> Vec<u8>) -> u32 {
        let key: Vec<u8> = (0..=255u8).collect();
        let mut all = Vec::with_capacity(256 * hashbytes);
        for i in 0..256usize {
            let out = f(&key[..i], 256 - i as u64);
            assert_eq!(out.len(), hashbytes);
            all.extend_from_slice(&out);
        }
        let fin = f(&all, 0);
        u32::from_le_bytes(fin[..4].try_into().unwrap())
    }

    #[test]
    fn murmur64a_smhasher_verification() {
        // smhasher main.cpp: { MurmurHash64A_test, 64, 0x1F0D3804, "Murmur2B" }.
        let v = smhasher_verification(8, |k, s| murmur64a(k, s).to_le_bytes().to_vec());
        assert_eq!(v, 0x1F0D_3804);
        // MurmurHash64A of the empty key with seed 0 is 0 (h = 0 throughout).
        assert_eq!(murmur64a(b"", 0), 0);
    }

    #[test]
    fn murmur3_x64_128_vectors() {
        // smhasher main.cpp: { MurmurHash3_x64_128, 128, 0x6384BA69, "Murmur3F" }.
        let v = smhasher_verification(16, |k, s| {
            let (a, b) = murmur3_x64_128(k, s);
            [a.to_le_bytes(), b.to_le_bytes()].concat()
        });
        assert_eq!(v, 0x6384_BA69);
        // Empty key, seed 0: all-zero output (reference MurmurHash3.cpp).
        assert_eq!(murmur3_x64_128(b"", 0), (0, 0));
        // "The quick brown fox jumps over the lazy dog", seed 0: widely published
        // x64_128 digest 6c1b07bc7bbc4be347939ac4a93c437a (e.g. the murmur3 crate's
        // and Python mmh3's test suites); h1 = its first 8 bytes little-endian.
        let (h1, h2) = murmur3_x64_128(b"The quick brown fox jumps over the lazy dog", 0);
        assert_eq!(h1, 0xe34b_bc7b_bc07_1b6c);
        assert_eq!(h2, 0x7a43_3ca9_c49a_9347);
        // Seeded cross-checks, computed with the `murmur3` crate 0.5.2
        // (`murmur3_x64_128`, whose u128 result is h2 << 64 | h1).
        assert_eq!(
            murmur3_x64_128(b"abc", 7),
            (0x6660_e038_84df_f827, 0xd55f_9449_c6d9_969b)
        );
        assert_eq!(
            murmur3_x64_128(b"0123456789abcdefXYZ", 123_456),
            (0xbb43_4a06_4f36_e4f5, 0xf2dd_31b7_eecf_899c)
        );
        assert_eq!(
            murmur3_x64_128(b"", 1),
            (0x4610_abe5_6eff_5cb5, 0x5162_2daa_78f8_3583)
        );
    }

    #[test]
    fn xxhash_vectors() {
        // xxHash reference (xxhsum sanity checks / README): XXH64("", 0) and
        // XXH3_64bits("", 0).
        assert_eq!(hash(HashFn::Xxh64, b"", 0), 0xEF46_DB37_51D8_E999);
        assert_eq!(hash(HashFn::Xxh3, b"", 0), 0x2D06_8005_38D3_94C2);
        // smhasher main.cpp: { XXH64_test, 64, 0x024B7CF4, "XXHash64" }.
        let v = smhasher_verification(8, |k, s| {
            xxhash_rust::xxh64::xxh64(k, s).to_le_bytes().to_vec()
        });
        assert_eq!(v, 0x024B_7CF4);
    }

    #[test]
    fn crc32c_vectors() {
        // CRC-32C (Castagnoli, "CRC-32/ISCSI") check value of "123456789":
        // 0xE3069283 (Williams' CRC catalogue; RFC 3720 B.4 uses the same CRC).
        assert_eq!(crc32c_lanes(b"123456789", 0).0, 0xE306_9283);
        assert_eq!(crc32c_lanes(b"", 0).0, 0);
        let (lo, hi) = crc32c_lanes(b"123456789", 0);
        assert_eq!(
            crc32c_64(b"123456789", 0),
            fmix64((u64::from(hi) << 32) | u64::from(lo))
        );
        // The lanes are affine in their init: lo ^ hi depends only on the length.
        let a = crc32c_lanes(b"aaaa", 7);
        let b = crc32c_lanes(b"bcde", 7);
        assert_eq!(a.0 ^ a.1, b.0 ^ b.1);
    }

    #[test]
    fn city64_vectors() {
        // google/cityhash src/city-test.cc (v1.1): testdata[i][0] is
        // CityHash64(data + i*i, i) and testdata[i][1] CityHash64WithSeed(..,
        // kSeed0 = 1234567) over the generated `data` buffer below.
        const K0: u64 = 0xc3a5_c85c_97cb_3127;
        let mut data = vec![0u8; 100 * 100 + 100];
        let (mut a, mut b) = (9u64, 777u64);
        for (i, d) in data.iter_mut().enumerate() {
            a = a.wrapping_add(b);
            b = b.wrapping_add(a);
            a = (a ^ (a >> 41)).wrapping_mul(K0);
            b = (b ^ (b >> 41)).wrapping_mul(K0).wrapping_add(i as u64);
            *d = (b >> 37) as u8;
        }
        let at = |i: usize| &data[i * i..i * i + i];
        assert_eq!(city64(at(0), 0), 0x9ae1_6a3b_2f90_404f);
        assert_eq!(city64(at(0), 1_234_567), 0x7510_6db8_9023_7a4a);
        assert_eq!(city64(at(1), 0), 0x5411_50e8_7f41_5e96);
        assert_eq!(city64(at(1), 1_234_567), 0x1aef_0d24_b314_8a1a);
        assert_eq!(city64(at(60), 0), 0xb5b5_8c24_b53a_aa19);
        assert_eq!(city64(at(60), 1_234_567), 0xd2a6_ab07_73dd_897f);
        assert_eq!(city64(at(99), 0), 0xdccb_5534_a893_ea1a);
        assert_eq!(city64(at(99), 1_234_567), 0xce71_c398_708c_6131);
        // The crate's documented example: cityhasher::hash::<u64>("world").
        assert_eq!(city64(b"world", 0), 16_436_542_438_370_751_598);
    }

    #[test]
    fn md5_sha256_vectors() {
        // RFC 1321 A.5: MD5("") = d41d8cd98f00b204e9800998ecf8427e.
        assert_eq!(
            md5_64(b"", 0),
            u64::from_le_bytes([0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04])
        );
        // RFC 1321 A.5: MD5("abc") = 900150983cd24fb0d6963f7d28e17f72.
        assert_eq!(
            md5_64(b"abc", 0),
            u64::from_le_bytes([0x90, 0x01, 0x50, 0x98, 0x3c, 0xd2, 0x4f, 0xb0])
        );
        // FIPS 180-2 / NIST: SHA-256("") = e3b0c44298fc1c149afbf4c8996fb924...
        assert_eq!(
            sha256_64(b"", 0),
            u64::from_le_bytes([0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14])
        );
        // FIPS 180-2 Appendix B.1: SHA-256("abc") = ba7816bf8f01cfea...
        assert_eq!(
            sha256_64(b"abc", 0),
            u64::from_le_bytes([0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea])
        );
        // Seeded: the seed's bytes are prepended.
        let mut pre = 42u64.to_le_bytes().to_vec();
        pre.extend_from_slice(b"abc");
        assert_eq!(md5_64(b"abc", 42), md5_64(&pre, 0));
        assert_eq!(sha256_64(b"abc", 42), sha256_64(&pre, 0));
    }

    #[test]
    fn seeds_change_every_function() {
        for &f in HashFn::ALL {
            let a = hash(f, b"some key", seed_at(PRIMARY_SEED, 0));
            let b = hash(f, b"some key", seed_at(PRIMARY_SEED, 1));
            assert_ne!(a, b, "{f}");
            assert_eq!(a, hash(f, b"some key", PRIMARY_SEED), "{f}");
        }
    }
}
