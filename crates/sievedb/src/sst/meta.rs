//! What opening an SST reads from its file and keeps in memory: the index
//! block (of a two-level index, the top level only) and its fences, the properties, the range tombstones, the
//! filter index (never the filter's units) and the prefix filter. It is shared by every open of
//! the file, so a table-cache miss on a file whose metadata is still held
//! (the table cache's metadata cache) opens the file and reads nothing.
//!
//! These blocks and the footer are the file's tail, contiguous (see
//! `docs/format.md`), so an open reads the file's last pages once
//! and takes every block that lies there from that one read, and when the
//! footer shows metadata starting before those bytes, reads the rest in one
//! more: an open is one or two reads, not one per block (a table cache that
//! closes and reopens files pays it on every reopen).

use std::path::Path;
use std::sync::Arc;

use super::block::Block;
use super::fences::IndexFences;
use super::reader::TableReader;
use super::{BlockHandle, Footer, Properties, FOOTER_LEN, TRAILER_LEN};
use crate::error::{Error, Result};
use crate::filter::prefix::PrefixFilter;
use crate::filter::section::UnitSource;
use crate::filter::FilterIndex;
use crate::io::RandomAccessFile;
use crate::iter::InternalIterator;
use crate::range_del::{Fragments, RangeTombstone};
use crate::stats::{bump, Counters};

/// Bytes an open reads from the end of the file at once: 1/32 of the file
/// (the index of 4 KiB blocks with keys of tens of bytes is about 1% of it),
/// at least a page and at most 32 KiB, starting on a 4 KiB boundary. The
/// footer always lies in it, and with files up to ~2 MiB the index,
/// properties, range tombstones and filter index before it.
fn tail_start(size: u64) -> u64 {
    let want = (size / 32).clamp(4 << 10, 32 << 10);
    size.saturating_sub(want) & !((4 << 10) - 1)
}

/// The most an open reads at once for metadata starting before the tail
/// (a larger span, or a damaged footer pointing far back, is read block by
/// block).
const MAX_META_READ: u64 = 64 << 20;

/// The parsed metadata of one SST.
pub struct TableMeta {
    pub(super) index: Arc<Block>,
    /// Whether `index` is the top level of a two-level index (format
    /// version 2): its entries name index partitions, read on demand
    /// through the block cache, not data blocks.
    pub(super) two_level: bool,
    /// A dense search structure over `index` for point lookups (`None`
    /// when the index is not all restart points).
    pub(super) fences: Option<IndexFences>,
    pub(super) filter: Option<Arc<FilterIndex>>,
    /// The prefix filter, resident while the metadata is (small: one
    /// digest per distinct prefix).
    pub(super) prefix_filter: Option<Arc<PrefixFilter>>,
    pub(super) props: Properties,
    /// Offset just past the last data block (data blocks come first in the
    /// file: index partitions, filter units or partitions, the filter
    /// section, or else the properties block, follow them; a unit's padding
    /// counts as data).
    pub(super) data_end: u64,
    /// The file's range tombstones, sorted by start.
    pub(super) range_dels: Vec<RangeTombstone>,
    /// The same tombstones fragmented, for point lookups.
    pub(super) range_del_frags: Fragments,
    /// Bytes of the blocks read for it (with their trailers) and the footer:
    /// about what it holds in memory.
    read_bytes: u64,
}

