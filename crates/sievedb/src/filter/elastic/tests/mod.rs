//! Allocator tests: the budget and target invariants under random call
//! sequences for every policy, and each policy's specific behaviour.

use super::hotness::HotnessSnapshot;
use super::monkey::{self, MonkeyFile};
use super::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

mod monkey_plan;
mod skew;
mod start;
mod trim;
mod uniform;

/// `units` units of `bits` bits per key each: `fp(n) = 0.6185^(bits·n)`.
fn model_fpr(units: usize, bits: f64) -> Vec<f64> {
    (0..=units)
        .map(|n| 0.6185f64.powf(bits * n as f64))
        .collect()
}

fn desc(id: u64, level: usize, run: u64, entries: u64, unit_bytes: u64, units: usize) -> FileDesc {
    let bits = unit_bytes as f64 * 8.0 / entries.max(1) as f64;
    FileDesc {
        id,
        level,
        run,
        entries,
        unit_bytes,
        fpr: model_fpr(units, bits).into(),
        family: Default::default(),
    }
}

fn alloc(policy: FilterPolicy) -> Allocator {
    Allocator::new(AllocConfig {
        policy,
        ..AllocConfig::default()
    })
}

/// Every live file's target.
fn targets(a: &Allocator) -> BTreeMap<u64, u32> {
    a.files.iter().map(|(&id, f)| (id, f.target)).collect()
}

/// Takes the changes and applies them all (no load fails); returns how many
/// there were.
fn apply_all(a: &mut Allocator) -> usize {
    let changes = a.take_changes();
    for &(id, n) in &changes {
        a.applied(id, n);
    }
    assert!(a.used_bytes() <= a.budget());
    changes.len()
}

/// The bytes the files of `fresh` (registered since a plan) lack of the
/// count `want` gives them, checked to be at most 1/64 of the budget.
fn waiting(a: &Allocator, fresh: &[u64], want: fn(&Allocator, u64) -> u32) -> u64 {
    let missing: u64 = fresh
        .iter()
        .filter_map(|&id| a.files.get(&id).map(|f| (id, f)))
        .map(|(id, f)| {
            u64::from(want(a, id).min(f.units).saturating_sub(f.target)) * f.desc.unit_bytes
        })
        .sum();
    assert!(missing <= a.budget() / 64, "{missing} of {}", a.budget());
    missing
}

/// What a manager holds: applies changes in order and checks that resident
/// memory never exceeds the budget on the way.
#[derive(Default)]
struct Manager {
    resident: BTreeMap<u64, (u32, u64)>,
    log: Vec<(u64, u32)>,
}

impl Manager {
    fn drain(&mut self, a: &mut Allocator, rng: &mut SmallRng) {
        let changes = a.take_changes();
        let first_inc = changes
            .iter()
            .position(|&(id, n)| n > self.resident.get(&id).map_or(0, |r| r.0));
        if let Some(k) = first_inc {
            for &(id, n) in &changes[k..] {
                assert!(
                    n > self.resident.get(&id).map_or(0, |r| r.0),
                    "decreases come first"
                );
            }
        }
        for (id, n) in changes {
            self.log.push((id, n));
            let ub = self.resident.get(&id).map(|r| r.1).expect("known file");
            // Now and then a load fails part-way.
            let old = self.resident[&id].0;
            let got = if n > old && rng.gen_ratio(1, 20) {
                rng.gen_range(old..n)
            } else {
                n
            };
            self.resident.insert(id, (got, ub));
            if n > old {
                // Every decrease is applied by now: nothing over budget.
                let mem: u64 = self.resident.values().map(|&(n, ub)| n as u64 * ub).sum();
                assert!(mem <= a.budget(), "resident {mem} > budget {}", a.budget());
            }
            a.applied(id, got);
        }
        let mem: u64 = self.resident.values().map(|&(n, ub)| n as u64 * ub).sum();
        assert!(mem <= a.budget(), "resident {mem} > budget {}", a.budget());
    }
}

