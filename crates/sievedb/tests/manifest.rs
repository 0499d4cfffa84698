//! A failed MANIFEST append or sync: the live version does not change, the
//! MANIFEST that failed is never appended to again (a fresh one is made
//! current instead), and the next open recovers every acknowledged write.

mod support;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use sievedb::cache::TableCache;
use sievedb::io::{FileLock, FileSystem, RandomAccessFile, WritableFile};
use sievedb::key;
use sievedb::stats::Counters;
use sievedb::version::{NewFile, VersionEdit, VersionSet};
use sievedb::{Db, Options, WriteOptions};
use support::faulty_fs::{Choice, FaultyFs};

/// Wraps [`FaultyFs`] and fails writes to `MANIFEST-*` files only, so a test
/// can hit the MANIFEST without counting every other file operation.
#[derive(Clone)]
struct ManifestFaults {
    inner: FaultyFs,
    knobs: Arc<Knobs>,
}

#[derive(Default)]
struct Knobs {
    /// MANIFEST syncs still to fail (`u64::MAX`: all of them).
    fail_syncs: AtomicU64,
    /// Every MANIFEST append writes half of its data, then fails (ENOSPC).
    tear_appends: AtomicBool,
    /// Faults injected.
    injected: AtomicU64,
}

impl ManifestFaults {
    fn new(inner: FaultyFs) -> Self {
        ManifestFaults {
            inner,
            knobs: Arc::new(Knobs::default()),
        }
    }
    fn fail_syncs(&self, n: u64) {
        self.knobs.fail_syncs.store(n, Ordering::SeqCst);
    }
    fn tear_appends(&self, on: bool) {
        self.knobs.tear_appends.store(on, Ordering::SeqCst);
    }
    fn injected(&self) -> u64 {
        self.knobs.injected.load(Ordering::SeqCst)
    }
}

struct ManifestFile {
    inner: Box<dyn WritableFile>,
    knobs: Arc<Knobs>,
}

impl WritableFile for ManifestFile {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        if self.knobs.tear_appends.load(Ordering::SeqCst) {
            self.knobs.injected.fetch_add(1, Ordering::SeqCst);
            self.inner.append(&data[..data.len() / 2])?;
            return Err(io::Error::from_raw_os_error(libc::ENOSPC));
        }
        self.inner.append(data)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> io::Result<()> {
        let left = self.knobs.fail_syncs.load(Ordering::SeqCst);
        if left > 0 {
            if left != u64::MAX {
                self.knobs.fail_syncs.store(left - 1, Ordering::SeqCst);
            }
            self.knobs.injected.fetch_add(1, Ordering::SeqCst);
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        self.inner.sync()
    }
}

impl FileSystem for ManifestFaults {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.inner.create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let f = self.inner.create(path)?;
        let is_manifest = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("MANIFEST-"));
        Ok(if is_manifest {
            Box::new(ManifestFile {
                inner: f,
                knobs: self.knobs.clone(),
            })
        } else {
            f
        })
    }
    fn open_random(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn RandomAccessFile>> {
        self.inner.open_random(path, direct)
    }
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.inner.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.inner.remove_file(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        self.inner.list_dir(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        self.inner.lock(path)
    }
}

fn version_set(dir: &Path, fs: Arc<dyn FileSystem>) -> VersionSet {
    let opts = Options::default();
    let counters = Arc::new(Counters::new(opts.max_levels));
    let tables = Arc::new(TableCache::new(
        fs.clone(),
        dir.to_path_buf(),
        &opts,
        None,
        counters,
    ));
    let mut vs = VersionSet::new(dir, fs, tables, opts.max_levels);
    // The tests add files numbered 100 and up (metadata only).
    vs.next_file_number = 1000;
    vs
}

/// An edit adding (metadata only) file `number` to level 1.
fn add_file(number: u64) -> VersionEdit {
    let ikey = |k: &[u8]| {
        let mut v = Vec::new();
        key::append_internal_key(&mut v, k, 1, key::Kind::Put as u8);
        v
    };
    VersionEdit {
        added: vec![NewFile {
            level: 1,
            run: 0,
            number,
            size: 100,
            entries: 1,
            smallest: ikey(format!("k{number}").as_bytes()),
            largest: ikey(format!("k{number}").as_bytes()),
            range_dels: 0,
            creation_time: 0,
        }],
        ..VersionEdit::default()
    }
}

fn files_of(vs: &VersionSet) -> Vec<u64> {
    let mut v: Vec<u64> = vs.current().files().map(|(_, f)| f.number).collect();
    v.sort_unstable();
    v
}

fn current_names(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("CURRENT")).unwrap()
}

fn manifests(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("MANIFEST-"))
        .collect();
    v.sort();
    v
}

/// Recovers a fresh `VersionSet` from what is on disk.
fn recovered_files(dir: &Path) -> sievedb::Result<Vec<u64>> {
    let mut vs = version_set(dir, Arc::new(sievedb::io::StdFs));
    vs.recover()?;
    Ok(files_of(&vs))
}

