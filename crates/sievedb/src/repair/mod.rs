//! Repair: rebuilds a database from the SSTs and WALs in its directory when its
//! MANIFEST is lost or damaged, or a table the MANIFEST lists is missing,
//! cut or damaged (an open refuses a missing or cut one; LevelDB's
//! `RepairDB`), through [`Db::repair`](crate::Db::repair), and says what was
//! lost (see "What is counted").
//!
//! # What it does
//!
//! 1. Takes the directory's `LOCK` (the database must not be open).
//! 2. Reads every `NNNNNN.sst` in full, checking every block checksum. A table
//!    that fails to open or to read (or yields fewer entries than its
//!    properties promise) is *damaged*: every intact data block of it is
//!    salvaged (see "Salvage" below), the rest is lost, and the file is moved
//!    to `lost/`.
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
//!    `last_sequence` = the largest sequence number seen (or recorded by a
//!    readable MANIFEST record: it never goes back) and `next_file_number`
//!    past every file, fsyncs it and switches `CURRENT` to it (temporary file,
//!    fsync, rename, directory fsync).
//! 7. Only then deletes the old SSTs and WALs and moves the old MANIFESTs to
//!    `lost/`.
//!
//! # Salvage
//!
//! A damaged table's intact data blocks are found through its index block when
//! the footer and the index are readable (every checksum checked): each data
//! block the index lists is read, and a damaged one is skipped, so the blocks
//! after it come back too. When the footer or the index is unreadable (a cut
//! file, a damaged tail), the file is scanned for blocks (`scan.rs`): every
//! span that a block trailer closes, its checksum matching, found in two passes
//! by the algebra of CRC32C whatever damage lies between the blocks, and kept
//! when it abuts its neighbours (spans that check by chance, hundreds in a file
//! of megabytes, do not; a block between two damaged ones is lost with them).
//! Among them, a block whose every value is a block handle, the first at offset
//! 0, is the index (its handles then say which data blocks there were), and the
//! block just before it the properties (of a two-level index, that block is
//! partition 0, the partitions that continue it and the top level listing them
//! are the index, and the properties precede the top level; with a partition
//! lost, every block that decodes as data is taken, see `salvage.rs`); the others that decode as a data block
//! (well-formed internal keys in strictly increasing order, none with the index
//! separators' sequence number) are the data blocks. A block of the filter,
//! properties or range tombstones never decodes so. (A value that holds a whole
//! block with its trailer, such as an SST stored as a value, could be taken for
//! a block when the block around it is damaged.) A damaged table's range
//! tombstones are kept when their block is readable. The scan reads about
//! 8 MB/s (a table of 58 MB: 7 s; BENCHMARKS.md, "Durability: the write path, the open, repair").
//!
//! # What is counted
//!
//! Each damaged table is a [`LostTable`] in [`RepairReport::damaged_tables`]:
//! the entries it held (its properties' count, else the MANIFEST record that
//! added it), the entries salvaged, the difference as lost, its key range,
//! level and keyspace, the data blocks read and lost, and the error that
//! made it damaged. A table the live MANIFEST (the one `CURRENT` names, else
//! the newest) lists but the directory lacks is a [`LostTable`] in
//! [`RepairReport::tables_missing`], all its entries lost; this only when that
//! MANIFEST reads to its end (a torn last record allowed), since the state of
//! a MANIFEST damaged earlier may list tables that compactions deleted since.
//! [`RepairReport::entries_lost`] sums the losses. A count is exact where
//! the table's entries are known; a damaged table that neither its
//! properties nor any readable MANIFEST record describes counts 0 (its
//! `entries` is `None`). Entries are entries in the table, so a key written
//! several times over may count several times, and a lost entry may be one
//! that a newer table overrides anyway.
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

mod manifest;
mod report;
mod salvage;
mod scan;

use manifest::ManifestFacts;
pub use report::{LostTable, RepairReport, SalvageMethod};

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
    let known = ManifestFacts::read(fs, dir, &files.manifests);
    let mut inputs = MergeInputs {
        max_seq: known.last_sequence,
        known,
        ..MergeInputs::default()
    };
    inputs.read_tables(fs, dir, opts, &files.ssts, &mut report);
    inputs.count_missing(fs, dir, &files.ssts, &mut report);
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

