//! Salvaging a damaged SST: the entries of every data block that is
//! intact, found through the index when it is readable, by a scan of the
//! file for checksummed blocks ([`super::scan`]) when it is not; with the
//! properties and range tombstones where they can be read. The rules are in
//! the module docs of [`crate::repair`].

use std::path::Path;
use std::sync::Arc;

use crate::coding::u32_at;
use crate::io::FileSystem;
use crate::iter::InternalIterator;
use crate::key::{self, MAX_SEQ};
use crate::range_del::RangeTombstone;
use crate::sst::block::{Block, BlockIter};
use crate::sst::reader::decompress;
use crate::sst::{block_crc, BlockHandle, Footer, Properties, FOOTER_LEN, TRAILER_LEN};

use super::report::SalvageMethod;
use super::Entry;

/// What could be read of one damaged table.
#[derive(Default)]
pub(super) struct Salvage {
    /// Its properties, if readable.
    pub props: Option<Properties>,
    /// The entries of its intact data blocks, in internal-key order, each
    /// once.
    pub entries: Vec<Entry>,
    /// Its range tombstones, if their block is readable (`None`: not).
    pub range_dels: Option<Vec<RangeTombstone>>,
    /// Data blocks read.
    pub blocks_read: u64,
    /// Data blocks known to exist that could not be read (`None`: how many
    /// there were is not known).
    pub blocks_lost: Option<u64>,
    /// How the data blocks were found.
    pub method: SalvageMethod,
}

/// A block the scan found: where, and its body decompressed.
struct Found {
    offset: usize,
    len: usize,
    body: Option<Vec<u8>>,
}

/// Salvages the table at `path` (see the module docs).
pub(super) fn salvage(fs: &dyn FileSystem, path: &Path) -> Salvage {
    let Ok(bytes) = fs.read_all(path) else {
        return Salvage::default();
    };
    let footer = bytes
        .len()
        .checked_sub(FOOTER_LEN)
        .and_then(|at| Footer::decode(&bytes[at..]).ok());
    let mut index =
        footer.and_then(|f| Some((f.index.offset, handles(&block_at(&bytes, f.index)?)?)));
    let mut props = footer
        .and_then(|f| block_at(&bytes, f.properties))
        .and_then(|b| Properties::decode(&b).ok());
    let mut method = SalvageMethod::Index;
    if index.is_none() {
        method = SalvageMethod::Scan;
        let found = scan(&bytes);
        // The index: a block whose every value is a block handle, the first
        // at offset 0 (where data blocks start), each past the one before and
        // all before the block itself, one at least the span of a block
        // found (the last such block, as the index follows the data); the
        // properties block lies just before it.
        let spans: std::collections::BTreeSet<(u64, u64)> = found
            .iter()
            .map(|f| (f.offset as u64, f.len as u64))
            .collect();
        let is_index = |f: &Found| -> Option<Vec<BlockHandle>> {
            let hs = handles(f.body.as_ref()?)?;
            let end = |h: &BlockHandle| {
                h.offset
                    .saturating_add(h.size)
                    .saturating_add(TRAILER_LEN as u64)
            };
            let ordered = hs.windows(2).all(|w| end(&w[0]) <= w[1].offset);
            let before = hs.last().is_some_and(|h| end(h) <= f.offset as u64);
            let any = hs.iter().any(|h| spans.contains(&(h.offset, h.size)));
            (hs[0].offset == 0 && ordered && before && any).then_some(hs)
        };
        let scanned = found
            .iter()
            .rev()
            .find_map(|f| Some((f.offset as u64, is_index(f)?)));
        if let Some((at, _)) = &scanned {
            if footer.is_none() {
                props = found
                    .iter()
                    .find(|f| (f.offset + f.len + TRAILER_LEN) as u64 == *at)
                    .and_then(|f| Properties::decode(f.body.as_ref()?).ok());
            }
        }
        index = scanned;
        if index.is_none() {
            return from_scan(found, props, &bytes);
        }
    }
    #[expect(
        clippy::expect_used,
        reason = "the scan branch above returned unless the index was read"
    )]
    let (_, handles) = index.expect("found above");
    let mut s = Salvage {
        method,
        ..Salvage::default()
    };
    let mut lost = 0;
    for h in handles {
        match block_at(&bytes, h).and_then(data_entries) {
            Some(es) => {
                s.blocks_read += 1;
                s.entries.extend(es);
            }
            None => lost += 1,
        }
    }
    s.entries.sort_by(|a, b| key::compare(&a.0, &b.0));
    s.entries.dedup_by(|a, b| a.0 == b.0);
    s.blocks_lost = Some(lost);
    s.range_dels = props.as_ref().and_then(|p| range_dels(&bytes, p));
    s.props = props;
    s
}

