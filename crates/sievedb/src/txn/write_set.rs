//! A transaction's pending writes ([`WriteSet`]): the operations in the order
//! they were made (the batch a commit logs, as one record) and, by keyspace
//! and key, what they amount to (what the transaction's own reads see).
//! Savepoints mark a length of the operation list.

use std::collections::BTreeMap;
use std::ops::Bound;

use crate::batch::WriteBatch;

/// One operation of a transaction.
#[derive(Clone, Debug)]
pub(super) enum Op {
    Put(Vec<u8>),
    Delete,
    Merge(Vec<u8>),
}

/// What a key's pending operations amount to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Pending {
    /// The key holds this value.
    Value(Vec<u8>),
    /// The key is deleted.
    Deleted,
    /// Merge operands (oldest first) over `base`: a value or a delete the
    /// transaction wrote before them, or (`None`) the key as the snapshot
    /// has it.
    Merge {
        base: Option<Option<Vec<u8>>>,
        operands: Vec<Vec<u8>>,
    },
}

impl Pending {
    /// `self` followed by `op`.
    fn then(self, op: &Op) -> Pending {
        match op {
            Op::Put(v) => Pending::Value(v.clone()),
            Op::Delete => Pending::Deleted,
            Op::Merge(operand) => match self {
                Pending::Value(v) => Pending::Merge {
                    base: Some(Some(v)),
                    operands: vec![operand.clone()],
                },
                Pending::Deleted => Pending::Merge {
                    base: Some(None),
                    operands: vec![operand.clone()],
                },
                Pending::Merge { base, mut operands } => {
                    operands.push(operand.clone());
                    Pending::Merge { base, operands }
                }
            },
        }
    }

    /// What `op` alone amounts to.
    fn of(op: &Op) -> Pending {
        match op {
            Op::Put(v) => Pending::Value(v.clone()),
            Op::Delete => Pending::Deleted,
            Op::Merge(operand) => Pending::Merge {
                base: None,
                operands: vec![operand.clone()],
            },
        }
    }
}

/// (keyspace id, key)
pub(super) type Key = (u32, Vec<u8>);

/// The pending writes of a transaction.
#[derive(Default)]
pub(super) struct WriteSet {
    /// Every operation, in order.
    ops: Vec<(Key, Op)>,
    /// What they amount to, by key.
    index: BTreeMap<Key, Pending>,
    /// Savepoints: lengths of `ops`.
    savepoints: Vec<usize>,
}

impl WriteSet {
    /// Adds an operation.
    pub(super) fn push(&mut self, key: Key, op: Op) {
        let pending = match self.index.remove(&key) {
            Some(p) => p.then(&op),
            None => Pending::of(&op),
        };
        self.index.insert(key.clone(), pending);
        self.ops.push((key, op));
    }

    /// Whether no operation is pending.
    pub(super) fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// What the pending writes of `key` amount to, if it has any.
    pub(super) fn get(&self, key: &Key) -> Option<&Pending> {
        self.index.get(key)
    }

    /// The keys written, each once.
    pub(super) fn keys(&self) -> impl Iterator<Item = &Key> {
        self.index.keys()
    }

    /// The pending keys of keyspace `ks` within `lo..hi`, in key order.
    pub(super) fn range(
        &self,
        ks: u32,
        lo: Bound<&[u8]>,
        hi: Bound<&[u8]>,
    ) -> Vec<(Vec<u8>, Pending)> {
        let from = match lo {
            Bound::Included(k) => Bound::Included((ks, k.to_vec())),
            Bound::Excluded(k) => Bound::Excluded((ks, k.to_vec())),
            Bound::Unbounded => Bound::Included((ks, Vec::new())),
        };
        self.index
            .range((from, Bound::Unbounded))
            .take_while(|((k, key), _)| {
                *k == ks
                    && match hi {
                        Bound::Included(h) => key.as_slice() <= h,
                        Bound::Excluded(h) => key.as_slice() < h,
                        Bound::Unbounded => true,
                    }
            })
            .map(|((_, key), p)| (key.clone(), p.clone()))
            .collect()
    }

    /// Marks the current state (`rollback_to_savepoint` returns to it).
    pub(super) fn set_savepoint(&mut self) {
        self.savepoints.push(self.ops.len());
    }

    /// Undoes the operations since the last savepoint and forgets it;
    /// `false` if there is none.
    pub(super) fn rollback_to_savepoint(&mut self) -> bool {
        let Some(len) = self.savepoints.pop() else {
            return false;
        };
        self.ops.truncate(len);
        self.index.clear();
        let ops = std::mem::take(&mut self.ops);
        for (k, op) in ops {
            self.push(k, op);
        }
        true
    }

    /// The batch that commits the operations, in order; `owner` is the
    /// database's token for keyspaces (see `WriteBatch::push_in`).
    pub(super) fn batch(&self, owner: usize) -> WriteBatch {
        let mut b = WriteBatch::new();
        for ((ks, key), op) in &self.ops {
            match op {
                Op::Put(v) => b.push_in(owner, *ks, 1, key, Some(v)),
                Op::Delete => b.push_in(owner, *ks, 0, key, None),
                Op::Merge(v) => b.push_in(owner, *ks, 4, key, Some(v)),
            }
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Key {
        (0, s.as_bytes().to_vec())
    }

    #[test]
    fn pending_writes_fold_and_savepoints_undo() {
        let mut w = WriteSet::default();
        w.push(k("a"), Op::Put(b"1".to_vec()));
        w.push(k("a"), Op::Merge(b"+2".to_vec()));
        w.push(k("b"), Op::Merge(b"+3".to_vec()));
        assert_eq!(
            w.get(&k("a")),
            Some(&Pending::Merge {
                base: Some(Some(b"1".to_vec())),
                operands: vec![b"+2".to_vec()]
            })
        );
        assert_eq!(
            w.get(&k("b")),
            Some(&Pending::Merge {
                base: None,
                operands: vec![b"+3".to_vec()]
            })
        );
        w.set_savepoint();
        w.push(k("a"), Op::Delete);
        w.push((1, b"a".to_vec()), Op::Put(b"x".to_vec()));
        assert_eq!(w.get(&k("a")), Some(&Pending::Deleted));
        assert_eq!(w.range(0, Bound::Unbounded, Bound::Unbounded).len(), 2);
        assert_eq!(w.range(1, Bound::Unbounded, Bound::Unbounded).len(), 1);
        assert!(w.rollback_to_savepoint());
        assert!(!w.rollback_to_savepoint());
        assert_eq!(w.get(&(1, b"a".to_vec())), None);
        assert!(matches!(w.get(&k("a")), Some(Pending::Merge { .. })));
        assert_eq!(w.batch(0).len(), 3);
        let r = w.range(0, Bound::Excluded(b"a"), Bound::Included(b"b"));
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].0, b"b");
    }
}
