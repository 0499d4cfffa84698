//! Transactions ([`Transaction`]): reads at a snapshot that see the
//! transaction's own writes, and writes that commit together, atomically
//! across keyspaces, as one WAL record through the group commit.
//!
//! **Optimistic** (the default) transactions take no locks: their commit
//! is validated against what committed since their snapshot
//! (`optimistic.rs`). **Pessimistic** ones lock each key they write or read
//! with `get_for_update` until they finish (`locks.rs`): a lock another
//! transaction holds is waited for up to `lock_timeout`, and a wait that
//! would deadlock fails at once (`deadlock.rs`). Under **snapshot
//! isolation** (the default) a commit fails if a key it writes, or read with
//! `get_for_update`, was written by any commit (a transaction's or a plain
//! write) after its snapshot: first committer wins. **Serializable** adds the
//! keys it read and the ranges it scanned; for a pessimistic transaction
//! that is done the optimistic way, at commit (its reads take no locks). A
//! serializable transaction that writes nothing is not checked: the
//! writers it saw committed in a serial order (each checked its reads up to
//! its commit), and its snapshot is a prefix of that order.
//!
//! How they are ordered: every commit, a transaction's or a plain write's,
//! gets its sequence numbers under the WAL lock, and a transaction's check
//! runs there, just before its batch would be logged, so a transaction
//! commits at a point after every write its check saw. Plain writes take no
//! locks: one that writes a key a pessimistic transaction holds is not made
//! to wait, it makes that transaction's commit fail instead. A pessimistic
//! transaction that waited for a lock whose holder then committed a write to
//! that key fails with a write conflict once it gets the lock (the key
//! changed since its snapshot), as RocksDB's with a snapshot set.
//!
//! How long a transaction may stay open: its check reads the memtables, never
//! an SST. It can be checked while every keyspace it touches holds, in its
//! memtables, all the writes committed since its snapshot: once the memtable
//! that was current when it began has been flushed, its commit can only fail,
//! with [`ConflictKind::TooOld`]. Under `W` bytes of writes per second that
//! leaves it about `write_buffer_size / (2 W)` seconds on average (a memtable
//! is switched after `write_buffer_size` bytes and flushed soon after). A
//! transaction also pins its snapshot: the versions it reads stay until it
//! ends.

pub(crate) mod deadlock;
mod iter;
pub(crate) mod locks;
mod optimistic;
mod write_set;

use std::collections::{BTreeSet, HashMap};
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;
use std::time::Duration;

pub use iter::TransactionIterator;

use self::deadlock::TxId;
use self::optimistic::{KeyRange, Validation};
use self::write_set::{Key, Op, WriteSet};
use crate::db::handles::{HandleKind, Held};
use crate::db::txn_support::{checked_key, owned_bounds, prefix_range, KeyBounds};
use crate::error::{ConflictKind, Error, Result};
use crate::keyspace::Tree;
use crate::{Db, Keyspace, Snapshot, WriteOptions};

/// The isolation level of a transaction (see the module docs).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
/// use sievedb::{Isolation, TransactionOptions};
///
/// // Write skew: each transaction reads the key the other writes.
/// for (isolation, skew) in [(Isolation::Snapshot, true), (Isolation::Serializable, false)] {
///     let opts = TransactionOptions::default().isolation(isolation);
///     let (mut t1, mut t2) = (db.transaction_opt(&opts), db.transaction_opt(&opts));
///     t1.get("a")?;
///     t1.put("b", "t1")?;
///     t2.get("b")?;
///     t2.put("a", "t2")?;
///     t1.commit()?;
///     assert_eq!(t2.commit().is_ok(), skew); // serializable: "b" changed under t2
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Isolation {
    /// Reads see the snapshot taken when the transaction began; the commit
    /// fails if a key it writes (or read for update) was written since.
    /// Write skew is possible.
    #[default]
    Snapshot,
    /// As `Snapshot`, and the commit also fails if a key it read, or a key
    /// in a range it scanned, was written since: no write skew, no phantom.
    Serializable,
}