/// The salvage of a table whose index is lost: the data blocks among the
/// blocks `found` (kept in file order, a block overlapping one kept before
/// it skipped).
fn from_scan(found: Vec<Found>, props: Option<Properties>, bytes: &[u8]) -> Salvage {
    let mut s = Salvage {
        method: SalvageMethod::Scan,
        ..Salvage::default()
    };
    let mut end = 0;
    for f in found {
        if f.offset < end {
            continue;
        }
        if let Some(es) = f.body.and_then(data_entries) {
            s.blocks_read += 1;
            s.entries.extend(es);
            end = f.offset + f.len + TRAILER_LEN;
        }
    }
    s.entries.sort_by(|a, b| key::compare(&a.0, &b.0));
    s.entries.dedup_by(|a, b| a.0 == b.0);
    s.blocks_lost = props
        .as_ref()
        .map(|p| p.data_blocks.saturating_sub(s.blocks_read));
    s.range_dels = props.as_ref().and_then(|p| range_dels(bytes, p));
    s.props = props;
    s
}

/// Every checksummed block of `bytes`, its body decompressed (`None` when
/// that fails).
fn scan(bytes: &[u8]) -> Vec<Found> {
    super::scan::checksummed_blocks(bytes)
        .into_iter()
        .map(|(offset, len)| Found {
            offset,
            len,
            body: decompress(bytes[offset + len], &bytes[offset..offset + len]).ok(),
        })
        .collect()
}

/// The body of block `h` of `bytes`, if it lies inside, its checksum
/// matches and it decompresses.
fn block_at(bytes: &[u8], h: BlockHandle) -> Option<Vec<u8>> {
    if !h.fits(bytes.len() as u64) {
        return None;
    }
    let (at, len) = (
        usize::try_from(h.offset).ok()?,
        usize::try_from(h.size).ok()?,
    );
    let body = &bytes[at..at + len];
    let ctype = bytes[at + len];
    if block_crc(body, ctype) != u32_at(bytes, at + len + 1) {
        return None;
    }
    decompress(ctype, body).ok()
}

/// The block handles an index block `body` lists, in order; `None` when it
/// is not an index block (not a block, or a value that is not a handle).
fn handles(body: &[u8]) -> Option<Vec<BlockHandle>> {
    let mut it = BlockIter::new(Arc::new(Block::new(body.to_vec()).ok()?));
    it.seek_to_first().ok()?;
    let mut out = Vec::new();
    while it.valid() {
        let mut r = crate::coding::Reader::new(it.value());
        let h = BlockHandle {
            offset: r.varint()?,
            size: r.varint()?,
        };
        if r.remaining() > 0 {
            return None;
        }
        out.push(h);
        it.next().ok()?;
    }
    (it.error().is_none() && !out.is_empty()).then_some(out)
}

/// The entries of data block `body`: `None` unless it decodes whole into
/// well-formed internal keys in strictly increasing order, none with the
/// sequence number [`MAX_SEQ`] (which only index separators carry).
fn data_entries(body: Vec<u8>) -> Option<Vec<Entry>> {
    let mut it = BlockIter::new(Arc::new(Block::new(body).ok()?));
    it.seek_to_first().ok()?;
    let mut out: Vec<Entry> = Vec::new();
    while it.valid() {
        let k = it.key();
        if key::parse(k)?.seq >= MAX_SEQ {
            return None;
        }
        if out
            .last()
            .is_some_and(|(last, _)| key::compare(last, k) != std::cmp::Ordering::Less)
        {
            return None;
        }
        out.push((k.to_vec(), it.value().to_vec()));
        it.next().ok()?;
    }
    (it.error().is_none() && !out.is_empty()).then_some(out)
}

