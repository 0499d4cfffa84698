//! Keyspaces: opening, creating, listing and dropping them, and the
//! [`Keyspace`] handle (RocksDB's column family handle, fjall's keyspace).
//! What a keyspace owns is `crate::keyspace`; the rules (one WAL, atomic
//! flushes, drops) are in `docs/design/keyspaces.md`.

use super::handles::{Gate, GateRef};
use super::*;
use crate::keyspace::{KeyspaceOptions, DEFAULT};
use crate::version::KeyspaceRecord;

/// Longest keyspace name, in bytes.
pub const MAX_KEYSPACE_NAME: usize = 255;

/// One keyspace of a database: its own keys, memtable, levels, compaction
/// and options, sharing the database's WAL, sequence numbers, snapshots,
/// caches and filter memory budget. Cheap to clone, `Send + Sync`.
///
/// A handle does not keep its database open: once the [`Db`] is closed
/// ([`Db::close`]) or dropped, every call through the handle returns
/// [`Error::Closed`] ([`stats`](Self::stats) is empty and
/// [`property`](Self::property) `None`), and a reopened database needs new
/// handles. Each call holds the database only while it runs (upgrading a
/// weak reference: one atomic operation).
///
/// ```
/// # fn main() -> sievedb::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// use sievedb::{Db, Options, ReadOptions, WriteBatch};
///
/// let db = Db::open(dir.path(), Options::default())?;
/// let users = db.keyspace("users")?;
/// let index = db.keyspace("users_by_email")?;
/// let mut b = WriteBatch::new();
/// b.put_cf(&users, "u1", "alice");
/// b.put_cf(&index, "alice@example.com", "u1");
/// db.write(b)?; // atomic across keyspaces
/// let snap = db.snapshot();
/// users.delete("u1")?;
/// assert_eq!(users.get("u1")?, None);
/// assert_eq!(users.get_opt("u1", &ReadOptions::default().snapshot(&snap))?.as_deref(), Some(&b"alice"[..]));
/// assert_eq!(db.get("u1")?, None); // the default keyspace holds other keys
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Keyspace {
    /// The database, while its `Db` is open.
    db: GateRef,
    pub(super) tree: Arc<Tree>,
    /// The token of the database (see [`WriteBatch::owner`]), kept so that
    /// batches can name the keyspace without reaching the database.
    owner: usize,
}

impl Db {
    /// Opens keyspace `name`, creating it (durably) with the database's
    /// options if it does not exist. `"default"` is the keyspace `Db`'s own
    /// methods read and write.
    ///
    /// A keyspace that exists gets its options from the first
    /// [`keyspace_with`](Self::keyspace_with) or `keyspace` of the process
    /// (`keyspace`: the database's); a keyspace created with a TTL must be
    /// opened with one.
    pub fn keyspace(&self, name: &str) -> Result<Keyspace> {
        Ok(self.handle(self.inner.open_keyspace(name, None)?))
    }

    /// Opens or creates keyspace `name` with `opts` (each option left unset
    /// is the database's). Refused for a keyspace already opened in this
    /// process (its options are set: use [`keyspace`](Self::keyspace) or a
    /// clone of the handle), and for `"default"`, whose options are the
    /// database's [`Options`].
    pub fn keyspace_with(&self, name: &str, opts: KeyspaceOptions) -> Result<Keyspace> {
        Ok(self.handle(self.inner.open_keyspace(name, Some(opts))?))
    }

    /// The default keyspace, which `Db`'s own methods read and write.
    pub fn default_keyspace(&self) -> Keyspace {
        self.handle(self.inner.tree.clone())
    }

    /// A handle of keyspace `tree`, reaching the database through its gate.
    fn handle(&self, tree: Arc<Tree>) -> Keyspace {
        Keyspace {
            db: self.gate.as_ref().map_or_else(GateRef::new, Arc::downgrade),
            tree,
            owner: self.inner.owner_token(),
        }
    }

    /// The names of the keyspaces, sorted (`"default"` among them).
    pub fn list_keyspaces(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .inner
            .trees
            .read()
            .values()
            .map(|t| t.name.clone())
            .collect();
        names.sort();
        names
    }

