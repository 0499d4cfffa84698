//! `sievedb.Transaction`: the engine's [`sievedb::Transaction`] (optimistic
//! or pessimistic, snapshot-isolated or serializable, across keyspaces) with
//! a `dict`-like surface and a context manager that commits, or rolls back
//! on an exception.
//!
//! The engine transaction sits in a mutex, so the object may be handed
//! between threads. Calls that may read files or wait (reads, iterator
//! steps, the commit, and in a pessimistic transaction every write, which
//! may wait for a key's lock) run with the GIL released; an optimistic
//! transaction's writes only add to its memory and keep it. `Db.close()`
//! releases an open transaction (rolled back; it then raises `ClosedError`).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use sievedb::{Isolation, TransactionOptions, WriteOptions};

use crate::children::{Children, Release};
use crate::errors::OrPy;
use crate::iter::{KeyIterator, Yield};
use crate::keys::{bytes_of, range_of, KeyRange};
use crate::keyspace::Keyspace;
use crate::serializer::Codec;
use crate::store::Target;

/// The options of `Db.transaction(...)`, checked, and the isolation level's
/// name.
pub fn options(
    pessimistic: bool,
    isolation: &str,
    lock_timeout: f64,
    deadlock_detect: bool,
) -> PyResult<(TransactionOptions, &'static str)> {
    let (level, name) = match isolation {
        "snapshot" => (Isolation::Snapshot, "snapshot"),
        "serializable" => (Isolation::Serializable, "serializable"),
        other => {
            return Err(PyValueError::new_err(format!(
                "isolation must be \"snapshot\" or \"serializable\", not {other:?}"
            )))
        }
    };
    let timeout = Duration::try_from_secs_f64(lock_timeout).map_err(|_| {
        PyValueError::new_err(format!(
            "lock_timeout must be a finite number of seconds >= 0, not {lock_timeout}"
        ))
    })?;
    let opts = TransactionOptions::default()
        .pessimistic(pessimistic)
        .isolation(level)
        .lock_timeout(timeout)
        .deadlock_detect(deadlock_detect);
    Ok((opts, name))
}

/// Where a transaction is, as the Python object sees it.
enum State {
    /// Open (the engine transaction may have failed a call with a conflict:
    /// it then answers every call with that error, and its commit too).
    /// Boxed: the other states are small.
    Active(Box<sievedb::Transaction>),
    /// Its commit failed with this conflict: every call raises it again;
    /// `rollback()` ends it.
    Failed(sievedb::Error),
    /// Committed or rolled back (how).
    Ended(&'static str),
    /// Released by `Db.close()`.
    Closed,
}

/// The engine transaction, until it ends or the database is closed.
struct Slot(Mutex<State>);

impl Release for Slot {
    fn release(&self) {
        // Even if a panic poisoned the lock: the engine transaction must go
        // (it keeps the database open).
        let mut s = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *s = State::Closed;
    }
}

/// The error of a call on a transaction that ended.
fn ended(how: &str) -> sievedb::Error {
    sievedb::Error::InvalidArgument(format!("the transaction was {how}"))
}

/// Commits the transaction of `state`. The engine transaction is dropped
/// once it is done (its snapshot released): committed, or failed with a
/// conflict. Another error (I/O, a read-only database) leaves it open, as
/// the engine does.
fn commit(state: &mut State, sync: bool) -> sievedb::Result<()> {
    let r = active(state)?.commit_opt(&WriteOptions { sync });
    match &r {
        Ok(()) => *state = State::Ended("committed"),
        Err(e) if e.is_conflict() => *state = State::Failed(e.clone()),
        Err(_) => {}
    }
    r
}

/// Rolls back the transaction of `state`: drops the pending writes, releases
/// the locks and the snapshot. One whose commit failed may be rolled back;
/// one that ended may not.
fn rollback(state: &mut State) -> sievedb::Result<()> {
    match state {
        State::Active(tx) => tx.rollback()?,
        State::Failed(_) => {}
        State::Ended(how) => return Err(ended(how)),
        State::Closed => return Err(sievedb::Error::Closed),
    }
    *state = State::Ended("rolled back");
    Ok(())
}

/// The engine transaction of `state`, or the error a call on it raises.
fn active(state: &mut State) -> sievedb::Result<&mut sievedb::Transaction> {
    match state {
        State::Active(tx) => Ok(tx),
        State::Failed(e) => Err(e.clone()),
        State::Ended(how) => Err(ended(how)),
        State::Closed => Err(sievedb::Error::Closed),
    }
}

impl Slot {
    fn lock(&self) -> sievedb::Result<std::sync::MutexGuard<'_, State>> {
        self.0
            .lock()
            .map_err(|_| sievedb::Error::Poisoned("the transaction's lock".into()))
    }

