//! How files start: a new file's units and prior count, a tree opened
//! with one plan, the clock and counts restored from the hotness file, the
//! warm start from them, and the top-up of files that started short.

use super::*;

#[test]
fn elastic_new_file_gets_initial_units_without_eviction() {
    let mut a = Allocator::new(AllocConfig {
        policy: FilterPolicy::ElasticUniform,
        initial_units: Some(4),
        ..AllocConfig::default()
    });
    a.set_budget(500);
    a.add_file(desc(1, 1, 0, 100, 100, 6), 0.0);
    a.add_file(desc(2, 1, 0, 100, 100, 3), 0.0);
    a.add_file(desc(3, 1, 0, 100, 100, 6), 0.0);
    assert_eq!(
        (a.units(1), a.units(2), a.units(3)),
        (Some(4), Some(1), Some(0))
    );
}

#[test]
fn elastic_monkey_start_and_prior() {
    let mut a = Allocator::new(AllocConfig {
        policy: FilterPolicy::Elastic,
        ..AllocConfig::default()
    });
    a.set_budget(10_000);
    // Level 1: one file of 1 000 keys; level 2: two files of 4 000 keys.
    a.add_file(desc(1, 1, 0, 1_000, 125, 12), 30.0);
    a.add_file(desc(2, 2, 0, 4_000, 500, 12), 90.0);
    // Monkey's closed form for the two runs (1 000 and 8 000 keys, the new
    // file counted in its run) under 80 000 bits.
    let p = monkey::optimal_fprs(&[1_000.0, 8_000.0], 80_000.0);
    let f3 = desc(3, 2, 0, 4_000, 500, 12);
    let want = monkey::closed_form_units(
        &MonkeyFile {
            run: (2, 0),
            entries: 4_000,
            unit_bytes: 500,
            fpr: &f3.fpr,
            family: Default::default(),
        },
        p[1],
    );
    let free_units = ((a.budget() - a.used_bytes()) / 500) as u32;
    a.add_file(f3, 0.0);
    assert_eq!(a.units(3), Some(want.min(free_units)));
    assert!(want > 0);
    // Prior: Σf / runs × entries / run entries = 120 / 2 × 4 000 / 8 000.
    assert_eq!(a.hotness(3), Some(30.0));
    // An inherited count is kept as is.
    a.add_file(desc(4, 3, 0, 10, 100, 2), 7.0);
    assert_eq!(a.hotness(4), Some(7.0));
}

/// Under elastic (Monkey's start) a file starts with at least one unit, where it fits,
/// even when Monkey's closed form gives its run no filter at all.
#[test]
fn elastic_monkey_never_starts_a_file_at_zero_units() {
    let mut a = Allocator::new(AllocConfig {
        policy: FilterPolicy::Elastic,
        ..AllocConfig::default()
    });
    // 40 000 bytes for a run of 100 000 keys and one of 1 000 000: so little
    // that Monkey gives the large run no filter (its rate comes out ≥ 1).
    // The small run's file holds 3 units, so one unit's worth stays free.
    a.set_budget(40_000);
    a.add_file(desc(1, 1, 0, 100_000, 10_000, 3), 0.0);
    let big = desc(2, 2, 0, 1_000_000, 10_000, 8);
    let p = monkey::optimal_fprs(&[100_000.0, 1_000_000.0], 320_000.0);
    assert_eq!(p[1], 1.0);
    let monkey_says = monkey::closed_form_units(
        &MonkeyFile {
            run: (2, 0),
            entries: 1_000_000,
            unit_bytes: 10_000,
            fpr: &big.fpr,
            family: Default::default(),
        },
        p[1],
    );
    assert_eq!(monkey_says, 0, "the setting must round the big run to 0");
    a.add_file(big, 0.0);
    assert_eq!(a.units(2), Some(1));
    assert!(a.used_bytes() <= a.budget());
}

#[test]
fn restore_clock_and_hotness() {
    let mut a = Allocator::new(AllocConfig {
        policy: FilterPolicy::ElasticUniform,
        half_life: Some(100),
        ..AllocConfig::default()
    });
    let snap = HotnessSnapshot {
        clock: 1_050,
        files: vec![(3, 8.0)],
    };
    a.set_clock(snap.clock);
    for &(id, h) in &snap.files {
        a.add_file(desc(id, 1, 0, 100, 100, 2), h);
    }
    assert_eq!(a.clock(), 1_050);
    a.tick(99);
    assert_eq!(
        a.hotness(3),
        Some(8.0),
        "the decay schedule restarts at the restored clock"
    );
    a.tick(1);
    assert_eq!(a.hotness(3), Some(4.0));
}

