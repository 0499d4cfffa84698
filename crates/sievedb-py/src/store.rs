//! The mapping surface `Db` and `Keyspace` share (`get`, `put`, `db[k]`,
//! `items()`, ...): each of their methods is a one-line call of a function
//! here on a [`Target`], which runs engine calls on a [`Store`], the
//! default keyspace through the Rust `Db`'s own methods or a named one
//! through its `Keyspace` handle.

use std::ops::Bound as Edge;
use std::sync::Arc;

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use sievedb::{DbIterator, ReadOptions, WriteOptions};

use crate::batch::WriteBatch;
use crate::children::Children;
use crate::cursor::Cursor;
use crate::iter::{KeyIterator, Yield};
use crate::iter_options::IterOptions;
use crate::keys::{bytes_of, range_of, KeyRange};
use crate::serializer::Codec;

/// Where reads and writes go.
#[derive(Clone, Copy)]
pub enum Store<'a> {
    /// The default keyspace, through the database's own methods.
    Default(&'a sievedb::Db),
    /// A named keyspace, through its handle.
    Keyspace(&'a sievedb::Keyspace),
}

fn wo(sync: bool) -> WriteOptions {
    WriteOptions { sync }
}

impl Store<'_> {
    pub fn get(self, key: &[u8]) -> sievedb::Result<Option<Vec<u8>>> {
        match self {
            Store::Default(db) => db.get(key),
            Store::Keyspace(ks) => ks.get(key),
        }
    }

    pub fn get_opt(self, key: &[u8], ro: &ReadOptions) -> sievedb::Result<Option<Vec<u8>>> {
        match self {
            Store::Default(db) => db.get_opt(key, ro),
            Store::Keyspace(ks) => ks.get_opt(key, ro),
        }
    }

    pub fn put(self, key: &[u8], value: &[u8], sync: bool) -> sievedb::Result<()> {
        match self {
            Store::Default(db) => db.put_with(key, value, &wo(sync)),
            Store::Keyspace(ks) => ks.put_with(key, value, &wo(sync)),
        }
    }

    pub fn merge(self, key: &[u8], operand: &[u8], sync: bool) -> sievedb::Result<()> {
        match self {
            Store::Default(db) => db.merge_with(key, operand, &wo(sync)),
            Store::Keyspace(ks) => ks.merge_with(key, operand, &wo(sync)),
        }
    }

    pub fn delete(self, key: &[u8], sync: bool) -> sievedb::Result<()> {
        match self {
            Store::Default(db) => db.delete_with(key, &wo(sync)),
            Store::Keyspace(ks) => ks.delete_with(key, &wo(sync)),
        }
    }

    pub fn delete_range(self, range: KeyRange, sync: bool) -> sievedb::Result<()> {
        match self {
            Store::Default(db) => db.delete_range_with::<Vec<u8>, _>(range, &wo(sync)),
            Store::Keyspace(ks) => ks.delete_range_with::<Vec<u8>, _>(range, &wo(sync)),
        }
    }

    /// Whether `key` may exist: false only if it surely does not (a probe
    /// of the memtables and the resident filters; no block is read).
    pub fn key_may_exist(self, key: &[u8]) -> sievedb::Result<bool> {
        match self {
            Store::Default(db) => db.key_may_exist(key),
            Store::Keyspace(ks) => ks.key_may_exist(key),
        }
    }

    pub fn multi_get(self, keys: &[Vec<u8>]) -> sievedb::Result<Vec<Option<Vec<u8>>>> {
        match self {
            Store::Default(db) => db.multi_get(keys),
            Store::Keyspace(ks) => ks.multi_get(keys),
        }
    }

    pub fn range(self, range: KeyRange) -> sievedb::Result<DbIterator> {
        match self {
            Store::Default(db) => db.range::<Vec<u8>, _>(range),
            Store::Keyspace(ks) => ks.range::<Vec<u8>, _>(range),
        }
    }

    pub fn prefix(self, prefix: &[u8]) -> sievedb::Result<DbIterator> {
        match self {
            Store::Default(db) => db.prefix(prefix),
            Store::Keyspace(ks) => ks.prefix(prefix),
        }
    }

    /// An iterator over `range` with read options (a snapshot).
    pub fn range_opt(self, range: KeyRange, ro: ReadOptions<'_>) -> sievedb::Result<DbIterator> {
        let mut ro = ro;
        if let Edge::Included(lo) | Edge::Excluded(lo) = range.0 {
            ro = ro.lower_bound(lo);
        }
        if let Edge::Included(hi) | Edge::Excluded(hi) = range.1 {
            ro = ro.upper_bound(hi);
        }
        match self {
            Store::Default(db) => db.iter_opt(&ro),
            Store::Keyspace(ks) => ks.iter_opt(&ro),
        }
    }

    pub fn compact_range(self, range: KeyRange) -> sievedb::Result<()> {
        match self {
            Store::Default(db) => db.compact_range::<Vec<u8>, _>(range),
            Store::Keyspace(ks) => ks.compact_range::<Vec<u8>, _>(range),
        }
    }

    pub fn stats(self) -> sievedb::Stats {
        match self {
            Store::Default(db) => db.stats(),
            Store::Keyspace(ks) => ks.stats(),
        }
    }
}

