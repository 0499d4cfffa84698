//! [`StdFs`]: the real file system, and the files it opens (buffered,
//! mapped and direct reads, buffered and mapped-log writes, the directory lock).

#![allow(
    clippy::disallowed_methods,
    reason = "the real file system: the one place the engine calls std::fs"
)]

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;

use super::direct::DirectRandom;
use super::log_file;
use super::{FileLock, FileMap, FileSystem, RandomAccessFile, WritableFile};

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
    fn start_writeback(&mut self) -> io::Result<()> {
        self.flush()?;
        start_writeback(&self.file);
        Ok(())
    }
}

/// Asks Linux to start writing `file`'s dirty pages to the device
/// (`sync_file_range` with `SYNC_FILE_RANGE_WRITE`: it neither waits for them
/// nor writes metadata). Its failure is ignored: it is a hint, and the fsync
/// that makes the file durable reports any write error.
#[cfg(target_os = "linux")]
fn start_writeback(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor stays open while `file` is borrowed, and the
    // call takes only integers (no memory of ours).
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
    }
}

/// The size of file `name` of the directory open as `dir` (`fstatat`,
/// following symbolic links as `metadata` does).
#[cfg(unix)]
fn size_at(dir: &File, name: &str) -> io::Result<u64> {
    use std::os::fd::AsRawFd;
    let c = std::ffi::CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a file name"))?;
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `c` is a NUL-terminated string and `st` a buffer of the size
    // fstatat writes, both alive for the call; the descriptor is open while
    // `dir` is borrowed.
    let r = unsafe { libc::fstatat(dir.as_raw_fd(), c.as_ptr(), st.as_mut_ptr(), 0) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstatat returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    u64::try_from(st.st_size).map_err(|_| io::Error::other("a negative file size"))
}

/// Elsewhere there is no such hint; the fsync does all the work.
#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File) {}

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
    /// Preallocates and maps the log (`io::log_file`); where the file system
    /// cannot preallocate, writes it as [`create`](FileSystem::create) does.
    fn create_log(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        match log_file::PreallocatedLog::new(log_file::MappedFile::new(file.try_clone()?)) {
            Ok(log) => Ok(Box::new(log)),
            Err(e) if log_file::reserve_unsupported(&e) => Ok(Box::new(StdWritable {
                file,
                buf: Vec::with_capacity(WRITE_BUFFER),
            })),
            Err(e) => Err(e),
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
    fn file_sizes(&self, dir: &Path, names: &[&str]) -> Vec<io::Result<u64>> {
        match File::open(dir) {
            Ok(d) => names.iter().map(|n| size_at(&d, n)).collect(),
            Err(_) => names.iter().map(|n| self.file_size(&dir.join(n))).collect(),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::NamedFs;

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
