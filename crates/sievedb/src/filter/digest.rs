//! The key digest and the per-lookup hashing state.
//!
//! A lookup creates one [`KeyProbe`]; every filter it probes asks the probe for
//! the hashes it needs (the primary digest, a secondary hash for double
//! hashing, or further seeded hashes for the independent scheme and separately
//! hashed filter units). What the probe remembers between filters depends on
//! its [`HashSharing`] mode:
//!
//! * `levels`: every hash is computed at most once per lookup;
//! * `filter`: at most once per filter probed;
//! * `none`: as `filter` (filters built under `none` use the independent
//!   scheme, so each probe of each filter computes its own `k` hashes).

use super::hash::{hash, seed_at, PRIMARY_SEED, SECONDARY_SEED};
use super::{HashFn, HashSharing};
use crate::clock::{ticks, PhaseTicks};
use crate::stats::ReadTally;

pub use super::hash::murmur64a;

/// The digest of one key: the primary 64-bit hash and, when a scheme needs
/// one (double hashing), a secondary hash from a second function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyDigest {
    /// The hash function that produced `h1`.
    pub hash_fn: HashFn,
    /// The primary 64-bit hash (seed [`PRIMARY_SEED`]).
    pub h1: u64,
    /// The secondary function and its hash (seed [`SECONDARY_SEED`]), if
    /// computed.
    pub secondary: Option<(HashFn, u64)>,
}

impl KeyDigest {
    /// Computes the primary digest of `key`.
    pub fn compute(hash_fn: HashFn, key: &[u8]) -> Self {
        KeyDigest {
            hash_fn,
            h1: hash(hash_fn, key, PRIMARY_SEED),
            secondary: None,
        }
    }

    /// Computes the primary digest and the secondary hash under `secondary`.
    pub fn compute_with_secondary(hash_fn: HashFn, secondary: HashFn, key: &[u8]) -> Self {
        KeyDigest {
            hash_fn,
            h1: hash(hash_fn, key, PRIMARY_SEED),
            secondary: Some((secondary, hash(secondary, key, SECONDARY_SEED))),
        }
    }
}

/// Seeded hashes of one key under one function, computed on demand.
#[derive(Default)]
struct SeededCache {
    /// The function the cached values belong to (`None`: nothing cached).
    f: Option<HashFn>,
    /// Bit `i` set: value of seed index `i` is cached.
    mask: u64,
    /// Seed index 0, the digest proper.
    v0: u64,
    /// Seed indices 1..64 (allocated on first use).
    more: Vec<u64>,
}

impl SeededCache {
    #[inline]
    fn clear(&mut self) {
        self.f = None;
        self.mask = 0;
    }

    #[inline]
    fn get0(&self, f: HashFn) -> Option<u64> {
        (self.f == Some(f) && self.mask & 1 != 0).then_some(self.v0)
    }

    /// The value of seed index `idx`, computing it with `compute` on a miss
    /// (the flag says whether it was computed).
    #[inline]
    fn get(&mut self, f: HashFn, idx: u32, compute: impl FnOnce() -> u64) -> (u64, bool) {
        if self.f != Some(f) {
            self.f = Some(f);
            self.mask = 0;
        }
        let cacheable = idx < 64;
        let bit = if cacheable { 1u64 << idx } else { 0 };
        if cacheable && self.mask & bit != 0 {
            let v = if idx == 0 {
                self.v0
            } else {
                self.more[idx as usize]
            };
            return (v, false);
        }
        let v = compute();
        if cacheable {
            if idx == 0 {
                self.v0 = v;
            } else {
                if self.more.is_empty() {
                    self.more.resize(64, 0);
                }
                self.more[idx as usize] = v;
            }
            self.mask |= bit;
        }
        (v, true)
    }
}

/// The hashing state of one lookup: the key and, once computed, its hashes.
pub struct KeyProbe<'a> {
    key: &'a [u8],
    sharing: HashSharing,
    primary: SeededCache,
    secondary: SeededCache,
    /// Primary digests computed so far for this lookup: one per primary key
    /// hash (so one per seeded hash under the independent scheme or separately
    /// hashed units; under `none` sharing, one per hash computation).
    pub digests_computed: u32,
    /// Every key hash computed so far, secondary hashes included.
    pub hashes_computed: u32,
    /// Per-phase time of this lookup, when it is one of the sampled ones.
    timing: Option<PhaseTicks>,
    /// The lookup's read counters, added to the database's when it ends.
    pub tally: ReadTally,
    /// The numbers of the files whose filters this lookup probed, for the
    /// filter budget's allocator: `Some` (the thread's access log, handed
    /// out and taken back by the budget) in one lookup in a few, see
    /// `ACCESS_SAMPLE`; `None` records nothing.
    pub access_log: Option<Vec<u64>>,
}

