//! Partitioned filters: a file's filter cut by key range into partitions of
//! about [`FilterOptions::partition_bytes`](super::FilterOptions) each
//! (RocksDB's `partition_filters` with `metadata_block_size`), with a small
//! top-level index that stays resident while the file is open.
//!
//! ```text
//! partition block 0 | trailer … partition block P−1 | trailer  (each: a whole version-3 filter section)
//! filter index | trailer                                      (the footer's filter handle)
//!
//! filter index = version = 5 | header of partition 0 (version 4's fields)
//!                | units: u8 | num_keys: u64 | partitions: u32
//!                | partitions × (keys: u64 | offset: u64 | size: u64
//!                               | last_len: u32 | last user key)
//! ```
//!
//! Partition `i` holds the keys after partition `i − 1`'s last user key up to
//! its own (a user key is never cut: partitions are cut before a new user
//! key); a lookup probes the first partition whose last key is at least its
//! key, with the lookup's one digest (every partition is built with the same
//! hash functions and seeds; a Ribbon partition remixes the digest with its
//! own seed). Partition 0's header gives the parameters every partition
//! shares (layout, hashes, probes).
//!
//! To the filter budget a partitioned filter is [`PARTITION_UNITS`] equal
//! shares of its bytes: `n` units resident means the hottest partitions that
//! fit in `n` shares (hotness counted per partition from the sampled
//! lookups), and its false-positive rate with `n` units is the whole
//! filter's on a share `n / units` of the lookups and 1 on the rest. Without
//! a budget every partition is resident.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use super::{parse_header, truncated, Filter, FilterBuilder, FilterOptions, Params};
use crate::coding::Reader;

/// Version byte of a partitioned filter index.
pub const PARTITIONED_INDEX_VERSION: u8 = 5;

/// Units a partitioned filter shows the budget: shares of its bytes.
pub const PARTITION_UNITS: u32 = 8;

/// Sampled lookups of keys whose partition is not resident after which the
/// budget ranks the file's partitions again (see [`PartitionIndex::stale`]).
pub const RERANK_MISSES: u32 = 16;

/// How many more sampled lookups the hottest partitions must cover than
/// the resident ones (kept, topped up) for a ranking to swap them: 1.25×,
/// and more than the partitions the swap reads.
pub const SWAP_GAIN: f64 = 1.25;

/// Smallest and largest partition size accepted, in bytes.
pub const PARTITION_BYTES_RANGE: std::ops::RangeInclusive<u64> = 64..=(64 << 20);

/// One partition of a file's filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// The last (largest) user key the partition holds.
    pub last: Box<[u8]>,
    /// Keys added to it.
    pub keys: u64,
    /// Offset of its block in the file.
    pub offset: u64,
    /// Size of its block (without the trailer).
    pub size: u64,
}

/// The top-level index of a partitioned filter: where each partition is and
/// which keys it covers, with per-partition hotness.
#[derive(Debug)]
pub struct PartitionIndex {
    parts: Box<[Part]>,
    /// Sampled lookups that probed each partition (halved at each ranking).
    hits: Box<[AtomicU32]>,
    /// Sampled lookups whose partition was not resident, since the last ranking.
    misses: AtomicU32,
}

impl PartitionIndex {
    /// The index of `parts`, in key order.
    pub fn new(parts: Vec<Part>) -> Self {
        let hits = parts.iter().map(|_| AtomicU32::new(0)).collect();
        PartitionIndex {
            parts: parts.into(),
            hits,
            misses: AtomicU32::new(0),
        }
    }

    /// The partitions, in key order.
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// The partition that would hold `key`: the first whose last key is at
    /// least `key` (`None`: beyond every partition).
    #[inline]
    pub fn find(&self, key: &[u8]) -> Option<usize> {
        let i = self.parts.partition_point(|p| &*p.last < key);
        (i < self.parts.len()).then_some(i)
    }

    /// Bytes of every partition's bits.
    pub fn total_bytes(&self) -> u64 {
        self.parts.iter().map(|p| p.size).sum()
    }

