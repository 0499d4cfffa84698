//! The rest of `collections.abc.MutableMapping` that `Db` and `Keyspace`
//! share (`crate::store` has `get`, `put`, `db[k]`, ...): `len()`,
//! `bool()`, `update`, `pop`, `setdefault`, `popitem`, `clear`, `copy`,
//! `==` and the views. Each runs its engine calls in one `Target::run`,
//! with the GIL released.

use std::ops::Bound as Edge;

use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyMapping, PyTuple};

use crate::iter::Yield;
use crate::keys::{bytes_of, range_of, KeyRange};
use crate::store::{self, Target};
use crate::views::count;

const ALL: KeyRange = (Edge::Unbounded, Edge::Unbounded);

/// `len(t)`: a counting scan of every key (O(n)).
pub fn len(t: &impl Target, py: Python<'_>) -> PyResult<usize> {
    t.run(py, |s| count(s.range(ALL)?))
}

/// `bool(t)`: whether there is a first key (one seek).
pub fn non_empty(t: &impl Target, py: Python<'_>) -> PyResult<bool> {
    t.run(py, |s| Ok(s.range(ALL)?.next_ref()?.is_some()))
}

/// `t.update(other=(), /, **kw)` as `dict.update` (`other`: the positional
/// arguments, none or one: `update(None)` raises TypeError, as dict's),
/// written in one batch.
pub fn update(
    t: &impl Target,
    py: Python<'_>,
    other: &Bound<'_, PyTuple>,
    kw: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    if other.len() > 1 {
        return Err(PyTypeError::new_err(format!(
            "update expected at most 1 argument, got {}",
            other.len()
        )));
    }
    let other = other.get_item(0).ok();
    let other = other.as_ref();
    let codec = t.codec();
    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut push = |k: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>| -> PyResult<()> {
        pairs.push((
            bytes_of(k, "key")?.into_owned(),
            codec.encode(v)?.into_owned(),
        ));
        Ok(())
    };
    if let Some(other) = other {
        if let Ok(d) = other.downcast::<PyDict>() {
            for (k, v) in d.iter() {
                push(&k, &v)?;
            }
        } else if other.hasattr("keys")? {
            for k in other.call_method0("keys")?.try_iter()? {
                let k = k?;
                let v = other.get_item(&k)?;
                push(&k, &v)?;
            }
        } else {
            for (i, item) in other.try_iter()?.enumerate() {
                let item = item?;
                let seq = item.try_iter().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "cannot convert update sequence element #{i} to a sequence"
                    ))
                })?;
                let seq: Vec<Bound<'_, PyAny>> = seq.collect::<PyResult<_>>()?;
                if seq.len() != 2 {
                    return Err(PyValueError::new_err(format!(
                        "update sequence element #{i} has length {}; 2 is required",
                        seq.len()
                    )));
                }
                push(&seq[0], &seq[1])?;
            }
        }
    }
    if let Some(kw) = kw {
        for (k, v) in kw.iter() {
            push(&k, &v)?;
        }
    }
    if pairs.is_empty() {
        return Ok(());
    }
    t.write_pairs(py, pairs)
}

/// `t.pop(key[, default])`: the value, deleted; `default` (or KeyError) if
/// absent. The read and the delete are one call, not one atomic step: a
/// write by another thread in between may be lost to the delete.
pub fn pop(
    t: &impl Target,
    py: Python<'_>,
    key: &Bound<'_, PyAny>,
    default: &Bound<'_, PyTuple>,
) -> PyResult<PyObject> {
    if default.len() > 1 {
        return Err(PyTypeError::new_err(format!(
            "pop expected at most 2 arguments, got {}",
            default.len() + 1
        )));
    }
    let k = bytes_of(key, "key")?;
    let found = t.run(py, |s| {
        let v = s.get(&k)?;
        if v.is_some() {
            s.delete(&k, false)?;
        }
        Ok(v)
    })?;
    match found {
        Some(v) => t.codec().decode(py, &v),
        None => match default.get_item(0) {
            Ok(d) => Ok(d.unbind()),
            Err(_) => Err(PyKeyError::new_err(key.clone().unbind())),
        },
    }
}