    /// Drops keyspace `name`, durably: from the return on, it is gone for
    /// every reopen, new handles to it cannot be had and writes through old
    /// ones fail. Its files are deleted once no handle, snapshot read or
    /// iterator still uses them (a crash before leaves them to the next
    /// open's sweep). `"default"` cannot be dropped.
    pub fn drop_keyspace(&self, name: &str) -> Result<()> {
        self.writable("drop_keyspace")?;
        self.inner.drop_keyspace(name)
    }
}

impl DbInner {
    /// The token a [`WriteBatch`] carries to name this database.
    pub(super) fn owner_token(&self) -> usize {
        self.token
    }

    /// The tree of keyspace `name`, opened (with `opts`) or created.
    fn open_keyspace(&self, name: &str, opts: Option<KeyspaceOptions>) -> Result<Arc<Tree>> {
        check_name(name)?;
        if name == DEFAULT {
            if opts.is_some() {
                return Err(Error::InvalidArgument(
                    "the default keyspace's options are the database's Options".into(),
                ));
            }
            return Ok(self.tree.clone());
        }
        let effective = Arc::new(opts.clone().unwrap_or_default().apply(&self.opts)?);
        // Under the WAL lock: no write, memtable switch or other create or
        // drop runs meanwhile.
        let _wal = self.wal.lock();
        let existing = self.trees.read().values().find(|t| t.name == name).cloned();
        if let Some(tree) = existing {
            if tree.configured.load(Ordering::Acquire) {
                if opts.is_some() {
                    return Err(Error::InvalidArgument(format!(
                        "keyspace {name:?} is already open with its options: use Db::keyspace or \
                         a clone of its handle"
                    )));
                }
                return Ok(tree);
            }
            let stamped = self.versions.lock().keyspaces()[&tree.id].ttl_stamped;
            super::ttl::check_keyspace_marker(
                &format!("keyspace {name:?}"),
                "KeyspaceOptions",
                stamped,
                &effective,
            )?;
            tree.configure(effective);
            return Ok(tree);
        }
        if self.read_only {
            return Err(open::read_only_error(&format!(
                "creating keyspace {name:?}"
            )));
        }
        let tree = {
            let mut versions = self.versions.lock();
            let id = versions.next_keyspace_id;
            versions.next_keyspace_id += 1;
            let edit = VersionEdit {
                created: vec![KeyspaceRecord {
                    id,
                    name: name.to_string(),
                    ttl_stamped: effective.ttl.is_some(),
                }],
                ..VersionEdit::default()
            };
            versions.log_and_apply_all(vec![edit])?;
            #[expect(
                clippy::expect_used,
                reason = "the edit just applied created the keyspace"
            )]
            let version = versions.version_of(id).expect("created");
            // Its memtable belongs to the WAL being written now.
            let wal_number = self.tree.mem.read().mem.wal_number();
            let mem = Arc::new(open::new_memtable(&effective, wal_number));
            // A new keyspace: every write of it will be in its memtables.
            let tree = Tree::new(id, name, effective, mem, Vec::new(), version, 0);
            tree.configured.store(true, Ordering::Release);
            Arc::new(tree)
        };
        self.trees.write().insert(tree.id, tree.clone());
        self.multi.store(true, Ordering::Release);
        Ok(tree)
    }

    fn drop_keyspace(&self, name: &str) -> Result<()> {
        check_name(name)?;
        if name == DEFAULT {
            return Err(Error::InvalidArgument(
                "the default keyspace cannot be dropped".into(),
            ));
        }
        let _wal = self.wal.lock();
        let tree = self.trees.read().values().find(|t| t.name == name).cloned();
        let Some(tree) = tree else {
            return Err(Error::InvalidArgument(format!(
                "no keyspace named {name:?}"
            )));
        };
        self.versions.lock().log_and_apply_all(vec![VersionEdit {
            dropped: vec![tree.id],
            ..VersionEdit::default()
        }])?;
        tree.dropped.store(true, Ordering::Release);
        let mut trees = self.trees.write();
        trees.remove(&tree.id);
        self.multi.store(trees.len() > 1, Ordering::Release);
        drop(trees);
        // Flushes waiting on its frozen memtables look again.
        let _bg = self.bg.lock();
        self.done_cv.notify_all();
        Ok(())
    }

    /// Writes `batch` from a handle: refused on a read-only database; TTL
    /// stamps added.
    fn write_checked(&self, batch: WriteBatch, wo: &WriteOptions) -> Result<()> {
        if self.read_only {
            return Err(open::read_only_error("write"));
        }
        let batch = self.stamp_writes(batch)?;
        self.write(batch, wo.sync)
    }
}