/// How a transaction runs ([`Db::transaction_opt`]).
///
/// ```
/// use std::time::Duration;
/// use sievedb::{Isolation, TransactionOptions};
/// let opts = TransactionOptions::default()
///     .pessimistic(true)
///     .isolation(Isolation::Serializable)
///     .lock_timeout(Duration::from_millis(100));
/// ```
#[derive(Clone, Debug)]
pub struct TransactionOptions {
    pessimistic: bool,
    isolation: Isolation,
    lock_timeout: Duration,
    deadlock_detect: bool,
}

impl Default for TransactionOptions {
    /// Optimistic, snapshot isolation; a pessimistic transaction waits up to
    /// 1 s for a lock (RocksDB's default) and detects deadlocks.
    fn default() -> Self {
        TransactionOptions {
            pessimistic: false,
            isolation: Isolation::Snapshot,
            lock_timeout: Duration::from_secs(1),
            deadlock_detect: true,
        }
    }
}

impl TransactionOptions {
    /// Locks the keys it writes or reads for update (default `false`:
    /// optimistic).
    #[must_use]
    pub fn pessimistic(mut self, on: bool) -> Self {
        self.pessimistic = on;
        self
    }

    /// The isolation level (default [`Isolation::Snapshot`]).
    #[must_use]
    pub fn isolation(mut self, isolation: Isolation) -> Self {
        self.isolation = isolation;
        self
    }

    /// How long a pessimistic transaction waits for a lock another holds
    /// before failing with [`ConflictKind::LockTimeout`] (default 1 s).
    #[must_use]
    pub fn lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// Whether a pessimistic transaction about to wait for a lock first
    /// checks that the wait cannot deadlock, and fails at once with
    /// [`ConflictKind::Deadlock`] if it could (default `true`; without it a
    /// deadlock ends when a lock wait times out).
    #[must_use]
    pub fn deadlock_detect(mut self, on: bool) -> Self {
        self.deadlock_detect = on;
        self
    }
}

/// Where a transaction is.
enum State {
    Active,
    /// A conflict failed it: every later call returns this error.
    Failed(Error),
    /// Committed or rolled back.
    Ended(&'static str),
}

/// A transaction (see the module docs). It keeps the database open, as an
/// iterator does, and is `Send`. Dropped before it commits, it rolls back.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
/// db.put("alice", "10")?;
/// let mut tx = db.transaction();
/// let balance: u64 = String::from_utf8(tx.get_for_update("alice")?.unwrap())?.parse()?;
/// tx.put("alice", (balance - 3).to_string())?;
/// tx.put("bob", "3")?;
/// assert_eq!(tx.get("bob")?.as_deref(), Some(&b"3"[..])); // its own write
/// assert_eq!(db.get("bob")?, None); // not committed yet
/// tx.commit()?;
/// assert_eq!(db.get("alice")?.as_deref(), Some(&b"7"[..]));
/// # Ok(()) }
/// ```
pub struct Transaction {
    /// The database, held open (and counted as a transaction) until it is
    /// dropped.
    db: Held,
    /// The sequence number it reads at.
    seq: u64,
    /// Its snapshot, held until it ends (its iterators pin what they need).
    snapshot: Option<Snapshot>,
    opts: TransactionOptions,
    id: TxId,
    writes: WriteSet,
    /// The keyspaces it touched, by id.
    trees: HashMap<u32, Arc<Tree>>,
    /// Keys read with `get_for_update`.
    for_update: BTreeSet<Key>,
    /// Serializable: keys read.
    reads: BTreeSet<Key>,
    /// Serializable: ranges scanned, by keyspace.
    ranges: Vec<(u32, KeyRange)>,
    /// Pessimistic: the locks it holds.
    locked: Vec<Key>,
    state: State,
}

impl Db {
    /// A new optimistic transaction with snapshot isolation.
    pub fn transaction(&self) -> Transaction {
        self.transaction_opt(&TransactionOptions::default())
    }

