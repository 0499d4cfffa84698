//! `db.keys()`, `db.values()`, `db.items()` (and a keyspace's and a
//! snapshot's): re-iterable views of a key range, as `dict`'s. A view holds
//! no engine state: each `iter()`, `len()` or `in` opens a fresh engine
//! iterator (a consistent view of that moment), so a view follows the
//! database as it changes, and raises `ClosedError` once it is closed.
//!
//! The set operations of `KeysView` and `ItemsView` (`&`, `|`, `-`, `^`,
//! `isdisjoint`, and the comparisons `==`, `<`, `<=`, `>`, `>=` with a
//! set-like) build Python sets of both sides and return a plain `set` (or
//! bool), as `dict`'s views do: every method of `collections.abc.KeysView`
//! and `ItemsView` is the view's own.

use std::ops::Bound as Edge;
use std::sync::Arc;

use pyo3::basic::CompareOp;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PySet, PyTuple};

use crate::db::Db;
use crate::iter::{KeyIterator, Yield};
use crate::keys::{bytes_of, KeyRange};
use crate::keyspace::Keyspace;
use crate::serializer::Codec;
use crate::snapshot::Snapshot;
use crate::store::Target;

/// What a view reads.
pub enum Owner {
    Db(Py<Db>),
    Keyspace(Py<Keyspace>),
    /// A snapshot, of its default keyspace or of a keyspace.
    Snapshot(Py<Snapshot>, Option<Py<Keyspace>>),
}

/// A view's owner and key range `[lo, hi)`, and its direction.
pub struct Scope {
    owner: Owner,
    lo: Option<Vec<u8>>,
    hi: Option<Vec<u8>>,
    reverse: bool,
}

/// Counts the entries of `it` without copying them (a full scan).
pub fn count(mut it: sievedb::DbIterator) -> sievedb::Result<usize> {
    let mut n = 0;
    while it.next_ref()?.is_some() {
        n += 1;
    }
    Ok(n)
}

fn target_iter(
    t: &impl Target,
    py: Python<'_>,
    range: KeyRange,
    reverse: bool,
    kind: Yield,
) -> PyResult<KeyIterator> {
    let it = t.run(py, |s| s.range(range))?;
    Ok(KeyIterator::new(it, kind, reverse, t.children()).with_codec(t.codec()))
}

impl Scope {
    pub fn new(owner: Owner, range: KeyRange, reverse: bool) -> Scope {
        let edge = |e: Edge<Vec<u8>>| match e {
            Edge::Included(k) | Edge::Excluded(k) => Some(k),
            Edge::Unbounded => None,
        };
        Scope {
            owner,
            lo: edge(range.0),
            hi: edge(range.1),
            reverse,
        }
    }

    fn range(&self) -> KeyRange {
        (
            self.lo.clone().map_or(Edge::Unbounded, Edge::Included),
            self.hi.clone().map_or(Edge::Unbounded, Edge::Excluded),
        )
    }

    fn in_range(&self, k: &[u8]) -> bool {
        self.lo.as_deref().is_none_or(|lo| k >= lo) && self.hi.as_deref().is_none_or(|hi| k < hi)
    }

    /// A fresh iterator over the range, in the view's direction (`flip`:
    /// the other one).
    fn iter(&self, py: Python<'_>, kind: Yield, flip: bool) -> PyResult<KeyIterator> {
        let reverse = self.reverse != flip;
        match &self.owner {
            Owner::Db(db) => target_iter(db.get(), py, self.range(), reverse, kind),
            Owner::Keyspace(ks) => target_iter(ks.get(), py, self.range(), reverse, kind),
            Owner::Snapshot(s, ks) => s.borrow(py).iter_range(
                py,
                self.range(),
                ks.as_ref().map(|k| k.bind(py)),
                reverse,
                kind,
            ),
        }
    }

    /// The number of keys in the range: a counting scan, GIL released.
    fn count(&self, py: Python<'_>) -> PyResult<usize> {
        let range = self.range();
        match &self.owner {
            Owner::Db(db) => db.get().run(py, |s| count(s.range(range)?)),
            Owner::Keyspace(ks) => ks.get().run(py, |s| count(s.range(range)?)),
            Owner::Snapshot(s, ks) => {
                s.borrow(py)
                    .scan(py, range, ks.as_ref().map(|k| k.bind(py)), count)
            }
        }
    }

    /// The stored value of `k`, if it is in the range.
    fn get(&self, py: Python<'_>, k: &[u8]) -> PyResult<Option<Vec<u8>>> {
        if !self.in_range(k) {
            return Ok(None);
        }
        match &self.owner {
            Owner::Db(db) => db.get().run(py, |s| s.get(k)),
            Owner::Keyspace(ks) => ks.get().run(py, |s| s.get(k)),
            Owner::Snapshot(s, ks) => s.borrow(py).raw_get(py, k, ks.as_ref().map(|k| k.bind(py))),
        }
    }

