//! Reading a log back: [`LogReader`], the one implementation of the
//! format's parsing and recovery rules (see the module above), and
//! [`read_records`], which applies it to a whole buffer.

use std::path::{Path, PathBuf};

use super::{mask_crc, HEADER_LEN, READ_CHUNK};
use crate::coding::u32_at;
use crate::error::{Error, Result};
use crate::io::RandomAccessFile;

/// What kind of damage stopped a [`LogReader`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum DamageKind {
    /// Fewer bytes than a header are left, or a record's payload runs past
    /// the end of the file: a write cut short by a crash.
    Truncated,
    /// The rest of the file is zeros (the OS extended the file before its
    /// data reached the disk, or the log was preallocated).
    Zeroed,
    /// The last record fails its checksum (its header's or its payload's,
    /// all zeros included) and ends exactly at the end of the file or is
    /// followed by zeros only: a write a crash cut short, in a file that was
    /// extended before its data reached the disk or that was preallocated
    /// (a mapped WAL).
    BadLastRecord,
    /// Damage with more data after it: a bad header checksum followed by
    /// non-zero bytes, a bad payload checksum on a record that is not the
    /// last one, or a record that passes its checksums but does not decode.
    Corrupt,
}

impl DamageKind {
    /// Whether only the end of the file or zeros follow the damaged record:
    /// the shape of a write a crash cut short. Damage of another kind may
    /// still be a torn tail (fragments of later writes that reached the disk
    /// out of order); telling needs what follows it
    /// ([`scan_remains`](super::scan_remains)).
    pub fn at_end(self) -> bool {
        !matches!(self, DamageKind::Corrupt)
    }
}

/// Where and how a log is damaged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// File offset of the first byte not read as a good record (the start of
    /// the damaged record).
    pub offset: u64,
    /// The kind of damage.
    pub kind: DamageKind,
    /// What was wrong, for messages.
    pub detail: String,
}

impl Damage {
    /// The [`Error::Corruption`] reporting this damage in `path`.
    pub fn to_error(&self, path: &Path) -> Error {
        Error::corruption(path, format!("{} at offset {}", self.detail, self.offset))
    }
}

/// One step of a [`LogReader`].
#[derive(Debug, PartialEq, Eq)]
pub enum LogItem<'a> {
    /// A good record.
    Record {
        /// File offset of the record's header.
        offset: u64,
        /// The record's payload.
        payload: &'a [u8],
    },
    /// The clean end of the log.
    End,
    /// The log is damaged here; reading further returns the same damage.
    Damaged(Damage),
}

/// Reads the records of a log incrementally, [`READ_CHUNK`] bytes at a time.
/// This is the one implementation of the format's parsing rules: WAL recovery
/// streams with it and [`read_records`] wraps it for whole buffers.
pub struct LogReader<'f> {
    file: &'f dyn RandomAccessFile,
    path: PathBuf,
    size: u64,
    chunk: usize,
    /// Bytes of the file from `buf_off` on.
    buf: Vec<u8>,
    buf_off: u64,
    /// Bytes of `buf` already returned.
    pos: usize,
}

impl<'f> LogReader<'f> {
    /// A reader over `file` (whose size is taken now); `path` names it in errors.
    pub fn new(file: &'f dyn RandomAccessFile, path: impl Into<PathBuf>) -> Self {
        LogReader {
            size: file.size(),
            file,
            path: path.into(),
            chunk: READ_CHUNK,
            buf: Vec::new(),
            buf_off: 0,
            pos: 0,
        }
    }

    /// Reads `chunk` bytes at a time instead of [`READ_CHUNK`] (at least 1).
    #[must_use]
    pub fn with_chunk_size(mut self, chunk: usize) -> Self {
        self.chunk = chunk.max(1);
        self
    }

    /// File offset of the next record.
    pub fn offset(&self) -> u64 {
        self.buf_off + self.pos as u64
    }

    /// Size of the file being read.
    pub fn file_size(&self) -> u64 {
        self.size
    }

    #[cfg(any(test, feature = "internals"))]
    /// Capacity of the read buffer in bytes (the reader's memory footprint).
    pub fn buffer_capacity(&self) -> usize {
        self.buf.capacity()
    }

    fn read(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.file
            .read_at(offset, len)
            .map_err(|e| Error::Io(crate::io::with_path(e, &self.path)))
    }