/// A lookup phase whose time a sampled [`KeyProbe`] accumulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Filter probing (hashing done meanwhile is subtracted: it is `hash` time).
    Filter,
    /// Fence pointers, table cache and index block search.
    Index,
    /// Data block read and search.
    Data,
}

/// The start of a timed phase: the tick count and the hashing ticks so far.
#[derive(Clone, Copy, Debug)]
pub struct PhaseStart(Option<(u64, u64)>);

impl<'a> KeyProbe<'a> {
    /// Starts a lookup of `key`; nothing is hashed yet.
    pub fn new(key: &'a [u8], sharing: HashSharing) -> Self {
        KeyProbe {
            key,
            sharing,
            primary: SeededCache::default(),
            secondary: SeededCache::default(),
            digests_computed: 0,
            hashes_computed: 0,
            timing: None,
            tally: ReadTally::default(),
            access_log: None,
        }
    }

    /// Makes this lookup time its phases (see [`KeyProbe::phase_ticks`]).
    pub fn enable_timing(&mut self) {
        self.timing = Some(PhaseTicks::default());
    }

    /// The ticks spent per phase so far, if timing is enabled.
    pub fn phase_ticks(&self) -> Option<PhaseTicks> {
        self.timing
    }

    /// Starts timing a phase (free when timing is off).
    #[inline]
    pub fn phase_start(&self) -> PhaseStart {
        PhaseStart(self.timing.map(|t| (ticks(), t.hash)))
    }

    /// Ends a phase begun with [`KeyProbe::phase_start`], adding its time.
    #[inline]
    pub fn phase_end(&mut self, start: PhaseStart, phase: Phase) {
        if let (Some((t0, hash0)), Some(t)) = (start.0, self.timing.as_mut()) {
            let elapsed = ticks().wrapping_sub(t0);
            match phase {
                Phase::Filter => {
                    let hashing = t.hash - hash0;
                    t.filter += elapsed.saturating_sub(hashing);
                }
                Phase::Index => t.index += elapsed,
                Phase::Data => t.data += elapsed,
            }
        }
    }

    /// Computes one hash, timing it when timing is on.
    #[inline]
    fn timed_hash(timing: &mut Option<PhaseTicks>, compute: impl FnOnce() -> u64) -> u64 {
        match timing {
            None => compute(),
            Some(t) => {
                let t0 = ticks();
                let v = compute();
                t.hash += ticks().wrapping_sub(t0);
                v
            }
        }
    }

    /// The key being looked up.
    pub fn key(&self) -> &'a [u8] {
        self.key
    }

    /// The sharing mode of this lookup.
    pub fn sharing(&self) -> HashSharing {
        self.sharing
    }

    /// Called by a filter before it probes: forgets everything unless the
    /// lookup shares hashes across levels.
    #[inline]
    pub fn begin_filter(&mut self) {
        if self.sharing != HashSharing::Levels {
            self.primary.clear();
            self.secondary.clear();
        }
    }

    /// The primary hash of seed index 0 (the digest `h1`) under `f`.
    #[inline]
    pub fn h1(&mut self, f: HashFn) -> u64 {
        match self.primary.get0(f) {
            Some(h) => h,
            None => self.primary_at(f, 0),
        }
    }

    /// The primary hash of seed index `idx` under `f`:
    /// `hash(f, key, seed_at(PRIMARY_SEED, idx))`.
    #[inline]
    pub fn primary_at(&mut self, f: HashFn, idx: u32) -> u64 {
        let (key, timing) = (self.key, &mut self.timing);
        let (v, computed) = self.primary.get(f, idx, || {
            Self::timed_hash(timing, || hash(f, key, seed_at(PRIMARY_SEED, idx)))
        });
        if computed {
            self.digests_computed += 1;
            self.hashes_computed += 1;
        }
        v
    }

    /// The secondary hash of seed index `idx` under `f`:
    /// `hash(f, key, seed_at(SECONDARY_SEED, idx))`.
    #[inline]
    pub fn secondary_at(&mut self, f: HashFn, idx: u32) -> u64 {
        let (key, timing) = (self.key, &mut self.timing);
        let (v, computed) = self.secondary.get(f, idx, || {
            Self::timed_hash(timing, || hash(f, key, seed_at(SECONDARY_SEED, idx)))
        });
        if computed {
            self.hashes_computed += 1;
        }
        v
    }

    /// The primary digest under `f` (computed on first use, then cached as the
    /// sharing mode allows).
    #[inline]
    pub fn digest(&mut self, f: HashFn) -> KeyDigest {
        KeyDigest {
            hash_fn: f,
            h1: self.h1(f),
            secondary: None,
        }
    }

    /// The digest under `f` with the secondary hash under `secondary`.
    pub fn digest_with_secondary(&mut self, f: HashFn, secondary: HashFn) -> KeyDigest {
        KeyDigest {
            hash_fn: f,
            h1: self.h1(f),
            secondary: Some((secondary, self.secondary_at(secondary, 0))),
        }
    }
}

