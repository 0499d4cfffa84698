//! Writes an SST section by section: data blocks, index partitions (a
//! two-level index only), filter, prefix filter, properties, index, footer.

use std::sync::Arc;

use super::block::BlockBuilder;
use super::{
    block_crc, BlockHandle, Footer, Properties, COMPRESSION_LZ4, COMPRESSION_NONE,
    COMPRESSION_ZSTD, FORMAT_VERSION, FORMAT_VERSION_TWO_LEVEL, TRAILER_LEN,
};
use crate::error::Result;
use crate::filter::partitioned::{BuiltPartition, Part, PartitionIndex, PartitionedBuilder};
use crate::filter::prefix::{PrefixExtractor, PrefixFilterBuilder};
use crate::filter::section::unit_padding;
use crate::filter::{Filter, FilterBuilder, FilterIndex, FilterOptions};
use crate::io::WritableFile;
use crate::key::{self, Kind};
use crate::options::Compression;
use crate::range_del::{self, RangeTombstone};

/// The key filter being built: whole, or cut by key range.
enum KeyFilter {
    Whole(FilterBuilder),
    Partitioned(PartitionedBuilder),
}

/// Builds one SST from entries added in increasing internal-key order.
pub struct TableWriter {
    file: Box<dyn WritableFile>,
    offset: u64,
    block_size: usize,
    compression: Compression,
    data: BlockBuilder,
    index: IndexBuilder,
    filter: Option<KeyFilter>,
    /// The prefixes of the keys, when a prefix extractor is set.
    prefix: Option<PrefixFilterBuilder>,
    /// The key filter's options (the prefix filter derives its own).
    filter_opts: FilterOptions,
    props: Properties,
    last_user_key: Vec<u8>,
    /// The handle of the data block just written, whose index entry waits
    /// for the next block's first key (its key is then a short
    /// [`key::separator`] between the two) or for [`finish_unsynced`](TableWriter::finish_unsynced)
    /// (the last block keeps its last key, `pending_last`).
    pending_index: Option<BlockHandle>,
    /// The last key of the block of `pending_index`.
    pending_last: Vec<u8>,
    /// Scratch for the separator of the pending index entry.
    separator: Vec<u8>,
    /// The zstd context, made on the first zstd block and reused.
    zstd: Option<zstd::bulk::Compressor<'static>>,
    /// Range tombstones to write in the range-tombstone block.
    range_dels: Vec<RangeTombstone>,
    /// Write the filter as one version-3 section, as builds before the
    /// version-4 filter index did (tests of reading old files).
    #[cfg(test)]
    pub(crate) legacy_filter: bool,
}

impl TableWriter {
    /// Starts writing to `file` for `level`.
    pub fn new(
        file: Box<dyn WritableFile>,
        level: usize,
        block_size: usize,
        restart_interval: usize,
        compression: Compression,
        filter: &FilterOptions,
    ) -> Self {
        TableWriter {
            file,
            offset: 0,
            block_size,
            compression,
            data: BlockBuilder::new(restart_interval),
            index: IndexBuilder {
                block: BlockBuilder::new(1),
                scratch: Vec::new(),
                partition_bytes: None,
                partitions: Vec::new(),
            },
            filter: filter.enabled().then(|| {
                let opts = filter.for_level(level);
                match filter.partition_bytes {
                    Some(bytes) => KeyFilter::Partitioned(PartitionedBuilder::new(&opts, bytes)),
                    None => KeyFilter::Whole(FilterBuilder::new(&opts)),
                }
            }),
            prefix: None,
            filter_opts: filter.clone(),
            props: Properties {
                level: level as u32,
                bits_per_key: if filter.enabled() {
                    filter.bits_per_key
                } else {
                    0.0
                },
                ..Properties::default()
            },
            last_user_key: Vec::new(),
            pending_index: None,
            pending_last: Vec::new(),
            separator: Vec::new(),
            zstd: None,
            range_dels: Vec::new(),
            #[cfg(test)]
            legacy_filter: false,
        }
    }

