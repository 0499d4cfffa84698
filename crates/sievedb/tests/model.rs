//! Model-based test: random operation sequences run against the engine and
//! against a `BTreeMap`, compared after every read. Beside the default
//! keyspace, named keyspaces (`model_parts/keyspaces.rs`) with their own
//! models take writes, merges, batches across keyspaces, snapshot reads,
//! drops and recreations, and in two configurations a TTL on a manual clock.
//! Five configurations hold filter units under a 3 bits/key memory budget,
//! one per policy, so that units are loaded, dropped and moved while the
//! model checks every read; those and the other filter configurations are in
//! `model_parts/filters.rs`.
//!
//! Scale with `SIEVEDB_MODEL_OPS` (operations per seed, default 3000) and pin
//! one seed with `SIEVEDB_SEED`. A failure names the configuration, the seed
//! and the operation index, and prints the last operations.

mod common;
mod model_parts;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::path::Path;

use common::{assert_db_equals, assert_same_items, collect_all, env_usize, seeds, show, Model};
use model_parts::checks::{
    check_checkpoint, check_cursor_walk, check_double_ended, check_prefix, check_prefix_seek,
    check_range, check_range_rev, check_read_options, in_bounds, show_bound,
};
use model_parts::config::{options, Config};
use model_parts::gen::{
    gen_delete_range, gen_key, gen_operand, gen_prefix, gen_range, gen_value, model_merge,
};
use model_parts::keyspaces::Keyspaces;
use model_parts::ks_ops::Step;
use model_parts::totals::{note_levels, Totals};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sievedb::{CompactionStyle, Compression, Db, HashFn, HashSharing, Snapshot, WriteBatch};

/// Live snapshots kept at once.
const MAX_SNAPSHOTS: usize = 4;
/// Operations remembered for the failure report (`SIEVEDB_MODEL_TRACE`
/// changes it).
const TRACE_LEN: usize = 40;

fn run_seed(cfg: &Config, seed: u64, ops: usize, dir: &Path, totals: &mut Totals) {
    let trace: RefCell<VecDeque<String>> = RefCell::new(VecDeque::new());
    let result = catch_unwind(AssertUnwindSafe(|| {
        run_ops(cfg, seed, ops, dir, totals, &trace)
    }));
    if let Err(panic) = result {
        eprintln!(
            "model test {} failed with seed {seed}; last operations (oldest first):",
            cfg.name
        );
        for line in trace.borrow().iter() {
            eprintln!("  {line}");
        }
        eprintln!("reproduce with SIEVEDB_SEED={seed} SIEVEDB_MODEL_OPS={ops}");
        resume_unwind(panic);
    }
}

