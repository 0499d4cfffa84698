//! I/O errors that name their path: [`with_path`] wraps an error with the
//! path it happened on, and [`os_error`] finds the errno through the wrapper.

use std::io;
use std::path::{Path, PathBuf};

/// An I/O error with the path it happened on, so that every [`crate::Error::Io`]
/// the engine returns names its file. The kind of the original error is kept
/// (so ENOSPC stays `StorageFull`); [`os_error`] finds its errno.
#[derive(Debug)]
struct PathError {
    path: PathBuf,
    source: io::Error,
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for PathError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// `e` with `path` in its message (unchanged if it already names a path).
pub fn with_path(e: io::Error, path: &Path) -> io::Error {
    if e.get_ref().is_some_and(|i| i.is::<PathError>()) {
        return e;
    }
    io::Error::new(
        e.kind(),
        PathError {
            path: path.to_path_buf(),
            source: e,
        },
    )
}

/// The operating-system error number of `e`, looking through [`with_path`].
pub fn os_error(e: &io::Error) -> Option<i32> {
    e.raw_os_error().or_else(|| {
        e.get_ref()
            .and_then(|i| i.downcast_ref::<PathError>())
            .and_then(|p| p.source.raw_os_error())
    })
}
