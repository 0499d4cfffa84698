//! Background errors and the writers' side of failures: a failed memtable
//! switch is fatal to writes, a full disk can be resumed (by hand or
//! automatically), EIO cannot, a panicking write poisons the database instead
//! of hanging its queue, I/O errors name their file, and `close` is honest
//! about snapshots and iterators that outlive it.

mod support;

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sievedb::io::{FileLock, FileSystem, RandomAccessFile, StdFs, WritableFile};
use sievedb::{Db, Error, Options};
use support::faulty_fs::{Fault, FaultyFs, Op};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Small memtables (frequent switches and flushes); automatic resume off
/// unless a test turns it on.
fn options() -> Options {
    Options::builder()
        .write_buffer_size(4 << 10)
        .target_file_size(8 << 10)
        .level1_size(32 << 10)
        .max_bg_error_resume_count(0)
        .build()
}

fn fault(op: Op, errno: i32, sticky: bool) -> Fault {
    Fault {
        op,
        nth: 0,
        errno,
        tear: op == Op::Write,
        sticky,
    }
}

fn key(i: usize) -> Vec<u8> {
    format!("key{:05}", i % 400).into_bytes()
}

fn value(i: usize) -> Vec<u8> {
    format!("value-{i}-{}", "x".repeat(40)).into_bytes()
}

/// Writes `key(i)` for `i` in `range` until one fails; returns that error.
fn write_until_error(db: &Db, model: &mut Model, range: std::ops::Range<usize>) -> Error {
    for i in range {
        match db.put(key(i), value(i)) {
            Ok(()) => {
                model.insert(key(i), value(i));
            }
            Err(e) => return e,
        }
    }
    panic!("no write failed");
}

fn contents(db: &Db) -> Model {
    db.iter().unwrap().map(|r| r.unwrap()).collect()
}

fn assert_read_only(db: &Db) {
    match db.put(b"after", b"error") {
        Err(Error::ReadOnly(_)) => {}
        r => panic!("a write after a background error: expected ReadOnly, got {r:?}"),
    }
}

fn files_with_suffix(dir: &Path, suffix: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(suffix)
        })
        .count()
}

/// Reopens `dir` on the real file system and checks it holds exactly `model`.
fn assert_reopens_with(dir: &Path, model: &Model) {
    let db = Db::open(dir, options()).unwrap();
    assert_eq!(&contents(&db), model, "content after reopen");
    db.close().unwrap();
}

#[test]
fn a_failed_memtable_switch_stops_writes_and_leaves_no_orphan_wal() {
    for errno in [libc::EIO, libc::ENOSPC] {
        let dir = tempfile::tempdir().unwrap();
        let fs = FaultyFs::new();
        let db = Db::open_with_fs(dir.path(), options(), Arc::new(fs.clone())).unwrap();
        let mut model = Model::new();
        // The next WAL creation (the first memtable switch) fails.
        fs.arm_for(fault(Op::Create, errno, false), ".log");
        let e = write_until_error(&db, &mut model, 0..10_000);
        assert!(matches!(e, Error::Io(_)), "{e:?}");
        assert!(e.to_string().contains(".log"), "names the WAL: {e}");
        assert_eq!(fs.injected(), 1);
        // No retry behind the user's back: writes are refused, no other WAL
        // was created and the failed one was not left behind.
        assert_read_only(&db);
        assert_read_only(&db);
        assert_eq!(fs.injected(), 1, "a later write retried the switch");
        assert_eq!(files_with_suffix(dir.path(), ".log"), 1);
        assert!(db.stats().background_error.is_some());
        // Reads go on.
        assert_eq!(contents(&db), model);
        fs.disarm();
        if errno == libc::ENOSPC {
            // A full disk is recoverable without closing.
            db.resume().unwrap();
            for i in 20_000..20_300 {
                db.put(key(i), value(i)).unwrap();
                model.insert(key(i), value(i));
            }
            assert_eq!(db.stats().background_error_resumes, 1);
            db.close().unwrap();
        } else {
            assert!(matches!(db.resume(), Err(Error::Io(_))), "EIO is fatal");
            assert_read_only(&db);
            assert!(db.close().is_err(), "close reports the background error");
        }
        assert_reopens_with(dir.path(), &model);
    }
}

