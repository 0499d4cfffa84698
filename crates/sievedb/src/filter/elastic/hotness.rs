//! The `HOTNESS` side file: the allocator's clock and every live file's
//! access count, saved so that a restart keeps what was learnt.
//!
//! Format (little-endian): magic `u32` = `"SVHT"`, version `u8` = 1, clock
//! `u64`, count `u32`, then `count` × (file number `u64`, hotness `f64`
//! bits), then the masked CRC-32C ([`crate::wal::mask_crc`]) of everything
//! before it. The file is advisory: a missing, damaged or unknown file loads
//! as `None` and the engine starts cold.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::io::FileSystem;
use crate::wal::mask_crc;

/// `"SVHT"` read as a little-endian `u32`.
pub const HOTNESS_MAGIC: u32 = u32::from_le_bytes(*b"SVHT");
/// The format version written.
pub const HOTNESS_VERSION: u8 = 1;
/// Bytes before the entries: magic, version, clock, count.
const HEADER_LEN: usize = 4 + 1 + 8 + 4;
/// Bytes per entry: number and hotness.
const ENTRY_LEN: usize = 16;

/// What the side file holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HotnessSnapshot {
    /// The allocator's logical clock (Gets so far).
    pub clock: u64,
    /// `(file number, hotness)` per live file.
    pub files: Vec<(u64, f64)>,
}

/// `HOTNESS` in database directory `dir`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join("HOTNESS")
}

/// `HOTNESS.tmp`, written then renamed over [`path`].
pub fn tmp_path(dir: &Path) -> PathBuf {
    dir.join("HOTNESS.tmp")
}

/// The file's bytes.
pub fn encode(snap: &HotnessSnapshot) -> Vec<u8> {
    let mut b = Vec::with_capacity(HEADER_LEN + snap.files.len() * ENTRY_LEN + 4);
    b.extend_from_slice(&HOTNESS_MAGIC.to_le_bytes());
    b.push(HOTNESS_VERSION);
    b.extend_from_slice(&snap.clock.to_le_bytes());
    b.extend_from_slice(&(snap.files.len() as u32).to_le_bytes());
    for &(number, hot) in &snap.files {
        b.extend_from_slice(&number.to_le_bytes());
        b.extend_from_slice(&hot.to_bits().to_le_bytes());
    }
    let crc = mask_crc(crc32c::crc32c(&b));
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Parses the file's bytes: `None` if they are not a whole, intact version-1
/// file (wrong magic, version, length or checksum) or hold a hotness that is
/// negative or not finite. Never panics.
pub fn decode(b: &[u8]) -> Option<HotnessSnapshot> {
    if b.len() < HEADER_LEN + 4 || u32_at(b, 0)? != HOTNESS_MAGIC || b[4] != HOTNESS_VERSION {
        return None;
    }
    let body = b.len() - 4;
    if mask_crc(crc32c::crc32c(&b[..body])) != u32_at(b, body)? {
        return None;
    }
    let clock = u64_at(b, 5)?;
    let count = u32_at(b, 13)? as usize;
    if count.checked_mul(ENTRY_LEN)?.checked_add(HEADER_LEN)? != body {
        return None;
    }
    let mut files = Vec::with_capacity(count);
    for i in 0..count {
        let at = HEADER_LEN + i * ENTRY_LEN;
        let hot = f64::from_bits(u64_at(b, at + 8)?);
        if !hot.is_finite() || hot < 0.0 {
            return None;
        }
        files.push((u64_at(b, at)?, hot));
    }
    Some(HotnessSnapshot { clock, files })
}

/// Writes the side file: `HOTNESS.tmp` written, renamed over `HOTNESS`.
/// With `durable`, the file is synced before the rename and the directory
/// after it. Without, a crash may leave a damaged or empty `HOTNESS`, which
/// loads as `None`: the file is advisory, so writes made while the database
/// runs skip the fsyncs and only the one at close pays them.
pub fn save(fs: &dyn FileSystem, dir: &Path, snap: &HotnessSnapshot, durable: bool) -> Result<()> {
    let tmp = tmp_path(dir);
    let mut file = fs.create(&tmp)?;
    file.append(&encode(snap))?;
    if durable {
        file.sync()?;
    } else {
        file.flush()?;
    }
    drop(file);
    fs.rename(&tmp, &path(dir))?;
    if durable {
        fs.sync_dir(dir)?;
    }
    Ok(())
}

/// Reads the side file: `Ok(None)` if it is absent, damaged or of an unknown
/// version (hotness is advisory); an error only if it exists and cannot be
/// read.
pub fn load(fs: &dyn FileSystem, dir: &Path) -> Result<Option<HotnessSnapshot>> {
    let p = path(dir);
    if !fs.exists(&p) {
        return Ok(None);
    }
    match fs.read_all(&p) {
        Ok(bytes) => Ok(decode(&bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::StdFs;

    fn sample() -> HotnessSnapshot {
        HotnessSnapshot {
            clock: 123_456_789,
            files: vec![(7, 0.0), (9, 1.5), (1 << 40, 12_345.25)],
        }
    }

    #[test]
    fn hotness_round_trip() {
        let s = sample();
        let b = encode(&s);
        assert_eq!(&b[..4], b"SVHT");
        assert_eq!(b.len(), HEADER_LEN + 3 * ENTRY_LEN + 4);
        assert_eq!(decode(&b), Some(s));
        let empty = HotnessSnapshot::default();
        assert_eq!(decode(&encode(&empty)), Some(empty));
    }

    #[test]
    fn hotness_damage_is_none_never_panic() {
        let b = encode(&sample());
        for len in 0..b.len() {
            assert_eq!(decode(&b[..len]), None, "truncated to {len}");
        }
        for i in 0..b.len() {
            for bit in 0..8 {
                let mut d = b.clone();
                d[i] ^= 1 << bit;
                assert_eq!(decode(&d), None, "flipped byte {i} bit {bit}");
            }
        }
        let mut longer = b.clone();
        longer.push(0);
        assert_eq!(decode(&longer), None);
        // Unknown version with a valid checksum.
        let mut v2 = b[..b.len() - 4].to_vec();
        v2[4] = 2;
        let crc = mask_crc(crc32c::crc32c(&v2));
        v2.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(decode(&v2), None);
        // A huge count with a valid checksum.
        let mut big = b[..HEADER_LEN].to_vec();
        big[13..17].copy_from_slice(&u32::MAX.to_le_bytes());
        let crc = mask_crc(crc32c::crc32c(&big));
        big.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(decode(&big), None);
        // Arbitrary bytes.
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        for _ in 0..2_000 {
            let len = rng.gen_range(0..80);
            let junk: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            let _ = decode(&junk);
        }
    }

    #[test]
    fn hotness_save_load() {
        let dir = tempfile::tempdir().unwrap();
        let fs = StdFs;
        assert_eq!(load(&fs, dir.path()).unwrap(), None);
        save(&fs, dir.path(), &sample(), true).unwrap();
        assert!(!fs.exists(&tmp_path(dir.path())));
        assert_eq!(load(&fs, dir.path()).unwrap(), Some(sample()));
        let next = HotnessSnapshot {
            clock: 5,
            files: vec![(1, 2.0)],
        };
        save(&fs, dir.path(), &next, false).unwrap();
        assert_eq!(load(&fs, dir.path()).unwrap(), Some(next));
        std::fs::write(path(dir.path()), b"SVHT garbage").unwrap();
        assert_eq!(load(&fs, dir.path()).unwrap(), None);
    }
}