#[test]
fn elastic_tops_up_files_that_started_short_when_memory_frees() {
    for policy in [FilterPolicy::ElasticUniform, FilterPolicy::Elastic] {
        let mut a = alloc(policy);
        a.set_budget(4 * 100);
        // Four inputs take the whole budget (2 units of 50 bytes each)...
        for id in 0..4 {
            a.add_file(desc(id, 1, 0, 100, 50, 6), 0.0);
        }
        let _ = a.take_changes();
        // ...so the outputs that replace them start short...
        for id in 10..14 {
            a.add_file(desc(id, 1, 0, 100, 50, 6), 0.0);
        }
        let _ = a.take_changes();
        assert!((10..14).all(|id| a.units(id) == Some(0)), "{policy}");
        assert!(a.short_len() >= 4, "{policy}");
        // ...until the inputs leave.
        for id in 0..4 {
            a.remove_file(id);
        }
        let changes = a.take_changes();
        assert!(!changes.is_empty(), "{policy}");
        assert!(
            (10..14).all(|id| a.units(id).unwrap() >= 1),
            "{policy}: {changes:?}"
        );
        assert_eq!(a.short_len(), 0, "{policy}: every short file got a unit");
        assert!(a.used_bytes() <= a.budget());
    }
}

/// A tree opened under elastic starts as Monkey plans the whole tree,
/// every file with at least one unit, whatever order its files come in:
/// planned file by file, the upper levels (registered first) took the budget
/// before the last level came and left files at 0 units.
#[test]
fn elastic_monkey_opens_a_tree_with_one_plan() {
    // 2, 20 and 200 files of 1,000 keys in levels 1–3, units of 2 bits/key.
    let mut files = Vec::new();
    let mut id = 0;
    for (level, count) in [(1usize, 2u64), (2, 20), (3, 200)] {
        for _ in 0..count {
            id += 1;
            files.push((desc(id, level, 0, 1_000, 250, 6), 0.0));
        }
    }
    // 4 bits per key on average.
    let budget = 222 * 1_000 * 4 / 8;
    let open = |files: Vec<(FileDesc, f64)>| {
        let mut a = alloc(FilterPolicy::Elastic);
        a.set_budget(budget);
        a.add_files(files);
        a
    };
    let a = open(files.clone());
    let mut reversed = files.clone();
    reversed.reverse();
    let b = open(reversed);
    assert!(a.used_bytes() <= budget);
    for (f, _) in &files {
        let n = a.target(f.id).unwrap();
        assert!(n >= 1, "file {} at 0 units", f.id);
        assert_eq!(Some(n), b.target(f.id), "file {}: order matters", f.id);
    }
    // Monkey's shape: a file of a smaller level never has fewer units.
    let by_level = |level| {
        files
            .iter()
            .filter(|(f, _)| f.level == level)
            .map(|(f, _)| a.target(f.id).unwrap())
            .collect::<Vec<_>>()
    };
    let (l1, l3) = (by_level(1), by_level(3));
    assert!(l1.iter().min() >= l3.iter().max(), "{l1:?} vs {l3:?}");
    assert!(l1.iter().min() > l3.iter().min(), "{l1:?} vs {l3:?}");
}

/// A warm start (counts restored from the hotness file) keeps one unit in
/// every file, as a cold start does, and gives the rest of the budget where
/// the counts are: the plain optimum gave the few hot files everything and
/// left the files whose counts were near 0 without a filter.
#[test]
fn warm_start_keeps_one_unit_per_file() {
    for policy in [FilterPolicy::ElasticUniform, FilterPolicy::Elastic] {
        let mut a = alloc(policy);
        // 20 files of 6 units of 100 bytes: one unit each, and 10 more.
        a.set_budget(20 * 100 + 1_000);
        let files: Vec<(FileDesc, f64)> = (0..20)
            .map(|id| {
                let hot = if id < 5 { 1_000.0 } else { 1e-6 };
                (desc(id, 1, 0, 400, 100, 6), hot)
            })
            .collect();
        a.add_files(files);
        a.warm_start();
        let _ = a.take_changes();
        assert!(a.used_bytes() <= a.budget(), "{policy}");
        for id in 0..20 {
            let want = if id < 5 { 3 } else { 1 };
            assert_eq!(a.target(id), Some(want), "{policy}: file {id}");
        }
        // A budget too small for one unit each: the plain optimum.
        let mut b = alloc(policy);
        b.set_budget(10 * 100);
        b.add_files(
            (0..20)
                .map(|id| {
                    (
                        desc(id, 1, 0, 400, 100, 6),
                        if id < 5 { 1_000.0 } else { 1e-6 },
                    )
                })
                .collect(),
        );
        b.warm_start();
        assert!(b.used_bytes() <= b.budget(), "{policy}");
        assert!((0..5).all(|id| b.target(id) == Some(2)), "{policy}");
    }
}

