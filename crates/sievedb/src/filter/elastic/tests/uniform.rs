//! Uniform's plan kept by what changed: after any sequence of registrations,
//! removals, reshapes and budget changes it is the plan made from scratch,
//! and a compaction on a large tree visits its own files, not the tree.

use super::*;

/// Uniform's plan made from scratch over every file, by the rule of
/// `uniform`'s documentation.
fn from_scratch(a: &Allocator) -> BTreeMap<u64, u32> {
    let cost = |n: u32| -> u64 {
        a.files
            .values()
            .map(|f| u64::from(n.min(f.units)) * f.desc.unit_bytes)
            .sum()
    };
    let level = (0..=MAX_UNITS)
        .rev()
        .find(|&n| cost(n) <= a.budget())
        .expect("cost(0) is 0");
    let mut left = a.budget() - cost(level);
    let mut open = true;
    a.files
        .iter()
        .map(|(&id, f)| {
            let mut n = level.min(f.units);
            if open && f.units > level {
                if f.desc.unit_bytes <= left {
                    left -= f.desc.unit_bytes;
                    n += 1;
                } else {
                    open = false;
                }
            }
            (id, n)
        })
        .collect()
}

#[test]
fn kept_plan_is_the_plan_from_scratch() {
    let (mut applies, mut compared) = (0, 0);
    for seed in 0..40 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut a = alloc(FilterPolicy::Uniform);
        a.set_budget(rng.gen_range(0..20_000));
        let mut next = 1_000u64;
        for step in 0..600 {
            match rng.gen_range(0..100) {
                // New files, mostly with the highest numbers, as flushes and
                // compactions make them; some below (re-registered or
                // registered out of order).
                0..=39 => {
                    let id = if rng.gen_ratio(1, 5) {
                        rng.gen_range(0..next)
                    } else {
                        next += 1;
                        next
                    };
                    let ub = [0, 40, 64, 100, 128][rng.gen_range(0..5)];
                    let units = [0, 1, 3, 6, 6, 6][rng.gen_range(0..6)];
                    a.add_file(desc(id, rng.gen_range(0..4), 0, 1_000, ub, units), 0.0);
                }
                40..=64 => {
                    if !a.files.is_empty() {
                        let k = rng.gen_range(0..a.files.len());
                        let id = *a.files.keys().nth(k).unwrap();
                        a.remove_file(id);
                    }
                }
                65..=74 => {
                    if !a.files.is_empty() {
                        let k = rng.gen_range(0..a.files.len());
                        let f = &a.files.values().nth(k).unwrap().desc;
                        let units = f.fpr.len() - 1;
                        let ub = rng.gen_range(1..150);
                        assert!(a.reshape(desc(f.id, f.level, 0, 1_000, ub, units)));
                    }
                }
                75..=84 => {
                    let b = a.budget();
                    a.set_budget(if rng.gen_bool(0.5) {
                        rng.gen_range(0..20_000)
                    } else {
                        (b + rng.gen_range(0..400)).saturating_sub(200)
                    });
                    assert!(a.used_bytes() <= a.budget(), "seed {seed} step {step}");
                }
                _ => {
                    apply_all(&mut a);
                    applies += 1;
                    if waiting(&a, &a.uniform.fresh, Allocator::uniform_units) == 0 {
                        assert_eq!(targets(&a), from_scratch(&a), "seed {seed} step {step}");
                        compared += 1;
                    }
                }
            }
        }
        apply_all(&mut a);
        if waiting(&a, &a.uniform.fresh, Allocator::uniform_units) == 0 {
            assert_eq!(targets(&a), from_scratch(&a), "seed {seed}");
        }
    }
    // Most plans are compared: files wait only while what they lack is a
    // sliver of the budget.
    assert!(
        compared * 5 >= applies * 4,
        "{compared} of {applies} plans compared"
    );
}

/// 500 compactions on a 50,000-file tree, each registering 10 new files
/// while its 10 inputs (of the oldest, holding one unit more than the level)
/// still hold their units, then removing the inputs, as a database does:
/// the outputs wait for the inputs' memory (no other file gives up a unit),
/// then the prefix's end moves on by as many files; each compaction visits
/// at most 4 files per file changed (its registration or removal, its count
/// set, its change taken, the prefix's end moving on), where remaking the
/// plan visited the tree 7 times (a binary search over the level).
#[test]
fn compactions_visit_their_files() {
    let n = 50_000u64;
    let mut a = alloc(FilterPolicy::Uniform);
    let files: Vec<(FileDesc, f64)> = (0..n)
        .map(|id| (desc(id, 3, 0, 1_000, 100, 6), 0.0))
        .collect();
    a.add_files(files);
    // Two units each, and a third for a quarter of the files.
    a.set_budget(n * 200 + n / 4 * 100);
    apply_all(&mut a);
    assert_eq!(a.units(0), Some(3));
    assert_eq!(a.units(n - 1), Some(2));
    let before = a.work();
    let mut next = n;
    for c in 0..500 {
        let outputs = next..next + 10;
        for id in outputs.clone() {
            a.add_file(desc(id, 3, 0, 1_000, 100, 6), 0.0);
        }
        next += 10;
        let waiting = a.take_changes();
        assert!(
            waiting.iter().all(|(id, _)| outputs.contains(id)),
            "compaction {c}: {waiting:?}"
        );
        for k in 0..10 {
            a.remove_file(c * 10 + k);
        }
        let placed = a.take_changes();
        assert!(placed.len() <= 20, "compaction {c}: {placed:?}");
        assert!(
            placed
                .iter()
                .all(|&(id, n)| n == 2 + u32::from(!outputs.contains(&id))),
            "compaction {c}: {placed:?}"
        );
    }
    let per = (a.work() - before) / 500;
    assert!(per <= 4 * 20, "{per} files visited per compaction");
    assert_eq!(targets(&a), from_scratch(&a));
    // The prefix moved on: the oldest files left hold three units.
    assert_eq!(a.units(5_000), Some(3));
    assert_eq!(a.units(next - 1), Some(2));
}
