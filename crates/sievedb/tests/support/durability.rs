//! What a power loss may leave of a file system: a journal of every file
//! operation, and the crash states a power loss at any point of it allows
//! (CrashMonkey's idea; the model of LazyFS, stricter where POSIX is).
//!
//! **The model.** A file's bytes and its size become durable only at a
//! `sync` (fsync/fdatasync) of that file; until then every write and every
//! size change (`set_len`, a `fallocate` reservation, a cut) since its last
//! sync may be lost, kept, or kept in part: a write may tear into pieces at
//! any byte, kept out of order (pieces of a later write without those of an
//! earlier one), a kept piece past the end extends the file with zeros
//! before it. A directory's entries (a file or directory created, renamed
//! into it, removed from it) become durable only at a sync of that
//! directory; until then the directory keeps a prefix of its pending entry
//! operations, any prefix, independently of other directories (a directory
//! is one file whose updates are ordered). A file whose entry vanished is
//! gone with its data. fsync of a file never makes its entry durable.
//!
//! The journal ([`Journal`]) is recorded by the test file system; a
//! [`Replay`] walks it forward and, at any point, builds a [`CrashState`]
//! under a [`Choice`]: all lost, all kept, or one random torn state.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use rand::rngs::SmallRng;
use rand::Rng;

/// A file's identity: data follows the file through renames.
pub type Ino = u64;

/// One recorded file operation.
#[derive(Clone, Debug)]
pub enum Op {
    /// A file that existed before recording began (durable as found).
    AdoptFile {
        path: PathBuf,
        ino: Ino,
        data: Vec<u8>,
    },
    /// A directory that existed before recording began (durable).
    AdoptDir { path: PathBuf },
    /// An empty file created (an entry of its directory).
    Create { path: PathBuf, ino: Ino },
    /// A directory created (an entry of its parent).
    Mkdir { path: PathBuf },
    /// Bytes written at an offset (through `write(2)` or a shared map).
    Write {
        ino: Ino,
        offset: u64,
        data: Vec<u8>,
    },
    /// The size set (`ftruncate`: a cut, or an extension with zeros).
    SetLen { ino: Ino, len: u64 },
    /// Space reserved (`fallocate`): the size grows to at least `len`.
    Reserve { ino: Ino, len: u64 },
    /// The file's bytes and size made durable.
    Sync { ino: Ino },
    /// A rename (atomic; durable with the target's directory).
    Rename { from: PathBuf, to: PathBuf },
    /// A file removed.
    Remove { path: PathBuf },
    /// An empty directory removed.
    RemoveDir { path: PathBuf },
    /// A directory's entries made durable.
    SyncDir { path: PathBuf },
}

impl Op {
    /// The directory whose sync makes this entry operation durable (`None`
    /// for data operations and syncs).
    fn entry_dir(&self) -> Option<&Path> {
        match self {
            Op::Create { path, .. }
            | Op::Mkdir { path }
            | Op::Remove { path }
            | Op::RemoveDir { path } => path.parent(),
            Op::Rename { to, .. } => to.parent(),
            _ => None,
        }
    }
}

/// The recorded operations, in the order they happened.
#[derive(Clone, Debug, Default)]
pub struct Journal {
    pub ops: Vec<Op>,
}

/// How the undurable part of a crash state is chosen.
pub enum Choice<'a> {
    /// Nothing undurable survives (the strictest power loss).
    AllLost,
    /// Everything survives (a process crash: what the kernel held).
    AllKept,
    /// Each file keeps a random part of its undurable writes and size
    /// changes, torn and out of order; each directory a random prefix of its
    /// undurable entry operations.
    Torn(&'a mut SmallRng),
}

/// A file system image: directories and files with their bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrashState {
    pub dirs: BTreeSet<PathBuf>,
    pub files: BTreeMap<PathBuf, Vec<u8>>,
}

impl CrashState {
    /// Writes the part of the image under `from` into `to` (which must
    /// exist and be empty), with paths rebased.
    pub fn materialize(&self, from: &Path, to: &Path) {
        let rebase = |p: &Path| p.strip_prefix(from).ok().map(|r| to.join(r));
        for d in &self.dirs {
            if let Some(t) = rebase(d) {
                std::fs::create_dir_all(t).expect("create a crash state directory");
            }
        }
        for (p, data) in &self.files {
            if let Some(t) = rebase(p) {
                if let Some(parent) = t.parent() {
                    std::fs::create_dir_all(parent).expect("create a crash state directory");
                }
                std::fs::write(&t, data).expect("write a crash state file");
            }
        }
    }

    /// Bytes of every file.
    pub fn bytes(&self) -> u64 {
        self.files.values().map(|d| d.len() as u64).sum()
    }
}

/// A data operation not yet durable.
#[derive(Clone, Debug)]
enum Pending {
    Write { offset: u64, data: Vec<u8> },
    SetLen(u64),
    Reserve(u64),
}

