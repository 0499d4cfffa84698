//! The memtable: a concurrent skiplist of internal keys.
//!
//! Invariant: entries are never removed from a memtable; it is frozen when full,
//! flushed to an L0 SST and then dropped whole.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering as AtOrd};
use std::sync::Arc;

use crossbeam_skiplist::{map::Entry, SkipMap};

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key::{self, Kind, SeqNo};

/// An owned internal key ordered by [`key::compare`].
#[derive(Debug)]
pub struct IKey(Box<[u8]>);

/// A borrowed internal key ordered by [`key::compare`].
#[derive(Debug)]
#[repr(transparent)]
pub struct IKeyRef([u8]);

impl IKeyRef {
    fn new(b: &[u8]) -> &IKeyRef {
        // SAFETY: IKeyRef is repr(transparent) over [u8], so the pointer cast keeps
        // the same layout and metadata; the lifetime is carried over unchanged.
        unsafe { &*(b as *const [u8] as *const IKeyRef) }
    }
}

impl Borrow<IKeyRef> for IKey {
    fn borrow(&self) -> &IKeyRef {
        IKeyRef::new(&self.0)
    }
}
impl PartialEq for IKeyRef {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for IKeyRef {}
impl PartialOrd for IKeyRef {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for IKeyRef {
    fn cmp(&self, o: &Self) -> Ordering {
        key::compare(&self.0, &o.0)
    }
}
impl PartialEq for IKey {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for IKey {}
impl PartialOrd for IKey {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for IKey {
    fn cmp(&self, o: &Self) -> Ordering {
        key::compare(&self.0, &o.0)
    }
}

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
    map: SkipMap<IKey, Box<[u8]>>,
    size: AtomicUsize,
    /// Number of the WAL whose records this memtable holds.
    wal_number: u64,
}

/// Per-entry overhead counted towards the memtable's size (skiplist node, boxes).
const ENTRY_OVERHEAD: usize = 64;

impl Memtable {
    /// An empty memtable backed by WAL `wal_number`.
    pub fn new(wal_number: u64) -> Self {
        Memtable {
            map: SkipMap::new(),
            size: AtomicUsize::new(0),
            wal_number,
        }
    }

    /// The WAL this memtable's entries were logged to.
    pub fn wal_number(&self) -> u64 {
        self.wal_number
    }

    /// Inserts one entry.
    pub fn insert(&self, seq: SeqNo, kind: Kind, user_key: &[u8], value: &[u8]) {
        let ik = key::internal_key(user_key, seq, kind);
        self.size
            .fetch_add(ik.len() + value.len() + ENTRY_OVERHEAD, AtOrd::Relaxed);
        self.map.insert(IKey(ik.into_boxed_slice()), value.into());
    }

    /// Approximate bytes held.
    pub fn approximate_size(&self) -> usize {
        self.size.load(AtOrd::Relaxed)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the memtable is empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The newest entry for `user_key` with sequence `<= seq`.
    pub fn get(&self, user_key: &[u8], seq: SeqNo, scratch: &mut Vec<u8>) -> Lookup {
        scratch.clear();
        key::append_internal_key(scratch, user_key, seq, key::KIND_FOR_SEEK);
        let Some(e) = self.map.lower_bound(Bound::Included(IKeyRef::new(scratch))) else {
            return Lookup::Absent;
        };
        let ik = &e.key().0;
        if key::user_key(ik) != user_key {
            return Lookup::Absent;
        }
        if key::kind_of(ik) == Kind::Put as u8 {
            Lookup::Value(e.value().to_vec())
        } else {
            Lookup::Deleted
        }
    }

    /// An iterator over all entries in internal-key order.
    pub fn iter(self: &Arc<Self>) -> MemIter {
        MemIter {
            entry: None,
            _mem: self.clone(),
        }
    }
}

/// Iterator over a memtable; keeps the memtable alive.
pub struct MemIter {
    // Field order matters: `entry` borrows from the map inside `_mem` and must be
    // dropped first (fields drop in declaration order).
    entry: Option<Entry<'static, IKey, Box<[u8]>>>,
    _mem: Arc<Memtable>,
}

impl MemIter {
    fn map(&self) -> &'static SkipMap<IKey, Box<[u8]>> {
        // SAFETY: the map lives inside the Arc held by `self._mem`, which is never
        // replaced and outlives every Entry stored in `self.entry` (dropped first).
        // Entries handed out are only used while `self` is borrowed.
        unsafe { &*(&self._mem.map as *const SkipMap<IKey, Box<[u8]>>) }
    }
}

impl InternalIterator for MemIter {
    fn valid(&self) -> bool {
        self.entry.is_some()
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.entry = self.map().front();
        Ok(())
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.entry = self
            .map()
            .lower_bound(Bound::Included(IKeyRef::new(target)));
        Ok(())
    }
    fn next(&mut self) -> Result<()> {
        self.entry = self.entry.take().and_then(|e| e.next());
        Ok(())
    }
    fn key(&self) -> &[u8] {
        &self.entry.as_ref().expect("valid iterator").key().0
    }
    fn value(&self) -> &[u8] {
        self.entry.as_ref().expect("valid iterator").value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_respects_sequence() {
        let m = Memtable::new(1);
        let mut s = Vec::new();
        m.insert(1, Kind::Put, b"k", b"v1");
        m.insert(3, Kind::Delete, b"k", b"");
        m.insert(5, Kind::Put, b"k", b"v5");
        assert_eq!(m.get(b"k", 0, &mut s), Lookup::Absent);
        assert_eq!(m.get(b"k", 2, &mut s), Lookup::Value(b"v1".to_vec()));
        assert_eq!(m.get(b"k", 4, &mut s), Lookup::Deleted);
        assert_eq!(m.get(b"k", 9, &mut s), Lookup::Value(b"v5".to_vec()));
        assert_eq!(m.get(b"j", 9, &mut s), Lookup::Absent);
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
}
