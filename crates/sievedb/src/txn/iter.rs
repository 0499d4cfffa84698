//! A transaction's iterator ([`TransactionIterator`]): the keys of a range
//! as the transaction sees them, its snapshot merged with its own pending
//! writes (as they were when the iterator was made), in either direction.

use std::sync::Arc;

use super::write_set::Pending;
use crate::error::Result;
use crate::iter::DbIterator;
use crate::merge::{MergeOperator, Operands};

/// A double-ended iterator with the next item of each end taken out and
/// kept: each item comes out of exactly one end.
struct Ends<I: DoubleEndedIterator> {
    inner: I,
    front: Option<I::Item>,
    back: Option<I::Item>,
}

impl<I: DoubleEndedIterator> Ends<I> {
    fn new(inner: I) -> Self {
        Ends {
            inner,
            front: None,
            back: None,
        }
    }

    fn front(&mut self) -> Option<&I::Item> {
        if self.front.is_none() {
            self.front = self.inner.next().or_else(|| self.back.take());
        }
        self.front.as_ref()
    }

    fn back(&mut self) -> Option<&I::Item> {
        if self.back.is_none() {
            self.back = self.inner.next_back().or_else(|| self.front.take());
        }
        self.back.as_ref()
    }
}

/// The keys and values of a range as a transaction sees them: pending writes
/// over its snapshot. An error ends the iteration.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
/// db.put("a", "1")?;
/// db.put("b", "2")?;
/// let mut tx = db.transaction();
/// tx.delete("a")?;
/// tx.put("c", "3")?;
/// let keys: Vec<Vec<u8>> = tx.iter()?.map(|kv| kv.map(|(k, _)| k)).collect::<Result<_, _>>()?;
/// assert_eq!(keys, [b"b", b"c"]); // its own writes over its snapshot
/// let last = tx.iter()?.next_back().transpose()?;
/// assert_eq!(last, Some((b"c".to_vec(), b"3".to_vec())));
/// assert_eq!(db.iter()?.count(), 2); // nothing committed yet
/// # Ok(()) }
/// ```
pub struct TransactionIterator {
    snapshot: Ends<DbIterator>,
    pending: Ends<std::vec::IntoIter<(Vec<u8>, Pending)>>,
    merge: Option<Arc<dyn MergeOperator>>,
    failed: bool,
}

/// Which end of the range.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Front,
    Back,
}

impl TransactionIterator {
    pub(super) fn new(
        snapshot: DbIterator,
        pending: Vec<(Vec<u8>, Pending)>,
        merge: Option<Arc<dyn MergeOperator>>,
    ) -> Self {
        TransactionIterator {
            snapshot: Ends::new(snapshot),
            pending: Ends::new(pending.into_iter()),
            merge,
            failed: false,
        }
    }

    /// The next item from `end`: the nearer key of the two sources, both
    /// taken when they are the same key.
    fn step(&mut self, end: End) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        loop {
            if self.failed {
                return None;
            }
            let (s, p) = match end {
                End::Front => (self.snapshot.front(), self.pending.front()),
                End::Back => (self.snapshot.back(), self.pending.back()),
            };
            let s_key = match s {
                Some(Err(_)) => {
                    self.failed = true;
                    let slot = match end {
                        End::Front => &mut self.snapshot.front,
                        End::Back => &mut self.snapshot.back,
                    };
                    return slot.take();
                }
                Some(Ok((k, _))) => Some(k.clone()),
                None => None,
            };
            let p_key = p.map(|(k, _)| k.clone());
            // Which source the item comes from: the snapshot, the pending
            // writes, or both (the same key).
            let nearer = |a: &Vec<u8>, b: &Vec<u8>| match end {
                End::Front => a < b,
                End::Back => a > b,
            };
            let (take_s, take_p) = match (&s_key, &p_key) {
                (None, None) => return None,
                (Some(_), None) => (true, false),
                (None, Some(_)) => (false, true),
                (Some(a), Some(b)) if a == b => (true, true),
                (Some(a), Some(b)) => (nearer(a, b), !nearer(a, b)),
            };
            let (s_slot, p_slot) = match end {
                End::Front => (&mut self.snapshot.front, &mut self.pending.front),
                End::Back => (&mut self.snapshot.back, &mut self.pending.back),
            };
            let snap = if take_s {
                // An error was returned above, before the keys were compared.
                s_slot.take().and_then(std::result::Result::ok)
            } else {
                None
            };
            if !take_p {
                return snap.map(Ok);
            }
            let Some((key, pending)) = p_slot.take() else {
                return snap.map(Ok);
            };
            let base = snap.map(|(_, v)| v);
            match resolve(self.merge.as_ref(), &key, pending, base) {
                Ok(Some(v)) => return Some(Ok((key, v))),
                Ok(None) => continue,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl Iterator for TransactionIterator {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.step(End::Front)
    }
}

impl DoubleEndedIterator for TransactionIterator {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.step(End::Back)
    }
}

/// The value a key's pending writes give it over `snapshot` (its value in
/// the transaction's snapshot, if any); `None`: deleted.
pub(super) fn resolve(
    merge: Option<&Arc<dyn MergeOperator>>,
    key: &[u8],
    pending: Pending,
    snapshot: Option<Vec<u8>>,
) -> Result<Option<Vec<u8>>> {
    match pending {
        Pending::Value(v) => Ok(Some(v)),
        Pending::Deleted => Ok(None),
        Pending::Merge { base, operands } => {
            let base = base.unwrap_or(snapshot);
            let mut ops = Operands::default();
            for o in &operands {
                ops.push_newer(o);
            }
            ops.full_merge(merge, key, base.as_deref()).map(Some)
        }
    }
}
