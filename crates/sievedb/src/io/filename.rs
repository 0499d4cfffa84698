//! File names inside a database directory.

use std::path::{Path, PathBuf};

/// `NNNNNN.log`: a write-ahead log.
pub fn wal(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.log"))
}
/// `NNNNNN.sst`: a sorted table.
pub fn sst(dir: &Path, number: u64) -> PathBuf {
    dir.join(sst_name(number))
}
/// The file name of SST `number` (`NNNNNN.sst`).
pub fn sst_name(number: u64) -> String {
    format!("{number:06}.sst")
}
/// `MANIFEST-NNNNNN`: a log of version edits.
pub fn manifest(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("MANIFEST-{number:06}"))
}
/// `CURRENT`: names the live MANIFEST.
pub fn current(dir: &Path) -> PathBuf {
    dir.join("CURRENT")
}
/// `lost/`: files recovery or repair could not use, kept for inspection
/// (sievedb never reads or deletes them).
pub fn lost(dir: &Path) -> PathBuf {
    dir.join("lost")
}
/// `LOCK`: held while the database is open.
pub fn lock(dir: &Path) -> PathBuf {
    dir.join("LOCK")
}

/// What a directory entry is.
#[derive(Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A WAL with its number.
    Wal(u64),
    /// An SST with its number.
    Sst(u64),
    /// A MANIFEST with its number.
    Manifest(u64),
    /// A temporary file (left by an interrupted CURRENT switch).
    Temp,
}

/// Classifies a directory entry; `None` for names sievedb does not own.
pub fn parse(name: &str) -> Option<FileKind> {
    if name == "HOTNESS.tmp" {
        // An interrupted save of the filter hotness file.
        return Some(FileKind::Temp);
    }
    if let Some(n) = name.strip_suffix(".log") {
        return n.parse().ok().map(FileKind::Wal);
    }
    if let Some(n) = name.strip_suffix(".sst") {
        return n.parse().ok().map(FileKind::Sst);
    }
    if let Some(n) = name.strip_prefix("MANIFEST-") {
        return n.parse().ok().map(FileKind::Manifest);
    }
    if name.ends_with(".tmp") {
        return Some(FileKind::Temp);
    }
    None
}

/// Refuses an empty `path` for `what` (a directory argument) with
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument), before anything
/// touches the disk: the file names joined to it (`LOCK`, `CURRENT`, ...)
/// would be relative names, resolved in the process's current directory.
pub fn check_dir_arg(path: &Path, what: &str) -> crate::Result<()> {
    if path.as_os_str().is_empty() {
        return Err(crate::Error::InvalidArgument(format!(
            "{what}: the path is empty (use \".\" for the current directory)"
        )));
    }
    Ok(())
}
