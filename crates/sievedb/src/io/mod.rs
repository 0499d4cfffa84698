//! The I/O layer: every file operation of the engine goes through [`FileSystem`],
//! so tests can substitute an implementation that injects faults (LevelDB's Env idea).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::prefetch::prefetch_read;

mod log_file;

/// A file being written sequentially (WAL, MANIFEST, SST under construction).
pub trait WritableFile: Send {
    /// Appends bytes (may stay in a user-space buffer until [`flush`](Self::flush)).
    fn append(&mut self, data: &[u8]) -> io::Result<()>;
    /// Hands buffered bytes to the operating system (survives a process crash).
    fn flush(&mut self) -> io::Result<()>;
    /// Flushes and fsyncs (survives power loss).
    fn sync(&mut self) -> io::Result<()>;
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

/// A read-only memory map of a whole file that is never modified while
/// mapped (an SST). Readers borrow block bytes straight from it; whoever
/// borrows holds an `Arc` of it, so the map outlives every borrow.
pub struct FileMap {
    map: memmap2::Mmap,
}

impl FileMap {
    /// Maps all of `file` (which must not be empty) read-only.
    ///
    /// The caller promises that nobody modifies or truncates the file while
    /// it is mapped (see the safety note in the body).
    fn new(file: &File) -> io::Result<FileMap> {
        // SAFETY: a map aliases the file's pages, so it is sound only while
        // no one writes to or truncates the file. This is only called (by
        // `StdFs::open_mapped`) on SSTs, which the engine writes once, syncs
        // and never opens for writing again; they are never truncated in
        // place, only unlinked once obsolete, and an unlinked file keeps its
        // pages until the last map of it is dropped. The map owns no borrow
        // of `file` (mmap keeps its own reference to the inode), and every
        // slice handed out borrows `self`, which is kept alive by the `Arc`s
        // of the readers and blocks using it. Changing an SST behind the
        // engine's back (another process ignoring the LOCK) is outside the
        // engine's contract, as with LevelDB's and RocksDB's mapped reads.
        let map = unsafe { memmap2::Mmap::map(file)? };
        Ok(FileMap { map })
    }

    /// The mapped bytes.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Asks the CPU to start loading the first and last cache lines of
    /// `bytes()[start..end]` (and their page-table entries), so that the
    /// memory latency overlaps whatever the caller does before reading them.
    /// Out-of-range requests are ignored; this never changes what is read.
    #[inline]
    pub fn prefetch(&self, start: usize, end: usize) {
        let bytes = self.bytes();
        if start < end && end <= bytes.len() {
            prefetch_read(&bytes[start]);
            prefetch_read(&bytes[end - 1]);
        }
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

/// Wraps any [`FileSystem`] so that every error it returns, including those of
/// the files it opens, names the path involved. [`crate::Db`] reads and writes
/// through one of these whatever file system it is given.
pub(crate) struct NamedFs(pub(crate) Arc<dyn FileSystem>);

struct NamedWritable {
    file: Box<dyn WritableFile>,
    path: PathBuf,
}

impl NamedWritable {
    /// `created` (a file just created at `path`), naming `path` in its errors.
    fn wrap(
        created: io::Result<Box<dyn WritableFile>>,
        path: &Path,
    ) -> io::Result<Box<dyn WritableFile>> {
        let file = created.map_err(|e| with_path(e, path))?;
        Ok(Box::new(NamedWritable {
            file,
            path: path.to_path_buf(),
        }))
    }
}

impl WritableFile for NamedWritable {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        self.file.append(data).map_err(|e| with_path(e, &self.path))
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush().map_err(|e| with_path(e, &self.path))
    }
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync().map_err(|e| with_path(e, &self.path))
    }
}

struct NamedRandom {
    file: Arc<dyn RandomAccessFile>,
    path: PathBuf,
}

impl RandomAccessFile for NamedRandom {
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.file
            .read_at(offset, len)
            .map_err(|e| with_path(e, &self.path))
    }
    fn size(&self) -> u64 {
        self.file.size()
    }
    fn map(&self) -> Option<&Arc<FileMap>> {
        self.file.map()
    }
}

