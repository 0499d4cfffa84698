//! A table's index, one-level or two-level: the search of a point lookup
//! and the cursor of an iterator.
//!
//! A one-level index is the index block itself, resident with the table's
//! metadata. A two-level index (format version 2) keeps only its top level
//! resident: one entry per index partition, keyed by the partition's last
//! key; a partition is an index block over a run of data blocks, read on
//! demand through the block cache as a data block is (a hit costs no read, a
//! miss is counted in `block_cache_misses` and `index_partition_reads`).

use std::sync::Arc;

use super::{with_scratch, ReadCtx, TableReader};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::sst::block::{corruption, Block, BlockIter};
use crate::sst::BlockHandle;
use crate::stats::bump;

impl TableReader {
    /// The handle of the only data block that may hold `seek`'s user key
    /// (of a two-level index, found in the partition the top level names,
    /// which is read as `ctx` says).
    pub(super) fn index_search(&self, seek: &[u8], ctx: ReadCtx) -> Result<Option<BlockHandle>> {
        let top = self.top_search(seek)?;
        if !self.meta.two_level {
            return Ok(top);
        }
        let Some(h) = top else {
            return Ok(None);
        };
        let part = self.read_index_partition(h, ctx)?;
        with_scratch(|scratch| match part.seek_entry(seek, scratch) {
            Ok(Some(e)) => self.decode_handle(e.value).map(Some),
            // The top level's key is the partition's last: a key at or
            // before it is found in it, so an empty answer is a bad file.
            Ok(None) => Err(Error::corruption(
                &self.path,
                "index partition ends before its top-level key",
            )),
            Err(e) => Err(corruption(&self.path, &e)),
        })
    }

    /// The first entry of the resident index block at or after `seek`.
    fn top_search(&self, seek: &[u8]) -> Result<Option<BlockHandle>> {
        if let Some(f) = &self.meta.fences {
            return f
                .seek(&self.meta.index, seek)
                .map_err(|e| corruption(&self.path, &e));
        }
        with_scratch(|scratch| match self.meta.index.seek_entry(seek, scratch) {
            Ok(Some(e)) => self.decode_handle(e.value).map(Some),
            Ok(None) => Ok(None),
            Err(e) => Err(corruption(&self.path, &e)),
        })
    }

    /// Index partition `h`, from the block cache or the file (its checksum
    /// always checked: a partition names every block of its range).
    fn read_index_partition(&self, h: BlockHandle, ctx: ReadCtx) -> Result<Arc<Block>> {
        let key = (self.number, h.offset);
        if let Some(c) = &self.cache {
            if let Some(b) = c.get(&key) {
                bump(&self.counters.block_cache_hits, 1);
                return Ok(b);
            }
        }
        bump(&self.counters.block_cache_misses, 1);
        bump(&self.counters.index_partition_reads, 1);
        let block = Arc::new(self.fetch_block(h, true)?);
        if ctx.fill_cache {
            if let Some(c) = &self.cache {
                c.insert(key, block.clone());
            }
        }
        Ok(block)
    }
}

/// A cursor over a table's index entries (one per data block), whichever
/// its shape.
pub(super) struct IndexIter {
    /// The resident index block: the whole index, or its top level.
    top: BlockIter,
    /// The current partition of a two-level index (`None`: one-level, or
    /// not positioned).
    part: Option<BlockIter>,
    two_level: bool,
}

impl IndexIter {
    /// A cursor over `table`'s index, not yet positioned.
    pub(super) fn new(table: &TableReader) -> IndexIter {
        IndexIter {
            top: BlockIter::new(table.meta.index.clone()),
            part: None,
            two_level: table.meta.two_level,
        }
    }

    /// The entry's block handle bytes (call only while [`Self::valid`]).
    pub(super) fn value(&self) -> &[u8] {
        match &self.part {
            Some(p) => p.value(),
            None => self.top.value(),
        }
    }

    /// Whether the cursor is at an entry.
    pub(super) fn valid(&self) -> bool {
        if self.two_level {
            self.part.as_ref().is_some_and(BlockIter::valid)
        } else {
            self.top.valid()
        }
    }

    /// A decoding error either level met, as a corruption of `t`'s file.
    pub(super) fn check(&self, t: &TableReader) -> Result<()> {
        let err = self
            .top
            .error()
            .or_else(|| self.part.as_ref().and_then(BlockIter::error));
        match err {
            Some(e) => Err(corruption(&t.path, e)),
            None => Ok(()),
        }
    }

    /// Opens the partition the top level is at (none past its end).
    fn load(&mut self, t: &TableReader, ctx: ReadCtx) -> Result<()> {
        self.part = None;
        if let Some(e) = self.top.error() {
            return Err(corruption(&t.path, e));
        }
        if self.top.valid() {
            let h = t.decode_handle(self.top.value())?;
            self.part = Some(BlockIter::new(t.read_index_partition(h, ctx)?));
        }
        Ok(())
    }

