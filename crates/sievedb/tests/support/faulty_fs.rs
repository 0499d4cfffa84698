//! A [`FileSystem`] for tests that injects faults (LevelDB's fault-injection Env
//! idea): it can fail a chosen operation with EIO or ENOSPC, tear a write in
//! half, and simulate a power loss that drops everything not yet made durable.
//!
//! Durability model: file contents become durable at `sync`; creations,
//! renames and removals become durable at `sync_dir` of their directory.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use sievedb::io::{FileLock, FileSystem, RandomAccessFile, StdFs, WritableFile};

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

/// Whether a fault about to be injected on a path is (see
/// [`FaultyFs::arm_if`]).
type Gate = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

#[derive(Default)]
struct FileState {
    /// Length durable on "disk".
    synced_len: u64,
    /// Whether the directory entry is durable.
    entry_durable: bool,
}

#[derive(Default)]
struct State {
    files: HashMap<PathBuf, FileState>,
    /// Renames not yet made durable: (target, previous durable content of target).
    pending_renames: Vec<(PathBuf, Option<Vec<u8>>, PathBuf)>,
    /// Removals not yet durable: path and its durable content.
    pending_removes: Vec<(PathBuf, Vec<u8>)>,
}

/// The faulting file system; cheap to clone (shared state).
#[derive(Clone)]
pub struct FaultyFs {
    inner: Arc<Inner>,
}

struct Inner {
    real: StdFs,
    state: Mutex<State>,
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
}

fn idx(op: Op) -> usize {
    match op {
        Op::Write => 0,
        Op::Sync => 1,
        Op::Rename => 2,
        Op::Create => 3,
    }
}

impl Default for FaultyFs {
    fn default() -> Self {
        Self::new()
    }
}

