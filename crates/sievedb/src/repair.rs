//! Repair: rebuilds a database from the SSTs and WALs in its directory when its
//! MANIFEST is lost or damaged (LevelDB's `RepairDB`), through
//! [`Db::repair`](crate::Db::repair).
//!
//! # What it does
//!
//! 1. Takes the directory's `LOCK` (the database must not be open).
//! 2. Reads every `NNNNNN.sst` in full, checking every block checksum. A table
//!    that fails to open or to read (or yields fewer entries than its
//!    properties promise) is *damaged*: the entries read before the damage are
//!    salvaged, the rest are lost, and the file is moved to `lost/`.
//! 3. Reads every `NNNNNN.log` (WAL) with the recovery rule of the next open (a
//!    torn tail is dropped). Damage before the tail loses the records from the
//!    damage on; the file is then moved to `lost/`. A WAL numbered below the
//!    `log_number` of a readable record of any MANIFEST present was already
//!    flushed (left behind by a crash between a flush's MANIFEST edit and the
//!    WAL's deletion): it is skipped, since newer writes may have overridden
//!    its values, or deleted them with a tombstone since compacted away.
//!    Without a readable MANIFEST such a leftover WAL cannot be recognised:
//!    its records are merged by sequence number, which is right for values
//!    overridden by entries still in the tables, but brings back values whose
//!    delete was compacted away, and applies its merge operands a second
//!    time. (Sequence numbers alone cannot tell: an interrupted repair
//!    leaves partial outputs holding newer entries, and a compaction's
//!    partial merge stands for several operands under one number.)
//! 4. Merges everything read (tables, salvaged entries, WAL records) in
//!    internal-key order: user key ascending, then sequence number descending.
//!    Sequence numbers order all writes of a database across every file, so
//!    the first entry of each user key is its newest version, whatever level,
//!    run or file it came from. The file numbers and the old level placement,
//!    which a lost MANIFEST no longer tells, are not needed: a compaction
//!    output can have a higher number than a file holding newer data, so file
//!    order is not trusted.
//! 5. Writes the newest version of every key as new SSTs forming one run (run
//!    id 0) of the last level (`max_levels - 1`) of `opts`, cut at
//!    `target_file_size`. The newest version of a deleted key is its
//!    tombstone, and it is kept: the outputs of a repair interrupted before
//!    `CURRENT` switched are orphans that a second repair reads again, and
//!    without the tombstones they would hide nothing of the older versions
//!    they superseded. Later compactions into the last level drop them.
//! 6. Writes a new MANIFEST listing only those files, with `log_number` past
//!    every WAL present (their records are in the new files),
//!    `last_sequence` = the largest sequence number seen and `next_file_number`
//!    past every file, fsyncs it and switches `CURRENT` to it (temporary file,
//!    fsync, rename, directory fsync).
//! 7. Only then deletes the old SSTs and WALs and moves the old MANIFESTs to
//!    `lost/`.
//!
//! # Crash safety
//!
//! Until `CURRENT` switches, the only changes are new files with fresh numbers
//! (orphans that the next open or repair deletes or re-reads; every entry in
//! them is also in the old files) and damaged files moved to `lost/` (which the
//! old state could not read either). After the switch the new MANIFEST is
//! complete and every file it names is durable; the old files are orphans the
//! next open deletes if the clean-up did not finish. Repair can be rerun.
//!
//! # Keyspaces
//!
//! Each SST names its keyspace (id and name) in its properties and each WAL
//! entry its keyspace id, so steps 4 to 6 run per keyspace: every keyspace
//! gets its own run in the last level, under its old id and name, all in one
//! new MANIFEST. The ids and names of keyspaces whose data is only in WALs,
//! and which keyspaces were dropped, come from the readable records of any
//! MANIFEST present: entries of a keyspace it shows dropped are not kept. A
//! keyspace no MANIFEST names is kept under its SSTs' name (or
//! `keyspace-<id>` when only WAL entries have it).
//!
//! The result holds the newest value of every key that was readable, and no
//! deleted key; snapshots and older versions are not kept. Open it with the
//! same `max_levels` (a smaller one refuses it); compaction reshapes the tree
//! as writes arrive.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::batch;
use crate::compaction::{self, OutputCtx};
use crate::error::{Error, Result};
use crate::io::{filename, FileSystem};
use crate::iter::{InternalIterator, MergingIterator, VecIter};
use crate::key::{self, SeqNo, MAX_SEQ};
use crate::memtable::Memtable;
use crate::options::Options;
use crate::range_del::RangeTombstone;
use crate::sst::reader::{ReadCtx, TableReader};
use crate::stats::Counters;
use crate::version::{set_current, VersionEdit};
use crate::wal::{is_torn_tail, scan_remains, sync_mark, LogItem, LogReader, LogWriter};