/// A Python object whose reads and writes go to one [`Store`]: `Db` (the
/// default keyspace) or `Keyspace`.
pub trait Target {
    /// Runs `f` on the store with the GIL released; `ClosedError` once the
    /// database is closed.
    fn run<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(Store<'_>) -> sievedb::Result<R> + Send,
    ) -> PyResult<R>;

    /// The database's children, which the iterators handed out join.
    fn children(&self) -> &Children;

    /// How its values (and keys, on the way out) cross the boundary.
    fn codec(&self) -> &Arc<Codec>;

    /// Writes `pairs` in one batch, atomically, with the GIL released.
    fn write_pairs(&self, py: Python<'_>, pairs: Vec<(Vec<u8>, Vec<u8>)>) -> PyResult<()>;
}

pub fn get(
    t: &impl Target,
    py: Python<'_>,
    key: &Bound<'_, PyAny>,
    default: Option<PyObject>,
) -> PyResult<Option<PyObject>> {
    let k = bytes_of(key, "key")?;
    let v = t.run(py, |s| s.get(&k))?;
    t.codec().value_or(py, v, default)
}

pub fn put(
    t: &impl Target,
    py: Python<'_>,
    key: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    sync: bool,
) -> PyResult<()> {
    let (k, v) = (bytes_of(key, "key")?, t.codec().encode(value)?);
    t.run(py, |s| s.put(&k, &v, sync))
}

pub fn merge(
    t: &impl Target,
    py: Python<'_>,
    key: &Bound<'_, PyAny>,
    operand: &Bound<'_, PyAny>,
    sync: bool,
) -> PyResult<()> {
    let (k, v) = (bytes_of(key, "key")?, bytes_of(operand, "operand")?);
    t.run(py, |s| s.merge(&k, &v, sync))
}

pub fn delete(t: &impl Target, py: Python<'_>, key: &Bound<'_, PyAny>, sync: bool) -> PyResult<()> {
    let k = bytes_of(key, "key")?;
    t.run(py, |s| s.delete(&k, sync))
}

pub fn delete_range(
    t: &impl Target,
    py: Python<'_>,
    start: Option<&Bound<'_, PyAny>>,
    end: Option<&Bound<'_, PyAny>>,
    sync: bool,
) -> PyResult<()> {
    let range = range_of(start, end)?;
    t.run(py, |s| s.delete_range(range, sync))
}

pub fn multi_get(t: &impl Target, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyList>> {
    let keys: Vec<Vec<u8>> = keys
        .try_iter()?
        .map(|k| bytes_of(&k?, "key").map(|c| c.into_owned()))
        .collect::<PyResult<_>>()?;
    let values = t.run(py, |s| s.multi_get(&keys))?;
    let out = PyList::empty(py);
    let c = t.codec();
    for v in values {
        match v {
            Some(v) => out.append(c.decode(py, &v)?)?,
            None => out.append(py.None())?,
        }
    }
    Ok(out.unbind())
}

/// `items()`, `keys()`, `values()` (by `kind`) of `[start, end)`.
pub fn iter(
    t: &impl Target,
    py: Python<'_>,
    start: Option<&Bound<'_, PyAny>>,
    end: Option<&Bound<'_, PyAny>>,
    reverse: bool,
    kind: Yield,
) -> PyResult<KeyIterator> {
    let range = range_of(start, end)?;
    let it = t.run(py, |s| s.range(range))?;
    Ok(KeyIterator::new(it, kind, reverse, t.children()).with_codec(t.codec()))
}

pub fn prefix(
    t: &impl Target,
    py: Python<'_>,
    prefix: &Bound<'_, PyAny>,
    reverse: bool,
) -> PyResult<KeyIterator> {
    let p = bytes_of(prefix, "prefix")?;
    let it = t.run(py, |s| s.prefix(&p))?;
    Ok(KeyIterator::new(it, Yield::Items, reverse, t.children()).with_codec(t.codec()))
}

/// `t[key]`: KeyError if absent.
pub fn getitem(t: &impl Target, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    get(t, py, key, None)?.ok_or_else(|| PyKeyError::new_err(key.clone().unbind()))
}

/// `del t[key]`: deletes `key`, KeyError if it is absent (as a dict).
pub fn delitem(t: &impl Target, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
    let k = bytes_of(key, "key")?;
    let found = t.run(py, |s| {
        let found = s.get(&k)?.is_some();
        if found {
            s.delete(&k, false)?;
        }
        Ok(found)
    })?;
    if found {
        Ok(())
    } else {
        Err(PyKeyError::new_err(key.clone().unbind()))
    }
}

pub fn contains(t: &impl Target, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
    let k = bytes_of(key, "key")?;
    Ok(t.run(py, |s| s.get(&k))?.is_some())
}

pub fn compact_range(
    t: &impl Target,
    py: Python<'_>,
    start: Option<&Bound<'_, PyAny>>,
    end: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let range = range_of(start, end)?;
    t.run(py, |s| s.compact_range(range))
}

#[expect(
    clippy::expect_used,
    reason = "serde_json cannot fail on these derived Serialize types: plain fields, string keys"
)]
pub fn stats(t: &impl Target, py: Python<'_>) -> PyResult<PyObject> {
    let s = t.run(py, |s| Ok(s.stats()))?;
    json_to_py(py, &serde_json::to_string(&s).expect("serializable"))
}

