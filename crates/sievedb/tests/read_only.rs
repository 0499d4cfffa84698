//! `Db::open_read_only`: nothing in the directory changes, the WALs' writes
//! are visible, writes and background work are refused with a clear error.

mod common;

use std::fs;
use std::io;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;
use sievedb::io::{FileLock, FileSystem, RandomAccessFile, StdFs, WritableFile};
use sievedb::{CompactionStyle, Db, Error, Options, WriteBatch};

use common::{
    assert_db_equals, collect_all, dir_state, small_options, sst_files, wal_files, Model,
};

/// A file system that behaves as a read-only mount and records every call
/// that would change something (create, create_dir_all, rename, remove_file,
/// sync_dir, lock), failing it with `PermissionDenied`.
#[derive(Clone, Default)]
struct RecordingFs {
    mutations: Arc<Mutex<Vec<String>>>,
}

impl RecordingFs {
    fn refuse(&self, what: &str, path: &Path) -> io::Error {
        self.mutations
            .lock()
            .push(format!("{what} {}", path.display()));
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            "read-only test file system",
        )
    }
    fn mutations(&self) -> Vec<String> {
        self.mutations.lock().clone()
    }
}

impl FileSystem for RecordingFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        Err(self.refuse("create_dir_all", path))
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Err(self.refuse("create", path))
    }
    fn open_random(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn RandomAccessFile>> {
        StdFs.open_random(path, direct)
    }
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        StdFs.read_all(path)
    }
    fn rename(&self, from: &Path, _to: &Path) -> io::Result<()> {
        Err(self.refuse("rename", from))
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        Err(self.refuse("remove_file", path))
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        StdFs.list_dir(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        Err(self.refuse("sync_dir", path))
    }
    fn exists(&self, path: &Path) -> bool {
        StdFs.exists(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        StdFs.is_dir(path)
    }
    fn file_size(&self, path: &Path) -> io::Result<u64> {
        StdFs.file_size(path)
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        Err(self.refuse("lock", path))
    }
}

fn key(i: usize) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// A database with data in SSTs (several levels) and more in its WAL
/// (overwrites and deletes of flushed keys, unflushed). Returns the model.
fn make_db(dir: &Path) -> Model {
    let mut model = Model::new();
    let db = Db::open(dir, small_options(CompactionStyle::Leveling)).unwrap();
    for i in 0..2000 {
        let v = format!("sst-{i}").into_bytes();
        db.put(key(i), &v).unwrap();
        model.insert(key(i), v);
    }
    db.wait_for_compactions().unwrap();
    db.close().unwrap();
    // Without background flushes getting to them: a large write buffer.
    let opts = Options::builder().write_buffer_size(64 << 20).build();
    let db = Db::open(dir, opts).unwrap();
    for round in 0..3 {
        for i in (0..2000).step_by(3) {
            let v = format!("wal-{round}-{i}").into_bytes();
            db.put(key(i), &v).unwrap();
            model.insert(key(i), v);
        }
    }
    let mut b = WriteBatch::new();
    for i in (1..2000).step_by(7) {
        b.delete(key(i));
        model.remove(&key(i));
    }
    db.write(b).unwrap();
    drop(db);
    assert!(!sst_files(dir).is_empty());
    assert!(
        wal_files(dir)
            .iter()
            .any(|w| fs::metadata(w).unwrap().len() > 0),
        "the fixture must leave writes in a WAL"
    );
    model
}

fn assert_unsupported(r: sievedb::Result<()>, what: &str) {
    match r {
        Err(Error::Unsupported(m)) => assert!(m.contains("read-only"), "{what}: {m}"),
        other => panic!("{what} on a read-only handle: expected Unsupported, got {other:?}"),
    }
}

#[test]
fn read_only_open_changes_nothing_and_sees_the_wal() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let model = make_db(&dir);
    let before = dir_state(&dir);
    let fs = RecordingFs::default();
    // A small write buffer: the replayed WAL fills several memtables, which
    // must all stay readable (none is flushed).
    let opts = Options::builder().write_buffer_size(4096).build();
    let db = Db::open_read_only_with_fs(&dir, opts, Arc::new(fs.clone()))
        .unwrap_or_else(|e| panic!("read-only open failed: {e}; calls {:?}", fs.mutations()));
    assert!(db.is_read_only());
    assert_db_equals(&db, &model, "read-only");
    let s = db.stats();
    assert!(s.memtable_bytes > 0, "the WAL's writes are in memtables");
    assert!(s.last_sequence >= 2000 + 3 * 667);
    assert_eq!(db.recovery_report().dropped, None);
    assert!(db.recovery_report().records_applied > 0);
    let snap = db.snapshot();
    assert_eq!(snap.get(key(0)).unwrap(), model.get(&key(0)).cloned());
    let range = collect_all(db.range(key(10)..key(20)), "range");
    assert_eq!(
        range,
        model
            .range(key(10)..key(20))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    );
    assert_unsupported(db.put(b"k", b"v"), "put");
    assert_unsupported(db.delete(key(0)), "delete");
    assert_unsupported(db.write(WriteBatch::new()), "write");
    assert_unsupported(db.flush(), "flush");
    assert_unsupported(db.compact_range::<&[u8], _>(..), "compact_range");
    assert_unsupported(db.wait_for_compactions(), "wait_for_compactions");
    assert_eq!(db.get(b"k").unwrap(), None);
    drop(snap);
    db.close().unwrap();
    assert_eq!(fs.mutations(), Vec::<String>::new());
    assert_eq!(dir_state(&dir), before, "the directory changed");

    // Through the real file system too, and the database still opens
    // read-write afterwards with everything.
    let db = Db::open_read_only(&dir, Options::default()).unwrap();
    assert_db_equals(&db, &model, "read-only (StdFs)");
    drop(db);
    assert_eq!(dir_state(&dir), before, "the directory changed");
    let db = Db::open(&dir, Options::default()).unwrap();
    assert_db_equals(&db, &model, "read-write after read-only");
}

