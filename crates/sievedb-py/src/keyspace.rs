//! `sievedb.Keyspace`: one keyspace of a database (RocksDB's column family),
//! with the same mapping surface as `Db` (`crate::store`).
//!
//! The engine's handle keeps the database open, so the `Db` keeps a list of
//! its handles' [`Slot`]s: `close()` empties them (the object then raises
//! `ClosedError`), as does `drop_keyspace` for the dropped keyspace's (the
//! object then raises `InvalidArgumentError`, and the keyspace's files go
//! without waiting for the garbage collector).

use std::sync::{Arc, RwLock};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::batch::WriteBatch;
use crate::children::{Children, Release};
use crate::cursor::Cursor;
use crate::db::Db;
use crate::errors::OrPy;
use crate::iter::{KeyIterator, Yield};
use crate::iter_options::IterOptions;
use crate::mapping;
use crate::serializer::Codec;
use crate::store::{self, Store, Target};
use crate::views::{ItemsView, KeysView, Owner, Scope, ValuesView};

/// What a `Keyspace` object holds of the engine.
enum State {
    Open(sievedb::Keyspace),
    /// Released by `Db.close()`.
    Closed,
    /// Released by `Db.drop_keyspace()`.
    Dropped,
}

/// The engine handle of one `Keyspace` object, until it is released.
pub struct Slot {
    name: String,
    state: RwLock<State>,
}

impl Slot {
    pub fn new(ks: sievedb::Keyspace) -> Slot {
        Slot {
            name: ks.name().to_string(),
            state: RwLock::new(State::Open(ks)),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Releases the handle of a keyspace that was dropped.
    pub fn mark_dropped(&self) {
        if let Ok(mut s) = self.state.write() {
            if matches!(*s, State::Open(_)) {
                *s = State::Dropped;
            }
        }
    }

    /// Runs `f` on the engine handle (under the slot's read lock).
    fn with<R>(
        &self,
        f: impl FnOnce(&sievedb::Keyspace) -> sievedb::Result<R>,
    ) -> sievedb::Result<R> {
        let g = self
            .state
            .read()
            .map_err(|_| sievedb::Error::Poisoned("the keyspace's lock".into()))?;
        match &*g {
            State::Open(ks) => f(ks),
            State::Closed => Err(sievedb::Error::Closed),
            State::Dropped => Err(sievedb::Error::InvalidArgument(format!(
                "keyspace {:?} was dropped",
                self.name
            ))),
        }
    }
}

impl Release for Slot {
    fn release(&self) {
        if let Ok(mut s) = self.state.write() {
            if matches!(*s, State::Open(_)) {
                *s = State::Closed;
            }
        }
    }
}

/// One keyspace of a database: its own keys, memtable, levels and options,
/// sharing the database's log, sequence numbers and snapshots. Opened by
/// `db.keyspace(name, **options)`; reads and writes as `Db`'s
/// (`ks[k] = v`, `ks.get(k)`, `ks.items()`, ...); `WriteBatch` methods take
/// `keyspace=ks`, and snapshot and transaction reads and writes take
/// `keyspace=ks`. Using it after
/// `db.close()` raises `ClosedError`, after `db.drop_keyspace(name)`
/// `InvalidArgumentError`.
#[pyclass(module = "sievedb", name = "Keyspace", frozen)]
pub struct Keyspace {
    /// Dropped first: the engine handle goes before the `Db` it may be the
    /// last reference of.
    slot: Arc<Slot>,
    db: Py<Db>,
    /// How values (and keys, on the way out) cross the boundary.
    codec: Arc<Codec>,
}

impl Keyspace {
    pub fn new(db: Py<Db>, slot: Arc<Slot>) -> Keyspace {
        Keyspace {
            slot,
            db,
            codec: crate::serializer::bytes(),
        }
    }

    /// The handle, its values going through `codec`.
    pub fn with_codec(mut self, codec: Arc<Codec>) -> Keyspace {
        self.codec = codec;
        self
    }

    /// Runs `f` on the engine handle, without releasing the GIL (for
    /// in-memory work: adding to a batch).
    pub fn with_handle<R>(&self, f: impl FnOnce(&sievedb::Keyspace) -> R) -> PyResult<R> {
        self.slot.with(|ks| Ok(f(ks))).or_py()
    }

    /// Runs `f` on the engine handle with the GIL released, under the
    /// database's read lock as the keyspace's own calls (for a
    /// transaction's reads and writes in the keyspace).
    pub fn run_handle<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&sievedb::Keyspace) -> sievedb::Result<R> + Send,
    ) -> PyResult<R> {
        let slot = &self.slot;
        self.db.get().with_db(py, |_db| slot.with(f))
    }
}

