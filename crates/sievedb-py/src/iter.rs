//! Python iterators over a key range of the database, of a snapshot or of a
//! transaction: `(key, value)` tuples, keys or values, in either direction.
//! Entries are fetched from the engine in batches with the GIL released.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use sievedb::{DbIterator, TransactionIterator};

use crate::children::{Children, Release};
use crate::errors::ClosedError;
use crate::serializer::Codec;

/// What an iterator yields.
#[derive(Clone, Copy)]
pub enum Yield {
    /// `(key, value)` tuples.
    Items,
    /// Keys.
    Keys,
    /// Values.
    Values,
}

/// The first batch fetched; each next one doubles, up to [`MAX_BATCH`].
const FIRST_BATCH: usize = 16;
/// The largest batch fetched at once.
const MAX_BATCH: usize = 1024;

/// What an iterator reads: an engine iterator of either kind.
#[expect(
    clippy::large_enum_variant,
    reason = "one per Python iterator, inside its heap-allocated state: a Box would save \
              no memory worth its indirection on every step"
)]
pub enum Source {
    /// Of the database, a keyspace or a snapshot.
    Db(DbIterator),
    /// Of a transaction: its pending writes over its snapshot.
    Transaction(TransactionIterator),
}

impl Source {
    fn step(&mut self, reverse: bool) -> Option<sievedb::Result<(Vec<u8>, Vec<u8>)>> {
        match (self, reverse) {
            (Source::Db(it), false) => it.next(),
            (Source::Db(it), true) => it.next_back(),
            (Source::Transaction(it), false) => it.next(),
            (Source::Transaction(it), true) => it.next_back(),
        }
    }
}

impl From<DbIterator> for Source {
    fn from(it: DbIterator) -> Self {
        Source::Db(it)
    }
}

impl From<TransactionIterator> for Source {
    fn from(it: TransactionIterator) -> Self {
        Source::Transaction(it)
    }
}

struct State {
    it: Option<Source>,
    /// The database was closed under the iterator.
    released: bool,
    reverse: bool,
    buf: VecDeque<(Vec<u8>, Vec<u8>)>,
    batch: usize,
}

impl State {
    /// Fetches the next batch (called with the GIL released).
    fn fill(&mut self) -> sievedb::Result<()> {
        let Some(it) = self.it.as_mut() else {
            return Ok(());
        };
        for _ in 0..self.batch {
            match it.step(self.reverse) {
                Some(kv) => self.buf.push_back(kv?),
                None => {
                    self.it = None; // done: release the engine's pins now
                    break;
                }
            }
        }
        self.batch = (self.batch * 2).min(MAX_BATCH);
        Ok(())
    }
}

/// An iterator over a key range (`db.items()`, `db.keys()`, `db.values()`,
/// `db.prefix()`, and the same on a snapshot or a transaction). It reads a
/// consistent view: writes made after it was created are not seen.
#[pyclass(module = "sievedb", name = "Iterator")]
pub struct KeyIterator {
    state: Arc<Shared>,
    kind: Yield,
    /// How keys and values come out (bytes by default).
    codec: Arc<Codec>,
}

/// An iterator's state, shared with its database's list of children.
struct Shared(Mutex<State>);

impl Release for Shared {
    fn release(&self) {
        if let Ok(mut st) = self.0.lock() {
            st.it = None;
            st.buf.clear();
            st.released = true;
        }
    }
}

impl KeyIterator {
    /// Wraps an engine iterator, registered with `children` (the database's).
    pub fn new(
        it: impl Into<Source>,
        kind: Yield,
        reverse: bool,
        children: &Children,
    ) -> KeyIterator {
        let state = Arc::new(Shared(Mutex::new(State {
            it: Some(it.into()),
            released: false,
            reverse,
            buf: VecDeque::new(),
            batch: FIRST_BATCH,
        })));
        children.add(&(state.clone() as Arc<dyn Release>));
        KeyIterator {
            state,
            kind,
            codec: crate::serializer::bytes(),
        }
    }

    /// The iterator, yielding keys and values through `codec`.
    pub fn with_codec(mut self, codec: &Arc<Codec>) -> KeyIterator {
        self.codec = codec.clone();
        self
    }
}

#[pymethods]
impl KeyIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        // The lock is never waited for with the GIL held: a thread filling
        // the buffer holds it with the GIL released and takes the GIL back
        // before letting go, so a thread blocked on the lock while holding
        // the GIL would deadlock with it. An entry already fetched is taken
        // without releasing the GIL when the lock is free at once.
        // (The guard of `try_lock` must be gone before the slow path locks.)
        let fast = match self.state.0.try_lock() {
            Ok(mut st) if !st.released => st.buf.pop_front(),
            _ => None,
        };
        let next = match fast {
            Some(kv) => Some(kv),
            None => py
                .allow_threads(|| {
                    let mut st = self
                        .state
                        .0
                        .lock()
                        .map_err(|_| sievedb::Error::Poisoned("the iterator's lock".into()))?;
                    if st.released {
                        return Err(sievedb::Error::Closed);
                    }
                    if st.buf.is_empty() {
                        st.fill()?;
                    }
                    Ok(st.buf.pop_front())
                })
                .map_err(|e| match e {
                    sievedb::Error::Closed => ClosedError::new_err("the database was closed"),
                    e => crate::errors::to_py(e),
                })?,
        };
        let Some((k, v)) = next else {
            return Ok(None);
        };
        // Decoded with the lock let go: a serializer's loads() may run
        // Python code that uses this iterator's database.
        let c = &self.codec;
        Ok(Some(match self.kind {
            Yield::Items => PyTuple::new(py, [c.key(py, &k)?, c.decode(py, &v)?])?
                .into_any()
                .unbind(),
            Yield::Keys => c.key(py, &k)?,
            Yield::Values => c.decode(py, &v)?,
        }))
    }

    /// Releases the iterator's view of the database at once (otherwise
    /// released when it is exhausted or garbage-collected).
    fn close(&self) {
        if let Ok(mut st) = self.state.0.lock() {
            st.it = None;
            st.buf.clear();
        }
    }
}
