//! `sievedb.Db`: an open database, with the methods of the Rust `Db` and a
//! `dict`-like surface (`db[k]`, `db[k] = v`, `del db[k]`, `k in db`).
//!
//! Every call that may read or write files or wait runs with the GIL
//! released, so other Python threads go on meanwhile; the handle is shared
//! by threads freely. `close()` waits for calls in flight on other threads.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use sievedb::WriteOptions;

use crate::batch::WriteBatch;
use crate::children::Children;
use crate::errors::OrPy;
use crate::iter::{KeyIterator, Yield};
use crate::keys::{bytes_of, range_of};
use crate::options::from_kwargs;
use crate::snapshot::Snapshot;

/// An open sievedb database.
///
/// `Db(path, **options)` opens (by default creating) the database in the
/// directory `path`; the options are those of the Rust `Options::builder()`
/// by name (`write_buffer_size=8 << 20`, `bits_per_key=10.0`,
/// `filter_policy="elastic"`, ...; see `sievedb.OPTIONS`). Use it as a
/// context manager to close it at the end of a block.
#[pyclass(module = "sievedb", name = "Db", frozen)]
pub struct Db {
    inner: RwLock<Option<sievedb::Db>>,
    path: PathBuf,
    /// Iterators and snapshots handed out, released by `close()`.
    children: Arc<Children>,
}

fn wo(sync: bool) -> WriteOptions {
    WriteOptions { sync }
}

impl Db {
    fn wrap(db: sievedb::Db, path: PathBuf) -> Db {
        Db {
            inner: RwLock::new(Some(db)),
            path,
            children: Arc::new(Children::default()),
        }
    }

    /// Runs `f` on the open database with the GIL released (the read lock
    /// is taken without the GIL too, so `close` on another thread cannot
    /// deadlock with it).
    fn with_db<R: Send>(
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

    fn iter(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        kind: Yield,
    ) -> PyResult<KeyIterator> {
        let range = range_of(start, end)?;
        let it = self.with_db(py, |db| db.range::<Vec<u8>, _>(range))?;
        Ok(KeyIterator::new(it, kind, reverse, &self.children))
    }
}

#[pymethods]
impl Db {
    #[new]
    #[pyo3(signature = (path, **options))]
    fn new(py: Python<'_>, path: PathBuf, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let opts = from_kwargs(options)?;
        let p = path.clone();
        let db = py.allow_threads(|| sievedb::Db::open(&p, opts)).or_py()?;
        Ok(Db::wrap(db, path))
    }

    /// Opens the database at `path` read-only: writes raise `ReadOnlyError`,
    /// and several processes may open it so at once.
    #[staticmethod]
    #[pyo3(signature = (path, **options))]
    fn open_read_only(
        py: Python<'_>,
        path: PathBuf,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let opts = from_kwargs(options)?;
        let p = path.clone();
        let db = py
            .allow_threads(|| sievedb::Db::open_read_only(&p, opts))
            .or_py()?;
        Ok(Db::wrap(db, path))
    }

    /// Rebuilds the database at `path` (closed) from whatever of its files
    /// can be read; returns what it found and did, as a dict.
    #[staticmethod]
    #[pyo3(signature = (path, **options))]
    fn repair(
        py: Python<'_>,
        path: PathBuf,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyObject> {
        let opts = from_kwargs(options)?;
        let report = py
            .allow_threads(|| sievedb::Db::repair(&path, opts))
            .or_py()?;
        json_to_py(py, &serde_json::to_string(&report).expect("serializable"))
    }

    /// The value of `key`, or `default` when it is absent.
    #[pyo3(signature = (key, default=None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<PyObject>,
    ) -> PyResult<Option<PyObject>> {
        let k = bytes_of(key, "key")?;
        let v = self.with_db(py, |db| db.get(&k))?;
        Ok(match v {
            Some(v) => Some(PyBytes::new(py, &v).into_any().unbind()),
            None => default,
        })
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
        let (k, v) = (bytes_of(key, "key")?, bytes_of(value, "value")?);
        self.with_db(py, |db| db.put_with(&k, &v, &wo(sync)))
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
        let (k, v) = (bytes_of(key, "key")?, bytes_of(operand, "operand")?);
        self.with_db(py, |db| db.merge_with(&k, &v, &wo(sync)))
    }

    /// Deletes `key` (nothing happens if it is absent).
    #[pyo3(signature = (key, sync=false))]
    fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>, sync: bool) -> PyResult<()> {
        let k = bytes_of(key, "key")?;
        self.with_db(py, |db| db.delete_with(&k, &wo(sync)))
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
        let range = range_of(start, end)?;
        self.with_db(py, |db| {
            db.delete_range_with::<Vec<u8>, _>(range, &wo(sync))
        })
    }