    /// Makes at least `want` unread bytes available (the caller checked that
    /// the file holds them).
    fn fill(&mut self, want: usize) -> Result<()> {
        let avail = self.buf.len() - self.pos;
        if avail >= want {
            return Ok(());
        }
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.buf_off += self.pos as u64;
            self.pos = 0;
        }
        let end = self.buf_off + self.buf.len() as u64;
        let left = self.size - end;
        let n = ((want - avail).max(self.chunk) as u64).min(left) as usize;
        if n > 0 {
            let data = self.read(end, n)?;
            self.buf.extend_from_slice(&data);
        }
        Ok(())
    }

    /// Whether every byte from `skip` bytes past the read position to the
    /// end of the file is zero (the caller filled at least `skip` bytes).
    fn zero_after(&self, skip: usize) -> Result<bool> {
        if self.buf[self.pos + skip..].iter().any(|&b| b != 0) {
            return Ok(false);
        }
        let mut off = self.buf_off + self.buf.len() as u64;
        while off < self.size {
            let n = (self.size - off).min(self.chunk as u64) as usize;
            if self.read(off, n)?.iter().any(|&b| b != 0) {
                return Ok(false);
            }
            off += n as u64;
        }
        Ok(true)
    }

    /// The next record, the end of the log, or the damage that stops it.
    /// I/O errors are returned as errors.
    pub fn next_item(&mut self) -> Result<LogItem<'_>> {
        let offset = self.offset();
        let remaining = self.size - offset;
        let damaged = |kind, detail: String| {
            Ok(LogItem::Damaged(Damage {
                offset,
                kind,
                detail,
            }))
        };
        if remaining == 0 {
            return Ok(LogItem::End);
        }
        if remaining < HEADER_LEN as u64 {
            return damaged(
                DamageKind::Truncated,
                format!("record header cut short by the end of the file ({remaining} bytes)"),
            );
        }
        self.fill(HEADER_LEN)?;
        let h = &self.buf[self.pos..self.pos + HEADER_LEN];
        let len = u32_at(h, 0) as usize;
        let pcrc = u32_at(h, 4);
        if mask_crc(crc32c::crc32c(&h[0..8])) != u32_at(h, 8) {
            if self.zero_after(0)? {
                return damaged(DamageKind::Zeroed, "zero-filled tail".into());
            }
            if self.zero_after(HEADER_LEN)? {
                return damaged(
                    DamageKind::BadLastRecord,
                    "bad record header checksum on the last record".into(),
                );
            }
            return damaged(DamageKind::Corrupt, "bad record header checksum".into());
        }
        if remaining - (HEADER_LEN as u64) < len as u64 {
            return damaged(
                DamageKind::Truncated,
                format!("record of {len} bytes cut short by the end of the file"),
            );
        }
        self.fill(HEADER_LEN + len)?;
        let start = self.pos + HEADER_LEN;
        let payload = &self.buf[start..start + len];
        if mask_crc(crc32c::crc32c(payload)) != pcrc {
            if self.zero_after(HEADER_LEN + len)? {
                if payload.iter().all(|&b| b == 0) {
                    return damaged(DamageKind::BadLastRecord, "zero-filled last record".into());
                }
                return damaged(
                    DamageKind::BadLastRecord,
                    "bad record checksum on the last record".into(),
                );
            }
            return damaged(DamageKind::Corrupt, "bad record checksum".into());
        }
        self.pos += HEADER_LEN + len;
        Ok(LogItem::Record {
            offset,
            payload: &self.buf[start..start + len],
        })
    }
}

/// The size of log file `path` for deciding whether it holds anything: its
/// length, or 0 when every byte is zero (a preallocated log,
/// [`FileSystem::create_log`](crate::io::FileSystem::create_log), that a
/// crash left before its first record). Reads no more than a record header
/// of a log that holds records.
pub fn log_size(fs: &dyn crate::io::FileSystem, path: &Path) -> std::io::Result<u64> {
    let size = fs.file_size(path)?;
    if size == 0 {
        return Ok(0);
    }
    let file = fs.open_random(path, false)?;
    let mut off = 0;
    let mut chunk = HEADER_LEN as u64;
    while off < size {
        let n = chunk.min(size - off);
        if file.read_at(off, n as usize)?.iter().any(|&b| b != 0) {
            return Ok(size);
        }
        off += n;
        chunk = READ_CHUNK as u64;
    }
    Ok(0)
}

/// A byte slice seen as a [`RandomAccessFile`] (for [`read_records`], tests
/// and fuzzing).
pub struct SliceFile<'a>(pub &'a [u8]);

impl RandomAccessFile for SliceFile<'_> {
    fn read_at(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        usize::try_from(offset)
            .ok()
            .and_then(|o| self.0.get(o..o.checked_add(len)?))
            .map(<[u8]>::to_vec)
            .ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "read past the end")
            })
    }
    fn size(&self) -> u64 {
        self.0.len() as u64
    }
}

/// Whether `damage` of `file`, a log synced after every record (the
/// MANIFEST), is a torn tail: no intact record follows it (see the module
/// docs).
fn torn_in_synced_log(file: &dyn RandomAccessFile, path: &Path, damage: &Damage) -> Result<bool> {
    Ok(damage.kind.at_end()
        || super::scan_remains(file, path, damage.offset + 1)?
            .first_record
            .is_none())
}

/// Splits the contents of a log synced after every record (the MANIFEST)
/// into record payloads, applying its recovery rule (see the module docs):
/// damage no intact record follows is a torn tail, which ends the log and is
/// returned with the records; damage an intact record follows is
/// [`Error::Corruption`] naming `path` and the offset.
pub fn read_records<'a>(data: &'a [u8], path: &Path) -> Result<(Vec<&'a [u8]>, Option<Damage>)> {
    let file = SliceFile(data);
    let mut reader = LogReader::new(&file, path).with_chunk_size(data.len());
    let mut out = Vec::new();
    loop {
        match reader.next_item()? {
            LogItem::Record { offset, payload } => {
                let start = offset as usize + HEADER_LEN;
                out.push(&data[start..start + payload.len()]);
            }
            LogItem::End => return Ok((out, None)),
            LogItem::Damaged(d) => {
                if !torn_in_synced_log(&file, path, &d)? {
                    return Err(d.to_error(path));
                }
                return Ok((out, Some(d)));
            }
        }
    }
}