impl Pending {
    fn apply(&self, file: &mut Vec<u8>) {
        match self {
            Pending::Write { offset, data } => write_at(file, *offset, data),
            Pending::SetLen(len) => file.resize(*len as usize, 0),
            Pending::Reserve(len) => {
                if (file.len() as u64) < *len {
                    file.resize(*len as usize, 0);
                }
            }
        }
    }
}

fn write_at(file: &mut Vec<u8>, offset: u64, data: &[u8]) {
    let (start, end) = (offset as usize, offset as usize + data.len());
    if file.len() < end {
        file.resize(end, 0);
    }
    file[start..end].copy_from_slice(data);
}

#[derive(Clone, Debug, Default)]
struct Inode {
    /// Contents as of the last sync.
    durable: Vec<u8>,
    /// Data operations since.
    pending: Vec<Pending>,
}

/// An entry operation, and whether a sync of its directory followed it.
#[derive(Clone, Debug)]
struct EntryOp {
    op: Op,
    durable: bool,
}

/// A forward walk over a [`Journal`]: after [`apply`](Self::apply)ing its
/// first `n` operations, [`crash_state`](Self::crash_state) builds what a
/// power loss right then may leave.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    inodes: HashMap<Ino, Inode>,
    entries: Vec<EntryOp>,
    /// Operations applied.
    pub applied: usize,
}

impl Replay {
    /// Applies the next operation of the journal.
    pub fn apply(&mut self, op: &Op) {
        self.applied += 1;
        match op {
            Op::AdoptFile { ino, data, .. } => {
                self.inodes.insert(
                    *ino,
                    Inode {
                        durable: data.clone(),
                        pending: Vec::new(),
                    },
                );
                self.entries.push(EntryOp {
                    op: op.clone(),
                    durable: true,
                });
            }
            Op::AdoptDir { .. } => self.entries.push(EntryOp {
                op: op.clone(),
                durable: true,
            }),
            Op::Create { ino, .. } => {
                self.inodes.insert(*ino, Inode::default());
                self.entries.push(EntryOp {
                    op: op.clone(),
                    durable: false,
                });
            }
            Op::Mkdir { .. } | Op::Rename { .. } | Op::Remove { .. } | Op::RemoveDir { .. } => {
                self.entries.push(EntryOp {
                    op: op.clone(),
                    durable: false,
                })
            }
            Op::Write { ino, offset, data } => self.pending(*ino).push(Pending::Write {
                offset: *offset,
                data: data.clone(),
            }),
            Op::SetLen { ino, len } => self.pending(*ino).push(Pending::SetLen(*len)),
            Op::Reserve { ino, len } => self.pending(*ino).push(Pending::Reserve(*len)),
            Op::Sync { ino } => {
                if let Some(i) = self.inodes.get_mut(ino) {
                    for p in std::mem::take(&mut i.pending) {
                        p.apply(&mut i.durable);
                    }
                }
            }
            Op::SyncDir { path } => {
                for e in &mut self.entries {
                    if e.op.entry_dir() == Some(path.as_path()) {
                        e.durable = true;
                    }
                }
            }
        }
    }

    fn pending(&mut self, ino: Ino) -> &mut Vec<Pending> {
        &mut self.inodes.entry(ino).or_default().pending
    }

    /// Whether anything is not durable yet (all states would be equal).
    pub fn all_durable(&self) -> bool {
        self.entries.iter().all(|e| e.durable) && self.inodes.values().all(|i| i.pending.is_empty())
    }

    /// What a power loss now may leave, under `choice`.
    pub fn crash_state(&self, mut choice: Choice<'_>) -> CrashState {
        // Each directory keeps a prefix of its undurable entry operations.
        let mut undurable: BTreeMap<&Path, usize> = BTreeMap::new();
        for e in self.entries.iter().filter(|e| !e.durable) {
            *undurable
                .entry(e.op.entry_dir().expect("an entry op"))
                .or_default() += 1;
        }
        let cuts: BTreeMap<&Path, usize> = undurable
            .into_iter()
            .map(|(d, n)| {
                let cut = match &mut choice {
                    Choice::AllLost => 0,
                    Choice::AllKept => n,
                    Choice::Torn(rng) => rng.gen_range(0..=n),
                };
                (d, cut)
            })
            .collect();
        let mut seen: BTreeMap<&Path, usize> = BTreeMap::new();
        let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
        let mut files: BTreeMap<PathBuf, Ino> = BTreeMap::new();
        for e in &self.entries {
            if !e.durable {
                let d = e.op.entry_dir().expect("an entry op");
                let n = seen.entry(d).or_default();
                *n += 1;
                if *n > cuts[d] {
                    continue;
                }
            }
            match &e.op {
                Op::AdoptFile { path, ino, .. } | Op::Create { path, ino } => {
                    files.insert(path.clone(), *ino);
                }
                Op::AdoptDir { path } | Op::Mkdir { path } => {
                    dirs.insert(path.clone());
                }
                Op::Remove { path } => {
                    files.remove(path);
                }
                Op::RemoveDir { path } => {
                    dirs.remove(path);
                }
                Op::Rename { from, to } => rename(&mut dirs, &mut files, from, to),
                _ => unreachable!("not an entry op"),
            }
        }
        // An entry whose directory vanished is gone too.
        let reachable = |p: &Path, dirs: &BTreeSet<PathBuf>| {
            p.ancestors()
                .skip(1)
                .take_while(|a| !a.as_os_str().is_empty())
                .all(|a| dirs.contains(a) || !self.knows_dir(a))
        };
        let dirs_ok: BTreeSet<PathBuf> = dirs
            .iter()
            .filter(|d| reachable(d, &dirs))
            .cloned()
            .collect();
        let mut out = CrashState {
            dirs: dirs_ok,
            files: BTreeMap::new(),
        };
        for (path, ino) in files {
            if !reachable(&path, &out.dirs) {
                continue;
            }
            let content = self.content(ino, &mut choice);
            out.files.insert(path, content);
        }
        out
    }