fn run_ops(
    cfg: &Config,
    seed: u64,
    ops: usize,
    dir: &Path,
    totals: &mut Totals,
    trace: &RefCell<VecDeque<String>>,
) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let clock = common::ManualClock::new(1_000_000);
    let mut opts = options(cfg);
    opts.clock = clock.clone();
    let mut ks = Keyspaces::new(clock, cfg.style, cfg.ttl_keyspace);
    let merges = !cfg.ttl_keyspace;
    let mut db = Some(Db::open(dir, opts.clone()).expect("open fresh db"));
    let mut model = Model::new();
    let mut snapshots: Vec<(Snapshot, Model, usize)> = Vec::new();
    let trace_len = env_usize("SIEVEDB_MODEL_TRACE", TRACE_LEN);
    let record = |s: String| {
        let mut t = trace.borrow_mut();
        if t.len() >= trace_len {
            t.pop_front();
        }
        t.push_back(s);
    };

    for i in 0..ops {
        let d = db.as_ref().expect("db open");
        let ctx = format!("[{} seed={seed} op={i}]", cfg.name);
        let roll = rng.gen_range(0..1520);
        match roll {
            // put
            0..=299 => {
                let k = gen_key(&mut rng);
                let v = gen_value(&mut rng, seed, i);
                record(format!("{i}: put {} = {}", show(&k), show(&v)));
                d.put(&k, &v).unwrap_or_else(|e| panic!("{ctx} put: {e}"));
                model.insert(k, v);
            }
            // delete a range (one tombstone)
            350..=379 => {
                let r = gen_delete_range(&mut rng);
                record(format!(
                    "{i}: delete_range({}, {})",
                    show_bound(&r.0),
                    show_bound(&r.1)
                ));
                d.delete_range(r.clone())
                    .unwrap_or_else(|e| panic!("{ctx} delete_range: {e}"));
                model.retain(|k, _| !in_bounds(k, &r));
            }
            // delete (often of a present key)
            300..=349 => {
                let k = if !model.is_empty() && rng.gen_bool(0.6) {
                    let n = rng.gen_range(0..model.len());
                    model.keys().nth(n).expect("nth key").clone()
                } else {
                    gen_key(&mut rng)
                };
                record(format!("{i}: delete {}", show(&k)));
                d.delete(&k).unwrap_or_else(|e| panic!("{ctx} delete: {e}"));
                model.remove(&k);
            }
            // atomic batch of puts and deletes (may touch one key several times)
            380..=449 => {
                let mut b = WriteBatch::new();
                let mut staged = model.clone();
                let n = rng.gen_range(1..20);
                let mut desc = Vec::new();
                for _ in 0..n {
                    let k = gen_key(&mut rng);
                    if rng.gen_range(0..10) == 0 {
                        let r = gen_delete_range(&mut rng);
                        desc.push(format!(
                            "delete_range({}, {})",
                            show_bound(&r.0),
                            show_bound(&r.1)
                        ));
                        b.delete_range(r.clone());
                        staged.retain(|k, _| !in_bounds(k, &r));
                    } else if rng.gen_range(0..6) == 0 && merges {
                        let m = gen_operand(&mut rng, i);
                        desc.push(format!("merge {} {}", show(&k), show(&m)));
                        b.merge(&k, &m);
                        model_merge(&mut staged, k, &m);
                    } else if rng.gen_bool(0.7) {
                        let v = gen_value(&mut rng, seed, i);
                        desc.push(format!("put {}", show(&k)));
                        b.put(&k, &v);
                        staged.insert(k, v);
                    } else {
                        desc.push(format!("del {}", show(&k)));
                        b.delete(&k);
                        staged.remove(&k);
                    }
                }
                assert!(b.len() <= n, "{ctx} batch len");
                record(format!("{i}: batch [{}]", desc.join(", ")));
                d.write(b)
                    .unwrap_or_else(|e| panic!("{ctx} write batch: {e}"));
                model = staged;
            }
            // get
            450..=629 => {
                let k = if !model.is_empty() && rng.gen_bool(0.5) {
                    let n = rng.gen_range(0..model.len());
                    model.keys().nth(n).expect("nth key").clone()
                } else {
                    gen_key(&mut rng)
                };
                record(format!("{i}: get {}", show(&k)));
                let got = d
                    .get(&k)
                    .unwrap_or_else(|e| panic!("{ctx} get {}: {e}", show(&k)));
                assert_eq!(
                    got.as_ref(),
                    model.get(&k),
                    "{ctx} get {}: engine vs model",
                    show(&k)
                );
            }
            // multi_get
            630..=679 => {
                let keys: Vec<Vec<u8>> = (0..rng.gen_range(0..12))
                    .map(|_| gen_key(&mut rng))
                    .collect();
                record(format!("{i}: multi_get of {} keys", keys.len()));
                let got = d
                    .multi_get(&keys)
                    .unwrap_or_else(|e| panic!("{ctx} multi_get: {e}"));
                assert_eq!(got.len(), keys.len(), "{ctx} multi_get result count");
                for (k, g) in keys.iter().zip(&got) {
                    assert_eq!(g.as_ref(), model.get(k), "{ctx} multi_get {}", show(k));
                }
            }
            // range scan with random bounds
            680..=759 => {
                let r = gen_range(&mut rng);
                record(format!(
                    "{i}: range({}, {})",
                    show_bound(&r.0),
                    show_bound(&r.1)
                ));
                check_range(d.range(r.clone()), &model, &r, &ctx);
            }
            // range iterator with a seek in the middle
            760..=789 => {
                let r = gen_range(&mut rng);
                let first = rng.gen_range(0..4);
                let target = gen_key(&mut rng);
                record(format!(
                    "{i}: range({}, {}) next x{first} then seek {}",
                    show_bound(&r.0),
                    show_bound(&r.1),
                    show(&target)
                ));
                let mut it = d
                    .range(r.clone())
                    .unwrap_or_else(|e| panic!("{ctx} range: {e}"));
                let expected: Vec<_> = model.iter().filter(|(k, _)| in_bounds(k, &r)).collect();
                for (j, exp) in expected.iter().take(first).enumerate() {
                    let got = it
                        .next()
                        .unwrap_or_else(|| panic!("{ctx} item {j} missing before seek"))
                        .unwrap_or_else(|e| panic!("{ctx} next: {e}"));
                    assert_eq!((&got.0, &got.1), *exp, "{ctx} item {j} before seek");
                }
                it.seek(&target)
                    .unwrap_or_else(|e| panic!("{ctx} seek: {e}"));
                let rest: Vec<_> = it
                    .map(|r| r.unwrap_or_else(|e| panic!("{ctx} next after seek: {e}")))
                    .collect();
                assert_same_items(
                    &rest,
                    expected
                        .into_iter()
                        .filter(|(k, _)| k.as_slice() >= target.as_slice()),
                    &format!("{ctx} after seek {}", show(&target)),
                );
            }
            // full iteration
            790..=804 => {
                record(format!("{i}: full iteration"));
                let got = collect_all(d.iter(), &ctx);
                assert_same_items(&got, model.iter(), &format!("{ctx} full iteration"));
            }
            // take a snapshot
            805..=829 => {
                if snapshots.len() == MAX_SNAPSHOTS {
                    let n = rng.gen_range(0..snapshots.len());
                    let (_, _, at) = snapshots.swap_remove(n);
                    record(format!("{i}: release snapshot taken at op {at}"));
                }
                record(format!("{i}: take snapshot"));
                snapshots.push((d.snapshot(), model.clone(), i));
                let live: Vec<usize> = snapshots.iter().map(|s| s.2).collect();
                ks.snapshot_taken(i, &live);
            }
            // verify a snapshot against the model copy of its time
            830..=889 => {
                if snapshots.is_empty() {
                    continue;
                }
                let n = rng.gen_range(0..snapshots.len());
                let (snap, smodel, at) = &snapshots[n];
                let sctx = format!("{ctx} snapshot taken at op {at}");
                for _ in 0..4 {
                    let k = if !smodel.is_empty() && rng.gen_bool(0.6) {
                        let n = rng.gen_range(0..smodel.len());
                        smodel.keys().nth(n).expect("nth key").clone()
                    } else {
                        gen_key(&mut rng)
                    };
                    record(format!("{i}: snapshot@{at} get {}", show(&k)));
                    let got = snap.get(&k).unwrap_or_else(|e| panic!("{sctx} get: {e}"));
                    assert_eq!(got.as_ref(), smodel.get(&k), "{sctx} get {}", show(&k));
                }
                let r = gen_range(&mut rng);
                record(format!(
                    "{i}: snapshot@{at} range({}, {})",
                    show_bound(&r.0),
                    show_bound(&r.1)
                ));
                check_range(snap.range(r.clone()), smodel, &r, &sctx);
                if rng.gen_range(0..4) == 0 {
                    record(format!("{i}: snapshot@{at} full iteration"));
                    let got = collect_all(snap.iter(), &sctx);
                    assert_same_items(&got, smodel.iter(), &format!("{sctx} full iteration"));
                }
            }
            // flush
            890..=914 => {
                record(format!("{i}: flush"));
                d.flush().unwrap_or_else(|e| panic!("{ctx} flush: {e}"));
                note_levels(d, totals);
                ks.note_levels();
            }
            // compact a random range or everything
            915..=934 => {
                let r = gen_range(&mut rng);
                record(format!(
                    "{i}: compact_range({}, {})",
                    show_bound(&r.0),
                    show_bound(&r.1)
                ));
                d.compact_range(r)
                    .unwrap_or_else(|e| panic!("{ctx} compact_range: {e}"));
                note_levels(d, totals);
            }
            935..=944 => {
                record(format!("{i}: compact_range(..)"));
                d.compact_range::<&[u8], _>(..)
                    .unwrap_or_else(|e| panic!("{ctx} compact_range(..): {e}"));
                note_levels(d, totals);
            }
            // release a snapshot
            945..=979 => {
                if !snapshots.is_empty() {
                    let n = rng.gen_range(0..snapshots.len());
                    let (_, _, at) = snapshots.swap_remove(n);
                    record(format!("{i}: release snapshot taken at op {at}"));
                }
            }
            // reopen (close or drop), then verify everything
            980..=999 => {
                if rng.gen_range(0..3) != 0 {
                    continue; // keep reopens rarer than the other ops
                }
                // Snapshots and keyspace handles keep the database alive:
                // release them first.
                snapshots.clear();
                ks.release();
                let d = db.take().expect("db open");
                let s = d.stats();
                totals.puts += s.puts;
                totals.flushes += s.flushes;
                totals.compactions += s.compactions;
                note_levels(&d, totals);
                if rng.gen_bool(0.5) {
                    record(format!("{i}: close + reopen"));
                    d.close().unwrap_or_else(|e| panic!("{ctx} close: {e}"));
                } else {
                    record(format!("{i}: drop + reopen"));
                    drop(d);
                }
                let d = Db::open(dir, opts.clone()).unwrap_or_else(|e| panic!("{ctx} reopen: {e}"));
                assert_db_equals(&d, &model, &format!("{ctx} after reopen"));
                record(format!("  {}", ks.after_reopen(&mut rng, &d, false, &ctx)));
                db = Some(d);
            }
            // reverse range scan, of the database or of a snapshot
            1000..=1029 => {
                let r = gen_range(&mut rng);
                let which = rng.gen_range(0..snapshots.len() + 1);
                record(format!(
                    "{i}: rev range({}, {}) of {}",
                    show_bound(&r.0),
                    show_bound(&r.1),
                    if which == 0 {
                        "db".into()
                    } else {
                        format!("snapshot@{}", snapshots[which - 1].2)
                    }
                ));
                match which {
                    0 => check_range_rev(d.range(r.clone()), &model, &r, &ctx),
                    n => {
                        let (snap, smodel, _) = &snapshots[n - 1];
                        check_range_rev(snap.range(r.clone()), smodel, &r, &ctx);
                    }
                }
            }
            // next and next_back mixed on one iterator
            1030..=1049 => {
                let r = gen_range(&mut rng);
                record(format!(
                    "{i}: double-ended range({}, {})",
                    show_bound(&r.0),
                    show_bound(&r.1)
                ));
                let it = d
                    .range(r.clone())
                    .unwrap_or_else(|e| panic!("{ctx} range: {e}"));
                check_double_ended(&mut rng, it, &model, &r, &ctx);
            }
            // cursor walk: seeks, seek_for_prev, next_ref / prev_ref
            1050..=1079 => {
                let r = gen_range(&mut rng);
                let which = rng.gen_range(0..snapshots.len() + 1);
                record(format!(
                    "{i}: cursor walk in range({}, {}) of {which}",
                    show_bound(&r.0),
                    show_bound(&r.1)
                ));
                let (it, m) = match which {
                    0 => (d.range(r.clone()), &model),
                    n => (snapshots[n - 1].0.range(r.clone()), &snapshots[n - 1].1),
                };
                let it = it.unwrap_or_else(|e| panic!("{ctx} range: {e}"));
                check_cursor_walk(&mut rng, it, m, &r, &ctx, &record);
            }
            // prefix iteration, of the database or of a snapshot
            1080..=1099 => {
                let p = gen_prefix(&mut rng, &model);
                record(format!("{i}: prefix {}", show(&p)));
                check_prefix(|| d.prefix(&p), &model, &p, &ctx);
                check_prefix_seek(&mut rng, d, &model, &snapshots, &ctx, &record);
                if let Some((snap, smodel, at)) = snapshots.first() {
                    check_prefix(
                        || snap.prefix(&p),
                        smodel,
                        &p,
                        &format!("{ctx} snapshot@{at}"),
                    );
                }
            }
            // reads with ReadOptions: snapshot, bounds, cache, checksums
            1100..=1119 => {
                record(format!("{i}: read options"));
                check_read_options(&mut rng, d, &model, &snapshots, &ctx, &record);
            }
            // a checkpoint: it opens as the model of now, and stays apart
            1120..=1129 => {
                if rng.gen_range(0..4) != 0 {
                    continue; // each one flushes: keep them rare
                }
                record(format!("{i}: checkpoint"));
                check_checkpoint(d, &model, dir, &opts, &ctx, &|c, ctx| ks.check_copy(c, ctx));
            }
            // merge an operand (often into a present key)
            1130..=1179 if !merges => continue,
            1130..=1179 => {
                let k = if !model.is_empty() && rng.gen_bool(0.5) {
                    let n = rng.gen_range(0..model.len());
                    model.keys().nth(n).expect("nth key").clone()
                } else {
                    gen_key(&mut rng)
                };
                let m = gen_operand(&mut rng, i);
                record(format!("{i}: merge {} {}", show(&k), show(&m)));
                d.merge(&k, &m)
                    .unwrap_or_else(|e| panic!("{ctx} merge: {e}"));
                model_merge(&mut model, k, &m);
            }
            // named keyspaces: writes, batches across keyspaces, reads,
            // snapshot reads, create, drop, compaction, the TTL clock
            1180..=1479 => {
                let step = Step {
                    d,
                    seed,
                    i,
                    ctx: &ctx,
                    record: &record,
                };
                ks.step(&mut rng, &step, &mut model, &snapshots);
            }
            // transactions side by side, with plain writes between their steps
            1480..=1519 => {
                let t = &mut totals.txns;
                model_parts::txns::step(d, &mut model, &mut rng, seed, i, merges, t, &record, &ctx);
            }
            _ => unreachable!("roll {roll}"),
        }
    }

    // Final checks: everything on disk, a last reopen, content intact.
    let ctx = format!("[{} seed={seed} end]", cfg.name);
    let d = db.take().expect("db open");
    record("end: verify, flush, verify, reopen, verify".into());
    assert_db_equals(&d, &model, &ctx);
    ks.check_all(&d, &ctx);
    for (snap, smodel, at) in &snapshots {
        let got = collect_all(snap.iter(), &ctx);
        assert_same_items(
            &got,
            smodel.iter(),
            &format!("{ctx} snapshot taken at op {at}"),
        );
    }
    snapshots.clear();
    d.flush().unwrap_or_else(|e| panic!("{ctx} flush: {e}"));
    assert_db_equals(&d, &model, &format!("{ctx} after final flush"));
    ks.check_all(&d, &format!("{ctx} after final flush"));
    ks.note_levels();
    ks.release();
    let s = d.stats();
    // Counters are per incarnation: the last one may have written nothing.
    assert!(s.gets > 0, "{ctx} stats.gets is 0: {s:?}");
    totals.puts += s.puts;
    totals.flushes += s.flushes;
    totals.compactions += s.compactions;
    note_levels(&d, totals);
    assert!(
        s.levels
            .iter()
            .filter(|l| l.level >= 1)
            .map(|l| l.files)
            .sum::<usize>()
            > 0,
        "{ctx} no SST below level 0 at the end: {s:?}"
    );
    d.close().unwrap_or_else(|e| panic!("{ctx} close: {e}"));
    let d = Db::open(dir, opts).unwrap_or_else(|e| panic!("{ctx} final reopen: {e}"));
    assert_db_equals(&d, &model, &format!("{ctx} after final reopen"));
    ks.after_reopen(&mut rng, &d, true, &format!("{ctx} final reopen"));
    ks.release();
    totals.keyspaces.add(&ks.totals);
}