impl FileSystem for NamedFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.0.create_dir_all(path).map_err(|e| with_path(e, path))
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        NamedWritable::wrap(self.0.create(path), path)
    }
    fn create_log(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        NamedWritable::wrap(self.0.create_log(path), path)
    }
    fn open_random(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn RandomAccessFile>> {
        let file = self
            .0
            .open_random(path, direct)
            .map_err(|e| with_path(e, path))?;
        Ok(Arc::new(NamedRandom {
            file,
            path: path.to_path_buf(),
        }))
    }
    fn open_mapped(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        let file = self.0.open_mapped(path).map_err(|e| with_path(e, path))?;
        Ok(Arc::new(NamedRandom {
            file,
            path: path.to_path_buf(),
        }))
    }
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.0.read_all(path).map_err(|e| with_path(e, path))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.0.rename(from, to).map_err(|e| {
            let both = format!("{} -> {}", from.display(), to.display());
            with_path(e, Path::new(&both))
        })
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.0.remove_file(path).map_err(|e| with_path(e, path))
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        self.0.list_dir(path).map_err(|e| with_path(e, path))
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.0.sync_dir(path).map_err(|e| with_path(e, path))
    }
    fn exists(&self, path: &Path) -> bool {
        self.0.exists(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.0.is_dir(path)
    }
    fn file_size(&self, path: &Path) -> io::Result<u64> {
        self.0.file_size(path).map_err(|e| with_path(e, path))
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        self.0.lock(path).map_err(|e| with_path(e, path))
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.0.hard_link(from, to).map_err(|e| {
            let both = format!("{} -> {}", from.display(), to.display());
            with_path(e, Path::new(&both))
        })
    }
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        self.0.remove_dir(path).map_err(|e| with_path(e, path))
    }
}

/// The real file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct StdFs;

struct StdWritable {
    file: File,
    buf: Vec<u8>,
}

const WRITE_BUFFER: usize = 64 * 1024;

impl WritableFile for StdWritable {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        if self.buf.len() + data.len() > WRITE_BUFFER {
            self.flush()?;
        }
        if data.len() >= WRITE_BUFFER {
            return self.file.write_all(data);
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.file.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        self.flush()?;
        self.file.sync_data()
    }
}

struct StdRandom {
    file: File,
    size: u64,
}

impl RandomAccessFile for StdRandom {
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        self.file.read_exact_at(&mut buf, offset)?;
        Ok(buf)
    }
    fn size(&self) -> u64 {
        self.size
    }
}

/// A file read through a [`FileMap`]; `read_at` copies out of the map.
struct MappedRandom {
    map: Arc<FileMap>,
}

impl RandomAccessFile for MappedRandom {
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let bytes = self.map.bytes();
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        match start.checked_add(len) {
            Some(end) if end <= bytes.len() => Ok(bytes[start..end].to_vec()),
            _ => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "read past the end of the file",
            )),
        }
    }
    fn size(&self) -> u64 {
        self.map.bytes().len() as u64
    }
    fn map(&self) -> Option<&Arc<FileMap>> {
        Some(&self.map)
    }
}

/// Alignment O_DIRECT needs for offsets, lengths and buffers.
const DIRECT_ALIGN: usize = 4096;

struct DirectRandom {
    file: File,
    size: u64,
}

