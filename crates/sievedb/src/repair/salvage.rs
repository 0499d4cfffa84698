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
    let mut index = footer.and_then(|f| {
        let top = handles(&block_at(&bytes, f.index)?)?;
        if !f.two_level() {
            return Some((f.index.offset, top));
        }
        // A two-level index: the data blocks are those its partitions list
        // (an unreadable partition leaves the scan to find them).
        let mut all = Vec::new();
        for h in top {
            all.extend(handles(&block_at(&bytes, h)?)?);
        }
        Some((f.index.offset, all))
    });
    let mut props = footer
        .and_then(|f| block_at(&bytes, f.properties))
        .and_then(|b| Properties::decode(&b).ok());
    let mut method = SalvageMethod::Index;
    // The scanned blocks, when the index had to be found among them.
    let mut scanned_blocks = None;
    if index.is_none() {
        method = SalvageMethod::Scan;
        let found = scan(&bytes);
        let spans: std::collections::BTreeSet<(u64, u64)> = found
            .iter()
            .map(|f| (f.offset as u64, f.len as u64))
            .collect();
        let scanned = scanned_index(&found, &spans);
        if let Some((_, at, _)) = &scanned {
            if footer.is_none() {
                props = found
                    .iter()
                    .find(|f| (f.offset + f.len + TRAILER_LEN) as u64 == *at)
                    .and_then(|f| Properties::decode(f.body.as_ref()?).ok());
            }
        }
        index = scanned.map(|(_, at, hs)| (at, hs));
        if index.is_none() {
            return from_scan(found, &spans, props, &bytes);
        }
        scanned_blocks = Some((found, spans));
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
    let mut listed = std::collections::BTreeSet::new();
    for h in handles {
        listed.insert(h.offset);
        match block_at(&bytes, h).and_then(data_entries) {
            Some(es) => {
                s.blocks_read += 1;
                s.entries.extend(es);
            }
            None => lost += 1,
        }
    }
    if let Some((found, spans)) = scanned_blocks {
        // A scanned index may miss blocks (a two-level index whose later
        // partitions and top level are damaged reads as one partition):
        // the data blocks it does not list are taken too.
        for (offset, es) in scanned_data_blocks(&found, &spans) {
            if !listed.contains(&offset) {
                s.blocks_read += 1;
                s.entries.extend(es);
            }
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
/// blocks `found`.
fn from_scan(
    found: Vec<Found>,
    spans: &std::collections::BTreeSet<(u64, u64)>,
    props: Option<Properties>,
    bytes: &[u8],
) -> Salvage {
    let mut s = Salvage {
        method: SalvageMethod::Scan,
        ..Salvage::default()
    };
    for (_, es) in scanned_data_blocks(&found, spans) {
        s.blocks_read += 1;
        s.entries.extend(es);
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

/// The data blocks among the blocks `found`, each's offset and entries:
/// kept in file order, a block overlapping one kept before it skipped, an
/// index block (a partition of a two-level index may hold no separator key
/// and so decode as a data block) never taken.
fn scanned_data_blocks(
    found: &[Found],
    spans: &std::collections::BTreeSet<(u64, u64)>,
) -> Vec<(u64, Vec<Entry>)> {
    let mut out = Vec::new();
    let mut end = 0;
    for f in found {
        if f.offset < end || index_handles(f, spans).is_some() {
            continue;
        }
        if let Some(es) = f.body.clone().and_then(data_entries) {
            out.push((f.offset as u64, es));
            end = f.offset + f.len + TRAILER_LEN;
        }
    }
    out
}

/// The handles of found block `f` if it is an index block: every value a
/// block handle, each past the one before and all before the block itself,
/// one at least the span of a found block (`spans`).
fn index_handles(
    f: &Found,
    spans: &std::collections::BTreeSet<(u64, u64)>,
) -> Option<Vec<BlockHandle>> {
    let hs = handles(f.body.as_ref()?)?;
    let ordered = hs.windows(2).all(|w| end_of(&w[0]) <= w[1].offset);
    let before = hs.last().is_some_and(|h| end_of(h) <= f.offset as u64);
    let any = hs.iter().any(|h| spans.contains(&(h.offset, h.size)));
    (ordered && before && any).then_some(hs)
}

/// The offset just past block `h` and its trailer.
fn end_of(h: &BlockHandle) -> u64 {
    h.offset
        .saturating_add(h.size)
        .saturating_add(TRAILER_LEN as u64)
}

/// The index of a file whose footer or index is unreadable, found among the
/// scanned blocks: whether it is two-level, the offset of its (top-level)
/// block, which the properties block ends at, and the data blocks it lists.
/// `None` when it cannot be trusted to list every data block.
///
/// The first index block is the last index block whose first handle is at
/// offset 0 (where data blocks start; the index follows the data). Of a
/// two-level index that is partition 0, and partition `i + 1` is the index
/// block whose handles start where partition `i`'s end and end before
/// partition 0; the top level is the index block listing exactly those
/// partitions. A file with partitions but no top level listing them all (a
/// damaged partition or top level) gets `None`, for the scan to find every
/// data block instead.
fn scanned_index(
    found: &[Found],
    spans: &std::collections::BTreeSet<(u64, u64)>,
) -> Option<(bool, u64, Vec<BlockHandle>)> {
    let (first, mut hs) = found.iter().rev().find_map(|f| {
        let hs = index_handles(f, spans)?;
        (hs[0].offset == 0).then_some((f, hs))
    })?;
    let at0 = first.offset as u64;
    let mut parts = vec![(at0, first.len as u64)];
    let mut last = first.offset;
    loop {
        let from = hs.last().map_or(0, end_of);
        let next = found.iter().filter(|f| f.offset > last).find_map(|f| {
            let more = index_handles(f, spans)?;
            let fits = more[0].offset == from && more.last().is_some_and(|h| end_of(h) <= at0);
            fits.then_some((f, more))
        });
        let Some((f, more)) = next else { break };
        parts.push((f.offset as u64, f.len as u64));
        last = f.offset;
        hs.extend(more);
    }
    let top = found.iter().find(|f| {
        index_handles(f, spans)
            .is_some_and(|t| t.first().is_some_and(|h| (h.offset, h.size) == parts[0]))
    });
    match top {
        None if parts.len() == 1 => Some((false, at0, hs)),
        Some(t) => {
            let listed: Vec<(u64, u64)> = index_handles(t, spans)?
                .iter()
                .map(|h| (h.offset, h.size))
                .collect();
            (listed == parts).then_some((true, t.offset as u64, hs))
        }
        None => None,
    }
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
    /// tombstones too), compressed by `c`, its index cut into partitions of
    /// about `partition` bytes if set; returns its bytes and entries.
    fn table(path: &Path, c: Compression, partition: Option<u64>) -> (Vec<u8>, Vec<Entry>) {
        let fs = StdFs;
        let mut w = TableWriter::new(
            fs.create(path).unwrap(),
            0,
            256,
            4,
            c,
            &crate::filter::FilterOptions::default(),
        );
        w.set_index_partition_bytes(partition);
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
    /// is salvaged is entries of the table, never anything else; a
    /// two-level index's partitions are never taken for data.
    #[test]
    fn salvage_returns_only_real_entries_whatever_the_damage() {
        let dir = tempfile::tempdir().unwrap();
        for (c, partition) in [
            (Compression::None, None),
            (Compression::Lz4, None),
            (Compression::None, Some(100)),
            (Compression::Lz4, Some(100)),
        ] {
            let path = dir.path().join("t.sst");
            let (bytes, entries) = table(&path, c, partition);
            let footer = Footer::decode(&bytes[bytes.len() - FOOTER_LEN..]).unwrap();
            assert_eq!(footer.two_level(), partition.is_some());
            let c = format!("{c:?} {partition:?}");
            let whole = salvage(&StdFs, &path);
            assert_eq!(whole.method, SalvageMethod::Index);
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
            // A damaged footer, index or partition: the scan finds it all.
            let data_end = whole.props.as_ref().map(|_| {
                let mut it = BlockIter::new(Arc::new(
                    Block::new(block_at(&bytes, footer.index).unwrap()).unwrap(),
                ));
                it.seek_to_first().unwrap();
                BlockHandle::decode(it.value()).unwrap().offset as usize
            });
            let mut damage = vec![bytes.len() - 10, footer.index.offset as usize + 1];
            if partition.is_some() {
                damage.extend(data_end.map(|d| d + 1));
            }
            for at in damage {
                let mut d = bytes.clone();
                d[at] ^= 0x08;
                let s = check(&d, &format!("{c:?} byte {at} flipped"));
                assert_eq!(s.entries, entries, "{c:?} byte {at}");
            }
            check(&[], "empty");
            check(&bytes[bytes.len() - 64..], "footer alone");
        }
    }
}
