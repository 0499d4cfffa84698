//! Monkey's plan as a policy: each whole-tree plan is `monkey::plan`'s, the
//! files registered in between wait for free memory while what they lack is
//! a sliver of the budget, and a compaction on a large tree costs `O(log n)`
//! visits per file changed, amortised.

use super::*;

/// The targets `monkey::plan` gives the live files under the budget.
fn monkeys_plan(a: &Allocator) -> BTreeMap<u64, u32> {
    let files: Vec<MonkeyFile<'_>> = a.files.values().map(|f| f.monkey_file(false)).collect();
    let units = monkey::plan(&files, a.budget());
    a.files.keys().copied().zip(units).collect()
}

#[test]
fn whole_plans_are_monkeys_and_waiting_is_bounded() {
    let mut whole_plans = 0;
    for seed in 0..20 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut a = alloc(FilterPolicy::Monkey);
        a.set_budget(rng.gen_range(10_000..200_000));
        let mut next = 0u64;
        let tree: Vec<(FileDesc, f64)> = (0..200)
            .map(|_| {
                next += 1;
                let level = rng.gen_range(1..4);
                (
                    desc(next, level, 0, 1_000 * level as u64, 64 * level as u64, 6),
                    0.0,
                )
            })
            .collect();
        a.add_files(tree);
        for step in 0..400 {
            match rng.gen_range(0..10) {
                0..=3 => {
                    next += 1;
                    let level = rng.gen_range(0..4);
                    let run = if level == 0 { next } else { 0 };
                    let units = [0, 3, 6][rng.gen_range(0..3)];
                    a.add_file(desc(next, level, run, 1_000, 64, units), 0.0);
                }
                4..=6 => {
                    let k = rng.gen_range(0..a.files.len());
                    let id = *a.files.keys().nth(k).unwrap();
                    a.remove_file(id);
                }
                7 => {
                    let b = a.budget();
                    a.set_budget((b + rng.gen_range(0..4_000)).saturating_sub(2_000));
                }
                _ => {
                    apply_all(&mut a);
                    waiting(&a, &a.monkey.fresh, Allocator::monkey_units);
                    // Just after a whole-tree plan, and at its budget.
                    if a.monkey.changed == 0 && a.monkey.budget == a.budget() {
                        assert_eq!(targets(&a), monkeys_plan(&a), "seed {seed} step {step}");
                        whole_plans += 1;
                    }
                }
            }
        }
    }
    assert!(whole_plans >= 20, "{whole_plans} whole plans compared");
}

/// 500 compactions on a 50,000-file tree of 5 levels under Monkey, each
/// registering 10 outputs while its 10 inputs still hold their units, then
/// removing the inputs: the outputs wait for the inputs' memory (no other
/// file's count moves between whole-tree plans), and the visits per
/// compaction are at most `64 · 20 · (1 + log₂ n)` plus 4 per file changed,
/// where a whole-tree plan at every change (two per compaction) visited
/// `2 · n · (1 + log₂ n)`.
#[test]
fn compactions_wait_for_their_inputs_and_cost_log_n_per_file() {
    compactions(false);
}

/// The same when each compaction drops 2% of its inputs' entries
/// (overwrites), the budget falling with the tree's entries before the
/// outputs register, as the engine sets it: the newest files give back what
/// is over (a unit or two per compaction) instead of a whole-tree plan per
/// compaction, and get it back when the inputs leave.
#[test]
fn a_budget_falling_under_compactions_is_met_by_the_newest_files() {
    compactions(true);
}

fn compactions(drop_entries: bool) {
    let n = 50_000u64;
    let mut a = alloc(FilterPolicy::Monkey);
    let mut level_end = 5;
    let mut level = 1;
    let files: Vec<(FileDesc, f64)> = (0..n)
        .map(|id| {
            while id >= level_end && level < 5 {
                level += 1;
                level_end = level_end * 10 + 5;
            }
            (desc(id, level, 0, 256, 32, 6), 0.0)
        })
        .collect();
    a.add_files(files);
    let mut entries = n * 256;
    a.set_budget(entries * 4 / 8);
    apply_all(&mut a);
    let before = a.work();
    let mut next = n;
    let (mut quiet, mut given_back) = (0, 0);
    for c in 0..500 {
        let inputs: Vec<u64> = (n - 10 * (c + 1)..n - 10 * c).collect();
        let plans = a.monkey.changed;
        let output_entries = if drop_entries { 251 } else { 256 };
        if drop_entries {
            entries -= 10 * (256 - output_entries);
            let used = a.used_bytes();
            a.set_budget(entries * 4 / 8);
            given_back += u32::from(used > a.budget());
        }
        for _ in 0..10 {
            a.add_file(desc(next, 5, 0, output_entries, 32, 6), 0.0);
            next += 1;
        }
        let changes = apply_all(&mut a);
        for id in inputs {
            a.remove_file(id);
        }
        let changes = changes + apply_all(&mut a);
        if a.monkey.changed > plans {
            // No whole-tree plan this compaction: only the outputs moved,
            // and the files that gave back units and got them again.
            let most = if drop_entries { 14 } else { 10 };
            assert!(changes <= most, "compaction {c}: {changes} changes");
            quiet += 1;
        }
        waiting(&a, &a.monkey.fresh, Allocator::monkey_units);
    }
    assert!(
        quiet >= 400,
        "{quiet} compactions without a whole-tree plan"
    );
    if drop_entries {
        assert!(
            given_back >= 150,
            "the budget fell below the plan {given_back} times"
        );
    }
    let per = (a.work() - before) / 500;
    let bound = 64 * 20 * (1 + u64::from(n.ilog2())) + 4 * 20;
    assert!(per <= bound, "{per} files visited per compaction > {bound}");
}
