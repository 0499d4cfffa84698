//! Ribbon units end to end: ElasticBF units of Ribbon filters under every
//! budget policy (loaded, dropped, counted as Bloom units), reopened, mixed
//! with Bloom units in one tree, the hybrid tree (`ribbon_from_level`), and
//! one digest per lookup.

mod common;

use std::collections::BTreeMap;

use common::{assert_db_equals, file_layouts, fill_even, small_options};
use sievedb::{CompactionStyle, Db, FilterLayout, FilterMemory, FilterPolicy, Options, Stats};

/// Small trees with 6 filter units of 2 bits per key each, of `layout`.
fn options(layout: FilterLayout, memory: FilterMemory, policy: FilterPolicy) -> Options {
    let mut o = small_options(CompactionStyle::Leveling);
    o.filter.layout = layout;
    o.filter.units = 6;
    o.filter.bits_per_key = 12.0;
    o.filter_memory = memory;
    o.filter_policy = policy;
    o
}

fn key(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn files(s: &Stats) -> u64 {
    s.levels.iter().map(|l| l.files as u64).sum()
}

/// Under every policy a byte budget holds through flushes, compactions,
/// lookups and reopen with Ribbon units; units are loaded and dropped; every
/// read is right; missing keys are mostly ruled out; at most one digest per
/// lookup.
#[test]
fn every_policy_loads_and_drops_ribbon_units() {
    for (&policy, layout) in FilterPolicy::ALL
        .iter()
        .flat_map(|p| [(p, FilterLayout::Units), (p, FilterLayout::RibbonUnits)])
    {
        let policy = format!("{policy}");
        let policy: FilterPolicy = policy.parse().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let budget = 1500;
        let opts = options(layout, FilterMemory::Bytes(budget), policy);
        let mut model = BTreeMap::new();
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        for round in 0..2 {
            fill_even(&db, &mut model, 12_000, round);
        }
        db.compact_range::<&[u8], _>(..).unwrap();
        let before = db.stats();
        for i in 0..6000 {
            let _ = db.get(key(i)).unwrap();
        }
        // A hot range: elastic moves units to it, the others keep their plan.
        for _ in 0..4 {
            for i in 0..1000 {
                let _ = db.get(key(i)).unwrap();
            }
        }
        let s = db.stats();
        let d = s.delta_since(&before);
        assert!(files(&s) > 10, "{policy}: a tree of many files");
        assert!(s.filter_memory_bytes <= budget, "{policy}: {s:?}");
        // (skew-at-write gives this small tree's files no unit, Bloom or
        // Ribbon: they are priced out by its last optimum.)
        assert!(
            s.filter_memory_bytes > 0 || policy == FilterPolicy::SkewAtWrite,
            "{policy} {layout}: some units resident {s:?}"
        );
        assert!(
            s.filter_unit_loads > 0 || policy == FilterPolicy::SkewAtWrite,
            "{policy}"
        );
        assert!(d.digests_computed <= d.gets, "{policy}: {d:?}");
        assert!(
            d.digests_computed > 0 || policy == FilterPolicy::SkewAtWrite,
            "{policy}"
        );
        assert_db_equals(&db, &model, &format!("{policy}"));
        for (level, got) in {
            db.wait_for_compactions().unwrap();
            file_layouts(dir.path())
        } {
            assert_eq!(got, layout, "{policy} L{level}");
        }
        drop(db);
        // A budget a quarter as large drops units; reopened, it holds.
        let small = budget / 4;
        let db = Db::open(
            dir.path(),
            Options {
                filter_memory: FilterMemory::Bytes(small),
                ..opts.clone()
            },
        )
        .unwrap();
        for i in 0..3000 {
            let _ = db.get(key(i)).unwrap();
        }
        let s = db.stats();
        assert!(s.filter_memory_bytes <= small, "{policy} reopened: {s:?}");
        assert_db_equals(&db, &model, &format!("{policy} reopened"));
    }
}

/// Without a budget every Ribbon unit of every file is resident, absent keys
/// are ruled out at about `2^-6`, and each lookup computes exactly one
/// digest.
#[test]
fn unlimited_ribbon_units_rule_out_absent_keys_with_one_digest() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(
        FilterLayout::RibbonUnits,
        FilterMemory::Unlimited,
        FilterPolicy::Uniform,
    );
    let db = Db::open(dir.path(), o).unwrap();
    let mut model = BTreeMap::new();
    fill_even(&db, &mut model, 20_000, 0);
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_db_equals(&db, &model, "unlimited");
    let before = db.stats();
    let n = 5000;
    for i in 0..n {
        assert_eq!(db.get(key(2 * i + 1)).unwrap(), None);
    }
    let d = db.stats().delta_since(&before);
    assert_eq!(d.gets, n);
    // One digest per lookup that probed a filter (one between two files'
    // ranges probes none), however many files it probed.
    assert!(d.digests_computed <= n, "{d:?}");
    assert!(d.digests_computed * 10 > n * 9, "{d:?}");
    assert!(d.filter_probes >= d.digests_computed, "{d:?}");
    // 6 units of r = 1: 1/64 per file probed (well under 4%).
    let fp = d.filter_probes - d.filter_negatives;
    assert!((fp as f64) < 0.04 * d.filter_probes as f64, "{d:?}");
    let s = db.stats();
    let h: u64 = s
        .levels
        .iter()
        .map(|l| l.enabled_units.get(6).copied().unwrap_or(0))
        .sum();
    assert_eq!(h, files(&s));
}

