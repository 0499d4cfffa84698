//! Fence pointers of a sorted run: which file may hold a key.
//!
//! A run's files are disjoint and sorted, so the file for a key is the first
//! whose largest user key is `>=` it, if its smallest user key is `<=` it.
//! Searching the files' keys directly costs pointer chases and a `memcmp` per
//! step, and long keys (the papers use up to 1 KB) usually share a long
//! prefix. [`Fences`] keeps, per file, the 8 bytes of its smallest and largest
//! user keys that follow the prefix all of the run's keys share, as big-endian
//! `u64`s (zero-padded): a binary search over one small array of integers
//! decides most steps, and only keys whose 8 bytes equal the probed key's are
//! compared in full.
//!
//! Invariant: `upper[i]` / `lower[i]` are `word_at``(key, prefix.len())` of
//! file `i`'s largest / smallest user key, and every such key starts with
//! `prefix`. Padded big-endian words order like the bytes they cover:
//! `word(a) < word(b)` implies `a < b`, so a strictly smaller word decides a
//! comparison and an equal one defers to the full keys.

use std::cmp::Ordering;

/// The fence index of one run (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct Fences {
    /// The prefix every smallest and largest user key of the run starts with.
    prefix: Vec<u8>,
    /// Per file, the 8 bytes after `prefix` of its largest user key.
    upper: Vec<u64>,
    /// Per file, the 8 bytes after `prefix` of its smallest user key.
    lower: Vec<u64>,
}

/// The 8 bytes of `key` from `offset` on, big-endian, zero-padded (also
/// the fences of a table's index, `sst::fences`).
#[inline]
pub(crate) fn word_at(key: &[u8], offset: usize) -> u64 {
    // The common case, 8 whole bytes, in one load (no copy of a variable length).
    if let Some(w) = key.get(offset..offset.wrapping_add(8)) {
        #[expect(
            clippy::expect_used,
            reason = "`get(offset..offset + 8)` returned 8 bytes"
        )]
        return u64::from_be_bytes(w.try_into().expect("8 bytes"));
    }
    let mut b = [0u8; 8];
    if let Some(rest) = key.get(offset..) {
        let n = rest.len().min(8);
        b[..n].copy_from_slice(&rest[..n]);
    }
    u64::from_be_bytes(b)
}

/// `a == b` for slices of equal length, 8 bytes at a time and inline (the
/// prefixes compared here are short; a `memcmp` call would cost more).
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    debug_assert_eq!(a.len(), b.len());
    #[expect(clippy::expect_used, reason = "an 8-byte range converts to [u8; 8]")]
    let word = |s: &[u8], i: usize| u64::from_ne_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    let n = a.len();
    if n < 8 {
        return a == b;
    }
    let mut i = 0;
    while i + 8 < n {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    // The last 8 bytes (overlapping the previous word when n is not a multiple of 8).
    word(a, n - 8) == word(b, n - 8)
}

/// `words` with `new[i]` inserted at position `at[i]` of `words` (sorted
/// positions), in one pass.
fn merged(words: &[u64], at: &[usize], new: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(words.len() + new.len());
    let mut pos = 0;
    for (&a, &w) in at.iter().zip(new) {
        out.extend_from_slice(&words[pos..a]);
        pos = a;
        out.push(w);
    }
    out.extend_from_slice(&words[pos..]);
    out
}