#[test]
fn a_full_disk_during_wal_writes_is_resumed_and_eio_is_not() {
    for errno in [libc::ENOSPC, libc::EIO] {
        let dir = tempfile::tempdir().unwrap();
        let fs = FaultyFs::new();
        let db = Db::open_with_fs(dir.path(), options(), Arc::new(fs.clone())).unwrap();
        let mut model = Model::new();
        for i in 0..150 {
            db.put(key(i), value(i)).unwrap();
            model.insert(key(i), value(i));
        }
        // Every write from now on fails (the disk stays full); the first one
        // leaves half a record in the WAL.
        fs.arm(fault(Op::Write, errno, true));
        let e = write_until_error(&db, &mut model, 150..10_000);
        assert!(e.to_string().contains(".log"), "names the WAL: {e}");
        assert_read_only(&db);
        // Still full (or broken): resume fails and writes stay refused.
        assert!(db.resume().is_err());
        assert_read_only(&db);
        fs.disarm();
        if errno == libc::EIO {
            assert!(db.resume().is_err(), "EIO stays fatal until reopen");
            assert_read_only(&db);
            drop(db);
            assert_reopens_with(dir.path(), &model);
            continue;
        }
        db.resume().unwrap();
        // The damaged WAL is no longer needed: writes go on, and a reopen sees
        // every acknowledged write and none of the failed one.
        for i in 20_000..20_500 {
            db.put(key(i), value(i)).unwrap();
            model.insert(key(i), value(i));
        }
        assert_eq!(contents(&db), model);
        db.close().unwrap();
        assert_reopens_with(dir.path(), &model);
    }
}

/// A compaction meets a full disk and is held between its failed write and
/// its report while the WAL fills up too, space comes back and `resume`
/// succeeds; only then does the compaction report its full disk. That
/// report is older than the resume and must not refuse the writes the
/// resume accepted (it did, now and then, under CI's load: a put right
/// after a successful resume failed with the `.sst`'s ENOSPC). The
/// compaction is retried and the tree settles.
#[test]
fn a_full_disk_a_compaction_met_before_a_resume_does_not_stop_writes_after_it() {
    use std::sync::mpsc;
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultyFs::new();
    let db = Db::open_with_fs(dir.path(), options(), Arc::new(fs.clone())).unwrap();
    let mut model = Model::new();
    let (held_tx, held) = mpsc::channel();
    let (release, go) = mpsc::channel::<()>();
    let (held_tx, go) = (
        parking_lot::Mutex::new(held_tx),
        parking_lot::Mutex::new(go),
    );
    let wal_full = Arc::new(AtomicBool::new(false));
    let held_once = AtomicBool::new(false);
    let full = wal_full.clone();
    fs.arm_if(fault(Op::Write, libc::ENOSPC, true), move |path| {
        if std::thread::current().name() == Some("sievedb-compact") {
            if !held_once.swap(true, Ordering::SeqCst) {
                held_tx.lock().send(()).unwrap();
                go.lock().recv().unwrap();
            }
            return true;
        }
        path.to_string_lossy().ends_with(".log") && full.load(Ordering::SeqCst)
    });
    // Writes go on until a compaction starts and is held at its full disk.
    let mut i = 0;
    while held.try_recv().is_err() {
        db.put(key(i), value(i)).unwrap();
        model.insert(key(i), value(i));
        i += 1;
        assert!(i < 100_000, "no compaction started");
    }
    // The WAL meets the full disk: writes are refused.
    wal_full.store(true, Ordering::SeqCst);
    write_until_error(&db, &mut model, i..i + 10_000);
    assert_read_only(&db);
    // Space comes back; the resume succeeds while the compaction is held.
    fs.disarm();
    db.resume().unwrap();
    // Now the compaction reports the full disk it met before the resume.
    release.send(()).unwrap();
    for i in 20_000..20_500 {
        db.put(key(i), value(i)).unwrap();
        model.insert(key(i), value(i));
    }
    db.wait_for_compactions().unwrap();
    assert!(db.stats().background_error.is_none());
    assert_eq!(contents(&db), model);
    db.close().unwrap();
    assert_reopens_with(dir.path(), &model);
}

