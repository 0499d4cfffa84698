//! `sievedb.Db`: an open database, with the methods of the Rust `Db` and a
//! `dict`-like surface (`db[k]`, `db[k] = v`, `del db[k]`, `k in db`),
//! which it shares with `sievedb.Keyspace` (`crate::store`).
//!
//! Every call that may read or write files or wait runs with the GIL
//! released, so other Python threads go on meanwhile; the handle is shared
//! by threads freely. `close()` waits for calls in flight on other threads.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use sievedb::WriteOptions;

use crate::batch::WriteBatch;
use crate::children::Children;
use crate::cursor::Cursor;
use crate::errors::{OpenError, OrPy};
use crate::iter::{KeyIterator, Yield};
use crate::iter_options::IterOptions;
use crate::keys::range_of;
use crate::keyspace::{Keyspace, Slot};
use crate::mapping;
use crate::options::{from_kwargs, keyspace_from_kwargs};
use crate::serializer::Codec;
use crate::snapshot::Snapshot;
use crate::store::{self, json_to_py, Store, Target};
use crate::transaction::{self, Transaction};
use crate::views::{ItemsView, KeysView, Owner, Scope, ValuesView};

/// An open sievedb database.
///
/// `Db(path, **options)` opens (by default creating) the database in the
/// directory `path`; the options are those of the Rust `Options::builder()`
/// by name (`write_buffer_size=8 << 20`, `bits_per_key=10.0`,
/// `filter_policy="elastic"`, ...; see `sievedb.OPTIONS`). Use it as a
/// context manager to close it at the end of a block. Its own reads and
/// writes go to the default keyspace; `db.keyspace(name)` opens another.
#[pyclass(module = "sievedb", name = "Db", frozen)]
pub struct Db {
    inner: RwLock<Option<sievedb::Db>>,
    path: PathBuf,
    /// Iterators and snapshots handed out, released by `close()`.
    children: Arc<Children>,
    /// Keyspace handles handed out, released by `close()` (and by
    /// `drop_keyspace` for the dropped one's).
    keyspaces: Children<Slot>,
    /// How values (and keys, on the way out) cross the boundary.
    codec: Arc<Codec>,
}

impl Db {
    /// The handle of the database `open` opens at `path` (with the GIL
    /// released), warning if its recovery dropped data; a missing directory
    /// is `DatabaseNotFoundError`, `why` saying why nothing was created.
    fn opened(
        py: Python<'_>,
        path: PathBuf,
        codec: Arc<Codec>,
        why: &str,
        open: impl FnOnce(&std::path::Path) -> sievedb::Result<sievedb::Db> + Send,
    ) -> PyResult<Self> {
        let db = py
            .allow_threads(|| open(&path).map_err(|e| OpenError::new(e, &path)))
            .map_err(|e| e.into_py(&path, why))?;
        crate::errors::warn_recovery(py, &db)?;
        Ok(Db::wrap(db, path, codec))
    }

    fn wrap(db: sievedb::Db, path: PathBuf, codec: Arc<Codec>) -> Db {
        Db {
            inner: RwLock::new(Some(db)),
            path,
            children: Arc::new(Children::default()),
            keyspaces: Children::default(),
            codec,
        }
    }

    /// Runs `f` on the open database with the GIL released (the read lock
    /// is taken without the GIL too, so `close` on another thread cannot
    /// deadlock with it).
    pub(crate) fn with_db<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&sievedb::Db) -> sievedb::Result<R> + Send,
    ) -> PyResult<R> {
        py.allow_threads(|| {
            let g = self
                .inner
                .read()
                .map_err(|_| sievedb::Error::Poisoned("the handle's lock".into()))?;
            match g.as_ref() {
                Some(db) => f(db),
                None => Err(sievedb::Error::Closed),
            }
        })
        .or_py()
    }

    /// A Python handle of the keyspace `open` opens, registered (under the
    /// read lock, so a `close` cannot slip in between) for `close()`.
    fn keyspace_handle(
        slf: &Bound<'_, Self>,
        codec: Arc<Codec>,
        open: impl FnOnce(&sievedb::Db) -> sievedb::Result<sievedb::Keyspace> + Send,
    ) -> PyResult<Keyspace> {
        let this = slf.get();
        let slot = this.with_db(slf.py(), |db| {
            let slot = Arc::new(Slot::new(open(db)?));
            this.keyspaces.add(&slot);
            Ok(slot)
        })?;
        Ok(Keyspace::new(slf.clone().unbind(), slot).with_codec(codec))
    }
}