    /// A new transaction run as `opts` says.
    pub fn transaction_opt(&self, opts: &TransactionOptions) -> Transaction {
        let db = Held::new(self.inner_arc().clone(), HandleKind::Transaction);
        let snapshot = Snapshot::new(self.inner_arc().clone(), HandleKind::Part);
        Transaction {
            id: db.locks().new_id(),
            seq: snapshot.sequence(),
            snapshot: Some(snapshot),
            opts: opts.clone(),
            writes: WriteSet::default(),
            trees: HashMap::new(),
            for_update: BTreeSet::new(),
            reads: BTreeSet::new(),
            ranges: Vec::new(),
            locked: Vec::new(),
            state: State::Active,
            db,
        }
    }
}

impl Transaction {
    /// The sequence number its snapshot reads at.
    pub fn snapshot_sequence(&self) -> u64 {
        self.seq
    }

    /// Whether it is pessimistic.
    pub fn is_pessimistic(&self) -> bool {
        self.opts.pessimistic
    }

    /// The value of `key` as the transaction sees it: its own pending writes
    /// over its snapshot.
    pub fn get(&mut self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let tree = self.default_tree();
        self.read(tree, key.as_ref(), false)
    }

    /// [`get`](Self::get) in keyspace `ks`.
    pub fn get_cf(&mut self, ks: &Keyspace, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let tree = self.tree_of(ks)?;
        self.read(tree, key.as_ref(), false)
    }

    /// [`get`](Self::get), and the commit fails if `key` is written by
    /// another commit after the snapshot; a pessimistic transaction locks it.
    pub fn get_for_update(&mut self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let tree = self.default_tree();
        self.read(tree, key.as_ref(), true)
    }

    /// [`get_for_update`](Self::get_for_update) in keyspace `ks`.
    pub fn get_for_update_cf(
        &mut self,
        ks: &Keyspace,
        key: impl AsRef<[u8]>,
    ) -> Result<Option<Vec<u8>>> {
        let tree = self.tree_of(ks)?;
        self.read(tree, key.as_ref(), true)
    }

    /// Sets `key` to `value` when the transaction commits.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let tree = self.default_tree();
        self.write(tree, key.as_ref(), Op::Put(value.as_ref().to_vec()))
    }

    /// [`put`](Self::put) in keyspace `ks`.
    pub fn put_cf(
        &mut self,
        ks: &Keyspace,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<()> {
        let tree = self.tree_of(ks)?;
        self.write(tree, key.as_ref(), Op::Put(value.as_ref().to_vec()))
    }

    /// Deletes `key` when the transaction commits.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        let tree = self.default_tree();
        self.write(tree, key.as_ref(), Op::Delete)
    }

    /// [`delete`](Self::delete) in keyspace `ks`.
    pub fn delete_cf(&mut self, ks: &Keyspace, key: impl AsRef<[u8]>) -> Result<()> {
        let tree = self.tree_of(ks)?;
        self.write(tree, key.as_ref(), Op::Delete)
    }

    /// Merges `operand` into `key` when the transaction commits (the
    /// keyspace's merge operator combines it, as outside a transaction).
    /// In a keyspace without a merge operator the call itself is refused
    /// with [`Error::InvalidArgument`]; the transaction goes on.
    pub fn merge(&mut self, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) -> Result<()> {
        let tree = self.default_tree();
        self.write(tree, key.as_ref(), Op::Merge(operand.as_ref().to_vec()))
    }

    /// [`merge`](Self::merge) in keyspace `ks`.
    pub fn merge_cf(
        &mut self,
        ks: &Keyspace,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
    ) -> Result<()> {
        let tree = self.tree_of(ks)?;
        self.write(tree, key.as_ref(), Op::Merge(operand.as_ref().to_vec()))
    }

    /// Every key, as the transaction sees them.
    pub fn iter(&mut self) -> Result<TransactionIterator> {
        self.range::<&[u8], _>(..)
    }

