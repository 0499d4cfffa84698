//! Versions: which SST files make up the tree, the edits that change it, and
//! the MANIFEST that logs those edits.
//!
//! Invariants:
//! - Level 0 holds one run per file, newest (highest file number) first.
//! - Every level holds runs newest (highest run id) first: where two runs of a
//!   level hold the same user key, the run with the higher id holds the newer
//!   entry, and every level is newer than the next.
//! - Tiering writes each merge as a new run with a fresh id (a file number, so
//!   larger than every run id before it). Leveling writes into the only run of
//!   the output level, keeping its id (0 for an empty level), and first merges
//!   a level holding several runs into one; so a level under leveling holds
//!   one run except transiently after a reopen with another style, and either
//!   style keeps the order above on any shape the other left (the style is
//!   not recorded; see `docs/format.md`).
//! - The files of a run are sorted and their user-key ranges do not overlap.
//! - A file is deleted only when no version references it (see [`FileMeta`]'s drop).
//!
//! # A failed MANIFEST write
//!
//! A MANIFEST is never appended to after an append or sync of it failed: the
//! failed write may have left a torn record, or a whole record whose
//! durability is unknown, at the end of the file, and records appended after
//! it would turn that tail into damage in the middle of the log, which
//! recovery refuses. So [`VersionSet::log_and_apply`] leaves the in-memory
//! version unchanged, drops its writer, tries once to start a fresh MANIFEST
//! (a snapshot of the unchanged version) and point `CURRENT` at it, and
//! returns the original error. If that attempt fails too, the next
//! `log_and_apply` starts the fresh MANIFEST instead of appending.
//!
//! Until a fresh MANIFEST is current ([`VersionSet::edit_in_doubt`]) the
//! failed edit may still be replayed by the next open: its bytes may all have
//! reached the disk although the sync reported an error. The files that edit
//! adds must therefore be kept until then (they are consistent with it: they
//! were synced before the edit was written); once a fresh MANIFEST is current
//! they are orphans that the next open deletes.
//!
//! Recovery keeps the strict tail rule of [`crate::wal`] for the MANIFEST: a
//! last record cut short by the end of the file (a write that failed or a
//! crash in the middle of an append, never acknowledged) is dropped; a
//! complete-length last record that fails its checksum is corruption, because
//! it cannot be told apart from a synced edit damaged later, and dropping a
//! synced edit could silently lose files (its WALs may already be deleted).
//! `Db::repair` rebuilds a MANIFEST for that case.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering as AtOrd};
use std::sync::{Arc, OnceLock};

use crate::cache::TableCache;
use crate::coding::{put_bytes, put_varint, Reader};
use crate::error::{Error, Result};
use crate::fence::Fences;
use crate::filter::budget::FileShape;
use crate::filter::digest::Phase;
use crate::prefetch::prefetch_read;
use crate::filter::resident::ResidentFilter;
use crate::filter::KeyProbe;
use crate::io::{filename, FileSystem};
use crate::key::{self, LazySeek, SeqNo};
use crate::memtable::Lookup;
use crate::sst::reader::{ReadCtx, TableReader};
use crate::wal::{read_records, LogWriter};

/// Metadata of one SST. When the last reference to an obsolete file's metadata
/// is dropped, the file itself is deleted.
///
/// Layout: `repr(C)`, cache-line aligned, with what every lookup of the file
/// reads first (`range_dels`, `filter`, `number`, `tables`) in its first
/// cache line, which [`Version::get`] prefetches.
#[repr(C, align(64))]
pub struct FileMeta {
    /// Range tombstones in the file (0 for most files: reads then never
    /// look at the table's tombstones).
    pub range_dels: u64,
    /// The file's resident filter (or its absence), registered with the
    /// filter budget when a version holding the file is installed (or at
    /// the first lookup, if that failed): lookups probe it before touching
    /// the table cache. Its units come and go as the budget decides.
    filter: OnceLock<Option<Arc<ResidentFilter>>>,
    /// File number (`NNNNNN.sst`).
    pub number: u64,
    tables: Arc<TableCache>,
    /// Size in bytes.
    pub size: u64,
    /// Entries in the file.
    pub entries: u64,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
    obsolete: AtomicBool,
}

impl FileMeta {
    /// Metadata of table `number` of `tables` spanning `smallest..=largest`
    /// (unit tests of the readers above tables).
    #[cfg(test)]
    pub(crate) fn for_test(
        number: u64,
        smallest: Vec<u8>,
        largest: Vec<u8>,
        tables: Arc<TableCache>,
    ) -> Arc<FileMeta> {
        Arc::new(FileMeta {
            number,
            size: 0,
            entries: 0,
            smallest,
            largest,
            range_dels: 0,
            obsolete: AtomicBool::new(false),
            tables,
            filter: OnceLock::new(),
        })
    }

