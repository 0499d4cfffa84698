//! Opens an SST and serves point lookups and scans from it.
//!
//! Opening reads the footer, then the index (of a two-level index, its top
//! level), properties and filter index blocks, each parsed once and kept in
//! memory; a lookup reads at most one data block (and, of a two-level index,
//! one index partition, through the block cache; see `index`). The filter's units are not kept here: they are loaded on
//! demand ([`TableReader::load_filter_units`], in `filter_load`) into the file's resident
//! filter, which the filter budget manages (see [`crate::filter::budget`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::block::{Block, BlockIter};
use super::meta::TableMeta;
use super::{
    block_crc, BlockHandle, Properties, COMPRESSION_LZ4, COMPRESSION_NONE, COMPRESSION_ZSTD,
    FOOTER_LEN, MAX_BLOCK_LEN, TRAILER_LEN,
};
use crate::cache::BlockCache;
use crate::coding::u32_at;
use crate::error::{Error, Result};
use crate::filter::digest::Phase;
use crate::filter::prefix::PrefixFilter;
use crate::filter::{FilterIndex, KeyProbe};
use crate::io::{Access, FileMap, FileSystem, RandomAccessFile};
use crate::iter::InternalIterator;
use crate::key::{self, SeqNo};
use crate::memtable::Lookup;
use crate::range_del::RangeTombstone;
use crate::stats::{bump, Counters, FALSE_POSITIVES};
use index::IndexIter;

/// An open SST.
pub struct TableReader {
    number: u64,
    path: PathBuf,
    file: Arc<dyn RandomAccessFile>,
    /// The file's map when it is read mapped: uncompressed data blocks are
    /// then used in place, with no copy (see [`Access::Mapped`]).
    map: Option<Arc<FileMap>>,
    /// What opening the file read: index, fences, properties, range
    /// tombstones, filter index (shared with the table cache's metadata
    /// cache, so that reopening the file reads none of it again).
    meta: Arc<TableMeta>,
    cache: Option<Arc<BlockCache>>,
    counters: Arc<Counters>,
    verify: bool,
    /// Busy wait added to each data block read from the file (emulated device latency).
    io_delay_ns: u64,
}

/// Per-call read settings.
#[derive(Clone, Copy, Debug)]
pub struct ReadCtx {
    /// Level the file is read at (for per-level counters).
    pub level: usize,
    /// Whether blocks read from the file enter the block cache.
    pub fill_cache: bool,
    /// Whether data blocks read from the file have their checksum checked
    /// (when the table checks checksums at all, see
    /// [`crate::Options::verify_checksums`]). A block read unchecked does not
    /// enter the block cache, so the cache only holds checked blocks.
    pub verify_checksums: bool,
}

impl ReadCtx {
    /// A context for `level` with the default policy: fill the cache and
    /// check checksums.
    pub fn new(level: usize) -> Self {
        ReadCtx {
            level,
            fill_cache: true,
            verify_checksums: true,
        }
    }
}

impl TableReader {
    /// Opens SST `number` at `path`, read with `pread` (with O_DIRECT when
    /// `direct`).
    pub fn open(
        fs: &dyn FileSystem,
        path: &Path,
        number: u64,
        direct: bool,
        verify: bool,
        cache: Option<Arc<BlockCache>>,
        counters: Arc<Counters>,
    ) -> Result<TableReader> {
        let access = if direct {
            Access::Direct
        } else {
            Access::Buffered
        };
        Self::open_access(fs, path, number, access, verify, cache, counters)
    }

    /// Opens SST `number` at `path`, read as `access` says.
    pub fn open_access(
        fs: &dyn FileSystem,
        path: &Path,
        number: u64,
        access: Access,
        verify: bool,
        cache: Option<Arc<BlockCache>>,
        counters: Arc<Counters>,
    ) -> Result<TableReader> {
        let file = Self::open_file(fs, path, access)?;
        Self::from_file(file, path, number, verify, cache, counters)
    }