    /// Counts a sampled lookup of partition `i`, resident or not.
    #[inline]
    fn note(&self, i: usize, resident: bool) {
        self.hits[i].fetch_add(1, Ordering::Relaxed);
        if !resident {
            self.misses.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether enough sampled lookups missed the resident partitions since
    /// the last ranking that the hottest ones should be chosen again.
    pub fn stale(&self) -> bool {
        self.misses.load(Ordering::Relaxed) >= RERANK_MISSES
    }

    /// The partitions to keep resident in `allowance` bytes, of which those
    /// `resident` now are loaded. The hottest that fit (ties: in key order)
    /// replace the resident ones only when they cover at least
    /// [`SWAP_GAIN`] more sampled lookups than keeping what is resident
    /// (the hottest of it that fit, and the hottest of the rest in the room
    /// left), and by more sampled lookups than the partitions they would
    /// load (a swap repays its reads); else that is kept, so that partitions
    /// about as hot as each other (popular keys scattered over the key
    /// range, counts of a few samples each) are not swapped back and forth
    /// for nothing. Under a 5 bits/key budget on 128 MiB files with zipf
    /// lookups the second condition took the filter reads from 14.3k to
    /// 11.0k in 200k lookups. Ages the hotness (halves it) and resets
    /// the miss count, so that a later ranking follows where the lookups go
    /// now.
    pub fn choose(&self, allowance: u64, resident: impl Fn(usize) -> bool) -> Vec<bool> {
        // One reading of the counts, which lookups bump as this runs.
        let hits = self.hit_counts();
        let hottest = self.hottest_of(&hits, allowance, |_| true);
        let mut kept = self.hottest_of(&hits, allowance, &resident);
        let room = allowance.saturating_sub(self.bytes_of(&kept));
        let more = self.hottest_of(&hits, room, |i| !kept[i]);
        for (k, m) in kept.iter_mut().zip(more) {
            *k |= m;
        }
        let (hot, keep) = (hits_of(&hits, &hottest), hits_of(&hits, &kept));
        let loads = (0..self.parts.len())
            .filter(|&i| hottest[i] && !kept[i])
            .count() as u64;
        let chosen = if hot as f64 >= keep as f64 * SWAP_GAIN && hot.saturating_sub(keep) > loads {
            hottest
        } else {
            kept
        };
        for h in self.hits.iter() {
            h.store(h.load(Ordering::Relaxed) / 2, Ordering::Relaxed);
        }
        self.misses.store(0, Ordering::Relaxed);
        chosen
    }

    /// Bytes of the partitions of `set`.
    fn bytes_of(&self, set: &[bool]) -> u64 {
        self.parts
            .iter()
            .zip(set)
            .filter(|(_, &c)| c)
            .map(|(p, _)| p.size)
            .sum()
    }

    /// The sampled lookups (aged) of every partition, read once.
    fn hit_counts(&self) -> Vec<u32> {
        self.hits
            .iter()
            .map(|h| h.load(Ordering::Relaxed))
            .collect()
    }

    /// The hottest partitions among the `eligible` ones that fit in
    /// `allowance` bytes, hotness unchanged.
    pub fn hottest(&self, allowance: u64, eligible: impl Fn(usize) -> bool) -> Vec<bool> {
        self.hottest_of(&self.hit_counts(), allowance, eligible)
    }

    /// [`hottest`](Self::hottest) by the counts `hits`: sorted on a copy,
    /// not on the counters, which lookups bump during the sort (a sort whose
    /// keys change under it panics: the budget's worker did, on 128 MiB files
    /// under a zipf budget).
    fn hottest_of(
        &self,
        hits: &[u32],
        allowance: u64,
        eligible: impl Fn(usize) -> bool,
    ) -> Vec<bool> {
        let mut order: Vec<usize> = (0..self.parts.len()).filter(|&i| eligible(i)).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(hits[i]), i));
        let mut chosen = vec![false; self.parts.len()];
        let mut left = allowance;
        for i in order {
            if self.parts[i].size <= left {
                left -= self.parts[i].size;
                chosen[i] = true;
            }
        }
        chosen
    }

    /// Encodes the index of partitions `parts` whose first partition is
    /// `first` (its header is the shared parameters), `num_keys` in all.
    pub fn encode(first: &Filter, num_keys: u64, parts: &[Part]) -> Vec<u8> {
        let mut out = Vec::new();
        first.encode_header(PARTITIONED_INDEX_VERSION, &mut out);
        out.push(PARTITION_UNITS as u8);
        out.extend_from_slice(&num_keys.to_le_bytes());
        out.extend_from_slice(&(parts.len() as u32).to_le_bytes());
        for p in parts {
            out.extend_from_slice(&p.keys.to_le_bytes());
            out.extend_from_slice(&p.offset.to_le_bytes());
            out.extend_from_slice(&p.size.to_le_bytes());
            out.extend_from_slice(&(p.last.len() as u32).to_le_bytes());
            out.extend_from_slice(&p.last);
        }
        out
    }