/// What [`Db::repair`](crate::Db::repair) found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RepairReport {
    /// SSTs read in full.
    pub tables_read: usize,
    /// SSTs that failed to open or to read in full (moved to `lost/`).
    pub tables_damaged: usize,
    /// Entries read from damaged SSTs before their damage (kept).
    pub entries_salvaged: u64,
    /// Entries of damaged SSTs that could not be read: what their properties
    /// block promised beyond those salvaged (a lower bound: a table whose
    /// properties are unreadable counts 0).
    pub entries_lost: u64,
    /// WALs read (including damaged ones).
    pub wals_read: usize,
    /// WALs with damage before their tail (moved to `lost/`; their records
    /// from the damage on are lost).
    pub wals_damaged: usize,
    /// WALs skipped because a MANIFEST record shows they were already
    /// flushed (see the module docs).
    pub wals_stale: usize,
    /// Entries (puts and deletes) merged from the other WALs.
    pub wal_entries: u64,
    /// Entries merged: from whole tables, salvaged entries and WALs.
    pub entries_read: u64,
    /// Entries written: the newest version of every key (a tombstone for a
    /// deleted key).
    pub entries_kept: u64,
    /// Level the new files were written to (one run).
    pub level: usize,
    /// Numbers of the new SSTs.
    pub output_files: Vec<u64>,
    /// Bytes of the new SSTs.
    pub output_bytes: u64,
    /// Number of the new MANIFEST (`CURRENT` names it).
    pub manifest_number: u64,
    /// Largest sequence number seen (the new MANIFEST's `last_sequence`).
    pub last_sequence: SeqNo,
    /// The keyspaces rebuilt besides the default one, by name.
    pub keyspaces: Vec<String>,
    /// Old MANIFESTs replaced (moved to `lost/`).
    pub manifests_replaced: usize,
    /// Files moved to `lost/`, by their new path.
    pub lost_files: Vec<PathBuf>,
}

/// Repairs the database in `dir` (see the module docs).
pub fn repair(dir: &Path, opts: &Options, fs: Arc<dyn FileSystem>) -> Result<RepairReport> {
    opts.validate()?;
    let fs = fs.as_ref();
    if !fs.is_dir(dir) {
        let why = if fs.exists(dir) {
            "is not a directory"
        } else {
            "does not exist"
        };
        return Err(Error::InvalidArgument(format!(
            "database directory {} {why}",
            dir.display()
        )));
    }
    let _lock = crate::io::lock_dir(fs, dir)?;
    let files = Inventory::list(fs, dir)?;
    let mut report = RepairReport {
        level: opts.max_levels - 1,
        ..RepairReport::default()
    };
    let mut inputs = MergeInputs {
        known: known_keyspaces(fs, dir, &files.manifests),
        ..MergeInputs::default()
    };
    inputs.read_tables(fs, dir, opts, &files.ssts, &mut report);
    inputs.read_wals(fs, dir, &files, &mut report);
    // Damaged files go to lost/ first: the old state could not read them either.
    let lost = filename::lost(dir);
    if !inputs.damaged.is_empty() {
        crate::io::create_dir_all_durable(fs, &lost)?;
        for path in &inputs.damaged {
            report.lost_files.push(move_to_lost(fs, path, &lost)?);
        }
        fs.sync_dir(&lost)?;
        fs.sync_dir(dir)?;
    }
    let max_seq = inputs.max_seq;
    let (number, edits) = write_merged(fs, dir, opts, files.max_number, inputs)?;
    // From here a failure may have switched CURRENT: leave the files alone.
    set_current(fs, dir, number)?;
    report.manifest_number = number;
    report.last_sequence = max_seq;
    let added = || edits.iter().flat_map(|e| &e.added);
    report.entries_kept = added().map(|f| f.entries).sum();
    report.output_bytes = added().map(|f| f.size).sum();
    report.output_files = added().map(|f| f.number).collect();
    report.keyspaces = edits[0].created.iter().map(|k| k.name.clone()).collect();
    files.clean_up(fs, dir, &lost, &mut report)?;
    Ok(report)
}

