//! sievedb's errors as Python exceptions: `sievedb.Error` and one subclass
//! per kind of [`sievedb::Error`]; I/O errors are Python's `OSError`, made
//! by its constructor from `(errno, strerror, filename)` so that they are
//! the subclass of the errno (`FileNotFoundError`, `PermissionError`, ...).
//! A transaction's conflict is a `ConflictError` whose `kind` attribute
//! names its [`sievedb::ConflictKind`]. Messages name Python spellings:
//! the engine's that name a Rust item (`Db::repair`, `Options::ttl`, ...)
//! are translated ([`pythonic`]).

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

/// The engine's phrases that name a Rust item, and how Python says them.
const PHRASES: &[(&str, &str)] = &[
    (
        "set `merge_operator` in the database's `Options` to merge into it",
        "open the database with merge_operator= to merge into it",
    ),
    (
        "set `merge_operator` in its `KeyspaceOptions` to merge into it",
        "open the keyspace with merge_operator= to merge into it",
    ),
    (
        "Db::repair (CLI: sievedb repair --db DIR)",
        "sievedb.Db.repair(path) (CLI: sievedb repair --db DIR)",
    ),
    ("Db::repair", "sievedb.Db.repair(path)"),
    (
        "Options::skip_checking_sst_file_sizes_on_db_open",
        "skip_checking_sst_file_sizes_on_db_open=True",
    ),
    ("Db::open_read_only", "sievedb.Db.open_read_only"),
    ("Db::recovery_report", "Db.recovery_report()"),
    ("ReadOptions::snapshot", "the snapshot"),
    (
        "WalRecovery::TolerateCorruptedTail",
        "wal_recovery=\"tolerate-corrupted-tail\"",
    ),
    ("WalRecovery::PointInTime", "wal_recovery=\"point-in-time\""),
    (
        "WalRecovery::AbsoluteConsistency",
        "wal_recovery=\"absolute-consistency\"",
    ),
];

/// `msg` in Python's terms: the phrases of [`PHRASES`] translated, and
/// `Options::name` / `KeyspaceOptions::name` (the option `name=` of
/// `sievedb.Db(...)` / `db.keyspace(...)`) said as `name=`.
pub fn pythonic(msg: &str) -> String {
    let mut out = msg.to_string();
    for (rust, py) in PHRASES {
        if out.contains(rust) {
            out = out.replace(rust, py);
        }
    }
    for prefix in ["KeyspaceOptions::", "Options::"] {
        while let Some(i) = out.find(prefix) {
            let rest = &out[i + prefix.len()..];
            let n = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let name = rest[..n].to_string();
            out.replace_range(i..i + prefix.len() + n, &format!("{name}="));
        }
    }
    out
}

/// The errno of an I/O error, looking through the engine's wrapper that
/// adds the path (whose source is the original error).
fn errno_of(e: &std::io::Error) -> Option<i32> {
    e.raw_os_error().or_else(|| {
        e.get_ref()
            .and_then(|inner| std::error::Error::source(inner))
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .and_then(|s| s.raw_os_error())
    })
}

/// The path the engine's wrapper names: it displays as `path: source`.
fn filename_of(e: &std::io::Error) -> Option<String> {
    let inner = e.get_ref()?;
    let source = std::error::Error::source(inner)?;
    let text = inner.to_string();
    text.strip_suffix(&format!(": {source}"))
        .map(|p| p.to_string())
}

/// `OSError(errno, strerror[, filename])` through Python's constructor,
/// which makes it the subclass of the errno (`FileNotFoundError`, ...).
fn os_error(py: Python<'_>, errno: i32, strerror: &str, filename: Option<&str>) -> PyResult<PyErr> {
    let cls = py.get_type::<PyOSError>();
    let e = match filename {
        Some(f) => cls.call1((errno, strerror, f))?,
        None => cls.call1((errno, strerror))?,
    };
    Ok(PyErr::from_value(e))
}