    fn codec(&self, py: Python<'_>) -> Arc<Codec> {
        match &self.owner {
            Owner::Db(db) => db.get().codec().clone(),
            Owner::Keyspace(ks) => ks.get().codec().clone(),
            Owner::Snapshot(s, ks) => s.borrow(py).codec_for(ks.as_ref().map(|k| k.bind(py))),
        }
    }

    fn repr(&self, py: Python<'_>, what: &str) -> String {
        let owner = match &self.owner {
            Owner::Db(db) => db.bind(py).repr().map(|r| r.to_string()),
            Owner::Keyspace(ks) => ks.bind(py).repr().map(|r| r.to_string()),
            Owner::Snapshot(s, _) => s.bind(py).repr().map(|r| r.to_string()),
        }
        .unwrap_or_default();
        let mut extra = String::new();
        if let Some(lo) = &self.lo {
            extra += &format!(", start={}", pyo3::types::PyBytes::new(py, lo));
        }
        if let Some(hi) = &self.hi {
            extra += &format!(", end={}", pyo3::types::PyBytes::new(py, hi));
        }
        if self.reverse {
            extra += ", reverse=True";
        }
        format!("sievedb.{what}({owner}{extra})")
    }
}

/// A Python set of what `obj` yields; `None` if it is not iterable.
fn set_of<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PySet>>> {
    let it = match obj.try_iter() {
        Ok(it) => it,
        Err(e) if e.is_instance_of::<PyTypeError>(obj.py()) => return Ok(None),
        Err(e) => return Err(e),
    };
    let set = PySet::empty(obj.py())?;
    for x in it {
        set.add(x?)?;
    }
    Ok(Some(set))
}

#[derive(Clone, Copy)]
enum Op {
    And,
    Or,
    Sub,
    Xor,
}

/// `view <op> other` (`reflected`: `other <op> view`) as a set, or
/// NotImplemented if `other` is not iterable.
fn set_op(
    view: &Bound<'_, PyAny>,
    other: &Bound<'_, PyAny>,
    op: Op,
    reflected: bool,
) -> PyResult<PyObject> {
    let py = view.py();
    let Some(b) = set_of(other)? else {
        return Ok(py.NotImplemented());
    };
    let Some(a) = set_of(view)? else {
        return Ok(py.NotImplemented());
    };
    let (x, y) = if reflected { (b, a) } else { (a, b) };
    let out = match op {
        Op::And => x.bitand(y)?,
        Op::Or => x.bitor(y)?,
        Op::Sub => x.sub(y)?,
        Op::Xor => x.bitxor(y)?,
    };
    Ok(out.unbind())
}

/// `view == other` for a set-like `other` (a `collections.abc.Set`, which
/// a dict's keys and items views are): the same elements.
fn set_eq(view: &Bound<'_, PyAny>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    let py = view.py();
    let abc_set = py.import("collections.abc")?.getattr("Set")?;
    if !other.is_instance(&abc_set)? {
        return Ok(py.NotImplemented());
    }
    match (set_of(view)?, set_of(other)?) {
        (Some(a), Some(b)) => Ok(a.eq(b)?.into_pyobject(py)?.to_owned().into_any().unbind()),
        _ => Ok(py.NotImplemented()),
    }
}

/// `view <, <=, >, >= other` for a set-like `other`: subset and superset
/// tests, as `dict`'s views (NotImplemented for anything else).
fn set_cmp(view: &Bound<'_, PyAny>, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<PyObject> {
    let py = view.py();
    let abc_set = py.import("collections.abc")?.getattr("Set")?;
    if !other.is_instance(&abc_set)? {
        return Ok(py.NotImplemented());
    }
    match (set_of(view)?, set_of(other)?) {
        (Some(a), Some(b)) => Ok(a.rich_compare(b, op)?.unbind()),
        _ => Ok(py.NotImplemented()),
    }
}

fn isdisjoint(view: &Bound<'_, PyAny>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
    let Some(a) = set_of(view)? else {
        return Ok(true);
    };
    a.call_method1("isdisjoint", (other,))?.extract()
}

/// The keys of a key range of a database, keyspace or snapshot:
/// `db.keys(start=None, end=None, reverse=False)`. Re-iterable; `len()`
/// counts the keys (a scan: O(n)), `k in view` is one read; `&`, `|`, `-`,
/// `^` and `isdisjoint` give plain sets, as a dict's keys view.
#[pyclass(module = "sievedb", name = "KeysView", frozen)]
pub struct KeysView(pub Scope);

