//! Keyspaces: creation, isolation, atomic cross-keyspace batches, snapshots,
//! per-keyspace options, drop, reopen, flush and compaction, checkpoint and
//! read-only open.

use std::sync::Arc;
use std::time::Duration;

use sievedb::merge::U64Add;
use sievedb::{Clock, Db, Error, KeyspaceOptions, Options, ReadOptions, WriteBatch};

/// A clock moved by hand.
struct ManualClock(std::sync::atomic::AtomicU64);

impl ManualClock {
    fn new(t: u64) -> Self {
        ManualClock(t.into())
    }
    fn advance(&self, secs: u64) {
        self.0.fetch_add(secs, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_secs(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

fn small() -> Options {
    Options::builder()
        .write_buffer_size(64 << 10)
        .target_file_size(32 << 10)
        .level1_size(128 << 10)
        .build()
}

fn keys(it: sievedb::DbIterator) -> Vec<Vec<u8>> {
    it.map(|kv| kv.unwrap().0).collect()
}

#[test]
fn keyspaces_are_isolated_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), small()).unwrap();
        let a = db.keyspace("a").unwrap();
        let b = db.keyspace("b").unwrap();
        db.put("k", "default").unwrap();
        a.put("k", "in a").unwrap();
        b.put("k", "in b").unwrap();
        b.put("only-b", "1").unwrap();
        assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"default"[..]));
        assert_eq!(a.get("k").unwrap().as_deref(), Some(&b"in a"[..]));
        assert_eq!(b.get("k").unwrap().as_deref(), Some(&b"in b"[..]));
        assert_eq!(a.get("only-b").unwrap(), None);
        assert_eq!(keys(b.iter().unwrap()), [b"k".to_vec(), b"only-b".to_vec()]);
        assert_eq!(db.list_keyspaces(), ["a", "b", "default"]);
        assert_eq!(
            db.keyspace("default").unwrap().get("k").unwrap().as_deref(),
            Some(&b"default"[..])
        );
        // Unflushed at close: the WAL carries every keyspace's writes.
    }
    {
        let db = Db::open(dir.path(), small()).unwrap();
        assert_eq!(db.list_keyspaces(), ["a", "b", "default"]);
        let a = db.keyspace("a").unwrap();
        let b = db.keyspace("b").unwrap();
        assert_eq!(a.get("k").unwrap().as_deref(), Some(&b"in a"[..]));
        assert_eq!(b.get("only-b").unwrap().as_deref(), Some(&b"1"[..]));
        assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"default"[..]));
        db.flush().unwrap();
        assert!(a.stats().levels[0].files >= 1);
    }
    let db = Db::open(dir.path(), small()).unwrap();
    let b = db.keyspace("b").unwrap();
    assert_eq!(b.get("k").unwrap().as_deref(), Some(&b"in b"[..]));
    assert_eq!(
        b.multi_get(["k", "nope", "only-b"]).unwrap(),
        [Some(b"in b".to_vec()), None, Some(b"1".to_vec())]
    );
}

#[test]
fn a_batch_is_atomic_across_keyspaces_and_a_snapshot_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    let users = db.keyspace("users").unwrap();
    let index = db.keyspace("index").unwrap();
    let mut b = WriteBatch::new();
    b.put_cf(&users, "u1", "alice");
    b.put_cf(&index, "alice", "u1");
    b.put("meta", "1");
    db.write(b).unwrap();
    let snap = db.snapshot();
    let mut b = WriteBatch::new();
    b.delete_cf(&users, "u1");
    b.delete_cf(&index, "alice");
    db.write(b).unwrap();
    let at = ReadOptions::default().snapshot(&snap);
    assert_eq!(
        users.get_opt("u1", &at).unwrap().as_deref(),
        Some(&b"alice"[..])
    );
    assert_eq!(
        index.get_opt("alice", &at).unwrap().as_deref(),
        Some(&b"u1"[..])
    );
    assert_eq!(users.get("u1").unwrap(), None);
    assert_eq!(keys(index.iter_opt(&at).unwrap()), [b"alice".to_vec()]);
    assert!(keys(index.iter().unwrap()).is_empty());
}