/// The Python exception of an engine I/O error: the `OSError` subclass of
/// its errno with `errno`, `strerror` (the system's text) and `filename`
/// (the path the engine names, if any) set; a plain `OSError` with the
/// engine's message when it has no errno.
fn io_to_py(io: &std::io::Error, msg: String) -> PyErr {
    let Some(errno) = errno_of(io) else {
        return PyOSError::new_err(msg);
    };
    Python::with_gil(|py| {
        let strerror = py
            .import("os")
            .and_then(|os| os.call_method1("strerror", (errno,)))
            .and_then(|s| s.extract::<String>())
            .unwrap_or_else(|_| std::io::Error::from_raw_os_error(errno).to_string());
        os_error(py, errno, &strerror, filename_of(io).as_deref()).unwrap_or_else(|e| e)
    })
}

/// A failed open, and whether its directory is missing (looked at with
/// the GIL released, where the open ran).
pub struct OpenError {
    error: sievedb::Error,
    missing: bool,
}

impl OpenError {
    /// `error` of opening `path`: missing if the engine refused it as an
    /// invalid argument saying so (it does before touching any file) and
    /// `path` is indeed not there.
    pub fn new(error: sievedb::Error, path: &std::path::Path) -> OpenError {
        let missing = matches!(&error, sievedb::Error::InvalidArgument(m) if m.contains("does not exist"))
            && matches!(std::fs::symlink_metadata(path), Err(m) if m.kind() == std::io::ErrorKind::NotFound);
        OpenError { error, missing }
    }

    /// A missing directory is a `sievedb.DatabaseNotFoundError`, both
    /// `InvalidArgumentError` and `FileNotFoundError` (errno ENOENT,
    /// `filename` the path); other errors as [`to_py`].
    /// `why` says why nothing was created, as the `strerror`'s remark.
    pub fn into_py(self, path: &std::path::Path, why: &str) -> PyErr {
        if !self.missing {
            return to_py(self.error);
        }
        let why = format!("No such file or directory ({why})");
        Python::with_gil(|py| {
            let build = || -> PyResult<PyErr> {
                let cls = not_found_class(py)?;
                let e = cls.call1((2, why.as_str(), path.display().to_string()))?;
                Ok(PyErr::from_value(e))
            };
            build().unwrap_or_else(|err| err)
        })
    }
}

static NOT_FOUND: pyo3::sync::GILOnceCell<Py<pyo3::types::PyType>> = pyo3::sync::GILOnceCell::new();

/// `class DatabaseNotFoundError(InvalidArgumentError, FileNotFoundError)`,
/// made once (PyO3's `create_exception!` takes one base).
fn not_found_class(py: Python<'_>) -> PyResult<&Bound<'_, pyo3::types::PyType>> {
    NOT_FOUND
        .get_or_try_init(py, || {
            let ns = pyo3::types::PyDict::new(py);
            ns.set_item("__module__", "sievedb")?;
            ns.set_item(
                "__doc__",
                "Opening (with create_if_missing=False, or Db.open_read_only) or repairing \
                 a database whose directory does not exist: an InvalidArgumentError and a \
                 FileNotFoundError.",
            )?;
            let bases = (
                py.get_type::<InvalidArgumentError>(),
                py.get_type::<pyo3::exceptions::PyFileNotFoundError>(),
            );
            let cls =
                py.get_type::<pyo3::types::PyType>()
                    .call1(("DatabaseNotFoundError", bases, ns))?;
            Ok::<_, PyErr>(cls.downcast_into::<pyo3::types::PyType>()?.unbind())
        })
        .map(|c| c.bind(py))
}

/// The Python exception for an engine error.
pub fn to_py(e: sievedb::Error) -> PyErr {
    let msg = pythonic(&e.to_string());
    match e {
        sievedb::Error::Io(io) => io_to_py(&io, msg),
        sievedb::Error::Corruption { .. } => CorruptionError::new_err(msg),
        // The class says what the engine's "invalid argument: " prefix says.
        sievedb::Error::InvalidArgument(m) => InvalidArgumentError::new_err(pythonic(&m)),
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
    m.add("DatabaseNotFoundError", not_found_class(py)?)?;
    Ok(())
}
