//! Reader tests: lookups, scans, checksums, compression, filters, table
//! metadata; `build` and `open` are shared with other modules' tests.

use super::*;
use crate::filter::section::UnitSource;
use crate::filter::{FilterLayout, FilterOptions, HashSharing};
use crate::io::StdFs;
use crate::key::{internal_key, Kind};
use crate::options::Compression;
use crate::sst::TableWriter;

/// A table of keys `k0000..k0999` (even numbers) with 6-unit filters,
/// its filter written as a version-4 index or a version-3 section.
fn table(dir: &Path, legacy: bool) -> TableReader {
    let fs = StdFs;
    let path = dir.join(if legacy { "old.sst" } else { "new.sst" });
    let opts = FilterOptions {
        layout: FilterLayout::Units,
        units: 6,
        bits_per_key: 12.0,
        ..FilterOptions::default()
    };
    let mut w = TableWriter::new(
        fs.create(&path).unwrap(),
        1,
        256,
        4,
        Compression::None,
        &opts,
    );
    w.legacy_filter = legacy;
    for i in (0..1000).step_by(2) {
        let k = internal_key(format!("k{i:04}").as_bytes(), 1, Kind::Put);
        w.add(&k, b"v").unwrap();
    }
    w.finish().unwrap();
    let counters = Arc::new(Counters::new(4));
    TableReader::open(&fs, &path, 1, false, true, None, counters).unwrap()
}

/// Opens the table at `path` as number 1, through the page cache, without a
/// block cache, with counters of its own.
fn open_plain(path: &Path) -> TableReader {
    let counters = Arc::new(Counters::new(4));
    TableReader::open(&StdFs, path, 1, false, true, None, counters).unwrap()
}

/// Writes `entries` (sorted internal keys) as table `number` at `path`
/// in small blocks, and opens it.
pub(crate) fn write_table(path: &Path, number: u64, entries: &[(Vec<u8>, Vec<u8>)]) -> TableReader {
    let fs = StdFs;
    let mut w = TableWriter::new(
        fs.create(path).unwrap(),
        1,
        128,
        3,
        Compression::None,
        &FilterOptions::default(),
    );
    for (k, v) in entries {
        w.add(k, v).unwrap();
    }
    w.finish().unwrap();
    let counters = Arc::new(Counters::new(4));
    TableReader::open(&fs, path, number, false, true, None, counters).unwrap()
}

#[test]
fn table_iter_in_both_directions() {
    use crate::iter::testing::{check_bidirectional, random_entries};
    let dir = tempfile::tempdir().unwrap();
    for (seed, n) in [(1u64, 1usize), (2, 7), (3, 300), (4, 1000)] {
        let entries = random_entries(seed, n);
        let t = Arc::new(write_table(
            &dir.path().join(format!("{seed}.sst")),
            seed,
            &entries,
        ));
        check_bidirectional(&mut t.iter(ReadCtx::new(0)), &entries, seed);
    }
}

/// Old (version-3 section) and new (version-4 units) files load their
/// units to the same filter, one prefix at a time, counted as loads.
#[test]
fn old_and_new_filter_sections_load_the_same_units() {
    let dir = tempfile::tempdir().unwrap();
    let new = table(dir.path(), false);
    let old = table(dir.path(), true);
    let (ni, oi) = (new.filter_index().unwrap(), old.filter_index().unwrap());
    assert!(matches!(ni.source(), UnitSource::Blocks(h) if h.len() == 6));
    assert!(matches!(oi.source(), UnitSource::Section { .. }));
    let mut nf = ni.empty().clone();
    let mut of = oi.empty().clone();
    for n in 1..=6 {
        nf = new.load_filter_units(&nf, n).unwrap();
        of = old.load_filter_units(&of, n).unwrap();
        assert_eq!((nf.resident(), of.resident()), (n, n));
        assert_eq!(nf.resident_bytes(), of.resident_bytes());
        for i in 0..1000 {
            let key = format!("k{i:04}");
            let mut p = KeyProbe::new(key.as_bytes(), HashSharing::Levels);
            let mut q = KeyProbe::new(key.as_bytes(), HashSharing::Levels);
            let (a, b) = (nf.may_contain(&mut p), of.may_contain(&mut q));
            assert_eq!(a, b);
            assert!(i % 2 == 1 || a, "no false negative");
        }
    }
    let count = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
    // Six loads of one unit each: six units, six reads.
    assert_eq!(count(&new.counters.filter_unit_loads), 6);
    assert_eq!(count(&new.counters.filter_unit_reads), 6);
    // Loading is idempotent past the last unit and never half done.
    assert_eq!(new.load_filter_units(&nf, 9).unwrap().resident(), 6);
    assert_eq!(count(&new.counters.filter_unit_reads), 6);
    // Four units at once are four loads and one read.
    let four = new.load_filter_units(&nf.truncated(2), 6).unwrap();
    assert_eq!(four.resident(), 6);
    assert_eq!(count(&new.counters.filter_unit_loads), 10);
    assert_eq!(count(&new.counters.filter_unit_reads), 7);
}

