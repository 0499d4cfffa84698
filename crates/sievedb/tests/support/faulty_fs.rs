//! A [`FileSystem`] for tests that injects faults (LevelDB's fault-injection Env
//! idea): it can fail a chosen operation with EIO or ENOSPC, tear a write in
//! half, and simulate a power loss that drops what no sync made durable.
//!
//! Every operation is done on the real file system and recorded in a
//! [`Journal`] (`durability.rs`), whose model says what a power loss may
//! leave: unsynced bytes and size changes lost, kept or torn, unsynced
//! directory entries gone. [`FaultyFs::apply_power_loss`] rewrites the real
//! directory to one such state; [`FaultyFs::journal`] hands the journal to
//! tests that enumerate every crash state.
//!
//! WALs are written as the real file system writes them: preallocated, in
//! windows, through sievedb's own [`PreallocatedLog`] (so every reservation,
//! write and cut of the real logic is recorded), or with `write(2)`
//! ([`WalKind`]).

#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use sievedb::io::{
    FileLock, FileSystem, LogSpace, PreallocatedLog, RandomAccessFile, StdFs, WritableFile,
};

#[allow(unused_imports)]
pub use super::durability::{Choice, CrashState, Ino, Journal, Op as FsOp, Replay};

/// Which operation to fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `append`/`flush` data reaching the file.
    Write,
    /// `sync` of a file.
    Sync,
    /// `rename`.
    Rename,
    /// `create`.
    Create,
}

/// How an injected fault fails.
#[derive(Clone, Copy, Debug)]
pub struct Fault {
    /// The operation kind.
    pub op: Op,
    /// Fail the n-th (0-based) operation of that kind from now on.
    pub nth: u64,
    /// Error number returned (libc::EIO or libc::ENOSPC).
    pub errno: i32,
    /// For writes: write the first half of the data before failing.
    pub tear: bool,
    /// Keep failing every later operation of that kind too.
    pub sticky: bool,
}

/// How write-ahead logs are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalKind {
    /// Preallocated and written into reserved space, as `StdFs` does (the
    /// default).
    Mapped,
    /// Appended with `write(2)`, as on a file system without `fallocate`.
    Write,
}

/// Whether a fault about to be injected on a path is (see
/// [`FaultyFs::arm_if`]).
type Gate = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// The journal, and what it needs to name files by inode.
#[derive(Default)]
struct Recorder {
    journal: Journal,
    /// Live file paths (as recorded) and their inodes.
    files: HashMap<PathBuf, Ino>,
    /// Directories the journal knows.
    dirs: HashSet<PathBuf>,
    next_ino: Ino,
}

impl Recorder {
    fn push(&mut self, op: FsOp) {
        self.journal.ops.push(op);
    }

    /// Makes the journal know directory `dir`, adopting it as durable if it
    /// exists and was never recorded.
    fn know_dir(&mut self, dir: &Path) {
        if !self.dirs.contains(dir) && dir.is_dir() {
            self.dirs.insert(dir.to_path_buf());
            self.push(FsOp::AdoptDir {
                path: dir.to_path_buf(),
            });
        }
    }

    /// The inode of file `path`, adopting it (durable, as found on disk) if
    /// it exists and was never recorded.
    fn inode(&mut self, path: &Path) -> Option<Ino> {
        if let Some(&ino) = self.files.get(path) {
            return Some(ino);
        }
        if !path.is_file() {
            return None;
        }
        if let Some(parent) = path.parent() {
            self.know_dir(parent);
        }
        let data = std::fs::read(path).unwrap_or_default();
        let ino = self.new_ino();
        self.files.insert(path.to_path_buf(), ino);
        self.push(FsOp::AdoptFile {
            path: path.to_path_buf(),
            ino,
            data,
        });
        Some(ino)
    }

    fn new_ino(&mut self) -> Ino {
        self.next_ino += 1;
        self.next_ino
    }