    /// The values of `keys`, in order (None for an absent key).
    fn multi_get(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyList>> {
        let keys: Vec<Vec<u8>> = keys
            .try_iter()?
            .map(|k| bytes_of(&k?, "key").map(|c| c.into_owned()))
            .collect::<PyResult<_>>()?;
        let values = self.with_db(py, |db| db.multi_get(&keys))?;
        let out = PyList::empty(py);
        for v in values {
            match v {
                Some(v) => out.append(PyBytes::new(py, &v))?,
                None => out.append(py.None())?,
            }
        }
        Ok(out.unbind())
    }

    /// Applies every operation of `batch` atomically.
    #[pyo3(signature = (batch, sync=false))]
    fn write(&self, py: Python<'_>, batch: &WriteBatch, sync: bool) -> PyResult<()> {
        let b = batch.snapshot();
        self.with_db(py, |db| db.write_with(b, &wo(sync)))
    }

    /// `(key, value)` pairs of `[start, end)`, ascending (descending with
    /// `reverse=True`).
    #[pyo3(signature = (start=None, end=None, reverse=false))]
    fn items(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<KeyIterator> {
        self.iter(py, start, end, reverse, Yield::Items)
    }

    /// Keys of `[start, end)`.
    #[pyo3(signature = (start=None, end=None, reverse=false))]
    fn keys(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<KeyIterator> {
        self.iter(py, start, end, reverse, Yield::Keys)
    }

    /// Values of `[start, end)`, in key order.
    #[pyo3(signature = (start=None, end=None, reverse=false))]
    fn values(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<KeyIterator> {
        self.iter(py, start, end, reverse, Yield::Values)
    }

    /// `(key, value)` pairs of the keys that start with `prefix`.
    #[pyo3(signature = (prefix, reverse=false))]
    fn prefix(
        &self,
        py: Python<'_>,
        prefix: &Bound<'_, PyAny>,
        reverse: bool,
    ) -> PyResult<KeyIterator> {
        let p = bytes_of(prefix, "prefix")?;
        let it = self.with_db(py, |db| db.prefix(&p))?;
        Ok(KeyIterator::new(it, Yield::Items, reverse, &self.children))
    }

    /// A point-in-time view (also a context manager that releases it).
    fn snapshot(&self, py: Python<'_>) -> PyResult<Snapshot> {
        let snap = self.with_db(py, |db| Ok(db.snapshot()))?;
        Ok(Snapshot::new(snap, self.children.clone()))
    }

    /// Every counter of the engine as a dict (per level under `levels`).
    fn stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        let s = self.with_db(py, |db| Ok(db.stats()))?;
        json_to_py(py, &serde_json::to_string(&s).expect("serializable"))
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

    /// Writes the memtable to a table file and waits for it.
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
        let range = range_of(start, end)?;
        self.with_db(py, |db| db.compact_range::<Vec<u8>, _>(range))
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
    /// Its iterators and snapshots are released first: using them
    /// afterwards raises `ClosedError`. Closing twice does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| {
            let mut g = self
                .inner
                .write()
                .map_err(|_| sievedb::Error::Poisoned("the handle's lock".into()))?;
            self.children.release_all();
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
        self.get(py, key, None)?
            .ok_or_else(|| PyKeyError::new_err(key.clone().unbind()))
    }

    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.put(py, key, value, false)
    }

    /// `del db[key]`: deletes `key`, KeyError if it is absent (as a dict).
    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = bytes_of(key, "key")?;
        let found = self.with_db(py, |db| {
            let found = db.get(&k)?.is_some();
            if found {
                db.delete(&k)?;
            }
            Ok(found)
        })?;
        if found {
            Ok(())
        } else {
            Err(PyKeyError::new_err(key.clone().unbind()))
        }
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = bytes_of(key, "key")?;
        Ok(self.with_db(py, |db| db.get(&k))?.is_some())
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<KeyIterator> {
        self.iter(py, None, None, false, Yield::Keys)
    }

    fn __repr__(&self) -> String {
        format!(
            "sievedb.Db({:?}{})",
            self.path.display().to_string(),
            if self.closed() { ", closed" } else { "" }
        )
    }
}

/// A Python object from JSON text (the engine's serde views of `Stats`
/// and `RepairReport`).
fn json_to_py(py: Python<'_>, text: &str) -> PyResult<PyObject> {
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}