#[test]
fn a_damaged_unit_is_corruption_and_loads_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path(), false);
    let index = t.filter_index().unwrap().clone();
    let UnitSource::Blocks(handles) = index.source() else {
        panic!("version 4")
    };
    let path = dir.path().join("new.sst");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[handles[3].0 as usize] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let t = open_plain(&path);
    let two = t.load_filter_units(index.empty(), 2).unwrap();
    let err = t.load_filter_units(&two, 6).expect_err("corruption");
    assert!(matches!(err, Error::Corruption { .. }), "{err}");
    assert!(err.to_string().contains("new.sst"), "{err}");
}

/// A table read through its map answers every lookup and scan exactly
/// as one read with `pread`, with the same counters, its uncompressed
/// data blocks used in place and cached once.
#[test]
fn mapped_and_pread_tables_read_the_same() {
    use crate::iter::testing::random_entries;
    use crate::key::MAX_SEQ;
    use std::sync::atomic::Ordering::Relaxed;
    let dir = tempfile::tempdir().unwrap();
    let entries = random_entries(11, 2000);
    let path = dir.path().join("t.sst");
    drop(write_table(&path, 1, &entries));
    let open = |access, cache: bool| {
        let counters = Arc::new(Counters::new(4));
        let cache = cache.then(|| Arc::new(BlockCache::new(1 << 20)));
        TableReader::open_access(&StdFs, &path, 1, access, true, cache, counters).unwrap()
    };
    for cache in [false, true] {
        let (m, b) = (open(Access::Mapped, cache), open(Access::Buffered, cache));
        assert!(m.map.is_some() && b.map.is_none());
        for (k, _) in entries.iter().step_by(3) {
            let user = key::user_key(k);
            let seek = key::internal_key(user, MAX_SEQ, Kind::Put);
            let mut missing = user.to_vec();
            missing.push(b'!');
            let seek2 = key::internal_key(&missing, MAX_SEQ, Kind::Put);
            for s in [&seek, &seek2] {
                let get = |t: &TableReader| {
                    let mut p = KeyProbe::new(key::user_key(s), HashSharing::Levels);
                    t.get(&mut p, s, ReadCtx::new(0), false, 0).unwrap()
                };
                assert_eq!(get(&m), get(&b));
            }
        }
        let (m, b) = (Arc::new(m), Arc::new(b));
        for t in [&m, &b] {
            let mut it = t.iter(ReadCtx::new(0));
            it.seek_to_first().unwrap();
            let mut n = 0;
            while it.valid() {
                assert_eq!(
                    (it.key(), it.value()),
                    (&entries[n].0[..], &entries[n].1[..])
                );
                n += 1;
                it.next().unwrap();
            }
            assert_eq!(n, entries.len());
        }
        for c in [
            |c: &Counters| c.bytes_read.load(Relaxed),
            |c: &Counters| c.block_cache_hits.load(Relaxed),
            |c: &Counters| c.block_cache_misses.load(Relaxed),
        ] {
            assert_eq!(c(&m.counters), c(&b.counters));
        }
        assert!(m.counters.block_cache_misses.load(Relaxed) > 0);
    }
}

/// Through the map, a damaged data block is a checksum error and a
/// handle past the end of the file a corruption error, never a fault.
#[test]
fn mapped_damage_is_corruption() {
    use crate::iter::testing::random_entries;
    let dir = tempfile::tempdir().unwrap();
    let entries = random_entries(12, 500);
    let path = dir.path().join("t.sst");
    drop(write_table(&path, 1, &entries));
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[10] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let t = TableReader::open_access(
        &StdFs,
        &path,
        1,
        Access::Mapped,
        true,
        None,
        Arc::new(Counters::new(4)),
    )
    .unwrap();
    assert!(t.map.is_some());
    let first = t
        .index_search(&entries[0].0, ReadCtx::new(0))
        .unwrap()
        .unwrap();
    let e = t.fetch_block(first, true).err().expect("checksum");
    assert!(matches!(e, Error::Corruption { .. }), "{e}");
    let unchecked = t.fetch_block(first, false).map(|_| ());
    assert!(unchecked.is_ok(), "unchecked reads skip the checksum");
    let size = bytes.len() as u64;
    for h in [
        BlockHandle {
            offset: size - 3,
            size: 1,
        },
        BlockHandle { offset: 0, size },
        BlockHandle {
            offset: u64::MAX - 2,
            size: 10,
        },
    ] {
        let e = t.fetch_block(h, true).err().expect("out of range");
        assert!(matches!(e, Error::Corruption { .. }), "{e}");
    }
}

