//! A write-ahead log written through a shared memory map.
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

use std::fs::File;
use std::io;

use memmap2::{MmapMut, MmapOptions};

use super::WritableFile;

/// Bytes of the first window (a multiple of every page size, so every
/// window starts on a page).
pub(crate) const FIRST_WINDOW: usize = 64 << 10;
/// Bytes of the largest window.
pub(crate) const MAX_WINDOW: usize = 1 << 20;

/// A log file written through a shared map of its last window.
pub(crate) struct MappedLog {
    file: File,
    /// The mapped window: file bytes `base..base + map.len()`.
    map: MmapMut,
    base: u64,
    /// Bytes of the window written.
    pos: usize,
}

impl MappedLog {
    /// Wraps `file` (empty, opened for reading and writing), reserving and
    /// mapping its first window. `Ok(None)` when the file system cannot
    /// reserve blocks (no `fallocate`), so the caller writes it with
    /// `write(2)` instead; a map over unreserved blocks could fault on a
    /// full disk.
    pub(crate) fn new(file: File) -> io::Result<Option<Self>> {
        match reserve(&file, 0, FIRST_WINDOW) {
            Ok(()) => {}
            Err(e) if unsupported(&e) => return Ok(None),
            Err(e) => return Err(e),
        }
        let map = map_window(&file, 0, FIRST_WINDOW)?;
        Ok(Some(MappedLog {
            file,
            map,
            base: 0,
            pos: 0,
        }))
    }

    /// Moves the map to the next window, reserving it first.
    fn advance(&mut self) -> io::Result<()> {
        let base = self.base + self.map.len() as u64;
        let len = (self.map.len() * 2).min(MAX_WINDOW);
        reserve(&self.file, base, len)?;
        self.map = map_window(&self.file, base, len)?;
        self.base = base;
        self.pos = 0;
        Ok(())
    }

    /// Bytes of log written.
    fn len(&self) -> u64 {
        self.base + self.pos as u64
    }
}

impl WritableFile for MappedLog {
    fn append(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            if self.pos == self.map.len() {
                self.advance()?;
            }
            let n = data.len().min(self.map.len() - self.pos);
            self.map[self.pos..self.pos + n].copy_from_slice(&data[..n]);
            self.pos += n;
            data = &data[n..];
        }
        Ok(())
    }

    /// Nothing to do: a store into a shared map is already in the page cache.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// `fdatasync` writes back every dirty page of the file, those dirtied
    /// through a shared map included (Linux tracks them as it tracks pages
    /// dirtied by `write(2)`), with the file's size.
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
}

impl Drop for MappedLog {
    /// Cuts the reserved zeros off, so a log that was closed ends at its last
    /// record. Best effort: a log left longer reads the same.
    fn drop(&mut self) {
        let _ = self.file.set_len(self.len());
    }
}

/// Maps file bytes `base..base + len`, which must exist.
fn map_window(file: &File, base: u64, len: usize) -> io::Result<MmapMut> {
    // SAFETY: the map is of a file this process created and writes only
    // through this map; the engine never truncates or rewrites a live log, and
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
    loop {
        // SAFETY: fallocate reads only its integer arguments; the descriptor
        // is open for the duration of the call (borrowed from `file`).
        let r = unsafe { libc::fallocate(file.as_raw_fd(), 0, off, len as libc::off_t) };
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

/// Whether `e` says the file system cannot reserve blocks.
fn unsupported(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Unsupported
        || matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOSYS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    fn open(path: &std::path::Path) -> File {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .unwrap()
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
        let Some(mut log) = MappedLog::new(open(&path)).unwrap() else {
            return; // no fallocate here: the write(2) path is tested elsewhere
        };
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
        let Some(mut log) = MappedLog::new(open(&path)).unwrap() else {
            return;
        };
        log.append(&vec![7u8; FIRST_WINDOW]).unwrap();
        let len = || std::fs::metadata(&path).unwrap().len();
        assert_eq!(len(), FIRST_WINDOW as u64);
        log.append(b"x").unwrap();
        assert_eq!(len(), reserved(2) as u64);
        drop(log);
        assert_eq!(len(), FIRST_WINDOW as u64 + 1);
    }
}