/// The database files found in the directory.
#[derive(Default)]
struct Inventory {
    ssts: Vec<u64>,
    wals: Vec<u64>,
    manifests: Vec<u64>,
    temps: Vec<String>,
    /// The largest file number in use.
    max_number: u64,
}

impl Inventory {
    fn list(fs: &dyn FileSystem, dir: &Path) -> Result<Inventory> {
        use filename::FileKind;
        let mut files = Inventory {
            max_number: 1,
            ..Inventory::default()
        };
        for name in fs.list_dir(dir)? {
            let n = match filename::parse(&name) {
                Some(FileKind::Sst(n)) => {
                    files.ssts.push(n);
                    n
                }
                Some(FileKind::Wal(n)) => {
                    files.wals.push(n);
                    n
                }
                Some(FileKind::Manifest(n)) => {
                    files.manifests.push(n);
                    n
                }
                Some(FileKind::Temp) => {
                    files.temps.push(name);
                    continue;
                }
                None => continue,
            };
            files.max_number = files.max_number.max(n);
        }
        files.ssts.sort_unstable();
        files.wals.sort_unstable();
        files.manifests.sort_unstable();
        Ok(files)
    }

    /// After `CURRENT` switched: the old files are orphans (the next open
    /// would delete them); old MANIFESTs are kept in `lost`.
    fn clean_up(
        &self,
        fs: &dyn FileSystem,
        dir: &Path,
        lost: &Path,
        report: &mut RepairReport,
    ) -> Result<()> {
        for &n in &self.ssts {
            let _ = fs.remove_file(&filename::sst(dir, n));
        }
        for &n in &self.wals {
            let _ = fs.remove_file(&filename::wal(dir, n));
        }
        for name in &self.temps {
            let _ = fs.remove_file(&dir.join(name));
        }
        for &n in &self.manifests {
            let path = filename::manifest(dir, n);
            crate::io::create_dir_all_durable(fs, lost)?;
            if let Ok(p) = move_to_lost(fs, &path, lost) {
                report.lost_files.push(p);
                report.manifests_replaced += 1;
            }
        }
        if report.manifests_replaced > 0 {
            fs.sync_dir(lost)?;
        }
        fs.sync_dir(dir)?;
        Ok(())
    }
}

/// What repair merges for one keyspace: one sorted source per table (or its
/// salvaged entries) and one for the WAL records.
#[derive(Default)]
struct Group {
    /// The keyspace's name (empty: the default keyspace, or not known yet).
    name: String,
    children: Vec<Box<dyn InternalIterator>>,
    /// The range tombstones of the tables and WALs: merged like the entries,
    /// so range-deleted data stays deleted.
    range_dels: Vec<RangeTombstone>,
}

/// What the readable MANIFEST records tell of keyspaces.
#[derive(Default)]
struct KnownKeyspaces {
    /// Names by id of the keyspaces created.
    names: std::collections::BTreeMap<u32, String>,
    /// Ids of the keyspaces dropped.
    dropped: Vec<u32>,
    /// The next unused keyspace id.
    next_id: u32,
}

/// Everything repair merges, by keyspace id.
#[derive(Default)]
struct MergeInputs {
    groups: std::collections::BTreeMap<u32, Group>,
    known: KnownKeyspaces,
    /// The largest sequence number seen.
    max_seq: SeqNo,
    /// Files with damage, to be moved to `lost/`.
    damaged: Vec<PathBuf>,
}

impl MergeInputs {
    /// The group of keyspace `id` (named `name` by an SST), or `None` when a
    /// MANIFEST shows it dropped.
    fn group(&mut self, id: u32, name: &str) -> Option<&mut Group> {
        if self.known.dropped.contains(&id) {
            return None;
        }
        let g = self.groups.entry(id).or_default();
        if g.name.is_empty() {
            g.name = name.to_string();
        }
        Some(g)
    }

