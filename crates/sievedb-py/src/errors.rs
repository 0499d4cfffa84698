//! sievedb's errors as Python exceptions: `sievedb.Error` and one subclass
//! per kind of [`sievedb::Error`]; I/O errors are Python's `OSError`. A
//! transaction's conflict is a `ConflictError` whose `kind` attribute names
//! its [`sievedb::ConflictKind`].

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyOSError, PyUserWarning, PyValueError};
use pyo3::prelude::*;

create_exception!(
    sievedb,
    Error,
    PyException,
    "The base class of every error sievedb raises (I/O errors are OSError)."
);
create_exception!(
    sievedb,
    CorruptionError,
    Error,
    "Data on disk failed a checksum or is not in a format sievedb wrote."
);
create_exception!(
    sievedb,
    InvalidArgumentError,
    Error,
    "The engine refused an argument (nothing was written)."
);
create_exception!(
    sievedb,
    LockedError,
    Error,
    "The directory's LOCK is held by another open database."
);
create_exception!(
    sievedb,
    BusyError,
    Error,
    "Something still uses the database (e.g. close() while snapshots or iterators live)."
);
create_exception!(
    sievedb,
    PoisonedError,
    Error,
    "A write panicked; the database refuses writes until it is reopened."
);
create_exception!(
    sievedb,
    UnsupportedError,
    Error,
    "The operation is not supported here (e.g. O_DIRECT on this file system)."
);
create_exception!(
    sievedb,
    ReadOnlyError,
    Error,
    "The database is read-only (opened so, or after a background error)."
);
create_exception!(sievedb, ClosedError, Error, "The database has been closed.");
create_exception!(
    sievedb,
    MergeFailedError,
    Error,
    "A key's merge operands could not be combined (no merge_operator set, or it refused them)."
);

create_exception!(
    sievedb,
    ConflictError,
    Error,
    "A transaction failed its check and wrote nothing; `kind` says why: \"write\", \"read\", \
     \"too_old\", \"lock_timeout\" or \"deadlock\". Retry it as a new transaction."
);

create_exception!(
    sievedb,
    RecoveryWarning,
    PyUserWarning,
    "Opening the database dropped data recovery could not apply (a damaged or torn WAL, \
     a torn MANIFEST edit): see Db.recovery_report()."
);

/// Warns with [`RecoveryWarning`] if the open of `db` dropped anything but
/// zeros (what [`sievedb::RecoveryReport::dropped_data`] says), naming what.
pub fn warn_recovery(py: Python<'_>, db: &sievedb::Db) -> PyResult<()> {
    let r = db.recovery_report();
    if !r.dropped_data() {
        return Ok(());
    }
    let mut msg = format!(
        "opening {} dropped {} WAL records ({} writes, {} bytes)",
        db.path().display(),
        r.records_dropped,
        r.entries_dropped,
        r.bytes_dropped
    );
    if let Some(d) = &r.dropped {
        let what = if d.torn_tail { "a torn tail" } else { "damage" };
        msg += &format!(
            ": {what} in {} at offset {} ({})",
            d.path.display(),
            d.offset,
            d.detail
        );
        if !d.skipped_wals.is_empty() {
            msg += &format!(", and {} newer WALs skipped", d.skipped_wals.len());
        }
        if let Some(k) = &d.kept_in {
            msg += &format!("; kept in {}", k.display());
        }
    }
    if r.manifest_bytes_dropped > 0 {
        msg += &format!(
            "; a torn MANIFEST edit of {} bytes dropped",
            r.manifest_bytes_dropped
        );
    }
    msg += "; see Db.recovery_report()";
    let category = py.get_type::<RecoveryWarning>();
    PyErr::warn(
        py,
        &category,
        &std::ffi::CString::new(msg).unwrap_or_default(),
        1,
    )
}

/// The Python exception for an engine error.
pub fn to_py(e: sievedb::Error) -> PyErr {
    let msg = e.to_string();
    match e {
        sievedb::Error::Io(io) => match io.raw_os_error() {
            Some(errno) => PyOSError::new_err((errno, msg)),
            None => PyOSError::new_err(msg),
        },
        sievedb::Error::Corruption { .. } => CorruptionError::new_err(msg),
        sievedb::Error::InvalidArgument(_) => InvalidArgumentError::new_err(msg),
        sievedb::Error::Locked(_) => LockedError::new_err(msg),
        sievedb::Error::Busy(_) => BusyError::new_err(msg),
        sievedb::Error::Poisoned(_) => PoisonedError::new_err(msg),
        sievedb::Error::Unsupported(_) => UnsupportedError::new_err(msg),
        sievedb::Error::ReadOnly(_) => ReadOnlyError::new_err(msg),
        sievedb::Error::Closed => ClosedError::new_err(msg),
        sievedb::Error::MergeFailed { .. } => MergeFailedError::new_err(msg),
        sievedb::Error::Conflict { kind, .. } => conflict(msg, kind),
        _ => Error::new_err(msg),
    }
}

/// The name of a conflict kind, the `kind` of a `ConflictError`.
fn kind_name(kind: sievedb::ConflictKind) -> &'static str {
    match kind {
        sievedb::ConflictKind::Write => "write",
        sievedb::ConflictKind::Read => "read",
        sievedb::ConflictKind::TooOld => "too_old",
        sievedb::ConflictKind::LockTimeout => "lock_timeout",
        sievedb::ConflictKind::Deadlock => "deadlock",
        _ => "unknown",
    }
}

/// A `ConflictError` whose `kind` attribute names `kind`.
fn conflict(msg: String, kind: sievedb::ConflictKind) -> PyErr {
    Python::with_gil(|py| {
        let err = ConflictError::new_err(msg);
        // On failure the error still raises, with the class's `kind` (None).
        let _ = err.value(py).setattr("kind", kind_name(kind));
        err
    })
}

/// `?` on an engine result inside a binding.
pub trait OrPy<T> {
    /// The value, or the engine error as a Python exception.
    fn or_py(self) -> PyResult<T>;
}

impl<T> OrPy<T> for sievedb::Result<T> {
    fn or_py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// A `ValueError` naming option `name`.
pub fn bad_option(name: &str, why: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("option '{name}': {why}"))
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("CorruptionError", py.get_type::<CorruptionError>())?;
    m.add(
        "InvalidArgumentError",
        py.get_type::<InvalidArgumentError>(),
    )?;
    m.add("LockedError", py.get_type::<LockedError>())?;
    m.add("BusyError", py.get_type::<BusyError>())?;
    m.add("PoisonedError", py.get_type::<PoisonedError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("ReadOnlyError", py.get_type::<ReadOnlyError>())?;
    m.add("ClosedError", py.get_type::<ClosedError>())?;
    m.add("MergeFailedError", py.get_type::<MergeFailedError>())?;
    let conflict = py.get_type::<ConflictError>();
    // What a `ConflictError` raised from Python (not by the engine) has.
    conflict.setattr("kind", py.None())?;
    m.add("ConflictError", conflict)?;
    m.add("RecoveryWarning", py.get_type::<RecoveryWarning>())?;
    Ok(())
}
