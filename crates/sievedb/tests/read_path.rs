//! The read path hashes a key as often as its sharing mode says, no more:
//! `levels` once per lookup, `filter` once per filter probed, `none` per probe
//! position; and the sampled time breakdown adds up.

mod common;

use sievedb::{CompactionStyle, Db, HashSharing, Options, Stats};

/// Runs (L0 files) the test trees have: every missing-key lookup probes this
/// many SST filters.
const RUNS: usize = 5;
const KEYS_PER_RUN: u32 = 200;

fn options(sharing: HashSharing, memtable_filter: bool) -> Options {
    let mut o = Options::builder()
        .write_buffer_size(1 << 20)
        .level0_compaction_trigger(32)
        .level0_slowdown_trigger(32)
        .level0_stop_trigger(40)
        .compaction_style(CompactionStyle::Tiering)
        .lookup_breakdown_every(1)
        .build();
    o.filter.sharing = sharing;
    o.filter.memtable_filter = memtable_filter;
    o
}

/// A database with `RUNS` L0 runs of interleaved keys and a few keys left in
/// the memtable.
fn build(dir: &std::path::Path, opts: Options) -> Db {
    let db = Db::open(dir, opts).unwrap();
    for r in 0..RUNS as u32 {
        for i in 0..KEYS_PER_RUN {
            db.put(format!("key{:06}", i * RUNS as u32 + r), b"v")
                .unwrap();
        }
        db.flush().unwrap();
    }
    db.put(b"key999999", b"in memtable").unwrap();
    assert_eq!(db.stats().levels[0].runs, RUNS, "compaction ran");
    db
}

/// Counter deltas over `n` lookups of keys that exist nowhere but fall inside
/// every file's key range (so fence pointers do not rule them out).
fn missing_lookups(db: &Db, n: u32) -> Stats {
    let before = db.stats();
    for i in 0..n {
        assert_eq!(
            db.get(format!("key{:06}-absent", 10 + i % 980)).unwrap(),
            None
        );
    }
    db.stats().delta_since(&before)
}

#[test]
fn levels_sharing_hashes_once_per_lookup() {
    for memtable_filter in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = build(dir.path(), options(HashSharing::Levels, memtable_filter));
        let d = missing_lookups(&db, 1000);
        assert_eq!(d.gets, 1000);
        assert_eq!(d.filter_probes, 1000 * RUNS as u64);
        assert_eq!(
            d.digests_computed, 1000,
            "memtable filter {memtable_filter}"
        );
        assert_eq!(
            d.levels[0].digests_computed,
            if memtable_filter { 0 } else { 1000 }
        );
        if memtable_filter {
            assert_eq!(d.memtable_filter_probes, 1000);
            assert!(d.memtable_filter_negatives > 950, "{d:?}");
        }
        // A lookup the memtable answers before any filter computes no digest.
        let before = db.stats();
        assert_eq!(
            db.get(b"key999999").unwrap().as_deref(),
            Some(&b"in memtable"[..])
        );
        let d = db.stats().delta_since(&before);
        assert_eq!(d.digests_computed, u64::from(memtable_filter));
        // Every stored key is still found.
        for i in 0..KEYS_PER_RUN * RUNS as u32 {
            assert!(db.get(format!("key{i:06}")).unwrap().is_some());
        }
    }
}

#[test]
fn filter_sharing_hashes_once_per_filter() {
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path(), options(HashSharing::Filter, true));
    let d = missing_lookups(&db, 1000);
    assert_eq!(d.filter_probes, 1000 * RUNS as u64);
    assert_eq!(
        d.digests_computed,
        d.filter_probes + d.memtable_filter_probes
    );
    for l in &d.levels {
        assert_eq!(l.digests_computed, l.filter_probes, "level {}", l.level);
    }
}

#[test]
fn no_sharing_hashes_per_probe_position() {
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path(), options(HashSharing::None, false));
    let d = missing_lookups(&db, 1000);
    assert_eq!(d.filter_probes, 1000 * RUNS as u64);
    // Independent positions: at least one hash per probe, more whenever the
    // first positions are set; never more than k = 7 per probe.
    assert!(d.digests_computed > d.filter_probes * 3 / 2, "{d:?}");
    assert!(d.digests_computed <= d.filter_probes * 7, "{d:?}");
}

