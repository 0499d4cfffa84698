//! `key_may_exist`: RocksDB's `KeyMayExist`, a point probe of the memtables
//! and the resident SST filters that never reads a block.

use super::*;

impl DbInner {
    /// [`Db::key_may_exist_opt`] in `tree`.
    pub(super) fn key_may_exist_opt(
        self: &Arc<Self>,
        tree: &Tree,
        key: &[u8],
        ro: &ReadOptions,
    ) -> Result<bool> {
        let key = user_key(key)?;
        let (seq, view) = self.read_point(tree, ro)?;
        Ok(self.may_exist_in(&view, key, seq))
    }

    /// Whether `key` may have a value in `view` as of `seq`: the memtables
    /// answer if they hold an entry of it (a value or a merge operand: maybe;
    /// a deletion, a covering range tombstone included: no); otherwise the
    /// version's resident filters do (see [`Version::may_contain`]). One
    /// [`KeyProbe`] serves every filter; it counts as a lookup in the stats.
    fn may_exist_in(&self, view: &View, key: &[u8], seq: SeqNo) -> bool {
        thread_local! {
            /// The seek key of this thread's probes, reused (no allocation per probe).
            static SEEK: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let mut probe = KeyProbe::new(key, self.opts.filter.sharing);
        let may = SEEK.with(|cell| match cell.try_borrow_mut() {
            Ok(mut buf) => self.may_exist_with(view, &mut probe, seq, &mut buf),
            Err(_) => self.may_exist_with(view, &mut probe, seq, &mut Vec::new()),
        });
        self.counters
            .finish_lookup(&probe.tally, probe.digests_computed);
        may
    }

    /// [`DbInner::may_exist_in`] with `buf` as the buffer of the seek key.
    fn may_exist_with(
        &self,
        view: &View,
        probe: &mut KeyProbe<'_>,
        seq: SeqNo,
        buf: &mut Vec<u8>,
    ) -> bool {
        let mut seek = key::LazySeek::new(buf, seq);
        match self.memtables_get(view, probe, &mut seek) {
            Some(Lookup::Deleted | Lookup::Absent) => false,
            Some(Lookup::Value(_) | Lookup::Merge) => true,
            None => view.version.may_contain(probe),
        }
    }
}

impl Db {
    /// Whether `key` may exist, answered from memory alone (RocksDB's
    /// `KeyMayExist`): `false` means the key certainly has no value; `true`
    /// means it may have one (a [`get`](Self::get) tells). For skipping the
    /// read of a key that is most likely absent.
    ///
    /// What it looks at, newest first, stopping at the first answer:
    ///
    /// - the memtables: the key's newest entry there answers (a value or a
    ///   merge operand: `true`; a deletion, or a range tombstone of the
    ///   memtable covering the key: `false`), with their filters, if any,
    ///   skipping the memtables that cannot hold it;
    /// - then, in each run of each level, the one file whose key range
    ///   covers the key: `true` unless its filter excludes the key.
    ///   Only the filter units already resident are probed, with the one
    ///   key digest the lookup computes for all of them, so a file whose
    ///   filter has not been read since open (no [`get`](Self::get) has
    ///   reached the file yet), that has no filter, or whose units the
    ///   filter budget dropped counts as "maybe" (`true`).
    ///
    /// It never reads a data, index or filter block, opens a table or looks
    /// at the block cache. Range tombstones in SST files are not consulted
    /// (a key they delete may answer `true`); nor is a TTL (an expired
    /// value answers `true`). It is counted as a lookup in
    /// [`Stats::gets`] and the filter counters.
    ///
    /// ```
    /// # fn main() -> sievedb::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
    /// db.put("here", "v")?;
    /// db.put("gone", "v")?;
    /// db.delete("gone")?;
    /// assert!(db.key_may_exist("here")?); // always true for a present key
    /// assert!(!db.key_may_exist("gone")?); // its deletion is in the memtable
    /// # Ok(()) }
    /// ```
    pub fn key_may_exist(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        self.key_may_exist_opt(key, &ReadOptions::default())
    }

    /// [`key_may_exist`](Self::key_may_exist) with explicit read options:
    /// their snapshot sets which memtable entries are seen (the filters
    /// answer for every version of the key alike); cache and checksum
    /// settings do not apply, since no block is read.
    ///
    /// ```
    /// # fn main() -> sievedb::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// use sievedb::ReadOptions;
    ///
    /// let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
    /// db.put("k", "v")?;
    /// let snap = db.snapshot();
    /// db.delete("k")?;
    /// assert!(!db.key_may_exist("k")?);
    /// assert!(db.key_may_exist_opt("k", &ReadOptions::default().snapshot(&snap))?);
    /// # Ok(()) }
    /// ```
    pub fn key_may_exist_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<bool> {
        self.inner
            .key_may_exist_opt(&self.inner.tree, key.as_ref(), ro)
    }
}

impl Keyspace {
    /// Whether `key` may exist in this keyspace, from memory alone: `false`
    /// means certainly absent (see [`Db::key_may_exist`] for exactly what
    /// it looks at).
    ///
    /// ```
    /// # fn main() -> sievedb::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
    /// let users = db.keyspace("users")?;
    /// users.put("u1", "alice")?;
    /// assert!(users.key_may_exist("u1")?);
    /// users.delete("u1")?;
    /// assert!(!users.key_may_exist("u1")?);
    /// # Ok(()) }
    /// ```
    pub fn key_may_exist(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        self.key_may_exist_opt(key, &ReadOptions::default())
    }

    /// [`key_may_exist`](Self::key_may_exist) with explicit read options
    /// (see [`Db::key_may_exist_opt`]).
    ///
    /// ```
    /// # fn main() -> sievedb::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// use sievedb::ReadOptions;
    ///
    /// let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
    /// let users = db.keyspace("users")?;
    /// let snap = db.snapshot();
    /// users.put("u1", "alice")?;
    /// assert!(users.key_may_exist("u1")?);
    /// // Before the put, the keyspace was empty: nothing may exist.
    /// assert!(!users.key_may_exist_opt("u1", &ReadOptions::default().snapshot(&snap))?);
    /// # Ok(()) }
    /// ```
    pub fn key_may_exist_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<bool> {
        self.db()?.key_may_exist_opt(&self.tree, key.as_ref(), ro)
    }
}