#[test]
fn many_writes_flush_and_compact_per_keyspace() {
    let dir = tempfile::tempdir().unwrap();
    let n = 6_000u32;
    {
        let db = Db::open(dir.path(), small()).unwrap();
        let ks: Vec<_> = (0..3)
            .map(|i| db.keyspace(&format!("ks{i}")).unwrap())
            .collect();
        for i in 0..n {
            let k = format!("key{i:08}");
            ks[(i % 3) as usize]
                .put(&k, format!("v{i}").repeat(8))
                .unwrap();
            if i % 7 == 0 {
                db.put(&k, "d").unwrap();
            }
        }
        db.wait_for_compactions().unwrap();
        for (j, k) in ks.iter().enumerate() {
            let s = k.stats();
            let files: usize = s.levels.iter().map(|l| l.files).sum();
            assert!(files > 0, "keyspace {j} has files");
            assert_eq!(keys(k.iter().unwrap()).len() as u32, n / 3);
        }
        // Totals are the keyspaces' together.
        let total: usize = db.stats().levels.iter().map(|l| l.files).sum();
        let parts: usize = ks
            .iter()
            .chain([&db.default_keyspace()])
            .map(|k| k.stats().levels.iter().map(|l| l.files).sum::<usize>())
            .sum();
        assert_eq!(total, parts);
    }
    let db = Db::open(dir.path(), small()).unwrap();
    for j in 0..3u32 {
        let k = db.keyspace(&format!("ks{j}")).unwrap();
        for i in (j..n).step_by(3 * 97) {
            let key = format!("key{i:08}");
            assert_eq!(
                k.get(&key).unwrap(),
                Some(format!("v{i}").repeat(8).into_bytes()),
                "{key}"
            );
        }
        assert_eq!(k.get(format!("key{:08}", (j + 1) % 3)).unwrap(), None);
    }
    assert_eq!(keys(db.iter().unwrap()).len() as u32, n.div_ceil(7));
}

#[test]
fn drop_removes_a_keyspace_durably_and_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    let gone = db.keyspace("gone").unwrap();
    let kept = db.keyspace("kept").unwrap();
    for i in 0..3000 {
        gone.put(format!("k{i:06}"), [7u8; 64]).unwrap();
        kept.put(format!("k{i:06}"), [8u8; 64]).unwrap();
    }
    db.wait_for_compactions().unwrap();
    let files_before = sst_count(dir.path());
    let gone_files: usize = gone.stats().levels.iter().map(|l| l.files).sum();
    assert!(gone_files > 0);
    let it = gone.iter().unwrap();
    db.drop_keyspace("gone").unwrap();
    assert_eq!(db.list_keyspaces(), ["default", "kept"]);
    // Old handles fail; an open iterator goes on reading.
    assert!(matches!(gone.put("x", "y"), Err(Error::InvalidArgument(_))));
    assert!(matches!(gone.get("x"), Err(Error::InvalidArgument(_))));
    let mut b = WriteBatch::new();
    b.put_cf(&gone, "x", "y");
    b.put_cf(&kept, "x", "y");
    assert!(matches!(db.write(b), Err(Error::InvalidArgument(_))));
    assert_eq!(
        kept.get("x").unwrap(),
        None,
        "a refused batch wrote nothing"
    );
    assert_eq!(it.count(), 3000);
    drop(gone);
    db.wait_for_compactions().unwrap();
    assert_eq!(
        sst_count(dir.path()),
        files_before - gone_files,
        "the dropped keyspace's files, and only they, are deleted"
    );
    assert!(matches!(
        db.drop_keyspace("gone"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        db.drop_keyspace("default"),
        Err(Error::InvalidArgument(_))
    ));
    // Recreated under the same name, it is a new, empty keyspace.
    let again = db.keyspace("gone").unwrap();
    assert_eq!(again.get("k000001").unwrap(), None);
    again.put("new", "1").unwrap();
    // Handles keep the database open, as iterators do.
    assert!(matches!(
        Db::open(dir.path(), small()),
        Err(Error::Locked(_))
    ));
    drop((again, kept));
    db.close().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    assert_eq!(db.list_keyspaces(), ["default", "gone", "kept"]);
    let again = db.keyspace("gone").unwrap();
    assert_eq!(keys(again.iter().unwrap()), [b"new".to_vec()]);
    assert_eq!(db.keyspace("kept").unwrap().iter().unwrap().count(), 3000);
}