    /// Every path the journal names (files and directories).
    fn named(&self) -> (HashSet<PathBuf>, HashSet<PathBuf>) {
        let (mut files, mut dirs) = (HashSet::new(), HashSet::new());
        for op in &self.journal.ops {
            match op {
                FsOp::AdoptFile { path, .. }
                | FsOp::Create { path, .. }
                | FsOp::Remove { path } => {
                    files.insert(path.clone());
                }
                FsOp::AdoptDir { path } | FsOp::Mkdir { path } | FsOp::RemoveDir { path } => {
                    dirs.insert(path.clone());
                }
                FsOp::Rename { from, to } => {
                    files.insert(from.clone());
                    files.insert(to.clone());
                }
                _ => {}
            }
        }
        (files, dirs)
    }
}

/// The faulting file system; cheap to clone (shared state).
#[derive(Clone)]
pub struct FaultyFs {
    inner: Arc<Inner>,
}

struct Inner {
    real: StdFs,
    wal: WalKind,
    rec: Mutex<Recorder>,
    fault: Mutex<Option<Fault>>,
    /// Only operations on paths ending with this count and fail (None: all).
    only: Mutex<Option<String>>,
    /// Asked before a fault is injected (see [`FaultyFs::arm_if`]).
    gate: Mutex<Option<Gate>>,
    counts: [AtomicU64; 4],
    crashed: AtomicBool,
    injected: AtomicU64,
    /// Directory listings so far.
    listings: AtomicU64,
    /// How long each file and directory sync takes.
    sync_latency: std::time::Duration,
}

fn idx(op: Op) -> usize {
    match op {
        Op::Write => 0,
        Op::Sync => 1,
        Op::Rename => 2,
        Op::Create => 3,
    }
}

fn power_lost() -> io::Error {
    io::Error::other("simulated power loss")
}

impl Default for FaultyFs {
    fn default() -> Self {
        Self::new()
    }
}

impl FaultyFs {
    /// A file system with no fault armed, writing WALs as `StdFs` does.
    pub fn new() -> Self {
        Self::with_wal(WalKind::Mapped)
    }

    /// A file system with no fault armed, writing WALs the `wal` way.
    pub fn with_wal(wal: WalKind) -> Self {
        FaultyFs {
            inner: Arc::new(Inner {
                real: StdFs,
                wal,
                rec: Mutex::new(Recorder::default()),
                fault: Mutex::new(None),
                only: Mutex::new(None),
                gate: Mutex::new(None),
                counts: Default::default(),
                crashed: AtomicBool::new(false),
                injected: AtomicU64::new(0),
                listings: AtomicU64::new(0),
                sync_latency: std::time::Duration::ZERO,
            }),
        }
    }

    /// Makes every sync take `d` (before it is recorded), as on a device: other
    /// threads' operations go on meanwhile. Call before the first clone.
    pub fn sync_latency(mut self, d: std::time::Duration) -> Self {
        Arc::get_mut(&mut self.inner)
            .expect("sync_latency is set before the file system is shared")
            .sync_latency = d;
        self
    }

    /// Waits out a sync's latency.
    fn sync_wait(&self) {
        if !self.inner.sync_latency.is_zero() {
            std::thread::sleep(self.inner.sync_latency);
        }
    }

    /// Arms a fault (counting operations from now).
    pub fn arm(&self, f: Fault) {
        self.inner.counts[idx(f.op)].store(0, Ordering::SeqCst);
        *self.inner.fault.lock() = Some(f);
    }

    /// Arms a fault that counts and fails only operations on files whose
    /// name ends with `suffix` (e.g. `".log"`, `".sst"`, `"MANIFEST-"` does not
    /// work: use a suffix); `sync_dir` never matches.
    pub fn arm_for(&self, f: Fault, suffix: &str) {
        *self.inner.only.lock() = Some(suffix.to_string());
        self.arm(f);
    }