    /// Whether `dir` is a directory the journal created or adopted (an
    /// ancestor it never named, above the recorded tree, always exists).
    fn knows_dir(&self, dir: &Path) -> bool {
        self.entries.iter().any(|e| match &e.op {
            Op::AdoptDir { path } | Op::Mkdir { path } => path == dir,
            _ => false,
        })
    }

    /// The bytes of file `ino` in a crash state.
    fn content(&self, ino: Ino, choice: &mut Choice<'_>) -> Vec<u8> {
        let Some(inode) = self.inodes.get(&ino) else {
            return Vec::new();
        };
        let mut file = inode.durable.clone();
        match choice {
            Choice::AllLost => {}
            Choice::AllKept => {
                for p in &inode.pending {
                    p.apply(&mut file);
                }
            }
            Choice::Torn(rng) => torn(&mut file, &inode.pending, rng),
        }
        file
    }
}

/// Applies a random part of `pending` to `file`: one of a prefix of the
/// operations with the next one cut short (a torn tail), a random subset of
/// whole operations, or every operation torn into pieces kept at random.
fn torn(file: &mut Vec<u8>, pending: &[Pending], rng: &mut SmallRng) {
    if pending.is_empty() {
        return;
    }
    match rng.gen_range(0..3) {
        0 => {
            let n = rng.gen_range(0..=pending.len());
            for p in &pending[..n] {
                p.apply(file);
            }
            if let Some(Pending::Write { offset, data }) = pending.get(n) {
                let keep = rng.gen_range(0..=data.len());
                write_at(file, *offset, &data[..keep]);
            }
        }
        1 => {
            for p in pending {
                if rng.gen_bool(0.5) {
                    p.apply(file);
                }
            }
        }
        _ => {
            for p in pending {
                match p {
                    Pending::Write { offset, data } => {
                        for (start, end) in pieces(*offset, data.len(), rng) {
                            if rng.gen_bool(0.5) {
                                let o = (start - offset) as usize;
                                write_at(file, start, &data[o..o + (end - start) as usize]);
                            }
                        }
                    }
                    _ if rng.gen_bool(0.5) => p.apply(file),
                    _ => {}
                }
            }
        }
    }
}

/// Splits the byte range `offset..offset + len` into pieces: at every
/// 512-byte sector boundary (how a device tears a write), and at a few
/// random bytes (how LazyFS tears one).
fn pieces(offset: u64, len: usize, rng: &mut SmallRng) -> Vec<(u64, u64)> {
    let end = offset + len as u64;
    let mut cuts: BTreeSet<u64> = BTreeSet::new();
    let mut s = (offset / 512 + 1) * 512;
    while s < end {
        cuts.insert(s);
        s += 512;
    }
    if len > 1 {
        for _ in 0..rng.gen_range(0..3) {
            cuts.insert(offset + rng.gen_range(1..len as u64));
        }
    }
    let mut out = Vec::new();
    let mut at = offset;
    for c in cuts.into_iter().chain(std::iter::once(end)) {
        if c > at {
            out.push((at, c));
            at = c;
        }
    }
    out
}

/// Renames file or directory `from` to `to` in an image (nothing if `from`
/// is absent there).
fn rename(
    dirs: &mut BTreeSet<PathBuf>,
    files: &mut BTreeMap<PathBuf, Ino>,
    from: &Path,
    to: &Path,
) {
    if let Some(ino) = files.remove(from) {
        files.insert(to.to_path_buf(), ino);
        return;
    }
    if !dirs.contains(from) {
        return;
    }
    let moved = |p: &Path| p.strip_prefix(from).ok().map(|r| to.join(r));
    let old_dirs: Vec<PathBuf> = dirs.iter().cloned().collect();
    for d in old_dirs {
        if let Some(n) = moved(&d) {
            dirs.remove(&d);
            dirs.insert(n);
        }
    }
    let old_files: Vec<(PathBuf, Ino)> = files.iter().map(|(p, i)| (p.clone(), *i)).collect();
    for (p, ino) in old_files {
        if let Some(n) = moved(&p) {
            files.remove(&p);
            files.insert(n, ino);
        }
    }
}