fn run_config(cfg: &Config) {
    let ops = env_usize("SIEVEDB_MODEL_OPS", 3000);
    let mut totals = Totals::default();
    for seed in seeds(cfg.seeds) {
        let tmp = tempfile::tempdir().expect("tempdir");
        run_seed(cfg, seed, ops, &tmp.path().join("db"), &mut totals);
    }
    let k = &totals.keyspaces;
    eprintln!(
        "{}: {} flushes, {} compactions, deepest level with files {}; keyspaces: {} creates, \
         {} drops, {} batches ({} refused), {} left unopened at a reopen, deepest level with \
         files {}",
        cfg.name,
        totals.flushes,
        totals.compactions,
        totals.deepest_level_with_files,
        k.creates,
        k.drops,
        k.batches,
        k.refused_batches,
        k.lazy_opens,
        k.deepest_level_with_files
    );
    assert!(
        k.creates > 0 && k.drops > 0 && k.batches > 0 && k.lazy_opens > 0,
        "{}: the keyspace operations did not all run",
        cfg.name
    );
    assert!(
        !cfg.ttl_keyspace || k.refused_batches > 0,
        "{}: no batch merged into the TTL keyspace",
        cfg.name
    );
    assert!(totals.puts > 0, "{}: no put was counted", cfg.name);
    let t = &totals.txns;
    eprintln!("{}: transactions {t:?}", cfg.name);
    assert!(t.commits > 0 && t.conflicts > 0, "{}: {t:?}", cfg.name);
    assert!(totals.flushes > 0, "{}: no flush happened", cfg.name);
    assert!(
        totals.compactions > 0,
        "{}: no compaction happened",
        cfg.name
    );
    assert!(
        totals.deepest_level_with_files >= 2,
        "{}: data never reached level 2 (deepest level with files: {}); the test does not cover deep levels",
        cfg.name,
        totals.deepest_level_with_files
    );
}

