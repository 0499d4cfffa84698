//! The filter section of an SST, format version 4: a small *filter index*
//! and every unit as its own block, so that one unit is one read.
//!
//! ```text
//! unit block 0 | trailer  …  unit block units−1 | trailer   (each: the unit's bits, LE)
//! filter index | trailer                                    (the footer's filter handle)
//!
//! filter index = version = 4 | layout | hash | secondary | scheme | unit_hashing
//!                | k: u8 | units: u8 | num_keys: u64 | unit_bits: u64
//!                | units × (offset: u64 | size: u64)
//! ```
//!
//! The header is version 2's (`docs/format.md`); the handles name the unit
//! blocks, each `unit_bits / 8` bytes followed by the SST's usual 5-byte
//! trailer (compression 0, masked CRC32C). A unit block whose block and
//! trailer fit in a 4 KiB page never straddles a page boundary (the writer
//! pads before it), so a direct-I/O load reads one page.
//!
//! Units keep sharing the lookup's one digest: unit `j` uses positions
//! `j·k … (j+1)·k − 1` of the index scheme whichever units are resident.
//!
//! Version 5 is the partitioned filter's index (`super::partitioned`).
//!
//! Sections of versions 1 to 3 (one block holding header and all bits) still
//! open: their index names the section itself, and loading any unit reads it
//! whole.

use std::sync::Arc;

use super::partitioned::{PartitionIndex, PARTITIONED_INDEX_VERSION};
use super::{parse_header, truncated, Filter, Params};
use crate::coding::Reader;

/// Version byte of a filter index.
pub const FILTER_INDEX_VERSION: u8 = 4;

/// Bytes of a unit block's alignment unit (a page, the direct-I/O granule).
pub const UNIT_ALIGN: u64 = 4096;

/// Where a file's filter units are on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitSource {
    /// Version 4: unit `j` is block `(offset, size)` number `j`.
    Blocks(Vec<(u64, u64)>),
    /// Versions 1 to 3: the whole section is block `(offset, size)`; its
    /// units follow a header of `header_len` bytes.
    Section {
        /// Offset of the section block.
        offset: u64,
        /// Size of the section block (without its trailer).
        size: u64,
        /// Bytes before unit 0's bits in the section.
        header_len: usize,
    },
    /// Version 5: a partitioned filter (see [`super::partitioned`]); each
    /// partition is a block holding a whole filter section.
    Partitions(Arc<PartitionIndex>),
}

/// A file's filter index: the filter's parameters and where its units are,
/// read when the file is opened. Loading units goes through the SST reader.
#[derive(Clone, Debug)]
pub struct FilterIndex {
    /// The filter with no unit resident (parameters only).
    empty: Filter,
    source: UnitSource,
}

impl FilterIndex {
    /// Decodes the block the footer's filter handle `(offset, size)` names: a
    /// version-4 index, or a whole older section (decoded too, and returned
    /// with every unit resident). Never panics, whatever the bytes.
    pub fn decode(
        data: &[u8],
        offset: u64,
        size: u64,
    ) -> std::result::Result<(FilterIndex, Option<Filter>), String> {
        let mut r = Reader::new(data);
        let version = r.u8().ok_or_else(truncated)?;
        if version == PARTITIONED_INDEX_VERSION {
            let (p, units, num_keys, parts) = PartitionIndex::decode(&mut r)?;
            let parts = Arc::new(parts);
            let index = FilterIndex {
                empty: Filter::partitioned(p, units, num_keys, parts.clone()),
                source: UnitSource::Partitions(parts),
            };
            return Ok((index, None));
        }
        if version != FILTER_INDEX_VERSION {
            let f = Filter::decode(data)?;
            let header_len = data.len() - (f.unit_memory_bytes() * f.units() as usize);
            let index = FilterIndex {
                empty: f.truncated(0),
                source: UnitSource::Section {
                    offset,
                    size,
                    header_len,
                },
            };
            return Ok((index, Some(f)));
        }
        let (p, num_keys) = parse_header(&mut r, FILTER_INDEX_VERSION)?;
        let mut handles = Vec::with_capacity(p.units as usize);
        for j in 0..p.units {
            let off = r.u64().ok_or_else(truncated)?;
            let len = r.u64().ok_or_else(truncated)?;
            if len != p.unit_bits / 8 {
                return Err(format!(
                    "filter unit {j} is {len} bytes, expected {}",
                    p.unit_bits / 8
                ));
            }
            handles.push((off, len));
        }
        if r.remaining() != 0 {
            return Err(format!(
                "{} stray bytes after the filter index",
                r.remaining()
            ));
        }
        Ok((
            FilterIndex {
                empty: empty_filter(p, num_keys),
                source: UnitSource::Blocks(handles),
            },
            None,
        ))
    }