fn check(a: &Allocator, m: &Manager) {
    assert!(
        a.used_bytes() <= a.budget(),
        "used {} > budget {}",
        a.used_bytes(),
        a.budget()
    );
    let mut used = 0;
    for (&id, &(_, ub)) in &m.resident {
        let n = a.units(id).expect("live file");
        used += n as u64 * ub;
    }
    assert_eq!(used, a.used_bytes());
    assert_eq!(a.len(), m.resident.len());
    let e: f64 = a.files.values().map(|f| f.hot * f.fp(f.target)).sum();
    assert!(
        (e - a.expected_extra_io()).abs() <= 1e-6 * e.max(1.0),
        "E drifted"
    );
    for f in a.files.values() {
        assert!(f.target <= f.units);
    }
    // The totals per level, kept by every change, are those of the files.
    let remade = a.remade_levels();
    for level in 0..8 {
        let (kept, want) = (a.levels.get(level), remade.get(level));
        let (e, h) = kept.map_or((0, 0.0), |l| (l.entries, l.hot));
        let (we, wh) = want.map_or((0, 0.0), |l| (l.entries, l.hot));
        assert_eq!(e, we, "level {level}");
        assert!(
            (h - wh).abs() <= 1e-6 * wh.max(1.0),
            "level {level}: {h} against {wh}"
        );
    }
    // The multi-queue (kept under the elastic policies only): each file
    // once, in its target's queue, filed under its stamp, which is no later
    // than its latest access.
    let filed: Vec<(u32, u64, u64)> = a.mq.filed().collect();
    if !a.config().policy.is_elastic() {
        assert!(filed.is_empty(), "queues kept under {}", a.config().policy);
        return;
    }
    assert_eq!(filed.len(), a.files.len());
    for (q, stamp, id) in filed {
        let f = &a.files[&id];
        assert_eq!((q, stamp), (f.target, f.stamp), "file {id}");
        assert!(f.stamp <= f.last, "file {id}");
    }
}

/// Scans every queue from the LRU side as the multi-queue's victim searches
/// do: the files come in the order of their latest accesses, as an eagerly
/// ordered queue would give them, although accesses moved nothing.
fn check_lru_order(a: &mut Allocator) {
    for q in 0..=MAX_UNITS {
        let mut want: Vec<(u64, u64)> = a
            .files
            .iter()
            .filter(|(_, f)| f.target == q)
            .map(|(&id, f)| (f.last, id))
            .collect();
        want.sort_unstable();
        let got: Vec<u64> = (0..want.len())
            .map(|k| a.lru_fresh(q, k).expect("a file"))
            .collect();
        let want: Vec<u64> = want.into_iter().map(|(_, id)| id).collect();
        assert_eq!(got, want, "Q_{q}");
        assert_eq!(a.lru_fresh(q, got.len()), None);
    }
}

