//! The Ribbon filter layout end to end: a database written with
//! `FilterLayout::Ribbon` reopens, finds every key, lets few absent keys reach
//! a data block and hashes each lookup once; files of other layouts written
//! before coexist with Ribbon files.

use std::path::Path;
use std::sync::Arc;

use sievedb::sst::reader::TableReader;
use sievedb::{CompactionStyle, Db, FilterLayout, HashSharing, Options};

const RUNS: u32 = 4;
const KEYS_PER_RUN: u32 = 2000;

fn options(layout: FilterLayout, bits_per_key: f64) -> Options {
    let mut o = Options::builder()
        .write_buffer_size(4 << 20)
        .level0_compaction_trigger(32)
        .level0_slowdown_trigger(32)
        .level0_stop_trigger(40)
        .compaction_style(CompactionStyle::Tiering)
        .build();
    o.filter.layout = layout;
    o.filter.bits_per_key = bits_per_key;
    o
}

fn key(i: u32) -> String {
    format!("key{i:07}")
}

/// Writes run `r` (keys `i·RUNS + r`), one L0 file.
fn write_run(db: &Db, r: u32) {
    for i in 0..KEYS_PER_RUN {
        db.put(key(i * RUNS + r), format!("v{r}-{i}")).unwrap();
    }
    db.flush().unwrap();
}

/// The layouts of the filters of the database's SST files.
fn file_layouts(dir: &Path) -> Vec<FilterLayout> {
    let counters = Arc::new(sievedb::stats::Counters::new(8));
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("sst") {
            continue;
        }
        let number: u64 = path.file_stem().unwrap().to_str().unwrap().parse().unwrap();
        let t = TableReader::open(
            &sievedb::io::StdFs,
            &path,
            number,
            false,
            true,
            None,
            counters.clone(),
        )
        .unwrap();
        out.push(t.filter_index().expect("a filter").empty().layout());
    }
    out
}

/// Every key of runs `0..runs` reads back with its value.
fn check_present(db: &Db, runs: u32) {
    for r in 0..runs {
        for i in 0..KEYS_PER_RUN {
            let v = db.get(key(i * RUNS + r)).unwrap();
            assert_eq!(
                v.as_deref(),
                Some(format!("v{r}-{i}").as_bytes()),
                "{r} {i}"
            );
        }
    }
}

/// Counter deltas of `n` lookups of absent keys inside every file's range.
fn absent_lookups(db: &Db, n: u32) -> sievedb::Stats {
    let before = db.stats();
    for i in 0..n {
        assert_eq!(
            db.get(format!("{}-absent", key(10 + (i * 7) % 7900)))
                .unwrap(),
            None
        );
    }
    db.stats().delta_since(&before)
}

#[test]
fn ribbon_database_reopens_reads_and_skips_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(FilterLayout::Ribbon, 8.0);
    {
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        for r in 0..RUNS {
            write_run(&db, r);
        }
        db.close().unwrap();
    }
    let layouts = file_layouts(dir.path());
    assert_eq!(layouts.len(), RUNS as usize);
    assert!(
        layouts.iter().all(|&l| l == FilterLayout::Ribbon),
        "{layouts:?}"
    );

    // Reopened with the default (Bloom) filter options: the files keep their
    // Ribbon.
    let mut reopened = opts;
    reopened.filter = sievedb::FilterOptions::default();
    let db = Db::open(dir.path(), reopened).unwrap();
    check_present(&db, RUNS);
    let d = absent_lookups(&db, 2000);
    assert_eq!(d.filter_probes, 2000 * u64::from(RUNS));
    // r = ⌊8 / 1.04⌋ = 7 at 2000 keys: FPR 2^-7 ≈ 0.8%, ~63 of 8000 probes.
    assert!(d.filter_negatives >= d.filter_probes * 97 / 100, "{d:?}");
    assert!(d.data_block_reads <= d.filter_probes * 3 / 100, "{d:?}");
    // One digest per lookup, shared by the four Ribbon filters.
    assert_eq!(d.digests_computed, 2000, "{d:?}");
    // key_may_exist answers from the same filters.
    assert!(db.key_may_exist(key(5)).unwrap());
}

#[test]
fn ribbon_hashes_once_per_lookup_in_every_sharing_mode() {
    for (sharing, per_lookup) in [
        (HashSharing::Levels, 1),
        (HashSharing::Filter, u64::from(RUNS)),
        // Ribbon takes one digest per filter probe even without sharing.
        (HashSharing::None, u64::from(RUNS)),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = options(FilterLayout::Ribbon, 10.0);
        opts.filter.sharing = sharing;
        let db = Db::open(dir.path(), opts).unwrap();
        for r in 0..RUNS {
            write_run(&db, r);
        }
        let d = absent_lookups(&db, 500);
        assert_eq!(d.filter_probes, 500 * u64::from(RUNS), "{sharing}");
        assert_eq!(d.digests_computed, 500 * per_lookup, "{sharing}: {d:?}");
    }
}

#[test]
fn bloom_files_then_ribbon_files_read_correctly() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), options(FilterLayout::Bloom, 10.0)).unwrap();
        write_run(&db, 0);
        write_run(&db, 1);
        db.close().unwrap();
    }
    {
        let mut o = options(FilterLayout::Blocked, 10.0);
        o.filter.layout = FilterLayout::Blocked;
        let db = Db::open(dir.path(), o).unwrap();
        write_run(&db, 2);
        db.close().unwrap();
    }
    let db = Db::open(dir.path(), options(FilterLayout::Ribbon, 7.5)).unwrap();
    check_present(&db, 3);
    write_run(&db, 3);
    let mut layouts = file_layouts(dir.path());
    layouts.sort_by_key(|l| l.id());
    assert_eq!(
        layouts,
        [
            FilterLayout::Bloom,
            FilterLayout::Bloom,
            FilterLayout::Blocked,
            FilterLayout::Ribbon
        ]
    );
    check_present(&db, RUNS);
    let d = absent_lookups(&db, 1000);
    assert_eq!(d.digests_computed, 1000, "{d:?}");
    assert!(d.filter_negatives >= d.filter_probes * 95 / 100, "{d:?}");
    // Compacting everything rewrites the files as Ribbon, still all readable.
    db.compact_range::<&[u8], _>(..).unwrap();
    db.wait_for_compactions().unwrap();
    check_present(&db, RUNS);
    assert!(file_layouts(dir.path())
        .iter()
        .all(|&l| l == FilterLayout::Ribbon));
    db.close().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    check_present(&db, RUNS);
}