    /// Arms a fault injected only where `gate` says so: it is called, on the
    /// thread of the operation, each time the fault would be injected, and
    /// may block to hold that thread at its failing operation.
    pub fn arm_if(&self, f: Fault, gate: impl Fn(&Path) -> bool + Send + Sync + 'static) {
        *self.inner.gate.lock() = Some(Arc::new(gate));
        self.arm(f);
    }

    /// Disarms any fault.
    pub fn disarm(&self) {
        *self.inner.fault.lock() = None;
        *self.inner.only.lock() = None;
        *self.inner.gate.lock() = None;
    }

    /// Faults injected so far.
    pub fn injected(&self) -> u64 {
        self.inner.injected.load(Ordering::SeqCst)
    }

    /// Directories listed so far.
    pub fn listings(&self) -> u64 {
        self.inner.listings.load(Ordering::SeqCst)
    }

    /// Operations recorded so far: a point of the journal.
    pub fn position(&self) -> usize {
        self.inner.rec.lock().journal.ops.len()
    }

    /// A copy of the journal recorded so far.
    pub fn journal(&self) -> Journal {
        self.inner.rec.lock().journal.clone()
    }

    /// Simulates the moment of a power loss: from now on every operation fails.
    pub fn crash(&self) {
        self.inner.crashed.store(true, Ordering::SeqCst);
    }

    /// After `crash` (and after the database was dropped): rewrites the real
    /// files and directories the journal names to a state a power loss at
    /// the crash may leave, under `choice` ([`Choice::AllLost`]: only what
    /// was made durable; [`Choice::Torn`]: a random part of the rest too).
    /// Files the journal never named stay as they are. The journal then
    /// starts afresh, and operations work again.
    pub fn apply_power_loss(&self, choice: Choice<'_>) {
        let mut rec = self.inner.rec.lock();
        let mut replay = Replay::default();
        for op in &rec.journal.ops {
            replay.apply(op);
        }
        let state = replay.crash_state(choice);
        let (files, dirs) = rec.named();
        let mut dirs: Vec<PathBuf> = dirs.into_iter().collect();
        dirs.sort();
        for d in &state.dirs {
            let _ = std::fs::create_dir_all(d);
        }
        for (p, data) in &state.files {
            std::fs::write(p, data).expect("rewrite a file to its crash state");
        }
        for f in files.iter().filter(|f| !state.files.contains_key(*f)) {
            let _ = std::fs::remove_file(f);
        }
        for d in dirs.iter().rev().filter(|d| !state.dirs.contains(*d)) {
            let _ = std::fs::remove_dir_all(d);
        }
        *rec = Recorder::default();
        self.inner.crashed.store(false, Ordering::SeqCst);
    }

    fn check(&self, op: Op, path: &Path) -> io::Result<Option<Fault>> {
        if self.inner.crashed.load(Ordering::SeqCst) {
            return Err(power_lost());
        }
        if let Some(suffix) = &*self.inner.only.lock() {
            if !path.to_string_lossy().ends_with(suffix.as_str()) {
                return Ok(None);
            }
        }
        let n = self.inner.counts[idx(op)].fetch_add(1, Ordering::SeqCst);
        let f = *self.inner.fault.lock();
        match f {
            Some(f) if f.op == op && (n == f.nth || (f.sticky && n > f.nth)) => {
                let gate = self.inner.gate.lock().clone();
                if gate.is_some_and(|g| !g(path)) {
                    return Ok(None);
                }
                self.inner.injected.fetch_add(1, Ordering::SeqCst);
                Ok(Some(f))
            }
            _ => Ok(None),
        }
    }

    fn alive(&self) -> io::Result<()> {
        if self.inner.crashed.load(Ordering::SeqCst) {
            Err(power_lost())
        } else {
            Ok(())
        }
    }