/// An open reads the file's tail once when the metadata lies in it, and
/// metadata starting before the tail in one more read; both kinds of file
/// read back whole.
#[test]
fn an_open_reads_the_tail_once_and_metadata_before_it_in_one_more() {
    use crate::iter::testing::check_bidirectional;
    use std::sync::atomic::Ordering::Relaxed;
    let dir = tempfile::tempdir().unwrap();
    let key = |i: usize| internal_key(format!("key{i:08}").as_bytes(), 1, Kind::Put);
    let open = |n: usize| {
        let path = dir.path().join(format!("{n}.sst"));
        let opts = FilterOptions {
            layout: FilterLayout::Units,
            units: 6,
            bits_per_key: 12.0,
            ..FilterOptions::default()
        };
        // 64-byte blocks: one index entry per few keys.
        let file = StdFs.create(&path).unwrap();
        let mut w = TableWriter::new(file, 1, 64, 4, Compression::None, &opts);
        for i in 0..n {
            w.add(&key(i), b"v").unwrap();
        }
        w.finish().unwrap();
        let counters = Arc::new(Counters::new(4));
        let t = TableReader::open(&StdFs, &path, 1, false, true, None, counters.clone());
        let t = Arc::new(t.unwrap());
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..n).map(|i| (key(i), b"v".to_vec())).collect();
        check_bidirectional(&mut t.iter(ReadCtx::new(0)), &entries, n as u64);
        let size = std::fs::metadata(&path).unwrap().len();
        let reads = counters.table_open_reads.load(Relaxed);
        (reads, counters.table_open_bytes.load(Relaxed), size, t)
    };
    let (reads, bytes, size, _) = open(100);
    assert_eq!(reads, 1);
    assert!(
        bytes <= size.max(4 << 10) && bytes >= size.min(4 << 10),
        "{bytes} of {size}"
    );
    // An index far larger than the tail: the rest of the metadata in one more read.
    let (reads, bytes, size, big) = open(10_000);
    assert!(big.meta.index.size() > size as usize / 32);
    assert_eq!(reads, 2, "the tail, then the metadata before it");
    // What it read is the metadata: more than the index, less than the file.
    assert!(
        bytes > big.meta.index.size() as u64 && bytes < size / 2,
        "{bytes} of {size}"
    );
}

/// Long keys that differ early (a decimal index, then padding, as the
/// benchmarks' 512-byte keys) are indexed by short separators, and every
/// point lookup and seek answers as a search of the entries does: keys
/// present at several sequence numbers (their versions spanning blocks),
/// keys absent between them, seeks at every sequence number.
#[test]
fn separators_index_long_keys_and_every_lookup_matches_the_entries() {
    use crate::iter::testing::check_bidirectional;
    use crate::key::MAX_SEQ;
    use std::cmp::Ordering;
    let dir = tempfile::tempdir().unwrap();
    let user = |i: u64, marker: u8| {
        let mut u = format!("{i:08}").into_bytes();
        u.push(marker);
        u.resize(512, b'.');
        u
    };
    // Keys 0, 3, 6, … present; every third one at three sequence numbers.
    let mut entries = Vec::new();
    for i in (0..600u64).step_by(3) {
        let versions: &[u64] = if i % 9 == 0 { &[30, 20, 10] } else { &[20] };
        for &seq in versions {
            let kind = if seq == 20 && i % 27 == 0 {
                Kind::Delete
            } else {
                Kind::Put
            };
            entries.push((
                internal_key(&user(i, b'0'), seq, kind),
                format!("v{i}.{seq}").into_bytes(),
            ));
        }
    }
    let path = dir.path().join("long.sst");
    let file = StdFs.create(&path).unwrap();
    let mut w = TableWriter::new(
        file,
        1,
        1024,
        4,
        Compression::None,
        &FilterOptions::default(),
    );
    for (k, v) in &entries {
        w.add(k, v).unwrap();
    }
    w.finish().unwrap();
    let t = Arc::new(open_plain(&path));
    // Index keys of a few bytes, except where a block ends inside the
    // versions of one user key (and at the last block): there the block's
    // last key itself.
    let mut index = crate::sst::block::BlockIter::new(t.meta.index.clone());
    index.seek_to_first().unwrap();
    let (mut short, mut blocks) = (0, 0);
    while index.valid() {
        let k = index.key().to_vec();
        index.next().unwrap();
        blocks += 1;
        if k.len() <= 9 + 8 {
            short += 1;
            continue;
        }
        let at = entries
            .iter()
            .position(|(e, _)| *e == k)
            .expect("a long index key is an entry's");
        assert!(
            !index.valid() || key::user_key(&entries[at + 1].0) == key::user_key(&k),
            "block boundary between two user keys kept a long key"
        );
    }
    assert!(
        blocks > 100 && short > blocks / 3,
        "{short} short index keys of {blocks}"
    );
    check_bidirectional(&mut t.iter(ReadCtx::new(0)), &entries, 0);
    // The entry a seek for `target` must find: the first at or after it.
    let first_at = |target: &[u8]| {
        entries
            .iter()
            .find(|(k, _)| key::compare(k, target) != Ordering::Less)
    };
    for i in 0..602u64 {
        for marker in [b'0', b'1'] {
            let u = user(i, marker);
            for seq in [MAX_SEQ, 35, 30, 25, 20, 15, 10, 5] {
                let target = internal_key(&u, seq, Kind::Merge);
                let want = first_at(&target);
                // Point lookup: the newest version at or below `seq`, if of this key.
                let mut p = KeyProbe::new(&u, HashSharing::Levels);
                let got = t.get(&mut p, &target, ReadCtx::new(0), false, 0).unwrap();
                let expect = match want {
                    Some((k, v)) if key::user_key(k) == &u[..] => Lookup::of(key::kind_of(k), v),
                    _ => Lookup::Absent,
                };
                assert_eq!(got, expect, "get {i} {} at {seq}", marker as char);
                // Seek: the first entry at or after the target.
                let mut it = t.iter(ReadCtx::new(0));
                it.seek(&target).unwrap();
                match want {
                    Some((k, _)) => assert_eq!(it.key(), &k[..], "seek {i} at {seq}"),
                    None => assert!(!it.valid(), "seek {i} at {seq}"),
                }
            }
        }
    }
}

