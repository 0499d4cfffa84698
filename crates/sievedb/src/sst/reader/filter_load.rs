//! Loading a table's filter units and partitions on demand (for the
//! filter budget, see [`crate::filter::budget`]): one read per span of
//! neighbouring blocks, every checksum checked.

use std::sync::Arc;

use super::super::{block_crc, BlockHandle, COMPRESSION_NONE, FOOTER_LEN, TRAILER_LEN};
use super::TableReader;
use crate::coding::u32_at;
use crate::error::{Error, Result};
use crate::filter::partitioned::PartitionIndex;
use crate::filter::section::UnitSource;
use crate::filter::{Filter, FilterIndex};
use crate::stats::bump;

impl TableReader {
    /// `current` (a filter of this table) with units `current.resident()..to`
    /// loaded from the file: one read for a version-4 section (the unit
    /// blocks are contiguous but for padding), each unit's checksum checked;
    /// an older section is read whole. Counts the units in
    /// `filter_unit_loads` and the read in `filter_unit_reads`. Never returns
    /// a half-loaded filter: on error nothing is loaded.
    pub fn load_filter_units(&self, current: &Filter, to: u32) -> Result<Filter> {
        let Some(index) = &self.meta.filter else {
            return Err(Error::InvalidArgument(format!(
                "{} has no filter",
                self.path.display()
            )));
        };
        let from = current.resident();
        let to = to.min(index.units());
        if let UnitSource::Partitions(parts) = index.source() {
            if to < from {
                return Ok(current.truncated(to));
            }
            return self.load_partitions(index, parts, current, to);
        }
        if to <= from {
            return Ok(current.truncated(to));
        }
        let corrupt = |d: String| Error::corruption(&self.path, format!("filter: {d}"));
        let loaded = match index.source() {
            UnitSource::Blocks(handles) => {
                let span = &handles[from as usize..to as usize];
                let start = span[0].0;
                let end = span[span.len() - 1].0 + span[span.len() - 1].1 + TRAILER_LEN as u64;
                let whole = BlockHandle {
                    offset: start,
                    size: end - start - TRAILER_LEN as u64,
                };
                let bytes = self.read_span(whole)?;
                let mut f = current.clone();
                for &(off, len) in span {
                    let at = (off - start) as usize;
                    let body = &bytes[at..at + len as usize];
                    let trailer = &bytes[at + len as usize..at + len as usize + TRAILER_LEN];
                    if self.verify && block_crc(body, trailer[0]) != u32_at(trailer, 1) {
                        return Err(corrupt(format!("unit checksum mismatch at offset {off}")));
                    }
                    if trailer[0] != COMPRESSION_NONE {
                        return Err(corrupt(format!("compressed filter unit at offset {off}")));
                    }
                    f = f.with_unit(body).map_err(corrupt)?;
                }
                f
            }
            UnitSource::Partitions(_) => unreachable!("partitions are loaded above"),
            &UnitSource::Section { offset, size, .. } => {
                let data = self.read_raw(BlockHandle { offset, size })?;
                let whole = Filter::decode(&data).map_err(corrupt)?;
                if whole.truncated(0) != current.truncated(0) {
                    return Err(corrupt("section changed under its index".into()));
                }
                whole.truncated(to)
            }
        };
        bump(&self.counters.filter_unit_loads, u64::from(to - from));
        bump(&self.counters.filter_unit_reads, 1);
        Ok(loaded)
    }

    /// `current` (a partitioned filter of this table) with the partitions
    /// [`PartitionIndex::choose`] picks for `to` of its shares resident (see
    /// [`crate::filter::partitioned`]), those not resident yet read
    /// with one read per run of neighbouring partitions, each checksum
    /// checked. Counts the partitions read in `filter_unit_loads` and the
    /// reads in `filter_unit_reads`. On error nothing changes.
    fn load_partitions(
        &self,
        index: &FilterIndex,
        parts: &PartitionIndex,
        current: &Filter,
        to: u32,
    ) -> Result<Filter> {
        let corrupt = |d: String| Error::corruption(&self.path, format!("filter partition: {d}"));
        let chosen = parts.choose(u64::from(to) * index.unit_bytes(), |i| {
            current.partition(i).is_some()
        });
        let all = parts.parts();
        let mut filters: Vec<Option<Arc<Filter>>> = (0..all.len())
            .map(|i| chosen[i].then(|| current.partition(i).cloned()).flatten())
            .collect();
        let need: Vec<usize> = (0..all.len())
            .filter(|&i| chosen[i] && filters[i].is_none())
            .collect();
        // Runs of neighbouring partitions are read at once (their blocks are
        // contiguous but for padding): loading every partition is one read.
        let trailer = TRAILER_LEN as u64;
        let mut reads = 0u64;
        let mut at = 0;
        while at < need.len() {
            let mut end = at + 1;
            while end < need.len()
                && need[end] == need[end - 1] + 1
                && all[need[end]].offset
                    >= all[need[end - 1]].offset + all[need[end - 1]].size + trailer
            {
                end += 1;
            }
            let (first, last) = (&all[need[at]], &all[need[end - 1]]);
            let start = first.offset;
            let stop = last.offset + last.size + trailer;
            let bytes = self.read_span(BlockHandle {
                offset: start,
                size: stop - start - trailer,
            })?;
            reads += 1;
            for &i in &need[at..end] {
                let p = &all[i];
                let from = (p.offset - start) as usize;
                let body = &bytes[from..from + p.size as usize];
                let tr = &bytes[from + p.size as usize..from + p.size as usize + TRAILER_LEN];
                if self.verify && block_crc(body, tr[0]) != u32_at(tr, 1) {
                    return Err(corrupt(format!("checksum mismatch at offset {}", p.offset)));
                }
                if tr[0] != COMPRESSION_NONE {
                    return Err(corrupt(format!(
                        "compressed partition at offset {}",
                        p.offset
                    )));
                }
                // Each partition is probed with its own parameters (a Ribbon
                // partition that could not be banded is a Bloom filter).
                filters[i] = Some(Arc::new(Filter::decode(body).map_err(corrupt)?));
            }
            at = end;
        }
        bump(&self.counters.filter_unit_loads, need.len() as u64);
        bump(&self.counters.filter_unit_reads, reads);
        Ok(current.with_partitions(to, filters))
    }

    /// The bytes of `h` and its trailer, unchecked (the caller checks).
    fn read_span(&self, h: BlockHandle) -> Result<Vec<u8>> {
        if !h.fits(self.file.size().saturating_sub(FOOTER_LEN as u64)) {
            return Err(Error::corruption(
                &self.path,
                format!(
                    "filter units {}+{} beyond the end of the file",
                    h.offset, h.size
                ),
            ));
        }
        let buf = self
            .file
            .read_at(h.offset, h.size as usize + TRAILER_LEN)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::UnexpectedEof => {
                    Error::corruption(&self.path, "filter units extend past the end of the file")
                }
                _ => Error::Io(e),
            })?;
        bump(&self.counters.bytes_read, buf.len() as u64);
        Ok(buf)
    }
}
