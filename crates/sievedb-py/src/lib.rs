//! The extension module `sievedb._sievedb` behind the Python package
//! `sievedb` (see `python/sievedb/__init__.py`): a thin binding of the
//! engine's Rust API, with no engine logic of its own.

// Never unwraps outside tests: it returns an error; an `expect` states the
// invariant that rules the error out, in an `#[expect(clippy::expect_used,
// reason = "..")]`.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod batch;
mod children;
mod cursor;
mod db;
mod errors;
mod iter;
mod iter_options;
mod keys;
mod keyspace;
mod mapping;
mod options;
mod serializer;
mod snapshot;
mod store;
mod transaction;
mod views;

use pyo3::prelude::*;

#[pymodule]
fn _sievedb(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<db::Db>()?;
    m.add_class::<keyspace::Keyspace>()?;
    m.add_class::<batch::WriteBatch>()?;
    m.add_class::<snapshot::Snapshot>()?;
    m.add_class::<iter::KeyIterator>()?;
    m.add_class::<cursor::Cursor>()?;
    m.add_class::<transaction::Transaction>()?;
    m.add_class::<views::KeysView>()?;
    m.add_class::<views::ValuesView>()?;
    m.add_class::<views::ItemsView>()?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("OPTIONS", options::NAMES.to_vec())?;
    m.add("KEYSPACE_OPTIONS", options::KEYSPACE_NAMES.to_vec())?;
    m.add(
        "FILTER_POLICIES",
        sievedb::FilterPolicy::ALL
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>(),
    )?;
    Ok(())
}