    /// Records the keyspace the file belongs to (`id` 0: the default one, the
    /// default) in its properties.
    pub fn set_keyspace(&mut self, id: u32, name: &str) {
        self.props.keyspace = id;
        self.props.keyspace_name = if id == 0 {
            String::new()
        } else {
            name.to_string()
        };
    }

    /// Cuts the index into partitions of about `bytes` (a two-level index,
    /// format version 2; see
    /// [`Options::index_partition_bytes`](crate::Options::index_partition_bytes)),
    /// or keeps it one block (`None`, the default); call before the first
    /// [`add`](Self::add).
    pub fn set_index_partition_bytes(&mut self, bytes: Option<u64>) {
        self.index.partition_bytes = bytes.map(|b| usize::try_from(b).unwrap_or(usize::MAX));
    }

    /// Builds a prefix filter of the keys' prefixes under `extractor` (see
    /// [`crate::filter::prefix`]); call before the first [`add`](Self::add).
    pub fn set_prefix_extractor(&mut self, extractor: Option<Arc<dyn PrefixExtractor>>) {
        self.prefix = extractor.map(|x| PrefixFilterBuilder::new(x, &self.filter_opts));
    }

    /// Adds an entry; internal keys must strictly increase.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        debug_assert!(
            self.props.entries == 0 || key::compare(&self.props.largest, ikey).is_lt(),
            "keys out of order"
        );
        let user_key = key::user_key(ikey);
        if self.props.entries == 0 {
            self.props.smallest = ikey.to_vec();
        }
        if self.props.entries == 0 || user_key != self.last_user_key.as_slice() {
            if let Some(f) = &mut self.filter {
                match f {
                    KeyFilter::Whole(f) => f.add(user_key),
                    KeyFilter::Partitioned(f) => f.add(user_key),
                }
                self.props.filter_keys += 1;
            }
            if let Some(p) = &mut self.prefix {
                p.add(user_key);
            }
            self.last_user_key.clear();
            self.last_user_key.extend_from_slice(user_key);
        }
        if key::kind_of(ikey) == Kind::Delete as u8 {
            self.props.deletions += 1;
        }
        self.props.entries += 1;
        self.props.raw_key_bytes += ikey.len() as u64;
        self.props.raw_value_bytes += value.len() as u64;
        self.props.largest.clear();
        self.props.largest.extend_from_slice(ikey);
        if let Some(handle) = self.pending_index.take() {
            key::separator(&self.pending_last, ikey, &mut self.separator);
            self.index.add(&self.separator, handle);
        }
        self.data.add(ikey, value);
        if self.data.size_estimate() >= self.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Adds a range tombstone (any order). The file's smallest and largest
    /// keys are widened at [`finish_unsynced`](TableWriter::finish_unsynced) to cover it (see
    /// [`RangeTombstone::smallest_key`] and [`RangeTombstone::largest_key`]).
    pub fn add_range_del(&mut self, t: RangeTombstone) {
        self.range_dels.push(t);
    }

    /// Writes the range-tombstone block (if any) and widens the key range.
    fn write_range_dels(&mut self) -> Result<()> {
        if self.range_dels.is_empty() {
            return Ok(());
        }
        let mut ts = std::mem::take(&mut self.range_dels);
        range_del::sort(&mut ts);
        for t in &ts {
            let (lo, hi) = (t.smallest_key(), t.largest_key());
            if self.props.smallest.is_empty() || key::compare(&lo, &self.props.smallest).is_lt() {
                self.props.smallest = lo;
            }
            if self.props.largest.is_empty() || key::compare(&hi, &self.props.largest).is_gt() {
                self.props.largest = hi;
            }
        }
        self.props.range_dels = ts.len() as u64;
        self.props.range_del_block =
            self.write_block(&range_del::encode_block(&ts), Compression::None)?;
        Ok(())
    }

    #[cfg(any(test, feature = "internals"))]
    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        self.props.entries
    }

    /// Bytes written so far plus the pending block.
    pub fn estimated_size(&self) -> u64 {
        self.offset + self.data.size_estimate() as u64
    }

    fn flush_data_block(&mut self) -> Result<()> {
        if self.data.is_empty() {
            return Ok(());
        }
        self.pending_last.clear();
        self.pending_last.extend_from_slice(self.data.last_key());
        let raw = self.data.finish();
        let handle = self.write_block(&raw, self.compression)?;
        self.pending_index = Some(handle);
        self.props.data_blocks += 1;
        Ok(())
    }

    /// One zstd frame holding `raw`, with its size recorded in the header.
    fn zstd_compress(&mut self, raw: &[u8], level: i32) -> Result<Vec<u8>> {
        if self.zstd.is_none() {
            self.zstd = Some(zstd::bulk::Compressor::new(level)?);
        }
        #[expect(clippy::expect_used, reason = "set just above when there was none")]
        let c = self.zstd.as_mut().expect("just set");
        c.set_compression_level(level)?;
        Ok(c.compress(raw)?)
    }

    fn write_block(&mut self, raw: &[u8], compression: Compression) -> Result<BlockHandle> {
        let mut ctype = COMPRESSION_NONE;
        let compressed = match compression {
            Compression::None => None,
            Compression::Lz4 => {
                Some((lz4_flex::block::compress_prepend_size(raw), COMPRESSION_LZ4))
            }
            // The zstd frame records the block's size (the reader needs it).
            Compression::Zstd(level) => Some((self.zstd_compress(raw, level)?, COMPRESSION_ZSTD)),
        };
        let mut body = raw;
        // A block is kept compressed only when that saves at least 1/8 of it.
        if let Some((c, t)) = &compressed {
            if c.len() < raw.len() - raw.len() / 8 {
                body = c;
                ctype = *t;
            }
        }
        let handle = BlockHandle {
            offset: self.offset,
            size: body.len() as u64,
        };
        let mut trailer = [0u8; super::TRAILER_LEN];
        trailer[0] = ctype;
        trailer[1..].copy_from_slice(&block_crc(body, ctype).to_le_bytes());
        self.file.append(body)?;
        self.file.append(&trailer)?;
        self.offset += (body.len() + trailer.len()) as u64;
        Ok(handle)
    }

    /// Writes the filter section (format version 4, see
    /// [`crate::filter::section`]): each unit as its own block, not straddling
    /// a page it need not, then the filter index, whose handle it returns.
    fn write_filter(&mut self, filter: &Filter) -> Result<BlockHandle> {
        #[cfg(test)]
        if self.legacy_filter {
            return self.write_block(&filter.encode(), Compression::None);
        }
        let mut handles = Vec::with_capacity(filter.units() as usize);
        let mut unit = Vec::new();
        for j in 0..filter.units() {
            unit.clear();
            filter.unit_le(j, &mut unit);
            let pad = unit_padding(self.offset, unit.len() as u64, TRAILER_LEN as u64);
            if pad > 0 {
                self.file.append(&vec![0; pad as usize])?;
                self.offset += pad;
            }
            let h = self.write_block(&unit, Compression::None)?;
            handles.push((h.offset, h.size));
        }
        self.write_block(&FilterIndex::encode(filter, &handles), Compression::None)
    }

    /// Writes a partitioned filter (format version 5, see
    /// [`crate::filter::partitioned`]): each partition as a block holding a
    /// whole filter section, not straddling a page it need not, then the
    /// top-level index, whose handle it returns.
    fn write_partitions(&mut self, built: Vec<BuiltPartition>) -> Result<BlockHandle> {
        let mut parts = Vec::with_capacity(built.len());
        let mut num_keys = 0;
        for (last, keys, f) in &built {
            let bytes = f.encode();
            let pad = unit_padding(self.offset, bytes.len() as u64, TRAILER_LEN as u64);
            if pad > 0 {
                self.file.append(&vec![0; pad as usize])?;
                self.offset += pad;
            }
            let h = self.write_block(&bytes, Compression::None)?;
            num_keys += keys;
            parts.push(Part {
                last: last.clone(),
                keys: *keys,
                offset: h.offset,
                size: h.size,
            });
        }
        let index = PartitionIndex::encode(&built[0].2, num_keys, &parts);
        self.write_block(&index, Compression::None)
    }

    /// Writes the remaining sections, fsyncs, and returns the properties and
    /// file size (for tests and the `internals` users: the engine finishes
    /// its tables unsynced and syncs them in batches).
    #[cfg(any(test, feature = "internals"))]
    pub fn finish(self) -> Result<(Properties, u64)> {
        let (props, size, mut file) = self.finish_unsynced()?;
        file.sync()?;
        Ok((props, size))
    }

    /// As `finish` without the fsync: the file's bytes are
    /// handed to the operating system and their writeback started. The
    /// caller must [`sync`](WritableFile::sync) the returned file before
    /// anything durable refers to the table.
    pub fn finish_unsynced(mut self) -> Result<(Properties, u64, Box<dyn WritableFile>)> {
        self.flush_data_block()?;
        if let Some(handle) = self.pending_index.take() {
            self.index.add(&self.pending_last, handle);
        }
        let mut index = std::mem::replace(&mut self.index.block, BlockBuilder::new(1));
        let mut partitions = std::mem::take(&mut self.index.partitions);
        let two_level = !partitions.is_empty();
        if two_level {
            // The partitions follow the data blocks; the top-level index
            // (written last, where a one-level index is) lists them.
            if !index.is_empty() {
                partitions.push((index.last_key().to_vec(), index.finish()));
            }
            let mut handle = Vec::new();
            for (last, raw) in partitions {
                let h = self.write_block(&raw, Compression::None)?;
                handle.clear();
                h.encode_to(&mut handle);
                index.add(&last, &handle);
            }
        }
        let filter = match self.filter.take() {
            Some(KeyFilter::Whole(f)) if !f.is_empty() => self.write_filter(&f.build())?,
            Some(KeyFilter::Partitioned(f)) if !f.is_empty() => {
                self.write_partitions(f.finish())?
            }
            _ => BlockHandle::default(),
        };
        if let Some(p) = self.prefix.take() {
            if !p.is_empty() {
                self.props.prefix_filter_block =
                    self.write_block(&p.finish(), Compression::None)?;
            }
        }
        self.write_range_dels()?;
        let props = self.props.encode();
        let properties = self.write_block(&props, Compression::None)?;
        let index_raw = index.finish();
        let index = self.write_block(&index_raw, Compression::None)?;
        let footer = Footer {
            index,
            filter,
            properties,
            format_version: if two_level {
                FORMAT_VERSION_TWO_LEVEL
            } else {
                FORMAT_VERSION
            },
        };
        self.file.append(&footer.encode())?;
        self.offset += super::FOOTER_LEN as u64;
        self.file.start_writeback()?;
        Ok((self.props, self.offset, self.file))
    }
}

/// The index being built: one block of fence pointers, cut into partitions
/// of about `partition_bytes` when that is set.
struct IndexBuilder {
    /// The entries since the last cut.
    block: BlockBuilder,
    /// Scratch for an encoded handle.
    scratch: Vec<u8>,
    partition_bytes: Option<usize>,
    /// Finished partitions: each one's last key and its block, written when
    /// the table is finished, right after the last data block (the data
    /// blocks stay contiguous from offset 0, as the repair scan expects).
    partitions: Vec<(Vec<u8>, Vec<u8>)>,
}

impl IndexBuilder {
    /// Adds the entry of the data block at `handle` under `key`, then cuts
    /// a partition if the block has reached `partition_bytes`.
    fn add(&mut self, key: &[u8], handle: BlockHandle) {
        self.scratch.clear();
        handle.encode_to(&mut self.scratch);
        self.block.add(key, &self.scratch);
        if self
            .partition_bytes
            .is_some_and(|p| self.block.size_estimate() >= p)
        {
            let last = self.block.last_key().to_vec();
            self.partitions.push((last, self.block.finish()));
        }
    }
}