    /// This file, as an edit adds it at `level` in run `run`.
    pub fn placed_at(&self, level: usize, run: u64) -> NewFile {
        NewFile {
            level,
            run,
            number: self.number,
            size: self.size,
            entries: self.entries,
            smallest: self.smallest.clone(),
            largest: self.largest.clone(),
            range_dels: self.range_dels,
        }
    }

    /// Smallest user key.
    pub fn smallest_user(&self) -> &[u8] {
        key::user_key(&self.smallest)
    }
    /// Largest user key.
    pub fn largest_user(&self) -> &[u8] {
        key::user_key(&self.largest)
    }
    /// Whether the file's user-key range meets `[lo, hi]` (None = unbounded).
    pub fn overlaps(&self, lo: Option<&[u8]>, hi: Option<&[u8]>) -> bool {
        lo.is_none_or(|l| self.largest_user() >= l) && hi.is_none_or(|h| self.smallest_user() <= h)
    }
    /// The open table, from the table cache (index time, for sampled lookups).
    fn table(&self, probe: &mut KeyProbe<'_>) -> Result<Arc<TableReader>> {
        let start = probe.phase_start();
        let t = self.tables.get(self.number);
        probe.phase_end(start, Phase::Index);
        t
    }

    /// The table cache the file is read through.
    pub fn tables(&self) -> &Arc<TableCache> {
        &self.tables
    }

    /// The file's place in the tree, for the filter budget.
    fn shape(&self, level: usize, run: u64) -> FileShape {
        FileShape {
            number: self.number,
            level,
            run,
            entries: self.entries,
        }
    }

    /// The file's resident filter (`None`: it has none), registering it with
    /// the filter budget on first use (opening the table).
    pub fn resident_filter(
        &self,
        level: usize,
        run: u64,
        probe: &mut KeyProbe<'_>,
    ) -> Result<Option<&Arc<ResidentFilter>>> {
        if let Some(f) = self.filter.get() {
            return Ok(f.as_ref());
        }
        let table = self.table(probe)?;
        let budget = self.tables.filter_budget();
        let rf = match table.filter_index() {
            Some(index) => Some(budget.register(self.shape(level, run), index)?),
            None => {
                budget.forget_unfiltered(self.number);
                None
            }
        };
        let _ = self.filter.set(rf);
        Ok(self.filter.get().and_then(Option::as_ref))
    }

    /// Whether the file's filter (or its absence) is known: read at the
    /// file's first lookup.
    pub fn filter_read(&self) -> bool {
        self.filter.get().is_some()
    }

    /// Units resident, units in all and resident bytes of the file's filter
    /// (`None` until it is registered, or when the file has no filter).
    pub fn filter_residency(&self) -> Option<(u32, u32, u64)> {
        let rf = self.filter.get()?.as_ref()?;
        Some((rf.resident(), rf.index().units(), rf.resident_bytes()))
    }

}

impl Drop for FileMeta {
    fn drop(&mut self) {
        // Hand the resident filter to the budget, which drops it (freeing
        // its units) when it forgets the file, under its lock.
        match self.filter.take() {
            Some(Some(rf)) => self.tables.filter_budget().retire(rf),
            Some(None) => {}
            // Never read: the budget may hold units reserved for it.
            None => self.tables.filter_budget().forget(self.number),
        }
        if self.obsolete.load(AtOrd::Acquire) {
            self.tables.remove_file(self.number);
        }
    }
}

/// A sorted run: files with disjoint key ranges, sorted by key.
#[derive(Clone)]
pub struct Run {
    /// Run id: larger is newer within a level.
    pub id: u64,
    /// The files, sorted by smallest key.
    pub files: Vec<Arc<FileMeta>>,
    /// Fence pointers over `files`, rebuilt by [`Version::refresh_fences`]
    /// whenever the files change (recovery and every applied edit do). A run
    /// whose fences were never built (their length differs) is searched by
    /// its keys directly.
    fences: Fences,
}

impl Run {
    /// An empty run.
    pub fn new(id: u64) -> Self {
        Run {
            id,
            files: Vec::new(),
            fences: Fences::default(),
        }
    }