    /// Opens the file of an SST at `path` as `access` says (what a table
    /// open does before it reads anything).
    pub fn open_file(
        fs: &dyn FileSystem,
        path: &Path,
        access: Access,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        let direct = access == Access::Direct;
        access.open(fs, path).map_err(|e| {
            if direct && crate::io::os_error(&e) == Some(libc::EINVAL) {
                Error::Unsupported(format!(
                    "the file system of {} refuses O_DIRECT (use_direct_reads)",
                    path.display()
                ))
            } else {
                Error::Io(e)
            }
        })
    }

    /// Opens SST `number` from an already open file (`path` names it in
    /// errors), reading its metadata ([`TableMeta::read`]).
    pub fn from_file(
        file: Arc<dyn RandomAccessFile>,
        path: &Path,
        number: u64,
        verify: bool,
        cache: Option<Arc<BlockCache>>,
        counters: Arc<Counters>,
    ) -> Result<TableReader> {
        let meta = Arc::new(TableMeta::read(&file, path, &counters)?);
        Ok(Self::with_meta(
            file, path, number, verify, cache, counters, meta,
        ))
    }

    /// Opens SST `number` from an already open file with the metadata an
    /// earlier open of the same file read: no read at all. Counts a table
    /// open (`table_opens`) with no reads.
    pub fn with_meta(
        file: Arc<dyn RandomAccessFile>,
        path: &Path,
        number: u64,
        verify: bool,
        cache: Option<Arc<BlockCache>>,
        counters: Arc<Counters>,
        meta: Arc<TableMeta>,
    ) -> TableReader {
        bump(&counters.table_opens, 1);
        TableReader {
            number,
            path: path.to_path_buf(),
            map: file.map().cloned(),
            file,
            meta,
            cache,
            counters,
            verify,
            io_delay_ns: 0,
        }
    }

    /// A reader of `file` for [`TableMeta::read`]: checksums on, no cache,
    /// no metadata yet, not counted as an open.
    pub(super) fn for_metadata(
        file: Arc<dyn RandomAccessFile>,
        path: &Path,
        counters: Arc<Counters>,
    ) -> TableReader {
        TableReader {
            number: 0,
            path: path.to_path_buf(),
            map: None,
            file,
            meta: Arc::new(TableMeta::empty()),
            cache: None,
            counters,
            verify: true,
            io_delay_ns: 0,
        }
    }

    /// What opening the file read, shared by every open of it.
    pub fn meta(&self) -> &Arc<TableMeta> {
        &self.meta
    }

    /// Adds `ns` nanoseconds of busy wait to every data block this table
    /// reads from its file (see [`crate::Options::io_delay_ns`]).
    #[must_use]
    pub fn with_io_delay_ns(mut self, ns: u64) -> Self {
        self.io_delay_ns = ns;
        self
    }

    #[cfg(any(test, feature = "internals"))]
    /// The file number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The file's range tombstones, sorted by start (empty for most files).
    pub fn range_dels(&self) -> &[RangeTombstone] {
        &self.meta.range_dels
    }

    /// The newest sequence `<= read_seq` of the file's range tombstones
    /// covering `user_key` (0: none), in `O(log n)`.
    pub fn max_covering(&self, user_key: &[u8], read_seq: SeqNo) -> SeqNo {
        self.meta.range_del_frags.max_seq_at(user_key, read_seq)
    }

    /// The file's properties.
    pub fn properties(&self) -> &Properties {
        &self.meta.props
    }

    /// The table's filter index, if it has a filter.
    pub fn filter_index(&self) -> Option<&Arc<FilterIndex>> {
        self.meta.filter.as_ref()
    }

    /// The table's prefix filter, if it has one.
    pub fn prefix_filter(&self) -> Option<&Arc<PrefixFilter>> {
        self.meta.prefix_filter.as_ref()
    }

    /// Whether the file may hold a key of `probe`'s prefix under the
    /// extractor named `extractor`: false only when its prefix filter, built
    /// under that extractor, rules the prefix out (no block is read).
    pub fn may_contain_prefix(&self, extractor: &str, probe: &mut KeyProbe<'_>) -> bool {
        self.meta
            .prefix_filter
            .as_ref()
            .is_none_or(|f| f.may_contain(extractor, probe))
    }

