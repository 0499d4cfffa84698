//! The memtable: internal keys in an arena skiplist (one writer, lock-free readers).
//!
//! Invariant: entries are never removed from a memtable; it is frozen when full,
//! flushed to an L0 SST and then dropped whole.

use std::sync::Arc;

use crate::error::Result;
use crate::filter::{KeyProbe, MemtableFilter};
use crate::iter::InternalIterator;
use crate::key::{self, Kind, SeqNo};
use crate::skiplist::{Cursor, SkipList};

/// Result of a point lookup in a memtable or table.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The newest visible entry is a value.
    Value(Vec<u8>),
    /// The newest visible entry is a tombstone.
    Deleted,
    /// No visible entry for the key.
    Absent,
}

/// A memtable.
pub struct Memtable {
    list: SkipList,
    /// Number of the WAL whose records this memtable holds.
    wal_number: u64,
    /// Filter over the user keys inserted, if enabled. Invariant: a key is in
    /// the filter before its entry is in the list.
    filter: Option<MemtableFilter>,
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
            wal_number,
            filter,
        }
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
        self.wal_number
    }

    /// Inserts one entry. Callers serialise inserts (the WAL lock, or recovery).
    pub fn insert(&self, seq: SeqNo, kind: Kind, user_key: &[u8], value: &[u8]) {
        if let Some(f) = &self.filter {
            // Before the list insert, which publishes the entry (release).
            f.insert_key(user_key);
        }
        let trailer = key::trailer(seq, kind as u8).to_le_bytes();
        self.list.insert([user_key, &trailer], value);
    }

    /// Approximate bytes held.
    pub fn approximate_size(&self) -> usize {
        self.list.bytes()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether the memtable is empty.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The newest entry for `user_key` visible at the seek key `seek`
    /// (`user_key` + the trailer of the read sequence, see
    /// [`key::append_internal_key`]).
    pub fn get(&self, user_key: &[u8], seek: &[u8]) -> Lookup {
        let c = self.list.seek(seek);
        if !c.valid() || key::user_key(c.key()) != user_key {
            return Lookup::Absent;
        }
        if key::kind_of(c.key()) == Kind::Put as u8 {
            Lookup::Value(c.value().to_vec())
        } else {
            Lookup::Deleted
        }
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
    fn key(&self) -> &[u8] {
        self.cursor.as_ref().expect("valid iterator").key()
    }
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
            m.get(k, &seek)
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
