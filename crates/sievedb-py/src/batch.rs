//! `sievedb.WriteBatch`: puts and deletes applied atomically by `Db.write`,
//! in any keyspaces of the database.

use std::sync::Mutex;

use pyo3::prelude::*;

use crate::keys::{bytes_of, range_of};
use crate::keyspace::Keyspace;
use crate::store::Target;

/// Writes applied all together or not at all by `Db.write(batch)`, in the
/// default keyspace or, with `keyspace=ks`, in `ks` (one batch may write
/// to several keyspaces of one database). The batch is kept after writing
/// (clear it to reuse it).
#[pyclass(module = "sievedb", name = "WriteBatch")]
pub struct WriteBatch {
    pub(crate) inner: Mutex<sievedb::WriteBatch>,
}

impl WriteBatch {
    /// The batch's current contents.
    pub(crate) fn snapshot(&self) -> sievedb::WriteBatch {
        self.inner.lock().map(|b| b.clone()).unwrap_or_default()
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
        }
    }

    /// Adds `key = value` (in `keyspace`, a `Keyspace`; default: the
    /// default keyspace). With `keyspace=ks` the value goes through `ks`'s
    /// serializer (the database's unless it has its own); without one the
    /// batch is bound to no database yet, so the value must be bytes or str
    /// and is stored as is.
    #[pyo3(signature = (key, value, keyspace=None))]
    fn put(
        &self,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let Some(ks) = keyspace else {
            let (k, v) = (bytes_of(key, "key")?, bytes_of(value, "value")?);
            return self.with(|b| b.put(k, v));
        };
        // Bound to `ks`'s database now: the value goes through its serializer.
        let (k, v) = (bytes_of(key, "key")?, ks.get().codec().encode(value)?);
        ks.get()
            .with_handle(|ks| self.with(|b| b.put_cf(ks, k, v)))?
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
        match keyspace {
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
        match keyspace {
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
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let range = range_of(start, end)?;
        match keyspace {
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
}