/// Where a filter gets a key's hashes from: a lookup's [`KeyProbe`] or the
/// hashes a builder computed when the key was added.
pub(crate) trait HashSource {
    /// Primary hash of seed index `idx`.
    fn primary(&mut self, idx: u32) -> u64;
    /// Secondary hash of seed index `idx`.
    fn secondary(&mut self, idx: u32) -> u64;
}

/// A [`KeyProbe`] bound to a filter's hash functions.
pub(crate) struct ProbeSource<'p, 'k> {
    pub probe: &'p mut KeyProbe<'k>,
    pub f: HashFn,
    pub f2: HashFn,
}

impl HashSource for ProbeSource<'_, '_> {
    #[inline]
    fn primary(&mut self, idx: u32) -> u64 {
        if idx == 0 {
            self.probe.h1(self.f)
        } else {
            self.probe.primary_at(self.f, idx)
        }
    }
    #[inline]
    fn secondary(&mut self, idx: u32) -> u64 {
        self.probe.secondary_at(self.f2, idx)
    }
}

/// Precomputed hashes of one key: `primaries` primary values then the
/// secondary ones.
pub(crate) struct RowSource<'r> {
    pub row: &'r [u64],
    pub primaries: usize,
}

impl HashSource for RowSource<'_> {
    #[inline]
    fn primary(&mut self, idx: u32) -> u64 {
        self.row[idx as usize]
    }
    #[inline]
    fn secondary(&mut self, idx: u32) -> u64 {
        self.row[self.primaries + idx as usize]
    }
}

/// A [`KeyDigest`] as a hash source (seed index 0 only).
pub(crate) struct DigestSource<'d>(pub &'d KeyDigest);

impl HashSource for DigestSource<'_> {
    #[inline]
    fn primary(&mut self, _idx: u32) -> u64 {
        self.0.h1
    }
    #[inline]
    fn secondary(&mut self, _idx: u32) -> u64 {
        self.0.secondary.map_or(0, |(_, h)| h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caching_by_mode() {
        let key = b"some key";
        let mut p = KeyProbe::new(key, HashSharing::Levels);
        for _ in 0..5 {
            p.begin_filter();
            assert_eq!(p.h1(HashFn::Murmur64A), murmur64a(key, PRIMARY_SEED));
        }
        assert_eq!(p.digests_computed, 1);
        // A different function replaces the cached digest.
        p.begin_filter();
        p.h1(HashFn::Xxh3);
        assert_eq!(p.digests_computed, 2);

        let mut p = KeyProbe::new(key, HashSharing::Filter);
        for _ in 0..5 {
            p.begin_filter();
            p.h1(HashFn::Murmur64A);
            p.h1(HashFn::Murmur64A);
        }
        assert_eq!(p.digests_computed, 5);

        let mut p = KeyProbe::new(key, HashSharing::None);
        for _ in 0..3 {
            p.begin_filter();
            for i in 0..7 {
                p.primary_at(HashFn::Xxh64, i);
            }
        }
        assert_eq!(p.digests_computed, 21);

        let mut p = KeyProbe::new(key, HashSharing::Levels);
        let d = p.digest_with_secondary(HashFn::Murmur64A, HashFn::Crc32c);
        assert_eq!(
            d,
            KeyDigest::compute_with_secondary(HashFn::Murmur64A, HashFn::Crc32c, key)
        );
        assert_eq!((p.digests_computed, p.hashes_computed), (1, 2));
        for i in 0..100 {
            // Seed indices beyond the cache are recomputed, never wrong.
            assert_eq!(
                p.primary_at(HashFn::City64, i),
                hash(HashFn::City64, key, seed_at(PRIMARY_SEED, i))
            );
        }
    }
}