    /// The file that may hold `user_key` (binary search on largest keys).
    ///
    /// A file whose largest key is a range tombstone's end sentinel (see
    /// [`crate::range_del::RangeTombstone::largest_key`]) holds nothing of
    /// that user key, and the next file may start at it: such a file is
    /// passed over for its largest user key.
    #[inline]
    pub fn file_for(&self, user_key: &[u8]) -> Option<&Arc<FileMeta>> {
        let i = if self.fences.len() == self.files.len() {
            self.fences.find(
                user_key,
                |i| self.files[i].smallest_user(),
                |i| self.files[i].largest_user(),
            )?
        } else {
            let i = self.files.partition_point(|f| f.largest_user() < user_key);
            self.files
                .get(i)
                .filter(|f| f.smallest_user() <= user_key)?;
            i
        };
        let f = &self.files[i];
        if f.range_dels > 0
            && crate::range_del::is_end_sentinel(&f.largest)
            && f.largest_user() == user_key
        {
            return self
                .files
                .get(i + 1)
                .filter(|g| g.smallest_user() <= user_key);
        }
        Some(f)
    }
    /// Total bytes.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}

/// The set of files that make up the tree at one moment; immutable once built.
#[derive(Clone, Default)]
pub struct Version {
    /// `levels[l]` = the runs of level `l`, newest first.
    pub levels: Vec<Vec<Run>>,
}

impl Version {
    /// Rebuilds the fence pointers of every run of the levels `touched`
    /// returns true for (after their files changed).
    fn refresh_fences(&mut self, touched: impl Fn(usize) -> bool) {
        let levels = self.levels.iter_mut().enumerate();
        for run in levels.filter(|(l, _)| touched(*l)).flat_map(|(_, r)| r) {
            run.fences = Fences::new(
                run.files
                    .iter()
                    .map(|f| (f.smallest_user(), f.largest_user())),
            );
        }
    }

    /// Bytes in `level`.
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.levels[level].iter().map(Run::bytes).sum()
    }

    /// Every file, with its level.
    pub fn files(&self) -> impl Iterator<Item = (usize, &Arc<FileMeta>)> {
        self.levels.iter().enumerate().flat_map(|(l, runs)| {
            runs.iter()
                .flat_map(move |r| r.files.iter().map(move |f| (l, f)))
        })
    }

    /// Looks `probe.key()` up as of `seq`: level 0 newest first, then one
    /// candidate file per run of each deeper level.
    ///
    /// The first [`PREFETCHED_RUNS`] candidate files are found first (fence
    /// searches only), prefetching each file's metadata as it
    /// is found and then each registered filter's state, so that these cache
    /// misses of all levels overlap instead of being paid level after level.
    /// Then the files are probed one by one, newest first, exactly as without
    /// prefetching (a prefetch reads nothing the lookup can see).
    pub fn get(
        &self,
        probe: &mut KeyProbe<'_>,
        seek: &mut LazySeek<'_>,
        policy: ReadCtx,
    ) -> Result<Lookup> {
        let user_key = probe.key();
        let mut found: [Option<Candidate<'_>>; PREFETCHED_RUNS] = [None; PREFETCHED_RUNS];
        let mut n = 0;
        // The first run not searched yet, when the slots ran out: (level, index).
        let mut rest = None;
        let start = probe.phase_start();
        'search: for (level, runs) in self.levels.iter().enumerate() {
            for (i, run) in runs.iter().enumerate() {
                if n == PREFETCHED_RUNS {
                    rest = Some((level, i));
                    break 'search;
                }
                if let Some(file) = run.file_for(user_key) {
                    prefetch_read::<FileMeta>(file);
                    found[n] = Some(Candidate {
                        level,
                        run: run.id,
                        file,
                    });
                    n += 1;
                }
            }
        }
        let found = &found[..n];
        for c in found.iter().flatten() {
            if let Some(Some(rf)) = c.file.filter.get() {
                rf.prefetch();
            }
        }
        probe.phase_end(start, Phase::Index);
        for c in found.iter().flatten() {
            if let Some(done) = probe_file(c, probe, seek, policy)? {
                return Ok(done);
            }
        }
        // Runs beyond the slots (a tiered tree with many runs), unprefetched.
        let Some((first_level, first_run)) = rest else {
            return Ok(Lookup::Absent);
        };
        for (level, runs) in self.levels.iter().enumerate().skip(first_level) {
            let skip = if level == first_level { first_run } else { 0 };
            for run in runs.iter().skip(skip) {
                let start = probe.phase_start();
                let file = run.file_for(user_key);
                probe.phase_end(start, Phase::Index);
                if let Some(file) = file {
                    let c = Candidate {
                        level,
                        run: run.id,
                        file,
                    };
                    if let Some(done) = probe_file(&c, probe, seek, policy)? {
                        return Ok(done);
                    }
                }
            }
        }
        Ok(Lookup::Absent)
    }

