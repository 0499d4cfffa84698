//! What opening an SST reads from its file and keeps in memory: the index
//! block and its fences, the properties, the range tombstones and the
//! filter index (never the filter's units). It is shared by every open of
//! the file, so a table-cache miss on a file whose metadata is still held
//! (the table cache's metadata cache) opens the file and reads nothing.

use std::path::Path;
use std::sync::Arc;

use super::block::Block;
use super::fences::IndexFences;
use super::reader::TableReader;
use super::{BlockHandle, Footer, Properties, FOOTER_LEN, TRAILER_LEN};
use crate::error::{Error, Result};
use crate::filter::FilterIndex;
use crate::io::RandomAccessFile;
use crate::range_del::{Fragments, RangeTombstone};
use crate::stats::{bump, Counters};

/// The parsed metadata of one SST.
pub struct TableMeta {
    pub(super) index: Arc<Block>,
    /// A dense search structure over `index` for point lookups (`None`
    /// when the index is not all restart points).
    pub(super) fences: Option<IndexFences>,
    pub(super) filter: Option<Arc<FilterIndex>>,
    pub(super) props: Properties,
    /// Offset just past the last data block (data blocks come first in the
    /// file: the filter section, or else the properties block, follows them).
    pub(super) data_end: u64,
    /// The file's range tombstones, sorted by start.
    pub(super) range_dels: Vec<RangeTombstone>,
    /// The same tombstones fragmented, for point lookups.
    pub(super) range_del_frags: Fragments,
    /// Bytes the file gave to read it (blocks with their trailers and the
    /// footer): about what it holds in memory.
    read_bytes: u64,
}

impl TableMeta {
    /// Reads the footer, then the index, properties, range tombstones (if
    /// any) and filter index blocks of `file`, every checksum checked, and
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
        let footer_bytes = file.read_at(size - FOOTER_LEN as u64, FOOTER_LEN)?;
        let footer = Footer::decode(&footer_bytes).map_err(corrupt)?;
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
        let (mut reads, mut bytes) = (1u64, FOOTER_LEN as u64);
        let mut read = |h: BlockHandle| {
            reads += 1;
            bytes += h.size + TRAILER_LEN as u64;
            reader.read_raw(h)
        };
        meta.index =
            Arc::new(Block::new(read(footer.index)?).map_err(|d| corrupt(format!("index: {d}")))?);
        meta.fences = IndexFences::build(&meta.index);
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
            meta.filter = Some(Arc::new(index));
        }
        meta.read_bytes = bytes;
        bump(&counters.table_open_reads, reads);
        bump(&counters.table_open_bytes, bytes);
        Ok(meta)
    }

    /// Metadata of a table with an empty index and nothing else.
    pub(super) fn empty() -> TableMeta {
        TableMeta {
            index: Arc::new(Block::new(vec![0, 0, 0, 0, 1, 0, 0, 0]).expect("empty block")),
            fences: None,
            filter: None,
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
