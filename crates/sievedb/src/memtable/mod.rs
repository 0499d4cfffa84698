//! The memtable: internal keys in an arena skiplist (one writer, lock-free readers).
//!
//! Invariant: entries are never removed from a memtable; it is frozen when full,
//! flushed to an L0 SST and then dropped whole. The skiplist itself, with
//! its arena and the `unsafe` that makes readers lock-free, is [`skiplist`].

pub mod skiplist;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use self::skiplist::{Cursor, SkipList};
use crate::batch::{BatchEntry, EntryKind};
use crate::error::Result;
use crate::filter::prefix::MemtablePrefixFilter;
use crate::filter::{KeyProbe, MemtableFilter};
use crate::iter::InternalIterator;
use crate::key::{self, Kind, SeqNo};
use crate::range_del::{self, RangeTombstone};

/// Result of a point lookup in a memtable or table.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The newest visible entry is a value.
    Value(Vec<u8>),
    /// The newest visible entry is a tombstone.
    Deleted,
    /// No visible entry for the key.
    Absent,
    /// The newest visible entry is a merge operand: the answer needs the
    /// key's older entries too (see [`crate::merge`]).
    Merge,
}

impl Lookup {
    /// What the newest visible entry, of kind byte `kind`, answers.
    #[inline]
    pub fn of(kind: u8, value: &[u8]) -> Lookup {
        match kind {
            k if k == Kind::Put as u8 => Lookup::Value(value.to_vec()),
            k if k == Kind::Merge as u8 => Lookup::Merge,
            _ => Lookup::Deleted,
        }
    }
}

/// A memtable.
pub struct Memtable {
    list: SkipList,
    /// Number of the WAL whose records this memtable holds (changed only
    /// while it is empty: [`Memtable::renumber`]).
    wal_number: AtomicU64,
    /// Filter over the user keys inserted, if enabled. Invariant: a key is in
    /// the filter before its entry is in the list.
    filter: Option<MemtableFilter>,
    /// Filter over the prefixes of the user keys inserted, if a prefix
    /// extractor is set (same invariant as `filter`).
    prefix_filter: Option<MemtablePrefixFilter>,
    /// Range tombstones, kept beside the list sorted by start (see
    /// [`range_del::sort`]); reads look at them only when `has_range_dels`.
    range_dels: RwLock<Vec<RangeTombstone>>,
    /// Set (release) once a tombstone is in `range_dels`: the common path
    /// of a read is one load of this flag.
    has_range_dels: AtomicBool,
    /// Approximate bytes of `range_dels` (kept as they are added, so that
    /// sizing the memtable on the write path does not walk them).
    range_del_bytes: AtomicUsize,
    /// The database's last sequence number when the memtable was frozen:
    /// no entry of it is newer (0 while it is active).
    sealed_seq: AtomicU64,
}

impl Memtable {
    /// An empty memtable backed by WAL `wal_number`, without a filter.
    pub fn new(wal_number: u64) -> Self {
        Self::with_filter(wal_number, None)
    }

    /// An empty memtable backed by WAL `wal_number` whose user keys are also
    /// added to `filter`.
    pub fn with_filter(wal_number: u64, filter: Option<MemtableFilter>) -> Self {
        Memtable {
            list: SkipList::new(key::compare),
            wal_number: AtomicU64::new(wal_number),
            filter,
            prefix_filter: None,
            range_dels: RwLock::new(Vec::new()),
            has_range_dels: AtomicBool::new(false),
            range_del_bytes: AtomicUsize::new(0),
            sealed_seq: AtomicU64::new(0),
        }
    }

    /// The memtable with `f` over the prefixes of the keys inserted from now
    /// on (set while it is empty).
    #[must_use]
    pub fn with_prefix_filter(mut self, f: Option<MemtablePrefixFilter>) -> Self {
        debug_assert!(self.is_empty());
        self.prefix_filter = f;
        self
    }

    /// Whether the memtable may hold a key of `probe`'s prefix under the
    /// extractor named `extractor`: false only when its prefix filter rules
    /// the prefix out (a memtable of no entry, range tombstones aside, holds
    /// none).
    #[inline]
    pub fn may_contain_prefix(&self, extractor: &str, probe: &mut KeyProbe<'_>) -> bool {
        if self.list.is_empty() {
            return false;
        }
        self.prefix_filter
            .as_ref()
            .is_none_or(|f| f.may_contain(extractor, probe))
    }

    /// Records that the memtable is frozen with the database at sequence
    /// `seq` (no entry of it is newer).
    pub fn seal(&self, seq: SeqNo) {
        self.sealed_seq.store(seq, Ordering::Release);
    }