/// Refuses an empty name or one over [`MAX_KEYSPACE_NAME`] bytes.
fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > MAX_KEYSPACE_NAME {
        return Err(Error::InvalidArgument(format!(
            "a keyspace name has 1 to {MAX_KEYSPACE_NAME} bytes (got {})",
            name.len()
        )));
    }
    Ok(())
}

impl Keyspace {
    /// The keyspace's name.
    pub fn name(&self) -> &str {
        &self.tree.name
    }

    /// The database, for one call through the handle: [`Error::Closed`]
    /// once its `Db` is closed or dropped, and the error of a dropped
    /// keyspace.
    pub(super) fn db(&self) -> Result<Arc<Gate>> {
        let db = self.db.upgrade().ok_or(Error::Closed)?;
        if self.tree.dropped.load(Ordering::Acquire) {
            return Err(Error::InvalidArgument(format!(
                "keyspace {:?} was dropped",
                self.tree.name
            )));
        }
        Ok(db)
    }

    /// The token of the keyspace's database (see [`DbInner::owner_token`]).
    pub(super) fn owner_token(&self) -> usize {
        self.owner
    }

    /// A batch of one entry of kind `kind` in this keyspace.
    fn one(&self, kind: u8, key: &[u8], value: Option<&[u8]>) -> WriteBatch {
        let extra = value.map_or(0, <[u8]>::len) + 5;
        let mut b = WriteBatch::with_capacity(key.len() + extra + crate::batch::ENTRY_OVERHEAD);
        b.push_in(self.owner, self.tree.id, kind, key, value);
        b
    }

    /// Sets `key` to `value`.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.put_with(key, value, &WriteOptions::default())
    }

    /// [`put`](Self::put) with explicit write options.
    pub fn put_with(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        wo: &WriteOptions,
    ) -> Result<()> {
        let db = self.db()?;
        let b = self.one(1, key.as_ref(), Some(value.as_ref()));
        db.write_checked(b, wo)
    }

    /// Merges `operand` into `key` through the keyspace's merge operator;
    /// refused with [`Error::InvalidArgument`] if it has none (see
    /// [`Db::merge`]).
    pub fn merge(&self, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) -> Result<()> {
        self.merge_with(key, operand, &WriteOptions::default())
    }

    /// [`merge`](Self::merge) with explicit write options.
    pub fn merge_with(
        &self,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
        wo: &WriteOptions,
    ) -> Result<()> {
        let db = self.db()?;
        let b = self.one(4, key.as_ref(), Some(operand.as_ref()));
        db.write_checked(b, wo)
    }

    /// Deletes `key` (a no-op for a missing key).
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.delete_with(key, &WriteOptions::default())
    }

    /// [`delete`](Self::delete) with explicit write options.
    pub fn delete_with(&self, key: impl AsRef<[u8]>, wo: &WriteOptions) -> Result<()> {
        let db = self.db()?;
        let b = self.one(0, key.as_ref(), None);
        db.write_checked(b, wo)
    }

    /// Deletes every key in `range` with one range tombstone (see
    /// [`Db::delete_range`]).
    pub fn delete_range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<()> {
        self.delete_range_with(range, &WriteOptions::default())
    }

    /// [`delete_range`](Self::delete_range) with explicit write options.
    pub fn delete_range_with<K: AsRef<[u8]>, R: RangeBounds<K>>(
        &self,
        range: R,
        wo: &WriteOptions,
    ) -> Result<()> {
        let db = self.db()?;
        let mut b = WriteBatch::new();
        b.delete_range_in(self.owner, self.tree.id, range);
        db.write_checked(b, wo)
    }

    /// The value of `key`, if any.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// The value of `key` with explicit read options (a snapshot of the
    /// database reads every keyspace at the same point).
    pub fn get_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.db()?.get_opt(&self.tree, key.as_ref(), ro)
    }

    /// The values of several keys, all read at the same sequence number.
    pub fn multi_get<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        self.multi_get_opt(keys, &ReadOptions::default())
    }

    /// [`multi_get`](Self::multi_get) with explicit read options.
    pub fn multi_get_opt<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
        ro: &ReadOptions,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        self.db()?.multi_get_opt(&self.tree, keys, ro)
    }

    /// An iterator over every key of the keyspace, ascending (`.rev()`: descending).
    pub fn iter(&self) -> Result<DbIterator> {
        self.range::<&[u8], _>(..)
    }

    /// An iterator over the keys in `range`.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<DbIterator> {
        DbInner::range(&*self.db()?, &self.tree, bounds(&range)?)
    }

    /// An iterator over the keys that start with `prefix` (see [`Db::prefix`]).
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> Result<DbIterator> {
        DbInner::range(&*self.db()?, &self.tree, prefix_bounds(prefix.as_ref())?)
    }

    /// An iterator with explicit read options (see [`Db::iter_opt`]).
    pub fn iter_opt(&self, ro: &ReadOptions) -> Result<DbIterator> {
        DbInner::iter_opt(&*self.db()?, &self.tree, ro)
    }

    /// Compacts the keyspace's files overlapping `range` down to its
    /// deepest level holding data (after flushing every keyspace); see
    /// [`Db::compact_range`].
    pub fn compact_range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<()> {
        let db = self.db()?;
        if db.read_only {
            return Err(open::read_only_error("compact_range"));
        }
        let (lo, hi) = bounds(&range)?;
        let key = |b: &Bound<Vec<u8>>| match b {
            Bound::Included(k) | Bound::Excluded(k) => Some(k.clone()),
            Bound::Unbounded => None,
        };
        db.compact_range(&self.tree, key(&lo).as_deref(), key(&hi).as_deref())
    }

    /// Statistics of this keyspace: its levels, files and memtable bytes
    /// (the counters of reads and writes are the database's, as in
    /// [`Db::stats`]). Empty ([`Stats::default`]) once the database is
    /// closed.
    pub fn stats(&self) -> Stats {
        match self.db.upgrade() {
            Some(db) => db.stats(std::slice::from_ref(&self.tree)),
            None => Stats::default(),
        }
    }
}