/// `t.setdefault(key, default=None)`: the value of `key`; if absent, sets
/// it to `default` first (which must then be a value the database stores:
/// bytes or str without a serializer, so `setdefault(k)` of an absent key
/// raises TypeError there).
pub fn setdefault(
    t: &impl Target,
    py: Python<'_>,
    key: &Bound<'_, PyAny>,
    default: &Bound<'_, PyAny>,
) -> PyResult<PyObject> {
    let k = bytes_of(key, "key")?;
    let v = t.run(py, |s| s.get(&k))?;
    if let Some(v) = v {
        return t.codec().decode(py, &v);
    }
    let d = t.codec().encode(default).map_err(|e| {
        if default.is_none() && e.is_instance_of::<PyTypeError>(py) {
            PyTypeError::new_err(
                "setdefault(key) of an absent key stores None, which a database of bytes \
                 values cannot: give a bytes or str default (or open it with serializer=)",
            )
        } else {
            e
        }
    })?;
    t.run(py, |s| s.put(&k, &d, false))?;
    Ok(default.clone().unbind())
}

/// `t.popitem()`: removes and returns the pair of the last key (the
/// largest); KeyError if empty.
pub fn popitem(t: &impl Target, py: Python<'_>) -> PyResult<(PyObject, PyObject)> {
    let found = t.run(py, |s| {
        let mut it = s.range(ALL)?;
        match it.next_back() {
            Some(kv) => {
                let (k, v) = kv?;
                s.delete(&k, false)?;
                Ok(Some((k, v)))
            }
            None => Ok(None),
        }
    })?;
    match found {
        Some((k, v)) => Ok((t.codec().key(py, &k)?, t.codec().decode(py, &v)?)),
        None => Err(PyKeyError::new_err("popitem(): the mapping is empty")),
    }
}

/// `t.clear()`: one range delete of every key (cheap: a tombstone, not a
/// delete per key).
pub fn clear(t: &impl Target, py: Python<'_>) -> PyResult<()> {
    t.run(py, |s| s.delete_range(ALL, false))
}

/// `t.copy()`: every pair in a new `dict` (as `os.environ.copy()`).
pub fn copy<'py>(t: &impl Target, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let it = Bound::new(py, store::iter(t, py, None, None, false, Yield::Items)?)?;
    let out = PyDict::new(py);
    for item in it.as_any().try_iter()? {
        let item = item?;
        let pair = item.downcast::<PyTuple>()?;
        out.set_item(pair.get_item(0)?, pair.get_item(1)?)?;
    }
    Ok(out)
}

/// `t == other`: the same pairs as the Mapping `other`; NotImplemented
/// for anything else.
pub fn eq(t: &impl Target, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    if other.downcast::<PyMapping>().is_err() {
        return Ok(py.NotImplemented());
    }
    let mine = copy(t, py)?;
    let theirs = PyDict::new(py);
    for k in other.call_method0("keys")?.try_iter()? {
        let k = k?;
        let v = other.get_item(&k)?;
        theirs.set_item(k, v)?;
    }
    Ok(mine
        .eq(theirs)?
        .into_pyobject(py)?
        .to_owned()
        .into_any()
        .unbind())
}

/// The range and direction of a view from `keys(start, end, reverse)`,
/// checking first that the database is open (`ClosedError` otherwise).
pub fn scope_range(
    t: &impl Target,
    py: Python<'_>,
    start: Option<&Bound<'_, PyAny>>,
    end: Option<&Bound<'_, PyAny>>,
) -> PyResult<KeyRange> {
    let range = range_of(start, end)?;
    t.run(py, |_| Ok(()))?;
    Ok(range)
}