impl Fences {
    /// The fences of files whose `(smallest, largest)` user keys are `bounds`,
    /// in key order.
    pub fn new<'a>(bounds: impl Iterator<Item = (&'a [u8], &'a [u8])> + Clone) -> Self {
        let mut keys = bounds.clone().flat_map(|(lo, hi)| [lo, hi]);
        let Some(first) = keys.next() else {
            return Fences::default();
        };
        let common = keys.fold(first.len(), |n, k| {
            n.min(first.iter().zip(k).take_while(|(a, b)| a == b).count())
        });
        let (lower, upper) = bounds
            .map(|(lo, hi)| (word_at(lo, common), word_at(hi, common)))
            .unzip();
        Fences {
            prefix: first[..common].to_vec(),
            upper,
            lower,
        }
    }

    /// Drops the fences of the files `keep` rejects (`keep[i]` for file `i`),
    /// as the run drops those files: the other keys still start with the
    /// prefix, so their words stand. Fences of another length than `keep`
    /// (never built) are left as they are.
    pub fn retain(&mut self, keep: &[bool]) {
        if self.upper.len() != keep.len() {
            return;
        }
        for words in [&mut self.upper, &mut self.lower] {
            let mut i = 0;
            words.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
    }

    /// Inserts the fences of files whose user keys are `bounds` (`lo..=hi`
    /// each) at positions `at` (as [`crate::version::Files`] inserts them:
    /// positions before any goes in, nondecreasing), in one pass over the
    /// words whatever the number of files. `false`, changing nothing, when
    /// a key does not start with the prefix or a position is past the end:
    /// the fences must then be built again ([`Fences::new`]).
    pub fn insert_sorted<'a>(
        &mut self,
        at: &[usize],
        bounds: impl Iterator<Item = (&'a [u8], &'a [u8])> + Clone,
    ) -> bool {
        let prefixed = |k: &[u8]| k.starts_with(&self.prefix);
        if at.last().is_some_and(|&a| a > self.upper.len())
            || !bounds.clone().all(|(lo, hi)| prefixed(lo) && prefixed(hi))
        {
            return false;
        }
        debug_assert!(at.windows(2).all(|w| w[0] <= w[1]));
        let p = self.prefix.len();
        let upper: Vec<u64> = bounds.clone().map(|(_, hi)| word_at(hi, p)).collect();
        let lower: Vec<u64> = bounds.map(|(lo, _)| word_at(lo, p)).collect();
        debug_assert_eq!(at.len(), upper.len(), "one position per file");
        self.upper = merged(&self.upper, at, &upper);
        self.lower = merged(&self.lower, at, &lower);
        true
    }

    /// Whether these fences index the files whose `(smallest, largest)`
    /// user keys are `bounds` (the module's invariant; for checks).
    pub fn indexes<'a>(&self, bounds: impl ExactSizeIterator<Item = (&'a [u8], &'a [u8])>) -> bool {
        let p = self.prefix.len();
        let word = |k: &[u8], w: u64| k.starts_with(&self.prefix) && word_at(k, p) == w;
        bounds.len() == self.upper.len()
            && bounds
                .enumerate()
                .all(|(i, (lo, hi))| word(lo, self.lower[i]) && word(hi, self.upper[i]))
    }

    /// Number of files indexed.
    pub fn len(&self) -> usize {
        self.upper.len()
    }

    #[cfg(any(test, feature = "internals"))]
    /// Whether no file is indexed.
    pub fn is_empty(&self) -> bool {
        self.upper.is_empty()
    }

    /// The index of the file that may hold `key`: the first whose largest
    /// user key is `>= key`, if its smallest is `<= key`. `smallest(i)` and
    /// `largest(i)` give file `i`'s user keys, compared only when the fences
    /// cannot decide.
    #[inline]
    pub fn find<'a>(
        &self,
        key: &[u8],
        smallest: impl Fn(usize) -> &'a [u8],
        largest: impl Fn(usize) -> &'a [u8],
    ) -> Option<usize> {
        let p = self.prefix.len();
        let n = p.min(key.len());
        // A key that differs from the prefix, or is a proper prefix of it,
        // lies before or after every file.
        if key.len() < p || !same_bytes(&key[..n], &self.prefix) {
            return None;
        }
        let w = word_at(key, p);
        let lo = self.first_upper_at_or_after(key, w, largest);
        let starts_before = match self.lower.get(lo)?.cmp(&w) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => smallest(lo) <= key,
        };
        starts_before.then_some(lo)
    }

    /// The index of the first file whose largest user key is `>= key` (the
    /// number of files when none is), as `partition_point` over the largest
    /// keys finds it, but deciding most steps on the words.
    #[inline]
    pub fn first_ending_at_or_after<'a>(
        &self,
        key: &[u8],
        largest: impl Fn(usize) -> &'a [u8],
    ) -> usize {
        let p = self.prefix.len();
        let n = p.min(key.len());
        // Every largest key starts with the prefix: a key that differs from
        // it is below or above all of them, and a key that is a proper
        // prefix of it is below all of them.
        match key[..n].cmp(&self.prefix[..n]) {
            Ordering::Less => 0,
            Ordering::Greater => self.upper.len(),
            Ordering::Equal if key.len() < p => 0,
            Ordering::Equal => self.first_upper_at_or_after(key, word_at(key, p), largest),
        }
    }

    /// [`first_ending_at_or_after`](Self::first_ending_at_or_after) of a
    /// key that starts with the prefix, whose word is `w`.
    #[inline]
    fn first_upper_at_or_after<'a>(
        &self,
        key: &[u8],
        w: u64,
        largest: impl Fn(usize) -> &'a [u8],
    ) -> usize {
        let mut lo = self.upper.partition_point(|&x| x < w);
        // Ties are rare (keys whose 8 bytes equal a bound's): look for their
        // end only when there is one.
        let mut hi = match self.upper.get(lo) {
            Some(&x) if x == w => lo + 1 + self.upper[lo + 1..].partition_point(|&x| x == w),
            _ => lo,
        };
        // Files whose upper word ties with the key's: compare their keys.
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

    #[test]
    fn same_bytes_compares_every_byte() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n as u8).collect();
            assert!(same_bytes(&a, &a.clone()));
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x80;
                assert!(!same_bytes(&a, &b), "n {n} i {i}");
            }
        }
    }

    /// Fences kept up by `retain` and `insert_sorted` index the files as
    /// fences built afresh do, and answer the same; an insert whose keys
    /// leave the prefix is refused.
    #[test]
    fn fences_kept_up_by_retain_and_insert_index_the_files() {
        let key = |i: u32| format!("user{i:08}").into_bytes();
        let mut files: Vec<(Vec<u8>, Vec<u8>)> =
            (0..100).map(|i| (key(10 * i), key(10 * i + 5))).collect();
        fn view(f: &[(Vec<u8>, Vec<u8>)]) -> Vec<(&[u8], &[u8])> {
            f.iter()
                .map(|(a, b)| (a.as_slice(), b.as_slice()))
                .collect()
        }
        let mut fences = Fences::new(view(&files).into_iter());
        // Drop every third file, then put files into two of the gaps.
        let keep: Vec<bool> = (0..files.len()).map(|i| i % 3 != 0).collect();
        fences.retain(&keep);
        let mut i = 0;
        files.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        let new: Vec<_> = [0u32, 301, 303, 601]
            .map(|lo| (key(lo), key(lo + 1)))
            .into();
        let at: Vec<usize> = new
            .iter()
            .map(|f| files.partition_point(|g| g.0 < f.0))
            .collect();
        assert!(fences.insert_sorted(&at, view(&new).into_iter()));
        files.extend(new);
        files.sort();
        assert!(fences.indexes(view(&files).into_iter()));
        let fresh = Fences::new(view(&files).into_iter());
        for probe in (0..1010).map(key) {
            let got = fences.find(&probe, |i| &files[i].0, |i| &files[i].1);
            let want = fresh.find(&probe, |i| &files[i].0, |i| &files[i].1);
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&probe));
        }
        // A key outside the prefix ("user") is refused and changes nothing.
        let before = fences.len();
        let outside: [(&[u8], &[u8]); 2] = [(&key(3), &key(4)), (b"aaa", b"user00000001")];
        assert!(!fences.insert_sorted(&[0, 0], outside.into_iter()));
        let past: [(&[u8], &[u8]); 1] = [(&key(5000), &key(5001))];
        assert!(!fences.insert_sorted(&[before + 1], past.into_iter()));
        assert_eq!(fences.len(), before);
        assert!(fences.indexes(view(&files).into_iter()));
        // Fences of another length are left alone by `retain`.
        let mut unbuilt = Fences::default();
        unbuilt.retain(&[true, false]);
        assert_eq!(unbuilt.len(), 0);
    }

    /// Fences answer like a binary search on the files' keys (`find` and
    /// `first_ending_at_or_after`), for random
    /// sorted files with long shared prefixes, gaps, empty keys and zero
    /// bytes, from none to hundreds of files.
    #[test]
    fn find_matches_a_search_of_the_keys() {
        let mut rng = SmallRng::seed_from_u64(7);
        for round in 0..2000 {
            let alphabet: &[u8] = if round % 2 == 0 { b"\0\x01a" } else { b"ab" };
            let key = |rng: &mut SmallRng| -> Vec<u8> {
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
            // Every fifth round a run of up to ~300 files.
            let n = if round % 5 == 0 {
                rng.gen_range(0..600)
            } else {
                rng.gen_range(0..24)
            };
            let mut keys: Vec<Vec<u8>> = (0..n).map(|_| key(&mut rng)).collect();
            keys.sort();
            keys.dedup();
            // Files: consecutive key pairs (a file may hold one key), with gaps.
            let files: Vec<(&[u8], &[u8])> = keys
                .chunks(2)
                .step_by(if round % 3 == 0 { 2 } else { 1 })
                .map(|c| (c[0].as_slice(), c[c.len() - 1].as_slice()))
                .collect();
            let fences = Fences::new(files.iter().copied());
            assert_eq!(fences.len(), files.len());
            for _ in 0..20 {
                let probe = if !keys.is_empty() && rng.gen_bool(0.4) {
                    keys[rng.gen_range(0..keys.len())].clone()
                } else {
                    key(&mut rng)
                };
                let i = files.partition_point(|f| f.1 < probe.as_slice());
                let want = files.get(i).filter(|f| f.0 <= probe.as_slice()).map(|_| i);
                let got = fences.find(&probe, |i| files[i].0, |i| files[i].1);
                assert_eq!(got, want, "{files:?} {probe:?}");
                // Its first bytes too (prefix seeks search by a prefix,
                // which may be shorter than the run's shared prefix).
                let cut = &probe[..rng.gen_range(0..=probe.len())];
                for p in [probe.as_slice(), cut] {
                    let first = files.partition_point(|f| f.1 < p);
                    let got = fences.first_ending_at_or_after(p, |i| files[i].1);
                    assert_eq!(got, first, "{files:?} {p:?}");
                }
            }
        }
    }
}
