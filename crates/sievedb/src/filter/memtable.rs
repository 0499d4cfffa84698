//! A concurrent, fixed-size Bloom filter for a memtable.
//!
//! Cache-blocked (one 64-byte line per key, rotation scheme on the primary
//! digest `h1`), over atomic words, so any number of writers may insert while
//! readers probe. It uses the same digest as the SST filters built with the
//! same hash function, so under `levels` sharing a lookup that probes the
//! memtable filter and then the SST filters still hashes its key once.
//!
//! Writers must insert a key's digest before the entry becomes visible to
//! readers (inserts are release, probes acquire).

use std::sync::atomic::{AtomicBool, Ordering};

use super::blocked::{self, AtomicLine};
use super::digest::{DigestSource, ProbeSource};
use super::{FilterLayout, FilterOptions, HashFn, IndexScheme, KeyDigest, KeyProbe, Params};
use super::{UnitHashing, MAX_PROBES};

/// A concurrent Bloom filter sized for an expected number of keys.
#[derive(Debug)]
pub struct MemtableFilter {
    p: Params,
    lines: Box<[AtomicLine]>,
    /// Set when a digest of another hash function was inserted: the filter
    /// can no longer rule anything out.
    saturated: AtomicBool,
}

impl MemtableFilter {
    /// A filter for about `expected_keys` keys with the hash function and bits
    /// per key of `opts` (10 bits per key if `opts` disables filters); its
    /// probe count is `round(b · ln 2)` unless `opts.num_probes` is set.
    pub fn new(expected_keys: usize, opts: &FilterOptions) -> Self {
        let b = if opts.enabled() && opts.bits_per_key.is_finite() {
            opts.bits_per_key
        } else {
            10.0
        };
        let k = opts
            .num_probes
            .unwrap_or_else(|| super::options::optimal_probes(b))
            .clamp(1, MAX_PROBES);
        Self::with_params(expected_keys, b, k, opts.hash)
    }

    /// A filter for about `expected_keys` keys at `bits_per_key` with `k`
    /// probes (clamped to [1, 64]) under `hash`.
    pub fn with_params(expected_keys: usize, bits_per_key: f64, k: u32, hash: HashFn) -> Self {
        let lines = blocked::lines_for(expected_keys, bits_per_key);
        MemtableFilter {
            p: Params {
                layout: FilterLayout::Blocked,
                scheme: IndexScheme::Rotation,
                unit_hashing: UnitHashing::Shared,
                hash,
                secondary: hash,
                k: k.clamp(1, MAX_PROBES),
                units: 1,
                unit_bits: lines * blocked::LINE_BITS,
                wpu: 8,
                lines,
                line_fields: blocked::V3_FIELDS_PER_VALUE,
                seed: 0,
                slots: 0,
                frac: 0,
                upper: 0,
                homogeneous: false,
            },
            lines: (0..lines).map(|_| AtomicLine::default()).collect(),
            saturated: AtomicBool::new(false),
        }
    }

    /// The hash function digests must be computed with.
    pub fn hash_fn(&self) -> HashFn {
        self.p.hash
    }

    /// Adds a key by its digest. A digest of another hash function cannot be
    /// placed; it saturates the filter (every probe answers "maybe").
    pub fn insert(&self, d: &KeyDigest) {
        if d.hash_fn != self.p.hash {
            self.saturated.store(true, Ordering::Release);
            return;
        }
        blocked::run(
            &self.p,
            &mut DigestSource(d),
            &mut blocked::AtomicSet { lines: &self.lines },
        );
    }

    /// Adds a key, hashing it.
    pub fn insert_key(&self, key: &[u8]) {
        self.insert(&KeyDigest::compute(self.p.hash, key));
    }

    /// Whether the key of `probe` may have been inserted (false = surely not).
    /// Counts as one filter probe for the probe's sharing mode.
    #[inline]
    pub fn may_contain(&self, probe: &mut KeyProbe<'_>) -> bool {
        if self.saturated.load(Ordering::Acquire) {
            return true;
        }
        probe.begin_filter();
        let mut src = ProbeSource {
            probe,
            f: self.p.hash,
            f2: self.p.hash,
        };
        blocked::run(
            &self.p,
            &mut src,
            &mut blocked::AtomicCheck { lines: &self.lines },
        )
    }

    /// Whether a key with digest `d` may have been inserted.
    #[inline]
    pub fn may_contain_digest(&self, d: &KeyDigest) -> bool {
        if self.saturated.load(Ordering::Acquire) || d.hash_fn != self.p.hash {
            return true;
        }
        blocked::run(
            &self.p,
            &mut DigestSource(d),
            &mut blocked::AtomicCheck { lines: &self.lines },
        )
    }

    /// Probes per key.
    pub fn probes(&self) -> u32 {
        self.p.k
    }

    /// Bits of the filter.
    pub fn total_bits(&self) -> u64 {
        self.p.unit_bits
    }

    /// Bytes of memory the filter holds.
    pub fn memory_bytes(&self) -> usize {
        self.lines.len() * std::mem::size_of::<AtomicLine>() + std::mem::size_of::<Self>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::HashSharing;

    #[test]
    fn concurrent_inserts_no_false_negatives() {
        let f = MemtableFilter::new(40_000, &FilterOptions::default());
        std::thread::scope(|s| {
            for t in 0..4 {
                let f = &f;
                s.spawn(move || {
                    for i in 0..10_000 {
                        f.insert_key(format!("k{t}-{i}").as_bytes());
                    }
                });
            }
        });
        for t in 0..4 {
            for i in 0..10_000 {
                let k = format!("k{t}-{i}");
                let mut p = KeyProbe::new(k.as_bytes(), HashSharing::Levels);
                assert!(f.may_contain(&mut p), "{k}");
            }
        }
        let fp = (0..20_000)
            .filter(|i| {
                let k = format!("absent{i}");
                f.may_contain(&mut KeyProbe::new(k.as_bytes(), HashSharing::Levels))
            })
            .count();
        // Blocked theory at 10 bits/key, k = 7 is ~1.1%.
        assert!(fp < 400, "{fp}");
        assert!(f.memory_bytes() >= 40_000 * 10 / 8);
    }

    #[test]
    fn shares_the_lookup_digest() {
        let f = MemtableFilter::new(10, &FilterOptions::default());
        f.insert(&KeyDigest::compute(HashFn::Murmur64A, b"x"));
        let mut p = KeyProbe::new(b"x", HashSharing::Levels);
        assert!(f.may_contain(&mut p));
        assert!(f.may_contain(&mut p));
        assert_eq!(p.digests_computed, 1);
        assert!(f.may_contain_digest(&p.digest(HashFn::Murmur64A)));
        // A digest of another function saturates instead of losing the key.
        f.insert(&KeyDigest::compute(HashFn::Xxh3, b"y"));
        assert!(f.may_contain(&mut KeyProbe::new(b"y", HashSharing::Levels)));
        assert!(f.may_contain(&mut KeyProbe::new(b"zzz", HashSharing::Levels)));
    }
}
