//! What transactions (`txn/`) use of the database: its inner state from a
//! handle, snapshot reads and iterators of a keyspace, the commit path with
//! its check (`db/conflicts.rs`), and the lock table of
//! pessimistic transactions. Nothing here is public.

use super::conflicts::CommitCheck;
use super::*;

pub(crate) use super::write::no_merge_operator;

/// Owned lower and upper bounds of a range of user keys.
pub(crate) type KeyBounds = (Bound<Vec<u8>>, Bound<Vec<u8>>);

impl Db {
    /// The database's shared state (a transaction keeps it alive).
    pub(crate) fn inner_arc(&self) -> &Arc<DbInner> {
        &self.inner
    }
}

impl Keyspace {
    /// The keyspace's tree.
    pub(crate) fn tree_arc(&self) -> &Arc<Tree> {
        &self.tree
    }

    /// Whether the keyspace belongs to the database `inner` (alive: its
    /// token names no other database).
    pub(crate) fn of(&self, inner: &Arc<DbInner>) -> bool {
        self.owner_token() == inner.batch_owner()
    }
}

impl DbInner {
    /// The default keyspace.
    pub(crate) fn default_tree(&self) -> &Arc<Tree> {
        &self.tree
    }

    /// The pessimistic transactions' locks.
    pub(crate) fn locks(&self) -> &crate::txn::locks::LockManager {
        &self.locks
    }

    /// The token a [`WriteBatch`] carries to name this database's keyspaces.
    pub(crate) fn batch_owner(&self) -> usize {
        self.owner_token()
    }

    /// The value of `key` in keyspace `tree` as of `seq`, which a registered
    /// snapshot protects.
    pub(crate) fn get_at(&self, tree: &Tree, key: &[u8], seq: SeqNo) -> Result<Option<Vec<u8>>> {
        let key = user_key(key)?;
        if tree.dropped.load(Ordering::Acquire) {
            return Err(Error::InvalidArgument(format!(
                "keyspace {:?} was dropped",
                tree.name
            )));
        }
        let view = self.view_at_snapshot(tree);
        self.get_in(&view, key, seq, ReadCtx::new(0))
    }

    /// An iterator over keyspace `tree` within `bounds` as of `seq`, kept
    /// alive (with the snapshot protecting `seq`) by `pin`.
    pub(crate) fn iter_at(
        &self,
        tree: &Tree,
        seq: SeqNo,
        bounds: KeyBounds,
        pin: Pin,
    ) -> Result<DbIterator> {
        let view = self.view_at_snapshot(tree);
        self.iter_in(&view, seq, bounds, vec![pin], ReadCtx::new(0))
    }

    /// Commits a transaction's `batch` once `check` passes, through the group
    /// commit, after the checks of a plain write (read-only handle, closed
    /// database, TTL stamps).
    pub(crate) fn commit_txn(
        &self,
        batch: WriteBatch,
        sync: bool,
        check: Option<Box<dyn CommitCheck>>,
    ) -> Result<()> {
        if self.read_only {
            return Err(open::read_only_error("commit"));
        }
        if self.bg.lock().shutdown {
            return Err(Error::Closed);
        }
        let batch = match self.opts.ttl.is_none() && batch.keyspaces().is_empty() {
            true => batch,
            false => self.stamp_writes(batch)?,
        };
        self.commit_checked(batch, sync, check)
    }
}

/// A user key checked against the key length limit.
pub(crate) fn checked_key(k: &[u8]) -> Result<&[u8]> {
    user_key(k)
}

/// The owned bounds of a user range, each checked as a user key.
pub(crate) fn owned_bounds<K: AsRef<[u8]>, R: RangeBounds<K>>(r: &R) -> Result<KeyBounds> {
    bounds(r)
}

/// The bounds of the keys starting with `prefix`.
pub(crate) fn prefix_range(prefix: &[u8]) -> Result<KeyBounds> {
    prefix_bounds(prefix)
}
