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
//! is [`Error::Corruption`](crate::Error::Corruption). A last record that fails a checksum, ending at
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
//!
//! [`LogWriter`] (`writer`) appends records; the reading side (`reader`) is
//! the one parser; `recovery` holds what a WAL replay reports.

mod reader;
mod recovery;
mod writer;

#[cfg(test)]
mod tests;

#[cfg(any(test, feature = "internals"))]
pub use reader::SliceFile;
pub use reader::{log_size, read_records, Damage, DamageKind, LogItem, LogReader};
pub use recovery::{RecoveryReport, WalDrop};
pub use writer::LogWriter;

/// Bytes of a record header.
pub const HEADER_LEN: usize = 12;

/// Masks a CRC so that CRCs of data containing CRCs stay well distributed.
#[inline]
pub fn mask_crc(c: u32) -> u32 {
    c.rotate_right(15).wrapping_add(0xa282_ead8)
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