    /// Reads a block and its trailer, checks the CRC and decompresses it.
    pub(super) fn read_raw(&self, h: BlockHandle) -> Result<Vec<u8>> {
        self.read_raw_with(h, true)
    }

    /// [`Self::read_raw`], the CRC checked only when `verify` (and the table
    /// checks checksums).
    fn read_raw_with(&self, h: BlockHandle, verify: bool) -> Result<Vec<u8>> {
        let len = self.check_handle(h)?;
        let mut buf = self
            .file
            .read_at(h.offset, len + TRAILER_LEN)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::UnexpectedEof => {
                    Error::corruption(&self.path, "block extends past the end of the file")
                }
                _ => Error::Io(e),
            })?;
        bump(&self.counters.bytes_read, buf.len() as u64);
        let ctype = self.check_trailer(h, &buf, verify)?;
        if ctype == COMPRESSION_NONE {
            buf.truncate(len);
            return Ok(buf);
        }
        self.decompress(h, ctype, &buf[..len])
    }

    /// Block `h` taken from `buf` (bytes of the file from offset `start`)
    /// instead of read, checked and decompressed as [`Self::read_raw`] does;
    /// `None` when it and its trailer do not lie wholly inside `buf`.
    pub(super) fn raw_from(
        &self,
        h: BlockHandle,
        start: u64,
        buf: &[u8],
    ) -> Option<Result<Vec<u8>>> {
        let len = match self.check_handle(h) {
            Ok(len) => len,
            Err(e) => return Some(Err(e)),
        };
        let from = usize::try_from(h.offset.checked_sub(start)?).ok()?;
        let raw = buf.get(from..from.checked_add(len + TRAILER_LEN)?)?;
        bump(&self.counters.bytes_read, raw.len() as u64);
        Some(self.check_trailer(h, raw, true).and_then(|ctype| {
            if ctype == COMPRESSION_NONE {
                Ok(raw[..len].to_vec())
            } else {
                self.decompress(h, ctype, &raw[..len])
            }
        }))
    }

    /// The size of block `h` if it and its trailer lie before the footer.
    fn check_handle(&self, h: BlockHandle) -> Result<usize> {
        if !h.fits(self.file.size().saturating_sub(FOOTER_LEN as u64)) {
            return Err(Error::corruption(
                &self.path,
                format!(
                    "block handle {}+{} beyond the end of the file",
                    h.offset, h.size
                ),
            ));
        }
        usize::try_from(h.size).map_err(|_| Error::corruption(&self.path, "block size overflows"))
    }

    /// The compression type in the trailer of `raw` (block `h` and its
    /// trailer), the CRC checked when `verify` (and the table checks them).
    fn check_trailer(&self, h: BlockHandle, raw: &[u8], verify: bool) -> Result<u8> {
        let len = raw.len() - TRAILER_LEN;
        let ctype = raw[len];
        if self.verify && verify && block_crc(&raw[..len], ctype) != u32_at(raw, len + 1) {
            return Err(Error::corruption(
                &self.path,
                format!("block checksum mismatch at offset {}", h.offset),
            ));
        }
        Ok(ctype)
    }

    /// Block `h`'s bytes of compression type `ctype` (not `NONE`), decompressed.
    fn decompress(&self, h: BlockHandle, ctype: u8, body: &[u8]) -> Result<Vec<u8>> {
        decompress(ctype, body).map_err(|e| {
            Error::corruption(&self.path, format!("{e} (block at offset {})", h.offset))
        })
    }

    /// Data block `h` read from the file: from its map when it has one (an
    /// uncompressed block is used in place), else with `pread`.
    fn fetch_block(&self, h: BlockHandle, verify: bool) -> Result<Block> {
        let corrupt = |d: String| Error::corruption(&self.path, format!("data block: {d}"));
        let Some(map) = &self.map else {
            return Block::new(self.read_raw_with(h, verify)?).map_err(corrupt);
        };
        let len = self.check_handle(h)?;
        // `check_handle` bounds the block and trailer by the file size, which
        // is the map's length; `get` keeps an out-of-range handle an error.
        let start = h.offset as usize;
        let raw = start
            .checked_add(len + TRAILER_LEN)
            .and_then(|end| map.bytes().get(start..end))
            .ok_or_else(|| {
                Error::corruption(&self.path, "block extends past the end of the file")
            })?;
        bump(&self.counters.bytes_read, raw.len() as u64);
        match self.check_trailer(h, raw, verify)? {
            COMPRESSION_NONE => Block::mapped(map.clone(), start, len).map_err(corrupt),
            ctype => Block::new(self.decompress(h, ctype, &raw[..len])?).map_err(corrupt),
        }
    }

    fn read_block(&self, h: BlockHandle, ctx: ReadCtx) -> Result<Arc<Block>> {
        bump(
            &self.counters.levels[ctx.level.min(self.counters.levels.len() - 1)].data_block_reads,
            1,
        );
        let key = (self.number, h.offset);
        if let Some(map) = &self.map {
            // Overlap the block's memory (and TLB) misses with the cache
            // lookup: on a miss it is read at once.
            let start = usize::try_from(h.offset).unwrap_or(usize::MAX);
            let end = usize::try_from(h.size)
                .ok()
                .and_then(|n| start.checked_add(n)?.checked_add(TRAILER_LEN));
            map.prefetch(start, end.unwrap_or(0));
        }
        if let Some(c) = &self.cache {
            if let Some(b) = c.get(&key) {
                bump(&self.counters.block_cache_hits, 1);
                return Ok(b);
            }
        }
        bump(&self.counters.block_cache_misses, 1);
        crate::clock::spin_wait_ns(self.io_delay_ns);
        let block = Arc::new(self.fetch_block(h, ctx.verify_checksums)?);
        let checked = ctx.verify_checksums || !self.verify;
        if ctx.fill_cache && checked {
            if let Some(c) = &self.cache {
                c.insert(key, block.clone());
            }
        }
        Ok(block)
    }

    /// The file offset of the data block where internal key `ikey` would be
    /// (the end of the data blocks if it follows every key): the basis of
    /// [`crate::Db::approximate_size`]. Reads only the index (in memory; of
    /// a two-level index, one partition through the block cache).
    pub fn approximate_offset(&self, ikey: &[u8]) -> Result<u64> {
        let ctx = ReadCtx {
            level: 0,
            fill_cache: true,
            verify_checksums: true,
        };
        Ok(self
            .index_search(ikey, ctx)?
            .map_or(self.meta.data_end, |h| h.offset))
    }

    /// Offset just past the last data block.
    pub fn data_end(&self) -> u64 {
        self.meta.data_end
    }

    fn decode_handle(&self, v: &[u8]) -> Result<BlockHandle> {
        BlockHandle::decode(v)
            .ok_or_else(|| Error::corruption(&self.path, "bad block handle in index"))
    }

    /// Looks up the newest entry for `probe.key()` with sequence `<= seq`,
    /// past the filter: when `filtered` (resident filter units let the key
    /// through), an absent key counts as a false positive of the filter.
    pub fn get(
        &self,
        probe: &mut KeyProbe<'_>,
        seek: &[u8],
        ctx: ReadCtx,
        filtered: bool,
        covered: SeqNo,
    ) -> Result<Lookup> {
        let result = self.search(probe, seek, ctx, covered)?;
        if result == Lookup::Absent && filtered {
            match probe.tally.levels.get_mut(ctx.level) {
                Some(row) => row[FALSE_POSITIVES] += 1,
                None => {
                    let lc = &self.counters.levels[ctx.level.min(self.counters.levels.len() - 1)];
                    bump(&lc.filter_false_positives, 1);
                }
            }
        }
        Ok(result)
    }

    /// Index search then one data block (each phase timed for sampled lookups).
    fn search(
        &self,
        probe: &mut KeyProbe<'_>,
        seek: &[u8],
        ctx: ReadCtx,
        covered: SeqNo,
    ) -> Result<Lookup> {
        let start = probe.phase_start();
        let h = self.index_search(seek, ctx);
        probe.phase_end(start, Phase::Index);
        let Some(h) = h? else {
            return Ok(Lookup::Absent);
        };
        let start = probe.phase_start();
        let r = self.block_search(probe.key(), seek, h, ctx, covered);
        probe.phase_end(start, Phase::Data);
        r
    }

    /// Searches data block `h` for the newest entry of `user_key` at `seek`;
    /// an entry with sequence `<= covered` (range-deleted) reads as deleted.
    fn block_search(
        &self,
        user_key: &[u8],
        seek: &[u8],
        h: BlockHandle,
        ctx: ReadCtx,
        covered: SeqNo,
    ) -> Result<Lookup> {
        let block = self.read_block(h, ctx)?;
        with_scratch(|scratch| {
            let e = match block.seek_entry(seek, scratch) {
                Ok(Some(e)) if key::user_key(e.key) == user_key => e,
                Ok(_) => return Ok(Lookup::Absent),
                Err(e) => return Err(super::block::corruption(&self.path, &e)),
            };
            if key::seq_of(e.key) <= covered {
                return Ok(Lookup::Deleted);
            }
            Ok(Lookup::of(key::kind_of(e.key), e.value))
        })
    }

    /// Reads every entry (checksums verified, the block cache left alone):
    /// how many there are and the largest sequence number among them and
    /// the range tombstones. An entry whose key does not parse is
    /// [`Error::Corruption`] naming the file.
    pub fn scan_sequences(self: &Arc<Self>) -> Result<(u64, SeqNo)> {
        let mut it = self.iter(ReadCtx {
            level: 0,
            fill_cache: false,
            verify_checksums: true,
        });
        let mut max_seq = self.range_dels().iter().map(|t| t.seq).max().unwrap_or(0);
        let mut entries = 0u64;
        it.seek_to_first()?;
        while it.valid() {
            let p = key::parse(it.key())
                .ok_or_else(|| Error::corruption(&self.path, "an entry's key does not parse"))?;
            max_seq = max_seq.max(p.seq);
            entries += 1;
            it.next()?;
        }
        Ok((entries, max_seq))
    }

    /// A cursor over all entries.
    pub fn iter(self: &Arc<Self>, ctx: ReadCtx) -> TableIter {
        TableIter {
            table: self.clone(),
            index: IndexIter::new(self),
            data: None,
            ctx,
        }
    }
}