/// A tree written with Bloom units, then reopened with Ribbon units: both
/// kinds in one tree under one budget, every policy, correct reads, before
/// and after a compaction.
#[test]
fn bloom_and_ribbon_units_share_a_tree_and_a_budget() {
    for &policy in FilterPolicy::ALL {
        let dir = tempfile::tempdir().unwrap();
        let memory = FilterMemory::BitsPerKey(4.0);
        let mut model = BTreeMap::new();
        let db = Db::open(dir.path(), options(FilterLayout::Units, memory, policy)).unwrap();
        fill_even(&db, &mut model, 8000, 0);
        db.compact_range::<&[u8], _>(..).unwrap();
        drop(db);
        let db = Db::open(
            dir.path(),
            options(FilterLayout::RibbonUnits, memory, policy),
        )
        .unwrap();
        fill_even(&db, &mut model, 6000, 1);
        let layouts: Vec<FilterLayout> = {
            db.wait_for_compactions().unwrap();
            file_layouts(dir.path())
        }
        .into_iter()
        .map(|(_, l)| l)
        .collect();
        assert!(layouts.contains(&FilterLayout::Units), "{policy}");
        assert!(layouts.contains(&FilterLayout::RibbonUnits), "{policy}");
        let before = db.stats();
        for i in 0..4000 {
            let _ = db.get(key(i)).unwrap();
        }
        let s = db.stats();
        let d = s.delta_since(&before);
        assert!(d.digests_computed <= d.gets, "{policy}: {d:?}");
        assert!(s.filter_memory_bytes <= s.filter_memory_budget_bytes.unwrap());
        assert_db_equals(&db, &model, &format!("{policy} mixed"));
        db.compact_range::<&[u8], _>(..).unwrap();
        assert_db_equals(&db, &model, &format!("{policy} compacted"));
    }
}

/// `ribbon_from_level(2)`: files written for levels 0 and 1 get Bloom
/// filters (units), deeper ones Ribbon filters (units), for whole filters and for units alike:
/// the wide Ribbon for whole Bloom filters, an explicit Ribbon64 kept.
#[test]
fn the_hybrid_tree_puts_ribbon_from_its_level_down() {
    for (layout, above, below) in [
        (
            FilterLayout::Bloom,
            FilterLayout::Bloom,
            FilterLayout::Ribbon,
        ),
        (
            FilterLayout::Units,
            FilterLayout::Units,
            FilterLayout::RibbonUnits,
        ),
        (
            FilterLayout::Ribbon,
            FilterLayout::Bloom,
            FilterLayout::Ribbon,
        ),
        (
            FilterLayout::Ribbon64,
            FilterLayout::Bloom,
            FilterLayout::Ribbon64,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options(layout, FilterMemory::Unlimited, FilterPolicy::Uniform);
        o.filter.ribbon_from_level = Some(2);
        let db = Db::open(dir.path(), o).unwrap();
        let mut model = BTreeMap::new();
        fill_even(&db, &mut model, 8000, 0);
        db.compact_range::<&[u8], _>(..).unwrap();
        fill_even(&db, &mut model, 2000, 1); // a level-0 file
        let seen = {
            db.wait_for_compactions().unwrap();
            file_layouts(dir.path())
        };
        assert!(seen.iter().any(|&(l, _)| l < 2), "{layout}: {seen:?}");
        assert!(seen.iter().any(|&(l, _)| l >= 2), "{layout}: {seen:?}");
        for &(level, got) in &seen {
            let want = if level < 2 { above } else { below };
            assert_eq!(got, want, "{layout} at L{level}");
        }
        assert_db_equals(&db, &model, &format!("{layout} hybrid"));
        let before = db.stats();
        for i in 0..2000 {
            assert_eq!(db.get(key(2 * i + 1)).unwrap(), None);
        }
        let d = db.stats().delta_since(&before);
        // A lookup between two files' ranges probes no filter, hashes nothing.
        assert!(d.digests_computed <= d.gets, "{layout}: {d:?}");
        assert!(d.digests_computed * 10 > d.gets * 9, "{layout}: {d:?}");
    }
}
