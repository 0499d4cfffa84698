//! The shrink order kept between shrinks (`trim`): a budget that falls
//! takes the units sorting every file would take, and the order stays
//! true to the files while counts grow, halve, and files come and go.

use super::*;

/// The targets a shrink to `budget` gives, made from scratch: `greedy::trim`
/// over every file (elastic policies), or the coldest files emptied first
/// (skew-at-write).
fn shrunk_from_scratch(a: &Allocator, budget: u64) -> BTreeMap<u64, u32> {
    let mut out = targets(a);
    let excess = a.used_bytes().saturating_sub(budget);
    if excess == 0 {
        return out;
    }
    if a.cfg.policy == FilterPolicy::SkewAtWrite {
        let mut order: Vec<(f64, u64)> = a
            .files
            .iter()
            .filter(|(_, f)| f.target > 0)
            .map(|(&id, f)| (f.hot, id))
            .collect();
        order.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let mut used = a.used_bytes();
        for (_, id) in order {
            let f = &a.files[&id];
            while used > budget && out[&id] > 0 {
                *out.get_mut(&id).unwrap() -= 1;
                used -= f.desc.unit_bytes;
            }
        }
        return out;
    }
    let mut items: Vec<greedy::Item<'_>> = a
        .files
        .values()
        .map(|f| greedy::Item {
            weight: f.hot,
            unit_bytes: f.desc.unit_bytes,
            fpr: &f.desc.fpr,
            n: f.target,
        })
        .collect();
    greedy::trim(&mut items, excess);
    for (n, id) in items.iter().map(|i| i.n).zip(a.files.keys()) {
        out.insert(*id, n);
    }
    out
}

/// Random registrations, removals, reshapes, accesses (counts grow without
/// re-filing), halvings (the order dropped) and budgets that rise and fall;
/// every fall is checked against the shrink made from scratch.
#[test]
fn a_falling_budget_takes_what_sorting_every_file_would() {
    for policy in [
        FilterPolicy::Elastic,
        FilterPolicy::ElasticUniform,
        FilterPolicy::SkewAtWrite,
    ] {
        for seed in 0..6 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let mut a = Allocator::new(AllocConfig {
                policy,
                lifetime: Some(200),
                half_life: Some(500),
                ..AllocConfig::default()
            });
            let mut budget = 30_000u64;
            a.set_budget(budget);
            let mut next = 0u64;
            let mut shrinks = 0;
            for step in 0..4_000 {
                match rng.gen_range(0..100) {
                    0..=7 => {
                        let ub = [64, 100, 128][rng.gen_range(0..3)];
                        let units = rng.gen_range(0..=6);
                        let f = desc(next, rng.gen_range(1..4), 0, 1_000, ub, units);
                        a.add_file(f, rng.gen_range(0.0..20.0));
                        next += 1;
                    }
                    8..=10 if !a.files.is_empty() => {
                        let id = *a.files.keys().nth(rng.gen_range(0..a.files.len())).unwrap();
                        a.remove_file(id);
                    }
                    11 if !a.files.is_empty() => {
                        // Its own filter read: the same units, another size.
                        let id = *a.files.keys().nth(rng.gen_range(0..a.files.len())).unwrap();
                        let f = &a.files[&id].desc;
                        let (level, units) = (f.level, f.fpr.len() - 1);
                        let ub = rng.gen_range(50..130);
                        assert!(a.reshape(desc(id, level, 0, 1_000, ub, units)));
                    }
                    12..=15 => {
                        // Anywhere (mostly room for new files), or a
                        // little below what is held, as when a compaction
                        // drops entries.
                        budget = if rng.gen_bool(0.5) {
                            rng.gen_range(10_000..40_000)
                        } else {
                            a.used_bytes().saturating_sub(rng.gen_range(0..1_000))
                        };
                        let want = shrunk_from_scratch(&a, budget);
                        shrinks += u32::from(a.used_bytes() > budget);
                        a.set_budget(budget);
                        assert_eq!(targets(&a), want, "{policy} seed {seed} step {step}");
                    }
                    16..=25 => {
                        apply_all(&mut a);
                    }
                    _ if !a.files.is_empty() => {
                        let k = a.files.len();
                        #[expect(
                            clippy::cast_sign_loss,
                            reason = "a fraction in [0, 1) times a length is not negative"
                        )]
                        let i = (rng.gen_range(0.0f64..1.0).powi(3) * k as f64) as usize;
                        let id = *a.files.keys().nth(i.min(k - 1)).unwrap();
                        a.record_access_run(id, 1.0, rng.gen_range(1..4));
                        a.tick(1);
                    }
                    _ => {}
                }
                assert!(a.used_bytes() <= a.budget());
            }
            assert!(shrinks >= 30, "{policy} seed {seed}: {shrinks} shrinks");
        }
    }
}
