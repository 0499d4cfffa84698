//! The I/O layer: every file operation of the engine goes through [`FileSystem`],
//! so tests can substitute an implementation that injects faults (LevelDB's Env idea).
//!
//! This module holds the traits ([`FileSystem`], [`WritableFile`],
//! [`RandomAccessFile`], [`FileLock`]) and small helpers on them
//! ([`Access`], [`lock_dir`], [`copy_file`]). The rest lives beside it:
//! `std_fs` ([`StdFs`], the real file system), `direct` (O_DIRECT reads),
//! `file_map` ([`FileMap`]), `log_file` ([`PreallocatedLog`], the WAL
//! written ahead into reserved space, and its memory-mapped [`LogSpace`]),
//! `named_fs` (`NamedFs`, errors naming their path), `path_error`
//! ([`with_path`], [`os_error`]), `sync_batch` (`SyncBatch`, fsyncs
//! deferred and grouped) and [`filename`] (the directory's names).

use std::io;
use std::path::Path;
use std::sync::Arc;

mod direct;
mod file_map;
pub mod filename;
mod log_file;
mod named_fs;
mod path_error;
mod std_fs;
mod sync_batch;

pub use file_map::FileMap;
pub use log_file::{reserve_unsupported, LogSpace, PreallocatedLog, FIRST_WINDOW, MAX_WINDOW};
pub(crate) use named_fs::NamedFs;
pub use path_error::{os_error, with_path};
pub use std_fs::StdFs;
pub(crate) use sync_batch::SyncBatch;

/// A file being written sequentially (WAL, MANIFEST, SST under construction).
pub trait WritableFile: Send {
    /// Appends bytes (may stay in a user-space buffer until [`flush`](Self::flush)).
    fn append(&mut self, data: &[u8]) -> io::Result<()>;
    /// Hands buffered bytes to the operating system (survives a process crash).
    fn flush(&mut self) -> io::Result<()>;
    /// Flushes and fsyncs (survives power loss).
    fn sync(&mut self) -> io::Result<()>;
    /// Flushes, and asks the operating system to start writing the file's
    /// bytes to the device without waiting for them, so that a later
    /// [`sync`](Self::sync) has less to wait for. Only a hint: it makes
    /// nothing durable. The default only flushes.
    fn start_writeback(&mut self) -> io::Result<()> {
        self.flush()
    }
}

/// A file read at arbitrary offsets (SSTs).
pub trait RandomAccessFile: Send + Sync {
    /// Reads exactly `len` bytes at `offset`; a short file is an `UnexpectedEof` error.
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>>;
    /// The file's size in bytes.
    fn size(&self) -> u64;
    /// The whole file as a read-only memory map, when it was opened with
    /// [`FileSystem::open_mapped`] and the file system maps files; `None`
    /// (the default) means every read goes through [`read_at`](Self::read_at).
    fn map(&self) -> Option<&Arc<FileMap>> {
        None
    }
}

/// How an SST is opened for reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// `pread` through the page cache.
    Buffered,
    /// `pread` with O_DIRECT (no page cache).
    Direct,
    /// A read-only memory map where the file system maps files
    /// ([`FileSystem::open_mapped`]), else as `Buffered`.
    Mapped,
}

impl Access {
    /// Opens `path` this way on `fs`.
    pub fn open(self, fs: &dyn FileSystem, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        match self {
            Access::Buffered => fs.open_random(path, false),
            Access::Direct => fs.open_random(path, true),
            Access::Mapped => fs.open_mapped(path),
        }
    }
}

/// An exclusive lock on a database directory, released on drop.
pub trait FileLock: Send + Sync {}