    #[cfg(any(test, feature = "internals"))]
    /// Appends to `out` the filters with resident units that a lookup of
    /// `user_key` would probe if every one said "maybe" (each run's candidate
    /// file, newest first; files without a filter are left out), opening
    /// tables whose filter is not registered yet. For reference measurements
    /// of the filter work alone (`sievedb bench --benchmarks filterprobe`).
    pub fn candidate_filters(
        &self,
        user_key: &[u8],
        out: &mut Vec<Arc<ResidentFilter>>,
    ) -> Result<()> {
        let mut probe = KeyProbe::new(user_key, crate::filter::HashSharing::Levels);
        for (level, runs) in self.levels.iter().enumerate() {
            for run in runs {
                let Some(f) = run.file_for(user_key) else {
                    continue;
                };
                if let Some(rf) = f.resident_filter(level, run.id, &mut probe)? {
                    if rf.resident() > 0 {
                        out.push(rf.clone());
                    }
                }
            }
        }
        Ok(())
    }
}

/// Candidate files a lookup finds (and prefetches) before probing any: one
/// per level under leveling; the runs left when they are found (a tiered
/// tree) are searched and probed one by one after these.
pub const PREFETCHED_RUNS: usize = 8;

/// The file of one run that may hold a lookup's key.
#[derive(Clone, Copy)]
struct Candidate<'a> {
    level: usize,
    run: u64,
    file: &'a Arc<FileMeta>,
}

/// Probes candidate `c`: its range tombstones, its filter, then its table.
/// `Some` ends the lookup with that answer; `None` goes on to older files.
/// Inlined: as a call it returned its result through memory and cost ~50
/// instructions per level (cachegrind).
#[inline(always)]
fn probe_file(
    c: &Candidate<'_>,
    probe: &mut KeyProbe<'_>,
    seek: &mut LazySeek<'_>,
    policy: ReadCtx,
) -> Result<Option<Lookup>> {
    let (f, level, user_key) = (c.file, c.level, probe.key());
    let ctx = ReadCtx { level, ..policy };
    // The newest range tombstone of this file covering the key and visible
    // to the read. Entries in older files are older still (file bounds cover
    // their tombstones, so no older file can hold a newer entry of a covered
    // key): once one is known, the key is deleted whatever an older file's
    // filter says.
    let covered = if f.range_dels > 0 {
        f.table(probe)?.max_covering(user_key, seek.seq())
    } else {
        0
    };
    let mut filtered = false;
    if let Some(rf) = f.resident_filter(level, c.run, probe)? {
        if probe.record_accesses {
            f.tables.filter_budget().record(f.number);
        }
        let (excluded, probed) = rf.excludes(probe, level);
        if excluded {
            return Ok((covered > 0).then_some(Lookup::Deleted));
        }
        filtered = probed;
    }
    let found = f
        .table(probe)?
        .get(probe, seek.get(user_key), ctx, filtered, covered)?;
    if found != Lookup::Absent {
        return Ok(Some(found));
    }
    Ok((covered > 0).then_some(Lookup::Deleted))
}

/// A change to a version, logged in the MANIFEST.
///
/// Encoding: a sequence of tagged fields; tag (varint) then payload:
/// 1 log_number, 2 next_file_number, 3 last_sequence (varints);
/// 4 delete file: level, number; 5 add file: level, run, number, size, entries
/// (varints), smallest, largest (length-prefixed internal keys); 6 add a file
/// holding range tombstones: the fields of 5 then `range_dels` (varint, > 0).
/// Tag 6 is written only for files with range tombstones, so databases that
/// never used range deletes keep a MANIFEST older builds read, and older
/// builds refuse (unknown tag) a MANIFEST whose files they would misread.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VersionEdit {
    /// WALs numbered below this are no longer needed.
    pub log_number: Option<u64>,
    /// Next unused file number.
    pub next_file_number: Option<u64>,
    /// Last sequence number written to an SST or WAL.
    pub last_sequence: Option<SeqNo>,
    /// (level, file number) removed.
    pub deleted: Vec<(usize, u64)>,
    /// Files added.
    pub added: Vec<NewFile>,
}

/// A file added by an edit.
#[derive(Clone, Debug, PartialEq)]
pub struct NewFile {
    /// Level.
    pub level: usize,
    /// Run id.
    pub run: u64,
    /// File number.
    pub number: u64,
    /// Size.
    pub size: u64,
    /// Entries.
    pub entries: u64,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
    /// Range tombstones in the file.
    pub range_dels: u64,
}