    /// Every table read in full, or what is salvageable of a damaged one.
    fn read_tables(
        &mut self,
        fs: &dyn FileSystem,
        dir: &Path,
        opts: &Options,
        ssts: &[u64],
        report: &mut RepairReport,
    ) {
        let counters = Arc::new(Counters::new(opts.max_levels));
        for &n in ssts {
            let path = filename::sst(dir, n);
            match scan_table(fs, &path, n, &counters) {
                Ok((table, entries, seq)) => {
                    report.tables_read += 1;
                    report.entries_read += entries;
                    self.max_seq = self.max_seq.max(seq);
                    for t in table.range_dels() {
                        self.max_seq = self.max_seq.max(t.seq);
                    }
                    let props = table.properties();
                    let Some(g) = self.group(props.keyspace, &props.keyspace_name.clone()) else {
                        continue;
                    };
                    g.range_dels.extend_from_slice(table.range_dels());
                    let ctx = ReadCtx {
                        level: 0,
                        fill_cache: false,
                        verify_checksums: true,
                    };
                    g.children.push(Box::new(table.iter(ctx)));
                }
                Err(promised) => {
                    let (ks, mut salvaged) = salvage_table(fs, &path, n, &counters);
                    salvaged.sort_by(|a, b| key::compare(&a.0, &b.0));
                    report.tables_damaged += 1;
                    report.entries_salvaged += salvaged.len() as u64;
                    report.entries_read += salvaged.len() as u64;
                    report.entries_lost += promised.saturating_sub(salvaged.len() as u64);
                    for (k, _) in &salvaged {
                        self.max_seq = self.max_seq.max(key::parse(k).map_or(0, |p| p.seq));
                    }
                    self.damaged.push(path);
                    if let Some(g) = self.group(ks.0, &ks.1) {
                        g.children.push(Box::new(VecIter::new(salvaged)));
                    }
                }
            }
        }
    }

    /// The records of every WAL up to its damage, unless it is known to be
    /// flushed already (see the module docs): its records then are in the
    /// tables or were overridden.
    fn read_wals(
        &mut self,
        fs: &dyn FileSystem,
        dir: &Path,
        files: &Inventory,
        report: &mut RepairReport,
    ) {
        let flushed_below = manifest_log_number(fs, dir, &files.manifests);
        let mut mems: std::collections::BTreeMap<u32, Arc<Memtable>> = Default::default();
        for &n in &files.wals {
            let path = filename::wal(dir, n);
            report.wals_read += 1;
            let (records, mut intact) = log_prefix(fs, &path);
            let mut batches = Vec::new();
            for rec in &records {
                match batch::decode(rec) {
                    Ok(b) => batches.push(b),
                    Err(_) => {
                        intact = false;
                        break;
                    }
                }
            }
            let wal_max = batches
                .iter()
                .map(|(seq, e)| seq + (e.len() as u64).saturating_sub(1))
                .max();
            if let Some(m) = wal_max {
                self.max_seq = self.max_seq.max(m);
            }
            if !intact {
                report.wals_damaged += 1;
                self.damaged.push(path);
            }
            if n < flushed_below || wal_max.is_none() {
                report.wals_stale += usize::from(wal_max.is_some());
                continue;
            }
            for (seq, entries) in &batches {
                for (i, e) in entries.iter().enumerate() {
                    if self.known.dropped.contains(&e.keyspace) {
                        continue;
                    }
                    let mem = mems
                        .entry(e.keyspace)
                        .or_insert_with(|| Arc::new(Memtable::new(0)));
                    mem.apply(seq + i as u64, e);
                    report.wal_entries += 1;
                }
            }
        }
        report.entries_read += report.wal_entries;
        for (id, mem) in mems {
            let g = self.group(id, "").expect("dropped keyspaces skipped above");
            g.range_dels.extend(mem.range_dels());
            if !mem.is_empty() {
                g.children.push(Box::new(mem.iter()));
            }
        }
    }
}

