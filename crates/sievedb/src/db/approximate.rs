//! Approximate sizes of key ranges, from file bounds and table indexes.

use super::*;

impl DbInner {
    /// Bytes of SST data between `lo` and `hi` in the current version: a file
    /// wholly inside the range counts its size; a file the range cuts counts
    /// the distance between the data blocks where the bounds would be (read
    /// from its in-memory index). Memtables are not counted.
    fn approximate_size(&self, lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>) -> Result<u64> {
        let v = self.tree.version();
        let (lo, hi) = (bound_key(lo), bound_key(hi));
        if let (Some(l), Some(h)) = (lo, hi) {
            if l > h {
                return Ok(0);
            }
        }
        let mut total = 0u64;
        for (_, f) in v.files() {
            if !f.overlaps(lo, hi) {
                continue;
            }
            let inside_lo = lo.is_none_or(|l| f.smallest_user() >= l);
            let inside_hi = hi.is_none_or(|h| f.largest_user() < h);
            if inside_lo && inside_hi {
                total += f.size;
                continue;
            }
            let t = self.tables.get(f.number)?;
            let offset = |k: Option<&[u8]>, end: u64| -> Result<u64> {
                match k {
                    Some(k) => {
                        let mut seek = Vec::with_capacity(k.len() + 8);
                        key::append_internal_key(&mut seek, k, key::MAX_SEQ, key::KIND_FOR_SEEK);
                        t.approximate_offset(&seek)
                    }
                    None => Ok(end),
                }
            };
            let start = offset(lo, 0)?;
            let end = offset(hi, t.data_end())?;
            total += end.saturating_sub(start);
        }
        Ok(total)
    }
}

/// The key of a bound (inclusive and exclusive alike: sizes are estimated at
/// block granularity).
fn bound_key(b: &Bound<Vec<u8>>) -> Option<&[u8]> {
    match b {
        Bound::Included(k) | Bound::Excluded(k) => Some(k),
        Bound::Unbounded => None,
    }
}

impl Db {
    /// Approximate bytes of SST data holding the keys in `range` (RocksDB's
    /// `GetApproximateSizes`): files wholly inside the range count in full,
    /// a file the range cuts counts the bytes of its data blocks between the
    /// blocks where the bounds fall (found in its index, which is in memory;
    /// no data block is read). The estimate is at block granularity (a bound
    /// inside a block counts that block wholly or not at all) and measures
    /// stored (compressed) bytes. Writes still in memtables are not counted:
    /// [`flush`](Self::flush) first to include them. An empty or inverted
    /// range is 0.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
    /// for i in 0..1000u32 {
    ///     db.put(format!("k{i:04}"), [7u8; 100])?;
    /// }
    /// db.flush()?;
    /// let all = db.approximate_size::<&[u8], _>(..)?;
    /// let half = db.approximate_size(b"k0000".as_slice()..b"k0500".as_slice())?;
    /// assert!(half <= all);
    /// # Ok(()) }
    /// ```
    pub fn approximate_size<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<u64> {
        let (lo, hi) = bounds(&range)?;
        self.inner.approximate_size(&lo, &hi)
    }
}