impl VersionEdit {
    /// Encodes the edit.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        for (tag, v) in [
            (1u64, self.log_number),
            (2, self.next_file_number),
            (3, self.last_sequence),
        ] {
            if let Some(v) = v {
                put_varint(&mut b, tag);
                put_varint(&mut b, v);
            }
        }
        for &(level, number) in &self.deleted {
            put_varint(&mut b, 4);
            put_varint(&mut b, level as u64);
            put_varint(&mut b, number);
        }
        for f in &self.added {
            put_varint(&mut b, if f.range_dels > 0 { 6 } else { 5 });
            for v in [f.level as u64, f.run, f.number, f.size, f.entries] {
                put_varint(&mut b, v);
            }
            put_bytes(&mut b, &f.smallest);
            put_bytes(&mut b, &f.largest);
            if f.range_dels > 0 {
                put_varint(&mut b, f.range_dels);
            }
        }
        b
    }

    /// Decodes an edit.
    pub fn decode(b: &[u8]) -> std::result::Result<VersionEdit, String> {
        let mut r = Reader::new(b);
        let mut e = VersionEdit::default();
        let t = || "version edit truncated".to_string();
        while r.remaining() > 0 {
            match r.varint().ok_or_else(t)? {
                1 => e.log_number = Some(r.varint().ok_or_else(t)?),
                2 => e.next_file_number = Some(r.varint().ok_or_else(t)?),
                3 => e.last_sequence = Some(r.varint().ok_or_else(t)?),
                4 => {
                    let level = r.varint().ok_or_else(t)? as usize;
                    e.deleted.push((level, r.varint().ok_or_else(t)?));
                }
                tag @ (5 | 6) => {
                    let mut v = [0u64; 5];
                    for x in &mut v {
                        *x = r.varint().ok_or_else(t)?;
                    }
                    let smallest = r.bytes().ok_or_else(t)?.to_vec();
                    let largest = r.bytes().ok_or_else(t)?.to_vec();
                    if smallest.len() < 8 || largest.len() < 8 {
                        return Err("file key range malformed".into());
                    }
                    let range_dels = if tag == 6 {
                        r.varint().ok_or_else(t)?
                    } else {
                        0
                    };
                    e.added.push(NewFile {
                        level: v[0] as usize,
                        run: v[1],
                        number: v[2],
                        size: v[3],
                        entries: v[4],
                        smallest,
                        largest,
                        range_dels,
                    });
                }
                tag => return Err(format!("unknown version edit tag {tag}")),
            }
        }
        Ok(e)
    }
}

impl VersionEdit {
    /// An edit adding every file of `v` at its level and run (the first
    /// record of a fresh MANIFEST; the caller sets the numbers).
    pub fn adding_all_of(v: &Version) -> VersionEdit {
        let mut snap = VersionEdit::default();
        for (level, runs) in v.levels.iter().enumerate() {
            for run in runs {
                for f in &run.files {
                    snap.added.push(f.placed_at(level, run.id));
                }
            }
        }
        snap
    }
}

/// The live version plus the MANIFEST it is logged to. Guarded by the database's
/// version mutex; readers get versions through `Db`'s `current` pointer.
pub struct VersionSet {
    dir: PathBuf,
    fs: Arc<dyn FileSystem>,
    tables: Arc<TableCache>,
    max_levels: usize,
    current: Arc<Version>,
    manifest: Option<LogWriter>,
    manifest_number: u64,
    /// A MANIFEST write failed and no fresh MANIFEST has been made current
    /// since: the failed edit may still be replayed by the next open.
    edit_in_doubt: bool,
    /// Next unused file number.
    pub next_file_number: u64,
    /// WALs numbered below this are obsolete.
    pub log_number: u64,
    /// Last sequence number made durable in an SST or logged to the MANIFEST.
    pub last_sequence: SeqNo,
}

/// Levels no valid [`crate::Options::max_levels`] reaches.
const MAX_LEVELS: usize = 64;

/// A MANIFEST larger than this is rewritten as a snapshot on the next edit.
const MANIFEST_ROLL_BYTES: u64 = 32 << 20;

impl VersionSet {
    /// An empty set for a new database (nothing written yet).
    pub fn new(
        dir: &Path,
        fs: Arc<dyn FileSystem>,
        tables: Arc<TableCache>,
        max_levels: usize,
    ) -> Self {
        VersionSet {
            dir: dir.to_path_buf(),
            fs,
            tables,
            max_levels,
            current: Arc::new(Version {
                levels: vec![Vec::new(); max_levels],
            }),
            manifest: None,
            manifest_number: 0,
            edit_in_doubt: false,
            next_file_number: 2,
            log_number: 0,
            last_sequence: 0,
        }
    }

    /// The live version.
    pub fn current(&self) -> Arc<Version> {
        self.current.clone()
    }

    /// Allocates a file number.
    pub fn new_file_number(&mut self) -> u64 {
        let n = self.next_file_number;
        self.next_file_number += 1;
        n
    }

