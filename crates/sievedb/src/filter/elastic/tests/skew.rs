//! Skew-at-write's priced choice: a new file's count read off the last
//! optimum's price is its count in the optimum solved again with it, and a
//! compaction on a large tree costs `O(log n)` visits per file changed,
//! amortised.

use super::*;

/// A tree of `n` files of 6 units of 100 bytes, their counts spread over
/// four orders of magnitude, under a budget of two units per file.
fn skewed_tree(n: u64, rng: &mut SmallRng) -> Allocator {
    let mut a = alloc(FilterPolicy::SkewAtWrite);
    a.set_budget(n * 200);
    let files: Vec<(FileDesc, f64)> = (0..n)
        .map(|id| {
            let hot = 10f64.powf(rng.gen_range(0.0..4.0));
            (desc(id, 1 + id as usize % 3, 0, 1_000, 100, 6), hot)
        })
        .collect();
    a.add_files(files);
    a
}

#[test]
fn a_priced_count_is_the_count_in_the_optimum_solved_again() {
    let mut rng = SmallRng::seed_from_u64(7);
    let (mut same, mut tried) = (0, 0);
    for _ in 0..10 {
        let n = 1_000;
        let mut a = skewed_tree(n, &mut rng);
        let (price, hot) = a.skew.at.expect("solved at open");
        assert!(price > 0.0, "memory is short");
        for id in n..n + 10 {
            let count = 10f64.powf(rng.gen_range(0.0..4.0));
            a.add_file(desc(id, 1 + id as usize % 3, 0, 1_000, 100, 6), count);
            assert!(a.skew.changed > 0, "read off the price, not solved again");
            let priced = a.priced_units(id, price * a.total_hot / hot);
            let i = a.files.keys().position(|&k| k == id).unwrap();
            let optimum = a.greedy_plan(SKEW_TIE_WEIGHT, false).0[i];
            assert!(
                priced.abs_diff(optimum) <= 1,
                "file {id}: {priced} vs {optimum}"
            );
            same += u32::from(priced == optimum);
            tried += 1;
        }
    }
    assert!(same * 10 >= tried * 9, "{same} of {tried} the same");
}

/// 500 compactions on a 50,000-file tree, each registering 10 outputs in one
/// batch and removing 10 inputs: at most `64 · (1 + log₂ n)` visits per file
/// changed, amortised, where an optimum solved for every batch visited
/// `n · (1 + log₂ n)` per compaction.
#[test]
fn compactions_cost_log_n_per_file_changed() {
    let n = 50_000u64;
    let mut rng = SmallRng::seed_from_u64(8);
    let mut a = skewed_tree(n, &mut rng);
    let before = a.work();
    let mut next = n;
    for c in 0..500 {
        let outputs: Vec<(FileDesc, f64)> = (0..10)
            .map(|_| {
                next += 1;
                (desc(next, 3, 0, 1_000, 100, 6), rng.gen_range(1.0..1_000.0))
            })
            .collect();
        a.add_files(outputs);
        for id in n - 10 * (c + 1)..n - 10 * c {
            a.remove_file(id);
        }
        a.take_changes();
        assert!(a.used_bytes() <= a.budget());
    }
    let per = (a.work() - before) / 500;
    let bound = 64 * 20 * (1 + u64::from(n.ilog2())) + 4 * 20;
    assert!(per <= bound, "{per} files visited per compaction > {bound}");
}