    /// Runs `f` on the open engine transaction.
    fn with<R>(
        &self,
        f: impl FnOnce(&mut sievedb::Transaction) -> sievedb::Result<R>,
    ) -> sievedb::Result<R> {
        f(active(&mut *self.lock()?)?)
    }

    /// Commits (see [`commit`]).
    fn commit(&self, sync: bool) -> sievedb::Result<()> {
        commit(&mut *self.lock()?, sync)
    }

    /// Rolls back (see [`rollback`]).
    fn rollback(&self) -> sievedb::Result<()> {
        rollback(&mut *self.lock()?)
    }

    /// The end of a `with` block: commits (`commit`) or rolls back an open
    /// transaction. Nothing if it ended in the block (committed, rolled
    /// back, or failed its commit: that error was raised); if `db.close()`
    /// released it, a commit raises `ClosedError` (its writes are lost).
    fn finish(&self, commit_it: bool) -> sievedb::Result<()> {
        let mut g = self.lock()?;
        match (&*g, commit_it) {
            (State::Active(_), true) => commit(&mut g, false),
            (State::Active(_), false) => rollback(&mut g),
            (State::Closed, true) => Err(sievedb::Error::Closed),
            _ => Ok(()),
        }
    }

    /// What `repr()` says of the state.
    fn describe(&self) -> &'static str {
        match self.0.lock().as_deref() {
            Ok(State::Active(_)) => "active",
            Ok(State::Failed(_)) => "failed",
            Ok(State::Ended(how)) => how,
            Ok(State::Closed) => "closed",
            Err(_) => "poisoned",
        }
    }
}

/// A transaction of a database: `db.transaction(pessimistic=False,
/// isolation="snapshot", lock_timeout=1.0, deadlock_detect=True)`.
///
/// Its reads see its snapshot (taken when it began) under its own pending
/// writes; its writes commit together, atomically across keyspaces, or not
/// at all. `with db.transaction() as tx:` commits at the end of the block,
/// or rolls back if the block raises (the exception goes on). A commit that
/// fails its check raises `ConflictError` (its `kind` says why) and writes
/// nothing: retry with a new transaction. Reads and writes go to the default
/// keyspace, or with `keyspace=ks` to `ks`. Once committed or rolled back,
/// calls raise `InvalidArgumentError`; after `db.close()`, `ClosedError`.
#[pyclass(module = "sievedb", name = "Transaction", frozen)]
pub struct Transaction {
    slot: Arc<Slot>,
    /// The database's children, which this transaction's iterators join.
    children: Arc<Children>,
    sequence: u64,
    pessimistic: bool,
    isolation: &'static str,
    /// The database's codec (reads and writes with `keyspace=ks` use
    /// `ks`'s).
    codec: Arc<Codec>,
}

impl Transaction {
    /// Wraps an engine transaction, registered with `children` (the
    /// database's) so that `Db.close()` releases it.
    pub fn new(
        tx: sievedb::Transaction,
        isolation: &'static str,
        children: Arc<Children>,
    ) -> Transaction {
        let sequence = tx.snapshot_sequence();
        let pessimistic = tx.is_pessimistic();
        let slot = Arc::new(Slot(Mutex::new(State::Active(Box::new(tx)))));
        children.add(&(slot.clone() as Arc<dyn Release>));
        Transaction {
            slot,
            children,
            sequence,
            pessimistic,
            isolation,
            codec: crate::serializer::bytes(),
        }
    }

    /// The transaction, its values going through `codec` (the database's).
    pub fn with_codec(mut self, codec: &Arc<Codec>) -> Transaction {
        self.codec = codec.clone();
        self
    }

    /// The codec of `keyspace` (None: the default keyspace).
    fn codec_for(&self, keyspace: Option<&Bound<'_, Keyspace>>) -> Arc<Codec> {
        match keyspace {
            Some(ks) => ks.get().codec().clone(),
            None => self.codec.clone(),
        }
    }

    /// Runs `f` on the engine transaction and the engine handle of
    /// `keyspace` (None: the default keyspace), with the GIL released if
    /// `release` (a call that may read or wait).
    fn run<R: Send>(
        &self,
        py: Python<'_>,
        keyspace: Option<&Bound<'_, Keyspace>>,
        release: bool,
        f: impl FnOnce(&mut sievedb::Transaction, Option<&sievedb::Keyspace>) -> sievedb::Result<R>
            + Send,
    ) -> PyResult<R> {
        let slot = &self.slot;
        match (keyspace, release) {
            (None, true) => py.allow_threads(|| slot.with(|tx| f(tx, None))).or_py(),
            (None, false) => slot.with(|tx| f(tx, None)).or_py(),
            (Some(ks), true) => ks.get().run_handle(py, |h| slot.with(|tx| f(tx, Some(h)))),
            (Some(ks), false) => ks
                .get()
                .with_handle(|h| slot.with(|tx| f(tx, Some(h))))?
                .or_py(),
        }
    }