/// A table of keys `p00..p49` × 4 suffixes with a 3-byte prefix filter
/// (`filter_bits` 0: no key filter).
fn prefix_table(path: &Path, filter_bits: f64) -> u64 {
    let fs = StdFs;
    let opts = FilterOptions {
        bits_per_key: filter_bits,
        ..FilterOptions::default()
    };
    let mut w = TableWriter::new(
        fs.create(path).unwrap(),
        1,
        256,
        4,
        Compression::None,
        &opts,
    );
    w.set_prefix_extractor(Some(Arc::new(crate::filter::prefix::FixedPrefix::new(3))));
    for p in 0..50 {
        for s in 0..4 {
            let k = internal_key(format!("p{p:02}{s}").as_bytes(), 1, Kind::Put);
            w.add(&k, b"v").unwrap();
        }
    }
    w.add(&internal_key(b"q", 1, Kind::Put), b"v").unwrap(); // out of the domain
    w.finish().unwrap().1
}

#[test]
fn prefix_filters_open_with_and_without_key_filters_and_damage_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    for bits in [10.0, 0.0] {
        let path = dir.path().join(format!("prefix-{bits}.sst"));
        let size = prefix_table(&path, bits);
        let t = open_plain(&path);
        let f = t.prefix_filter().expect("a prefix filter");
        assert_eq!((f.extractor_name(), f.filter().num_keys()), ("fixed:3", 50));
        assert_eq!(t.properties().filter_keys, if bits > 0.0 { 201 } else { 0 });
        for p in 0..50 {
            let k = format!("p{p:02}");
            let mut probe = KeyProbe::new(k.as_bytes(), HashSharing::Levels);
            assert!(t.may_contain_prefix("fixed:3", &mut probe), "{k}");
        }
        let absent = (0..1000)
            .filter(|i| {
                let k = format!("x{i:02}");
                !t.may_contain_prefix(
                    "fixed:3",
                    &mut KeyProbe::new(k.as_bytes(), HashSharing::Levels),
                )
            })
            .count();
        assert!(absent > 900, "{absent}");
        // Another extractor's seeks never skip the file.
        assert!(t.may_contain_prefix("fixed:4", &mut KeyProbe::new(b"x000", HashSharing::Levels)));
        // The data ends where the prefix filter (or the key filter) starts.
        let h = t.properties().prefix_filter_block;
        assert!(t.data_end() <= h.offset && h.offset + h.size < size);
        // A flipped byte in the block is corruption, named, at open.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[h.offset as usize + 3] ^= 0x40;
        let bad = dir.path().join("bad.sst");
        std::fs::write(&bad, &bytes).unwrap();
        let err = TableReader::open(
            &StdFs,
            &bad,
            1,
            false,
            true,
            None,
            Arc::new(Counters::new(4)),
        )
        .err()
        .expect("corruption");
        assert!(matches!(err, Error::Corruption { .. }), "{err}");
    }
    // A table without a prefix extractor has no prefix filter and is never skipped.
    let t = table(dir.path(), false);
    assert!(t.prefix_filter().is_none());
    assert!(t.may_contain_prefix("fixed:3", &mut KeyProbe::new(b"zzz", HashSharing::Levels)));
}