#[test]
fn a_drop_whose_writes_are_only_in_the_wal_stays_dropped_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), small()).unwrap();
        let gone = db.keyspace("gone").unwrap();
        gone.put("a", "1").unwrap();
        db.put("b", "2").unwrap();
        db.drop_keyspace("gone").unwrap();
    }
    let db = Db::open(dir.path(), small()).unwrap();
    assert_eq!(db.list_keyspaces(), ["default"]);
    assert_eq!(db.get("b").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(db.get("a").unwrap(), None);
}

#[test]
fn per_keyspace_options_merge_and_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1_000_000));
    let opts = Options {
        clock: clock.clone(),
        ..small()
    };
    {
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        let counters = db
            .keyspace_with(
                "counters",
                KeyspaceOptions::default().merge_operator(Arc::new(U64Add)),
            )
            .unwrap();
        let sessions = db
            .keyspace_with(
                "sessions",
                KeyspaceOptions::default().ttl(Duration::from_secs(60)),
            )
            .unwrap();
        for _ in 0..5 {
            counters.merge("hits", 2u64.to_le_bytes()).unwrap();
        }
        let mut b = WriteBatch::new();
        b.merge_cf(&counters, "hits", 1u64.to_le_bytes());
        b.put_cf(&sessions, "tok", "alice");
        db.write(b).unwrap();
        assert_eq!(
            counters.get("hits").unwrap(),
            Some(11u64.to_le_bytes().to_vec())
        );
        assert_eq!(sessions.get("tok").unwrap().as_deref(), Some(&b"alice"[..]));
        // The default keyspace has no merge operator: its merges are refused.
        assert!(matches!(
            db.merge("x", 1u64.to_le_bytes()),
            Err(Error::InvalidArgument(m)) if m.contains("keyspace \"default\" has no merge operator")
        ));
        assert_eq!(db.get("x").unwrap(), None);
        // A merge into the TTL keyspace is refused, as on a TTL database.
        assert!(matches!(
            sessions.merge("m", "1"),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            db.keyspace_with("counters", KeyspaceOptions::default()),
            Err(Error::InvalidArgument(_))
        ));
        db.flush().unwrap();
        clock.advance(61);
        assert_eq!(sessions.get("tok").unwrap(), None, "expired");
        assert_eq!(
            db.keyspace("counters").unwrap().get("hits").unwrap(),
            Some(11u64.to_le_bytes().to_vec())
        );
    }
    let db = Db::open(dir.path(), opts).unwrap();
    // A TTL keyspace must be reopened with a TTL, and one without without.
    assert!(matches!(
        db.keyspace("sessions"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        db.keyspace_with(
            "counters",
            KeyspaceOptions::default().ttl(Duration::from_secs(5))
        ),
        Err(Error::InvalidArgument(_))
    ));
    let sessions = db
        .keyspace_with(
            "sessions",
            KeyspaceOptions::default().ttl(Duration::from_secs(60)),
        )
        .unwrap();
    sessions.put("tok2", "bob").unwrap();
    assert_eq!(sessions.get("tok2").unwrap().as_deref(), Some(&b"bob"[..]));
    let counters = db
        .keyspace_with(
            "counters",
            KeyspaceOptions::default().merge_operator(Arc::new(U64Add)),
        )
        .unwrap();
    counters.merge("hits", 1u64.to_le_bytes()).unwrap();
    assert_eq!(
        counters.get("hits").unwrap(),
        Some(12u64.to_le_bytes().to_vec())
    );
}