/// The range tombstones of a table with properties `p`, if their block is
/// readable and holds as many as `p` says (none when `p` says none).
fn range_dels(bytes: &[u8], p: &Properties) -> Option<Vec<RangeTombstone>> {
    if p.range_dels == 0 {
        return Some(Vec::new());
    }
    let ts = crate::range_del::decode_block(&block_at(bytes, p.range_del_block)?).ok()?;
    (ts.len() as u64 == p.range_dels).then_some(ts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::StdFs;
    use crate::options::Compression;
    use crate::sst::TableWriter;

    /// A table of 300 entries in small blocks (a filter and two range
    /// tombstones too), compressed by `c`; returns its bytes and entries.
    fn table(path: &Path, c: Compression) -> (Vec<u8>, Vec<Entry>) {
        let fs = StdFs;
        let mut w = TableWriter::new(
            fs.create(path).unwrap(),
            0,
            256,
            4,
            c,
            &crate::filter::FilterOptions::default(),
        );
        let mut entries = Vec::new();
        for i in 0..300u64 {
            let mut k = Vec::new();
            key::append_internal_key(&mut k, format!("k{i:05}").as_bytes(), i + 10, 1);
            let v = format!("value-{i}-").repeat(3).into_bytes();
            w.add(&k, &v).unwrap();
            entries.push((k, v));
        }
        for (s, e) in [("k00010", "k00020"), ("k00200", "k00201")] {
            w.add_range_del(RangeTombstone {
                start: s.into(),
                end: Some(e.into()),
                seq: 400,
            });
        }
        w.finish().unwrap();
        (std::fs::read(path).unwrap(), entries)
    }

    /// Whatever the damage (a cut anywhere, a flipped byte anywhere), what
    /// is salvaged is entries of the table, never anything else.
    #[test]
    fn salvage_returns_only_real_entries_whatever_the_damage() {
        let dir = tempfile::tempdir().unwrap();
        for c in [Compression::None, Compression::Lz4] {
            let path = dir.path().join("t.sst");
            let (bytes, entries) = table(&path, c);
            let whole = salvage(&StdFs, &path);
            assert_eq!(whole.entries, entries, "{c:?}");
            assert_eq!(whole.range_dels.as_ref().map(Vec::len), Some(2));
            assert_eq!(whole.blocks_lost, Some(0));
            let real: std::collections::HashSet<&Entry> = entries.iter().collect();
            let check = |damaged: &[u8], ctx: &str| {
                std::fs::write(&path, damaged).unwrap();
                let s = salvage(&StdFs, &path);
                assert!(s.entries.iter().all(|e| real.contains(e)), "{ctx}");
                let mut sorted = s.entries.clone();
                sorted.sort_by(|a, b| key::compare(&a.0, &b.0));
                assert_eq!(sorted, s.entries, "{ctx}: in order");
                s
            };
            for cut in (0..bytes.len()).step_by(97) {
                let s = check(&bytes[..cut], &format!("{c:?} cut at {cut}"));
                assert_eq!(s.method, SalvageMethod::Scan);
            }
            for at in (0..bytes.len()).step_by(89) {
                let mut d = bytes.clone();
                d[at] ^= 0x08;
                let s = check(&d, &format!("{c:?} byte {at} flipped"));
                // One flipped byte costs at most one data block.
                assert!(
                    s.entries.len() + 40 >= entries.len(),
                    "{c:?} byte {at}: {}",
                    s.entries.len()
                );
            }
            check(&[], "empty");
            check(&bytes[bytes.len() - 64..], "footer alone");
        }
    }
}