#[test]
fn model_leveling() {
    run_config(&Config {
        name: "leveling",
        style: CompactionStyle::Leveling,
        bits_per_key: 10.0,
        compression: Compression::None,
        filter_hash: None,
        tune: None,
        ttl_keyspace: false,
        seeds: &[1, 2],
    });
}

#[test]
fn model_tiering() {
    run_config(&Config {
        name: "tiering",
        style: CompactionStyle::Tiering,
        bits_per_key: 10.0,
        compression: Compression::None,
        filter_hash: None,
        tune: None,
        ttl_keyspace: false,
        seeds: &[11, 12],
    });
}

#[test]
fn model_leveling_no_filters() {
    run_config(&Config {
        name: "leveling-no-filters",
        style: CompactionStyle::Leveling,
        bits_per_key: 0.0,
        compression: Compression::None,
        filter_hash: None,
        tune: None,
        ttl_keyspace: false,
        seeds: &[21],
    });
}

#[test]
fn model_lz4() {
    run_config(&Config {
        name: "lz4",
        style: CompactionStyle::Leveling,
        bits_per_key: 10.0,
        compression: Compression::Lz4,
        filter_hash: None,
        tune: None,
        ttl_keyspace: false,
        seeds: &[31],
    });
}

#[test]
fn model_zstd() {
    run_config(&Config {
        name: "zstd",
        style: CompactionStyle::Leveling,
        bits_per_key: 10.0,
        compression: Compression::zstd(),
        filter_hash: None,
        tune: None,
        ttl_keyspace: false,
        seeds: &[33],
    });
}