/// Merges each keyspace's `inputs` into one run of the last level (newest
/// version per key; tombstones kept, see the module docs) numbered after
/// `max_number`, and writes the MANIFEST that lists them (not yet current);
/// returns its number and its edits, the default keyspace's first (creating
/// the others). On failure the new files are removed: nothing names them
/// yet, and the old state stays.
fn write_merged(
    fs: &dyn FileSystem,
    dir: &Path,
    opts: &Options,
    max_number: u64,
    mut inputs: MergeInputs,
) -> Result<(u64, Vec<VersionEdit>)> {
    let first_new = max_number + 1;
    let next = AtomicU64::new(first_new);
    let new_number = || next.fetch_add(1, Ordering::Relaxed);
    inputs.groups.entry(0).or_default();
    let names = keyspace_names(&inputs);
    let next_id = inputs
        .groups
        .keys()
        .max()
        .map_or(1, |m| m + 1)
        .max(inputs.known.next_id);
    let written = (|| {
        let mut edits = Vec::new();
        for (id, g) in std::mem::take(&mut inputs.groups) {
            let ctx = OutputCtx {
                fs,
                dir,
                opts,
                level: opts.max_levels - 1,
                run: 0,
                split: true,
                smallest_snapshot: MAX_SEQ,
                new_file_number: &new_number,
                filter: None,
                keyspace: (id, names.get(&id).map_or("", String::as_str)),
            };
            let mut merged = MergingIterator::new(g.children);
            // Tombstones are kept (as point tombstones are): a damaged table's
            // salvaged entries may still need them.
            let range_dels = compaction::RangeDels {
                tombstones: g.range_dels,
                is_bottom: &|_| false,
            };
            let outputs = compaction::write_outputs(&mut merged, &ctx, &|_| false, range_dels)?;
            edits.push(VersionEdit {
                keyspace: id,
                added: outputs,
                ..VersionEdit::default()
            });
        }
        fs.sync_dir(dir)?;
        let number = new_number();
        let head = &mut edits[0];
        head.log_number = Some(number + 1);
        head.next_file_number = Some(number + 1);
        head.last_sequence = Some(inputs.max_seq);
        // The marker of the lost MANIFEST cannot be read: repair takes
        // the TTL-ness from the options (see `Db::repair`).
        head.ttl_stamped = opts.ttl.is_some();
        head.next_keyspace_id = Some(next_id);
        head.created = names
            .iter()
            .filter(|(&id, _)| id != 0)
            .map(|(&id, name)| crate::version::KeyspaceRecord {
                id,
                name: name.clone(),
                ttl_stamped: opts.ttl.is_some(),
            })
            .collect();
        let path = filename::manifest(dir, number);
        let mut w = LogWriter::new(fs.create(&path)?, path);
        w.add_record(&crate::version::encode_record(&edits))?;
        w.sync()?;
        Ok::<_, Error>((number, edits))
    })();
    if written.is_err() {
        for n in first_new..next.load(Ordering::Relaxed) {
            let _ = fs.remove_file(&filename::sst(dir, n));
            let _ = fs.remove_file(&filename::manifest(dir, n));
        }
    }
    written
}

/// The name of each keyspace repair rebuilds: the MANIFEST's, else its
/// SSTs', else `keyspace-<id>`; a name two ids share gets `-<id>` appended
/// for all but the newest id.
fn keyspace_names(inputs: &MergeInputs) -> std::collections::BTreeMap<u32, String> {
    let mut names = std::collections::BTreeMap::new();
    for (&id, g) in inputs.groups.iter().rev() {
        if id == 0 {
            continue;
        }
        let name = inputs
            .known
            .names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| match g.name.as_str() {
                "" => format!("keyspace-{id}"),
                n => n.to_string(),
            });
        let name = match names.values().any(|n| *n == name) {
            true => format!("{name}-{id}"),
            false => name,
        };
        names.insert(id, name);
    }
    names
}

/// What the readable records of the MANIFESTs `manifests` tell of
/// keyspaces (nothing when none is readable).
fn known_keyspaces(fs: &dyn FileSystem, dir: &Path, manifests: &[u64]) -> KnownKeyspaces {
    let mut known = KnownKeyspaces::default();
    for &n in manifests {
        for rec in log_prefix(fs, &filename::manifest(dir, n)).0 {
            let Ok(edits) = crate::version::decode_record(&rec) else {
                break;
            };
            for e in edits {
                for k in e.created {
                    known.next_id = known.next_id.max(k.id + 1);
                    known.names.insert(k.id, k.name);
                }
                for id in e.dropped {
                    known.names.remove(&id);
                    known.dropped.push(id);
                }
                known.next_id = known.next_id.max(e.next_keyspace_id.unwrap_or(0));
            }
        }
    }
    known
}