/// The values of a key range, in key order: `db.values(...)`.
/// Re-iterable; `len()` counts (O(n)); `v in view` scans.
#[pyclass(module = "sievedb", name = "ValuesView", frozen)]
pub struct ValuesView(pub Scope);

/// The `(key, value)` pairs of a key range: `db.items(...)`. Re-iterable;
/// `len()` counts (O(n)), `(k, v) in view` is one read; set operations
/// give plain sets (the values must then be hashable).
#[pyclass(module = "sievedb", name = "ItemsView", frozen)]
pub struct ItemsView(pub Scope);

#[pymethods]
impl KeysView {
    /// The number of keys: a counting scan of the range (O(n) keys), with
    /// the GIL released.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.0.count(py)
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<KeyIterator> {
        self.0.iter(py, Yield::Keys, false)
    }

    fn __reversed__(&self, py: Python<'_>) -> PyResult<KeyIterator> {
        self.0.iter(py, Yield::Keys, true)
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = bytes_of(key, "key")?;
        Ok(self.0.get(py, &k)?.is_some())
    }

    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_eq(slf.as_any(), other)
    }

    fn __and__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::And, false)
    }

    fn __rand__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::And, true)
    }

    fn __or__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::Or, false)
    }

    fn __ror__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::Or, true)
    }

    fn __sub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::Sub, false)
    }

    fn __rsub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::Sub, true)
    }

    fn __xor__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::Xor, false)
    }

    fn __rxor__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::Xor, true)
    }

    /// Whether no key is in `other`.
    fn isdisjoint(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        isdisjoint(slf.as_any(), other)
    }

    fn __lt__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_cmp(slf.as_any(), other, CompareOp::Lt)
    }

    fn __le__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_cmp(slf.as_any(), other, CompareOp::Le)
    }

    fn __gt__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_cmp(slf.as_any(), other, CompareOp::Gt)
    }

    fn __ge__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_cmp(slf.as_any(), other, CompareOp::Ge)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        self.0.repr(py, "KeysView")
    }
}

#[pymethods]
impl ValuesView {
    /// The number of values: a counting scan (O(n)), GIL released.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.0.count(py)
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<KeyIterator> {
        self.0.iter(py, Yield::Values, false)
    }

    fn __reversed__(&self, py: Python<'_>) -> PyResult<KeyIterator> {
        self.0.iter(py, Yield::Values, true)
    }

    /// Whether a value equals `value`: a scan (O(n)).
    fn __contains__(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        let it = Bound::new(py, self.0.iter(py, Yield::Values, false)?)?;
        for v in it.as_any().try_iter()? {
            if v?.eq(value)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        self.0.repr(py, "ValuesView")
    }
}

#[pymethods]
impl ItemsView {
    /// The number of pairs: a counting scan (O(n)), GIL released.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.0.count(py)
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<KeyIterator> {
        self.0.iter(py, Yield::Items, false)
    }

    fn __reversed__(&self, py: Python<'_>) -> PyResult<KeyIterator> {
        self.0.iter(py, Yield::Items, true)
    }

    /// Whether `item` is a `(key, value)` pair of the view: one read.
    fn __contains__(&self, py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(pair) = item.downcast::<PyTuple>() else {
            return Ok(false);
        };
        if pair.len() != 2 {
            return Ok(false);
        }
        let (key, value) = (pair.get_item(0)?, pair.get_item(1)?);
        let Ok(k) = bytes_of(&key, "key") else {
            return Ok(false);
        };
        match self.0.get(py, &k)? {
            Some(v) => self.0.codec(py).decode(py, &v)?.bind(py).eq(value),
            None => Ok(false),
        }
    }

    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_eq(slf.as_any(), other)
    }

    fn __and__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::And, false)
    }

    fn __rand__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::And, true)
    }

    fn __or__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::Or, false)
    }

    fn __ror__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::Or, true)
    }

    fn __sub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::Sub, false)
    }

    fn __rsub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::Sub, true)
    }

    fn __xor__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::Xor, false)
    }

    fn __rxor__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_op(slf.as_any(), other, Op::Xor, true)
    }

    /// Whether no pair is in `other`.
    fn isdisjoint(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        isdisjoint(slf.as_any(), other)
    }

    fn __lt__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_cmp(slf.as_any(), other, CompareOp::Lt)
    }

    fn __le__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_cmp(slf.as_any(), other, CompareOp::Le)
    }

    fn __gt__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_cmp(slf.as_any(), other, CompareOp::Gt)
    }

    fn __ge__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        set_cmp(slf.as_any(), other, CompareOp::Ge)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        self.0.repr(py, "ItemsView")
    }
}