#[test]
fn read_only_open_never_creates_a_database() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing");
    let e = Db::open_read_only(&missing, Options::default())
        .err()
        .expect("missing database");
    assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    assert!(
        e.to_string().contains(&missing.display().to_string()),
        "{e}"
    );
    assert!(!missing.exists(), "a read-only open created the directory");

    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let e = Db::open_read_only(&empty, Options::default())
        .err()
        .expect("empty directory");
    assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    assert!(e.to_string().contains("no CURRENT"), "{e}");
    assert_eq!(fs::read_dir(&empty).unwrap().count(), 0);

    let file = tmp.path().join("file");
    fs::write(&file, b"x").unwrap();
    let e = Db::open_read_only(&file, Options::default())
        .err()
        .expect("a file");
    assert!(e.to_string().contains("not a directory"), "{e}");

    let opts = Options::builder().error_if_exists(true).build();
    assert!(matches!(
        Db::open_read_only(&empty, opts),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn read_only_open_does_not_block_or_get_blocked_by_a_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let writer = Db::open(&dir, Options::default()).unwrap();
    writer.put(b"a", b"1").unwrap();
    let reader = Db::open_read_only(&dir, Options::default()).expect("not blocked by the LOCK");
    assert_eq!(reader.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    writer.put(b"b", b"2").unwrap();
    assert_eq!(
        reader.get(b"b").unwrap(),
        None,
        "a read-only handle is a point-in-time view"
    );
    assert!(matches!(
        Db::open(&dir, Options::default()),
        Err(Error::Locked(_))
    ));
    drop(writer);
    // The reader holds no lock: a writer can open now.
    let writer = Db::open(&dir, Options::default()).expect("no lock held by the reader");
    assert_eq!(writer.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
    drop(reader);
}

/// On a directory without write permission (a read-only mount), the
/// read-only open works. Root ignores permissions, so there this test only
/// checks what the recording file system already does.
#[test]
fn read_only_open_on_a_directory_without_write_permission() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let model = make_db(&dir);
    let before = dir_state(&dir);
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    let root = fs::write(dir.join("probe"), b"").is_ok();
    let r = Db::open_read_only(&dir, Options::default());
    if root {
        let _ = fs::remove_file(dir.join("probe"));
    } else {
        // A read-write open fails here; the read-only one must not.
        assert!(Db::open(&dir, Options::default()).is_err());
    }
    let db = r.expect("read-only open of an unwritable directory");
    assert_db_equals(&db, &model, "unwritable dir");
    drop(db);
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(dir_state(&dir), before);
}
