//! The log format shared by the write-ahead log and the MANIFEST.
//!
//! A log is a sequence of records, each
//! `len: u32 | payload_crc: u32 | header_crc: u32 | payload[len]`, all
//! little-endian; `header_crc` is the masked CRC32C of the first 8 bytes and
//! `payload_crc` that of the payload. One record holds one write batch (or one
//! version edit), so a record is applied whole or not at all.
//!
//! Recovery rule: damage is a **torn tail**, dropped, when it lies past
//! every byte the log can prove was synced; anything else is
//! [`Error::Corruption`](crate::Error::Corruption). What a power loss leaves
//! of a log's unsynced end is any mix of its bytes and of zeros: a record
//! cut short by the end of the file, an all-zero rest of file, a last record
//! that fails a checksum, or zeros where pages never reached the disk
//! followed by fragments of later records that did. So:
//! - the MANIFEST syncs every edit before it writes the next, so an intact record after the damage proves the damaged one was
//!   synced: damage with an intact record after it is corruption, damage
//!   with none is a torn tail;
//! - a WAL syncs only for sync writes, and says how much it had synced in
//!   sync marks ([`sync_mark`]): damage an intact mark after it covers is
//!   corruption, any other damage of the newest WAL is a torn tail: its
//!   writes were never acknowledged as durable (`WalRecovery` says what each
//!   mode does with it). A WAL is
//!   synced whole before the next one is written, so in an older WAL only
//!   an all-zero tail (its preallocated space) can be its end, and only when
//!   the next WAL continues its sequence numbers (`db/replay.rs`).
//!
//! [`LogReader`] parses a log in chunks and classifies what stops it
//! ([`DamageKind`]); [`scan_remains`] reads past damage for the intact
//! records after it; [`read_records`] applies the MANIFEST's rule to a whole
//! buffer. [`LogWriter`] (`writer`) appends records and sync
//! marks; `recovery` holds what a WAL replay reports.

mod reader;
mod recovery;
mod scan;
pub mod sync_mark;
mod writer;

#[cfg(test)]
mod tests;

#[cfg(any(test, feature = "internals"))]
pub use reader::SliceFile;
pub use reader::{log_size, read_records, Damage, DamageKind, LogItem, LogReader};
pub use recovery::{RecoveryReport, WalDrop};
#[cfg(any(test, feature = "internals"))]
pub use scan::Remains;
pub use scan::{is_torn_tail, scan_remains};
pub use writer::LogWriter;

/// Bytes of a record header.
pub const HEADER_LEN: usize = 12;

/// Masks a CRC so that CRCs of data containing CRCs stay well distributed.
#[inline]
pub fn mask_crc(c: u32) -> u32 {
    c.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Bytes a [`LogReader`] reads from its file at a time (a record larger than
/// this is read whole, so memory is bounded by the largest record plus one chunk).
pub const READ_CHUNK: usize = 256 * 1024;
