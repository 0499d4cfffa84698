//! Checkpoints: consistent under concurrent writes and compactions, opened
//! independently of their source, refused over a non-empty target, and never
//! left half-made.

mod common;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use common::{collect_all, small_options};
use sievedb::io::{FileLock, FileSystem, RandomAccessFile, StdFs, WritableFile};
use sievedb::{CompactionStyle, Db, Error, Options};

fn opts() -> Options {
    small_options(CompactionStyle::Leveling)
}

fn key(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn content(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    collect_all(db.iter(), "content")
}

#[test]
fn checkpoint_opens_independently_and_writes_do_not_leak() {
    let dir = tempfile::tempdir().unwrap();
    let (src, cp) = (dir.path().join("src"), dir.path().join("cp"));
    let db = Db::open(&src, opts()).unwrap();
    for i in 0..3000 {
        db.put(key(i), format!("v{i}")).unwrap();
    }
    db.delete(key(7)).unwrap();
    let before = content(&db);
    db.checkpoint(&cp).unwrap();
    assert!(!dir.path().join("cp.checkpoint-tmp").exists());

    db.put(b"only-in-source", b"1").unwrap();
    db.delete(key(8)).unwrap();
    db.compact_range::<&[u8], _>(..).unwrap();
    let c = Db::open(&cp, opts()).unwrap();
    assert_eq!(content(&c), before);
    c.put(b"only-in-checkpoint", b"2").unwrap();
    c.compact_range::<&[u8], _>(..).unwrap();

    assert_eq!(db.get(b"only-in-checkpoint").unwrap(), None);
    assert_eq!(c.get(b"only-in-source").unwrap(), None);
    assert_eq!(c.get(key(8)).unwrap(), Some(b"v8".to_vec()));
    assert_eq!(db.get(key(8)).unwrap(), None);
    drop(c);
    drop(db);
    // Both still open after the other changed and closed.
    let c = Db::open(&cp, opts()).unwrap();
    assert_eq!(c.get(b"only-in-checkpoint").unwrap(), Some(b"2".to_vec()));
    assert_eq!(c.get(key(7)).unwrap(), None);
    let db = Db::open(&src, opts()).unwrap();
    assert_eq!(db.get(b"only-in-source").unwrap(), Some(b"1".to_vec()));
}

/// One writer puts `key(i)` for i = 0, 1, 2, ... and sets `last` to i after
/// each; small memtables keep flushes and compactions running. Every
/// checkpoint taken meanwhile must hold a prefix: keys 0..=n and `last` = n,
/// with n at least the last write acknowledged before the call.
#[test]
fn checkpoint_is_consistent_under_writes_and_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path().join("src"), opts()).unwrap());
    let done = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicU64::new(0));
    let writer = {
        let (db, done, acked) = (db.clone(), done.clone(), acked.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !done.load(Ordering::Relaxed) {
                let mut b = sievedb::WriteBatch::new();
                b.put(key(i), vec![b'x'; 100]);
                db.write(b).unwrap();
                db.put(b"last", i.to_string()).unwrap();
                acked.store(i + 1, Ordering::Release);
                i += 1;
            }
        })
    };
    while acked.load(Ordering::Acquire) < 2000 {
        std::thread::yield_now();
    }
    let mut checkpoints = Vec::new();
    for n in 0..4 {
        let floor = acked.load(Ordering::Acquire);
        let cp = dir.path().join(format!("cp{n}"));
        db.checkpoint(&cp).unwrap();
        checkpoints.push((cp, floor));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    done.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    assert!(db.stats().compactions > 0, "compactions should have run");
    for (cp, floor) in checkpoints {
        let c = Db::open(&cp, opts()).unwrap();
        let last: u64 = String::from_utf8(c.get(b"last").unwrap().unwrap())
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            last + 1 >= floor,
            "{}: last {last} < floor {floor}",
            cp.display()
        );
        let keys: Vec<Vec<u8>> = collect_all(
            c.range(key(0).as_slice()..key(u64::MAX / 2).as_slice()),
            "keys",
        )
        .into_iter()
        .map(|(k, _)| k)
        .collect();
        // `key(last + 1)` may be there (written before `last` was updated),
        // nothing beyond it, and no gap.
        assert!(
            keys.len() as u64 == last + 1 || keys.len() as u64 == last + 2,
            "{}",
            cp.display()
        );
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(k, &key(i as u64), "{}: gap at {i}", cp.display());
        }
    }
}

#[test]
fn checkpoint_refuses_a_non_empty_target_and_accepts_an_empty_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("src"), opts()).unwrap();
    db.put(b"a", b"1").unwrap();
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("x"), b"keep me").unwrap();
    match db.checkpoint(&full) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("full"), "{m}"),
        r => panic!("expected InvalidArgument, got {r:?}"),
    }
    assert_eq!(std::fs::read(full.join("x")).unwrap(), b"keep me");
    let file = dir.path().join("file");
    std::fs::write(&file, b"").unwrap();
    assert!(matches!(
        db.checkpoint(&file),
        Err(Error::InvalidArgument(_))
    ));

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    db.checkpoint(&empty).unwrap();
    let c = Db::open(&empty, opts()).unwrap();
    assert_eq!(c.get(b"a").unwrap(), Some(b"1".to_vec()));
}

