//! `sievedb.Snapshot`: a point-in-time view of the database (of every
//! keyspace).

use std::ops::Bound as Edge;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use sievedb::ReadOptions;

use crate::children::{Children, Release};
use crate::cursor::Cursor;
use crate::errors::{ClosedError, OrPy};
use crate::iter::{KeyIterator, Yield};
use crate::iter_options::IterOptions;
use crate::keys::{bytes_of, prefix_range, range_of, KeyRange};
use crate::keyspace::Keyspace;
use crate::serializer::Codec;
use crate::store::Target;
use crate::views::{count, ItemsView, KeysView, Owner, Scope, ValuesView};

/// Reads as of the moment `db.snapshot()` was called, in every keyspace at
/// that one point: the default keyspace, or with `keyspace=ks` the keyspace
/// `ks`. Compaction keeps what it needs until it is released (`release()`,
/// the end of a `with` block, or garbage collection).
#[pyclass(module = "sievedb", name = "Snapshot")]
pub struct Snapshot {
    inner: Arc<Slot>,
    /// The database's children, which this snapshot's iterators join.
    children: Arc<Children>,
    /// The database's codec (a keyspace read through `keyspace=ks` uses
    /// `ks`'s).
    codec: Arc<Codec>,
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
        Snapshot {
            inner,
            children,
            codec: crate::serializer::bytes(),
        }
    }

    /// The snapshot, its values going through `codec` (the database's).
    pub fn with_codec(mut self, codec: &Arc<Codec>) -> Snapshot {
        self.codec = codec.clone();
        self
    }

    /// The codec of reads of `keyspace` (None: the default keyspace).
    pub(crate) fn codec_for(&self, keyspace: Option<&Bound<'_, Keyspace>>) -> Arc<Codec> {
        match keyspace {
            Some(ks) => ks.get().codec().clone(),
            None => self.codec.clone(),
        }
    }

    /// Runs `f` on an engine iterator over `range` (of the default
    /// keyspace, or of `keyspace`) with the GIL released.
    pub(crate) fn scan<R: Send>(
        &self,
        py: Python<'_>,
        range: KeyRange,
        keyspace: Option<&Bound<'_, Keyspace>>,
        f: impl FnOnce(sievedb::DbIterator) -> sievedb::Result<R> + Send,
    ) -> PyResult<R> {
        let s = self.get_snap()?;
        match keyspace {
            None => py
                .allow_threads(|| f(s.range::<Vec<u8>, _>(range)?))
                .or_py(),
            Some(ks) => ks.get().run(py, |store| {
                f(store.range_opt(range, ReadOptions::default().snapshot(&s))?)
            }),
        }
    }

    /// The stored value of `key` as of the snapshot.
    pub(crate) fn raw_get(
        &self,
        py: Python<'_>,
        k: &[u8],
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Option<Vec<u8>>> {
        let s = self.get_snap()?;
        match keyspace {
            None => py.allow_threads(|| s.get(k)).or_py(),
            Some(ks) => ks.get().run(py, |store| {
                store.get_opt(k, &ReadOptions::default().snapshot(&s))
            }),
        }
    }

    /// A view of `[start, end)` of the default keyspace or of `keyspace`
    /// (`ClosedError` now if the snapshot was released).
    fn scope(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Scope> {
        let range = range_of(start, end)?;
        slf.borrow().get_snap()?;
        let owner = Owner::Snapshot(slf.clone().unbind(), keyspace.map(|k| k.clone().unbind()));
        Ok(Scope::new(owner, range, reverse))
    }

    fn get_snap(&self) -> PyResult<Arc<sievedb::Snapshot>> {
        self.inner
            .0
            .lock()
            .ok()
            .and_then(|s| s.clone())
            .ok_or_else(|| ClosedError::new_err("the snapshot was released"))
    }

    /// An iterator over `range`: of the default keyspace, or of `keyspace`.
    pub(crate) fn iter_range(
        &self,
        py: Python<'_>,
        range: KeyRange,
        keyspace: Option<&Bound<'_, Keyspace>>,
        reverse: bool,
        kind: Yield,
    ) -> PyResult<KeyIterator> {
        let s = self.get_snap()?;
        let it = match keyspace {
            None => py.allow_threads(|| s.range::<Vec<u8>, _>(range)).or_py()?,
            Some(ks) => ks.get().run(py, |store| {
                store.range_opt(range, ReadOptions::default().snapshot(&s))
            })?,
        };
        Ok(KeyIterator::new(it, kind, reverse, &self.children)
            .with_codec(&self.codec_for(keyspace)))
    }

    fn iter(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        keyspace: Option<&Bound<'_, Keyspace>>,
        reverse: bool,
        kind: Yield,
    ) -> PyResult<KeyIterator> {
        self.iter_range(py, range_of(start, end)?, keyspace, reverse, kind)
    }

    /// An engine iterator over `range` (`[lo, hi)` or wider: the lower
    /// bound included, the upper excluded) at the snapshot.
    fn engine_iter(
        &self,
        py: Python<'_>,
        range: KeyRange,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<sievedb::DbIterator> {
        let s = self.get_snap()?;
        match keyspace {
            None => py.allow_threads(|| s.range::<Vec<u8>, _>(range)).or_py(),
            Some(ks) => ks.get().run(py, |store| {
                store.range_opt(range, ReadOptions::default().snapshot(&s))
            }),
        }
    }
}

#[pymethods]
impl Snapshot {
    /// The value of `key` as of the snapshot (in the default keyspace, or
    /// in `keyspace`), or `default`.
    #[pyo3(signature = (key, default=None, keyspace=None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<PyObject>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Option<PyObject>> {
        let s = self.get_snap()?;
        let k = bytes_of(key, "key")?;
        let v = match keyspace {
            None => py.allow_threads(|| s.get(&k)).or_py()?,
            Some(ks) => ks.get().run(py, |store| {
                store.get_opt(&k, &ReadOptions::default().snapshot(&s))
            })?,
        };
        self.codec_for(keyspace).value_or(py, v, default)
    }

    /// A view of the `(key, value)` pairs of `[start, end)` as of the
    /// snapshot (re-iterable; `len()` counts, O(n)).
    #[pyo3(signature = (start=None, end=None, reverse=false, keyspace=None))]
    fn items(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<ItemsView> {
        Ok(ItemsView(Snapshot::scope(
            slf, start, end, reverse, keyspace,
        )?))
    }

    /// A view of the keys of `[start, end)` as of the snapshot.
    #[pyo3(signature = (start=None, end=None, reverse=false, keyspace=None))]
    fn keys(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<KeysView> {
        Ok(KeysView(Snapshot::scope(
            slf, start, end, reverse, keyspace,
        )?))
    }

    /// A view of the values of `[start, end)` as of the snapshot.
    #[pyo3(signature = (start=None, end=None, reverse=false, keyspace=None))]
    fn values(
        slf: &Bound<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<ValuesView> {
        Ok(ValuesView(Snapshot::scope(
            slf, start, end, reverse, keyspace,
        )?))
    }

    /// `(key, value)` pairs of the keys starting with `prefix`.
    #[pyo3(signature = (prefix, reverse=false, keyspace=None))]
    fn prefix(
        &self,
        py: Python<'_>,
        prefix: &Bound<'_, PyAny>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<KeyIterator> {
        let p = bytes_of(prefix, "prefix")?;
        if keyspace.is_some() {
            let range = prefix_range(&p);
            return self.iter_range(py, range, keyspace, reverse, Yield::Items);
        }
        let s = self.get_snap()?;
        let it = py.allow_threads(|| s.prefix(&p)).or_py()?;
        Ok(KeyIterator::new(it, Yield::Items, reverse, &self.children).with_codec(&self.codec))
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
        Ok(self.get(py, key, None, None)?.is_some())
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        self.get(py, key, None, None)?
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(key.clone().unbind()))
    }
    // rocksdict's and plyvel's habits.

    /// A seekable cursor over `[start, end)` as of the snapshot (in the
    /// default keyspace, or in `keyspace`): see `Cursor`.
    #[pyo3(name = "iter", signature = (start=None, end=None, keyspace=None))]
    fn cursor(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Cursor> {
        let it = self.engine_iter(py, range_of(start, end)?, keyspace)?;
        Ok(Cursor::new(it, &self.children).with_codec(&self.codec_for(keyspace)))
    }

    /// plyvel's iterator as of the snapshot (see `Db.iterator`; in
    /// `keyspace` if given).
    #[pyo3(signature = (reverse=false, start=None, stop=None, include_start=true, include_stop=false, prefix=None, include_key=true, include_value=true, keyspace=None))]
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
        keyspace: Option<&Bound<'_, Keyspace>>,
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
        let it = self.engine_iter(py, o.range, keyspace)?;
        Ok(KeyIterator::new(it, o.kind, o.reverse, &self.children)
            .with_codec(&self.codec_for(keyspace)))
    }

    // The mapping protocol.

    /// The keys of the default keyspace as of the snapshot.
    fn __iter__(&self, py: Python<'_>) -> PyResult<KeyIterator> {
        self.iter(py, None, None, None, false, Yield::Keys)
    }

    /// The keys, descending.
    fn __reversed__(&self, py: Python<'_>) -> PyResult<KeyIterator> {
        self.iter(py, None, None, None, true, Yield::Keys)
    }

    /// The number of keys of the default keyspace as of the snapshot: a
    /// counting scan, O(n), GIL released.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.scan(py, (Edge::Unbounded, Edge::Unbounded), None, count)
    }

    /// Whether the default keyspace had any key: one seek.
    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        self.scan(py, (Edge::Unbounded, Edge::Unbounded), None, |mut it| {
            Ok(it.next_ref()?.is_some())
        })
    }

    /// `snap == other`: the same pairs (default keyspace) as the Mapping
    /// `other`; NotImplemented for a non-mapping.
    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let py = slf.py();
        if other.downcast::<pyo3::types::PyMapping>().is_err() {
            return Ok(py.NotImplemented());
        }
        let builtins = py.import("builtins")?;
        let dict = builtins.getattr("dict")?;
        let mine = dict.call1((Snapshot::items(slf, None, None, false, None)?,))?;
        let theirs = dict.call1((other.call_method0("items")?,))?;
        Ok(mine
            .eq(theirs)?
            .into_pyobject(py)?
            .to_owned()
            .into_any()
            .unbind())
    }
}