    /// A read of `key` (`for_update`: `get_for_update`).
    fn read(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
        for_update: bool,
    ) -> PyResult<Option<Vec<u8>>> {
        let k = bytes_of(key, "key")?;
        self.run(py, keyspace, true, |tx, ks| match (ks, for_update) {
            (None, false) => tx.get(&k),
            (None, true) => tx.get_for_update(&k),
            (Some(ks), false) => tx.get_cf(ks, &k),
            (Some(ks), true) => tx.get_for_update_cf(ks, &k),
        })
    }

    /// An iterator over `range`, or over the keys starting with `prefix`.
    fn scan(
        &self,
        py: Python<'_>,
        range: Scan,
        keyspace: Option<&Bound<'_, Keyspace>>,
        reverse: bool,
        kind: Yield,
    ) -> PyResult<KeyIterator> {
        let it = self.run(py, keyspace, true, |tx, ks| match (range, ks) {
            (Scan::Range(r), None) => tx.range::<Vec<u8>, _>(r),
            (Scan::Range(r), Some(ks)) => tx.range_cf::<Vec<u8>, _>(ks, r),
            (Scan::Prefix(p), None) => tx.prefix(p),
            (Scan::Prefix(p), Some(ks)) => tx.prefix_cf(ks, p),
        })?;
        Ok(KeyIterator::new(it, kind, reverse, &self.children)
            .with_codec(&self.codec_for(keyspace)))
    }

    fn iter(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
        kind: Yield,
    ) -> PyResult<KeyIterator> {
        let range = Scan::Range(range_of(start, end)?);
        self.scan(py, range, keyspace, reverse, kind)
    }
}

/// What a transaction's iterator covers.
enum Scan {
    Range(KeyRange),
    Prefix(Vec<u8>),
}