/// Runs a random sequence of calls; returns the change log.
fn random_run(policy: FilterPolicy, seed: u64) -> Vec<(u64, u32)> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut a = Allocator::new(AllocConfig {
        policy,
        lifetime: Some(50),
        half_life: Some(400),
        ..AllocConfig::default()
    });
    a.set_budget(4_000);
    let mut m = Manager::default();
    let mut next = 1u64;
    let mut skew_units: BTreeMap<u64, u32> = BTreeMap::new();
    for step in 0..3_000 {
        // A batch (a version installed: at step 0 a whole tree into the empty
        // allocator, its bulk path; later a compaction's outputs, one file in
        // them sometimes twice).
        let batch = if step == 0 {
            40
        } else if rng.gen_range(0..100) < 2 {
            rng.gen_range(1..8)
        } else {
            0
        };
        if batch > 0 {
            let mut files = Vec::new();
            for _ in 0..batch {
                let level = rng.gen_range(0..4);
                let run = if level == 0 { next } else { 0 };
                let ub = [64, 100, 128, 0][rng.gen_range(0..4)];
                let (entries, units) = (rng.gen_range(0..2_000), rng.gen_range(0..=7));
                let hot = if rng.gen_bool(0.5) {
                    rng.gen_range(0.0..50.0)
                } else {
                    0.0
                };
                files.push((desc(next, level, run, entries, ub, units), hot));
                m.resident.insert(next, (0, ub));
                if step == 0 || !rng.gen_bool(0.05) {
                    next += 1;
                }
            }
            if files.last().is_some_and(|(f, _)| f.id == next) {
                next += 1;
            }
            let ids: Vec<u64> = files.iter().map(|(f, _)| f.id).collect();
            a.add_files(files);
            if policy == FilterPolicy::SkewAtWrite {
                for id in ids {
                    skew_units.insert(id, a.units(id).unwrap());
                }
            }
            check(&a, &m);
            continue;
        }
        match rng.gen_range(0..100) {
            0..=9 => {
                let level = rng.gen_range(0..4);
                let run = if level == 0 { next } else { 0 };
                let ub = [64, 100, 128, 0][rng.gen_range(0..4)];
                let entries = rng.gen_range(0..2_000);
                let units = rng.gen_range(0..=7);
                let hot = if rng.gen_bool(0.5) {
                    rng.gen_range(0.0..50.0)
                } else {
                    0.0
                };
                a.add_file(desc(next, level, run, entries, ub, units), hot);
                m.resident.insert(next, (0, ub));
                if policy == FilterPolicy::SkewAtWrite {
                    skew_units.insert(next, a.units(next).unwrap());
                }
                next += 1;
            }
            10..=13 => {
                if let Some(&id) = m
                    .resident
                    .keys()
                    .nth(rng.gen_range(0..m.resident.len().max(1)))
                {
                    a.remove_file(id);
                    m.resident.remove(&id);
                    skew_units.remove(&id);
                    assert_eq!(a.units(id), None);
                    assert_eq!(a.hotness(id), None);
                }
            }
            14..=16 => {
                a.set_budget(rng.gen_range(0..6_000));
                // A shrink may demote a skew-at-write file: that is allowed.
                for (id, n) in skew_units.iter_mut() {
                    *n = (*n).min(a.units(*id).unwrap());
                }
            }
            17..=30 => m.drain(&mut a, &mut rng),
            _ => {
                if !m.resident.is_empty() {
                    // Skewed accesses: low ids are hot.
                    let k = m.resident.len();
                    #[expect(
                        clippy::cast_sign_loss,
                        reason = "a fraction in [0, 1) times a length is not negative"
                    )]
                    let i = (rng.gen_range(0.0f64..1.0).powi(3) * k as f64) as usize;
                    let id = *m.resident.keys().nth(i.min(k - 1)).unwrap();
                    a.record_access(id);
                }
                a.tick(1);
            }
        }
        check(&a, &m);
        if step % 100 == 99 && policy.is_elastic() {
            check_lru_order(&mut a);
        }
        if policy == FilterPolicy::SkewAtWrite {
            for (&id, &n) in &skew_units {
                // Only a failed load (applied fewer) or a shrink lowers it.
                let now = a.units(id).unwrap();
                assert!(
                    now <= n,
                    "step {step}: skew-at-write file {id} grew {n} → {now}"
                );
            }
        }
    }
    m.drain(&mut a, &mut rng);
    assert!(
        a.take_changes().is_empty(),
        "nothing changed since the drain"
    );
    m.log
}

#[test]
fn budget_never_exceeded_random() {
    for &p in FilterPolicy::ALL {
        for seed in 0..4 {
            random_run(p, seed);
        }
    }
}

#[test]
fn deterministic() {
    for &p in FilterPolicy::ALL {
        let a = random_run(p, 42);
        let b = random_run(p, 42);
        assert!(!a.is_empty(), "{p}: something changed");
        assert_eq!(a, b, "{p}");
    }
}

#[test]
fn policy_names_round_trip() {
    for &p in FilterPolicy::ALL {
        assert_eq!(p.to_string().parse::<FilterPolicy>().unwrap(), p);
    }
    // The old name of `elastic` (Monkey's start) still names it.
    assert_eq!(
        "Elastic-Monkey".parse::<FilterPolicy>().unwrap(),
        FilterPolicy::Elastic
    );
    let e = "lru".parse::<FilterPolicy>().unwrap_err().to_string();
    assert!(e.contains("skew-at-write") && e.contains("uniform"), "{e}");
    assert_eq!(FilterPolicy::default(), FilterPolicy::Uniform);
}

#[test]
fn take_changes_empty_when_unchanged() {
    let mut a = alloc(FilterPolicy::ElasticUniform);
    a.set_budget(1_000);
    assert!(a.take_changes().is_empty());
    a.add_file(desc(1, 1, 0, 100, 100, 6), 0.0);
    assert_eq!(a.take_changes(), vec![(1, 2)]);
    assert!(a.take_changes().is_empty());
    a.applied(1, 2);
    assert!(a.take_changes().is_empty());
    a.remove_file(1);
    assert!(a.take_changes().is_empty());
    assert_eq!(a.units(1), None);
    assert!(a.is_empty());
}

#[test]
fn applied_failure_lowers_target() {
    let mut a = alloc(FilterPolicy::ElasticUniform);
    a.set_budget(1_000);
    a.add_file(desc(1, 1, 0, 100, 100, 6), 0.0);
    assert_eq!(a.take_changes(), vec![(1, 2)]);
    a.applied(1, 1);
    assert_eq!(a.units(1), Some(1));
    assert_eq!(a.used_bytes(), 100);
    assert!(a.take_changes().is_empty());
}