/// A cursor over one SST.
pub struct TableIter {
    table: Arc<TableReader>,
    index: IndexIter,
    data: Option<BlockIter>,
    ctx: ReadCtx,
}

impl TableIter {
    fn check(&self, it: &BlockIter) -> Result<()> {
        match it.error() {
            Some(e) => Err(super::block::corruption(&self.table.path, e)),
            None => Ok(()),
        }
    }

    fn load_data(&mut self) -> Result<()> {
        self.index.check(&self.table)?;
        if !self.index.valid() {
            self.data = None;
            return Ok(());
        }
        let h = self.table.decode_handle(self.index.value())?;
        self.data = Some(BlockIter::new(self.table.read_block(h, self.ctx)?));
        Ok(())
    }

    /// Skips empty data blocks backward.
    fn settle_back(&mut self) -> Result<()> {
        loop {
            match &self.data {
                Some(d) if d.valid() => return Ok(()),
                Some(d) => {
                    self.check(d)?;
                    self.index.prev(&self.table, self.ctx)?;
                    self.load_data()?;
                    if let Some(d) = &mut self.data {
                        d.seek_to_last()?;
                    }
                }
                None => return Ok(()),
            }
        }
    }

    /// Skips empty data blocks forward.
    fn settle(&mut self) -> Result<()> {
        loop {
            match &self.data {
                Some(d) if d.valid() => return Ok(()),
                Some(d) => {
                    self.check(d)?;
                    self.index.next(&self.table, self.ctx)?;
                    self.load_data()?;
                    if let Some(d) = &mut self.data {
                        d.seek_to_first()?;
                    }
                }
                None => return Ok(()),
            }
        }
    }
}

