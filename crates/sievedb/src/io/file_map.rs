//! [`FileMap`]: a read-only memory map of a whole immutable file (an SST),
//! whose bytes readers borrow in place.

use std::fs::File;
use std::io;

use crate::prefetch::prefetch_read;

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
    pub(super) fn new(file: &File) -> io::Result<FileMap> {
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