#[test]
fn uniform_equal_counts() {
    let mut a = alloc(FilterPolicy::Uniform);
    for id in 0..10 {
        a.add_file(desc(id, 1 + id as usize % 3, 0, 1_000, 100, 6), id as f64);
    }
    a.set_budget(2_500);
    let ch = a.take_changes();
    assert_eq!(ch.len(), 10);
    for id in 0..10 {
        assert_eq!(a.units(id), Some(if id < 5 { 3 } else { 2 }), "file {id}");
    }
    assert_eq!(a.used_bytes(), 2_500);
    // A file with fewer units is capped; its share goes to the others.
    a.add_file(desc(10, 1, 0, 1_000, 100, 1), 0.0);
    a.set_budget(6_000);
    a.take_changes();
    assert_eq!(a.units(10), Some(1));
    for id in 0..10 {
        assert_eq!(a.units(id), Some(if id < 9 { 6 } else { 5 }), "file {id}");
    }
    // Shrinking demotes at once.
    a.set_budget(1_000);
    assert!(a.used_bytes() <= 1_000);
    let ch = a.take_changes();
    assert!(ch.iter().all(|&(_, n)| n <= 1));
}

#[test]
fn monkey_gives_small_runs_more_bits() {
    let mut a = alloc(FilterPolicy::Monkey);
    // Level 1: one file of 1 000 keys; level 2: ten files of 1 000 keys.
    // Each unit is 1 000 bits = 1 bit per key.
    for id in 0..11 {
        let level = if id == 0 { 1 } else { 2 };
        a.add_file(desc(id, level, 0, 1_000, 125, 12), 0.0);
    }
    a.set_budget(11 * 125 * 4);
    a.take_changes();
    assert!(a.used_bytes() <= a.budget());
    let small = a.units(0).unwrap();
    let big = a.units(1).unwrap();
    assert!(small > big, "small run {small} units, big run {big}");
    for id in 2..11 {
        assert!(a.units(id).unwrap().abs_diff(big) <= 1);
    }
    // The plan is Monkey's: the same as monkey::plan.
    let files: Vec<FileDesc> = (0..11)
        .map(|id| desc(id, if id == 0 { 1 } else { 2 }, 0, 1_000, 125, 12))
        .collect();
    let mf: Vec<MonkeyFile<'_>> = files
        .iter()
        .map(|f| MonkeyFile {
            run: (f.level, f.run),
            entries: f.entries,
            unit_bytes: f.unit_bytes,
            fpr: &f.fpr,
            family: Default::default(),
        })
        .collect();
    let want = monkey::plan(&mf, a.budget());
    for id in 0..11u64 {
        assert_eq!(a.units(id), Some(want[id as usize]));
    }
}

/// Two files of 6 units at 100 bytes (1 bit per key) each, filling the
/// budget of 400 bytes with 2 units each.
fn two_files(lifetime: u64) -> Allocator {
    let mut a = Allocator::new(AllocConfig {
        load_cost: Some(0.0), // the paper's rule alone
        policy: FilterPolicy::ElasticUniform,
        lifetime: Some(lifetime),
        half_life: Some(0),
        ..AllocConfig::default()
    });
    a.set_budget(400);
    a.add_file(desc(1, 1, 0, 800, 100, 6), 0.0);
    a.add_file(desc(2, 1, 0, 800, 100, 6), 0.0);
    assert_eq!(a.units(1), Some(2));
    assert_eq!(a.units(2), Some(2));
    assert_eq!(a.take_changes(), vec![(1, 2), (2, 2)]);
    a.applied(1, 2);
    a.applied(2, 2);
    a
}

#[test]
fn elastic_moves_units_to_hot_from_expired() {
    let mut a = two_files(10);
    a.tick(11); // both expired
    for _ in 0..5 {
        a.record_access(2);
        a.tick(1);
    }
    assert_eq!(a.units(1), Some(0), "cold file gave its units");
    assert_eq!(a.units(2), Some(4), "hot file took them");
    assert_eq!(a.take_changes(), vec![(1, 0), (2, 4)], "decrease first");
    assert_eq!(a.used_bytes(), 400);
    assert_eq!(a.hotness(2), Some(5.0));
}