    /// The live MANIFEST's number.
    pub fn manifest_number(&self) -> u64 {
        self.manifest_number
    }

    #[cfg(any(test, feature = "internals"))]
    /// Whether a MANIFEST write failed and no fresh MANIFEST has been made
    /// current since. While this holds, the edit whose write failed may still
    /// be replayed by the next open, so the files it adds must not be deleted
    /// (see the module docs). The next successful
    /// [`log_and_apply`](Self::log_and_apply) clears it.
    pub fn edit_in_doubt(&self) -> bool {
        self.edit_in_doubt
    }

    /// Replays the MANIFEST named by CURRENT.
    pub fn recover(&mut self) -> Result<()> {
        let cur_path = filename::current(&self.dir);
        let cur = self.fs.read_all(&cur_path)?;
        let name = std::str::from_utf8(&cur)
            .ok()
            .and_then(|s| s.strip_suffix('\n'))
            .filter(|s| s.starts_with("MANIFEST-") && !s.contains('/'))
            .ok_or_else(|| Error::corruption(&cur_path, "CURRENT does not name a MANIFEST"))?;
        let path = self.dir.join(name);
        let data = self.fs.read_all(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                Error::corruption(&path, "MANIFEST named by CURRENT is missing")
            }
            _ => Error::Io(e),
        })?;
        let mut files: BTreeMap<u64, (usize, NewFile)> = BTreeMap::new();
        let mut saw_next = false;
        for rec in read_records(&data, &path, crate::wal::Tail::Strict)? {
            let e = VersionEdit::decode(rec).map_err(|d| Error::corruption(&path, d))?;
            if let Some(v) = e.log_number {
                self.log_number = v;
            }
            if let Some(v) = e.next_file_number {
                self.next_file_number = v;
                saw_next = true;
            }
            if let Some(v) = e.last_sequence {
                self.last_sequence = v;
            }
            for (level, number) in &e.deleted {
                if files.remove(number).is_none_or(|(l, _)| l != *level) {
                    return Err(Error::corruption(
                        &path,
                        format!("edit deletes unknown file {number}"),
                    ));
                }
            }
            for f in e.added {
                files.insert(f.number, (f.level, f));
            }
        }
        if !saw_next {
            return Err(Error::corruption(
                &path,
                "MANIFEST has no file-number record",
            ));
        }
        // Only the live files matter: a level emptied since may lie beyond.
        if let Some((number, (level, _))) = files.iter().max_by_key(|(_, (l, _))| *l) {
            if *level >= MAX_LEVELS {
                return Err(Error::corruption(
                    &path,
                    format!("file {number} at level {level}, beyond any valid max_levels"),
                ));
            }
            if *level >= self.max_levels {
                return Err(Error::InvalidArgument(format!(
                    "max_levels is {} but the database holds file {number} at level {level}: \
                     open it with max_levels of at least {}",
                    self.max_levels,
                    level + 1
                )));
            }
        }
        let mut v = Version {
            levels: vec![Vec::new(); self.max_levels],
        };
        for (_, (level, f)) in files {
            if f.number >= self.next_file_number {
                return Err(Error::corruption(
                    &path,
                    "file number beyond next_file_number",
                ));
            }
            add_file(&mut v, level, f.run, self.meta(&f));
        }
        v.refresh_fences(|_| true);
        register_filters(&v, |_| true);
        self.tables.filter_budget().warm_start();
        self.current = Arc::new(v);
        self.manifest_number = name[9..].parse().unwrap_or(0);
        Ok(())
    }

    fn meta(&self, f: &NewFile) -> Arc<FileMeta> {
        Arc::new(FileMeta {
            number: f.number,
            size: f.size,
            entries: f.entries,
            smallest: f.smallest.clone(),
            largest: f.largest.clone(),
            range_dels: f.range_dels,
            obsolete: AtomicBool::new(false),
            tables: self.tables.clone(),
            filter: OnceLock::new(),
        })
    }

    /// Writes `edit` durably to the MANIFEST and installs the resulting version.
    /// Files the edit deletes (and does not re-add) become obsolete.
    ///
    /// On error the live version is unchanged and the MANIFEST that failed is
    /// abandoned: this call tries once to start a fresh one (a snapshot of the
    /// unchanged version), and otherwise the next call does, instead of
    /// appending after a possibly torn record (see the module docs).
    pub fn log_and_apply(&mut self, mut edit: VersionEdit) -> Result<Arc<Version>> {
        edit.next_file_number = Some(self.next_file_number);
        if edit.log_number.is_none() {
            edit.log_number = Some(self.log_number);
        }
        if edit.last_sequence.is_none() {
            edit.last_sequence = Some(self.last_sequence);
        }
        let next = self.apply(&edit);
        let roll = self
            .manifest
            .as_ref()
            .is_none_or(|m| m.size() > MANIFEST_ROLL_BYTES);
        if roll {
            self.write_new_manifest(&next, &edit)?;
        } else {
            let m = self.manifest.as_mut().expect("manifest open");
            if let Err(e) = m.add_record(&edit.encode()).and_then(|()| m.sync()) {
                self.abandon_manifest();
                return Err(e);
            }
        }
        if let Some(v) = edit.log_number {
            self.log_number = v;
        }
        if let Some(v) = edit.last_sequence {
            self.last_sequence = self.last_sequence.max(v);
        }
        let readded: std::collections::HashSet<u64> = edit.added.iter().map(|f| f.number).collect();
        for (_, number) in &edit.deleted {
            if readded.contains(number) {
                continue;
            }
            if let Some((_, f)) = self.current.files().find(|(_, f)| f.number == *number) {
                f.obsolete.store(true, AtOrd::Release);
            }
        }
        self.inherit_hotness(&edit, &next);
        register_filters(&next, |n| edit.added.iter().any(|f| f.number == n));
        self.current = Arc::new(next);
        Ok(self.current.clone())
    }

    /// Gives the files `edit` writes the hotness of the files it deletes (a
    /// flush deletes none; a move re-adds what it deletes).
    fn inherit_hotness(&self, edit: &VersionEdit, next: &Version) {
        let budget = self.tables.filter_budget();
        if !budget.limited() {
            return;
        }
        let moved = |n: u64| edit.added.iter().any(|f| f.number == n);
        fn shape(level: usize, run: u64, f: &FileMeta) -> (FileShape, &[u8], &[u8]) {
            (f.shape(level, run), f.smallest_user(), f.largest_user())
        }
        let mut inputs = Vec::new();
        for (level, runs) in self.current.levels.iter().enumerate() {
            for run in runs {
                for f in &run.files {
                    if !moved(f.number) && edit.deleted.contains(&(level, f.number)) {
                        inputs.push(shape(level, run.id, f));
                    }
                }
            }
        }
        let mut outputs = Vec::new();
        for (level, runs) in next.levels.iter().enumerate() {
            for run in runs {
                for f in &run.files {
                    let new = edit.added.iter().any(|a| a.number == f.number)
                        && !edit.deleted.iter().any(|&(_, n)| n == f.number);
                    if new {
                        outputs.push(shape(level, run.id, f));
                    }
                }
            }
        }
        budget.inherit(&inputs, &outputs);
    }

    /// After a failed append or sync of the live MANIFEST: never append to it
    /// again, and try once to make a fresh MANIFEST of the (unchanged) live
    /// version current, so that the failed edit is provably gone. If that
    /// fails too, the next `log_and_apply` rolls over instead.
    fn abandon_manifest(&mut self) {
        self.manifest = None;
        self.edit_in_doubt = true;
        let v = self.current.clone();
        let snapshot = VersionEdit {
            log_number: Some(self.log_number),
            last_sequence: Some(self.last_sequence),
            ..VersionEdit::default()
        };
        let _ = self.write_new_manifest(&v, &snapshot);
    }

    /// The version `edit` makes of the current one.
    fn apply(&self, edit: &VersionEdit) -> Version {
        let mut v = (*self.current).clone();
        for &(level, number) in &edit.deleted {
            for run in &mut v.levels[level] {
                run.files.retain(|f| f.number != number);
            }
            v.levels[level].retain(|r| !r.files.is_empty());
        }
        for nf in &edit.added {
            let existing = self.current.files().find(|(_, f)| f.number == nf.number);
            // A moved file keeps its metadata: versions from before and after the
            // move share one `FileMeta`, so the file lives as long as either.
            let meta = match existing {
                Some((_, f)) => f.clone(),
                None => self.meta(nf),
            };
            add_file(&mut v, nf.level, nf.run, meta);
        }
        v.refresh_fences(|level| {
            edit.deleted.iter().any(|&(l, _)| l == level)
                || edit.added.iter().any(|f| f.level == level)
        });
        v
    }

    /// Starts a new MANIFEST holding a snapshot of `v`, then points CURRENT at it.
    ///
    /// On failure the writer of the old MANIFEST is dropped too (the next edit
    /// rolls over again). A failure before `CURRENT` was touched removes the
    /// new file; a failure while switching `CURRENT` may have left it naming
    /// the new MANIFEST, which holds `edit`, so that edit is in doubt.
    fn write_new_manifest(&mut self, v: &Version, edit: &VersionEdit) -> Result<()> {
        let number = self.new_file_number();
        let path = filename::manifest(&self.dir, number);
        let snap = VersionEdit {
            log_number: edit.log_number,
            next_file_number: Some(self.next_file_number),
            last_sequence: edit.last_sequence,
            ..VersionEdit::adding_all_of(v)
        };
        let written = (|| {
            let mut w = LogWriter::new(self.fs.create(&path)?, path.clone());
            w.add_record(&snap.encode())?;
            w.sync()?;
            Ok::<_, Error>(w)
        })();
        let w = match written {
            Ok(w) => w,
            Err(e) => {
                self.manifest = None;
                let _ = self.fs.remove_file(&path);
                return Err(e);
            }
        };
        if let Err(e) = set_current(self.fs.as_ref(), &self.dir, number) {
            self.manifest = None;
            self.edit_in_doubt = true;
            return Err(e);
        }
        let old = self.manifest_number;
        self.manifest = Some(w);
        self.manifest_number = number;
        self.edit_in_doubt = false;
        if old != 0 {
            let _ = self.fs.remove_file(&filename::manifest(&self.dir, old));
        }
        Ok(())
    }
}