#[test]
fn torn_manifest_append_is_never_appended_to_again() {
    let dir = tempfile::tempdir().unwrap();
    let fs = ManifestFaults::new(FaultyFs::new());
    let mut vs = version_set(dir.path(), Arc::new(fs.clone()));
    vs.log_and_apply(add_file(100)).unwrap();
    let first = vs.manifest_number();
    assert!(!vs.edit_in_doubt());

    // Every MANIFEST append tears: the edit fails, and so does the attempt to
    // start a fresh MANIFEST right away.
    fs.tear_appends(true);
    let Err(e) = vs.log_and_apply(add_file(101)) else {
        panic!("the edit should fail")
    };
    assert!(matches!(e, sievedb::Error::Io(_)), "{e}");
    assert!(
        fs.injected() >= 2,
        "the edit and the rollover attempt both failed"
    );
    assert_eq!(files_of(&vs), vec![100], "a failed edit is not installed");
    assert!(vs.edit_in_doubt());
    assert_eq!(vs.manifest_number(), first);
    assert_eq!(current_names(dir.path()), format!("MANIFEST-{first:06}\n"));
    // A crash now: the torn record is the tail of the live MANIFEST (dropped).
    assert_eq!(recovered_files(dir.path()).unwrap(), vec![100]);

    // The disk recovers: the next edit starts a fresh MANIFEST instead of
    // appending after the torn bytes (which would make them mid-log damage).
    fs.tear_appends(false);
    vs.log_and_apply(add_file(102)).unwrap();
    assert!(!vs.edit_in_doubt());
    let second = vs.manifest_number();
    assert!(second > first);
    assert_eq!(current_names(dir.path()), format!("MANIFEST-{second:06}\n"));
    assert_eq!(
        manifests(dir.path()),
        vec![dir.path().join(format!("MANIFEST-{second:06}"))],
        "the abandoned MANIFEST is removed once the fresh one is current"
    );
    vs.log_and_apply(add_file(103)).unwrap();
    assert_eq!(vs.manifest_number(), second, "later edits append again");
    assert_eq!(files_of(&vs), vec![100, 102, 103]);
    assert_eq!(recovered_files(dir.path()).unwrap(), vec![100, 102, 103]);
}

#[test]
fn failed_manifest_sync_rolls_over_at_once_when_the_disk_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let fs = ManifestFaults::new(FaultyFs::new());
    let mut vs = version_set(dir.path(), Arc::new(fs.clone()));
    vs.log_and_apply(add_file(100)).unwrap();
    let first = vs.manifest_number();
    // One failed sync: the whole record may be on disk, so the MANIFEST holding
    // it is abandoned at once for a fresh snapshot without the edit.
    fs.fail_syncs(1);
    assert!(vs.log_and_apply(add_file(101)).is_err());
    assert_eq!(fs.injected(), 1);
    assert!(!vs.edit_in_doubt(), "the immediate rollover succeeded");
    let second = vs.manifest_number();
    assert!(second > first);
    assert_eq!(current_names(dir.path()), format!("MANIFEST-{second:06}\n"));
    assert!(!dir.path().join(format!("MANIFEST-{first:06}")).exists());
    // The failed edit is gone for good, although its bytes reached the file.
    assert_eq!(recovered_files(dir.path()).unwrap(), vec![100]);
    vs.log_and_apply(add_file(102)).unwrap();
    assert_eq!(recovered_files(dir.path()).unwrap(), vec![100, 102]);
}

fn options() -> Options {
    Options::builder()
        .write_buffer_size(64 << 10)
        .level0_compaction_trigger(64)
        .level0_slowdown_trigger(64)
        .level0_stop_trigger(64)
        .build()
}

/// A flush whose MANIFEST sync fails (once; always; always and then a power
/// loss): the flush fails, and reopening finds every synced write.
#[test]
fn failed_manifest_sync_during_flush_keeps_every_acknowledged_write() {
    for case in ["transient", "sticky", "sticky+power-loss"] {
        let dir = tempfile::tempdir().unwrap();
        let faulty = FaultyFs::new();
        let fs = ManifestFaults::new(faulty.clone());
        let db = Db::open_with_fs(dir.path(), options(), Arc::new(fs.clone())).unwrap();
        let sync = WriteOptions { sync: true };
        for i in 0..300u32 {
            db.put_with(format!("a{i:04}"), format!("old{i}"), &sync)
                .unwrap();
        }
        db.flush().unwrap();
        for i in 0..300u32 {
            if i % 7 == 0 {
                db.delete_with(format!("a{i:04}"), &sync).unwrap();
            } else if i % 2 == 0 {
                db.put_with(format!("a{i:04}"), format!("new{i}"), &sync)
                    .unwrap();
            }
        }
        let before = current_names(dir.path());
        fs.fail_syncs(if case == "transient" { 1 } else { u64::MAX });
        let e = db.flush().unwrap_err();
        assert!(fs.injected() >= 1, "{case}: {e}");
        if case == "transient" {
            assert_ne!(
                current_names(dir.path()),
                before,
                "{case}: a fresh MANIFEST is current after the failed append"
            );
        }
        if case == "sticky+power-loss" {
            faulty.crash();
            drop(db);
            faulty.apply_power_loss(Choice::AllLost);
        } else {
            drop(db);
        }
        fs.fail_syncs(0);
        let db = Db::open(dir.path(), options())
            .unwrap_or_else(|e| panic!("{case}: reopen after a failed MANIFEST sync: {e}"));
        for i in 0..300u32 {
            let want = if i % 7 == 0 {
                None
            } else if i % 2 == 0 {
                Some(format!("new{i}"))
            } else {
                Some(format!("old{i}"))
            };
            let got = db.get(format!("a{i:04}")).unwrap();
            assert_eq!(got, want.map(String::into_bytes), "{case}: key {i}");
        }
        // The reopened database works normally.
        db.put("after", "x").unwrap();
        db.flush().unwrap();
        drop(db);
        let db = Db::open(dir.path(), options()).unwrap();
        assert_eq!(db.get("after").unwrap().as_deref(), Some(&b"x"[..]));
    }
}