/// The operations the engine performs on its directory.
pub trait FileSystem: Send + Sync + 'static {
    /// Creates a directory and its parents.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Creates (truncating) a file for sequential writing.
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;
    /// Creates (truncating) a write-ahead log. Unlike [`create`](Self::create)
    /// the file may run ahead of what was appended, the rest zeros, until the
    /// writer is dropped: the log format reads an all-zero rest of file as
    /// its end. [`StdFs`] preallocates and maps it, so an unsynced commit
    /// makes no system call. The default is [`create`](Self::create).
    fn create_log(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.create(path)
    }
    /// Opens a file for random reads, with O_DIRECT when `direct`.
    fn open_random(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn RandomAccessFile>>;
    /// Opens an immutable file (an SST) for random reads through a read-only
    /// memory map, so readers can use its bytes in place
    /// ([`RandomAccessFile::map`]). The default opens it unmapped
    /// (`open_random(path, false)`), so a file system that does not map files
    /// (a test double injecting faults) keeps serving every read through
    /// [`RandomAccessFile::read_at`].
    fn open_mapped(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        self.open_random(path, false)
    }
    /// Reads a whole file.
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// Renames atomically.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Names of the entries of a directory.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>>;
    /// fsyncs a directory so that creations, renames and removals in it are durable.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
    /// Whether a path exists.
    fn exists(&self, path: &Path) -> bool;
    /// Whether `path` exists and is a directory (following symbolic links).
    /// The default asks [`list_dir`](Self::list_dir), so an implementation
    /// gets it for free.
    fn is_dir(&self, path: &Path) -> bool {
        self.list_dir(path).is_ok()
    }
    /// The size of a file in bytes. The default opens the file for random
    /// reads and asks it, so an implementation gets it for free.
    fn file_size(&self, path: &Path) -> io::Result<u64> {
        Ok(self.open_random(path, false)?.size())
    }
    /// The sizes of the files `names` of directory `dir`, in order: what
    /// [`file_size`](Self::file_size) says of each (`NotFound` for one that
    /// is gone). The default asks `file_size` of each path; [`StdFs`] stats
    /// them relative to one open descriptor of `dir`, without walking the
    /// directory's path for every file.
    fn file_sizes(&self, dir: &Path, names: &[&str]) -> Vec<io::Result<u64>> {
        names.iter().map(|n| self.file_size(&dir.join(n))).collect()
    }
    /// Takes an exclusive lock on `path` (created if missing); `WouldBlock` if held.
    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>>;

    /// Makes `to` a new name of the file `from` (a hard link: both share the
    /// data, so it must be immutable, as SSTs are). The default copies it
    /// (as [`copy_file`] does), for file systems without links.
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        let data = self.read_all(from)?;
        let mut f = self.create(to)?;
        f.append(&data)?;
        f.sync()
    }

    /// Removes the empty directory `path`. The default refuses
    /// ([`io::ErrorKind::Unsupported`]).
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("cannot remove directory {}", path.display()),
        ))
    }
}

/// Takes the `LOCK` file of database directory `dir`: [`crate::Error::Locked`]
/// when another handle or process holds it.
pub fn lock_dir(fs: &dyn FileSystem, dir: &Path) -> crate::Result<Box<dyn FileLock>> {
    fs.lock(&filename::lock(dir)).map_err(|e| {
        if e.kind() == io::ErrorKind::WouldBlock {
            crate::Error::Locked(dir.to_path_buf())
        } else {
            crate::Error::Io(e)
        }
    })
}

/// Creates directory `path` and its missing parents durably: every
/// directory that gained an entry is fsynced, so that a power loss after
/// this returns cannot take the new directories away (a created directory
/// is an entry of its parent, durable only once the parent is synced).
/// Does nothing to a directory that exists.
pub fn create_dir_all_durable(fs: &dyn FileSystem, path: &Path) -> io::Result<()> {
    let missing: Vec<&Path> = path
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !fs.exists(a))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    fs.create_dir_all(path)?;
    // Top-down: each new directory's parent, the existing ancestor first.
    for d in missing.iter().rev() {
        match d.parent() {
            Some(p) if !p.as_os_str().is_empty() => fs.sync_dir(p)?,
            _ => fs.sync_dir(Path::new("."))?,
        }
    }
    Ok(())
}

/// Copies file `from` to a new file `to` and syncs the copy.
pub fn copy_file(fs: &dyn FileSystem, from: &Path, to: &Path) -> io::Result<()> {
    let data = fs.read_all(from)?;
    let mut f = fs.create(to)?;
    f.append(&data)?;
    f.sync()
}