impl Target for Keyspace {
    fn run<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(Store<'_>) -> sievedb::Result<R> + Send,
    ) -> PyResult<R> {
        // The database's read lock first: `close()` holds its write lock
        // while it releases the slots.
        self.run_handle(py, |ks| f(Store::Keyspace(ks)))
    }

    fn children(&self) -> &Children {
        Target::children(self.db.get())
    }

    fn codec(&self) -> &Arc<Codec> {
        &self.codec
    }

    fn write_pairs(&self, py: Python<'_>, pairs: Vec<(Vec<u8>, Vec<u8>)>) -> PyResult<()> {
        let slot = &self.slot;
        self.db.get().with_db(py, |db| {
            let b = slot.with(|ks| {
                let mut b = sievedb::WriteBatch::new();
                for (k, v) in &pairs {
                    b.put_cf(ks, k, v);
                }
                Ok(b)
            })?;
            db.write(b)
        })
    }
}

#[pymethods]
impl Keyspace {
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

    /// Merges `operand` into `key` through the keyspace's `merge_operator`.
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

    /// A view of the `(key, value)` pairs of `[start, end)`, ascending
    /// (descending with `reverse=True`); see `Db.items`.
    #[pyo3(signature = (start=None, end=None, reverse=false))]
    fn items(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<ItemsView> {
        let range = mapping::scope_range(slf.get(), slf.py(), start, end)?;
        Ok(ItemsView(Scope::new(
            Owner::Keyspace(slf.clone().unbind()),
            range,
            reverse,
        )))
    }

    /// A view of the keys of `[start, end)`.
    #[pyo3(signature = (start=None, end=None, reverse=false))]
    fn keys(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<KeysView> {
        let range = mapping::scope_range(slf.get(), slf.py(), start, end)?;
        Ok(KeysView(Scope::new(
            Owner::Keyspace(slf.clone().unbind()),
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
            Owner::Keyspace(slf.clone().unbind()),
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

    /// Compacts the keyspace's files overlapping `[start, end)` down to its
    /// deepest non-empty level.
    #[pyo3(signature = (start=None, end=None))]
    fn compact_range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        store::compact_range(self, py, start, end)
    }

    /// The keyspace's statistics as a dict: its levels, files and memtable
    /// bytes (the read and write counters are the database's).
    fn stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        store::stats(self, py)
    }

    /// The keyspace's name.
    #[getter]
    fn name(&self) -> &str {
        self.slot.name()
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

    /// `del ks[key]`: deletes `key`, KeyError if it is absent (as a dict).
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
        let state = match self.slot.state.read().as_deref() {
            Ok(State::Open(_)) => "",
            Ok(State::Closed) | Err(_) => ", closed",
            Ok(State::Dropped) => ", dropped",
        };
        format!("sievedb.Keyspace({:?}{state})", self.slot.name)
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

    /// `db.write_batch()` whose writes go to this keyspace unless they
    /// say `keyspace=`.
    #[pyo3(signature = (sync=false))]
    fn write_batch(slf: &Bound<'_, Self>, sync: bool) -> WriteBatch {
        let db = slf.get().db.clone_ref(slf.py());
        store::write_batch(db, Some(slf.clone().unbind()), sync)
    }

    // The mapping protocol.

    /// The number of keys: a counting scan, O(n), GIL released (see
    /// `Db.__len__`).
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

    /// As `dict.update`, in one WriteBatch: atomic (see `Db.update`).
    #[pyo3(signature = (*other, **kw))]
    fn update(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyTuple>,
        kw: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        mapping::update(self, py, other, kw)
    }

    /// Removes `key` and returns its value, or `default` (see `Db.pop`).
    #[pyo3(signature = (key, *default))]
    fn pop(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: &Bound<'_, PyTuple>,
    ) -> PyResult<PyObject> {
        mapping::pop(self, py, key, default)
    }

    /// The value of `key`, set to `default` first if absent (see
    /// `Db.setdefault`).
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

    /// Removes and returns the pair of the last (largest) key; KeyError if
    /// empty.
    fn popitem(&self, py: Python<'_>) -> PyResult<(PyObject, PyObject)> {
        mapping::popitem(self, py)
    }

    /// Deletes every key of the keyspace: one `delete_range`.
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        mapping::clear(self, py)
    }

    /// Every pair in a new `dict`: O(n) memory.
    fn copy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        mapping::copy(self, py)
    }

    /// `ks == other`: the same pairs as the Mapping `other`.
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        mapping::eq(self, py, other)
    }
}