/// A Python object from JSON text (the engine's serde views of `Stats`
/// and `RepairReport`).
pub fn json_to_py(py: Python<'_>, text: &str) -> PyResult<PyObject> {
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

// rocksdict's and plyvel's habits.

/// `db.iter(start, end)`: a cursor over `[start, end)`.
pub fn cursor(
    t: &impl Target,
    py: Python<'_>,
    start: Option<&Bound<'_, PyAny>>,
    end: Option<&Bound<'_, PyAny>>,
) -> PyResult<Cursor> {
    let range = range_of(start, end)?;
    let it = t.run(py, |s| s.range(range))?;
    Ok(Cursor::new(it, t.children()).with_codec(t.codec()))
}

/// plyvel's `db.iterator(...)`.
pub fn iterator(t: &impl Target, py: Python<'_>, o: IterOptions) -> PyResult<KeyIterator> {
    let range = o.range;
    let it = t.run(py, |s| s.range(range))?;
    Ok(KeyIterator::new(it, o.kind, o.reverse, t.children()).with_codec(t.codec()))
}

pub fn key_may_exist(t: &impl Target, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
    let k = bytes_of(key, "key")?;
    t.run(py, |s| s.key_may_exist(&k))
}

/// plyvel's `db.write_batch()`: a `WriteBatch` that `db` writes at the end
/// of a `with` block (its writes going to `keyspace` unless they say
/// otherwise).
pub fn write_batch(
    db: Py<crate::db::Db>,
    keyspace: Option<Py<crate::keyspace::Keyspace>>,
    sync: bool,
) -> WriteBatch {
    WriteBatch::bound(db, keyspace, sync)
}