/// Opens and reads table `number` in full. On success: the table, its entry
/// count and largest sequence number; on damage: the entries its properties
/// promise (0 if unreadable).
fn scan_table(
    fs: &dyn FileSystem,
    path: &Path,
    number: u64,
    counters: &Arc<Counters>,
) -> std::result::Result<(Arc<TableReader>, u64, SeqNo), u64> {
    let table = TableReader::open(fs, path, number, false, true, None, counters.clone())
        .map(Arc::new)
        .map_err(|_| 0u64)?;
    let promised = table.properties().entries;
    let mut it = table.iter(ReadCtx {
        level: 0,
        fill_cache: false,
        verify_checksums: true,
    });
    let (mut entries, mut max_seq) = (0u64, 0);
    it.seek_to_first().map_err(|_| promised)?;
    while it.valid() {
        match key::parse(it.key()) {
            Some(p) => max_seq = max_seq.max(p.seq),
            None => return Err(promised),
        }
        entries += 1;
        it.next().map_err(|_| promised)?;
    }
    if entries != promised {
        return Err(promised);
    }
    Ok((table, entries, max_seq))
}

/// A table's keyspace: id and name, from its properties.
type TableKeyspace = (u32, String);

/// An entry salvaged: internal key and value.
type Entry = (Vec<u8>, Vec<u8>);

/// The keyspace (id, name: the default one when unreadable) and the entries
/// of a damaged table readable before its damage, in order.
fn salvage_table(
    fs: &dyn FileSystem,
    path: &Path,
    number: u64,
    counters: &Arc<Counters>,
) -> (TableKeyspace, Vec<Entry>) {
    let mut out = Vec::new();
    let Ok(table) = TableReader::open(fs, path, number, false, true, None, counters.clone()) else {
        return ((0, String::new()), out);
    };
    let ks = (
        table.properties().keyspace,
        table.properties().keyspace_name.clone(),
    );
    let table = Arc::new(table);
    let mut it = table.iter(ReadCtx {
        level: 0,
        fill_cache: false,
        verify_checksums: true,
    });
    let mut ok = it.seek_to_first().is_ok();
    while ok && it.valid() {
        if key::parse(it.key()).is_none() {
            break;
        }
        out.push((it.key().to_vec(), it.value().to_vec()));
        ok = it.next().is_ok();
    }
    (ks, out)
}

/// The largest `log_number` any readable record of any MANIFEST names: WALs
/// numbered below it were flushed (0 when no MANIFEST is readable).
fn manifest_log_number(fs: &dyn FileSystem, dir: &Path, manifests: &[u64]) -> u64 {
    let mut log_number = 0;
    for &n in manifests {
        for rec in log_prefix(fs, &filename::manifest(dir, n)).0 {
            match crate::version::decode_record(&rec) {
                Ok(edits) => {
                    let n = edits.iter().filter_map(|e| e.log_number).max();
                    log_number = log_number.max(n.unwrap_or(0));
                }
                Err(_) => break,
            }
        }
    }
    log_number
}

/// The records of log `path` up to its first damage, and whether there was
/// none (a torn tail, as the next open would drop it, is not damage; an
/// unreadable file is).
fn log_prefix(fs: &dyn FileSystem, path: &Path) -> (Vec<Vec<u8>>, bool) {
    let mut out = Vec::new();
    let Ok(file) = fs.open_random(path, false) else {
        return (out, false);
    };
    let mut reader = LogReader::new(file.as_ref(), path);
    loop {
        match reader.next_item() {
            // A sync mark holds no writes.
            Ok(LogItem::Record { payload, .. }) if sync_mark::parse(payload).is_some() => {}
            Ok(LogItem::Record { payload, .. }) => out.push(payload.to_vec()),
            Ok(LogItem::End) => return (out, true),
            Ok(LogItem::Damaged(d)) => {
                let torn = scan_remains(file.as_ref(), path, d.offset)
                    .is_ok_and(|rest| is_torn_tail(&d, &rest));
                return (out, torn);
            }
            Err(_) => return (out, false),
        }
    }
}

/// Moves `path` into `lost` under its own name (or with a `.N` suffix if taken).
fn move_to_lost(fs: &dyn FileSystem, path: &Path, lost: &Path) -> Result<PathBuf> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut target = lost.join(&name);
    let mut i = 1;
    while fs.exists(&target) {
        target = lost.join(format!("{name}.{i}"));
        i += 1;
    }
    fs.rename(path, &target)?;
    Ok(target)
}
