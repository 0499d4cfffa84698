//! `sievedb.WriteBatch`: puts and deletes applied atomically by `Db.write`,
//! in any keyspaces of the database; or, made by `db.write_batch()` (as
//! plyvel's), written by the database itself at the end of a `with` block.

use std::sync::Mutex;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use sievedb::WriteOptions;

use crate::db::Db;
use crate::keys::{bytes_of, range_of};
use crate::keyspace::Keyspace;
use crate::store::Target;

/// The database a batch from `db.write_batch()` writes to.
struct Binding {
    db: Py<Db>,
    /// Where its writes go without `keyspace=` (`ks.write_batch()`).
    keyspace: Option<Py<Keyspace>>,
    sync: bool,
}

/// Writes applied all together or not at all by `Db.write(batch)`, in the
/// default keyspace or, with `keyspace=ks`, in `ks` (one batch may write
/// to several keyspaces of one database). The batch is kept after writing
/// (clear it to reuse it).
#[pyclass(module = "sievedb", name = "WriteBatch")]
pub struct WriteBatch {
    pub(crate) inner: Mutex<sievedb::WriteBatch>,
    /// Set by `db.write_batch()`.
    binding: Option<Binding>,
}

impl WriteBatch {
    /// The batch's current contents.
    pub(crate) fn snapshot(&self) -> sievedb::WriteBatch {
        self.inner.lock().map(|b| b.clone()).unwrap_or_default()
    }

    /// A batch `db` writes at the end of a `with` block.
    pub(crate) fn bound(db: Py<Db>, keyspace: Option<Py<Keyspace>>, sync: bool) -> WriteBatch {
        WriteBatch {
            inner: Mutex::new(sievedb::WriteBatch::new()),
            binding: Some(Binding { db, keyspace, sync }),
        }
    }

    /// The keyspace an operation goes to: `keyspace=`, else the one of
    /// `ks.write_batch()`, else (None) the default keyspace.
    fn keyspace_of<'py>(
        &self,
        py: Python<'py>,
        keyspace: Option<&Bound<'py, Keyspace>>,
    ) -> Option<Bound<'py, Keyspace>> {
        keyspace.cloned().or_else(|| {
            self.binding
                .as_ref()
                .and_then(|b| b.keyspace.as_ref())
                .map(|k| k.bind(py).clone())
        })
    }

    fn with<R>(&self, f: impl FnOnce(&mut sievedb::WriteBatch) -> R) -> PyResult<R> {
        let mut b = self
            .inner
            .lock()
            .map_err(|_| crate::errors::Error::new_err("write batch poisoned"))?;
        Ok(f(&mut b))
    }
}

#[pymethods]
impl WriteBatch {
    #[new]
    fn new() -> Self {
        WriteBatch {
            inner: Mutex::new(sievedb::WriteBatch::new()),
            binding: None,
        }
    }

    /// Adds `key = value` (in `keyspace`, a `Keyspace`; default: the
    /// default keyspace, or the one of `ks.write_batch()`). The value goes
    /// through the serializer of the keyspace it is written to (the
    /// database's unless it has its own); a `WriteBatch()` made without a
    /// database and put without `keyspace=` is bound to none yet, so there
    /// the value must be bytes or str and is stored as it is.
    #[pyo3(signature = (key, value, keyspace=None))]
    fn put(
        &self,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let k = bytes_of(key, "key")?;
        match self.keyspace_of(key.py(), keyspace) {
            // Bound to a database (`db.write_batch()`) or not: the value goes
            // through that database's serializer, or is stored as it is.
            None => {
                let v = match &self.binding {
                    Some(b) => b.db.get().codec().encode(value)?,
                    None => bytes_of(value, "value")?,
                };
                self.with(|b| b.put(k, v))
            }
            Some(ks) => {
                let v = ks.get().codec().encode(value)?;
                ks.get()
                    .with_handle(|ks| self.with(|b| b.put_cf(ks, k, v)))?
            }
        }
    }

    /// Adds a merge of `operand` into `key` (in `keyspace`).
    #[pyo3(signature = (key, operand, keyspace=None))]
    fn merge(
        &self,
        key: &Bound<'_, PyAny>,
        operand: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let (k, v) = (bytes_of(key, "key")?, bytes_of(operand, "operand")?);
        match self.keyspace_of(key.py(), keyspace) {
            None => self.with(|b| b.merge(k, v)),
            Some(ks) => ks
                .get()
                .with_handle(|ks| self.with(|b| b.merge_cf(ks, k, v)))?,
        }
    }

    /// Adds a delete of `key` (in `keyspace`).
    #[pyo3(signature = (key, keyspace=None))]
    fn delete(
        &self,
        key: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let k = bytes_of(key, "key")?;
        match self.keyspace_of(key.py(), keyspace) {
            None => self.with(|b| b.delete(k)),
            Some(ks) => ks
                .get()
                .with_handle(|ks| self.with(|b| b.delete_cf(ks, k)))?,
        }
    }

    /// Adds a delete of every key in `[start, end)` (None: unbounded; in
    /// `keyspace`).
    #[pyo3(signature = (start=None, end=None, keyspace=None))]
    fn delete_range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let range = range_of(start, end)?;
        match self.keyspace_of(py, keyspace) {
            None => self.with(|b| b.delete_range::<Vec<u8>, _>(range)),
            Some(ks) => ks
                .get()
                .with_handle(|ks| self.with(|b| b.delete_range_cf::<Vec<u8>, _>(ks, range)))?,
        }
    }

    /// Removes every operation.
    fn clear(&self) -> PyResult<()> {
        self.with(|b| b.clear())
    }

    /// Bytes the batch takes.
    fn size_in_bytes(&self) -> PyResult<usize> {
        self.with(|b| b.size_in_bytes())
    }

    fn __len__(&self) -> PyResult<usize> {
        self.with(|b| b.len())
    }

    fn __repr__(&self) -> PyResult<String> {
        self.with(|b| format!("WriteBatch({} operations)", b.len()))
    }

    // rocksdict's and plyvel's habits.

    /// `batch[key] = value`: `put(key, value)`.
    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.put(key, value, None)
    }

    /// `del batch[key]`: `delete(key)` (no KeyError: the batch cannot know).
    fn __delitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.delete(key, None)
    }

    /// Writes the batch now, atomically, to the database of
    /// `db.write_batch()` (with its `sync=`), and clears it. A
    /// `WriteBatch()` made directly raises `TypeError`: pass it to
    /// `db.write(batch)`.
    fn write(&self, py: Python<'_>) -> PyResult<()> {
        let Some(binding) = &self.binding else {
            return Err(unbound());
        };
        let b = self.snapshot();
        let opts = WriteOptions { sync: binding.sync };
        binding.db.get().with_db(py, |db| db.write_with(b, &opts))?;
        self.clear()
    }

    /// `with db.write_batch() as b:` (plyvel's `transaction=True`): the
    /// block's writes are applied together when it ends normally, and
    /// none of them if it raises.
    fn __enter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        if slf.binding.is_none() {
            return Err(unbound());
        }
        Ok(slf)
    }

    #[pyo3(signature = (*args))]
    fn __exit__(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        let raised = match args.get_item(0) {
            Ok(t) => !t.is_none(),
            Err(_) => false,
        };
        if raised {
            self.clear()?;
        } else {
            self.write(py)?;
        }
        Ok(false)
    }
}

fn unbound() -> PyErr {
    PyTypeError::new_err(
        "this WriteBatch() belongs to no database: write it with db.write(batch), \
         or make one with db.write_batch() to use it in a with block",
    )
}