#[test]
fn bad_names_and_foreign_batches_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("one"), small()).unwrap();
    let other = Db::open(dir.path().join("two"), small()).unwrap();
    assert!(matches!(db.keyspace(""), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        db.keyspace(&"x".repeat(256)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        db.keyspace_with("default", KeyspaceOptions::default()),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        db.keyspace_with("bad", KeyspaceOptions::default().size_ratio(1)),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(
        db.list_keyspaces(),
        ["default"],
        "a refused create creates nothing"
    );
    let mine = db.keyspace("mine").unwrap();
    let theirs = other.keyspace("theirs").unwrap();
    let mut b = WriteBatch::new();
    b.put_cf(&theirs, "k", "v");
    assert!(matches!(db.write(b), Err(Error::InvalidArgument(_))));
    let mut b = WriteBatch::new();
    b.put_cf(&mine, "k", "v");
    b.put_cf(&theirs, "k", "v");
    assert!(matches!(other.write(b), Err(Error::InvalidArgument(_))));
    assert_eq!(theirs.get("k").unwrap(), None);
}

#[test]
fn checkpoint_and_read_only_open_see_every_keyspace() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy");
    let path = dir.path().join("db");
    {
        let db = Db::open(&path, small()).unwrap();
        let a = db.keyspace("a").unwrap();
        a.put("ka", "1").unwrap();
        a.delete_range(b"x".as_slice()..b"z".as_slice()).unwrap();
        db.put("kd", "2").unwrap();
        db.checkpoint(&copy).unwrap();
        a.put("late", "3").unwrap();
    }
    let ro = Db::open_read_only(&path, small()).unwrap();
    let a = ro.keyspace("a").unwrap();
    assert_eq!(a.get("late").unwrap().as_deref(), Some(&b"3"[..]));
    assert!(matches!(ro.keyspace("new"), Err(Error::Unsupported(_))));
    assert!(matches!(a.put("x", "y"), Err(Error::Unsupported(_))));
    let cp = Db::open(&copy, small()).unwrap();
    assert_eq!(cp.list_keyspaces(), ["a", "default"]);
    let a = cp.keyspace("a").unwrap();
    assert_eq!(a.get("ka").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(a.get("late").unwrap(), None);
    assert_eq!(cp.get("kd").unwrap().as_deref(), Some(&b"2"[..]));
}

#[test]
fn keyspace_handles_are_send_sync_and_used_from_threads() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<sievedb::Keyspace>();
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path(), small()).unwrap());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let ks = db.keyspace(&format!("t{}", t % 2)).unwrap();
                for i in 0..2000 {
                    let mut b = WriteBatch::new();
                    #[expect(clippy::cast_sign_loss, reason = "the thread index is not negative")]
                    b.put_cf(&ks, format!("{t}-{i:05}"), [t as u8; 100]);
                    b.put(format!("{t}-{i:05}"), [1]);
                    db.write(b).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    db.flush().unwrap();
    assert_eq!(db.keyspace("t0").unwrap().iter().unwrap().count(), 4000);
    assert_eq!(db.keyspace("t1").unwrap().iter().unwrap().count(), 4000);
    assert_eq!(db.iter().unwrap().count(), 8000);
}

/// Until `keyspace_with` gives a keyspace recovered at open its options,
/// its flushes and compactions must not apply the database's merge
/// operator (found by the model test: the compaction that the recovery
/// flush's second L0 file starts at open joined the `U64Add` operand to the
/// value with the database's `Append`, for good).
#[test]
fn a_recovered_keyspace_is_not_compacted_with_the_databases_merge_operator() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::builder()
        .merge_operator(Arc::new(sievedb::merge::Append::new(",")))
        .level0_compaction_trigger(2)
        .build();
    let counters = || KeyspaceOptions::default().merge_operator(Arc::new(U64Add));
    {
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        let c = db.keyspace_with("counters", counters()).unwrap();
        c.put("k", 5u64.to_le_bytes()).unwrap();
        db.flush().unwrap(); // one L0 file
        c.merge("k", 3u64.to_le_bytes()).unwrap(); // in the WAL only
    }
    let db = Db::open(dir.path(), opts).unwrap();
    // The recovery flush wrote a second L0 file: a compaction starts at
    // once. (Opening the keyspace right away instead of waiting loses the
    // race about one time in 25.)
    db.wait_for_compactions().unwrap();
    let c = db.keyspace_with("counters", counters()).unwrap();
    assert_eq!(c.get("k").unwrap(), Some(8u64.to_le_bytes().to_vec()));
}

