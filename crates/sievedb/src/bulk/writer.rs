//! [`BulkWriter`]: an in-progress bulk load, its files, its crash-safe
//! finish and its cleanup.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::filter::budget::choice::bulk_levels;
use crate::filter::FilterOptions;
use crate::io::{filename, FileLock, FileSystem, SyncBatch, WritableFile};
use crate::key::{self, Kind, MAX_KEY_LEN, MAX_SEQ, MAX_VALUE_LEN};
use crate::options::Options;
use crate::sst::TableWriter;
use crate::version::{set_current, NewFile, VersionEdit};
use crate::wal::LogWriter;

/// The id of the keyspace [`BulkLoad::keyspace`](super::BulkLoad::keyspace)
/// creates (the first after the default one).
const LOADED_KEYSPACE: u32 = 1;

use super::shape::LevelPicker;
use super::{BulkLevel, BulkLoad, BulkLoadReport, LevelShape, ProgressFn, MARKER, PROGRESS_STEP};

/// One level being written: its open table and finished files.
struct LevelOut {
    level: usize,
    /// The filter options its files are written with (its family chosen,
    /// see [`bulk_levels`]).
    filter: FilterOptions,
    writer: Option<(TableWriter, u64)>,
    files: Vec<NewFile>,
    entries: u64,
    smallest: Vec<u8>,
    largest: Vec<u8>,
}

/// An in-progress bulk load: add entries in strictly increasing key order,
/// then [`finish`](Self::finish). Dropping it unfinished deletes what it wrote.
pub struct BulkWriter {
    dir: PathBuf,
    opts: Options,
    shape: LevelShape,
    fs: Arc<dyn FileSystem>,
    progress: Option<ProgressFn>,
    /// The keyspace loaded into (`None`: the default one).
    keyspace: Option<String>,
    levels: Vec<LevelOut>,
    picker: LevelPicker,
    next_file_number: u64,
    /// Every file this load created (SSTs, MANIFEST), for cleanup.
    created: Vec<PathBuf>,
    /// Finished tables whose fsync is still to come (all before the
    /// MANIFEST is written).
    unsynced: SyncBatch,
    last_key: Vec<u8>,
    ikey: Vec<u8>,
    entries: u64,
    user_bytes: u64,
    /// The first error: later calls repeat it.
    failed: Option<Error>,
    done: bool,
    started: Instant,
    /// The directory's `LOCK`, held until the load ends; a failed load
    /// deletes the file (see [`BulkWriter::cleanup`]).
    lock: Option<Box<dyn FileLock>>,
}

impl BulkWriter {
    pub(super) fn start(b: BulkLoad) -> Result<BulkWriter> {
        let started = Instant::now();
        let BulkLoad {
            dir,
            opts,
            shape,
            fs,
            progress,
            keyspace,
        } = b;
        crate::io::filename::check_dir_arg(&dir, "bulk load")?;
        opts.validate()?;
        if let Some(name) = &keyspace {
            if name.is_empty() || name.len() > 255 || name == crate::keyspace::DEFAULT {
                return Err(Error::InvalidArgument(format!(
                    "bulk load into keyspace {name:?}: a keyspace name has 1 to 255 bytes and \
                     is not \"default\" (leave BulkLoad::keyspace unset for the default one)"
                )));
            }
        }
        if opts.ttl.is_some() {
            return Err(Error::InvalidArgument(
                "a bulk load builds a database without TTL: its values carry no write-time \
                 stamp, so Options::ttl must be unset"
                    .into(),
            ));
        }
        shape.validate()?;
        let picker = LevelPicker::new(&shape)?;
        if shape.levels + 1 > opts.max_levels {
            return Err(Error::InvalidArgument(format!(
                "bulk load of {} levels needs max_levels >= {} (levels 0..={}), options have {}",
                shape.levels,
                shape.levels + 1,
                shape.levels,
                opts.max_levels
            )));
        }
        if fs.exists(&dir) && !dir.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        crate::io::create_dir_all_durable(fs.as_ref(), &dir)?;
        let lock_path = filename::lock(&dir);
        let had_lock_file = fs.exists(&lock_path);
        let lock = crate::io::lock_dir(fs.as_ref(), &dir)?;
        match Self::prepare(&dir, fs.as_ref()) {
            Ok(()) => {}
            Err(e) => {
                // A refused load leaves the directory as it found it: a LOCK
                // file this load created goes (deleted while still held, so
                // no other process took it in between).
                if !had_lock_file {
                    let _ = fs.remove_file(&lock_path);
                }
                drop(lock);
                return Err(e);
            }
        }

        // About one file's entries, for pricing the filter families: files
        // of entries of about 128 bytes.
        let file_entries = (opts.target_file_size / 128).max(1);
        let filters = bulk_levels(
            &opts.filter,
            opts.filter_memory,
            opts.filter_policy,
            shape.levels,
            shape.size_ratio,
            file_entries,
        );
        let levels = (1..=shape.levels)
            .zip(filters)
            .map(|(level, filter)| LevelOut {
                level,
                filter,
                writer: None,
                files: Vec::new(),
                entries: 0,
                smallest: Vec::new(),
                largest: Vec::new(),
            })
            .collect();
        Ok(BulkWriter {
            keyspace,
            dir,
            opts,
            shape,
            fs,
            progress,
            levels,
            picker,
            next_file_number: 2,
            created: Vec::new(),
            unsynced: SyncBatch::default(),
            last_key: Vec::new(),
            ikey: Vec::new(),
            entries: 0,
            user_bytes: 0,
            failed: None,
            done: false,
            started,
            lock: Some(lock),
        })
    }