/// Tells the filter budget about the files of `v` that `chosen` selects by
/// number (new files, or moved ones, which learn their new place), in one
/// batch and without reading them: a file's filter is read at its first
/// lookup ([`FileMeta::resident_filter`]), so opening a tree of any size
/// reads no filter.
fn register_filters(v: &Version, chosen: impl Fn(u64) -> bool) {
    let Some((_, first)) = v.files().next() else {
        return;
    };
    let budget = first.tables.filter_budget();
    if !budget.limited() {
        return;
    }
    budget.set_tree_entries(v.files().map(|(_, f)| f.entries).sum());
    if budget.needs_shape() {
        // One table of the largest level tells the shape the tree's filters
        // have (one table open), so that the plan is made with it.
        let last = v.levels.iter().rev().flatten().flat_map(|r| &r.files).next();
        if let Some(table) = last.and_then(|f| f.tables.get(f.number).ok()) {
            if let Some(index) = table.filter_index() {
                budget.learn_shape(index);
            }
        }
    }
    let mut shapes = Vec::new();
    for (level, runs) in v.levels.iter().enumerate() {
        for run in runs {
            for f in run.files.iter().filter(|f| chosen(f.number)) {
                if !matches!(f.filter.get(), Some(None)) {
                    shapes.push(f.shape(level, run.id));
                }
            }
        }
    }
    budget.add_files(&shapes);
}