#[test]
fn a_full_disk_in_a_flush_is_resumed_automatically_when_space_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultyFs::new();
    let opts = Options {
        max_bg_error_resume_count: u32::MAX,
        bg_error_resume_retry_interval: Duration::from_millis(20),
        ..options()
    };
    let db = Db::open_with_fs(dir.path(), opts, Arc::new(fs.clone())).unwrap();
    let mut model = Model::new();
    // Table writes fail: the first flush sets the background error.
    fs.arm_for(fault(Op::Write, libc::ENOSPC, true), ".sst");
    let e = write_until_error(&db, &mut model, 0..100_000);
    assert!(matches!(e, Error::ReadOnly(_)), "{e:?}");
    assert!(e.to_string().contains(".sst"), "names the table: {e}");
    // Retries keep failing while the disk is full, without a partial table
    // being left behind or a write acknowledged.
    std::thread::sleep(Duration::from_millis(100));
    assert!(db.stats().background_error.is_some());
    assert_read_only(&db);
    fs.disarm();
    let deadline = Instant::now() + Duration::from_secs(20);
    while db.stats().background_error.is_some() {
        assert!(Instant::now() < deadline, "no automatic resume");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(db.stats().background_error_resumes, 1);
    for i in 200_000..200_300 {
        db.put(key(i), value(i)).unwrap();
        model.insert(key(i), value(i));
    }
    db.flush().unwrap();
    assert_eq!(contents(&db), model);
    db.close().unwrap();
    assert_reopens_with(dir.path(), &model);
}

/// A file system whose WAL appends can be made to stall, then panic: what a
/// bug in a custom [`FileSystem`] (or in the engine) looks like to writers.
#[derive(Clone, Default)]
struct PanickyFs {
    /// 0 off; 1: the next WAL append sleeps (so that writers queue behind
    /// it), then arms 2; 2: the next WAL append panics, then disarms.
    state: Arc<AtomicU8>,
    /// Creating a table file panics (in a flush or a compaction).
    tables: Arc<AtomicBool>,
}

struct PanickyWal {
    file: Box<dyn WritableFile>,
    state: Arc<AtomicU8>,
}

impl WritableFile for PanickyWal {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        if self
            .state
            .compare_exchange(1, 3, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            std::thread::sleep(Duration::from_millis(200));
            self.state.store(2, Ordering::SeqCst);
        } else if self
            .state
            .compare_exchange(2, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            panic!("injected panic in a WAL append");
        }
        self.file.append(data)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync()
    }
}

impl FileSystem for PanickyFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        StdFs.create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        if path.extension().is_some_and(|x| x == "sst") && self.tables.load(Ordering::SeqCst) {
            panic!("injected panic creating a table");
        }
        let file = StdFs.create(path)?;
        if path.extension().is_some_and(|x| x == "log") {
            return Ok(Box::new(PanickyWal {
                file,
                state: self.state.clone(),
            }));
        }
        Ok(file)
    }
    fn open_random(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn RandomAccessFile>> {
        StdFs.open_random(path, direct)
    }
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        StdFs.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        StdFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        StdFs.remove_file(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        StdFs.list_dir(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        StdFs.sync_dir(path)
    }
    fn exists(&self, path: &Path) -> bool {
        StdFs.exists(path)
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        StdFs.lock(path)
    }
}

#[test]
fn a_panic_in_the_group_commit_leader_fails_the_queue_instead_of_hanging_it() {
    let dir = tempfile::tempdir().unwrap();
    let fs = PanickyFs::default();
    let db =
        Arc::new(Db::open_with_fs(dir.path(), Options::default(), Arc::new(fs.clone())).unwrap());
    db.put(b"before", b"panic").unwrap();
    // One writer stalls in its WAL append while the others queue up; the
    // next group's leader then panics with its followers waiting on it.
    fs.state.store(1, Ordering::SeqCst);
    let (tx, rx) = std::sync::mpsc::channel();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (db, tx) = (db.clone(), tx.clone());
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                let mut outcome = "ok";
                for i in 0..50 {
                    let k = format!("t{t}-{i}").into_bytes();
                    // Each thread reports before it may panic, so a hang is
                    // told apart from a panic.
                    match db.put(&k, b"v") {
                        Ok(()) => acked.push(k),
                        Err(Error::Poisoned(_)) => {
                            outcome = "poisoned";
                            break;
                        }
                        Err(e) => panic!("unexpected error {e}"),
                    }
                }
                tx.send(()).unwrap();
                (acked, outcome)
            })
        })
        .collect();
    drop(tx);
    // Every thread reports when done (the panicking one cannot: its sender
    // is dropped instead). A writer still blocked after 30 s is hung behind
    // the panicked leader.
    for _ in 0..threads.len() - 1 {
        rx.recv_timeout(Duration::from_secs(30))
            .expect("a writer hung after the group-commit leader panicked");
    }
    assert_ne!(
        rx.recv_timeout(Duration::from_secs(30)),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout),
        "a writer hung after the group-commit leader panicked"
    );
    let (mut panicked, mut poisoned) = (0, 0);
    let mut acked = Vec::new();
    for t in threads {
        match t.join() {
            Ok((keys, outcome)) => {
                acked.extend(keys);
                poisoned += usize::from(outcome == "poisoned");
            }
            Err(_) => panicked += 1,
        }
    }
    assert_eq!(panicked, 1, "exactly the leader's thread panics");
    assert!(poisoned >= 1, "the other writers learn of it");
    assert!(matches!(db.put(b"x", b"y"), Err(Error::Poisoned(_))));
    assert!(db.resume().is_err(), "a panic is not resumable");
    drop(db);
    // Every acknowledged write survives the reopen.
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get(b"before").unwrap(), Some(b"panic".to_vec()));
    for k in &acked {
        assert_eq!(db.get(k).unwrap(), Some(b"v".to_vec()), "{k:?}");
    }
}