    /// Decodes an index (after its version byte): the shared parameters
    /// (those of partition 0), the virtual units, the keys in all and the
    /// index. Never panics, whatever the bytes.
    pub(crate) fn decode(
        r: &mut Reader<'_>,
    ) -> std::result::Result<(Params, u32, u64, PartitionIndex), String> {
        let (p, _) = parse_header(r, PARTITIONED_INDEX_VERSION)?;
        if p.units != 1 {
            return Err(format!("partition of {} units", p.units));
        }
        let units = u32::from(r.u8().ok_or_else(truncated)?);
        if !(1..=super::MAX_UNITS).contains(&units) {
            return Err(format!("partitioned filter of {units} units"));
        }
        let num_keys = r.u64().ok_or_else(truncated)?;
        let n = r.u32().ok_or_else(truncated)? as usize;
        // Each entry takes at least 28 bytes: a count beyond that is damage.
        if n == 0 || n > r.remaining() / 28 {
            return Err(format!("bad partition count {n}"));
        }
        let mut parts: Vec<Part> = Vec::with_capacity(n);
        for i in 0..n {
            let keys = r.u64().ok_or_else(truncated)?;
            let offset = r.u64().ok_or_else(truncated)?;
            let size = r.u64().ok_or_else(truncated)?;
            let len = r.u32().ok_or_else(truncated)? as usize;
            let last = r.take(len).ok_or_else(truncated)?;
            if parts.last().is_some_and(|q| &*q.last > last) {
                return Err(format!("partition {i} out of key order"));
            }
            parts.push(Part {
                last: last.into(),
                keys,
                offset,
                size,
            });
        }
        if r.remaining() != 0 {
            return Err(format!(
                "{} stray bytes after the partition index",
                r.remaining()
            ));
        }
        Ok((p, units, num_keys, PartitionIndex::new(parts)))
    }
}

/// Indexes are equal when their partitions are (hotness aside).
impl PartialEq for PartitionIndex {
    fn eq(&self, other: &PartitionIndex) -> bool {
        self.parts == other.parts
    }
}

impl Eq for PartitionIndex {}

/// The resident partitions of a partitioned filter (its bits in memory).
#[derive(Clone)]
pub(crate) struct Parts {
    pub index: Arc<PartitionIndex>,
    /// Partition `i`'s filter, when resident.
    pub filters: Box<[Option<Arc<Filter>>]>,
}

impl Parts {
    /// No partition resident.
    pub fn none(index: Arc<PartitionIndex>) -> Parts {
        let filters = index.parts.iter().map(|_| None).collect();
        Parts { index, filters }
    }

    /// Bytes of the resident partitions' bits.
    pub fn bytes(&self) -> usize {
        self.filters
            .iter()
            .flatten()
            .map(|f| f.resident_bytes() as usize)
            .sum()
    }

    /// The resident partitions among `keep` (the others dropped).
    pub fn kept(&self, keep: &[bool]) -> Parts {
        Parts {
            index: self.index.clone(),
            filters: self
                .filters
                .iter()
                .zip(keep)
                .map(|(f, &k)| if k { f.clone() } else { None })
                .collect(),
        }
    }

    /// Probes the partition of `probe`'s key: `None` when it is not resident
    /// (or the key lies beyond every partition). A sampled lookup (one with
    /// an access log) counts towards the partition's hotness.
    #[inline]
    pub fn may_contain(&self, probe: &mut super::KeyProbe<'_>) -> Option<bool> {
        let i = self.index.find(probe.key())?;
        let f = self.filters[i].as_deref();
        if probe.access_log.is_some() {
            self.index.note(i, f.is_some());
        }
        Some(f?.may_contain(probe))
    }
}

impl PartialEq for Parts {
    fn eq(&self, other: &Parts) -> bool {
        Arc::ptr_eq(&self.index, &other.index) && self.filters == other.filters
    }
}

impl Eq for Parts {}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let resident = self.filters.iter().flatten().count();
        write!(f, "Parts({resident} of {} resident)", self.filters.len())
    }
}