impl TableMeta {
    /// Reads the footer, then the index, properties, range tombstones (if
    /// any) and filter index blocks of `file` (from one read of its tail
    /// where they lie in it), every checksum checked, and
    /// counts the open in `table_opens`, `table_open_reads` and
    /// `table_open_bytes`.
    pub fn read(
        file: &Arc<dyn RandomAccessFile>,
        path: &Path,
        counters: &Arc<Counters>,
    ) -> Result<TableMeta> {
        let size = file.size();
        let corrupt = |d: String| Error::corruption(path, d);
        if size < FOOTER_LEN as u64 {
            return Err(corrupt(format!(
                "file of {size} bytes is too short for an SST"
            )));
        }
        let tail_start = tail_start(size);
        let tail_len = size - tail_start;
        let tail = file.read_at(tail_start, tail_len as usize)?;
        let footer = Footer::decode(&tail[tail.len() - FOOTER_LEN..]).map_err(corrupt)?;
        let body = size - FOOTER_LEN as u64;
        for h in [footer.index, footer.filter, footer.properties] {
            if h.size != 0 && !h.fits(body) {
                return Err(corrupt("block handle beyond the end of the file".into()));
            }
        }
        let mut meta = TableMeta::empty();
        meta.data_end = if footer.filter.size > 0 {
            footer.filter.offset.min(footer.properties.offset)
        } else {
            footer.properties.offset
        };
        // Blocks are read through a reader of this file with checksums on.
        let reader = TableReader::for_metadata(file.clone(), path, counters.clone());
        // Reads and bytes read from the file; bytes of the blocks kept.
        let (mut reads, mut bytes, mut held) = (1u64, tail_len, FOOTER_LEN as u64);
        // Metadata that starts before the tail: one more read, for all of it.
        let meta_start = [footer.filter, footer.properties, footer.index]
            .iter()
            .filter(|h| h.size > 0)
            .map(|h| h.offset)
            .min()
            .unwrap_or(tail_start);
        let (tail_start, tail) =
            if meta_start < tail_start && tail_start - meta_start <= MAX_META_READ {
                let mut head = file.read_at(meta_start, (tail_start - meta_start) as usize)?;
                reads += 1;
                bytes += tail_start - meta_start;
                head.extend_from_slice(&tail);
                (meta_start, head)
            } else {
                (tail_start, tail)
            };
        let mut read = |h: BlockHandle| {
            held += h.size + TRAILER_LEN as u64;
            reader.raw_from(h, tail_start, &tail).unwrap_or_else(|| {
                reads += 1;
                bytes += h.size + TRAILER_LEN as u64;
                reader.read_raw(h)
            })
        };
        meta.index =
            Arc::new(Block::new(read(footer.index)?).map_err(|d| corrupt(format!("index: {d}")))?);
        meta.fences = IndexFences::build(&meta.index);
        meta.two_level = footer.two_level();
        if meta.two_level {
            // The partitions follow the data blocks: the first one starts
            // where the data ends.
            let mut it = super::block::BlockIter::new(meta.index.clone());
            it.seek_to_first()?;
            if let Some(e) = it.error() {
                return Err(corrupt(format!("index: {e}")));
            }
            if it.valid() {
                let first = BlockHandle::decode(it.value())
                    .ok_or_else(|| corrupt("bad partition handle in the index".into()))?;
                meta.data_end = meta.data_end.min(first.offset);
            }
        }
        meta.props = Properties::decode(&read(footer.properties)?).map_err(corrupt)?;
        if meta.props.range_dels > 0 {
            let h = meta.props.range_del_block;
            if !h.fits(body) {
                return Err(corrupt(
                    "range tombstone block beyond the end of the file".into(),
                ));
            }
            let ts = crate::range_del::decode_block(&read(h)?)
                .map_err(|d| corrupt(format!("range tombstones: {d}")))?;
            if ts.len() as u64 != meta.props.range_dels {
                return Err(corrupt(
                    "range tombstone count disagrees with the properties".into(),
                ));
            }
            meta.range_del_frags = Fragments::new(&ts, crate::key::MAX_SEQ);
            meta.range_dels = ts;
        }
        if footer.filter.size > 0 {
            let f = read(footer.filter)?;
            let (index, _) = FilterIndex::decode(&f, footer.filter.offset, footer.filter.size)
                .map_err(|d| corrupt(format!("filter: {d}")))?;
            // The filter's units or partitions precede its index: the data
            // ends where the first of them starts.
            let first = match index.source() {
                UnitSource::Blocks(h) => h.first().map(|h| h.0),
                UnitSource::Section { offset, .. } => Some(*offset),
                UnitSource::Partitions(p) => p.parts().first().map(|p| p.offset),
            };
            meta.data_end = meta.data_end.min(first.unwrap_or(u64::MAX));
            meta.filter = Some(Arc::new(index));
        }
        let h = meta.props.prefix_filter_block;
        if h.size > 0 {
            if !h.fits(body) {
                return Err(corrupt(
                    "prefix filter block beyond the end of the file".into(),
                ));
            }
            let f = PrefixFilter::decode(&read(h)?).map_err(corrupt)?;
            meta.prefix_filter = Some(Arc::new(f));
            meta.data_end = meta.data_end.min(h.offset);
        }
        meta.read_bytes = held;
        bump(&counters.table_open_reads, reads);
        bump(&counters.table_open_bytes, bytes);
        Ok(meta)
    }

    /// Metadata of a table with an empty index and nothing else.
    #[expect(
        clippy::expect_used,
        reason = "eight bytes of no entries and one restart at 0 are a valid block"
    )]
    pub(super) fn empty() -> TableMeta {
        TableMeta {
            index: Arc::new(Block::new(vec![0, 0, 0, 0, 1, 0, 0, 0]).expect("empty block")),
            two_level: false,
            fences: None,
            filter: None,
            prefix_filter: None,
            props: Properties::default(),
            data_end: 0,
            range_dels: Vec::new(),
            range_del_frags: Fragments::default(),
            read_bytes: 0,
        }
    }

    /// About the bytes this metadata holds in memory: what was read for it
    /// plus the fences and tombstones built from it (the weight of the
    /// table cache's metadata cache).
    pub fn memory_bytes(&self) -> u64 {
        let fences = self.fences.as_ref().map_or(0, |f| f.memory_bytes());
        let tombstones = self
            .range_dels
            .iter()
            .map(|t| (t.start.len() + t.end.as_ref().map_or(0, Vec::len) + 48) as u64)
            .sum::<u64>()
            * 2;
        self.read_bytes + fences as u64 + tombstones + 256
    }
}