impl FaultyFs {
    /// A file system with no fault armed.
    pub fn new() -> Self {
        FaultyFs {
            inner: Arc::new(Inner {
                real: StdFs,
                state: Mutex::new(State::default()),
                fault: Mutex::new(None),
                only: Mutex::new(None),
                gate: Mutex::new(None),
                counts: Default::default(),
                crashed: AtomicBool::new(false),
                injected: AtomicU64::new(0),
                listings: AtomicU64::new(0),
            }),
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

    /// Simulates the moment of a power loss: from now on every operation fails.
    pub fn crash(&self) {
        self.inner.crashed.store(true, Ordering::SeqCst);
    }

    /// After `crash` (and after the database was dropped): rewrites the real
    /// directory to what was durable at the crash. Unsynced tails are cut (when
    /// `keep_torn` a random-length part of the unsynced tail survives, as a
    /// page cache may have written some of it back).
    pub fn apply_power_loss(&self, keep_torn: Option<&mut dyn FnMut(u64) -> u64>) {
        let mut keep_torn = keep_torn;
        let mut st = self.inner.state.lock();
        // Undo removals and renames that were not durable.
        for (path, content) in st.pending_removes.drain(..).rev() {
            let _ = std::fs::write(&path, content);
        }
        let renames: Vec<_> = st.pending_renames.drain(..).rev().collect();
        for (to, old, from) in renames {
            let _ = std::fs::rename(&to, &from);
            if let Some(old) = old {
                let _ = std::fs::write(&to, old);
            }
        }
        for (path, fs) in st.files.iter() {
            if !fs.entry_durable {
                let _ = std::fs::remove_file(path);
                continue;
            }
            let Ok(len) = std::fs::metadata(path).map(|m| m.len()) else {
                continue;
            };
            let mut keep = fs.synced_len.min(len);
            if let Some(f) = keep_torn.as_mut() {
                if len > keep {
                    keep += f(len - keep);
                }
            }
            if let Ok(file) = std::fs::OpenOptions::new().write(true).open(path) {
                let _ = file.set_len(keep);
            }
        }
        st.files.clear();
        self.inner.crashed.store(false, Ordering::SeqCst);
    }

    fn check(&self, op: Op, path: &Path) -> io::Result<Option<Fault>> {
        if self.inner.crashed.load(Ordering::SeqCst) {
            return Err(io::Error::other("simulated power loss"));
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

    fn durable_content(&self, path: &Path) -> Option<Vec<u8>> {
        let st = self.inner.state.lock();
        let data = std::fs::read(path).ok()?;
        match st.files.get(path) {
            Some(f) if !f.entry_durable => None,
            Some(f) => Some(data[..(f.synced_len as usize).min(data.len())].to_vec()),
            None => Some(data),
        }
    }
}

struct FaultyWritable {
    fs: FaultyFs,
    path: PathBuf,
    file: std::fs::File,
    written: u64,
}

impl WritableFile for FaultyWritable {
    fn append(&mut self, data: &[u8]) -> io::Result<()> {
        use std::io::Write;
        if let Some(f) = self.fs.check(Op::Write, &self.path)? {
            if f.tear {
                let half = &data[..data.len() / 2];
                self.file.write_all(half)?;
                self.written += half.len() as u64;
            }
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        self.file.write_all(data)?;
        self.written += data.len() as u64;
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        if self.fs.inner.crashed.load(Ordering::SeqCst) {
            return Err(io::Error::other("simulated power loss"));
        }
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        if let Some(f) = self.fs.check(Op::Sync, &self.path)? {
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        let mut st = self.fs.inner.state.lock();
        if let Some(s) = st.files.get_mut(&self.path) {
            s.synced_len = self.written;
        }
        Ok(())
    }
}

struct FaultyRandom {
    fs: FaultyFs,
    inner: Arc<dyn RandomAccessFile>,
}

impl RandomAccessFile for FaultyRandom {
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        if self.fs.inner.crashed.load(Ordering::SeqCst) {
            return Err(io::Error::other("simulated power loss"));
        }
        self.inner.read_at(offset, len)
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
}

impl FileSystem for FaultyFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.inner.real.create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        if let Some(f) = self.check(Op::Create, path)? {
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        let existed_durably = self.durable_content(path).is_some();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        let mut st = self.inner.state.lock();
        let e = st.files.entry(path.to_path_buf()).or_default();
        e.synced_len = 0;
        e.entry_durable = existed_durably && e.entry_durable;
        Ok(Box::new(FaultyWritable {
            fs: self.clone(),
            path: path.to_path_buf(),
            file,
            written: 0,
        }))
    }
    fn open_random(&self, path: &Path, direct: bool) -> io::Result<Arc<dyn RandomAccessFile>> {
        if self.inner.crashed.load(Ordering::SeqCst) {
            return Err(io::Error::other("simulated power loss"));
        }
        let inner = self.inner.real.open_random(path, direct)?;
        Ok(Arc::new(FaultyRandom {
            fs: self.clone(),
            inner,
        }))
    }
    fn read_all(&self, path: &Path) -> io::Result<Vec<u8>> {
        if self.inner.crashed.load(Ordering::SeqCst) {
            return Err(io::Error::other("simulated power loss"));
        }
        self.inner.real.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        if let Some(f) = self.check(Op::Rename, to)? {
            return Err(io::Error::from_raw_os_error(f.errno));
        }
        let old = self.durable_content(to);
        self.inner.real.rename(from, to)?;
        let mut st = self.inner.state.lock();
        let moved = st.files.remove(from).unwrap_or(FileState {
            synced_len: u64::MAX,
            entry_durable: true,
        });
        st.files.insert(
            to.to_path_buf(),
            FileState {
                synced_len: moved.synced_len,
                entry_durable: true,
            },
        );
        st.pending_renames
            .push((to.to_path_buf(), old, from.to_path_buf()));
        Ok(())
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        if self.inner.crashed.load(Ordering::SeqCst) {
            return Err(io::Error::other("simulated power loss"));
        }
        let content = self.durable_content(path);
        self.inner.real.remove_file(path)?;
        let mut st = self.inner.state.lock();
        st.files.remove(path);
        if let Some(c) = content {
            st.pending_removes.push((path.to_path_buf(), c));
        }
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
        let mut st = self.inner.state.lock();
        for (p, f) in st.files.iter_mut() {
            if p.parent() == Some(path) {
                f.entry_durable = true;
            }
        }
        st.pending_renames
            .retain(|(to, _, _)| to.parent() != Some(path));
        st.pending_removes.retain(|(p, _)| p.parent() != Some(path));
        Ok(())
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.real.exists(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.inner.real.is_dir(path)
    }
    fn file_size(&self, path: &Path) -> io::Result<u64> {
        if self.inner.crashed.load(Ordering::SeqCst) {
            return Err(io::Error::other("simulated power loss"));
        }
        self.inner.real.file_size(path)
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        self.inner.real.lock(path)
    }
}
