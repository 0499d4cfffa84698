//! A write-ahead log that runs ahead of its data: [`PreallocatedLog`], and
//! the memory-mapped file the real file system writes it to.
//!
//! An unsynced write must survive the crash of the process that made it, so
//! a log written with `write(2)` pays one system call per commit: on a
//! one-put loop from Python that call is a third of the time. Copying the
//! record into a shared map of the file puts it in the same page cache
//! `write(2)` would, with no system call: the bytes survive the process as
//! they would have, and `fdatasync` makes them durable as it would have.
//!
//! The file runs ahead of its data: it grows one window at a time with
//! `fallocate` (blocks reserved, so a full disk is an error from
//! [`append`](WritableFile::append), never a `SIGBUS` on a store into the
//! map) and one window is mapped at a time. Windows start at
//! [`FIRST_WINDOW`] and double up to [`MAX_WINDOW`]: a log is created at
//! every memtable switch, and reserving (then syncing) a large first window
//! would make small memtables switch slowly. Until the log is dropped, which
//! truncates it to its data, the file ends in zeros; the log format reads an
//! all-zero rest of file as its end ([`crate::wal`]), so a crash leaves a log
//! that replays like one written with `write(2)` whose tail was torn off.
//!
//! **Durability of the size.** Neither the reservations nor the truncation
//! at drop are synced on their own: a power loss may leave a closed log at
//! any size it had, its data followed by reserved zeros. Recovery never
//! relies on a WAL's size: it reads a WAL to the end of its records, and an
//! older WAL's zero tail is its end when the next WAL continues its sequence
//! numbers (`docs/format.md`, "Preallocated WALs").
//!
//! The window logic is [`PreallocatedLog`]; what it does to the file is a
//! [`LogSpace`] (`MappedFile` here), so a test file system can record every
//! write and size change of the real logic and replay a power loss.

use std::fs::File;
use std::io;

use memmap2::{MmapMut, MmapOptions};

use super::WritableFile;

/// Bytes of the first window (a multiple of every page size, so every
/// window starts on a page).
pub const FIRST_WINDOW: usize = 64 << 10;
/// Bytes of the largest window.
pub const MAX_WINDOW: usize = 1 << 20;

/// What a [`PreallocatedLog`] does to its file. Implemented by the real
/// file system's memory-mapped file, and by test file systems that record
/// the operations.
pub trait LogSpace: Send {
    /// Extends the file to `base + len` bytes with allocated zeros (blocks
    /// reserved, so a full disk fails here and not on a later write) and
    /// makes bytes `base..base + len` the window that
    /// [`write`](Self::write) writes to; bytes before `base` are not written
    /// again.
    fn reserve(&mut self, base: u64, len: usize) -> io::Result<()>;
    /// Writes `data` at file offset `offset`, inside the window.
    fn write(&mut self, offset: u64, data: &[u8]) -> io::Result<()>;
    /// Makes every byte written durable (`fdatasync`).
    fn sync(&mut self) -> io::Result<()>;
    /// Cuts the file to `len` bytes: the log is closed, nothing is written
    /// after this.
    fn truncate(&mut self, len: u64) -> io::Result<()>;
}

/// A log file written into space reserved ahead of it, one window at a
/// time (see the module docs), and cut to its data when dropped.
pub struct PreallocatedLog<S: LogSpace> {
    space: S,
    /// File bytes reserved: the current window ends here.
    reserved: u64,
    /// Bytes of the current window.
    window: usize,
    /// Bytes of log written.
    len: u64,
}

impl<S: LogSpace> PreallocatedLog<S> {
    /// A log over `space` (an empty file), reserving its first window. The
    /// error of that first reservation is returned as is, so the caller can
    /// tell a file system that cannot reserve space
    /// ([`reserve_unsupported`]) and write the log another way.
    pub fn new(mut space: S) -> io::Result<Self> {
        space.reserve(0, FIRST_WINDOW)?;
        Ok(PreallocatedLog {
            space,
            reserved: FIRST_WINDOW as u64,
            window: FIRST_WINDOW,
            len: 0,
        })
    }

    /// Reserves the next window, twice the last one up to [`MAX_WINDOW`].
    fn advance(&mut self) -> io::Result<()> {
        let len = (self.window * 2).min(MAX_WINDOW);
        self.space.reserve(self.reserved, len)?;
        self.reserved += len as u64;
        self.window = len;
        Ok(())
    }
}

impl<S: LogSpace> WritableFile for PreallocatedLog<S> {
    fn append(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            if self.len == self.reserved {
                self.advance()?;
            }
            // The window is at most MAX_WINDOW: its room fits a usize.
            let n = data.len().min((self.reserved - self.len) as usize);
            self.space.write(self.len, &data[..n])?;
            self.len += n as u64;
            data = &data[n..];
        }
        Ok(())
    }

    /// Nothing to do: the space holds what was appended (for a map, the
    /// page cache already does).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        self.space.sync()
    }
}

impl<S: LogSpace> Drop for PreallocatedLog<S> {
    /// Cuts the reserved zeros off, so a log that was closed ends at its last
    /// record. Best effort, and not synced: a log left longer reads the same.
    fn drop(&mut self) {
        let _ = self.space.truncate(self.len);
    }
}

/// The real file system's [`LogSpace`]: a file with its current window
/// mapped shared, so a write is a copy into the page cache.
pub(crate) struct MappedFile {
    file: File,
    /// The window: file bytes `base..base + map.len()`.
    map: Option<MmapMut>,
    base: u64,
}

impl MappedFile {
    /// Wraps `file` (empty, opened for reading and writing).
    pub(crate) fn new(file: File) -> Self {
        MappedFile {
            file,
            map: None,
            base: 0,
        }
    }
}