    /// Moves to the first entry at or after `target`.
    pub(super) fn seek(&mut self, target: &[u8], t: &TableReader, ctx: ReadCtx) -> Result<()> {
        self.top.seek(target)?;
        if !self.two_level {
            return Ok(());
        }
        self.load(t, ctx)?;
        if let Some(p) = &mut self.part {
            p.seek(target)?;
        }
        self.skip_forward(t, ctx)
    }

    /// Moves to the first entry.
    pub(super) fn seek_to_first(&mut self, t: &TableReader, ctx: ReadCtx) -> Result<()> {
        self.top.seek_to_first()?;
        if !self.two_level {
            return Ok(());
        }
        self.load(t, ctx)?;
        if let Some(p) = &mut self.part {
            p.seek_to_first()?;
        }
        self.skip_forward(t, ctx)
    }

    /// Moves to the last entry.
    pub(super) fn seek_to_last(&mut self, t: &TableReader, ctx: ReadCtx) -> Result<()> {
        self.top.seek_to_last()?;
        if !self.two_level {
            return Ok(());
        }
        self.load(t, ctx)?;
        if let Some(p) = &mut self.part {
            p.seek_to_last()?;
        }
        self.skip_back(t, ctx)
    }

    /// Moves to the next entry.
    pub(super) fn next(&mut self, t: &TableReader, ctx: ReadCtx) -> Result<()> {
        if !self.two_level {
            return self.top.next();
        }
        if let Some(p) = &mut self.part {
            p.next()?;
        }
        self.skip_forward(t, ctx)
    }

    /// Moves to the previous entry.
    pub(super) fn prev(&mut self, t: &TableReader, ctx: ReadCtx) -> Result<()> {
        if !self.two_level {
            return self.top.prev();
        }
        if let Some(p) = &mut self.part {
            p.prev()?;
        }
        self.skip_back(t, ctx)
    }

    /// Past the end of the current partition: on to the first entry of the
    /// next non-empty one (or the end).
    fn skip_forward(&mut self, t: &TableReader, ctx: ReadCtx) -> Result<()> {
        while let Some(p) = &self.part {
            if p.valid() {
                return Ok(());
            }
            self.check(t)?;
            self.top.next()?;
            self.load(t, ctx)?;
            if let Some(p) = &mut self.part {
                p.seek_to_first()?;
            }
        }
        Ok(())
    }

