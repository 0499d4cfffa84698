//! Sync marks: WAL records that say how much of their WAL was durable when
//! they were written, so that recovery can tell damage to acknowledged
//! writes from a torn tail.
//!
//! A power loss may leave the unsynced end of the newest WAL torn in any
//! way: zeros where pages never reached the disk, and after them fragments
//! that did (page cache writeback has no order). That end held no
//! acknowledged sync write, so dropping it loses nothing promised. Damage
//! before the last completed `fdatasync` is another matter: it is the
//! disk's corruption of writes acknowledged as durable. A reader cannot tell
//! the two from the bytes, so the writer leaves the evidence: the first
//! group commit after a sync completed starts with a sync mark holding the
//! WAL's size at that sync. Damage at offset `o` followed by an intact mark
//! claiming more than `o` lies in bytes that were synced; damage that no
//! intact mark covers lies past every sync the WAL can prove, and is a torn
//! tail. (The last sync before a crash is proved by no mark: damage to the
//! records it covered reads as a torn tail, as a bad last record always
//! has.)
//!
//! Payload: `seq: u64 = u64::MAX | count: u32 = 0 | synced: u64`. A write
//! batch never starts at sequence `u64::MAX` (sequence numbers are below
//! 2^56), so the two never meet; a build from before marks reads one as a
//! record that does not decode.

use crate::coding::u32_at;

/// Bytes of a sync mark's payload.
pub const LEN: usize = 20;

/// The payload of a sync mark saying the WAL's first `synced` bytes were
/// durable.
pub fn encode(synced: u64) -> [u8; LEN] {
    let mut p = [0u8; LEN];
    p[0..8].copy_from_slice(&u64::MAX.to_le_bytes());
    p[12..20].copy_from_slice(&synced.to_le_bytes());
    p
}

/// The synced size a sync mark's payload holds, or `None` if `payload` is
/// not a sync mark.
pub fn parse(payload: &[u8]) -> Option<u64> {
    if payload.len() != LEN || payload[0..8] != u64::MAX.to_le_bytes() || u32_at(payload, 8) != 0 {
        return None;
    }
    let mut b = [0u8; 8];
    b.copy_from_slice(&payload[12..20]);
    Some(u64::from_le_bytes(b))
}

/// The number of writes a record's payload holds: a batch's entry count
/// (bytes 8..12 of its header), 0 for a sync mark or a payload too short to
/// be a batch.
pub fn entries(payload: &[u8]) -> u64 {
    if payload.len() < 12 || parse(payload).is_some() {
        0
    } else {
        u64::from(u32_at(payload, 8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_round_trips_and_no_batch_reads_as_one() {
        for s in [0, 1, 4096, u64::MAX] {
            assert_eq!(parse(&encode(s)), Some(s));
            assert_eq!(entries(&encode(s)), 0);
        }
        let mut b = crate::WriteBatch::new();
        b.put("k", "v");
        let rec = b.encode(7).to_vec();
        assert_eq!(parse(&rec), None);
        assert_eq!(entries(&rec), 1);
        let mut bad = encode(3);
        bad[8] = 1;
        assert_eq!(parse(&bad), None);
        assert_eq!(parse(&encode(3)[..19]), None);
    }
}