/// The same with the database's compaction filter: it removes the entries
/// of a keyspace whose own filter keeps them.
#[test]
fn a_recovered_keyspace_is_not_compacted_with_the_databases_compaction_filter() {
    use sievedb::{CompactionFilter, Decision};
    struct Fixed(Decision);
    impl CompactionFilter for Fixed {
        fn filter(&self, _: usize, _: &[u8], _: &[u8]) -> Decision {
            self.0.clone()
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::builder()
        .compaction_filter(Arc::new(Fixed(Decision::Remove)))
        .level0_compaction_trigger(2)
        .build();
    let kept = || KeyspaceOptions::default().compaction_filter(Arc::new(Fixed(Decision::Keep)));
    {
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        let k = db.keyspace_with("kept", kept()).unwrap();
        k.put("a", "1").unwrap();
        db.flush().unwrap();
        k.put("b", "2").unwrap();
    }
    let db = Db::open(dir.path(), opts).unwrap();
    db.wait_for_compactions().unwrap();
    let k = db.keyspace_with("kept", kept()).unwrap();
    assert_eq!(k.get("a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(k.get("b").unwrap().as_deref(), Some(&b"2"[..]));
}

fn sst_count(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "sst")
        })
        .count()
}

#[test]
fn repair_rebuilds_every_keyspace_from_its_files() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), small()).unwrap();
        let a = db.keyspace("a").unwrap();
        let gone = db.keyspace("gone").unwrap();
        for i in 0..2000 {
            a.put(format!("k{i:05}"), "a").unwrap();
            db.put(format!("k{i:05}"), "d").unwrap();
            gone.put(format!("k{i:05}"), "g").unwrap();
        }
        db.flush().unwrap();
        a.put("wal-only", "1").unwrap();
        gone.put("wal-only", "1").unwrap();
        drop(gone);
        db.drop_keyspace("gone").unwrap();
        // In the WAL only: a keyspace that has no SST yet.
        db.keyspace("late").unwrap().put("x", "y").unwrap();
    }
    // The MANIFEST is damaged, not lost: repair learns the names from it.
    let report = Db::repair(dir.path(), small()).unwrap();
    assert_eq!(report.keyspaces, ["a", "late"]);
    let db = Db::open(dir.path(), small()).unwrap();
    assert_eq!(db.list_keyspaces(), ["a", "default", "late"]);
    let a = db.keyspace("a").unwrap();
    assert_eq!(a.iter().unwrap().count(), 2001);
    assert_eq!(a.get("k00007").unwrap().as_deref(), Some(&b"a"[..]));
    assert_eq!(db.get("k00007").unwrap().as_deref(), Some(&b"d"[..]));
    assert_eq!(db.get("wal-only").unwrap(), None);
    assert_eq!(
        db.keyspace("late").unwrap().get("x").unwrap().as_deref(),
        Some(&b"y"[..])
    );
    drop(a);
    db.close().unwrap();
    // Without any MANIFEST, the SSTs name their keyspaces.
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("MANIFEST") || name == "CURRENT" {
            std::fs::remove_file(p).unwrap();
        }
    }
    let report = Db::repair(dir.path(), small()).unwrap();
    assert_eq!(report.keyspaces, ["a", "late"]);
    let db = Db::open(dir.path(), small()).unwrap();
    assert_eq!(db.keyspace("a").unwrap().iter().unwrap().count(), 2001);
    assert_eq!(db.iter().unwrap().count(), 2000);
}

#[test]
fn bulk_load_into_a_named_keyspace() {
    use sievedb::bulk::{BulkLoad, LevelShape};
    let dir = tempfile::tempdir().unwrap();
    let opts = small();
    let entries = (0..20_000u32).map(|i| (format!("key{i:08}"), format!("v{i}")));
    let report = BulkLoad::new(dir.path(), opts.clone(), LevelShape::new(2, 4).unwrap())
        .keyspace("events")
        .load(entries)
        .unwrap();
    let db = Db::open(dir.path(), report.open_options(opts.clone())).unwrap();
    assert_eq!(db.list_keyspaces(), ["default", "events"]);
    let events = db.keyspace("events").unwrap();
    assert_eq!(
        events.get("key00000042").unwrap().as_deref(),
        Some(&b"v42"[..])
    );
    assert_eq!(events.iter().unwrap().count(), 20_000);
    assert_eq!(db.iter().unwrap().count(), 0);
    let later = db.keyspace("later").unwrap();
    later.put("a", "b").unwrap();
    assert_eq!(later.get("a").unwrap().as_deref(), Some(&b"b"[..]));
    let bad = BulkLoad::new(dir.path().join("x"), opts, LevelShape::new(2, 4).unwrap())
        .keyspace("default")
        .load([("a", "b")]);
    assert!(matches!(bad, Err(Error::InvalidArgument(_))));
}