impl Target for Db {
    fn run<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(Store<'_>) -> sievedb::Result<R> + Send,
    ) -> PyResult<R> {
        self.with_db(py, |db| f(Store::Default(db)))
    }

    fn children(&self) -> &Children {
        &self.children
    }

    fn codec(&self) -> &Arc<Codec> {
        &self.codec
    }

    fn write_pairs(&self, py: Python<'_>, pairs: Vec<(Vec<u8>, Vec<u8>)>) -> PyResult<()> {
        self.with_db(py, |db| {
            let mut b = sievedb::WriteBatch::new();
            for (k, v) in &pairs {
                b.put(k, v);
            }
            db.write(b)
        })
    }
}

#[pymethods]
impl Db {
    #[new]
    #[pyo3(signature = (path, *, serializer=None, decode=None, str_keys=None, **options))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        serializer: Option<&Bound<'_, PyAny>>,
        decode: Option<&str>,
        str_keys: Option<bool>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let codec = Codec::from_args(py, serializer, decode, str_keys, None)?;
        let opts = from_kwargs(options)?;
        Db::opened(py, path, codec, "create_if_missing=False", |p| {
            sievedb::Db::open(p, opts)
        })
    }

    /// Opens the database at `path` read-only: writes raise `ReadOnlyError`,
    /// and several processes may open it so at once.
    #[staticmethod]
    #[pyo3(signature = (path, *, serializer=None, decode=None, str_keys=None, **options))]
    fn open_read_only(
        py: Python<'_>,
        path: PathBuf,
        serializer: Option<&Bound<'_, PyAny>>,
        decode: Option<&str>,
        str_keys: Option<bool>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let codec = Codec::from_args(py, serializer, decode, str_keys, None)?;
        let opts = from_kwargs(options)?;
        let why = "Db.open_read_only never creates a database";
        Db::opened(py, path, codec, why, |p| {
            sievedb::Db::open_read_only(p, opts)
        })
    }

    /// Rebuilds the database at `path` (closed) from whatever of its files
    /// can be read; returns what it found and did, as a dict (the fields of
    /// the Rust `RepairReport`; each table in `damaged_tables` and
    /// `tables_missing` a dict of its `LostTable`, keys as bytes).
    #[staticmethod]
    #[pyo3(signature = (path, **options))]
    fn repair(
        py: Python<'_>,
        path: PathBuf,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        let opts = from_kwargs(options)?;
        let report = py
            .allow_threads(|| {
                sievedb::Db::repair(&path, opts).map_err(|e| OpenError::new(e, &path))
            })
            .map_err(|e| e.into_py(&path, "nothing to repair"))?;
        #[expect(
            clippy::expect_used,
            reason = "serde_json cannot fail on these derived Serialize types: plain fields, string keys"
        )]
        let out = json_to_py(py, &serde_json::to_string(&report).expect("serializable"))?;
        // JSON gives the key ranges as lists of ints: make them bytes.
        let dict = out.bind(py).downcast::<PyDict>()?;
        for list in ["damaged_tables", "tables_missing"] {
            let Some(tables) = dict.get_item(list)? else {
                continue;
            };
            for t in tables.try_iter()? {
                let t = t?;
                let t = t.downcast::<PyDict>()?;
                for k in ["smallest", "largest"] {
                    if let Some(v) = t.get_item(k)? {
                        let b: Vec<u8> = v.extract()?;
                        t.set_item(k, pyo3::types::PyBytes::new(py, &b))?;
                    }
                }
            }
        }
        Ok(out)
    }

    /// The value of `key`, or `default` when it is absent.
    #[pyo3(signature = (key, default=None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<PyObject>,
    ) -> PyResult<Option<PyObject>> {
        store::get(self, py, key, default)
    }

    /// Sets `key` to `value` (`sync=True`: fsync the log before returning).
    #[pyo3(signature = (key, value, sync=false))]
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        store::put(self, py, key, value, sync)
    }

    /// Merges `operand` into `key` through the database's `merge_operator`
    /// (a read of the key combines it with the older value).
    #[pyo3(signature = (key, operand, sync=false))]
    fn merge(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        operand: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        store::merge(self, py, key, operand, sync)
    }

    /// Deletes `key` (nothing happens if it is absent).
    #[pyo3(signature = (key, sync=false))]
    fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>, sync: bool) -> PyResult<()> {
        store::delete(self, py, key, sync)
    }

    /// Deletes every key in `[start, end)` (None: unbounded on that side).
    #[pyo3(signature = (start=None, end=None, sync=false))]
    fn delete_range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        sync: bool,
    ) -> PyResult<()> {
        store::delete_range(self, py, start, end, sync)
    }

    /// The values of `keys`, in order (None for an absent key).
    fn multi_get(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyList>> {
        store::multi_get(self, py, keys)
    }

    /// Applies every operation of `batch` atomically (across keyspaces).
    #[pyo3(signature = (batch, sync=false))]
    fn write(&self, py: Python<'_>, batch: &WriteBatch, sync: bool) -> PyResult<()> {
        let b = batch.snapshot();
        self.with_db(py, |db| db.write_with(b, &WriteOptions { sync }))
    }

    /// A view of the `(key, value)` pairs of `[start, end)`, ascending
    /// (descending with `reverse=True`): re-iterable, each iteration a fresh
    /// consistent read; `len()` counts them (a scan, O(n)).
    #[pyo3(signature = (start=None, end=None, reverse=false))]
    fn items(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<ItemsView> {
        let range = mapping::scope_range(slf.get(), slf.py(), start, end)?;
        Ok(ItemsView(Scope::new(
            Owner::Db(slf.clone().unbind()),
            range,
            reverse,
        )))
    }

    /// A view of the keys of `[start, end)` (as `items()`; set operations
    /// give sets).
    #[pyo3(signature = (start=None, end=None, reverse=false))]
    fn keys(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<KeysView> {
        let range = mapping::scope_range(slf.get(), slf.py(), start, end)?;
        Ok(KeysView(Scope::new(
            Owner::Db(slf.clone().unbind()),
            range,
            reverse,
        )))
    }

    /// A view of the values of `[start, end)`, in key order.
    #[pyo3(signature = (start=None, end=None, reverse=false))]
    fn values(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<ValuesView> {
        let range = mapping::scope_range(slf.get(), slf.py(), start, end)?;
        Ok(ValuesView(Scope::new(
            Owner::Db(slf.clone().unbind()),
            range,
            reverse,
        )))
    }

    /// `(key, value)` pairs of the keys that start with `prefix`.
    #[pyo3(signature = (prefix, reverse=false))]
    fn prefix(
        &self,
        py: Python<'_>,
        prefix: &Bound<'_, PyAny>,
        reverse: bool,
    ) -> PyResult<KeyIterator> {
        store::prefix(self, py, prefix, reverse)
    }

    /// A point-in-time view of every keyspace (also a context manager that
    /// releases it).
    fn snapshot(&self, py: Python<'_>) -> PyResult<Snapshot> {
        let snap = self.with_db(py, |db| Ok(db.snapshot()))?;
        Ok(Snapshot::new(snap, self.children.clone()).with_codec(&self.codec))
    }

    /// A new transaction (see `Transaction`): optimistic, or with
    /// `pessimistic=True` locking the keys it writes or reads for update
    /// (waiting up to `lock_timeout` seconds for another's lock, and failing
    /// at once a wait that would deadlock unless `deadlock_detect=False`);
    /// `isolation="snapshot"` or `"serializable"` (no write skew).
    #[pyo3(signature = (pessimistic=false, isolation="snapshot", lock_timeout=1.0, deadlock_detect=true))]
    fn transaction(
        &self,
        py: Python<'_>,
        pessimistic: bool,
        isolation: &str,
        lock_timeout: f64,
        deadlock_detect: bool,
    ) -> PyResult<Transaction> {
        let (opts, level) =
            transaction::options(pessimistic, isolation, lock_timeout, deadlock_detect)?;
        let children = &self.children;
        // Registered under the read lock, so that a `close` cannot slip in
        // between.
        self.with_db(py, |db| {
            Ok(
                Transaction::new(db.transaction_opt(&opts), level, children.clone())
                    .with_codec(&self.codec),
            )
        })
    }

    /// Opens keyspace `name`, creating it (durably) if it does not exist.
    /// With no options it gets the database's (or, if it was opened before
    /// in this process, the options it was opened with); options (see
    /// `sievedb.KEYSPACE_OPTIONS`) are refused with `InvalidArgumentError`
    /// for a keyspace already opened in this process and for "default".
    /// Its values go through the database's `serializer`/`decode` (and its
    /// keys its `str_keys`) unless given here (`serializer="bytes"`: none).
    #[pyo3(signature = (name, *, serializer=None, decode=None, str_keys=None, **options))]
    fn keyspace(
        slf: &Bound<'_, Self>,
        name: String,
        serializer: Option<&Bound<'_, PyAny>>,
        decode: Option<&str>,
        str_keys: Option<bool>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Keyspace> {
        let codec = Codec::from_args(
            slf.py(),
            serializer,
            decode,
            str_keys,
            Some(&slf.get().codec),
        )?;
        let opts = keyspace_from_kwargs(options)?;
        Db::keyspace_handle(slf, codec, move |db| match opts {
            Some(o) => db.keyspace_with(&name, o),
            None => db.keyspace(&name),
        })
    }

    /// The default keyspace (the one the database's own methods use) as a
    /// `Keyspace`.
    fn default_keyspace(slf: &Bound<'_, Self>) -> PyResult<Keyspace> {
        let codec = slf.get().codec.clone();
        Db::keyspace_handle(slf, codec, |db| Ok(db.default_keyspace()))
    }

    /// The names of the keyspaces, sorted ("default" among them).
    fn list_keyspaces(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with_db(py, |db| Ok(db.list_keyspaces()))
    }

    /// Drops keyspace `name` and its data, durably. Its `Keyspace` objects
    /// raise `InvalidArgumentError` from then on (their iterators read on).
    fn drop_keyspace(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        // The handles of the keyspace as it is now (one of the same name
        // made after the drop is another keyspace).
        let handles: Vec<Arc<Slot>> = self
            .keyspaces
            .live()
            .into_iter()
            .filter(|s| s.name() == name)
            .collect();
        self.with_db(py, |db| db.drop_keyspace(name))?;
        // Let go of the engine's handles now, so that the keyspace's files
        // are deleted without waiting for the garbage collector.
        py.allow_threads(|| handles.iter().for_each(|s| s.mark_dropped()));
        Ok(())
    }

    /// Every counter of the engine as a dict (per level under `levels`;
    /// the levels are every keyspace's together).
    fn stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        store::stats(self, py)
    }

    /// What replaying the write-ahead logs did when the database was opened,
    /// as a dict (`Db::recovery_report` of the engine): the mode, the WALs,
    /// the records applied, and what was dropped (`dropped`, None if
    /// nothing; `records_dropped`, `entries_dropped`, `bytes_dropped`).
    #[expect(
        clippy::expect_used,
        reason = "serde_json cannot fail on these derived Serialize types: plain fields, string keys"
    )]
    fn recovery_report(&self, py: Python<'_>) -> PyResult<PyObject> {
        let report = self.with_db(py, |db| Ok(db.recovery_report().clone()))?;
        json_to_py(py, &serde_json::to_string(&report).expect("serializable"))
    }

    /// A named property (`"sievedb.stats"`, `"sievedb.levels"`,
    /// `"sievedb.num-files-at-level0"`, ...) as text, or None if unknown.
    fn property(&self, py: Python<'_>, name: &str) -> PyResult<Option<String>> {
        self.with_db(py, |db| Ok(db.property(name)))
    }

    /// A numeric property as an int, or None if unknown or not numeric.
    fn property_int(&self, py: Python<'_>, name: &str) -> PyResult<Option<u64>> {
        self.with_db(py, |db| Ok(db.property_int(name)))
    }

    /// Writes a consistent copy of the database into the new directory `dir`.
    fn checkpoint(&self, py: Python<'_>, dir: PathBuf) -> PyResult<()> {
        self.with_db(py, |db| db.checkpoint(&dir))
    }

    /// Writes the memtables (every keyspace's) to table files and waits for
    /// them.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.with_db(py, |db| db.flush())
    }

    /// Waits until no compaction is pending or running.
    fn wait_for_compactions(&self, py: Python<'_>) -> PyResult<()> {
        self.with_db(py, |db| db.wait_for_compactions())
    }

    /// Compacts the files overlapping `[start, end)` down to the deepest
    /// non-empty level.
    #[pyo3(signature = (start=None, end=None))]
    fn compact_range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        store::compact_range(self, py, start, end)
    }

    /// Bytes of table files holding `[start, end)`, approximately.
    #[pyo3(signature = (start=None, end=None))]
    fn approximate_size(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let range = range_of(start, end)?;
        self.with_db(py, |db| db.approximate_size::<Vec<u8>, _>(range))
    }

    /// Closes the database (waiting for calls in flight on other threads).
    /// Its iterators, snapshots, transactions (rolled back) and keyspace
    /// handles are released first:
    /// using them afterwards raises `ClosedError`. Closing twice does
    /// nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| {
            let mut g = self
                .inner
                .write()
                .map_err(|_| sievedb::Error::Poisoned("the handle's lock".into()))?;
            self.children.release_all();
            self.keyspaces.release_all();
            match g.take() {
                Some(db) => db.close(),
                None => Ok(()),
            }
        })
        .or_py()
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.read().map_or(true, |g| g.is_none())
    }

    /// The database directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        store::getitem(self, py, key)
    }

    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        store::put(self, py, key, value, false)
    }

    /// `del db[key]`: deletes `key`, KeyError if it is absent (as a dict).
    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        store::delitem(self, py, key)
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        store::contains(self, py, key)
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<KeyIterator> {
        store::iter(self, py, None, None, false, Yield::Keys)
    }

    fn __repr__(&self) -> String {
        format!(
            "sievedb.Db({:?}{})",
            self.path.display().to_string(),
            if self.closed() { ", closed" } else { "" }
        )
    }
    // rocksdict's and plyvel's habits.
    /// A seekable cursor over `[start, end)` (None: unbounded), as of now
    /// (rocksdict's `db.iter()`): see `Cursor`.
    #[pyo3(signature = (start=None, end=None))]
    fn iter(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Cursor> {
        store::cursor(self, py, start, end)
    }

    /// plyvel's iterator: `(key, value)` pairs (keys only with
    /// `include_value=False`, values only with `include_key=False`) from
    /// `start` (included unless `include_start=False`) to `stop` (excluded
    /// unless `include_stop=True`), or of the keys starting with `prefix`
    /// (which excludes `start` and `stop`); descending with `reverse=True`.
    #[pyo3(signature = (reverse=false, start=None, stop=None, include_start=true, include_stop=false, prefix=None, include_key=true, include_value=true))]
    #[expect(
        clippy::too_many_arguments,
        reason = "plyvel's iterator() arguments, one each"
    )]
    fn iterator(
        &self,
        py: Python<'_>,
        reverse: bool,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        include_start: bool,
        include_stop: bool,
        prefix: Option<&Bound<'_, PyAny>>,
        include_key: bool,
        include_value: bool,
    ) -> PyResult<KeyIterator> {
        let o = IterOptions::new(
            reverse,
            start,
            stop,
            include_start,
            include_stop,
            prefix,
            include_key,
            include_value,
        )?;
        store::iterator(self, py, o)
    }

    /// False if `key` surely does not exist; True if it may (RocksDB's
    /// `KeyMayExist`: a filter probe may answer True for an absent key).
    fn key_may_exist(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        store::key_may_exist(self, py, key)
    }

    /// plyvel's `db.write_batch()`: a `WriteBatch` to fill in a `with`
    /// block, written atomically when the block ends normally (with
    /// `sync=`), not at all if it raises (plyvel's `transaction=True`; a
    /// batch is always all or nothing). `b.write()` writes it earlier.
    #[pyo3(signature = (sync=false))]
    fn write_batch(slf: &Bound<'_, Self>, sync: bool) -> WriteBatch {
        store::write_batch(slf.clone().unbind(), None, sync)
    }

    // The mapping protocol.

    /// The number of keys (of the default keyspace): a counting scan of
    /// every key, O(n), with the GIL released. (`list(db)` and
    /// `list(db.keys())` call it first to size the list: `list(iter(db))`
    /// scans once.)
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        mapping::len(self, py)
    }

    /// Whether there is any key: one seek.
    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        mapping::non_empty(self, py)
    }

    /// The keys, descending.
    fn __reversed__(&self, py: Python<'_>) -> PyResult<KeyIterator> {
        store::iter(self, py, None, None, true, Yield::Keys)
    }

    /// As `dict.update`: from a mapping, an object with `keys()`, an
    /// iterable of pairs, and keyword arguments; all written in one
    /// WriteBatch, so atomically (all or nothing, also if reading `other`
    /// raises).
    #[pyo3(signature = (*other, **kw))]
    fn update(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyTuple>,
        kw: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        mapping::update(self, py, other, kw)
    }

    /// Removes `key` and returns its value; `default` if it is absent, or
    /// KeyError without one. The read and the delete are not one atomic
    /// step (use a transaction for that).
    #[pyo3(signature = (key, *default))]
    fn pop(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: &Bound<'_, PyTuple>,
    ) -> PyResult<PyObject> {
        mapping::pop(self, py, key, default)
    }

    /// The value of `key`; if absent, sets it to `default` first and
    /// returns that. Without a serializer `default` must be bytes or str
    /// (so `setdefault(k)` of an absent key raises TypeError). A mutable
    /// default is stored as a copy: changing it later writes nothing.
    #[pyo3(signature = (key, default=None))]
    fn setdefault(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let none = py.None();
        let default = default.unwrap_or(none.bind(py));
        mapping::setdefault(self, py, key, default)
    }

    /// Removes and returns the `(key, value)` pair of the last key (the
    /// largest: dict pops its last one too); KeyError if empty.
    fn popitem(&self, py: Python<'_>) -> PyResult<(PyObject, PyObject)> {
        mapping::popitem(self, py)
    }

    /// Deletes every key: one `delete_range` (cheap, not a delete per key).
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        mapping::clear(self, py)
    }

    /// Every pair in a new `dict` (as `os.environ.copy()`): O(n) memory.
    fn copy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        mapping::copy(self, py)
    }

    /// `db == other`: the same pairs as the Mapping `other` (a dict, another
    /// Db, ...); NotImplemented for a non-mapping.
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        mapping::eq(self, py, other)
    }
}
