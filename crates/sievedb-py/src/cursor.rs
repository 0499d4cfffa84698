//! `sievedb.Cursor`: a seekable position in a key range (rocksdict's
//! `RdictIter`, RocksDB's `Iterator`), made by `db.iter()`, `ks.iter()` or
//! `snap.iter()`.
//!
//! It wraps one engine [`DbIterator`], which is a cursor itself (`seek`,
//! `seek_for_prev`, `seek_to_first`, `seek_to_last`, `valid`, `key`,
//! `value`, and the steps `next_ref`/`prev_ref`) over the view pinned when
//! it was made: every position reads that one consistent view.
//!
//! The engine's cursor yields the entry under a fresh seek on the first
//! step; a Python cursor stands *on* an entry and `next()` moves off it. So
//! each seek is followed by one step, which only marks the entry as yielded
//! (no move, no I/O): from then on each `next_ref`/`prev_ref` moves exactly
//! one entry.
//!
//! Seeks and steps may read blocks from disk, so they release the GIL;
//! `valid()`, `key()` and `value()` only look at the entry in memory. The
//! cursor's lock is taken with the GIL released for the former and is never
//! held while the GIL is acquired again, so a thread reading `key()` cannot
//! deadlock with one seeking; `key()` and `value()` copy the entry out under
//! the lock and decode it (a serializer's `loads` is Python code, which may
//! let another thread run) after letting go of it.

use std::sync::{Arc, Mutex, MutexGuard};

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use sievedb::DbIterator;

use crate::children::{Children, Release};
use crate::errors::{ClosedError, InvalidArgumentError};
use crate::serializer::Codec;

/// What the cursor holds of the engine.
struct Inner {
    it: Option<DbIterator>,
    /// Why `it` is gone: `Db.close()` or `Cursor.close()`.
    gone: Gone,
}

#[derive(Clone, Copy)]
enum Gone {
    No,
    DbClosed,
    CursorClosed,
}

/// The state, shared with the database's list of children.
struct Shared(Mutex<Inner>);

impl Release for Shared {
    fn release(&self) {
        if let Ok(mut g) = self.0.lock() {
            g.it = None;
            g.gone = Gone::DbClosed;
        }
    }
}

/// Why a call failed, made a Python exception once the GIL is held again.
enum Fail {
    Engine(sievedb::Error),
    Gone(Gone),
    Invalid(&'static str),
    Poisoned,
}

impl From<sievedb::Error> for Fail {
    fn from(e: sievedb::Error) -> Self {
        Fail::Engine(e)
    }
}

impl Fail {
    fn into_py(self) -> PyErr {
        match self {
            Fail::Engine(e) => crate::errors::to_py(e),
            Fail::Gone(Gone::CursorClosed) => ClosedError::new_err("the cursor was closed"),
            Fail::Gone(_) => ClosedError::new_err("the database was closed"),
            Fail::Invalid(what) => InvalidArgumentError::new_err(format!(
                "Cursor.{what}(): the cursor is not on an entry (valid() is False): \
                 position it with seek(), seek_for_prev(), seek_to_first() or seek_to_last()"
            )),
            Fail::Poisoned => crate::errors::Error::new_err("cursor poisoned"),
        }
    }
}

/// A cursor over a key range as of the moment it was made (writes made
/// later are not seen): `db.iter(start=None, end=None)`, also on a
/// `Keyspace` and a `Snapshot`. It starts on no entry: position it with
/// `seek_to_first()`, `seek_to_last()`, `seek(key)` (the first key >=
/// `key`) or `seek_for_prev(key)` (the last key <= `key`); `valid()` says
/// whether it stands on an entry, `key()` and `value()` read it, and
/// `next()` / `prev()` move one entry (past either end it is no longer
/// valid). `key()`, `value()`, `next()` and `prev()` on a cursor that is
/// not valid raise `InvalidArgumentError`; every call after `db.close()`
/// (or `close()`) raises `ClosedError`.
#[pyclass(module = "sievedb", name = "Cursor", frozen)]
pub struct Cursor {
    state: Arc<Shared>,
    /// Keys and values to Python (the database's serializer, `str_keys`).
    codec: Arc<Codec>,
}

impl Cursor {
    /// Wraps an engine iterator, registered with `children` (the database's).
    pub fn new(it: DbIterator, children: &Children) -> Cursor {
        let state = Arc::new(Shared(Mutex::new(Inner {
            it: Some(it),
            gone: Gone::No,
        })));
        children.add(&(state.clone() as Arc<dyn Release>));
        Cursor {
            state,
            codec: crate::serializer::bytes(),
        }
    }

    /// The cursor, its keys and values going through `codec`.
    pub fn with_codec(mut self, codec: &Arc<Codec>) -> Cursor {
        self.codec = codec.clone();
        self
    }