/// A partition built: its last user key, its keys, its filter.
pub type BuiltPartition = (Box<[u8]>, u64, Filter);

/// Builds a partitioned filter while an SST is written: one filter per key
/// range of about `partition_bytes`, cut before a new user key.
pub struct PartitionedBuilder {
    opts: FilterOptions,
    /// Keys per partition: `partition_bytes · 8 / bits_per_key`.
    per_part: usize,
    current: FilterBuilder,
    last: Vec<u8>,
    /// Built partitions: (last user key, keys, filter).
    done: Vec<BuiltPartition>,
}

impl PartitionedBuilder {
    /// A builder of filters of `opts` cut into partitions of about
    /// `partition_bytes` bytes.
    pub fn new(opts: &FilterOptions, partition_bytes: u64) -> Self {
        let bits = opts.bits_per_key.max(0.1);
        // Each partition is a whole filter of the layout.
        let opts = &FilterOptions {
            partition_bytes: None,
            ..opts.clone()
        };
        #[expect(
            clippy::cast_sign_loss,
            reason = "bytes and bits per key are positive; `as` saturates"
        )]
        let per_part = ((partition_bytes as f64 * 8.0 / bits) as usize).max(1);
        PartitionedBuilder {
            opts: opts.clone(),
            per_part,
            current: FilterBuilder::new(opts),
            last: Vec::new(),
            done: Vec::new(),
        }
    }

    /// Adds a user key, greater than the one added before.
    pub fn add(&mut self, user_key: &[u8]) {
        if self.current.len() >= self.per_part {
            self.cut();
        }
        self.current.add(user_key);
        self.last.clear();
        self.last.extend_from_slice(user_key);
    }

    fn cut(&mut self) {
        let b = std::mem::replace(&mut self.current, FilterBuilder::new(&self.opts));
        let keys = b.len() as u64;
        self.done
            .push((self.last.as_slice().into(), keys, b.build()));
    }

    /// Whether no key was added.
    pub fn is_empty(&self) -> bool {
        self.done.is_empty() && self.current.is_empty()
    }

    /// The partitions built: (last user key, keys, filter), in key order.
    pub fn finish(mut self) -> Vec<BuiltPartition> {
        if !self.current.is_empty() {
            self.cut();
        }
        self.done
    }
}

