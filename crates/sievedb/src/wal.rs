//! The log format shared by the write-ahead log and the MANIFEST.
//!
//! A log is a sequence of records, each
//! `len: u32 | payload_crc: u32 | header_crc: u32 | payload[len]`, all
//! little-endian; `header_crc` is the masked CRC32C of the first 8 bytes and
//! `payload_crc` that of the payload. One record holds one write batch (or one
//! version edit), so a record is applied whole or not at all.
//!
//! Recovery rule: a record cut short by the end of the file, or an all-zero
//! rest of file, is a torn tail and is dropped; damage anywhere before the tail
//! is [`Error::Corruption`]. A last record that fails a checksum, ending at
//! the end of the file or followed by zeros only, is a torn tail under
//! [`Tail::Lenient`] (the WAL: the OS may have persisted the file's length
//! before its data, and a preallocated WAL, written through a map, ends in
//! zeros after a record a crash cut short) and corruption under
//! [`Tail::Strict`] (the MANIFEST: every edit is fsynced before it is used, so
//! an edit the engine relied on must never be dropped silently).
//!
//! [`LogReader`] implements the rule once, streaming a file in chunks;
//! [`read_records`] applies it to a whole buffer (the MANIFEST). WAL recovery
//! classifies what stops a log with [`DamageKind`] and decides per
//! [`WalRecovery`](crate::options::WalRecovery) mode whether to drop it, stop
//! there or fail the open; see `db/open.rs` and [`RecoveryReport`].

use std::path::{Path, PathBuf};

use crate::coding::u32_at;
use crate::error::{Error, Result};
use crate::io::{RandomAccessFile, WritableFile};

/// Bytes of a record header.
pub const HEADER_LEN: usize = 12;

/// Masks a CRC so that CRCs of data containing CRCs stay well distributed.
#[inline]
pub fn mask_crc(c: u32) -> u32 {
    c.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Appends records to a log file.
pub struct LogWriter {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    size: u64,
}

impl LogWriter {
    /// Wraps a freshly created file.
    pub fn new(file: Box<dyn WritableFile>, path: PathBuf) -> Self {
        LogWriter {
            file,
            path,
            size: 0,
        }
    }

    /// Appends one record (buffered until [`flush`](Self::flush) or [`sync`](Self::sync)).
    pub fn add_record(&mut self, payload: &[u8]) -> Result<()> {
        let len = u32::try_from(payload.len()).map_err(|_| {
            Error::InvalidArgument(format!(
                "{}: log record larger than 4 GiB",
                self.path.display()
            ))
        })?;
        let mut header = [0u8; HEADER_LEN];
        header[0..4].copy_from_slice(&len.to_le_bytes());
        header[4..8].copy_from_slice(&mask_crc(crc32c::crc32c(payload)).to_le_bytes());
        let hcrc = mask_crc(crc32c::crc32c(&header[0..8]));
        header[8..12].copy_from_slice(&hcrc.to_le_bytes());
        self.file.append(&header)?;
        self.file.append(payload)?;
        self.size += (HEADER_LEN + payload.len()) as u64;
        Ok(())
    }

    /// Hands appended records to the OS.
    pub fn flush(&mut self) -> Result<()> {
        Ok(self.file.flush()?)
    }

    /// Makes appended records durable.
    pub fn sync(&mut self) -> Result<()> {
        Ok(self.file.sync()?)
    }

    /// Bytes written so far.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The file's path.
    #[cfg(any(test, feature = "internals"))]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// How a damaged complete last record is treated (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tail {
    /// Dropped as a torn write (WAL).
    Lenient,
    /// Reported as corruption unless it is all zeros (MANIFEST).
    Strict,
}

/// Bytes a [`LogReader`] reads from its file at a time (a record larger than
/// this is read whole, so memory is bounded by the largest record plus one chunk).
pub const READ_CHUNK: usize = 256 * 1024;

/// What kind of damage stopped a [`LogReader`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DamageKind {
    /// Fewer bytes than a header are left, or a record's payload runs past
    /// the end of the file: a write cut short by a crash.
    Truncated,
    /// The rest of the file is zeros (the OS extended the file before its
    /// data reached the disk), or the last record's payload is all zeros.
    Zeroed,
    /// The last record fails its checksum (its header's or its payload's)
    /// and ends exactly at the end of the file or is followed by zeros only:
    /// a write a crash cut short, in a file that was extended before its
    /// data reached the disk or that was preallocated (a mapped WAL).
    BadLastRecord,
    /// Damage with more data after it: a bad header checksum followed by
    /// non-zero bytes, a bad payload checksum on a record that is not the
    /// last one, or a record that passes its checksums but does not decode.
    Corrupt,
}