    /// Before the start of the current partition: back to the last entry of
    /// the previous non-empty one (or the end).
    fn skip_back(&mut self, t: &TableReader, ctx: ReadCtx) -> Result<()> {
        while let Some(p) = &self.part {
            if p.valid() {
                return Ok(());
            }
            self.check(t)?;
            self.top.prev()?;
            self.load(t, ctx)?;
            if let Some(p) = &mut self.part {
                p.seek_to_last()?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering::Relaxed;

    use super::*;
    use crate::cache::BlockCache;
    use crate::filter::{FilterOptions, HashSharing, KeyProbe};
    use crate::io::{FileSystem, StdFs};
    use crate::iter::testing::{check_bidirectional, random_entries};
    use crate::key::{self, internal_key, Kind};
    use crate::memtable::Lookup;
    use crate::options::Compression;
    use crate::sst::{Footer, TableWriter, FOOTER_LEN};
    use crate::stats::Counters;

    /// Writes `entries` in 128-byte blocks at `path`, the index cut into
    /// partitions of about `partition` bytes if set, and opens it with a
    /// block cache of `cache` bytes (0: none) and counters of its own.
    fn table(
        path: &std::path::Path,
        entries: &[(Vec<u8>, Vec<u8>)],
        partition: Option<u64>,
        cache: u64,
    ) -> Arc<TableReader> {
        let mut w = TableWriter::new(
            StdFs.create(path).unwrap(),
            1,
            128,
            4,
            Compression::None,
            &FilterOptions::default(),
        );
        w.set_index_partition_bytes(partition);
        for (k, v) in entries {
            w.add(k, v).unwrap();
        }
        w.finish().unwrap();
        let cache = (cache > 0).then(|| Arc::new(BlockCache::new(cache)));
        let counters = Arc::new(Counters::new(4));
        Arc::new(TableReader::open(&StdFs, path, 1, false, true, cache, counters).unwrap())
    }

    /// A two-level index reads as the one-level index of the same entries:
    /// every entry in both directions, every point lookup; opening it reads
    /// only the top level (a fraction of the one-level index), and a lookup
    /// reads one partition, none once the block cache holds it.
    #[test]
    fn two_level_index_reads_as_one_level() {
        let dir = tempfile::tempdir().unwrap();
        let entries = random_entries(7, 4000);
        let flat = table(&dir.path().join("flat.sst"), &entries, None, 0);
        for partition in [64, 256, 1024] {
            let path = dir.path().join(format!("{partition}.sst"));
            let t = table(&path, &entries, Some(partition), 0);
            let bytes = std::fs::read(&path).unwrap();
            let footer = Footer::decode(&bytes[bytes.len() - FOOTER_LEN..]).unwrap();
            assert!(footer.two_level() && t.meta.two_level, "{partition}");
            assert!(!flat.meta.two_level);
            // Partitions of 64 bytes hold about three entries, of 256 a dozen.
            let ratio = if partition < 256 { 2 } else { 8 };
            assert!(
                t.meta.index.size() * ratio < flat.meta.index.size(),
                "top level {} bytes, one-level index {}",
                t.meta.index.size(),
                flat.meta.index.size()
            );
            assert_eq!(t.data_end(), flat.data_end(), "{partition}");
            check_bidirectional(&mut t.iter(ReadCtx::new(0)), &entries, partition);
            let reads = || t.counters.index_partition_reads.load(Relaxed);
            let before = reads();
            let last = &entries[entries.len() - 1].0;
            // Lookups whose key is at or before the last key: each reads a partition.
            let mut within = 0;
            for (i, (k, _)) in entries.iter().enumerate() {
                let user = key::user_key(k);
                let mut p = KeyProbe::new(user, HashSharing::Levels);
                let got = t.get(&mut p, k, ReadCtx::new(0), false, 0).unwrap();
                let mut p = KeyProbe::new(user, HashSharing::Levels);
                let want = flat.get(&mut p, k, ReadCtx::new(0), false, 0).unwrap();
                assert_eq!(got, want, "{partition}: entry {i}");
                assert_ne!(got, Lookup::Absent);
                // An absent key just after it.
                let mut after = user.to_vec();
                after.push(0);
                let absent = internal_key(&after, crate::key::MAX_SEQ, Kind::Put);
                within += 2 + u64::from(key::compare(&absent, last).is_le());
                let mut p = KeyProbe::new(&after, HashSharing::Levels);
                let got = t.get(&mut p, &absent, ReadCtx::new(0), false, 0).unwrap();
                let mut p = KeyProbe::new(&after, HashSharing::Levels);
                let want = flat
                    .get(&mut p, &absent, ReadCtx::new(0), false, 0)
                    .unwrap();
                assert_eq!(got, want, "{partition}: after entry {i}");
                assert_eq!(
                    t.approximate_offset(k).unwrap(),
                    flat.approximate_offset(k).unwrap()
                );
            }
            // Without a block cache: one partition read per lookup, none for
            // a key past the last.
            assert_eq!(reads() - before, within, "{partition}");
            let past = internal_key(b"\xff\xff\xff\xff\xff\xff\xff", 1, Kind::Put);
            let mut p = KeyProbe::new(b"\xff\xff\xff\xff\xff\xff\xff", HashSharing::Levels);
            let got = t.get(&mut p, &past, ReadCtx::new(0), false, 0).unwrap();
            assert_eq!(got, Lookup::Absent);
            assert_eq!(reads() - before, within, "{partition}");
        }
        // With a block cache large enough: each partition read once.
        let t = table(
            &dir.path().join("cached.sst"),
            &entries,
            Some(256),
            64 << 20,
        );
        let parts = {
            let mut it = BlockIter::new(t.meta.index.clone());
            it.seek_to_first().unwrap();
            let mut n = 0;
            while it.valid() {
                n += 1;
                it.next().unwrap();
            }
            n
        };
        assert!(parts > 10, "{parts} partitions");
        for _ in 0..2 {
            for (k, _) in &entries {
                let mut p = KeyProbe::new(key::user_key(k), HashSharing::Levels);
                t.get(&mut p, k, ReadCtx::new(0), false, 0).unwrap();
            }
        }
        assert_eq!(t.counters.index_partition_reads.load(Relaxed), parts);
    }

    /// A damaged partition is a corruption naming the file, for lookups and
    /// iterators alike; the one-level files of the same entries are read
    /// as they always were.
    #[test]
    fn a_damaged_partition_is_a_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..2000)
            .map(|i| {
                let k = internal_key(format!("key{i:06}").as_bytes(), 1, Kind::Put);
                (k, format!("value{i}").into_bytes())
            })
            .collect();
        let path = dir.path().join("t.sst");
        let t = table(&path, &entries, Some(128), 0);
        let at = t.data_end() as usize + 3;
        drop(t);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[at] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let counters = Arc::new(Counters::new(4));
        let t = Arc::new(TableReader::open(&StdFs, &path, 1, false, true, None, counters).unwrap());
        let (k, _) = &entries[0];
        let mut p = KeyProbe::new(key::user_key(k), HashSharing::Levels);
        let err = t.get(&mut p, k, ReadCtx::new(0), false, 0).unwrap_err();
        assert!(
            err.is_corruption() && err.to_string().contains("t.sst"),
            "{err}"
        );
        let mut it = t.iter(ReadCtx::new(0));
        assert!(it.seek_to_first().unwrap_err().is_corruption());
        // The keys of the other partitions still read.
        let (k, v) = &entries[1999];
        let mut p = KeyProbe::new(key::user_key(k), HashSharing::Levels);
        let got = t.get(&mut p, k, ReadCtx::new(0), false, 0).unwrap();
        assert_eq!(got, Lookup::of(Kind::Put as u8, v));
    }
}