#[test]
fn read_only_handle_checkpoints_with_its_wals() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    {
        let db = Db::open(&src, opts()).unwrap();
        for i in 0..2000 {
            db.put(key(i), b"v").unwrap();
        }
        // Unflushed writes stay in the WAL at close.
        db.put(b"in-wal", b"yes").unwrap();
    }
    let ro = Db::open_read_only(&src, opts()).unwrap();
    let cp = dir.path().join("cp");
    ro.checkpoint(&cp).unwrap();
    let c = Db::open(&cp, opts()).unwrap();
    assert_eq!(content(&c), content(&ro));
    assert_eq!(c.get(b"in-wal").unwrap(), Some(b"yes".to_vec()));
    // The checkpoint's own WAL and files get numbers of their own.
    c.put(b"after", b"1").unwrap();
    c.flush().unwrap();
    c.put(b"after-2", b"2").unwrap();
    drop(c);
    let c = Db::open(&cp, opts()).unwrap();
    assert_eq!(c.get(b"in-wal").unwrap(), Some(b"yes".to_vec()));
    assert_eq!(c.get(b"after").unwrap(), Some(b"1".to_vec()));
    assert_eq!(c.get(b"after-2").unwrap(), Some(b"2".to_vec()));
    assert_eq!(ro.get(b"after").unwrap(), None);
}

/// [`StdFs`] that refuses to create a MANIFEST inside a checkpoint's
/// temporary directory, and can refuse hard links.
struct FailingFs {
    fail_manifest: AtomicBool,
    refuse_links: AtomicBool,
    links: AtomicU64,
}

impl FileSystem for FailingFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        StdFs.create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let p = path.to_string_lossy();
        if self.fail_manifest.load(Ordering::Relaxed)
            && p.contains(".checkpoint-tmp")
            && p.contains("MANIFEST")
        {
            return Err(io::Error::from_raw_os_error(5)); // EIO
        }
        StdFs.create(path)
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
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        if self.refuse_links.load(Ordering::Relaxed) {
            // What linking across file systems returns.
            return Err(io::Error::from_raw_os_error(18)); // EXDEV
        }
        self.links.fetch_add(1, Ordering::Relaxed);
        StdFs.hard_link(from, to)
    }
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        StdFs.remove_dir(path)
    }
}

fn failing_fs() -> Arc<FailingFs> {
    Arc::new(FailingFs {
        fail_manifest: AtomicBool::new(false),
        refuse_links: AtomicBool::new(false),
        links: AtomicU64::new(0),
    })
}

#[cfg(unix)]
fn inode(p: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).unwrap().ino()
}

fn ssts(dir: &Path) -> Vec<PathBuf> {
    common::sst_files(dir)
}

#[test]
fn failed_checkpoint_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let fs = failing_fs();
    let db = Db::open_with_fs(dir.path().join("src"), opts(), fs.clone()).unwrap();
    for i in 0..2000 {
        db.put(key(i), b"v").unwrap();
    }
    fs.fail_manifest.store(true, Ordering::Relaxed);
    let cp = dir.path().join("cp");
    assert!(matches!(db.checkpoint(&cp), Err(Error::Io(_))));
    assert!(!cp.exists());
    assert!(!dir.path().join("cp.checkpoint-tmp").exists());
    fs.fail_manifest.store(false, Ordering::Relaxed);
    db.checkpoint(&cp).unwrap();
    drop(db);
    let c = Db::open(&cp, opts()).unwrap();
    assert_eq!(c.iter().unwrap().count(), 2000);
}

#[test]
fn ssts_are_linked_or_copied_when_links_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fs = failing_fs();
    let src = dir.path().join("src");
    let db = Db::open_with_fs(&src, opts(), fs.clone()).unwrap();
    for i in 0..2000 {
        db.put(key(i), b"v").unwrap();
    }
    let linked = dir.path().join("linked");
    db.checkpoint(&linked).unwrap();
    assert!(fs.links.load(Ordering::Relaxed) > 0);
    #[cfg(unix)]
    for p in ssts(&linked) {
        let original = src.join(p.file_name().unwrap());
        if original.exists() {
            assert_eq!(inode(&p), inode(&original), "{} is not a link", p.display());
        }
    }
    fs.refuse_links.store(true, Ordering::Relaxed);
    let copied = dir.path().join("copied");
    db.checkpoint(&copied).unwrap();
    #[cfg(unix)]
    for p in ssts(&copied) {
        let original = src.join(p.file_name().unwrap());
        if original.exists() {
            assert_ne!(inode(&p), inode(&original));
        }
    }
    let expect = content(&db);
    drop(db);
    for cp in [linked, copied] {
        assert_eq!(content(&Db::open(&cp, opts()).unwrap()), expect);
    }
}
