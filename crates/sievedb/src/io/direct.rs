//! Direct reads: [`DirectRandom`], a file read with O_DIRECT through an
//! aligned buffer, bypassing the page cache.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::RandomAccessFile;

/// Alignment O_DIRECT needs for offsets, lengths and buffers.
const DIRECT_ALIGN: usize = 4096;

pub(super) struct DirectRandom {
    pub(super) file: File,
    pub(super) size: u64,
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

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::io::{FileSystem, StdFs};

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
}
