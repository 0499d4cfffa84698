//! Appending records to a log: [`LogWriter`].

use std::path::PathBuf;

use super::{mask_crc, HEADER_LEN};
use crate::error::{Error, Result};
use crate::io::WritableFile;

/// Appends records to a log file.
pub struct LogWriter {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    size: u64,
    /// Bytes made durable by the last completed [`sync`](Self::sync).
    synced: u64,
    /// The size the last sync mark written claims ([`mark_sync`](Self::mark_sync)).
    marked: u64,
}

impl LogWriter {
    /// Wraps a freshly created file.
    pub fn new(file: Box<dyn WritableFile>, path: PathBuf) -> Self {
        LogWriter {
            file,
            path,
            size: 0,
            synced: 0,
            marked: 0,
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
        self.file.sync()?;
        self.synced = self.size;
        Ok(())
    }

    /// Appends a sync mark ([`super::sync_mark`]) if a sync completed since
    /// the last one: the WAL calls this before each group of records, so
    /// that recovery can tell damage to synced records from a torn tail.
    /// Returns the bytes appended (0 when no sync completed since the last
    /// mark).
    pub fn mark_sync(&mut self) -> Result<u64> {
        if self.synced <= self.marked {
            return Ok(0);
        }
        let mark = super::sync_mark::encode(self.synced);
        self.add_record(&mark)?;
        self.marked = self.synced;
        Ok((HEADER_LEN + mark.len()) as u64)
    }

    /// Bytes written so far.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The file's path.
    #[cfg(any(test, feature = "internals"))]
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}
