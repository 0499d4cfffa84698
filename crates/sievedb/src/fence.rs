//! Fence pointers of a sorted run: which file may hold a key.
//!
//! A run's files are disjoint and sorted, so the file for a key is the first
//! whose largest user key is `>=` it. Searching the files' keys directly costs
//! a pointer chase and a `memcmp` per step, and long keys (the papers use up to
//! 1 KB) usually share a long prefix. [`Fences`] keeps, per file, the 8 bytes
//! of the largest user key that follow the prefix all of the run's largest keys
//! share, as a big-endian `u64` (zero-padded): a binary search over one small
//! array of integers decides most steps, and only files whose 8 bytes equal the
//! key's are compared in full.
//!
//! Invariant: `words[i]` is [`word_at`]`(largest_user(files[i]), prefix.len())`
//! and every largest user key starts with `prefix`. Padded big-endian words
//! order like the bytes they cover: `word(a) < word(b)` implies `a < b`, so a
//! strictly smaller word decides the comparison and an equal one defers to the
//! full keys.

use std::cmp::Ordering;

/// The fence index of one run (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct Fences {
    /// The prefix every largest user key of the run starts with.
    prefix: Vec<u8>,
    /// Per file, the 8 bytes after `prefix` of its largest user key.
    words: Vec<u64>,
}

/// The 8 bytes of `key` from `offset` on, big-endian, zero-padded.
#[inline]
fn word_at(key: &[u8], offset: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(rest) = key.get(offset..) {
        let n = rest.len().min(8);
        b[..n].copy_from_slice(&rest[..n]);
    }
    u64::from_be_bytes(b)
}

impl Fences {
    /// The fences of files whose largest user keys are `largest`, in order.
    pub fn new<'a>(largest: impl Iterator<Item = &'a [u8]> + Clone) -> Self {
        let mut keys = largest.clone();
        let Some(first) = keys.next() else {
            return Fences::default();
        };
        let common = keys.fold(first.len(), |n, k| {
            n.min(first.iter().zip(k).take_while(|(a, b)| a == b).count())
        });
        let prefix = first[..common].to_vec();
        let words = largest.map(|k| word_at(k, common)).collect();
        Fences { prefix, words }
    }

    /// Number of files indexed.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether no file is indexed.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The index of the first file whose largest user key is `>= key`
    /// (`len()` if none); `largest(i)` gives file `i`'s largest user key,
    /// compared only when the fences cannot decide.
    #[inline]
    pub fn search<'a>(&self, key: &[u8], largest: impl Fn(usize) -> &'a [u8]) -> usize {
        let p = self.prefix.len();
        match key[..p.min(key.len())].cmp(&self.prefix[..p.min(key.len())]) {
            Ordering::Less => return 0,
            Ordering::Greater => return self.words.len(),
            // A key shorter than the prefix is a proper prefix of every
            // largest key, so smaller than all of them.
            Ordering::Equal if key.len() < p => return 0,
            Ordering::Equal => {}
        }
        let w = word_at(key, p);
        let mut lo = self.words.partition_point(|&x| x < w);
        let mut hi = lo + self.words[lo..].partition_point(|&x| x == w);
        // Files whose word ties with the key's: compare their keys.
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if largest(mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// Fences answer like a binary search on the keys, for random sorted
    /// key sets with long shared prefixes, empty keys and zero bytes.
    #[test]
    fn search_matches_the_keys() {
        let mut rng = SmallRng::seed_from_u64(7);
        for round in 0..2000 {
            let alphabet: &[u8] = if round % 2 == 0 { b"\0\x01a" } else { b"ab" };
            let mut key = |rng: &mut SmallRng| -> Vec<u8> {
                let shared = if rng.gen_bool(0.7) { 12 } else { 0 };
                let len = shared + rng.gen_range(0..12);
                (0..len)
                    .map(|i| {
                        if i < shared {
                            b'x'
                        } else {
                            alphabet[rng.gen_range(0..alphabet.len())]
                        }
                    })
                    .collect()
            };
            let mut keys: Vec<Vec<u8>> = (0..rng.gen_range(0..12)).map(|_| key(&mut rng)).collect();
            keys.sort();
            keys.dedup();
            let fences = Fences::new(keys.iter().map(|k| k.as_slice()));
            assert_eq!(fences.len(), keys.len());
            for _ in 0..20 {
                let probe = if !keys.is_empty() && rng.gen_bool(0.3) {
                    keys[rng.gen_range(0..keys.len())].clone()
                } else {
                    key(&mut rng)
                };
                let want = keys.partition_point(|k| k.as_slice() < probe.as_slice());
                let got = fences.search(&probe, |i| keys[i].as_slice());
                assert_eq!(got, want, "{keys:?} {probe:?}");
            }
        }
    }
}