impl InternalIterator for TableIter {
    fn valid(&self) -> bool {
        self.data.as_ref().is_some_and(|d| d.valid())
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.index.seek_to_first(&self.table, self.ctx)?;
        self.load_data()?;
        if let Some(d) = &mut self.data {
            d.seek_to_first()?;
        }
        self.settle()
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.index.seek(target, &self.table, self.ctx)?;
        self.load_data()?;
        if let Some(d) = &mut self.data {
            d.seek(target)?;
        }
        self.settle()
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.index.seek_to_last(&self.table, self.ctx)?;
        self.load_data()?;
        if let Some(d) = &mut self.data {
            d.seek_to_last()?;
        }
        self.settle_back()
    }
    fn next(&mut self) -> Result<()> {
        if let Some(d) = &mut self.data {
            d.next()?;
        }
        self.settle()
    }
    fn prev(&mut self) -> Result<()> {
        if let Some(d) = &mut self.data {
            d.prev()?;
        }
        self.settle_back()
    }
    #[expect(
        clippy::expect_used,
        reason = "the iterator traits call `key` only while valid, when a data block is open"
    )]
    fn key(&self) -> &[u8] {
        self.data.as_ref().expect("valid iterator").key()
    }
    #[expect(
        clippy::expect_used,
        reason = "the iterator traits call `value` only while valid, when a data block is open"
    )]
    fn value(&self) -> &[u8] {
        self.data.as_ref().expect("valid iterator").value()
    }
}