    /// The sequence number it was frozen at ([`seal`](Self::seal)).
    pub fn sealed_seq(&self) -> SeqNo {
        self.sealed_seq.load(Ordering::Acquire)
    }

    /// The newest sequence number of a write to `user_key` in this memtable:
    /// a put, delete or merge of it, or a range tombstone covering it (0:
    /// none).
    pub fn newest_write(&self, user_key: &[u8]) -> SeqNo {
        let mut seek = Vec::with_capacity(user_key.len() + 8);
        key::append_internal_key(&mut seek, user_key, key::MAX_SEQ, Kind::Merge as u8);
        let c = self.list.seek(&seek);
        let point = if c.valid() && key::user_key(c.key()) == user_key {
            key::seq_of(c.key())
        } else {
            0
        };
        point.max(self.max_covering(user_key, key::MAX_SEQ))
    }

    /// The newest sequence number of a write into the user keys
    /// `start..end` (`end` `None`: unbounded) in this memtable: an entry of
    /// one of them, or a range tombstone overlapping them (0: none). Walks
    /// the memtable's entries in the range.
    pub fn newest_write_in(&self, start: &[u8], end: Option<&[u8]>) -> SeqNo {
        let mut seek = Vec::with_capacity(start.len() + 8);
        key::append_internal_key(&mut seek, start, key::MAX_SEQ, Kind::Merge as u8);
        let mut c = self.list.seek(&seek);
        let mut newest = 0;
        while c.valid() && end.is_none_or(|e| key::user_key(c.key()) < e) {
            newest = newest.max(key::seq_of(c.key()));
            c.next();
        }
        if self.has_range_dels() {
            for t in self.range_dels.read().iter() {
                let starts_before_end = end.is_none_or(|e| t.start.as_slice() < e);
                let ends_after_start = t.end.as_ref().is_none_or(|te| te.as_slice() > start);
                if starts_before_end && ends_after_start {
                    newest = newest.max(t.seq);
                }
            }
        }
        newest
    }

    /// The memtable's filter, if it has one.
    pub fn filter(&self) -> Option<&MemtableFilter> {
        self.filter.as_ref()
    }

    /// Whether the memtable may hold `probe`'s key: false only when its
    /// filter rules the key out (hashing through `probe`, so the digest is
    /// shared with the SST filters).
    #[inline]
    pub fn may_contain(&self, probe: &mut KeyProbe<'_>) -> bool {
        self.filter.as_ref().is_none_or(|f| f.may_contain(probe))
    }

    /// The WAL this memtable's entries were logged to.
    pub fn wal_number(&self) -> u64 {
        self.wal_number.load(Ordering::Acquire)
    }

    /// Moves an empty memtable to WAL `wal_number` (a memtable switch keeps
    /// the empty memtables of idle keyspaces instead of freezing them). The
    /// caller holds the WAL lock, so no write enters it meanwhile.
    pub fn renumber(&self, wal_number: u64) {
        debug_assert!(self.is_empty());
        self.wal_number.store(wal_number, Ordering::Release);
    }

    /// Inserts one entry. Callers serialise inserts (the WAL lock, or recovery).
    pub fn insert(&self, seq: SeqNo, kind: Kind, user_key: &[u8], value: &[u8]) {
        if let Some(f) = &self.filter {
            // Before the list insert, which publishes the entry (release).
            f.insert_key(user_key);
        }
        if let Some(f) = &self.prefix_filter {
            f.insert_key(user_key);
        }
        let trailer = key::trailer(seq, kind as u8).to_le_bytes();
        self.list.insert([user_key, &trailer], value);
    }