/// Everything repair merges, by keyspace id.
#[derive(Default)]
struct MergeInputs {
    groups: std::collections::BTreeMap<u32, Group>,
    /// What the MANIFESTs tell.
    known: ManifestFacts,
    /// The largest sequence number seen, or recorded by a readable MANIFEST
    /// record.
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
                Err(why) => {
                    let s = salvage::salvage(fs, &path);
                    let recorded = self.known.recorded.get(&n);
                    let loss = self.loss_of(n, &s, recorded, why);
                    report.tables_damaged += 1;
                    report.entries_salvaged += loss.salvaged;
                    report.entries_read += loss.salvaged;
                    report.entries_lost += loss.lost;
                    report.damaged_tables.push(loss);
                    for (k, _) in &s.entries {
                        self.max_seq = self.max_seq.max(key::parse(k).map_or(0, |p| p.seq));
                    }
                    let range_dels = s.range_dels.unwrap_or_default();
                    for t in &range_dels {
                        self.max_seq = self.max_seq.max(t.seq);
                    }
                    self.damaged.push(path);
                    // Its keyspace: its properties', else its MANIFEST
                    // record's, else the default one.
                    let (id, name) = match (&s.props, recorded) {
                        (Some(p), _) => (p.keyspace, p.keyspace_name.clone()),
                        (None, Some(r)) => (r.keyspace, String::new()),
                        (None, None) => (0, String::new()),
                    };
                    if let Some(g) = self.group(id, &name) {
                        g.range_dels.extend(range_dels);
                        g.children.push(Box::new(VecIter::new(s.entries)));
                    }
                }
            }
        }
    }

    /// What damaged table `number` held (`s`: what was salvaged of it;
    /// `recorded`: the MANIFEST's record of it) and lost; `why` it failed.
    fn loss_of(
        &self,
        number: u64,
        s: &salvage::Salvage,
        recorded: Option<&manifest::Recorded>,
        why: String,
    ) -> LostTable {
        let user = |k: &[u8]| key::parse(k).map_or(Vec::new(), |p| p.user_key.to_vec());
        let mut t = LostTable {
            number,
            salvaged: s.entries.len() as u64,
            blocks_salvaged: s.blocks_read,
            blocks_lost: s.blocks_lost,
            method: s.method,
            detail: why,
            ..LostTable::default()
        };
        if let Some(r) = recorded {
            t.keyspace = self.known.name_of(r.keyspace);
            t.level = Some(r.file.level);
            t.entries = Some(r.file.entries);
            t.smallest = user(&r.file.smallest);
            t.largest = user(&r.file.largest);
            t.range_dels_lost = r.file.range_dels;
        }
        if let Some(p) = &s.props {
            t.keyspace = match p.keyspace {
                0 => crate::keyspace::DEFAULT.to_string(),
                _ => p.keyspace_name.clone(),
            };
            t.entries = Some(p.entries);
            t.smallest = user(&p.smallest);
            t.largest = user(&p.largest);
            t.range_dels_lost = p.range_dels;
            if t.blocks_lost.is_none() {
                t.blocks_lost = Some(p.data_blocks.saturating_sub(s.blocks_read));
            }
        }
        if s.range_dels.is_some() {
            t.range_dels_lost = 0;
        }
        t.lost = t.entries.map_or(0, |e| e.saturating_sub(t.salvaged));
        t
    }

    /// Counts the tables the live MANIFEST lists that the directory (its
    /// `ssts`) lacks (see the module docs).
    fn count_missing(
        &self,
        fs: &dyn FileSystem,
        dir: &Path,
        ssts: &[u64],
        report: &mut RepairReport,
    ) {
        let Some(live) = &self.known.live else {
            return;
        };
        for &n in live.iter().filter(|n| ssts.binary_search(n).is_err()) {
            let Some(r) = self.known.recorded.get(&n) else {
                continue;
            };
            let user = |k: &[u8]| key::parse(k).map_or(Vec::new(), |p| p.user_key.to_vec());
            let in_lost = fs.exists(&filename::lost(dir).join(format!("{n:06}.sst")));
            let t = LostTable {
                number: n,
                keyspace: self.known.name_of(r.keyspace),
                level: Some(r.file.level),
                entries: Some(r.file.entries),
                lost: r.file.entries,
                smallest: user(&r.file.smallest),
                largest: user(&r.file.largest),
                blocks_lost: None,
                range_dels_lost: r.file.range_dels,
                method: SalvageMethod::Nothing,
                detail: if in_lost {
                    "missing from the directory; a file of its name is in lost/ (an earlier, \
                     interrupted repair moved it there: what it salvaged of it is in that \
                     repair's outputs, read again here)"
                        .into()
                } else {
                    "missing from the directory".into()
                },
                ..LostTable::default()
            };
            report.entries_lost += t.lost;
            report.tables_missing.push(t);
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
        let flushed_below = self.known.log_number;
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
            #[expect(
                clippy::expect_used,
                reason = "the WAL entries of dropped keyspaces were skipped above"
            )]
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
                // Salvaged tables get the options' own family.
                filter_family: None,
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

/// Opens and reads table `number` in full. On success: the table, its entry
/// count and largest sequence number; on damage, what is wrong.
fn scan_table(
    fs: &dyn FileSystem,
    path: &Path,
    number: u64,
    counters: &Arc<Counters>,
) -> std::result::Result<(Arc<TableReader>, u64, SeqNo), String> {
    let table = TableReader::open(fs, path, number, false, true, None, counters.clone())
        .map(Arc::new)
        .map_err(|e| e.to_string())?;
    let promised = table.properties().entries;
    let mut it = table.iter(ReadCtx {
        level: 0,
        fill_cache: false,
        verify_checksums: true,
    });
    let (mut entries, mut max_seq) = (0u64, 0);
    it.seek_to_first().map_err(|e| e.to_string())?;
    while it.valid() {
        match key::parse(it.key()) {
            Some(p) => max_seq = max_seq.max(p.seq),
            None => return Err(key::malformed_detail(it.key())),
        }
        entries += 1;
        it.next().map_err(|e| e.to_string())?;
    }
    if entries != promised {
        return Err(format!(
            "{entries} entries read, its properties promise {promised}"
        ));
    }
    Ok((table, entries, max_seq))
}

/// An entry salvaged: internal key and value.
type Entry = (Vec<u8>, Vec<u8>);

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