/// Runs `f` with this thread's key buffer for block searches (so a point
/// lookup rebuilds prefix-compressed keys without allocating).
fn with_scratch<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => f(&mut buf),
        // Not reached (searches do not nest); a fresh buffer keeps it correct.
        Err(_) => f(&mut Vec::new()),
    })
}

/// The body of a block stored with compression `ctype` (its trailer's
/// byte), decompressed (an uncompressed body is copied); the error names the
/// compression and what is wrong. Readers and repair's salvage share it.
pub fn decompress(ctype: u8, body: &[u8]) -> std::result::Result<Vec<u8>, String> {
    match ctype {
        COMPRESSION_NONE => Ok(body.to_vec()),
        COMPRESSION_LZ4 => {
            lz4_flex::block::decompress_size_prepended(body).map_err(|e| format!("LZ4 block: {e}"))
        }
        COMPRESSION_ZSTD => zstd_decompress(body).map_err(|e| format!("zstd block: {e}")),
        c => Err(format!("unknown compression type {c}")),
    }
}

/// Decompresses a zstd block: one frame that must record its uncompressed
/// size (at most [`MAX_BLOCK_LEN`]) and decode to exactly that many bytes.
fn zstd_decompress(frame: &[u8]) -> std::result::Result<Vec<u8>, String> {
    thread_local! {
        /// One decompression context per thread, reused across blocks.
        static DCTX: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    let len = match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(n)) if n <= MAX_BLOCK_LEN as u64 => n as usize,
        Ok(Some(n)) => return Err(format!("claims {n} bytes, more than a block may hold")),
        Ok(None) => return Err("frame does not record its size".into()),
        Err(_) => return Err("not a zstd frame".into()),
    };
    DCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?);
        }
        #[expect(clippy::expect_used, reason = "set just above when there was none")]
        let d = slot.as_mut().expect("just set");
        let out = d.decompress(frame, len).map_err(|e| e.to_string())?;
        if out.len() != len {
            return Err(format!("decoded {} bytes, frame says {len}", out.len()));
        }
        Ok(out)
    })
}

mod filter_load;
mod index;
#[cfg(test)]
pub(crate) mod tests;