/// Atomically points CURRENT at MANIFEST `number` (write temp, fsync, rename, fsync dir).
pub fn set_current(fs: &dyn FileSystem, dir: &Path, number: u64) -> Result<()> {
    let tmp = dir.join(format!("{number:06}.dbtmp.tmp"));
    let mut f = fs.create(&tmp)?;
    f.append(format!("MANIFEST-{number:06}\n").as_bytes())?;
    f.sync()?;
    drop(f);
    fs.rename(&tmp, &filename::current(dir))?;
    fs.sync_dir(dir)?;
    Ok(())
}

/// Inserts `f` into run `run_id` of `level`, keeping the ordering invariants.
fn add_file(v: &mut Version, level: usize, run_id: u64, f: Arc<FileMeta>) {
    let runs = &mut v.levels[level];
    let run = match runs.iter_mut().position(|r| r.id == run_id) {
        Some(i) => &mut runs[i],
        None => {
            let pos = runs.partition_point(|r| r.id > run_id);
            runs.insert(pos, Run::new(run_id));
            &mut runs[pos]
        }
    };
    let pos = run
        .files
        .partition_point(|g| key::compare(&g.smallest, &f.smallest) == Ordering::Less);
    run.files.insert(pos, f);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_with_range_tombstones_use_tag_6() {
        let file = |number, range_dels| NewFile {
            level: 1,
            run: 0,
            number,
            size: 10,
            entries: 1,
            smallest: key::internal_key(b"a", 1, key::Kind::Put),
            largest: key::internal_key(b"b", 1, key::Kind::Put),
            range_dels,
        };
        let plain = VersionEdit {
            added: vec![file(7, 0)],
            ..VersionEdit::default()
        };
        let with = VersionEdit {
            added: vec![file(7, 0), file(8, 3)],
            ..VersionEdit::default()
        };
        assert_eq!(plain.encode()[0], 5);
        assert_eq!(VersionEdit::decode(&plain.encode()).unwrap(), plain);
        assert_eq!(VersionEdit::decode(&with.encode()).unwrap(), with);
        assert!(with.encode().contains(&6));
        let b = with.encode();
        assert!(VersionEdit::decode(&b[..b.len() - 1]).is_err());
    }
}
