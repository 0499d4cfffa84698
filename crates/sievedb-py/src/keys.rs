//! Keys and values from Python: `bytes` (borrowed, no copy), `str` (encoded
//! as UTF-8), `bytearray` (copied) and any other object with the buffer
//! protocol (`memoryview`, `array.array`, ...: copied, contiguous only).
//!
//! Under `abi3-py39` the C buffer API (`PyObject_GetBuffer`) is not in the
//! limited API (it is from 3.11 on), so another buffer is read through
//! Python: `memoryview(obj)` (which refuses an object without the buffer
//! protocol, unlike `bytes(obj)`, which would take an int as a length), its
//! `contiguous` attribute, then `tobytes()`.

use std::borrow::Cow;
use std::ops::Bound as Edge;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};

/// The bytes of `obj`, which must be bytes, str, bytearray or another
/// contiguous buffer.
pub fn bytes_of<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Cow::Owned(s.to_cow()?.as_bytes().to_vec()));
    }
    if let Ok(b) = obj.downcast::<PyByteArray>() {
        return Ok(Cow::Owned(b.to_vec()));
    }
    if let Ok(view) = PyMemoryView::from(obj) {
        if !view.getattr("contiguous")?.is_truthy()? {
            return Err(PyTypeError::new_err(format!(
                "{what} must be a contiguous buffer: this {} is not (copy it with bytes() first)",
                obj.get_type().name()?
            )));
        }
        let b = view.call_method0("tobytes")?;
        return Ok(Cow::Owned(b.downcast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be bytes, str or a buffer (bytearray, memoryview, ...), not {}",
        obj.get_type().name()?
    )))
}

/// `Some(bytes)` of an optional bound, `None` for Python's None.
pub fn opt_bytes_of<'a>(
    obj: Option<&'a Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Option<Cow<'a, [u8]>>> {
    match obj {
        Some(o) if !o.is_none() => bytes_of(o, what).map(Some),
        _ => Ok(None),
    }
}

/// A key range `[start, end)` of the engine's API.
pub type KeyRange = (Edge<Vec<u8>>, Edge<Vec<u8>>);

/// `[start, end)` from two optional Python keys (None: unbounded).
pub fn range_of(
    start: Option<&Bound<'_, PyAny>>,
    end: Option<&Bound<'_, PyAny>>,
) -> PyResult<KeyRange> {
    let lo = opt_bytes_of(start, "start")?.map(|c| c.into_owned());
    let hi = opt_bytes_of(end, "end")?.map(|c| c.into_owned());
    Ok((
        lo.map_or(Edge::Unbounded, Edge::Included),
        hi.map_or(Edge::Unbounded, Edge::Excluded),
    ))
}

/// The keys that start with `prefix` as a range: `[prefix, successor)`, the
/// successor being the shortest key above them all (none when `prefix` is
/// empty or all `0xff`).
pub fn prefix_range(prefix: &[u8]) -> KeyRange {
    let mut hi = prefix.to_vec();
    while hi.last() == Some(&0xff) {
        hi.pop();
    }
    let hi = match hi.last_mut() {
        Some(b) => {
            *b += 1;
            Edge::Excluded(hi)
        }
        None => Edge::Unbounded,
    };
    (Edge::Included(prefix.to_vec()), hi)
}

/// A key range with each end included or not (`None`: unbounded), made
/// `[lo, hi)` exactly: the smallest key above `k` is `k + b"\0"`, so
/// "above `k`" is "from `k\0` on" and "up to `k` included" is "below
/// `k\0`". Every engine entry point (ranges, and the inclusive lower and
/// exclusive upper bounds of `ReadOptions`) then takes it as it is.
pub fn bounds_of(
    start: Option<&Bound<'_, PyAny>>,
    stop: Option<&Bound<'_, PyAny>>,
    include_start: bool,
    include_stop: bool,
) -> PyResult<KeyRange> {
    let successor = |mut k: Vec<u8>| {
        k.push(0);
        k
    };
    let lo = opt_bytes_of(start, "start")?.map(|c| c.into_owned());
    let hi = opt_bytes_of(stop, "stop")?.map(|c| c.into_owned());
    Ok((
        match lo {
            None => Edge::Unbounded,
            Some(k) if include_start => Edge::Included(k),
            Some(k) => Edge::Included(successor(k)),
        },
        match hi {
            None => Edge::Unbounded,
            Some(k) if include_stop => Edge::Excluded(successor(k)),
            Some(k) => Edge::Excluded(k),
        },
    ))
}
