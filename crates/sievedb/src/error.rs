//! The one error type of sievedb.

use std::fmt;
use std::path::PathBuf;

/// Everything that can go wrong in sievedb.
///
/// The enum is `#[non_exhaustive]`: match the kinds you care about and keep a
/// catch-all arm.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, Error, Options};
///
/// let db = Db::open(dir.path(), Options::default())?;
/// // A second handle on the same directory is refused: the first holds its LOCK.
/// assert!(matches!(Db::open(dir.path(), Options::default()), Err(Error::Locked(_))));
/// match db.get(vec![b'k'; 100_000]) {
///     Err(Error::InvalidArgument(why)) => assert!(why.contains("exceeds the limit")),
///     other => panic!("expected a refused key, got {other:?}"),
/// }
/// let e = db.put(vec![b'k'; 100_000], "v").unwrap_err();
/// assert!(!e.is_conflict() && !e.is_corruption() && !e.is_recoverable());
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O error.
    Io(std::io::Error),
    /// Data on disk failed a checksum or is not in a format sievedb wrote.
    Corruption {
        /// The file that holds the damaged data.
        file: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// The caller passed something sievedb cannot accept (nothing was written).
    InvalidArgument(String),
    /// The directory's LOCK is held: by another process, or in this process by
    /// another open `Db` or by a snapshot or iterator that outlives its closed `Db`.
    Locked(PathBuf),
    /// The operation cannot complete while something still uses the database
    /// (e.g. [`Db::close`](crate::Db::close) while snapshots, iterators or
    /// transactions live).
    Busy(String),
    /// A thread panicked in the middle of a write; the database refuses writes
    /// until it is reopened (what was acknowledged before is safe).
    Poisoned(String),
    /// The operation is not supported here (e.g. O_DIRECT on a file system that refuses it).
    Unsupported(String),
    /// A previous background error (failed flush or compaction, failed WAL write)
    /// put the database in read-only mode; reopen it to recover.
    ReadOnly(String),
    /// The database has been closed: a call through a
    /// [`Keyspace`](crate::Keyspace) handle whose `Db` was closed or
    /// dropped, or a write racing the shutdown.
    Closed,
    /// A key's merge operands could not be combined: no
    /// [`MergeOperator`](crate::merge::MergeOperator) is set, or it answered
    /// `None`. The operands stay stored; nothing was dropped.
    MergeFailed {
        /// The key whose operands failed.
        key: Vec<u8>,
        /// Why.
        reason: String,
    },
    /// A transaction could not commit, or wait, for the writes of another:
    /// retrying the whole transaction may succeed ([`Error::is_conflict`]).
    /// The transaction left no trace in the database, and each later call
    /// of it returns this error again.
    Conflict {
        /// What kind of conflict.
        kind: ConflictKind,
        /// What happened, naming the key.
        detail: String,
    },
}

/// Why a transaction failed with [`Error::Conflict`].
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{ConflictKind, Db, Error, Options};
///
/// let db = Db::open(dir.path(), Options::default())?;
/// let (mut t1, mut t2) = (db.transaction(), db.transaction());
/// t1.put("k", "from t1")?;
/// t2.put("k", "from t2")?;
/// t1.commit()?; // first committer wins
/// match t2.commit() {
///     Err(Error::Conflict { kind, .. }) => assert_eq!(kind, ConflictKind::Write),
///     other => panic!("expected a write conflict, got {other:?}"),
/// }
/// assert_eq!(db.get("k")?.as_deref(), Some(&b"from t1"[..]));
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConflictKind {
    /// A key it wrote (or read with `get_for_update`) was written by another
    /// commit after its snapshot.
    Write,
    /// Serializable only: a key it read, or a range it scanned, was written
    /// by another commit after its snapshot.
    Read,
    /// Its snapshot is older than the memtables reach back, so the writes
    /// committed since could not be checked (a transaction kept open past
    /// the flush of the memtable that was current when it began).
    TooOld,
    /// Pessimistic only: a lock it waited for was not released within its
    /// `lock_timeout`.
    LockTimeout,
    /// Pessimistic only: waiting for a lock would have closed a cycle of
    /// waiting transactions; this one was chosen to fail.
    Deadlock,
}

/// `Result` with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Builds a [`Error::Corruption`].
    pub fn corruption(file: impl Into<PathBuf>, detail: impl Into<String>) -> Self {
        Error::Corruption {
            file: file.into(),
            detail: detail.into(),
        }
    }

    /// Whether a background error of this kind can be cleared by
    /// [`Db::resume`](crate::Db::resume): the disk was full (ENOSPC) or a quota
    /// was exceeded. Every other I/O error (EIO, a failed fsync) stays until
    /// the database is reopened, since the state of the files is unknown.
    pub fn is_recoverable(&self) -> bool {
        match self {
            Error::Io(e) => {
                matches!(
                    e.kind(),
                    std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
                ) || matches!(crate::io::os_error(e), Some(libc::ENOSPC | libc::EDQUOT))
            }
            _ => false,
        }
    }

    /// Whether this error reports damaged on-disk data.
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }

    /// Whether retrying the whole transaction can fix this error: a
    /// commit-time conflict, a lock wait that timed out, or a deadlock
    /// victim ([`Error::Conflict`]).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::Conflict { .. })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "I/O error: {e}"),
            Error::Corruption { file, detail } => {
                write!(f, "corruption in {}: {detail}", file.display())
            }
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::Locked(p) => write!(
                f,
                "database {} is locked: another process has it open, or this process still \
                 does (an open Db, or a snapshot or iterator that outlives its closed Db)",
                p.display()
            ),
            Error::Busy(m) => write!(f, "busy: {m}"),
            Error::Poisoned(m) => write!(f, "a write panicked: {m}"),
            Error::Unsupported(m) => write!(f, "unsupported: {m}"),
            Error::ReadOnly(m) => write!(f, "database is read-only after a background error: {m}"),
            Error::Closed => write!(f, "database is closed"),
            Error::MergeFailed { key, reason } => {
                write!(f, "merge failed for key {}: {reason}", key.escape_ascii())
            }
            Error::Conflict { kind, detail } => {
                let what = match kind {
                    ConflictKind::Write => "write conflict",
                    ConflictKind::Read => "read conflict",
                    ConflictKind::TooOld => "transaction too old to check",
                    ConflictKind::LockTimeout => "lock wait timed out",
                    ConflictKind::Deadlock => "deadlock",
                };
                write!(f, "transaction conflict ({what}): {detail}")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

impl Clone for Error {
    fn clone(&self) -> Self {
        match self {
            Error::Io(e) => Error::Io(std::io::Error::new(e.kind(), e.to_string())),
            Error::Corruption { file, detail } => Error::Corruption {
                file: file.clone(),
                detail: detail.clone(),
            },
            Error::InvalidArgument(m) => Error::InvalidArgument(m.clone()),
            Error::Locked(p) => Error::Locked(p.clone()),
            Error::Busy(m) => Error::Busy(m.clone()),
            Error::Poisoned(m) => Error::Poisoned(m.clone()),
            Error::Unsupported(m) => Error::Unsupported(m.clone()),
            Error::ReadOnly(m) => Error::ReadOnly(m.clone()),
            Error::Closed => Error::Closed,
            Error::MergeFailed { key, reason } => Error::MergeFailed {
                key: key.clone(),
                reason: reason.clone(),
            },
            Error::Conflict { kind, detail } => Error::Conflict {
                kind: *kind,
                detail: detail.clone(),
            },
        }
    }
}