impl Keyspace {
    /// The value of the named property of this keyspace as text (the names
    /// of [`Db::property`]; `sievedb.stats` covers this keyspace only).
    /// `None` once the database is closed.
    pub fn property(&self, name: &str) -> Option<String> {
        let v = self.db.upgrade()?.property_value(&self.tree, name)?;
        Some(v.into_text())
    }

    /// The value of a numeric property of this keyspace (see
    /// [`property`](Self::property)).
    pub fn property_int(&self, name: &str) -> Option<u64> {
        self.db
            .upgrade()?
            .property_value(&self.tree, name)?
            .into_int()
    }
}

impl std::fmt::Debug for Keyspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dir = self.db.upgrade().map(|db| db.dir.clone());
        f.debug_struct("Keyspace")
            .field("name", &self.tree.name)
            .field("dir", &dir)
            .finish()
    }
}

impl WriteBatch {
    /// Adds a put of `key` to `value` in keyspace `ks` (RocksDB's `put_cf`).
    pub fn put_cf(&mut self, ks: &Keyspace, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        self.push_in(ks.owner, ks.tree.id, 1, key.as_ref(), Some(value.as_ref()));
    }

    /// Adds a delete of `key` in keyspace `ks`.
    pub fn delete_cf(&mut self, ks: &Keyspace, key: impl AsRef<[u8]>) {
        self.push_in(ks.owner, ks.tree.id, 0, key.as_ref(), None);
    }

    /// Adds a merge of `operand` into `key` in keyspace `ks` (writing the
    /// batch is refused if `ks` has no merge operator).
    pub fn merge_cf(&mut self, ks: &Keyspace, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) {
        self.push_in(
            ks.owner,
            ks.tree.id,
            4,
            key.as_ref(),
            Some(operand.as_ref()),
        );
    }

    /// Adds a delete of every key in `range` in keyspace `ks`.
    pub fn delete_range_cf<K: AsRef<[u8]>, R: RangeBounds<K>>(&mut self, ks: &Keyspace, range: R) {
        self.delete_range_in(ks.owner, ks.tree.id, range);
    }
}