    /// Encodes the index of `filter` (fully resident) whose unit `j` was
    /// written as block `handles[j]`.
    pub fn encode(filter: &Filter, handles: &[(u64, u64)]) -> Vec<u8> {
        let mut out = Vec::with_capacity(super::FILTER_V2_HEADER_LEN + 16 * handles.len());
        filter.encode_header(FILTER_INDEX_VERSION, &mut out);
        for (off, len) in handles {
            out.extend_from_slice(&off.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
        }
        out
    }

    /// The filter with no unit resident: probing it answers "maybe".
    pub fn empty(&self) -> &Filter {
        &self.empty
    }

    /// Units of the filter.
    pub fn units(&self) -> u32 {
        self.empty.units()
    }

    /// Bytes one resident unit takes.
    pub fn unit_bytes(&self) -> u64 {
        self.empty.unit_memory_bytes() as u64
    }

    /// Where the units are.
    pub fn source(&self) -> &UnitSource {
        &self.source
    }

    /// The partition index of a partitioned filter.
    pub fn partitions(&self) -> Option<&Arc<PartitionIndex>> {
        match &self.source {
            UnitSource::Partitions(p) => Some(p),
            _ => None,
        }
    }

    /// Whether the budget should choose this partitioned filter's resident
    /// partitions again (never for other filters).
    pub fn stale(&self) -> bool {
        self.partitions().is_some_and(|p| p.stale())
    }

    /// Theoretical false-positive rate with `n` units resident (1 for none).
    pub fn fpr(&self, n: u32) -> f64 {
        super::family::fpr(&self.empty, n)
    }
}

/// The filter of parameters `p` with no unit resident.
fn empty_filter(p: Params, num_keys: u64) -> Filter {
    Filter {
        version: FILTER_INDEX_VERSION,
        p,
        num_keys,
        resident: 0,
        bits: super::Bits::empty(p.layout),
    }
}

/// Zero bytes to write before a unit block of `len` bytes (plus `trailer`)
/// at `offset`, so that it does not straddle a page boundary it need not
/// straddle: a block and trailer that fit in a page start in a page they fit
/// in, a larger one starts at a page boundary.
pub fn unit_padding(offset: u64, len: u64, trailer: u64) -> u64 {
    let in_page = offset % UNIT_ALIGN;
    let total = len + trailer;
    if in_page == 0 || (total <= UNIT_ALIGN && in_page + total <= UNIT_ALIGN) {
        0
    } else {
        UNIT_ALIGN - in_page
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::{FilterBuilder, FilterLayout, FilterOptions, HashSharing, KeyProbe};

    fn built(layout: FilterLayout, units: u32, n: usize) -> Filter {
        let o = FilterOptions {
            layout,
            units,
            bits_per_key: 12.0,
            ..FilterOptions::default()
        };
        let mut b = FilterBuilder::new(&o);
        for i in 0..n {
            b.add(format!("key{i}").as_bytes());
        }
        b.build()
    }

    /// Lays `f` out as a writer would: units, then the index.
    fn layout(f: &Filter) -> (Vec<u8>, Vec<u8>) {
        let mut file = Vec::new();
        let mut handles = Vec::new();
        for j in 0..f.units() {
            let mut unit = Vec::new();
            f.unit_le(j, &mut unit);
            let pad = unit_padding(file.len() as u64, unit.len() as u64, 5);
            file.resize(file.len() + pad as usize, 0);
            handles.push((file.len() as u64, unit.len() as u64));
            file.extend_from_slice(&unit);
            file.extend_from_slice(&[0; 5]);
        }
        (file, FilterIndex::encode(f, &handles))
    }

    #[test]
    fn units_reload_to_the_same_answers() {
        for (layout_kind, units) in [
            (FilterLayout::Units, 6),
            (FilterLayout::Bloom, 1),
            (FilterLayout::Blocked, 1),
            (FilterLayout::Ribbon, 1),
            (FilterLayout::Ribbon64, 1),
            (FilterLayout::RibbonUnits, 5),
        ] {
            let f = built(layout_kind, units, 3000);
            let (file, index) = layout(&f);
            let (idx, legacy) = FilterIndex::decode(&index, 0, index.len() as u64).unwrap();
            assert!(legacy.is_none());
            assert_eq!(idx.units(), units);
            let UnitSource::Blocks(handles) = idx.source() else {
                panic!("v4 index names blocks")
            };
            let mut g = idx.empty().clone();
            for (j, &(off, len)) in handles.iter().enumerate() {
                assert_eq!(g.resident(), j as u32);
                g = g
                    .with_unit(&file[off as usize..(off + len) as usize])
                    .unwrap();
            }
            assert_eq!(g.version(), FILTER_INDEX_VERSION);
            assert_eq!(g.encode(), f.encode());
            // Every prefix answers like a probe of the full filter restricted to it.
            for n in 0..=units {
                let part = f.truncated(n);
                for i in 0..2000 {
                    let key = format!("other{i}");
                    let mut p1 = KeyProbe::new(key.as_bytes(), HashSharing::Levels);
                    let mut p2 = KeyProbe::new(key.as_bytes(), HashSharing::Levels);
                    let mask = if n == 0 { 0 } else { (1u64 << n) - 1 };
                    let want = n == 0 || f.may_contain_units(&mut p2, mask);
                    assert_eq!(part.may_contain(&mut p1), want);
                }
            }
        }
    }

    #[test]
    fn an_empty_filter_says_maybe_and_holds_nothing() {
        let f = built(FilterLayout::Units, 4, 100).truncated(0);
        assert_eq!(f.resident_bytes(), 0);
        assert!(f.may_contain(&mut KeyProbe::new(b"x", HashSharing::Levels)));
    }

    #[test]
    fn legacy_sections_decode_as_their_own_source() {
        let f = built(FilterLayout::Units, 3, 500);
        let section = f.encode();
        let (idx, legacy) = FilterIndex::decode(&section, 100, section.len() as u64).unwrap();
        assert_eq!(legacy.as_ref(), Some(&f));
        assert_eq!(
            idx.source(),
            &UnitSource::Section {
                offset: 100,
                size: section.len() as u64,
                header_len: crate::filter::FILTER_V2_HEADER_LEN
            }
        );
    }

    #[test]
    fn bad_indexes_are_errors() {
        let f = built(FilterLayout::Units, 3, 500);
        let (_, index) = layout(&f);
        for cut in 0..index.len() {
            assert!(FilterIndex::decode(&index[..cut], 0, cut as u64).is_err());
        }
        let mut longer = index.clone();
        longer.push(0);
        assert!(FilterIndex::decode(&longer, 0, 0).is_err());
        let mut wrong_len = index.clone();
        let at = wrong_len.len() - 8;
        wrong_len[at] ^= 1;
        assert!(FilterIndex::decode(&wrong_len, 0, 0).is_err());
        assert!(f.truncated(1).with_unit(&[0; 3]).is_err());
    }

    #[test]
    fn padding_keeps_small_units_in_one_page() {
        assert_eq!(unit_padding(0, 100, 5), 0);
        assert_eq!(unit_padding(4000, 90, 5), 0);
        assert_eq!(unit_padding(4000, 92, 5), 96);
        assert_eq!(unit_padding(5000, 9000, 5), 3192);
        assert_eq!(unit_padding(8192, 9000, 5), 0);
    }
}