#[pymethods]
impl Transaction {
    /// The value of `key` as the transaction sees it (its own writes over
    /// its snapshot; in the default keyspace, or in `keyspace`), or
    /// `default`. A serializable transaction's commit fails if another
    /// commit wrote `key` after its snapshot.
    #[pyo3(signature = (key, default=None, keyspace=None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<PyObject>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Option<PyObject>> {
        let v = self.read(py, key, keyspace, false)?;
        self.codec_for(keyspace).value_or(py, v, default)
    }

    /// `get`, and the commit fails if another commit writes `key` after the
    /// snapshot (under any isolation); a pessimistic transaction locks `key`
    /// until it ends, waiting up to `lock_timeout` for another's lock.
    #[pyo3(signature = (key, default=None, keyspace=None))]
    fn get_for_update(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<PyObject>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Option<PyObject>> {
        let v = self.read(py, key, keyspace, true)?;
        self.codec_for(keyspace).value_or(py, v, default)
    }

    /// Sets `key` to `value` when the transaction commits (a pessimistic
    /// transaction locks `key` first).
    #[pyo3(signature = (key, value, keyspace=None))]
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let codec = self.codec_for(keyspace);
        let (k, v) = (bytes_of(key, "key")?, codec.encode(value)?);
        self.run(py, keyspace, self.pessimistic, |tx, ks| match ks {
            None => tx.put(&k, &v),
            Some(ks) => tx.put_cf(ks, &k, &v),
        })
    }

    /// Deletes `key` when the transaction commits (nothing happens if it is
    /// absent).
    #[pyo3(signature = (key, keyspace=None))]
    fn delete(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let k = bytes_of(key, "key")?;
        self.run(py, keyspace, self.pessimistic, |tx, ks| match ks {
            None => tx.delete(&k),
            Some(ks) => tx.delete_cf(ks, &k),
        })
    }

    /// Merges `operand` into `key` when the transaction commits, through
    /// the keyspace's `merge_operator` (its own reads see the merged value).
    #[pyo3(signature = (key, operand, keyspace=None))]
    fn merge(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        operand: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let (k, v) = (bytes_of(key, "key")?, bytes_of(operand, "operand")?);
        self.run(py, keyspace, self.pessimistic, |tx, ks| match ks {
            None => tx.merge(&k, &v),
            Some(ks) => tx.merge_cf(ks, &k, &v),
        })
    }

    /// `(key, value)` pairs of `[start, end)` as the transaction sees them
    /// (its pending writes as they are now, over its snapshot), ascending
    /// (descending with `reverse=True`). A serializable transaction's
    /// commit fails if another commit wrote into the range after its
    /// snapshot.
    #[pyo3(signature = (start=None, end=None, reverse=false, keyspace=None))]
    fn items(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<KeyIterator> {
        self.iter(py, start, end, reverse, keyspace, Yield::Items)
    }

    /// Keys of `[start, end)` as the transaction sees them.
    #[pyo3(signature = (start=None, end=None, reverse=false, keyspace=None))]
    fn keys(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<KeyIterator> {
        self.iter(py, start, end, reverse, keyspace, Yield::Keys)
    }

    /// Values of `[start, end)` as the transaction sees them, in key order.
    #[pyo3(signature = (start=None, end=None, reverse=false, keyspace=None))]
    fn values(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<KeyIterator> {
        self.iter(py, start, end, reverse, keyspace, Yield::Values)
    }

    /// `(key, value)` pairs of the keys starting with `prefix`, as the
    /// transaction sees them.
    #[pyo3(signature = (prefix, reverse=false, keyspace=None))]
    fn prefix(
        &self,
        py: Python<'_>,
        prefix: &Bound<'_, PyAny>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<KeyIterator> {
        let p = Scan::Prefix(bytes_of(prefix, "prefix")?.into_owned());
        self.scan(py, p, keyspace, reverse, Yield::Items)
    }

    /// Marks the transaction's writes so far: `rollback_to_savepoint()`
    /// undoes those made after. Savepoints nest.
    fn set_savepoint(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, None, false, |tx, _| {
            tx.set_savepoint();
            Ok(())
        })
    }

    /// Undoes the writes made since the last `set_savepoint()` and forgets
    /// it (locks taken since stay held; reads since still count for the
    /// commit's check). `InvalidArgumentError` if no savepoint is set.
    fn rollback_to_savepoint(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, None, false, |tx, _| tx.rollback_to_savepoint())
    }

    /// Commits every pending write, atomically across keyspaces
    /// (`sync=True`: durable when it returns). Raises `ConflictError` if
    /// the commit's check fails: nothing is written, and the transaction is
    /// over (retry with a new one).
    #[pyo3(signature = (sync=false))]
    fn commit(&self, py: Python<'_>, sync: bool) -> PyResult<()> {
        let slot = &self.slot;
        py.allow_threads(|| slot.commit(sync)).or_py()
    }

    /// Drops every pending write and releases the transaction's locks and
    /// snapshot; it ends. Also ends a transaction whose commit failed.
    fn rollback(&self, py: Python<'_>) -> PyResult<()> {
        let slot = &self.slot;
        py.allow_threads(|| slot.rollback()).or_py()
    }

    /// The sequence number its snapshot reads at.
    #[getter]
    fn snapshot_sequence(&self) -> u64 {
        self.sequence
    }

    /// Whether it locks the keys it writes or reads for update.
    #[getter]
    fn pessimistic(&self) -> bool {
        self.pessimistic
    }

    /// Its isolation level: "snapshot" or "serializable".
    #[getter]
    fn isolation(&self) -> &'static str {
        self.isolation
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// Commits if the block ended normally, rolls back if it raised (the
    /// exception is not swallowed); nothing if the transaction ended in the
    /// block. A conflict of the commit raises `ConflictError`; a commit of
    /// a transaction `db.close()` released, `ClosedError`.
    #[pyo3(signature = (exc_type=None, _exc=None, _tb=None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let commit = exc_type.is_none_or(|t| t.is_none());
        let slot = &self.slot;
        py.allow_threads(|| slot.finish(commit)).or_py()?;
        Ok(false)
    }

    /// `tx[key]`: KeyError if absent.
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        self.get(py, key, None, None)?
            .ok_or_else(|| PyKeyError::new_err(key.clone().unbind()))
    }

    /// `tx[key] = value`: `put`.
    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.put(py, key, value, None)
    }

    /// `del tx[key]`: deletes `key`, KeyError if the transaction sees it
    /// absent (as a dict).
    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = bytes_of(key, "key")?;
        let found = self.run(py, None, true, |tx, _| {
            let found = tx.get(&k)?.is_some();
            if found {
                tx.delete(&k)?;
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
        Ok(self.read(py, key, None, false)?.is_some())
    }

    /// `iter(tx)`: the keys, as `iter(db)` (`tx.items()` for pairs).
    fn __iter__(&self, py: Python<'_>) -> PyResult<KeyIterator> {
        self.iter(py, None, None, false, None, Yield::Keys)
    }

    fn __repr__(&self) -> String {
        format!(
            "sievedb.Transaction({}, {}, snapshot_sequence={}, {})",
            if self.pessimistic {
                "pessimistic"
            } else {
                "optimistic"
            },
            self.isolation,
            self.sequence,
            self.slot.describe()
        )
    }
}