#[test]
fn model_tiering_zstd_two_level_index() {
    run_config(&Config {
        name: "tiering-zstd-two-level-index",
        style: CompactionStyle::Tiering,
        bits_per_key: 10.0,
        compression: Compression::zstd(),
        filter_hash: None,
        // Index partitions of about 128 bytes: a few data blocks each.
        tune: Some(|o| o.index_partition_bytes = Some(128)),
        ttl_keyspace: false,
        seeds: &[35],
    });
}

#[test]
fn model_tiering_lz4_no_filters() {
    run_config(&Config {
        name: "tiering-lz4-no-filters",
        style: CompactionStyle::Tiering,
        bits_per_key: 0.0,
        compression: Compression::Lz4,
        filter_hash: None,
        tune: None,
        ttl_keyspace: false,
        seeds: &[41],
    });
}

#[test]
fn model_tiering_xxh3_per_filter_hashing() {
    run_config(&Config {
        name: "tiering-xxh3-sharing-filter",
        style: CompactionStyle::Tiering,
        bits_per_key: 6.0,
        compression: Compression::None,
        filter_hash: Some((HashFn::Xxh3, HashSharing::Filter)),
        tune: None,
        ttl_keyspace: false,
        seeds: &[51],
    });
}

#[test]
fn model_leveling_no_hash_sharing() {
    run_config(&Config {
        name: "leveling-murmur3-sharing-none",
        style: CompactionStyle::Leveling,
        bits_per_key: 10.0,
        compression: Compression::None,
        filter_hash: Some((HashFn::Murmur3, HashSharing::None)),
        tune: None,
        ttl_keyspace: false,
        seeds: &[61],
    });
}

#[test]
fn model_keyspaces_ttl() {
    run_config(&Config {
        name: "keyspaces-ttl",
        style: CompactionStyle::Leveling,
        bits_per_key: 10.0,
        compression: Compression::None,
        filter_hash: None,
        tune: None,
        ttl_keyspace: true,
        seeds: &[91],
    });
}

#[test]
fn model_keyspaces_ttl_tiering() {
    run_config(&Config {
        name: "keyspaces-ttl-tiering",
        style: CompactionStyle::Tiering,
        bits_per_key: 10.0,
        compression: Compression::Lz4,
        filter_hash: None,
        tune: None,
        ttl_keyspace: true,
        seeds: &[92],
    });
}