    /// Applies one decoded batch entry written at `seq`.
    pub fn apply(&self, seq: SeqNo, e: &BatchEntry<'_>) {
        match e.kind {
            EntryKind::Put => self.insert(seq, Kind::Put, e.key, e.value),
            EntryKind::Delete => self.insert(seq, Kind::Delete, e.key, &[]),
            EntryKind::Merge => self.insert(seq, Kind::Merge, e.key, e.value),
            EntryKind::DeleteRange | EntryKind::DeleteRangeToEnd => {
                #[expect(
                    clippy::expect_used,
                    reason = "a DeleteRange or DeleteRangeToEnd entry decodes to a range tombstone"
                )]
                self.insert_range_del(e.range_tombstone(seq).expect("a range delete"));
            }
        }
    }

    /// Adds a range tombstone (callers serialise inserts, as for [`insert`](Self::insert)).
    pub fn insert_range_del(&self, t: RangeTombstone) {
        let bytes = t.start.len() + t.end.as_ref().map_or(0, Vec::len) + 32;
        self.range_del_bytes.fetch_add(bytes, Ordering::Relaxed);
        let mut ts = self.range_dels.write();
        let at = ts.partition_point(|x| x.start < t.start || (x.start == t.start && x.seq > t.seq));
        ts.insert(at, t);
        self.has_range_dels.store(true, Ordering::Release);
    }

    /// Whether the memtable holds a range tombstone.
    #[inline]
    pub fn has_range_dels(&self) -> bool {
        self.has_range_dels.load(Ordering::Acquire)
    }

    /// A copy of the range tombstones, sorted by start.
    pub fn range_dels(&self) -> Vec<RangeTombstone> {
        if !self.has_range_dels() {
            return Vec::new();
        }
        self.range_dels.read().clone()
    }

    /// The newest sequence `<= read_seq` of the tombstones covering
    /// `user_key` (0: none).
    pub fn max_covering(&self, user_key: &[u8], read_seq: SeqNo) -> SeqNo {
        if !self.has_range_dels() {
            return 0;
        }
        range_del::max_covering(&self.range_dels.read(), user_key, read_seq)
    }

    /// Approximate bytes held.
    pub fn approximate_size(&self) -> usize {
        self.list.bytes() + self.range_del_bytes.load(Ordering::Relaxed)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether the memtable holds no entry and no range tombstone.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty() && !self.has_range_dels()
    }

    /// The newest entry for `user_key` visible at the seek key `seek`
    /// (`user_key` + the trailer of the read sequence, see
    /// [`key::append_internal_key`]); an entry with sequence `<= covered`
    /// (hidden by a range tombstone of that sequence) reads as deleted.
    pub fn get(&self, user_key: &[u8], seek: &[u8], covered: SeqNo) -> Lookup {
        let c = self.list.seek(seek);
        if !c.valid() || key::user_key(c.key()) != user_key {
            return Lookup::Absent;
        }
        if key::seq_of(c.key()) <= covered {
            return Lookup::Deleted;
        }
        Lookup::of(key::kind_of(c.key()), c.value())
    }

    /// An iterator over all entries in internal-key order.
    pub fn iter(self: &Arc<Self>) -> MemIter {
        MemIter {
            cursor: None,
            mem: self.clone(),
        }
    }
}

/// Iterator over a memtable; keeps the memtable alive.
pub struct MemIter {
    /// Borrows from `mem.list`; the `'static` is sound because `mem` keeps the
    /// list alive for as long as this iterator, and cursors have no drop glue.
    cursor: Option<Cursor<'static>>,
    mem: Arc<Memtable>,
}

impl MemIter {
    fn list(&self) -> &'static SkipList {
        // SAFETY: the list lives inside the Arc held by `self.mem`, which is
        // never replaced, and cursors made from it live only inside `self`.
        unsafe { &*(&self.mem.list as *const SkipList) }
    }
}