impl DamageKind {
    /// Whether a log read under `tail` treats this damage as a torn tail
    /// (see the module docs).
    pub fn is_torn_tail(self, tail: Tail) -> bool {
        match self {
            DamageKind::Truncated | DamageKind::Zeroed => true,
            DamageKind::BadLastRecord => tail == Tail::Lenient,
            DamageKind::Corrupt => false,
        }
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
                    return damaged(DamageKind::Zeroed, "zero-filled last record".into());
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

/// What replaying the write-ahead logs did when the database was opened
/// (see [`Db::recovery_report`](crate::Db::recovery_report)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecoveryReport {
    /// The recovery mode used.
    pub mode: crate::options::WalRecovery,
    /// Numbers of the WALs that were needed at open, oldest first.
    pub wals: Vec<u64>,
    /// Records (write batches) applied.
    pub records_applied: u64,
    /// Bytes of WAL read as good records.
    pub bytes_applied: u64,
    /// Sequence number of the last write the database holds after recovery.
    pub last_sequence: u64,
    /// What was not applied, if anything.
    pub dropped: Option<WalDrop>,
}

/// The part of the write-ahead logs that recovery did not apply.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WalDrop {
    /// Number of the WAL where replay stopped.
    pub wal_number: u64,
    /// Its path (in the database directory, as found at open).
    pub path: PathBuf,
    /// Offset of the first byte not applied (the start of the damaged record).
    pub offset: u64,
    /// Bytes of that WAL from `offset` to its end.
    pub bytes: u64,
    /// The damage found.
    pub kind: DamageKind,
    /// What was wrong, as in an error message.
    pub detail: String,
    /// Whether this is only a torn tail of the newest WAL (the normal result
    /// of a crash during a write); otherwise acknowledged writes may be lost.
    pub torn_tail: bool,
    /// Newer WALs holding bytes that were not replayed at all
    /// ([`WalRecovery::PointInTime`](crate::options::WalRecovery::PointInTime)).
    pub skipped_wals: Vec<u64>,
    /// Bytes of the skipped WALs.
    pub skipped_bytes: u64,
    /// Where the damaged WAL was copied and the skipped WALs moved (the
    /// `lost/` subdirectory), when a read-write open kept them.
    pub kept_in: Option<PathBuf>,
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

/// Splits the contents of a log file into record payloads, applying the
/// recovery rule: a torn tail (under `tail`) ends the log, any other damage
/// is [`Error::Corruption`] naming `path` and the offset.
pub fn read_records<'a>(data: &'a [u8], path: &Path, tail: Tail) -> Result<Vec<&'a [u8]>> {
    let file = SliceFile(data);
    let mut reader = LogReader::new(&file, path).with_chunk_size(data.len());
    let mut out = Vec::new();
    loop {
        match reader.next_item()? {
            LogItem::Record { offset, payload } => {
                let start = offset as usize + HEADER_LEN;
                out.push(&data[start..start + payload.len()]);
            }
            LogItem::End => return Ok(out),
            LogItem::Damaged(d) if d.kind.is_torn_tail(tail) => return Ok(out),
            LogItem::Damaged(d) => return Err(d.to_error(path)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct VecFile(std::sync::Arc<parking_lot::Mutex<Vec<u8>>>);
    impl WritableFile for VecFile {
        fn append(&mut self, d: &[u8]) -> std::io::Result<()> {
            self.0.lock().extend_from_slice(d);
            Ok(())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
        fn sync(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn log_of(records: &[&[u8]]) -> Vec<u8> {
        let buf = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
        let mut w = LogWriter::new(Box::new(VecFile(buf.clone())), "x".into());
        for r in records {
            w.add_record(r).unwrap();
        }
        let v = buf.lock().clone();
        v
    }

    #[test]
    fn roundtrip_and_torn_tail() {
        let data = log_of(&[b"one", b"", b"three"]);
        let p = Path::new("x");
        assert_eq!(
            read_records(&data, p, Tail::Lenient).unwrap(),
            vec![&b"one"[..], b"", b"three"]
        );
        for cut in 0..data.len() {
            let r = read_records(&data[..cut], p, Tail::Lenient).unwrap();
            assert!(r.len() <= 3);
        }
        let mut bad = data.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert_eq!(read_records(&bad, p, Tail::Lenient).unwrap().len(), 2);
        assert!(read_records(&bad, p, Tail::Strict).is_err());
    }

    #[test]
    fn damage_before_tail_is_corruption() {
        let data = log_of(&[b"one", b"two", b"three"]);
        for i in 0..(HEADER_LEN + 3 + HEADER_LEN + 3) {
            let mut bad = data.clone();
            bad[i] ^= 0x40;
            assert!(
                read_records(&bad, Path::new("x"), Tail::Lenient).is_err(),
                "byte {i}"
            );
        }
    }
    /// Reads `data` with `chunk`-byte reads: the payloads and how it ended.
    fn stream(data: &[u8], chunk: usize) -> (Vec<Vec<u8>>, Option<Damage>) {
        let file = SliceFile(data);
        let mut r = LogReader::new(&file, "x").with_chunk_size(chunk);
        let mut out = Vec::new();
        loop {
            match r.next_item().unwrap() {
                LogItem::Record { offset, payload } => {
                    assert_eq!(
                        &data[offset as usize + HEADER_LEN..][..payload.len()],
                        payload
                    );
                    out.push(payload.to_vec());
                }
                LogItem::End => return (out, None),
                LogItem::Damaged(d) => {
                    // Asking again returns the same damage.
                    assert_eq!(r.next_item().unwrap(), LogItem::Damaged(d.clone()));
                    return (out, Some(d));
                }
            }
        }
    }

    fn records(n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| (0..(i * 37) % 300).map(|j| (i * 7 + j) as u8 | 1).collect())
            .collect()
    }

    #[test]
    fn streaming_reader_matches_whole_buffer_across_chunk_edges() {
        let recs = records(30);
        let refs: Vec<&[u8]> = recs.iter().map(Vec::as_slice).collect();
        let data = log_of(&refs);
        for chunk in [1, 2, 5, 11, 12, 13, 64, 299, 4096, data.len(), 1 << 20] {
            let (got, end) = stream(&data, chunk);
            assert_eq!(got, recs, "chunk {chunk}");
            assert_eq!(end, None, "chunk {chunk}");
        }
        // Every cut: exactly the records complete before it, then the clean
        // end (a cut on a record boundary) or a truncated tail at the end of
        // the last complete record.
        let ends: Vec<usize> = recs
            .iter()
            .scan(0, |end, r| {
                *end += HEADER_LEN + r.len();
                Some(*end)
            })
            .collect();
        for cut in 0..data.len() {
            let complete = ends.iter().filter(|&&e| e <= cut).count();
            let prefix = if complete == 0 { 0 } else { ends[complete - 1] };
            for chunk in [3, 12, 100] {
                let (got, end) = stream(&data[..cut], chunk);
                assert_eq!(got, recs[..complete], "cut {cut} chunk {chunk}");
                if prefix == cut {
                    assert_eq!(end, None, "cut {cut} chunk {chunk}");
                } else {
                    let d = end.expect("a cut inside a record is a torn tail");
                    assert_eq!((d.kind, d.offset), (DamageKind::Truncated, prefix as u64));
                }
            }
        }
    }

    #[test]
    fn streaming_reader_memory_is_bounded_by_record_and_chunk() {
        let recs: Vec<Vec<u8>> = (0..200).map(|i| vec![i as u8; 1000]).collect();
        let refs: Vec<&[u8]> = recs.iter().map(Vec::as_slice).collect();
        let data = log_of(&refs);
        let file = SliceFile(&data);
        let mut r = LogReader::new(&file, "x").with_chunk_size(4096);
        let mut n = 0;
        while let LogItem::Record { .. } = r.next_item().unwrap() {
            n += 1;
        }
        assert_eq!(n, 200);
        assert!(
            r.buffer_capacity() <= 3 * 4096,
            "buffer grew to {} for a {}-byte log",
            r.buffer_capacity(),
            data.len()
        );
    }

    #[test]
    fn streaming_reader_classifies_damage() {
        let data = log_of(&[b"one", b"two", b"three"]);
        let last = HEADER_LEN * 2 + 6;
        // Zero tail after good records, longer than a chunk.
        let mut z = data.clone();
        z.extend(std::iter::repeat_n(0u8, 50));
        let (got, end) = stream(&z, 7);
        assert_eq!(got.len(), 3);
        let end = end.unwrap();
        assert_eq!(
            (end.kind, end.offset),
            (DamageKind::Zeroed, data.len() as u64)
        );
        // Garbage after zeros: a bad header with non-zero bytes later is corruption.
        let mut g = z.clone();
        *g.last_mut().unwrap() = 9;
        let (got, end) = stream(&g, 7);
        assert_eq!(got.len(), 3);
        assert_eq!(end.unwrap().kind, DamageKind::Corrupt);
        // A flipped payload byte of the last record: BadLastRecord.
        let mut b = data.clone();
        *b.last_mut().unwrap() ^= 1;
        let end = stream(&b, 5).1.unwrap();
        assert_eq!(
            (end.kind, end.offset),
            (DamageKind::BadLastRecord, last as u64)
        );
        assert!(end.kind.is_torn_tail(Tail::Lenient));
        assert!(!end.kind.is_torn_tail(Tail::Strict));
        // A flipped byte of the second record: corruption at its offset.
        let mut m = data.clone();
        m[HEADER_LEN + 3 + HEADER_LEN] ^= 1;
        let (got, end) = stream(&m, 5);
        assert_eq!(got.len(), 1);
        let end = end.unwrap();
        assert_eq!(
            (end.kind, end.offset),
            (DamageKind::Corrupt, (HEADER_LEN + 3) as u64)
        );
        let e = end.to_error(Path::new("000007.log")).to_string();
        assert!(e.contains("000007.log") && e.contains("offset 15"), "{e}");
        // The last record's payload zeroed: Zeroed (torn under both rules).
        let mut zl = data.clone();
        let n = zl.len();
        zl[n - 5..].fill(0);
        let end = stream(&zl, 4).1.unwrap();
        assert_eq!(end.kind, DamageKind::Zeroed);
        assert_eq!(
            read_records(&zl, Path::new("x"), Tail::Strict)
                .unwrap()
                .len(),
            2
        );
    }

    /// A preallocated (mapped) WAL killed while copying its last record: the
    /// record is partly written and zeros follow; whatever part was written,
    /// the records before it are read and the tail is torn (WAL) but never
    /// silently dropped from a MANIFEST. Damage with a non-zero byte after
    /// it stays corruption.
    #[test]
    fn a_torn_record_followed_by_preallocated_zeros_is_a_torn_tail() {
        let data = log_of(&[b"one", b"two", b"three-and-more"]);
        let last = HEADER_LEN * 2 + 6;
        let p = Path::new("x");
        // The header is copied before the payload, but a copy need not store
        // in order: each prefix of the last record's bytes; each byte of its
        // header missing, with no payload; each byte of its payload missing.
        let mut cases = Vec::new();
        for keep in 1..data.len() - last {
            let mut d = data.clone();
            d[last + keep..].fill(0);
            cases.push(d);
        }
        for hole in last..data.len() {
            let mut d = data.clone();
            d[hole] = 0;
            if hole < last + HEADER_LEN {
                d[last + HEADER_LEN..].fill(0);
            }
            cases.push(d);
        }
        for mut d in cases {
            if d == data {
                continue; // the zeroed byte was a zero already
            }
            d.extend(std::iter::repeat_n(0u8, 100));
            let (got, end) = stream(&d, 7);
            assert_eq!(got.len(), 2, "{d:?}");
            let end = end.unwrap();
            assert_eq!(end.offset, last as u64);
            assert!(end.kind.is_torn_tail(Tail::Lenient), "{end:?}");
            assert_eq!(read_records(&d, p, Tail::Lenient).unwrap().len(), 2);
            if end.kind == DamageKind::BadLastRecord {
                assert!(read_records(&d, p, Tail::Strict).is_err());
            }
            // One non-zero byte after the record: corruption, not a tail.
            *d.last_mut().unwrap() = 1;
            let end = stream(&d, 7).1.unwrap();
            assert_eq!(end.kind, DamageKind::Corrupt, "{end:?}");
        }
    }
}