#[test]
fn close_with_a_live_snapshot_or_iterator_is_busy_and_keeps_the_lock_until_they_drop() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put(b"k", b"v1").unwrap();
    let snap = db.snapshot();
    db.put(b"k", b"v2").unwrap();
    let iter = db.iter().unwrap();
    match db.close() {
        Err(Error::Busy(m)) => assert!(m.starts_with("1 snapshot, 1 iterator of"), "{m}"),
        r => panic!("close with a live snapshot and iterator: {r:?}"),
    }
    // They go on reading what they saw.
    assert_eq!(snap.get(b"k").unwrap(), Some(b"v1".to_vec()));
    let all: Vec<_> = iter.map(|r| r.unwrap()).collect();
    assert_eq!(all, vec![(b"k".to_vec(), b"v2".to_vec())]);
    // The iterator is gone; the snapshot still holds the directory, and the
    // error does not blame another process.
    match Db::open(dir.path(), Options::default()) {
        Err(e @ Error::Locked(_)) => assert!(e.to_string().contains("this process"), "{e}"),
        r => panic!("reopen while a snapshot lives: {:?}", r.err()),
    }
    drop(snap);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v2".to_vec()));
    db.close().unwrap();
}

#[test]
fn a_panic_in_a_flush_or_compaction_stops_writes_instead_of_hanging_them() {
    for compaction in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let fs = PanickyFs::default();
        let opts = Options::builder()
            .write_buffer_size(4 << 10)
            .level0_compaction_trigger(3)
            .level0_slowdown_trigger(3)
            .level0_stop_trigger(3)
            .build();
        let db = Arc::new(Db::open_with_fs(dir.path(), opts, Arc::new(fs.clone())).unwrap());
        let mut model = Model::new();
        for round in 0..2 {
            for i in 0..20 {
                db.put(key(i), value(round)).unwrap();
                model.insert(key(i), value(round));
            }
            db.flush().unwrap();
        }
        fs.tables.store(true, Ordering::SeqCst);
        if compaction {
            let e = db.compact_range::<&[u8], _>(..).unwrap_err();
            assert!(e.to_string().contains("compaction panicked"), "{e}");
            assert!(matches!(db.put(b"k", b"v"), Err(Error::Poisoned(_))));
        }
        // Writers stall on the full level 0 or the pending flush: they must
        // get the error, not wait for a thread that died.
        let (tx, rx) = std::sync::mpsc::channel();
        let w = db.clone();
        let writer = std::thread::spawn(move || {
            let r = (0..100_000).try_for_each(|i| w.put(format!("later{i}"), value(i)));
            tx.send(r).unwrap();
        });
        let r = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("a writer hung after a background thread panicked");
        assert!(r.is_err());
        // Its handle on the database must be gone before the reopen below.
        writer.join().unwrap();
        let e = db.flush().unwrap_err();
        assert!(matches!(e, Error::Poisoned(_)), "{e:?}");
        assert!(db.resume().is_err(), "a panic is not resumable");
        fs.tables.store(false, Ordering::SeqCst);
        drop(db);
        // Everything written before the tables panicked is still there.
        let db = Db::open(dir.path(), options()).unwrap();
        for (k, v) in &model {
            assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
        }
    }
}