#[test]
fn elastic_skips_when_nothing_expired() {
    let mut a = two_files(10);
    a.tick(5);
    a.record_access(1); // file 1 is fresh
    a.record_access(2);
    a.tick(1);
    for _ in 0..8 {
        a.record_access(2);
        a.tick(1);
    }
    // Clock 14: file 1 expires at 15, so nothing moved.
    assert_eq!(a.units(1), Some(2));
    assert_eq!(a.units(2), Some(2));
    assert!(a.take_changes().is_empty());
    a.tick(2); // now file 1 is expired
    a.record_access(2);
    assert_eq!(a.units(1), Some(1));
    assert_eq!(a.units(2), Some(3));
}

/// A read file with no unit takes one from a file above `Q_1` that has not
/// expired when the exchange pays, and never takes a file to 0 units for it.
#[test]
fn elastic_read_file_at_zero_units_is_not_left_there() {
    let mut a = Allocator::new(AllocConfig {
        policy: FilterPolicy::ElasticUniform,
        lifetime: Some(1_000),
        half_life: Some(0),
        initial_units: Some(3),
        ..AllocConfig::default()
    });
    a.set_budget(400);
    a.add_file(desc(1, 1, 0, 800, 100, 6), 0.0);
    a.add_file(desc(2, 1, 0, 800, 100, 6), 0.0); // only one unit fits
    assert_eq!((a.units(1), a.units(2)), (Some(3), Some(1)));
    a.add_file(desc(3, 1, 0, 800, 100, 6), 0.0); // nothing left
    assert_eq!(a.units(3), Some(0));
    a.record_access(1); // file 1 is fresh: nothing has expired
    a.record_access(2);
    for _ in 0..20 {
        a.record_access(3);
        a.tick(1);
    }
    assert_eq!(a.units(3), Some(1), "the read file got a unit");
    assert_eq!(a.units(1), Some(2), "from the file above Q_1");
    assert_eq!(a.units(2), Some(1), "the file in Q_1 kept its unit");
    assert!(a.used_bytes() <= a.budget());
}

#[test]
fn elastic_demotes_from_top_queue_first() {
    let mut a = Allocator::new(AllocConfig {
        load_cost: Some(0.0), // the paper's rule alone
        policy: FilterPolicy::ElasticUniform,
        lifetime: Some(10),
        half_life: Some(0),
        initial_units: Some(3),
    });
    a.set_budget(700);
    a.add_file(desc(1, 1, 0, 100, 100, 6), 0.0); // 3 units
    a.add_file(desc(2, 1, 0, 100, 100, 6), 0.0); // 3 units
    a.add_file(desc(3, 1, 0, 100, 100, 6), 0.0); // 1 unit (what fits)
    assert_eq!(a.units(3), Some(1));
    a.tick(20);
    a.record_access(3);
    // Q_3's LRU (file 1) is the victim.
    assert_eq!(
        (a.units(1), a.units(2), a.units(3)),
        (Some(2), Some(3), Some(2))
    );
    a.record_access(3);
    // File 1 moved to Q_2 keeping its rank; Q_3 (file 2) is searched first.
    assert_eq!(
        (a.units(1), a.units(2), a.units(3)),
        (Some(2), Some(2), Some(3))
    );
}

#[test]
fn elastic_gain_threshold() {
    // fp = 1, 0.5, 0.25, 0.125: one unit 1 → 2 gains as much as 2 → 1 costs.
    let fpr = vec![1.0, 0.5, 0.25, 0.125];
    let run = |b_hot: f64| -> Option<u32> {
        let mut a = Allocator::new(AllocConfig {
            load_cost: Some(0.0), // the paper's rule alone
            policy: FilterPolicy::ElasticUniform,
            lifetime: Some(10),
            half_life: Some(0),
            ..AllocConfig::default()
        });
        a.set_budget(200);
        a.add_file(
            FileDesc {
                id: 1,
                level: 1,
                run: 0,
                entries: 10,
                unit_bytes: 100,
                fpr: fpr.clone().into(),
                family: Default::default(),
            },
            1_000.0,
        );
        a.set_budget(300);
        a.add_file(
            FileDesc {
                id: 2,
                level: 1,
                run: 0,
                entries: 10,
                unit_bytes: 100,
                fpr: fpr.clone().into(),
                family: Default::default(),
            },
            b_hot,
        );
        assert_eq!((a.units(1), a.units(2)), (Some(2), Some(1)));
        a.tick(11);
        a.record_access(2);
        a.units(2)
    };
    // After the access f_B = x, E = 0.25·1000 + 0.5·x, and the exchange
    // gains 0.25·(x − 1000): it acts iff x > 250.025 / 0.24995 ≈ 1000.3.
    assert_eq!(
        run(1_000.2 - 1.0),
        Some(1),
        "gain above cost but under 1e-4·E"
    );
    assert_eq!(run(1_000.5 - 1.0), Some(2), "gain clears the threshold");
}