impl InternalIterator for MemIter {
    fn valid(&self) -> bool {
        self.cursor.is_some_and(|c| c.valid())
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.cursor = Some(self.list().first());
        Ok(())
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.cursor = Some(self.list().last());
        Ok(())
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.cursor = Some(self.list().seek(target));
        Ok(())
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.cursor = Some(self.list().seek_for_prev(target));
        Ok(())
    }
    fn next(&mut self) -> Result<()> {
        if let Some(c) = &mut self.cursor {
            c.next();
        }
        Ok(())
    }
    fn prev(&mut self) -> Result<()> {
        if let Some(c) = &mut self.cursor {
            c.prev();
        }
        Ok(())
    }
    #[expect(
        clippy::expect_used,
        reason = "the iterator traits call `key` only while valid, when a cursor is set"
    )]
    fn key(&self) -> &[u8] {
        self.cursor.as_ref().expect("valid iterator").key()
    }
    #[expect(
        clippy::expect_used,
        reason = "the iterator traits call `value` only while valid, when a cursor is set"
    )]
    fn value(&self) -> &[u8] {
        self.cursor.as_ref().expect("valid iterator").value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_respects_sequence() {
        let m = Memtable::new(1);
        m.insert(1, Kind::Put, b"k", b"v1");
        m.insert(3, Kind::Delete, b"k", b"");
        m.insert(5, Kind::Put, b"k", b"v5");
        let get = |k: &[u8], seq| {
            let mut seek = Vec::new();
            key::append_internal_key(&mut seek, k, seq, key::KIND_FOR_SEEK);
            m.get(k, &seek, 0)
        };
        assert_eq!(get(b"k", 0), Lookup::Absent);
        assert_eq!(get(b"k", 2), Lookup::Value(b"v1".to_vec()));
        assert_eq!(get(b"k", 4), Lookup::Deleted);
        assert_eq!(get(b"k", 9), Lookup::Value(b"v5".to_vec()));
        assert_eq!(get(b"j", 9), Lookup::Absent);
        let m = Arc::new(m);
        let mut it = m.iter();
        it.seek_to_first().unwrap();
        let mut seqs = vec![];
        while it.valid() {
            seqs.push(key::seq_of(it.key()));
            it.next().unwrap();
        }
        assert_eq!(seqs, vec![5, 3, 1]);
    }

    /// The iterator's `'static` cursor (see [`MemIter::list`]) stays valid
    /// after every other handle to the memtable is gone (checked under Miri).
    #[test]
    fn iterator_outlives_every_other_handle() {
        let m = Arc::new(Memtable::new(1));
        for i in 0..50u64 {
            m.insert(i + 1, Kind::Put, format!("k{i:02}").as_bytes(), b"v");
        }
        let mut it = m.iter();
        drop(m);
        it.seek(&{
            let mut k = Vec::new();
            key::append_internal_key(&mut k, b"k10", u64::MAX >> 8, key::KIND_FOR_SEEK);
            k
        })
        .unwrap();
        let mut n = 0;
        while it.valid() {
            assert_eq!(it.value(), b"v");
            n += 1;
            it.next().unwrap();
        }
        assert_eq!(n, 40);
    }

    #[test]
    fn range_tombstones_sit_beside_the_list() {
        let m = Memtable::new(1);
        assert!(m.is_empty() && !m.has_range_dels());
        m.insert(1, Kind::Put, b"b", b"v");
        let mut wb = crate::WriteBatch::new();
        wb.delete_range(b"c".as_slice()..b"f".as_slice());
        wb.delete_range(b"a".as_slice()..b"c".as_slice());
        let (seq, es) = crate::batch::decode(wb.encode(2)).unwrap();
        for (i, e) in es.iter().enumerate() {
            m.apply(seq + i as u64, e);
        }
        assert_eq!(m.len(), 1);
        assert!(m.has_range_dels());
        let starts: Vec<_> = m
            .range_dels()
            .into_iter()
            .map(|t| (t.start, t.seq))
            .collect();
        assert_eq!(starts, vec![(b"a".to_vec(), 3), (b"c".to_vec(), 2)]);
        assert_eq!(m.max_covering(b"b", 9), 3);
        assert_eq!(m.max_covering(b"b", 2), 0, "tombstone newer than the read");
        assert_eq!(m.max_covering(b"e", 9), 2);
        assert_eq!(m.max_covering(b"f", 9), 0);
        let mut seek = Vec::new();
        key::append_internal_key(&mut seek, b"b", 9, key::KIND_FOR_SEEK);
        assert_eq!(m.get(b"b", &seek, 3), Lookup::Deleted);
        assert_eq!(m.get(b"b", &seek, 0), Lookup::Value(b"v".to_vec()));
    }

    #[test]
    fn iterates_in_both_directions() {
        use crate::iter::testing::{check_bidirectional, random_entries};
        for seed in 0..5 {
            let entries = random_entries(seed, 400);
            let m = Arc::new(Memtable::new(1));
            for (k, v) in &entries {
                let p = key::parse(k).unwrap();
                m.insert(p.seq, Kind::from_u8(p.kind).unwrap(), p.user_key, v);
            }
            check_bidirectional(&mut m.iter(), &entries, seed);
        }
    }

    #[test]
    fn filter_rules_out_only_absent_keys() {
        use crate::filter::{FilterOptions, HashSharing};
        let f = MemtableFilter::new(1000, &FilterOptions::default());
        let m = Memtable::with_filter(1, Some(f));
        for i in 0..1000u32 {
            m.insert(u64::from(i) + 1, Kind::Put, &i.to_be_bytes(), b"v");
        }
        let mut negatives = 0;
        for i in 0..2000u32 {
            let key = i.to_be_bytes();
            let mut p = KeyProbe::new(&key, HashSharing::Levels);
            let maybe = m.may_contain(&mut p);
            assert_eq!(p.digests_computed, 1);
            if i < 1000 {
                assert!(maybe, "inserted key {i} ruled out");
            } else if !maybe {
                negatives += 1;
            }
        }
        assert!(
            negatives > 950,
            "only {negatives} of 1000 absent keys ruled out"
        );
        assert!(Memtable::new(2).may_contain(&mut KeyProbe::new(b"x", HashSharing::Levels)));
    }
}