    /// The keys of `range`, as the transaction sees them: its pending writes
    /// (as they are now) over its snapshot, in either direction.
    /// Serializable: a write committed into the range since the snapshot
    /// fails the commit.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(
        &mut self,
        range: R,
    ) -> Result<TransactionIterator> {
        let tree = self.default_tree();
        self.scan(tree, owned_bounds(&range)?)
    }

    /// The keys starting with `prefix`, as [`range`](Self::range).
    pub fn prefix(&mut self, prefix: impl AsRef<[u8]>) -> Result<TransactionIterator> {
        let tree = self.default_tree();
        self.scan(tree, prefix_range(prefix.as_ref())?)
    }

    /// [`iter`](Self::iter) of keyspace `ks`.
    pub fn iter_cf(&mut self, ks: &Keyspace) -> Result<TransactionIterator> {
        self.range_cf::<&[u8], _>(ks, ..)
    }

    /// [`range`](Self::range) of keyspace `ks`.
    pub fn range_cf<K: AsRef<[u8]>, R: RangeBounds<K>>(
        &mut self,
        ks: &Keyspace,
        range: R,
    ) -> Result<TransactionIterator> {
        let tree = self.tree_of(ks)?;
        self.scan(tree, owned_bounds(&range)?)
    }

    /// [`prefix`](Self::prefix) of keyspace `ks`.
    pub fn prefix_cf(
        &mut self,
        ks: &Keyspace,
        prefix: impl AsRef<[u8]>,
    ) -> Result<TransactionIterator> {
        let tree = self.tree_of(ks)?;
        self.scan(tree, prefix_range(prefix.as_ref())?)
    }

    /// Marks the transaction's writes so far: [`rollback_to_savepoint`]
    /// undoes those made after (RocksDB's `SetSavePoint`). Savepoints nest.
    /// On a transaction that ended it does nothing (its next other call
    /// says why).
    ///
    /// [`rollback_to_savepoint`]: Self::rollback_to_savepoint
    pub fn set_savepoint(&mut self) {
        self.writes.set_savepoint();
    }

    /// Undoes the writes made since the last [`set_savepoint`] and forgets
    /// it. Locks taken since stay held, and reads since still count for the
    /// commit's check. No savepoint is [`Error::InvalidArgument`].
    ///
    /// [`set_savepoint`]: Self::set_savepoint
    pub fn rollback_to_savepoint(&mut self) -> Result<()> {
        self.active()?;
        if self.writes.rollback_to_savepoint() {
            Ok(())
        } else {
            Err(Error::InvalidArgument(
                "rollback_to_savepoint: no savepoint is set".into(),
            ))
        }
    }

    /// Commits: every pending write, atomically across keyspaces, as one WAL
    /// record, unsynced (as [`Db::write`]). Fails with [`Error::Conflict`]
    /// when its check fails (nothing is written). Committed or not, the
    /// transaction ends: a failed commit (a conflict, an I/O error, a closed
    /// database) leaves it failed, its locks released, and every later call
    /// returns that error.
    pub fn commit(&mut self) -> Result<()> {
        self.commit_opt(&WriteOptions::default())
    }

    /// [`commit`](Self::commit) with write options (`sync: true`: durable when
    /// it returns; many committing threads share one fsync).
    pub fn commit_opt(&mut self, wo: &WriteOptions) -> Result<()> {
        self.active()?;
        let check = self.validation();
        let check = (!check.is_empty()).then(|| Box::new(check) as _);
        let batch = self.writes.batch(self.db.batch_owner());
        let r = self.db.commit_txn(batch, wo.sync, check);
        self.end(match &r {
            Ok(()) => State::Ended("committed"),
            Err(e) => State::Failed(e.clone()),
        });
        r
    }

    /// Drops every pending write and releases its locks; the transaction
    /// ends.
    pub fn rollback(&mut self) -> Result<()> {
        if let State::Ended(how) = self.state {
            return Err(ended(how));
        }
        self.end(State::Ended("rolled back"));
        Ok(())
    }

    /// Ends the transaction in `state`: its locks, pending writes and
    /// snapshot released.
    fn end(&mut self, state: State) {
        self.release();
        self.writes = WriteSet::default();
        self.snapshot = None;
        self.state = state;
    }

    /// Ok while the transaction can be used.
    fn active(&self) -> Result<()> {
        match &self.state {
            State::Active => Ok(()),
            State::Failed(e) => Err(e.clone()),
            State::Ended(how) => Err(ended(how)),
        }
    }

    /// Returns `e`; a conflict fails the transaction for good (its locks
    /// released).
    fn fail<T>(&mut self, e: Error) -> Result<T> {
        if e.is_conflict() {
            self.end(State::Failed(e.clone()));
        }
        Err(e)
    }

    fn default_tree(&self) -> Arc<Tree> {
        self.db.default_tree().clone()
    }

    /// Keeps `tree` for the commit's validation, which looks up the
    /// keyspace of every key or range recorded (a plain read under snapshot
    /// isolation records nothing, so it keeps nothing).
    fn remember(&mut self, tree: &Arc<Tree>) {
        self.trees.entry(tree.id).or_insert_with(|| tree.clone());
    }

    fn tree_of(&mut self, ks: &Keyspace) -> Result<Arc<Tree>> {
        if !ks.of(&self.db) {
            return Err(Error::InvalidArgument(
                "a keyspace of another database than the transaction's".into(),
            ));
        }
        Ok(ks.tree_arc().clone())
    }

    /// Takes `key`'s lock (pessimistic), then checks under snapshot
    /// isolation that it was not written since the snapshot (RocksDB's
    /// `SetSnapshot` validation); the commit checks again.
    fn lock(&mut self, tree: &Tree, key: &[u8]) -> Result<()> {
        if !self.opts.pessimistic {
            return Ok(());
        }
        let k: Key = (tree.id, key.to_vec());
        let taken = self.db.locks().lock(
            self.id,
            &k,
            self.opts.lock_timeout,
            self.opts.deadlock_detect,
        );
        match taken {
            Ok(true) => self.locked.push(k),
            Ok(false) => return Ok(()),
            Err(e) => return self.fail(e),
        }
        let earlier = crate::db::conflicts::EarlierWrites::default();
        match self.db.written_after(tree, key, self.seq, &earlier) {
            crate::db::conflicts::Written::No => Ok(()),
            crate::db::conflicts::Written::Yes(at) => self.fail(Error::Conflict {
                kind: ConflictKind::Write,
                detail: format!(
                    "key {} of keyspace {:?} was written at sequence {at}, after this \
                     transaction's snapshot (sequence {})",
                    key.escape_ascii(),
                    tree.name,
                    self.seq
                ),
            }),
            crate::db::conflicts::Written::Unknown => self.fail(Error::Conflict {
                kind: ConflictKind::TooOld,
                detail: format!(
                    "keyspace {:?} flushed writes newer than this transaction's snapshot out of \
                     its memtables, so key {} cannot be checked",
                    tree.name,
                    key.escape_ascii()
                ),
            }),
        }
    }

    fn read(&mut self, tree: Arc<Tree>, key: &[u8], for_update: bool) -> Result<Option<Vec<u8>>> {
        self.active()?;
        let key = checked_key(key)?;
        if for_update {
            self.lock(&tree, key)?;
            self.remember(&tree);
            self.for_update.insert((tree.id, key.to_vec()));
        } else if self.opts.isolation == Isolation::Serializable {
            self.remember(&tree);
            self.reads.insert((tree.id, key.to_vec()));
        }
        if self.writes.is_empty() {
            // Nothing of its own to see: the snapshot alone (no key copied).
            return self.db.get_at(&tree, key, self.seq);
        }
        let k = (tree.id, key.to_vec());
        match self.writes.get(&k) {
            Some(write_set::Pending::Value(v)) => Ok(Some(v.clone())),
            Some(write_set::Pending::Deleted) => Ok(None),
            Some(p) => {
                let p = p.clone();
                let merge = tree.opts().merge_operator.clone();
                let base = match &p {
                    write_set::Pending::Merge { base: None, .. } => {
                        self.db.get_at(&tree, key, self.seq)?
                    }
                    _ => None,
                };
                iter::resolve(merge.as_ref(), key, p, base)
            }
            None => self.db.get_at(&tree, key, self.seq),
        }
    }

    fn write(&mut self, tree: Arc<Tree>, key: &[u8], op: Op) -> Result<()> {
        self.active()?;
        let key = checked_key(key)?;
        if let Op::Put(v) | Op::Merge(v) = &op {
            if v.len() > crate::key::MAX_VALUE_LEN {
                return Err(Error::InvalidArgument(format!(
                    "value of {} bytes is longer than {} bytes",
                    v.len(),
                    crate::key::MAX_VALUE_LEN
                )));
            }
        }
        if matches!(op, Op::Merge(_)) && tree.opts().ttl.is_some() {
            // Refused now, as outside a transaction, rather than at commit.
            return Err(Error::InvalidArgument(
                "merge is not supported in a keyspace with a TTL".into(),
            ));
        }
        if tree.dropped.load(std::sync::atomic::Ordering::Acquire) {
            return Err(Error::InvalidArgument(format!(
                "keyspace {:?} was dropped",
                tree.name
            )));
        }
        if matches!(op, Op::Merge(_)) && tree.opts().merge_operator.is_none() {
            // Refused now, not at commit: nothing is locked or recorded.
            return Err(crate::db::txn_support::no_merge_operator(&tree.name));
        }
        self.lock(&tree, key)?;
        self.remember(&tree);
        self.writes.push((tree.id, key.to_vec()), op);
        Ok(())
    }

    fn scan(&mut self, tree: Arc<Tree>, (lo, hi): KeyBounds) -> Result<TransactionIterator> {
        self.active()?;
        if self.opts.isolation == Isolation::Serializable {
            let start = match &lo {
                Bound::Included(k) => k.clone(),
                Bound::Excluded(k) => {
                    let mut s = k.clone();
                    s.push(0);
                    s
                }
                Bound::Unbounded => Vec::new(),
            };
            let end = match &hi {
                Bound::Included(k) => {
                    let mut e = k.clone();
                    e.push(0);
                    Some(e)
                }
                Bound::Excluded(k) => Some(k.clone()),
                Bound::Unbounded => None,
            };
            self.remember(&tree);
            self.ranges.push((tree.id, (start, end)));
        }
        let pending = self.writes.range(tree.id, as_ref(&lo), as_ref(&hi));
        let snapshot = self.db.iter_at(
            &tree,
            self.seq,
            (lo, hi),
            self.snapshot
                .as_ref()
                .ok_or_else(|| Error::InvalidArgument("the transaction has ended".into()))?
                .pin(),
        )?;
        Ok(TransactionIterator::new(
            snapshot,
            pending,
            tree.opts().merge_operator.clone(),
        ))
    }

    /// What the commit checks (see `optimistic.rs`).
    #[expect(
        clippy::expect_used,
        reason = "every recorded key's keyspace is in `trees`: reads, writes and scans insert it \
                  (default_tree, tree_of) before they record the key"
    )]
    fn validation(&self) -> Validation {
        let tree = |id: &u32| self.trees.get(id).expect("a keyspace it touched").clone();
        let mut writes: Vec<(Arc<Tree>, Vec<u8>)> = Vec::new();
        let mut seen: BTreeSet<&Key> = BTreeSet::new();
        for k in self.writes.keys().chain(self.for_update.iter()) {
            if seen.insert(k) {
                writes.push((tree(&k.0), k.1.clone()));
            }
        }
        // A transaction that writes nothing serializes at its snapshot: the
        // writers it saw commit validated their own reads up to their
        // commits (commit order is a serial order), so its snapshot is a
        // prefix of that order and its reads need no check.
        let serializable = self.opts.isolation == Isolation::Serializable && !writes.is_empty();
        let reads = if serializable {
            self.reads
                .iter()
                .filter(|k| !seen.contains(k))
                .map(|k| (tree(&k.0), k.1.clone()))
                .collect()
        } else {
            Vec::new()
        };
        let ranges = if serializable {
            self.ranges
                .iter()
                .map(|(id, r)| (tree(id), r.clone()))
                .collect()
        } else {
            Vec::new()
        };
        Validation {
            seq: self.seq,
            writes,
            reads,
            ranges,
        }
    }

    /// Releases every lock it holds.
    fn release(&mut self) {
        if !self.locked.is_empty() {
            let locked = std::mem::take(&mut self.locked);
            self.db.locks().unlock(self.id, &locked);
        }
    }
}

impl Drop for Transaction {
    /// Rolls back what is not committed: its locks are released.
    fn drop(&mut self) {
        self.release();
    }
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("id", &self.id)
            .field("snapshot", &self.seq)
            .field("pessimistic", &self.opts.pessimistic)
            .field("isolation", &self.opts.isolation)
            .finish()
    }
}

/// The error of a call on a transaction that ended.
fn ended(how: &str) -> Error {
    Error::InvalidArgument(format!("the transaction was {how}"))
}

fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}
