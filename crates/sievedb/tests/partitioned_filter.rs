//! Partitioned filters end to end (`FilterOptions::partition_bytes`): every
//! read right under every budget policy and without a budget, reopened, in a
//! tree mixing partitioned and whole filters; the hot partitions of one file
//! kept resident under a budget smaller than its filter; one digest per
//! lookup; bad options refused.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{assert_db_equals, fill_even, open_tables, small_options};
use sievedb::{CompactionStyle, Db, FilterLayout, FilterMemory, FilterPolicy, Options};

fn options(layout: FilterLayout, memory: FilterMemory, policy: FilterPolicy) -> Options {
    let mut o = small_options(CompactionStyle::Leveling);
    o.filter.layout = layout;
    o.filter.bits_per_key = 10.0;
    o.filter.partition_bytes = Some(128);
    o.filter_memory = memory;
    o.filter_policy = policy;
    o
}

fn key(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// Partitions of the filter of every SST file in `dir` (0: a whole filter).
fn partitions(dir: &Path) -> Vec<usize> {
    open_tables(dir)
        .iter()
        .map(|t| {
            let index = t.filter_index().expect("a filter");
            index.partitions().map_or(0, |p| p.parts().len())
        })
        .collect()
}

/// Blocked and Ribbon partitions, without a budget and under every policy:
/// every read right, absent keys mostly ruled out, at most one digest per
/// lookup, the budget held, and all of it again after reopening with whole
/// filters configured (old partitioned files and new whole ones in one tree).
#[test]
fn partitioned_filters_read_right_under_every_policy() {
    let mut cases = vec![(
        FilterLayout::Blocked,
        FilterMemory::Unlimited,
        FilterPolicy::Uniform,
    )];
    cases.push((
        FilterLayout::Ribbon,
        FilterMemory::Unlimited,
        FilterPolicy::Uniform,
    ));
    for &p in FilterPolicy::ALL {
        cases.push((FilterLayout::Blocked, FilterMemory::Bytes(3000), p));
    }
    cases.push((
        FilterLayout::Ribbon,
        FilterMemory::Bytes(3000),
        FilterPolicy::Elastic,
    ));
    for (layout, memory, policy) in cases {
        let what = format!("{layout} {memory:?} {policy}");
        let dir = tempfile::tempdir().unwrap();
        let opts = options(layout, memory, policy);
        let mut model = BTreeMap::new();
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        for round in 0..2 {
            fill_even(&db, &mut model, 12_000, round);
        }
        db.compact_range::<&[u8], _>(..).unwrap();
        let before = db.stats();
        for i in 0..6000 {
            let got = db.get(key(i)).unwrap();
            assert_eq!(
                got.as_deref(),
                model.get(&key(i)).map(Vec::as_slice),
                "{what} {i}"
            );
        }
        let s = db.stats();
        let d = s.delta_since(&before);
        assert!(d.digests_computed <= d.gets, "{what}: {d:?}");
        if let FilterMemory::Bytes(b) = memory {
            assert!(s.filter_memory_bytes <= b, "{what}: {s:?}");
        } else {
            // 3000 absent keys: a whole tree of 10 bits/key filters rules
            // out most of them (Ribbon partitions of ~100 keys are far from
            // their asymptotic rate: ~16% here).
            let want = if layout == FilterLayout::Ribbon {
                2300
            } else {
                2700
            };
            assert!(d.filter_negatives > want, "{what}: {d:?}");
        }
        assert_db_equals(&db, &model, &what);
        db.wait_for_compactions().unwrap();
        let parts = partitions(dir.path());
        assert!(parts.iter().all(|&n| n >= 1), "{what}: {parts:?}");
        assert!(parts.iter().any(|&n| n > 1), "{what}: {parts:?}");
        drop(db);
        // Reopened with whole filters: new files are whole, old ones stay
        // partitioned, every read stays right.
        let mut whole = opts.clone();
        whole.filter.partition_bytes = None;
        let db = Db::open(dir.path(), whole).unwrap();
        fill_even(&db, &mut model, 2_000, 9);
        assert_db_equals(&db, &model, &format!("{what} reopened"));
        db.wait_for_compactions().unwrap();
        drop(db);
        let parts = partitions(dir.path());
        assert!(parts.contains(&0), "{what}: whole filters too {parts:?}");
    }
}

/// A file whose filter is larger than the budget: after lookups of a hot
/// key range, its hot partitions are resident, and lookups of hot keys read
/// no filter block and are ruled out by the filter.
#[test]
fn hot_partitions_stay_resident_under_a_small_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(
        FilterLayout::Blocked,
        FilterMemory::Bytes(1 << 20),
        FilterPolicy::Uniform,
    );
    // One flush of every key (one level-0 file, below the compaction
    // trigger): one file, whatever the timing.
    opts.write_buffer_size = 64 << 20;
    opts.target_file_size = 64 << 20;
    opts.filter.partition_bytes = Some(512);
    opts.filter_access_sample = Some(1);
    let mut model = BTreeMap::new();
    {
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        fill_even(&db, &mut model, 80_000, 0);
        let files: usize = db.stats().levels.iter().map(|l| l.files).sum();
        assert_eq!(files, 1);
    }
    let parts = partitions(dir.path());
    assert_eq!(parts.len(), 1, "{parts:?}");
    assert!(parts[0] > 40, "{parts:?}");
    // A budget of a quarter of the file's filter (40,000 keys at 10 bits).
    let whole = 40_000 * 10 / 8;
    opts.filter_memory = FilterMemory::Bytes(whole / 4);
    let db = Db::open(dir.path(), opts).unwrap();
    // The hot range: 400 absent keys, in one or two partitions of the last
    // quarter of the file (not the partitions a file starts with).
    let hot = 70_001..70_801u64;
    let round = |db: &Db| {
        let before = db.stats();
        for i in hot.clone().step_by(2) {
            assert_eq!(db.get(key(i)).unwrap(), None);
        }
        db.stats().delta_since(&before)
    };
    let start = Instant::now();
    let d = loop {
        let d = round(&db);
        if d.filter_negatives >= 390 || start.elapsed() > Duration::from_secs(30) {
            break d;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(d.filter_negatives >= 390, "hot partitions resident: {d:?}");
    let d = round(&db);
    assert_eq!(d.filter_unit_reads, 0, "no filter read for hot keys: {d:?}");
    assert!(d.filter_negatives >= 390, "{d:?}");
    let s = db.stats();
    assert!(
        s.filter_memory_bytes > 0 && s.filter_memory_bytes <= whole / 4,
        "{s:?}"
    );
    assert_db_equals(&db, &model, "hot partitions");
}

/// Partitioned filters need a one-unit layout and a sane partition size.
#[test]
fn bad_partition_options_are_refused() {
    for (layout, bytes) in [
        (FilterLayout::Units, 4096),
        (FilterLayout::RibbonUnits, 4096),
        (FilterLayout::Blocked, 8),
        (FilterLayout::Blocked, 1 << 40),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options(layout, FilterMemory::Unlimited, FilterPolicy::Uniform);
        o.filter.partition_bytes = Some(bytes);
        let err = Db::open(dir.path(), o).err().expect("refused");
        assert!(err.to_string().contains("partition"), "{err}");
    }
}
