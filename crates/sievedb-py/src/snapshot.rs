//! `sievedb.Snapshot`: a point-in-time view of the database.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::children::{Children, Release};
use crate::errors::{ClosedError, OrPy};
use crate::iter::{KeyIterator, Yield};
use crate::keys::{bytes_of, range_of};

/// Reads as of the moment `db.snapshot()` was called; compaction keeps what
/// it needs until it is released (`release()`, the end of a `with` block, or
/// garbage collection).
#[pyclass(module = "sievedb", name = "Snapshot")]
pub struct Snapshot {
    inner: Arc<Slot>,
    /// The database's children, which this snapshot's iterators join.
    children: Arc<Children>,
}

/// The engine snapshot, until it is released.
struct Slot(Mutex<Option<Arc<sievedb::Snapshot>>>);

impl Release for Slot {
    fn release(&self) {
        if let Ok(mut s) = self.0.lock() {
            s.take();
        }
    }
}

impl Snapshot {
    /// Wraps an engine snapshot, registered with `children` (the database's).
    pub fn new(s: sievedb::Snapshot, children: Arc<Children>) -> Snapshot {
        let inner = Arc::new(Slot(Mutex::new(Some(Arc::new(s)))));
        children.add(&(inner.clone() as Arc<dyn Release>));
        Snapshot { inner, children }
    }

    fn get_snap(&self) -> PyResult<Arc<sievedb::Snapshot>> {
        self.inner
            .0
            .lock()
            .ok()
            .and_then(|s| s.clone())
            .ok_or_else(|| ClosedError::new_err("the snapshot was released"))
    }

    fn iter(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        kind: Yield,
    ) -> PyResult<KeyIterator> {
        let s = self.get_snap()?;
        let range = range_of(start, end)?;
        let it = py.allow_threads(|| s.range::<Vec<u8>, _>(range)).or_py()?;
        Ok(KeyIterator::new(it, kind, reverse, &self.children))
    }
}

#[pymethods]
impl Snapshot {
    /// The value of `key` as of the snapshot, or `default`.
    #[pyo3(signature = (key, default=None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<PyObject>,
    ) -> PyResult<Option<PyObject>> {
        let s = self.get_snap()?;
        let k = bytes_of(key, "key")?;
        let v = py.allow_threads(|| s.get(&k)).or_py()?;
        Ok(match v {
            Some(v) => Some(PyBytes::new(py, &v).into_any().unbind()),
            None => default,
        })
    }

    /// `(key, value)` pairs of `[start, end)` as of the snapshot.
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

    /// Keys of `[start, end)` as of the snapshot.
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

    /// Values of `[start, end)` as of the snapshot.
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

    /// `(key, value)` pairs of the keys starting with `prefix`.
    #[pyo3(signature = (prefix, reverse=false))]
    fn prefix(
        &self,
        py: Python<'_>,
        prefix: &Bound<'_, PyAny>,
        reverse: bool,
    ) -> PyResult<KeyIterator> {
        let s = self.get_snap()?;
        let p = bytes_of(prefix, "prefix")?;
        let it = py.allow_threads(|| s.prefix(&p)).or_py()?;
        Ok(KeyIterator::new(it, Yield::Items, reverse, &self.children))
    }

    /// The sequence number the snapshot reads at.
    #[getter]
    fn sequence(&self) -> PyResult<u64> {
        Ok(self.get_snap()?.sequence())
    }

    /// Releases the snapshot (reads on it then raise `ClosedError`).
    fn release(&self) {
        self.inner.release();
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.release();
        false
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.get(py, key, None)?.is_some())
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        self.get(py, key, None)?
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(key.clone().unbind()))
    }
}