    fn lock(&self) -> Result<MutexGuard<'_, Inner>, Fail> {
        self.state.0.lock().map_err(|_| Fail::Poisoned)
    }

    /// Runs `f` on the engine iterator with the GIL released.
    fn moving<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut DbIterator) -> Result<R, Fail> + Send,
    ) -> PyResult<R> {
        py.allow_threads(|| {
            let mut g = self.lock()?;
            let gone = g.gone;
            match g.it.as_mut() {
                Some(it) => f(it),
                None => Err(Fail::Gone(gone)),
            }
        })
        .map_err(Fail::into_py)
    }

    /// Runs `f` on the engine iterator, the GIL held (no I/O).
    fn looking<R>(&self, f: impl FnOnce(&DbIterator) -> Result<R, Fail>) -> PyResult<R> {
        let g = self.lock().map_err(Fail::into_py)?;
        match g.it.as_ref() {
            Some(it) => f(it),
            None => Err(Fail::Gone(g.gone)),
        }
        .map_err(Fail::into_py)
    }

    /// A seek, then the step that marks its entry as the current one.
    fn seek_with(
        &self,
        py: Python<'_>,
        seek: impl FnOnce(&mut DbIterator) -> sievedb::Result<()> + Send,
    ) -> PyResult<()> {
        self.moving(py, |it| {
            seek(it)?;
            it.next_ref()?;
            Ok(())
        })
    }

    /// One step (`next_ref` or `prev_ref`) from a valid position.
    fn step(&self, py: Python<'_>, forward: bool) -> PyResult<()> {
        self.moving(py, |it| {
            if !it.valid() {
                return Err(Fail::Invalid(if forward { "next" } else { "prev" }));
            }
            if forward {
                it.next_ref()?;
            } else {
                it.prev_ref()?;
            }
            Ok(())
        })
    }
}

#[pymethods]
impl Cursor {
    /// Positions the cursor on the first key of its range.
    fn seek_to_first(&self, py: Python<'_>) -> PyResult<()> {
        self.seek_with(py, |it| it.seek_to_first())
    }

    /// Positions the cursor on the last key of its range.
    fn seek_to_last(&self, py: Python<'_>) -> PyResult<()> {
        self.seek_with(py, |it| it.seek_to_last())
    }

    /// Positions the cursor on the first key >= `key` (within its range).
    fn seek(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = crate::keys::bytes_of(key, "key")?.into_owned();
        self.seek_with(py, move |it| it.seek(&k))
    }

    /// Positions the cursor on the last key <= `key` (within its range).
    fn seek_for_prev(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = crate::keys::bytes_of(key, "key")?.into_owned();
        self.seek_with(py, move |it| it.seek_for_prev(&k))
    }

    /// Whether the cursor stands on an entry.
    fn valid(&self) -> PyResult<bool> {
        self.looking(|it| Ok(it.valid()))
    }

    /// The key under the cursor.
    fn key(&self, py: Python<'_>) -> PyResult<PyObject> {
        let k = self.looking(|it| match it.valid() {
            true => Ok(it.key().to_vec()),
            false => Err(Fail::Invalid("key")),
        })?;
        self.codec.key(py, &k)
    }

    /// The value under the cursor.
    fn value(&self, py: Python<'_>) -> PyResult<PyObject> {
        let v = self.looking(|it| match it.valid() {
            true => Ok(it.value().to_vec()),
            false => Err(Fail::Invalid("value")),
        })?;
        self.codec.decode(py, &v)
    }

    /// `(key(), value())`.
    fn item<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let (k, v) = self.looking(|it| match it.valid() {
            true => Ok((it.key().to_vec(), it.value().to_vec())),
            false => Err(Fail::Invalid("item")),
        })?;
        PyTuple::new(py, [self.codec.key(py, &k)?, self.codec.decode(py, &v)?])
    }

    /// Moves to the next key (not valid after the last one).
    fn next(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, true)
    }

    /// Moves to the previous key (not valid before the first one).
    fn prev(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, false)
    }

    /// Releases the cursor's view of the database at once (otherwise
    /// released when it is garbage-collected); calls then raise
    /// `ClosedError`.
    fn close(&self, py: Python<'_>) {
        // The engine iterator's drop unpins files: without the GIL.
        let it = self.lock().ok().and_then(|mut g| {
            if matches!(g.gone, Gone::No) {
                g.gone = Gone::CursorClosed;
            }
            g.it.take()
        });
        py.allow_threads(move || drop(it));
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        let state = match self.lock() {
            Ok(g) => match (&g.it, g.gone) {
                (Some(it), _) if it.valid() => "on an entry",
                (Some(_), _) => "not valid",
                (None, Gone::CursorClosed) => "closed",
                (None, _) => "database closed",
            },
            Err(_) => "poisoned",
        };
        format!("sievedb.Cursor({state})")
    }
}
