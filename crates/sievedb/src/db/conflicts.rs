//! The database's side of a transaction's commit-time validation
//! (`txn/optimistic.rs` makes the checks): a [`CommitCheck`] runs under the
//! WAL lock, just before its batch would be logged, and asks whether keys or
//! key ranges were written after the transaction's snapshot.
//!
//! Validation never reads an SST. Every write newer than a keyspace's
//! [`Tree::flushed_seq`] is in one of its memtables (the active one or a
//! frozen one not yet flushed), or in a batch ahead of the checked one in
//! its group commit ([`EarlierWrites`], logged but not yet in a memtable).
//! So for a snapshot at least as new as `flushed_seq` the memtables answer
//! exactly; for an older one the check cannot tell, and says so
//! ([`Written::Unknown`]): the transaction then fails, as RocksDB's
//! optimistic transactions do when the memtables no longer reach back to
//! their snapshot. A transaction can therefore be validated until the
//! memtable that was current at its snapshot is flushed, in each keyspace it
//! touches.

use std::collections::HashSet;

use super::*;
use crate::batch::EntryKind;

/// Whether something was written after a sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Written {
    /// Nothing was.
    No,
    /// Something was, at this sequence number (0 when it was a batch ahead
    /// in the same group, not yet numbered).
    Yes(SeqNo),
    /// The memtables no longer reach back that far: the writes since may
    /// have been flushed.
    Unknown,
}

/// The writes of the batches ahead of a checked batch in its group commit
/// (logged with it, not yet in any memtable).
#[derive(Default)]
pub(crate) struct EarlierWrites {
    keys: HashSet<(u32, Vec<u8>)>,
    /// Range tombstones: (keyspace, start, end; `None` unbounded).
    ranges: Vec<(u32, Vec<u8>, Option<Vec<u8>>)>,
    /// A batch that did not decode: taken to have written every key.
    everything: bool,
}

impl EarlierWrites {
    /// Adds the writes of `batch`.
    pub(crate) fn add(&mut self, batch: &mut WriteBatch) {
        let decoded = batch.for_each(|e| match e.kind {
            EntryKind::DeleteRange => {
                self.ranges
                    .push((e.keyspace, e.key.to_vec(), Some(e.value.to_vec())));
            }
            EntryKind::DeleteRangeToEnd => self.ranges.push((e.keyspace, e.key.to_vec(), None)),
            _ => {
                self.keys.insert((e.keyspace, e.key.to_vec()));
            }
        });
        // A batch this process built always decodes; if one did not, the
        // checks after it fail rather than miss what it wrote.
        self.everything |= decoded.is_err();
    }

    fn has_key(&self, ks: u32, key: &[u8]) -> bool {
        self.everything
            || (!self.keys.is_empty() && self.keys.contains(&(ks, key.to_vec())))
            || self.ranges.iter().any(|(k, s, e)| {
                *k == ks && s.as_slice() <= key && e.as_ref().is_none_or(|e| key < e.as_slice())
            })
    }

    fn touches(&self, ks: u32, start: &[u8], end: Option<&[u8]>) -> bool {
        let inside = |k: &[u8]| start <= k && end.is_none_or(|e| k < e);
        self.everything
            || self.keys.iter().any(|(k, key)| *k == ks && inside(key))
            || self.ranges.iter().any(|(k, s, e)| {
                *k == ks
                    && end.is_none_or(|end| s.as_slice() < end)
                    && e.as_ref().is_none_or(|e| e.as_slice() > start)
            })
    }
}

/// A check a batch must pass before it is logged: a transaction's commit
/// validation. It runs under the WAL lock, so every write that commits
/// before the batch is in a memtable or in `earlier`; an error keeps the
/// batch out of the log (the other batches of its group go on).
pub(crate) trait CommitCheck: Send {
    /// Passes, or refuses the batch with the error its commit returns.
    fn check(&self, db: &DbInner, earlier: &EarlierWrites) -> Result<()>;
}

impl DbInner {
    /// Whether `key` of keyspace `tree` was written after sequence `seq`
    /// (the caller holds the WAL lock, see the module docs).
    pub(crate) fn written_after(
        &self,
        tree: &Tree,
        key: &[u8],
        seq: SeqNo,
        earlier: &EarlierWrites,
    ) -> Written {
        if earlier.has_key(tree.id, key) {
            return Written::Yes(0);
        }
        let m = tree.mem.read();
        let newest = std::iter::once(&m.mem)
            .chain(m.imm.iter())
            .map(|mem| mem.newest_write(key))
            .max()
            .unwrap_or(0);
        // Read under the memtable lock, which a flush takes to retire a
        // memtable after raising `flushed_seq`.
        let flushed = tree.flushed_seq.load(Ordering::Acquire);
        if newest > seq {
            Written::Yes(newest)
        } else if flushed > seq {
            Written::Unknown
        } else {
            Written::No
        }
    }

    /// Whether any key of `start..end` (`end` `None`: unbounded) of keyspace
    /// `tree` was written after `seq`, as [`written_after`](Self::written_after).
    pub(crate) fn range_written_after(
        &self,
        tree: &Tree,
        start: &[u8],
        end: Option<&[u8]>,
        seq: SeqNo,
        earlier: &EarlierWrites,
    ) -> Written {
        if earlier.touches(tree.id, start, end) {
            return Written::Yes(0);
        }
        let m = tree.mem.read();
        let newest = std::iter::once(&m.mem)
            .chain(m.imm.iter())
            .map(|mem| mem.newest_write_in(start, end))
            .max()
            .unwrap_or(0);
        let flushed = tree.flushed_seq.load(Ordering::Acquire);
        if newest > seq {
            Written::Yes(newest)
        } else if flushed > seq {
            Written::Unknown
        } else {
            Written::No
        }
    }
}