/// A heap buffer aligned for O_DIRECT.
struct AlignedBuf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl AlignedBuf {
    fn new(len: usize) -> io::Result<Self> {
        let layout = std::alloc::Layout::from_size_align(len.max(DIRECT_ALIGN), DIRECT_ALIGN)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: the layout has a non-zero size (at least DIRECT_ALIGN).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Ok(AlignedBuf { ptr, layout })
    }
    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr was allocated (zeroed, so initialised) with layout.size() bytes
        // and is uniquely owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr came from alloc_zeroed with this same layout and is freed once.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

impl RandomAccessFile for DirectRandom {
    /// Reads the aligned span `[offset rounded down, offset + len rounded up)`
    /// into an aligned buffer and copies the requested bytes out: O_DIRECT needs
    /// the file offset, the length and the buffer address all aligned.
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let align = DIRECT_ALIGN as u64;
        let start = offset & !(align - 1);
        let end = (offset + len as u64).div_ceil(align) * align;
        let mut buf = AlignedBuf::new((end - start) as usize)?;
        let slice = buf.as_mut_slice();
        let mut done = 0usize;
        let want = (offset - start) as usize + len;
        while done < want {
            let n = match self.file.read_at(&mut slice[done..], start + done as u64) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    return Err(io::Error::new(
                        io::ErrorKind::Unsupported,
                        format!(
                            "O_DIRECT read of {} bytes at offset {} refused (EINVAL): the file \
                             system does not support direct reads aligned to {DIRECT_ALIGN} bytes",
                            slice.len() - done,
                            start + done as u64
                        ),
                    ))
                }
                Err(e) => return Err(e),
            };
            done += n;
            // A read that stops short of an aligned boundary has hit the end of
            // the file (another read from there would be unaligned).
            if n == 0 || (done < want && !done.is_multiple_of(DIRECT_ALIGN)) {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "read past the end of the file",
                ));
            }
        }
        let s = (offset - start) as usize;
        Ok(slice[s..s + len].to_vec())
    }
    fn size(&self) -> u64 {
        self.size
    }
}

struct StdLock {
    _file: File,
}

impl FileLock for StdLock {}

impl FileSystem for StdFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(Box::new(StdWritable {
            file,
            buf: Vec::with_capacity(WRITE_BUFFER),
        }))
    }
    /// Preallocates and maps the log ([`log_file`]); where the file system
    /// cannot preallocate, writes it as [`create`](FileSystem::create) does.
    fn create_log(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        match log_file::MappedLog::new(file.try_clone()?)? {
            Some(log) => Ok(Box::new(log)),
            None => Ok(Box::new(StdWritable {
                file,
                buf: Vec::with_capacity(WRITE_BUFFER),
            })),
        }
    }
    fn open_random(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn RandomAccessFile>> {
        if direct {
            let file = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECT)
                .open(path)?;
            let size = file.metadata()?.len();
            return Ok(Arc::new(DirectRandom { file, size }));
        }
        let file = File::open(path)?;
        let size = file.metadata()?.len();
        Ok(Arc::new(StdRandom { file, size }))
    }
    /// Maps the file. A file that cannot be mapped (empty, or the process is
    /// out of address space or map slots, `vm.max_map_count`) is opened
    /// unmapped instead: mapping is an optimisation, never a reason to fail
    /// a read. The descriptor is closed once mapped: a map holds none.
    fn open_mapped(&self, path: &Path) -> io::Result<Arc<dyn RandomAccessFile>> {
        let file = File::open(path)?;
        let size = file.metadata()?.len();
        if size == 0 {
            return Ok(Arc::new(StdRandom { file, size }));
        }
        match FileMap::new(&file) {
            Ok(map) => Ok(Arc::new(MappedRandom { map: Arc::new(map) })),
            Err(_) => Ok(Arc::new(StdRandom { file, size })),
        }
    }
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for e in fs::read_dir(path)? {
            out.push(e?.file_name().to_string_lossy().into_owned());
        }
        Ok(out)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_all()
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }
    fn file_size(&self, path: &Path) -> io::Result<u64> {
        Ok(fs::metadata(path)?.len())
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::hard_link(from, to)
    }
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        fs::remove_dir(path)
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        match file.try_lock() {
            Ok(()) => Ok(Box::new(StdLock { _file: file })),
            Err(fs::TryLockError::WouldBlock) => Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "lock held by another process",
            )),
            Err(fs::TryLockError::Error(e)) => Err(e),
        }
    }
}

/// Copies file `from` to a new file `to` and syncs the copy.
pub fn copy_file(fs: &dyn FileSystem, from: &Path, to: &Path) -> io::Result<()> {
    let data = fs.read_all(from)?;
    let mut f = fs.create(to)?;
    f.append(&data)?;
    f.sync()
}

/// File names inside a database directory.
pub mod filename {
    use super::*;

