//! Reading past damage: [`scan_remains`] finds the intact records in the
//! bytes of a log that replay did not apply, so that recovery can say what
//! it dropped and whether a sync mark proves the damage lies in synced
//! bytes ([`super::sync_mark`]).
//!
//! An intact record is one whose header and payload pass their checksums,
//! found at any byte offset: after damage the record boundaries are lost, so
//! every offset is tried (CRC32C makes a false find about 2^-64 per offset).
//! Runs of zeros, a preallocated log's tail and the holes a power loss
//! leaves, are skipped without checksumming them.

use std::path::Path;

use super::{mask_crc, sync_mark, HEADER_LEN, READ_CHUNK};
use crate::coding::u32_at;
use crate::error::{Error, Result};
use crate::io::RandomAccessFile;

/// What the bytes of a log from some offset on hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Remains {
    /// Intact records that are not sync marks (WAL: write batches).
    pub records: u64,
    /// Writes those records hold (a batch's entry count).
    pub entries: u64,
    /// The largest size an intact sync mark among them claims was synced
    /// (0: none).
    pub synced: u64,
    /// Bytes from the offset to the last non-zero byte (0 when they are all
    /// zeros): what was there besides preallocated or never-written zeros.
    pub data_bytes: u64,
    /// Offset of the first intact record of any kind.
    pub first_record: Option<u64>,
}

/// Whether `damage` of a WAL that no newer WAL follows is a torn tail, given
/// what follows it from its offset on (`rest`): it is not a record that
/// passed its checksums (one that did was written as it is), and no intact
/// sync mark after it claims the damaged bytes were synced. Damage at the
/// end of the file ([`DamageKind::at_end`](super::DamageKind::at_end)) is
/// both.
pub fn is_torn_tail(damage: &super::Damage, rest: &Remains) -> bool {
    rest.first_record != Some(damage.offset) && rest.synced <= damage.offset
}

/// Scans `file` (named `path` in errors) from `from` to its end for intact
/// records (see the module docs). Memory is bounded by one read chunk and
/// the largest candidate record.
pub fn scan_remains(file: &dyn RandomAccessFile, path: &Path, from: u64) -> Result<Remains> {
    let size = file.size();
    let read = |off: u64, len: usize| {
        file.read_at(off, len)
            .map_err(|e| Error::Io(crate::io::with_path(e, path)))
    };
    let mut out = Remains {
        data_bytes: last_nonzero(file, path, from)?.map_or(0, |end| end - from),
        ..Remains::default()
    };
    // The window: file bytes `win_off..win_off + win.len()`.
    let (mut win, mut win_off) = (Vec::new(), from);
    let mut at = from;
    while at + HEADER_LEN as u64 <= size {
        if at + HEADER_LEN as u64 > win_off + win.len() as u64 {
            let n = (READ_CHUNK as u64).min(size - at) as usize;
            win = read(at, n)?;
            win_off = at;
        }
        let i = (at - win_off) as usize;
        let h = &win[i..i + HEADER_LEN];
        if h.iter().all(|&b| b == 0) {
            // A header may start up to 11 bytes before the next non-zero byte.
            let next = win[i..].iter().position(|&b| b != 0);
            let skip_to = match next {
                Some(p) => at + p as u64,
                None => win_off + win.len() as u64,
            };
            at = (at + 1).max(skip_to.saturating_sub(HEADER_LEN as u64 - 1));
            continue;
        }
        if mask_crc(crc32c::crc32c(&h[0..8])) == u32_at(h, 8) {
            let len = u32_at(h, 0) as u64;
            let pcrc = u32_at(h, 4);
            let end = at + HEADER_LEN as u64 + len;
            if end <= size {
                let start = i + HEADER_LEN;
                let payload = if end <= win_off + win.len() as u64 {
                    win[start..start + len as usize].to_vec()
                } else {
                    read(at + HEADER_LEN as u64, len as usize)?
                };
                if mask_crc(crc32c::crc32c(&payload)) == pcrc {
                    out.first_record.get_or_insert(at);
                    match sync_mark::parse(&payload) {
                        Some(s) => out.synced = out.synced.max(s),
                        None => {
                            out.records += 1;
                            out.entries += sync_mark::entries(&payload);
                        }
                    }
                    at = end;
                    continue;
                }
            }
        }
        at += 1;
    }
    Ok(out)
}

/// The offset just past the last non-zero byte of `file` at or after
/// `from`, or `None` if every byte from `from` on is zero. Reads backwards
/// from the end, so a zero tail costs what it holds and no more.
fn last_nonzero(file: &dyn RandomAccessFile, path: &Path, from: u64) -> Result<Option<u64>> {
    let mut end = file.size();
    while end > from {
        let n = (end - from).min(READ_CHUNK as u64);
        let chunk = file
            .read_at(end - n, n as usize)
            .map_err(|e| Error::Io(crate::io::with_path(e, path)))?;
        if let Some(p) = chunk.iter().rposition(|&b| b != 0) {
            return Ok(Some(end - n + p as u64 + 1));
        }
        end -= n;
    }
    Ok(None)
}