/// Sampled lookups (aged, `hits`) of the partitions of `set`.
fn hits_of(hits: &[u32], set: &[bool]) -> u64 {
    hits.iter()
        .zip(set)
        .filter(|(_, &c)| c)
        .map(|(&h, _)| u64::from(h))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::{FilterIndex, FilterLayout, HashSharing, KeyProbe};

    fn built(layout: FilterLayout, n: u64) -> (Vec<BuiltPartition>, Vec<u8>) {
        let o = FilterOptions {
            layout,
            bits_per_key: 10.0,
            ..FilterOptions::default()
        };
        let mut b = PartitionedBuilder::new(&o, 64);
        for i in 0..n {
            b.add(format!("key{i:06}").as_bytes());
        }
        let done = b.finish();
        let parts: Vec<Part> = done
            .iter()
            .enumerate()
            .map(|(i, (last, keys, f))| Part {
                last: last.clone(),
                keys: *keys,
                offset: i as u64 * 4096,
                size: f.encode().len() as u64,
            })
            .collect();
        let index = PartitionIndex::encode(&done[0].2, n, &parts);
        (done, index)
    }

    /// Every key is in the partition a lookup finds, which says "maybe";
    /// the index round-trips; every truncation of it is an error, not a panic.
    #[test]
    fn partitions_cover_their_keys_and_decode() {
        for layout in [
            FilterLayout::Blocked,
            FilterLayout::Bloom,
            FilterLayout::Ribbon,
        ] {
            let (done, bytes) = built(layout, 2000);
            assert!(done.len() > 10, "{layout}: {} partitions", done.len());
            let (index, whole) = FilterIndex::decode(&bytes, 0, bytes.len() as u64).unwrap();
            assert!(whole.is_none());
            let parts = index.partitions().unwrap();
            assert_eq!(parts.parts().len(), done.len());
            assert_eq!(index.units(), PARTITION_UNITS);
            assert_eq!(parts.parts().iter().map(|p| p.keys).sum::<u64>(), 2000);
            for i in 0..2000 {
                let k = format!("key{i:06}");
                let at = parts.find(k.as_bytes()).unwrap();
                let mut probe = KeyProbe::new(k.as_bytes(), HashSharing::Levels);
                assert!(done[at].2.may_contain(&mut probe), "{layout} {k}");
            }
            assert_eq!(parts.find(b"zzz"), None);
            assert_eq!(parts.find(b""), Some(0));
            for cut in 0..bytes.len() {
                assert!(
                    FilterIndex::decode(&bytes[..cut], 0, cut as u64).is_err(),
                    "{cut}"
                );
            }
        }
    }

    /// `n` partitions of one key and 100 bytes each, their last keys in order.
    fn parts_of_100_bytes(n: u32) -> Vec<Part> {
        (0..n)
            .map(|i| Part {
                last: i.to_be_bytes().into(),
                keys: 1,
                offset: 0,
                size: 100,
            })
            .collect()
    }

    /// The hottest partitions fit first; hotness halves at each ranking.
    #[test]
    fn choose_takes_the_hottest_that_fit() {
        let index = PartitionIndex::new(parts_of_100_bytes(4));
        for _ in 0..8 {
            index.note(2, false);
        }
        for _ in 0..4 {
            index.note(3, false);
        }
        assert!(index.stale() == (8 + 4 >= RERANK_MISSES));
        let none = |_: usize| false;
        assert_eq!(index.choose(250, none), vec![false, false, true, true]);
        assert!(!index.stale());
        assert_eq!(index.choose(100, none), vec![false, false, true, false]);
        assert_eq!(index.choose(0, none), vec![false; 4]);
    }

    /// Rankings while lookups count: each sorts the partitions by one
    /// reading of the counts (sorted on the live counters, a count changing
    /// during the sort made it panic, which ended the budget's worker).
    #[test]
    fn rankings_while_lookups_count() {
        let index = Arc::new(PartitionIndex::new(parts_of_100_bytes(256)));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let counting = {
            let (index, stop) = (index.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut x = 1u64;
                while !stop.load(Ordering::Relaxed) {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    index.note((x >> 56) as usize, x & 1 == 0);
                }
            })
        };
        for _ in 0..2_000 {
            let chosen = index.choose(100 * 128, |i| i % 2 == 0);
            assert!(chosen.iter().filter(|&&c| c).count() <= 128);
        }
        stop.store(true, Ordering::Relaxed);
        counting.join().unwrap();
    }

    /// A ranking keeps the resident partitions unless the hottest cover
    /// 1.25× their sampled lookups: partitions about as hot as each other
    /// stay; a range grown hot is taken; room left is topped up.
    #[test]
    fn rankings_swap_only_for_a_gain() {
        let index = PartitionIndex::new(parts_of_100_bytes(4));
        let note = |i: usize, n: u32| (0..n).for_each(|_| index.note(i, false));
        // 0 and 1 resident; 2 a little hotter than 0: kept as it is.
        let resident = |i: usize| i < 2;
        note(0, 10);
        note(1, 10);
        note(2, 12);
        assert_eq!(index.choose(200, resident), vec![true, true, false, false]);
        // Hotness halved (5, 5, 6); now 2 and 3 far hotter: swapped.
        note(2, 20);
        note(3, 30);
        assert_eq!(index.choose(200, resident), vec![false, false, true, true]);
        // Room for a third: the resident two topped up with the hottest other.
        note(0, 40);
        note(1, 40);
        assert_eq!(index.choose(300, resident), vec![true, true, false, true]);
        // Less room than resident: the hottest of the resident kept.
        note(1, 10);
        assert_eq!(index.choose(100, resident), vec![false, true, false, false]);
        // 2 and 3 twice as hot as 0 and 1, but by no more sampled lookups
        // than the two partitions a swap reads: kept; once they are ahead by
        // more, swapped.
        let fresh = PartitionIndex::new(index.parts().to_vec());
        let note = |i: usize, n: u32| (0..n).for_each(|_| fresh.note(i, false));
        note(0, 1);
        note(1, 1);
        note(2, 2);
        note(3, 2);
        assert_eq!(fresh.choose(200, resident), vec![true, true, false, false]);
        note(2, 4);
        note(3, 4);
        assert_eq!(fresh.choose(200, resident), vec![false, false, true, true]);
    }
}
