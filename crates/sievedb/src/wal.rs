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
//! is [`Error::Corruption`]. A complete last record whose payload fails its
//! checksum is a torn tail under [`Tail::Lenient`] (the WAL: the OS may have
//! persisted the file's length before its data) and corruption under
//! [`Tail::Strict`] (the MANIFEST: every edit is fsynced before it is used, so
//! an edit the engine relied on must never be dropped silently).

use std::path::{Path, PathBuf};

use crate::coding::u32_at;
use crate::error::{Error, Result};
use crate::io::WritableFile;

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
        let len = u32::try_from(payload.len())
            .map_err(|_| Error::InvalidArgument("log record larger than 4 GiB".into()))?;
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

/// Splits the contents of a log file into record payloads, applying the recovery rule.
pub fn read_records<'a>(data: &'a [u8], path: &Path, tail: Tail) -> Result<Vec<&'a [u8]>> {
    let mut out = Vec::new();
    let mut off = 0usize;
    while off < data.len() {
        let rest = &data[off..];
        if rest.len() < HEADER_LEN {
            break; // torn header at the tail
        }
        let len = u32_at(rest, 0) as usize;
        let pcrc = u32_at(rest, 4);
        let hcrc = u32_at(rest, 8);
        if mask_crc(crc32c::crc32c(&rest[0..8])) != hcrc {
            if rest.iter().all(|&b| b == 0) {
                break; // zero-filled tail of a file the OS extended before a crash
            }
            return Err(Error::corruption(
                path,
                format!("bad record header checksum at offset {off}"),
            ));
        }
        if rest.len() - HEADER_LEN < len {
            break; // record cut short by the end of the file: torn tail
        }
        let payload = &rest[HEADER_LEN..HEADER_LEN + len];
        if mask_crc(crc32c::crc32c(payload)) != pcrc {
            let zeros = payload.iter().all(|&b| b == 0);
            if HEADER_LEN + len == rest.len() && (tail == Tail::Lenient || zeros) {
                break; // damaged last record: torn tail
            }
            return Err(Error::corruption(
                path,
                format!("bad record checksum at offset {off}"),
            ));
        }
        out.push(payload);
        off += HEADER_LEN + len;
    }
    Ok(out)
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
}