/// A budget too small for every file's start leaves many files short (a
/// load under a budget: Monkey's counts, at least one unit each, add up to
/// more than the budget). The memory a compaction frees then goes to the
/// short files hottest first, and its top-up visits the files it serves,
/// not every short file: that pass was 10% of the samples of a
/// 35,000-file load under a budget.
#[test]
fn a_top_up_visits_the_short_files_it_serves_not_all_of_them() {
    for policy in [FilterPolicy::ElasticUniform, FilterPolicy::Elastic] {
        let mut a = alloc(policy);
        let n = 20_000u64;
        // Half a unit of 50 bytes per file: elastic-uniform starts a file
        // at 2 units, elastic at Monkey's 1.
        a.set_budget(n * 25);
        for id in 0..n {
            a.add_file(desc(id, 1, 0, 100, 50, 6), 0.0);
        }
        let _ = a.take_changes();
        let short = a.short_len() as u64;
        assert!(short >= n / 4, "{policy}: {short} short");
        let (compactions, fan) = (100u64, 10u64);
        let mut next = n;
        for c in 0..compactions {
            // Inputs: files holding units (the lowest ids got them first).
            let inputs: Vec<u64> = (c * fan..(c + 1) * fan).collect();
            let freed: u64 = inputs
                .iter()
                .map(|&id| u64::from(a.units(id).unwrap()))
                .sum();
            assert!(freed >= fan, "{policy}: compaction {c}");
            let before = a.work();
            for _ in 0..fan {
                a.add_file(desc(next, 1, 0, 100, 50, 6), 0.0);
                next += 1;
            }
            for &id in &inputs {
                a.remove_file(id);
            }
            let _ = a.take_changes();
            // The freed memory went to short files: less than one unit is left.
            assert!(a.budget() - a.used_bytes() < 50, "{policy}: compaction {c}");
            // Its outputs registering, its inputs leaving, and per unit freed
            // one file served and its change handed out, with one more file
            // visited where the serving stopped; not the short files.
            let work = a.work() - before;
            assert!(
                work <= 2 * fan + 2 * freed + 1,
                "{policy}: compaction {c} visited {work} files, {freed} units freed, {short} short"
            );
        }
    }
}

/// A top-up stops at the first short file whose next unit does not fit, so
/// a file whose unit is larger than the whole budget would hold up every
/// short file behind it for good: it leaves `short` instead.
#[test]
fn a_file_larger_than_the_budget_does_not_hold_up_the_top_up() {
    for policy in [FilterPolicy::ElasticUniform, FilterPolicy::Elastic] {
        let mut a = alloc(policy);
        a.set_budget(300);
        // Three files hold the budget.
        for id in 0..3 {
            a.add_file(desc(id, 1, 0, 100, 50, 6), 0.0);
        }
        let _ = a.take_changes();
        // A hot file with 500-byte units, then two with 50-byte ones: all short.
        a.add_file(desc(10, 1, 0, 1_000, 500, 6), 1e6);
        a.add_file(desc(11, 1, 0, 100, 50, 6), 0.0);
        a.add_file(desc(12, 1, 0, 100, 50, 6), 0.0);
        let _ = a.take_changes();
        assert!(a.short_len() >= 3, "{policy}: {} short", a.short_len());
        assert_eq!(a.units(10), Some(0), "{policy}");
        for id in 0..3 {
            a.remove_file(id);
        }
        let _ = a.take_changes();
        assert_eq!(a.units(10), Some(0), "{policy}");
        assert!(
            a.units(11) >= Some(1) && a.units(12) >= Some(1),
            "{policy}: {:?} {:?}",
            a.units(11),
            a.units(12)
        );
        assert_eq!(a.short_len(), 0, "{policy}");
        assert!(a.used_bytes() <= a.budget());
    }
}