    /// Checks that `dir` (locked) can receive a bulk load, removes the
    /// leftovers of an interrupted load or creation, and writes the marker.
    fn prepare(dir: &Path, fs: &dyn FileSystem) -> Result<()> {
        if fs.exists(&filename::current(dir)) {
            return Err(Error::InvalidArgument(format!(
                "{} already holds a database (CURRENT exists); bulk load only builds new databases",
                dir.display()
            )));
        }
        let marker = dir.join(MARKER);
        let names = fs.list_dir(dir)?;
        let leftover = fs.exists(&marker);
        if !leftover {
            let data = names.iter().find(|n| match filename::parse(n) {
                Some(filename::FileKind::Sst(_)) => true,
                Some(filename::FileKind::Wal(_)) => {
                    fs.file_size(&dir.join(n)).map_or(true, |len| len > 0)
                }
                _ => false,
            });
            if let Some(n) = data {
                return Err(Error::InvalidArgument(format!(
                    "{} holds database files ({n}) but no CURRENT and no {MARKER} marker: \
                     not the leftovers of a bulk load, refusing to touch them",
                    dir.display()
                )));
            }
        }
        // Leftovers of an interrupted bulk load (marker present), or of an
        // interrupted database creation (a MANIFEST or an empty WAL, no CURRENT).
        let mut removed = false;
        for n in &names {
            if filename::parse(n).is_some() {
                fs.remove_file(&dir.join(n))?;
                removed = true;
            }
        }
        if removed {
            fs.sync_dir(dir)?;
        }
        let mut m = fs.create(&marker)?;
        m.append(b"sievedb bulk load in progress; the next bulk load into this directory deletes its files\n")?;
        m.sync()?;
        drop(m);
        fs.sync_dir(dir)?;
        Ok(())
    }

    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Adds the next entry. Keys must be strictly increasing; a key out of
    /// order, a duplicate or an oversized key or value is
    /// [`Error::InvalidArgument`] naming the entry's (0-based) position. After
    /// an error the writer only repeats it: drop it or call
    /// [`abort`](Self::abort).
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = self.add_inner(key, value);
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }

    fn add_inner(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let pos = self.entries;
        if key.len() > MAX_KEY_LEN {
            return Err(Error::InvalidArgument(format!(
                "bulk load entry {pos}: key of {} bytes exceeds the limit of {MAX_KEY_LEN}",
                key.len()
            )));
        }
        if value.len() > MAX_VALUE_LEN {
            return Err(Error::InvalidArgument(format!(
                "bulk load entry {pos}: value of {} bytes exceeds the limit of {MAX_VALUE_LEN}",
                value.len()
            )));
        }
        if pos > 0 && key <= self.last_key.as_slice() {
            let what = if key == self.last_key.as_slice() {
                "duplicates"
            } else {
                "sorts before"
            };
            return Err(Error::InvalidArgument(format!(
                "bulk load input is not strictly increasing: key at position {pos} {} {what} \
                 the key at position {}",
                show_key(key),
                pos - 1
            )));
        }
        let seq = pos + 1;
        if seq > MAX_SEQ {
            return Err(Error::InvalidArgument(format!(
                "bulk load entry {pos}: more entries than sequence numbers"
            )));
        }
        let li = self.picker.next();
        self.ikey.clear();
        key::append_internal_key(&mut self.ikey, key, seq, Kind::Put as u8);

        let target = self.opts.target_file_size;
        let lv = &mut self.levels[li];
        if let Some((w, _)) = &lv.writer {
            if w.estimated_size() >= target {
                #[expect(clippy::expect_used, reason = "the `if let` above matched a writer")]
                let (w, n) = lv.writer.take().expect("writer present");
                let (file, desc) = finish_table(w, n, lv.level)?;
                lv.files.push(desc);
                self.unsynced.push(file)?;
            }
        }
        if lv.writer.is_none() {
            let n = self.next_file_number;
            self.next_file_number += 1;
            let path = filename::sst(&self.dir, n);
            let file = self.fs.create(&path)?;
            self.created.push(path);
            let mut w = TableWriter::new(
                file,
                lv.level,
                self.opts.block_size,
                self.opts.block_restart_interval,
                self.opts.compression_for(lv.level),
                &lv.filter,
            );
            if let Some(name) = &self.keyspace {
                w.set_keyspace(LOADED_KEYSPACE, name);
            }
            w.set_index_partition_bytes(self.opts.index_partition_bytes);
            lv.writer = Some((w, n));
        }
        #[expect(clippy::expect_used, reason = "set just above when there was none")]
        let (w, _) = lv.writer.as_mut().expect("writer present");
        w.add(&self.ikey, value)?;
        if lv.entries == 0 {
            lv.smallest = key.to_vec();
        }
        lv.entries += 1;

        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.entries += 1;
        self.user_bytes += (key.len() + value.len()) as u64;
        if self.entries.is_multiple_of(PROGRESS_STEP) {
            if let Some(p) = &mut self.progress {
                p(self.entries);
            }
        }
        Ok(())
    }

    /// Finishes the tables, writes the MANIFEST and then `CURRENT`, and
    /// removes the marker. On error, deletes what the load wrote.
    pub fn finish(mut self) -> Result<BulkLoadReport> {
        if let Some(e) = self.failed.clone() {
            let _ = self.cleanup();
            return Err(e);
        }
        let r = self.finish_inner();
        if r.is_err() && !self.done {
            let _ = self.cleanup();
        }
        self.done = true;
        r
    }

    #[expect(
        clippy::expect_used,
        reason = "the check at its start refuses a load that leaves a level with no entries, so every level has a table"
    )]
    fn finish_inner(&mut self) -> Result<BulkLoadReport> {
        if let Some(lv) = self.levels.iter().find(|l| l.entries == 0) {
            let w = self.shape.total_weight()?;
            return Err(Error::InvalidArgument(format!(
                "bulk load of {} entries into {} levels at size ratio {} leaves level {} empty \
                 (level 1 receives one entry out of every {w})",
                self.entries, self.shape.levels, self.shape.size_ratio, lv.level
            )));
        }
        let mut added = Vec::new();
        for lv in &mut self.levels {
            if let Some((w, n)) = lv.writer.take() {
                let (file, desc) = finish_table(w, n, lv.level)?;
                lv.files.push(desc);
                self.unsynced.push(file)?;
            }
            lv.largest = key::user_key(&lv.files.last().expect("level has files").largest).to_vec();
            added.extend(lv.files.iter().cloned());
        }
        self.unsynced.sync_all()?;
        self.fs.sync_dir(&self.dir)?;

        let manifest = self.next_file_number;
        self.next_file_number += 1;
        let mut edits = vec![VersionEdit {
            log_number: Some(0),
            next_file_number: Some(self.next_file_number),
            last_sequence: Some(self.entries),
            added,
            ..VersionEdit::default()
        }];
        if let Some(name) = &self.keyspace {
            // The files belong to the keyspace the first edit creates.
            let files = std::mem::take(&mut edits[0].added);
            edits[0].created = vec![crate::version::KeyspaceRecord {
                id: LOADED_KEYSPACE,
                name: name.clone(),
                ttl_stamped: false,
            }];
            edits[0].next_keyspace_id = Some(LOADED_KEYSPACE + 1);
            edits.push(VersionEdit {
                keyspace: LOADED_KEYSPACE,
                added: files,
                ..VersionEdit::default()
            });
        }
        let path = filename::manifest(&self.dir, manifest);
        let file = self.fs.create(&path)?;
        self.created.push(path.clone());
        let mut log = LogWriter::new(file, path);
        log.add_record(&crate::version::encode_record(&edits))?;
        log.sync()?;
        drop(log);
        self.fs.sync_dir(&self.dir)?;
        // Commit point. From here on a failure must not delete anything:
        // CURRENT may already name the (complete, durable) MANIFEST. If it
        // does not, the marker stays and the next bulk load cleans up.
        self.done = true;
        set_current(self.fs.as_ref(), &self.dir, manifest)?;
        // The database is complete and durable; a marker that cannot be
        // removed is harmless next to CURRENT.
        if self.fs.remove_file(&self.dir.join(MARKER)).is_ok() {
            let _ = self.fs.sync_dir(&self.dir);
        }
        if let Some(p) = &mut self.progress {
            p(self.entries);
        }
        Ok(BulkLoadReport {
            shape: self.shape,
            entries: self.entries,
            user_bytes: self.user_bytes,
            last_sequence: self.entries,
            levels: self
                .levels
                .iter()
                .map(|lv| BulkLevel {
                    level: lv.level,
                    files: lv.files.len(),
                    entries: lv.entries,
                    bytes: lv.files.iter().map(|f| f.size).sum(),
                    smallest: lv.smallest.clone(),
                    largest: lv.largest.clone(),
                })
                .collect(),
            seconds: self.started.elapsed().as_secs_f64(),
        })
    }

    /// Stops the load and deletes what it wrote (the directory is left
    /// without a database). Returns an error if something could not be
    /// deleted; the marker then stays so that the next bulk load finishes the
    /// cleanup.
    pub fn abort(mut self) -> Result<()> {
        self.cleanup()
    }

    fn cleanup(&mut self) -> Result<()> {
        self.done = true;
        for lv in &mut self.levels {
            lv.writer = None;
        }
        let r = self.delete_written();
        // The directory holds no database (CURRENT was never written), so its
        // LOCK goes too, whatever else failed: deleted while still held, then
        // released.
        if let Some(lock) = self.lock.take() {
            let _ = self.fs.remove_file(&filename::lock(&self.dir));
            drop(lock);
        }
        r
    }

    /// Deletes the files the load wrote, then the marker.
    fn delete_written(&mut self) -> Result<()> {
        let mut first_err: Option<Error> = None;
        for p in self.created.drain(..) {
            match self.fs.remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    first_err.get_or_insert(Error::Io(e));
                }
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        self.fs.sync_dir(&self.dir)?;
        self.fs.remove_file(&self.dir.join(MARKER))?;
        self.fs.sync_dir(&self.dir)?;
        Ok(())
    }
}

impl Drop for BulkWriter {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.cleanup();
        }
    }
}

/// Finishes a table without syncing it (its writeback started): returns the
/// file to sync and its description for the MANIFEST (run 0: one run per
/// level).
fn finish_table(
    w: TableWriter,
    number: u64,
    level: usize,
) -> Result<(Box<dyn WritableFile>, NewFile)> {
    let (props, size, file) = w.finish_unsynced()?;
    let desc = NewFile {
        level,
        run: 0,
        number,
        size,
        entries: props.entries,
        smallest: props.smallest,
        largest: props.largest,
        range_dels: props.range_dels,
        creation_time: 0,
    };
    Ok((file, desc))
}

/// A short printable form of a key for error messages.
fn show_key(key: &[u8]) -> String {
    const MAX: usize = 64;
    let mut s = String::new();
    for &b in key.iter().take(MAX) {
        if b.is_ascii_graphic() && b != b'%' {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    if key.len() > MAX {
        s.push_str("...");
    }
    format!("\"{s}\"")
}