    /// Creates (truncating) `path` on the real file system and in the
    /// journal, opened for reading and writing.
    fn create_file(&self, path: &Path) -> io::Result<(std::fs::File, Ino)> {
        if let Some(f) = self.check(Op::Create, path)? {
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        let mut rec = self.inner.rec.lock();
        let existing = rec.inode(path);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        let ino = match existing {
            Some(ino) => {
                rec.push(FsOp::SetLen { ino, len: 0 });
                ino
            }
            None => {
                if let Some(parent) = path.parent() {
                    rec.know_dir(parent);
                }
                let ino = rec.new_ino();
                rec.files.insert(path.to_path_buf(), ino);
                rec.push(FsOp::Create {
                    path: path.to_path_buf(),
                    ino,
                });
                ino
            }
        };
        Ok((file, ino))
    }

    /// Writes `data` at `offset` of `file` and records it.
    fn write_at(&self, file: &std::fs::File, ino: Ino, offset: u64, data: &[u8]) -> io::Result<()> {
        let mut rec = self.inner.rec.lock();
        file.write_all_at(data, offset)?;
        rec.push(FsOp::Write {
            ino,
            offset,
            data: data.to_vec(),
        });
        Ok(())
    }

    fn record(&self, op: FsOp) {
        self.inner.rec.lock().push(op);
    }
}

/// A file written with `write(2)` semantics: appends at its end.
struct FaultyWritable {
    fs: FaultyFs,
    path: PathBuf,
    file: std::fs::File,
    ino: Ino,
    written: u64,
}

impl WritableFile for FaultyWritable {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        if let Some(f) = self.fs.check(Op::Write, &self.path)? {
            if f.tear {
                let half = &data[..data.len() / 2];
                self.fs.write_at(&self.file, self.ino, self.written, half)?;
                self.written += half.len() as u64;
            }
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        self.fs.write_at(&self.file, self.ino, self.written, data)?;
        self.written += data.len() as u64;
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.fs.alive()
    }
    fn sync(&mut self) -> io::Result<()> {
        if let Some(f) = self.fs.check(Op::Sync, &self.path)? {
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        self.fs.sync_wait();
        self.fs.record(FsOp::Sync { ino: self.ino });
        Ok(())
    }
}

/// The space of a preallocated WAL: every reservation, write, sync and cut
/// of sievedb's [`PreallocatedLog`] done on the real file and recorded.
struct RecordedSpace {
    fs: FaultyFs,
    path: PathBuf,
    file: std::fs::File,
    ino: Ino,
}

impl LogSpace for RecordedSpace {
    fn reserve(&mut self, base: u64, len: usize) -> io::Result<()> {
        self.fs.alive()?;
        let end = base + len as u64;
        let mut rec = self.fs.inner.rec.lock();
        if self.file.metadata()?.len() < end {
            self.file.set_len(end)?;
        }
        rec.push(FsOp::Reserve {
            ino: self.ino,
            len: end,
        });
        Ok(())
    }
    fn write(&mut self, offset: u64, data: &[u8]) -> io::Result<()> {
        if let Some(f) = self.fs.check(Op::Write, &self.path)? {
            if f.tear {
                let half = &data[..data.len() / 2];
                self.fs.write_at(&self.file, self.ino, offset, half)?;
            }
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        self.fs.write_at(&self.file, self.ino, offset, data)
    }
    fn sync(&mut self) -> io::Result<()> {
        if let Some(f) = self.fs.check(Op::Sync, &self.path)? {
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        self.fs.sync_wait();
        self.fs.record(FsOp::Sync { ino: self.ino });
        Ok(())
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.fs.alive()?;
        let mut rec = self.fs.inner.rec.lock();
        self.file.set_len(len)?;
        rec.push(FsOp::SetLen { ino: self.ino, len });
        Ok(())
    }
}

struct FaultyRandom {
    fs: FaultyFs,
    inner: Arc<dyn RandomAccessFile>,
}

impl RandomAccessFile for FaultyRandom {
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.fs.alive()?;
        self.inner.read_at(offset, len)
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
}

impl FileSystem for FaultyFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.alive()?;
        let mut rec = self.inner.rec.lock();
        let mut missing: Vec<&Path> = path.ancestors().take_while(|a| !a.exists()).collect();
        if let Some(existing) = path.ancestors().find(|a| a.exists()) {
            rec.know_dir(existing);
        }
        missing.reverse();
        for d in missing {
            std::fs::create_dir(d).or_else(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => Ok(()),
                _ => Err(e),
            })?;
            rec.dirs.insert(d.to_path_buf());
            rec.push(FsOp::Mkdir {
                path: d.to_path_buf(),
            });
        }
        Ok(())
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let (file, ino) = self.create_file(path)?;
        Ok(Box::new(FaultyWritable {
            fs: self.clone(),
            path: path.to_path_buf(),
            file,
            ino,
            written: 0,
        }))
    }
    fn create_log(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        if self.inner.wal == WalKind::Write {
            return self.create(path);
        }
        let (file, ino) = self.create_file(path)?;
        let space = RecordedSpace {
            fs: self.clone(),
            path: path.to_path_buf(),
            file,
            ino,
        };
        Ok(Box::new(PreallocatedLog::new(space)?))
    }
    fn open_random(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn RandomAccessFile>> {
        self.alive()?;
        let inner = self.inner.real.open_random(path, direct)?;
        Ok(Arc::new(FaultyRandom {
            fs: self.clone(),
            inner,
        }))
    }
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.alive()?;
        self.inner.real.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        if let Some(f) = self.check(Op::Rename, to)? {
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        let mut rec = self.inner.rec.lock();
        if from.is_dir() {
            rec.know_dir(from);
        } else {
            rec.inode(from);
        }
        if let Some(parent) = to.parent() {
            rec.know_dir(parent);
        }
        rec.inode(to);
        self.inner.real.rename(from, to)?;
        if let Some(ino) = rec.files.remove(from) {
            rec.files.insert(to.to_path_buf(), ino);
        } else {
            let moved: Vec<(PathBuf, Ino)> = rec
                .files
                .iter()
                .filter_map(|(p, i)| Some((to.join(p.strip_prefix(from).ok()?), *i)))
                .collect();
            rec.files.retain(|p, _| !p.starts_with(from));
            rec.files.extend(moved);
            let dirs: Vec<PathBuf> = rec
                .dirs
                .iter()
                .filter_map(|d| Some(to.join(d.strip_prefix(from).ok()?)))
                .collect();
            rec.dirs.retain(|d| !d.starts_with(from));
            rec.dirs.extend(dirs);
        }
        rec.push(FsOp::Rename {
            from: from.to_path_buf(),
            to: to.to_path_buf(),
        });
        Ok(())
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.alive()?;
        let mut rec = self.inner.rec.lock();
        rec.inode(path);
        self.inner.real.remove_file(path)?;
        rec.files.remove(path);
        rec.push(FsOp::Remove {
            path: path.to_path_buf(),
        });
        Ok(())
    }
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        self.alive()?;
        let mut rec = self.inner.rec.lock();
        rec.know_dir(path);
        self.inner.real.remove_dir(path)?;
        rec.dirs.remove(path);
        rec.push(FsOp::RemoveDir {
            path: path.to_path_buf(),
        });
        Ok(())
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        self.inner.listings.fetch_add(1, Ordering::SeqCst);
        self.inner.real.list_dir(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        if let Some(f) = self.check(Op::Sync, path)? {
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        self.sync_wait();
        let mut rec = self.inner.rec.lock();
        rec.know_dir(path);
        rec.push(FsOp::SyncDir {
            path: path.to_path_buf(),
        });
        Ok(())
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.real.exists(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.inner.real.is_dir(path)
    }
    fn file_size(&self, path: &Path) -> io::Result<u64> {
        self.alive()?;
        self.inner.real.file_size(path)
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        // The LOCK file is never read back: created outside the journal.
        self.inner.real.lock(path)
    }
}