impl LogSpace for MappedFile {
    fn reserve(&mut self, base: u64, len: usize) -> io::Result<()> {
        reserve(&self.file, base, len)?;
        self.map = Some(map_window(&self.file, base, len)?);
        self.base = base;
        Ok(())
    }

    fn write(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        // An offset before the window wraps to a huge start, which `get_mut`
        // refuses as it refuses one past the window.
        let start = usize::try_from(offset.wrapping_sub(self.base)).unwrap_or(usize::MAX);
        let window = self
            .map
            .as_mut()
            .and_then(|map| map.get_mut(start..)?.get_mut(..data.len()));
        match window {
            Some(dst) => {
                dst.copy_from_slice(data);
                Ok(())
            }
            None => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "log write outside its mapped window",
            )),
        }
    }

    /// `fdatasync` writes back every dirty page of the file, those dirtied
    /// through a shared map included (Linux tracks them as it tracks pages
    /// dirtied by `write(2)`), with the file's size.
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// Unmaps the window first, so no access through it can meet the cut.
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.map = None;
        self.file.set_len(len)
    }
}

/// Maps file bytes `base..base + len`, which must exist.
fn map_window(file: &File, base: u64, len: usize) -> io::Result<MmapMut> {
    // SAFETY: the map is of a file this process created and writes only
    // through this map; the engine never rewrites a live log and truncates
    // it only after unmapping (`MappedFile::truncate`), and
    // `base..base + len` lies inside the file (reserved by `reserve`), so
    // no access through the map can fault. Another process changing the file
    // under a database that holds its directory's lock is outside what any
    // file-backed engine can defend against.
    unsafe { MmapOptions::new().offset(base).len(len).map_mut(file) }
}

/// Extends `file` to `base + len` bytes with blocks allocated (zeros).
#[cfg(target_os = "linux")]
fn reserve(file: &File, base: u64, len: usize) -> io::Result<()> {
    use std::os::unix::io::AsRawFd;
    let off = libc::off_t::try_from(base).map_err(|_| io::Error::other("log too large"))?;
    let len = libc::off_t::try_from(len).map_err(|_| io::Error::other("log too large"))?;
    loop {
        // SAFETY: fallocate reads only its integer arguments; the descriptor
        // is open for the duration of the call (borrowed from `file`).
        let r = unsafe { libc::fallocate(file.as_raw_fd(), 0, off, len) };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Other systems write the log with `write(2)`.
#[cfg(not(target_os = "linux"))]
fn reserve(_file: &File, _base: u64, _len: usize) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Whether `e`, from a [`LogSpace::reserve`], says the file system cannot
/// reserve blocks (no `fallocate`): the log is then written with
/// `write(2)`, since a map over unreserved blocks could fault on a full disk.
pub fn reserve_unsupported(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Unsupported
        || matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOSYS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    fn open(path: &std::path::Path) -> Option<PreallocatedLog<MappedFile>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .unwrap();
        match PreallocatedLog::new(MappedFile::new(file)) {
            Ok(log) => Some(log),
            // No fallocate here: the write(2) path is tested elsewhere.
            Err(e) if reserve_unsupported(&e) => None,
            Err(e) => panic!("{e}"),
        }
    }

    /// Bytes of the file once `windows` windows are reserved.
    fn reserved(windows: usize) -> usize {
        (0..windows)
            .map(|i| (FIRST_WINDOW << i.min(20)).min(MAX_WINDOW))
            .sum()
    }

    #[test]
    fn appends_across_windows_are_read_back_and_drop_trims_the_zeros() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000001.log");
        let Some(mut log) = open(&path) else { return };
        let total = reserved(6) + 12345;
        let data: Vec<u8> = (0..total).map(|i| (i % 251) as u8).collect();
        // Pieces of odd sizes, one larger than a window, straddle every edge.
        let mut off = 0;
        for n in [1, 7, FIRST_WINDOW - 3, 5, MAX_WINDOW + 100, 4096] {
            log.append(&data[off..off + n]).unwrap();
            off += n;
            log.flush().unwrap();
        }
        log.append(&data[off..]).unwrap();
        log.sync().unwrap();
        // While open the file holds the data, then reserved zeros.
        let live = std::fs::read(&path).unwrap();
        assert_eq!(live.len(), reserved(7));
        assert_eq!(&live[..data.len()], &data[..]);
        assert!(live[data.len()..].iter().all(|&b| b == 0));
        drop(log);
        assert_eq!(std::fs::read(&path).unwrap(), data);
    }

    #[test]
    fn a_full_window_does_not_reserve_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000001.log");
        let Some(mut log) = open(&path) else { return };
        log.append(&vec![7u8; FIRST_WINDOW]).unwrap();
        let len = || std::fs::metadata(&path).unwrap().len();
        assert_eq!(len(), FIRST_WINDOW as u64);
        log.append(b"x").unwrap();
        assert_eq!(len(), reserved(2) as u64);
        drop(log);
        assert_eq!(len(), FIRST_WINDOW as u64 + 1);
    }

    #[test]
    fn a_write_outside_the_window_is_an_error_not_a_fault() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000001.log");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let mut space = MappedFile::new(file);
        assert!(space.write(0, b"x").is_err(), "nothing reserved yet");
        if space.reserve(0, FIRST_WINDOW).is_err() {
            return;
        }
        space.write(FIRST_WINDOW as u64 - 1, b"x").unwrap();
        assert!(space.write(FIRST_WINDOW as u64 - 1, b"xy").is_err());
        assert!(space.write(u64::MAX, b"x").is_err());
    }
}