#[test]
fn skew_at_write_follows_hotness_and_never_changes() {
    let mut a = Allocator::new(AllocConfig {
        policy: FilterPolicy::SkewAtWrite,
        lifetime: Some(10),
        half_life: Some(100),
        ..AllocConfig::default()
    });
    a.set_budget(2_400);
    a.add_file(desc(1, 1, 0, 100, 100, 12), 1_000.0);
    a.add_file(desc(2, 1, 0, 100, 100, 12), 1.0);
    let (u1, u2) = (a.units(1).unwrap(), a.units(2).unwrap());
    assert!(u1 > 0);
    a.take_changes();
    // With the same other files, a hot new file's optimum is larger.
    let start = |hot: f64| -> u32 {
        let mut b = Allocator::new(AllocConfig {
            policy: FilterPolicy::SkewAtWrite,
            ..AllocConfig::default()
        });
        b.add_file(desc(10, 1, 0, 800, 100, 12), 100.0);
        b.add_file(desc(11, 1, 0, 800, 100, 12), 100.0);
        assert_eq!(b.used_bytes(), 0);
        b.set_budget(2_400);
        b.add_file(desc(1, 1, 0, 800, 100, 12), hot);
        b.units(1).unwrap()
    };
    let (hot, cold) = (start(1_000.0), start(1.0));
    assert!(hot > cold && cold > 0, "hot {hot}, cold {cold}");
    // A flushed file with no history gets the mean count as prior.
    a.add_file(desc(3, 0, 3, 100, 100, 12), 0.0);
    assert_eq!(a.hotness(3), Some(500.5));
    let u3 = a.units(3).unwrap();
    for i in 0..2_000 {
        a.record_access(2 + i % 2);
        a.tick(1);
        if i % 100 == 0 {
            a.remove_file(100);
            a.set_budget(2_400 + i);
        }
    }
    assert_eq!(
        (a.units(1), a.units(2), a.units(3)),
        (Some(u1), Some(u2), Some(u3))
    );
    // A shrink demotes the coldest first.
    a.set_budget(a.used_bytes() - 100);
    let h: Vec<f64> = (1..=3).map(|id| a.hotness(id).unwrap()).collect();
    let coldest = (1..=3u64)
        .min_by(|&x, &y| h[x as usize - 1].total_cmp(&h[y as usize - 1]))
        .unwrap();
    let before = [u1, u2, u3];
    for id in 1..=3u64 {
        let want = before[id as usize - 1] - u32::from(id == coldest);
        assert_eq!(a.units(id), Some(want), "file {id}");
    }
}

#[test]
fn decay_halves() {
    let mut a = Allocator::new(AllocConfig {
        policy: FilterPolicy::Uniform,
        half_life: Some(100),
        ..AllocConfig::default()
    });
    a.add_file(desc(1, 1, 0, 100, 100, 2), 0.0);
    for _ in 0..8 {
        a.record_access(1);
    }
    assert_eq!(a.expected_extra_io(), 8.0);
    a.tick(99);
    assert_eq!(a.hotness(1), Some(8.0));
    a.tick(1);
    assert_eq!(a.hotness(1), Some(4.0));
    assert_eq!(a.expected_extra_io(), 4.0);
    a.tick(250); // clock 350: halvings at 200 and 300
    assert_eq!(a.hotness(1), Some(1.0));
    a.tick(49);
    assert_eq!(a.hotness(1), Some(1.0));
    a.tick(1);
    assert_eq!(a.hotness(1), Some(0.5));
    assert_eq!(a.clock(), 400);
    assert_eq!(a.hotness_snapshot(), vec![(1, 0.5)]);
}

#[test]
fn default_lifetime_and_half_life() {
    let mut a = alloc(FilterPolicy::ElasticUniform);
    assert_eq!(a.lifetime(), 1_000);
    assert_eq!(a.half_life(), HALF_LIFE_LIFETIMES * 1_000);
    for id in 0..600 {
        a.add_file(desc(id, 1, 0, 10, 10, 1), 0.0);
    }
    assert_eq!(a.lifetime(), 1_200);
    assert_eq!(a.half_life(), HALF_LIFE_LIFETIMES * 1_200);
}