    /// `NNNNNN.log`: a write-ahead log.
    pub fn wal(dir: &Path, number: u64) -> PathBuf {
        dir.join(format!("{number:06}.log"))
    }
    /// `NNNNNN.sst`: a sorted table.
    pub fn sst(dir: &Path, number: u64) -> PathBuf {
        dir.join(format!("{number:06}.sst"))
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Opens `path` with O_DIRECT, or `None` (with a note) where the file
    /// system of the temporary directory refuses it.
    fn open_direct(path: &Path) -> Option<Arc<dyn RandomAccessFile>> {
        match StdFs.open_random(path, true) {
            Ok(f) => Some(f),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                eprintln!("skipped: {} refuses O_DIRECT", path.display());
                None
            }
            Err(e) => panic!("opening with O_DIRECT: {e}"),
        }
    }

    /// The buffer's unsafe allocation, slice and free (checked under Miri).
    #[test]
    fn aligned_buffer_is_aligned_zeroed_and_writable() {
        for len in [0, 1, DIRECT_ALIGN, DIRECT_ALIGN + 1, 3 * DIRECT_ALIGN] {
            let mut b = AlignedBuf::new(len).unwrap();
            let s = b.as_mut_slice();
            assert_eq!(s.as_ptr() as usize % DIRECT_ALIGN, 0);
            assert_eq!(s.len(), len.max(DIRECT_ALIGN));
            assert!(s.iter().all(|&x| x == 0));
            s.fill(0xab);
            assert!(b.as_mut_slice().iter().all(|&x| x == 0xab));
        }
    }

    #[test]
    fn direct_reads_at_unaligned_offsets_and_lengths_match_buffered_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        // Not a multiple of the alignment, so the last block is partial.
        let size = 3 * DIRECT_ALIGN + 1234;
        let data: Vec<u8> = (0..size).map(|i| (i * 31 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let Some(direct) = open_direct(&path) else {
            return;
        };
        let buffered = StdFs.open_random(&path, false).unwrap();
        assert_eq!(direct.size(), size as u64);
        let a = DIRECT_ALIGN;
        let cases = [
            (0, 0),
            (0, 1),
            (0, a),
            (1, a),
            (a - 1, 2),
            (a, a),
            (a + 7, 2 * a + 5),
            (100, 3000),
            (size - 10, 10),
            (size - 1234, 1234),
            (3 * a, 1234),
            (0, size),
            (5, size - 5),
        ];
        for (off, len) in cases {
            let d = direct.read_at(off as u64, len).unwrap();
            assert_eq!(d.len(), len, "{off}+{len}");
            assert_eq!(d, &data[off..off + len], "{off}+{len}");
            assert_eq!(d, buffered.read_at(off as u64, len).unwrap());
        }
        for (off, len) in [(size - 10, 11), (size, 1), (size + a, 5), (0, size + 1)] {
            let e = direct.read_at(off as u64, len).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{off}+{len}: {e}");
            let e = buffered.read_at(off as u64, len).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{off}+{len}: {e}");
        }
    }

    /// A mapped file reads what a buffered one reads, refuses reads past
    /// its end, and an empty file opens unmapped.
    #[test]
    fn mapped_reads_match_buffered_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 253) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let mapped = StdFs.open_mapped(&path).unwrap();
        let named = NamedFs(Arc::new(StdFs)).open_mapped(&path).unwrap();
        let buffered = StdFs.open_random(&path, false).unwrap();
        assert!(buffered.map().is_none());
        assert_eq!(mapped.map().unwrap().bytes(), &data[..]);
        assert_eq!(named.map().unwrap().bytes(), &data[..]);
        assert_eq!(mapped.size(), data.len() as u64);
        let map = mapped.map().unwrap();
        for (start, end) in [
            (0, 1),
            (0, 10_000),
            (9_999, 10_000),
            (5, 5),
            (0, 10_001),
            (usize::MAX, 0),
        ] {
            map.prefetch(start, end); // A hint: in range or not, no effect.
        }
        for (off, len) in [(0, 0), (0, 10_000), (4095, 2), (9_999, 1), (10_000, 0)] {
            assert_eq!(
                mapped.read_at(off, len).unwrap(),
                buffered.read_at(off, len).unwrap()
            );
        }
        for (off, len) in [(9_999, 2), (10_001, 0), (u64::MAX, 1)] {
            let e = mapped.read_at(off, len).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{off}+{len}");
        }
        std::fs::write(&path, b"").unwrap();
        let empty = StdFs.open_mapped(&path).unwrap();
        assert!(empty.map().is_none());
        assert_eq!(empty.size(), 0);
    }
}
