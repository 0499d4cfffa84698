//! The memtable: internal keys in an arena skiplist (one writer, lock-free readers).
//!
//! Invariant: entries are never removed from a memtable; it is frozen when full,
//! flushed to an L0 SST and then dropped whole.

use std::sync::Arc;

use crate::error::Result;
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
}

impl Memtable {
    /// An empty memtable backed by WAL `wal_number`.
    pub fn new(wal_number: u64) -> Self {
        Memtable {
            list: SkipList::new(key::compare),
            wal_number,
        }
    }

    /// The WAL this memtable's entries were logged to.
    pub fn wal_number(&self) -> u64 {
        self.wal_number
    }

    /// Inserts one entry. Callers serialise inserts (the WAL lock, or recovery).
    pub fn insert(&self, seq: SeqNo, kind: Kind, user_key: &[u8], value: &[u8]) {
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

    /// The newest entry for `user_key` with sequence `<= seq`. Leaves the seek
    /// key (`user_key` + trailer) in `scratch` for the levels below.
    pub fn get(&self, user_key: &[u8], seq: SeqNo, scratch: &mut Vec<u8>) -> Lookup {
        scratch.clear();
        key::append_internal_key(scratch, user_key, seq, key::KIND_FOR_SEEK);
        let c = self.list.seek(scratch);
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
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.cursor = Some(self.list().seek(target));
        Ok(())
    }
    fn next(&mut self) -> Result<()> {
        if let Some(c) = &mut self.cursor {
            c.next();
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