/// A database written by the release before keyspaces (`tests/data/`,
/// made by `tests/data/make-pre-keyspaces.sh` with the CLI of commit
/// 51ec95f: SSTs, a MANIFEST and a WAL holding the last writes) opens as
/// its default keyspace, takes keyspaces, and reopens.
#[test]
fn a_database_written_before_keyspaces_opens_as_the_default_keyspace() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pre-keyspaces");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    for e in std::fs::read_dir(&fixture).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
    }
    let expect = |db: &Db| {
        assert_eq!(db.get("first").unwrap().as_deref(), Some(&b"1"[..]));
        assert_eq!(db.get("second").unwrap().as_deref(), Some(&b"2"[..]));
        assert_eq!(db.get("gone").unwrap(), None);
        for i in (0..300).step_by(37) {
            let k = format!("wal{i:04}");
            assert_eq!(
                db.get(&k).unwrap(),
                Some(format!("v{i}").into_bytes()),
                "{k}"
            );
        }
        assert_eq!(db.iter().unwrap().count(), 302);
    };
    {
        let db = Db::open(&dir, Options::default()).unwrap();
        assert_eq!(db.list_keyspaces(), ["default"]);
        expect(&db);
        db.keyspace("new").unwrap().put("k", "v").unwrap();
    }
    let db = Db::open(&dir, Options::default()).unwrap();
    expect(&db);
    assert_eq!(
        db.keyspace("new").unwrap().get("k").unwrap().as_deref(),
        Some(&b"v"[..])
    );
}

/// A database that never made a keyspace keeps the formats of the builds
/// before keyspaces: no MANIFEST record names a keyspace (tags 9-12) and no
/// SST property does, so those builds still open it.
#[test]
fn a_database_without_keyspaces_writes_the_formats_older_builds_read() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), small()).unwrap();
        for i in 0..5000 {
            db.put(format!("k{i:06}"), [3u8; 40]).unwrap();
        }
        db.wait_for_compactions().unwrap();
        db.checkpoint(dir.path().join("cp")).unwrap();
    }
    for d in [dir.path().to_path_buf(), dir.path().join("cp")] {
        let current = std::fs::read_to_string(d.join("CURRENT")).unwrap();
        let manifest = std::fs::read(d.join(current.trim_end())).unwrap();
        let path = d.join(current.trim_end());
        let (records, torn) = sievedb::wal::read_records(&manifest, &path).unwrap();
        assert_eq!(torn, None);
        assert!(!records.is_empty());
        for rec in records {
            let edits = sievedb::version::decode_record(rec).unwrap();
            assert_eq!(edits.len(), 1, "{}", d.display());
            let e = &edits[0];
            assert!(e.keyspace == 0 && e.created.is_empty() && e.dropped.is_empty());
            assert_eq!(e.next_keyspace_id, None, "{}", d.display());
        }
    }
}

/// A keyspace can turn off what the database has: a counter keyspace in a
/// TTL database, a TTL keyspace in a database with a merge operator.
#[test]
fn a_keyspace_unsets_the_databases_ttl_merge_operator_and_filter() {
    let dir = tempfile::tempdir().unwrap();
    let ttl_db = Options {
        ttl: Some(Duration::from_secs(60)),
        ..small()
    };
    let counters = || {
        KeyspaceOptions::default()
            .no_ttl()
            .merge_operator(Arc::new(U64Add))
    };
    {
        let db = Db::open(dir.path().join("ttl"), ttl_db.clone()).unwrap();
        // Inheriting the TTL, a merge operator is refused.
        assert!(matches!(
            db.keyspace_with(
                "c",
                KeyspaceOptions::default().merge_operator(Arc::new(U64Add))
            ),
            Err(Error::InvalidArgument(_))
        ));
        let c = db.keyspace_with("c", counters()).unwrap();
        c.merge("n", 2u64.to_le_bytes()).unwrap();
        c.merge("n", 3u64.to_le_bytes()).unwrap();
        assert_eq!(c.get("n").unwrap(), Some(5u64.to_le_bytes().to_vec()));
    }
    let db = Db::open(dir.path().join("ttl"), ttl_db).unwrap();
    // Reopened as it was created: without a TTL.
    assert!(matches!(db.keyspace("c"), Err(Error::InvalidArgument(_))));
    let c = db.keyspace_with("c", counters()).unwrap();
    assert_eq!(c.get("n").unwrap(), Some(5u64.to_le_bytes().to_vec()));

    let merge_db = Options {
        merge_operator: Some(Arc::new(U64Add)),
        ..small()
    };
    let db = Db::open(dir.path().join("merge"), merge_db).unwrap();
    let sessions = KeyspaceOptions::default()
        .no_merge_operator()
        .no_compaction_filter()
        .ttl(Duration::from_secs(60));
    let s = db.keyspace_with("sessions", sessions).unwrap();
    s.put("tok", "alice").unwrap();
    assert_eq!(s.get("tok").unwrap().as_deref(), Some(&b"alice"[..]));
}
