//! The budget picks each new file's filter family
//! (`FilterOptions::choose_family`): at flushes and compactions from what its
//! level holds, at a bulk load from Monkey's plan of the budget; every read
//! right in trees mixing both families, reopened.

mod common;

use std::collections::BTreeMap;

use common::{assert_db_equals, file_layouts, fill_even, small_options};
use sievedb::bulk::{bulk_load, LevelShape};
use sievedb::{CompactionStyle, Db, FilterLayout, FilterMemory, FilterPolicy, Options};

fn options(layout: FilterLayout, memory: FilterMemory, fp_cost: f64) -> Options {
    let mut o = small_options(CompactionStyle::Leveling);
    o.filter.layout = layout;
    o.filter.units = 6;
    o.filter.bits_per_key = 12.0;
    o.filter.choose_family = true;
    o.filter.false_positive_cost = fp_cost;
    o.filter_memory = memory;
    o.filter_policy = FilterPolicy::Monkey;
    o
}

/// Without a budget every unit is resident: whole filters of 12 bits per
/// key become the wide Ribbon when a false positive is dear, and stay Bloom
/// when it costs less than the Ribbon's dearer probe saves.
#[test]
fn without_a_budget_the_price_of_a_false_positive_decides() {
    for (cost, want) in [(1000.0, FilterLayout::Ribbon), (0.1, FilterLayout::Bloom)] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options(FilterLayout::Bloom, FilterMemory::Unlimited, cost);
        // Files of thousands of keys, as in the tests below.
        o.write_buffer_size = 256 << 10;
        o.target_file_size = 64 << 10;
        o.level1_size = 256 << 10;
        let db = Db::open(dir.path(), o.clone()).unwrap();
        let mut model = BTreeMap::new();
        fill_even(&db, &mut model, 40_000, 0);
        db.compact_range::<&[u8], _>(..).unwrap();
        fill_even(&db, &mut model, 4000, 1); // a level-0 file
        db.wait_for_compactions().unwrap();
        let seen = file_layouts(dir.path());
        assert!(seen.len() >= 2, "{seen:?}");
        assert!(seen.iter().all(|&(_, l)| l == want), "{cost}: {seen:?}");
        assert_db_equals(&db, &model, &format!("cost {cost}"));
        drop(db);
        let db = Db::open(dir.path(), o).unwrap();
        assert_db_equals(&db, &model, &format!("cost {cost}, reopened"));
    }
}

/// Under a tight budget (4 bits per key of 12 written) the files of the
/// level holding the data get Ribbon units: three units of one result bit
/// fit where two Bloom units of two bits do, at a lower rate. The tree
/// holds both families after later flushes and stays right.
#[test]
fn under_a_tight_budget_the_deep_files_get_ribbon_units() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(FilterLayout::Units, FilterMemory::BitsPerKey(4.0), 1000.0);
    // Files of thousands of keys: in files of a hundred, a Ribbon unit's
    // rounding to whole words makes it as large as a Bloom unit, and Bloom
    // is chosen (`filter/budget/choice.rs`'s tests price both).
    o.write_buffer_size = 256 << 10;
    o.target_file_size = 256 << 10;
    o.level1_size = 512 << 10;
    let db = Db::open(dir.path(), o.clone()).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..3 {
        fill_even(&db, &mut model, 40_000, round);
    }
    db.compact_range::<&[u8], _>(..).unwrap();
    db.wait_for_compactions().unwrap();
    let seen = file_layouts(dir.path());
    let deepest = seen.iter().map(|&(l, _)| l).max().unwrap();
    assert!(deepest > 0, "{seen:?}");
    assert!(
        seen.iter()
            .filter(|&&(l, _)| l == deepest)
            .all(|&(_, layout)| layout == FilterLayout::RibbonUnits),
        "{seen:?}"
    );
    assert_db_equals(&db, &model, "compacted");
    for i in 0..2000u64 {
        assert_eq!(db.get(format!("key{:08}", 2 * i + 1)).unwrap(), None);
    }
    let s = db.stats();
    assert!(s.filter_memory_bytes <= s.filter_memory_budget_bytes.unwrap());
    drop(db);
    let db = Db::open(dir.path(), o).unwrap();
    assert_db_equals(&db, &model, "reopened");
}

/// A bulk load prices each level at Monkey's bits per key for it: under a
/// 4 bits/key budget over five levels of ratio 10 the upper levels get
/// their whole 12 bits (Bloom units, cheaper to probe), levels 4 and 5
/// (8.3 and 3.5 bits) Ribbon units.
#[test]
fn a_bulk_load_prices_its_levels_by_monkeys_plan() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(FilterLayout::Units, FilterMemory::BitsPerKey(4.0), 1000.0);
    o.max_levels = 7;
    // Priced as files of 8,192 keys (1 MiB of 128-byte entries).
    o.target_file_size = 1 << 20;
    let n = 60_000u64;
    let entries = (0..n).map(|i| {
        (
            format!("key{:08}", 2 * i).into_bytes(),
            format!("value-{i}").into_bytes(),
        )
    });
    bulk_load(
        dir.path(),
        &o,
        LevelShape::new(5, 10).unwrap(),
        entries,
        |_| {},
    )
    .unwrap();
    let seen = file_layouts(dir.path());
    for level in 1..=5 {
        let want = if level <= 3 {
            FilterLayout::Units
        } else {
            FilterLayout::RibbonUnits
        };
        let at: Vec<FilterLayout> = seen
            .iter()
            .filter(|&&(l, _)| l == level)
            .map(|&(_, layout)| layout)
            .collect();
        assert!(!at.is_empty(), "L{level}: {seen:?}");
        assert!(at.iter().all(|&l| l == want), "L{level}: {at:?}");
    }
    let db = Db::open(dir.path(), o).unwrap();
    for i in (0..n).step_by(97) {
        let got = db.get(format!("key{:08}", 2 * i)).unwrap();
        assert_eq!(got, Some(format!("value-{i}").into_bytes()));
        assert_eq!(db.get(format!("key{:08}", 2 * i + 1)).unwrap(), None);
    }
}

/// `choose_family` and `ribbon_from_level` both set a file's family: the
/// options are refused, as is a false-positive cost that is not a price.
#[test]
fn conflicting_family_settings_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(FilterLayout::Units, FilterMemory::Unlimited, 1000.0);
    o.filter.ribbon_from_level = Some(1);
    let e = Db::open(dir.path(), o).err().expect("refused");
    assert!(e.to_string().contains("choose_family"), "{e}");
    for cost in [f64::NAN, -1.0, f64::INFINITY] {
        let o = options(FilterLayout::Units, FilterMemory::Unlimited, cost);
        let e = Db::open(dir.path(), o).err().expect("refused");
        assert!(e.to_string().contains("false_positive_cost"), "{e}");
    }
}
