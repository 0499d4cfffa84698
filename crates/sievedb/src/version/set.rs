//! [`VersionSet`]: the live version and the MANIFEST it is logged to
//! (recovery, [`VersionSet::log_and_apply_all`], rolling to a fresh
//! MANIFEST and [`set_current`]). The rules for a failed MANIFEST write are in the
//! [`version`](super) module's docs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering as AtOrd};
use std::sync::{Arc, OnceLock};

use crate::cache::TableCache;
use crate::error::{Error, Result};
use crate::io::{filename, FileSystem};
use crate::key::SeqNo;
use crate::wal::{read_records, LogWriter};

use super::apply::{apply, inherit_hotness, placed, register_filters, Applied, Placed};
use super::edit::{decode_record, encode_record, KeyspaceRecord};
use super::{FileMeta, NewFile, Run, Version, VersionEdit};

/// The live version of every keyspace plus the MANIFEST they are logged to.
/// Guarded by the database's version mutex; readers get versions through
/// each keyspace's view.
pub struct VersionSet {
    /// The database directory.
    pub(super) dir: PathBuf,
    /// The file system it lives on.
    pub(super) fs: Arc<dyn FileSystem>,
    tables: Arc<TableCache>,
    max_levels: usize,
    /// The live version of each keyspace (0: the default one, always present).
    versions: BTreeMap<u32, Arc<Version>>,
    /// Entries of every file of `versions` (what a filter budget is sized
    /// by), kept by each install instead of summed over the tree: that sum
    /// was a pass over 44,000 files per compaction under a budget.
    /// Invariant: `Σ f.entries` over `versions`' files (checked in debug
    /// builds after each install).
    entries: u64,
    /// The keyspaces besides the default one, by id.
    keyspaces: BTreeMap<u32, KeyspaceRecord>,
    /// The next unused keyspace id (ids are never reused).
    pub next_keyspace_id: u32,
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
    /// The values carry TTL write-time stamps (MANIFEST tag 8): recorded
    /// when the database is created, repeated in every new MANIFEST.
    pub ttl_stamped: bool,
    /// The creation time given to a file the MANIFEST records without one
    /// (the time of the open, while periodic compaction is on; else 0).
    pub default_creation_time: u64,
    /// What [`recover`](Self::recover) dropped as the MANIFEST's torn tail:
    /// (offset, bytes, whether any of them is not zero).
    pub manifest_torn: Option<(u64, u64, bool)>,
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
            versions: BTreeMap::from([(0, Arc::new(Version::empty(max_levels)))]),
            entries: 0,
            keyspaces: BTreeMap::new(),
            next_keyspace_id: 1,
            manifest: None,
            manifest_number: 0,
            edit_in_doubt: false,
            next_file_number: 2,
            log_number: 0,
            last_sequence: 0,
            ttl_stamped: false,
            default_creation_time: 0,
            manifest_torn: None,
        }
    }

    /// The live version of the default keyspace.
    #[cfg(any(test, feature = "internals"))]
    pub fn current(&self) -> Arc<Version> {
        self.versions[&0].clone()
    }

    /// The live version of keyspace `id`, if it exists.
    pub fn version_of(&self, id: u32) -> Option<Arc<Version>> {
        self.versions.get(&id).cloned()
    }

    /// The live version of every keyspace, by id.
    pub fn versions(&self) -> &BTreeMap<u32, Arc<Version>> {
        &self.versions
    }

    /// The keyspaces besides the default one, by id.
    pub fn keyspaces(&self) -> &BTreeMap<u32, KeyspaceRecord> {
        &self.keyspaces
    }

    /// Every live file of every keyspace.
    pub fn live_files(&self) -> impl Iterator<Item = &Arc<FileMeta>> {
        self.versions
            .values()
            .flat_map(|v| v.files().map(|(_, f)| f))
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
    /// [`log_and_apply_all`](Self::log_and_apply_all) clears it.
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
        // file number -> (keyspace, level, file)
        let mut files: BTreeMap<u64, (u32, usize, NewFile)> = BTreeMap::new();
        let mut saw_next = false;
        let (records, torn) = read_records(&data, &path)?;
        self.manifest_torn = torn.map(|d| {
            let rest = data.get(d.offset as usize..).unwrap_or_default();
            (d.offset, rest.len() as u64, rest.iter().any(|&b| b != 0))
        });
        for rec in records {
            for e in decode_record(rec).map_err(|d| Error::corruption(&path, d))? {
                self.recover_edit(e, &mut files, &mut saw_next, &path)?;
            }
        }
        if !saw_next {
            return Err(Error::corruption(
                &path,
                "MANIFEST has no file-number record",
            ));
        }
        // Only the live files matter: a level emptied since may lie beyond.
        if let Some((number, (_, level, _))) = files.iter().max_by_key(|(_, (_, l, _))| *l) {
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
        let mut versions: BTreeMap<u32, Version> = std::iter::once(0)
            .chain(self.keyspaces.keys().copied())
            .map(|id| (id, Version::empty(self.max_levels)))
            .collect();
        // (keyspace, level, run id) -> the run's files
        let mut runs: BTreeMap<(u32, usize, u64), Vec<Arc<FileMeta>>> = BTreeMap::new();
        for (_, (ks, level, f)) in files {
            if f.number >= self.next_file_number {
                return Err(Error::corruption(
                    &path,
                    "file number beyond next_file_number",
                ));
            }
            runs.entry((ks, level, f.run))
                .or_default()
                .push(self.meta(&f));
        }
        // Each run built at once from its files in key order (an insert per
        // file would cost a pass over the run's tail each).
        for ((ks, level, id), mut metas) in runs {
            metas.sort_by(|a, b| crate::key::compare(&a.smallest, &b.smallest));
            #[expect(
                clippy::expect_used,
                reason = "the runs were gathered from the files of live keyspaces"
            )]
            let v = versions.get_mut(&ks).expect("files of live keyspaces only");
            let level_runs = &mut v.levels[level];
            let at = level_runs.partition_point(|r| r.id > id);
            level_runs.insert(at, Arc::new(Run::from_files(id, metas)));
        }
        let total: u64 = versions
            .values()
            .flat_map(|v| v.files())
            .map(|(_, f)| f.entries)
            .sum();
        for v in versions.values_mut() {
            register_filters(v, placed(v).iter(), total);
        }
        self.tables.filter_budget().warm_start();
        self.versions = versions
            .into_iter()
            .map(|(id, v)| (id, Arc::new(v)))
            .collect();
        self.entries = total;
        self.manifest_number = name[9..].parse().unwrap_or(0);
        Ok(())
    }

    /// Applies one recovered edit to `files` and the keyspace registry.
    fn recover_edit(
        &mut self,
        e: VersionEdit,
        files: &mut BTreeMap<u64, (u32, usize, NewFile)>,
        saw_next: &mut bool,
        path: &Path,
    ) -> Result<()> {
        {
            if let Some(v) = e.log_number {
                self.log_number = v;
            }
            if let Some(v) = e.next_file_number {
                self.next_file_number = v;
                *saw_next = true;
            }
            if let Some(v) = e.next_keyspace_id {
                self.next_keyspace_id = self.next_keyspace_id.max(v);
            }
            for k in e.created {
                self.next_keyspace_id = self.next_keyspace_id.max(k.id + 1);
                self.keyspaces.insert(k.id, k);
            }
            for id in &e.dropped {
                if self.keyspaces.remove(id).is_none() {
                    return Err(Error::corruption(
                        path,
                        format!("edit drops unknown keyspace {id}"),
                    ));
                }
                files.retain(|_, (ks, _, _)| ks != id);
            }
            if e.keyspace != 0 && !self.keyspaces.contains_key(&e.keyspace) {
                return Err(Error::corruption(
                    path,
                    format!("edit names unknown keyspace {}", e.keyspace),
                ));
            }
            if let Some(v) = e.last_sequence {
                self.last_sequence = v;
            }
            self.ttl_stamped |= e.ttl_stamped;
            for (level, number) in &e.deleted {
                let known = files.remove(number);
                if known.is_none_or(|(ks, l, _)| l != *level || ks != e.keyspace) {
                    return Err(Error::corruption(
                        path,
                        format!("edit deletes unknown file {number}"),
                    ));
                }
            }
            for f in e.added {
                files.insert(f.number, (e.keyspace, f.level, f));
            }
        }
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
            creation_time: match f.creation_time {
                0 => self.default_creation_time,
                t => t,
            },
            obsolete: AtomicBool::new(false),
            tables: self.tables.clone(),
            filter: OnceLock::new(),
        })
    }

    /// Writes `edit` durably to the MANIFEST and installs the resulting
    /// version of its keyspace, which it returns. See
    /// [`log_and_apply_all`](Self::log_and_apply_all).
    #[cfg(any(test, feature = "internals"))]
    pub fn log_and_apply(&mut self, edit: VersionEdit) -> Result<Arc<Version>> {
        let ks = edit.keyspace;
        self.log_and_apply_all(vec![edit])?;
        Ok(self
            .version_of(ks)
            .unwrap_or_else(|| self.versions[&0].clone()))
    }

    /// Writes `edits` durably to the MANIFEST as one record (all or none of
    /// them take effect, whatever crashes) and installs the resulting
    /// versions; returns the new version of each keyspace an edit changed
    /// (in the order of `edits`; a dropped keyspace has none). Files the
    /// edits delete (and do not re-add), and the files of dropped
    /// keyspaces, become obsolete.
    ///
    /// On error the live versions are unchanged and the MANIFEST that failed
    /// is abandoned: this call tries once to start a fresh one (a snapshot
    /// of the unchanged versions), and otherwise the next call does, instead
    /// of appending after a possibly torn record (see the module docs).
    pub fn log_and_apply_all(
        &mut self,
        mut edits: Vec<VersionEdit>,
    ) -> Result<Vec<(u32, Arc<Version>)>> {
        // A flush or compaction of a keyspace dropped while it ran: its
        // output is not logged (a record naming a dropped keyspace would
        // not replay) and its files go.
        let created: Vec<u32> = edits
            .iter()
            .flat_map(|e| e.created.iter().map(|k| k.id))
            .collect();
        edits.retain(|e| {
            let live = e.keyspace == 0
                || self.versions.contains_key(&e.keyspace)
                || created.contains(&e.keyspace);
            if !live {
                // (A moved file is deleted and re-added: the dropped
                // keyspace's own files go when its last reader does.)
                let moved = |n: u64| e.deleted.iter().any(|&(_, d)| d == n);
                for f in e.added.iter().filter(|f| !moved(f.number)) {
                    let _ = self.fs.remove_file(&filename::sst(&self.dir, f.number));
                }
            }
            live
        });
        if edits.is_empty() {
            edits.push(VersionEdit::default());
        }
        let head = &mut edits[0];
        head.next_file_number = Some(self.next_file_number);
        head.log_number = head.log_number.or(Some(self.log_number));
        head.last_sequence = head.last_sequence.or(Some(self.last_sequence));
        if edits
            .iter()
            .any(|e| !e.created.is_empty() || !e.dropped.is_empty())
        {
            edits[0].next_keyspace_id = Some(self.next_keyspace_id);
        }
        let (next, keyspaces, applied, entries) = self.apply_all(&edits)?;
        let roll = self
            .manifest
            .as_ref()
            .is_none_or(|m| m.size() > MANIFEST_ROLL_BYTES);
        if roll {
            self.write_new_manifest(&next, &keyspaces, &edits[0])?;
        } else {
            #[expect(
                clippy::expect_used,
                reason = "`roll` is false only when a MANIFEST is open"
            )]
            let m = self.manifest.as_mut().expect("manifest open");
            if let Err(e) = m.add_record(&encode_record(&edits)).and_then(|()| m.sync()) {
                self.abandon_manifest();
                return Err(e);
            }
        }
        for e in &edits {
            if let Some(v) = e.log_number {
                self.log_number = v;
            }
            if let Some(v) = e.last_sequence {
                self.last_sequence = self.last_sequence.max(v);
            }
            self.ttl_stamped |= e.ttl_stamped;
        }
        // Obsolete: files deleted and not re-added, and every file of a
        // dropped keyspace (deleted once no reader holds its version).
        for (e, a) in edits.iter().zip(&applied) {
            for p in a.iter().flat_map(Applied::gone) {
                p.meta.obsolete.store(true, AtOrd::Release);
            }
            for id in &e.dropped {
                for (_, f) in self.versions[id].files() {
                    f.obsolete.store(true, AtOrd::Release);
                }
            }
        }
        // (Walked without `files()`, which tests count as an install's work.)
        debug_assert_eq!(
            entries,
            next.values()
                .flat_map(|v| v.levels.iter().flatten())
                .flat_map(|r| &r.files)
                .map(|f| f.entries)
                .sum::<u64>(),
            "the running entry total is the tree's"
        );
        let mut changed = Vec::new();
        for (e, a) in edits.iter().zip(&applied) {
            let Some(v) = next.get(&e.keyspace) else {
                continue;
            };
            if e.deleted.is_empty() && e.added.is_empty() && e.created.is_empty() {
                continue;
            }
            if let Some(a) = a {
                inherit_hotness(a);
                register_filters(v, a.added.iter(), entries);
            }
            changed.push((e.keyspace, v.clone()));
        }
        self.versions = next;
        self.entries = entries;
        self.keyspaces = keyspaces;
        Ok(changed)
    }

    /// After a failed append or sync of the live MANIFEST: never append to it
    /// again, and try once to make a fresh MANIFEST of the (unchanged) live
    /// versions current, so that the failed edit is provably gone. If that
    /// fails too, the next `log_and_apply_all` rolls over instead.
    fn abandon_manifest(&mut self) {
        self.manifest = None;
        self.edit_in_doubt = true;
        let (versions, keyspaces) = (self.versions.clone(), self.keyspaces.clone());
        let snapshot = VersionEdit {
            log_number: Some(self.log_number),
            last_sequence: Some(self.last_sequence),
            ..VersionEdit::default()
        };
        let _ = self.write_new_manifest(&versions, &keyspaces, &snapshot);
    }

    /// The versions and keyspaces `edits` make of the live ones, what each
    /// edit took out and put in (in the order of `edits`; nothing for an
    /// edit that changes no file), and the entries of the new versions'
    /// files.
    #[allow(clippy::type_complexity)]
    fn apply_all(
        &self,
        edits: &[VersionEdit],
    ) -> Result<(
        BTreeMap<u32, Arc<Version>>,
        BTreeMap<u32, KeyspaceRecord>,
        Vec<Option<Applied>>,
        u64,
    )> {
        let mut versions = self.versions.clone();
        let mut keyspaces = self.keyspaces.clone();
        let mut applied = Vec::with_capacity(edits.len());
        let mut entries = self.entries;
        for e in edits {
            for k in &e.created {
                keyspaces.insert(k.id, k.clone());
                versions.insert(k.id, Arc::new(Version::empty(self.max_levels)));
            }
            for id in &e.dropped {
                keyspaces.remove(id);
                if let Some(v) = versions.remove(id) {
                    let gone: u64 = v.files().map(|(_, f)| f.entries).sum();
                    entries = entries.saturating_sub(gone);
                }
            }
            if e.deleted.is_empty() && e.added.is_empty() {
                applied.push(None);
                continue;
            }
            let Some(base) = versions.get(&e.keyspace) else {
                return Err(Error::InvalidArgument(format!(
                    "keyspace {} does not exist (dropped?)",
                    e.keyspace
                )));
            };
            let mut a = apply(base, e, |nf| self.meta(nf));
            let sum = |ps: &[Placed]| -> u64 { ps.iter().map(|p| p.meta.entries).sum() };
            entries = (entries + sum(&a.added)).saturating_sub(sum(&a.removed));
            versions.insert(e.keyspace, Arc::new(std::mem::take(&mut a.version)));
            applied.push(Some(a));
        }
        Ok((versions, keyspaces, applied, entries))
    }

    /// Starts a new MANIFEST holding a snapshot of `versions` and
    /// `keyspaces` (with the numbers of `edit`), then points CURRENT at it.
    ///
    /// On failure the writer of the old MANIFEST is dropped too (the next edit
    /// rolls over again). A failure before `CURRENT` was touched removes the
    /// new file; a failure while switching `CURRENT` may have left it naming
    /// the new MANIFEST, which holds `edit`, so that edit is in doubt.
    fn write_new_manifest(
        &mut self,
        versions: &BTreeMap<u32, Arc<Version>>,
        keyspaces: &BTreeMap<u32, KeyspaceRecord>,
        edit: &VersionEdit,
    ) -> Result<()> {
        let number = self.new_file_number();
        let path = filename::manifest(&self.dir, number);
        let snap = snapshot_record(
            versions,
            keyspaces,
            VersionEdit {
                log_number: edit.log_number,
                next_file_number: Some(self.next_file_number),
                last_sequence: edit.last_sequence,
                ttl_stamped: self.ttl_stamped || edit.ttl_stamped,
                // Only once a keyspace was made: a database that never made one
                // keeps MANIFESTs the builds before keyspaces read.
                next_keyspace_id: (self.next_keyspace_id > 1).then_some(self.next_keyspace_id),
                ..VersionEdit::default()
            },
        );
        let written = (|| {
            let mut w = LogWriter::new(self.fs.create(&path)?, path.clone());
            w.add_record(&snap)?;
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

/// The first record of a fresh MANIFEST: `head` (the numbers) creating every
/// keyspace of `keyspaces` and adding the default keyspace's files, then
/// one context per other keyspace adding its files.
pub(crate) fn snapshot_record(
    versions: &BTreeMap<u32, Arc<Version>>,
    keyspaces: &BTreeMap<u32, KeyspaceRecord>,
    head: VersionEdit,
) -> Vec<u8> {
    let mut edits = vec![VersionEdit {
        created: keyspaces.values().cloned().collect(),
        ..VersionEdit {
            ..VersionEdit::adding_all_of(&versions[&0])
        }
    }];
    let first = &mut edits[0];
    first.log_number = head.log_number;
    first.next_file_number = head.next_file_number;
    first.last_sequence = head.last_sequence;
    first.ttl_stamped = head.ttl_stamped;
    first.next_keyspace_id = head.next_keyspace_id;
    for (&id, v) in versions.iter().filter(|(&id, _)| id != 0) {
        edits.push(VersionEdit {
            keyspace: id,
            ..VersionEdit::adding_all_of(v)
        });
    }
    encode_record(&edits)
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