#[test]
fn breakdown_adds_up() {
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path(), options(HashSharing::Filter, false));
    let d = missing_lookups(&db, 2000);
    let b = d.breakdown;
    assert_eq!(b.samples, 2000);
    assert!(b.hash_ns > 0 && b.filter_ns > 0 && b.index_ns > 0, "{b:?}");
    assert!(
        b.hash_ns + b.filter_ns + b.index_ns + b.data_ns <= b.total_ns,
        "{b:?}"
    );
    let per = b.per_lookup().unwrap();
    assert!(per.iter().all(|x| x.is_finite() && *x >= 0.0), "{per:?}");
    // Existing keys read data blocks.
    let before = db.stats();
    for i in 0..500 {
        db.get(format!("key{i:06}")).unwrap().unwrap();
    }
    let b = db.stats().delta_since(&before).breakdown;
    assert_eq!(b.samples, 500);
    assert!(b.data_ns > 0, "{b:?}");
    // Sampling off: nothing is timed.
    drop(db);
    let mut o = options(HashSharing::Levels, false);
    o.lookup_breakdown_every = 0;
    let db = Db::open(dir.path(), o).unwrap();
    assert_eq!(missing_lookups(&db, 100).breakdown.samples, 0);
}

#[test]
fn wait_for_compactions_leaves_a_settled_tree() {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::small_options(CompactionStyle::Leveling);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    for i in 0..6000u32 {
        db.put(
            format!("k{:08}", i.wrapping_mul(2_654_435_761) % 100_000),
            [7u8; 64],
        )
        .unwrap();
    }
    db.wait_for_compactions().unwrap();
    let s = db.stats();
    assert!(s.levels[0].runs < opts.level0_compaction_trigger, "{s:?}");
    for l in &s.levels[1..] {
        assert!(l.bytes <= opts.level_capacity(l.level), "{s:?}");
    }
    assert_eq!(s.memtable_bytes, 0, "{s:?}");
}

/// More runs than a lookup finds before probing (`PREFETCHED_RUNS`, 8): the
/// runs past the first candidates are searched afterwards, in order, so the
/// newest entry still wins, deletes and range deletes in newer runs still
/// hide older values, and a missing key probes every run's filter once.
#[test]
fn lookups_past_the_prefetched_runs_keep_newest_first() {
    const MANY: u32 = sievedb::version::PREFETCHED_RUNS as u32 + 4;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(HashSharing::Levels, false)).unwrap();
    for r in 0..MANY {
        for i in 0..KEYS_PER_RUN {
            db.put(format!("key{:06}", i * MANY + r), format!("v{r}"))
                .unwrap();
        }
        // Every run overwrites one key; the two newest delete keys of the oldest.
        db.put(b"key000000-shared", format!("r{r}")).unwrap();
        if r == MANY - 2 {
            db.delete(format!("key{:06}", MANY)).unwrap();
        }
        if r == MANY - 1 {
            db.delete_range(format!("key{:06}", 2 * MANY).as_bytes()..b"key000030".as_slice())
                .unwrap();
        }
        db.flush().unwrap();
    }
    assert_eq!(db.stats().levels[0].runs, MANY as usize, "compaction ran");
    let want = format!("r{}", MANY - 1);
    assert_eq!(
        db.get(b"key000000-shared").unwrap().as_deref(),
        Some(want.as_bytes())
    );
    assert_eq!(db.get(format!("key{:06}", MANY)).unwrap(), None);
    for i in 0..KEYS_PER_RUN * MANY {
        let key = format!("key{:06}", i);
        let deleted = i == MANY || (i >= 2 * MANY && key.as_str() < "key000030");
        let value = (!deleted).then(|| format!("v{}", i % MANY).into_bytes());
        assert_eq!(db.get(&key).unwrap(), value, "{key}");
    }
    let before = db.stats();
    for i in 0..500u32 {
        let key = format!("key{:06}-absent", 100 + i);
        assert_eq!(db.get(key).unwrap(), None);
    }
    let d = db.stats().delta_since(&before);
    assert_eq!(d.filter_probes, 500 * u64::from(MANY));
    assert_eq!(d.digests_computed, 500);
}
