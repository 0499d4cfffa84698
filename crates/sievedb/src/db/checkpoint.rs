//! Checkpoints: an openable, independent copy of the database at one point
//! in time, made while it runs (RocksDB's `Checkpoint::CreateCheckpoint`).
//!
//! Steps:
//! 1. The target must not exist, or be an empty directory.
//! 2. A read-write database flushes its memtables first, so the checkpoint
//!    holds every write acknowledged before the call without copying WALs
//!    (a WAL is being appended to: copying "up to a synced point" would
//!    need the writers stopped or the WAL's synced length tracked).
//! 3. Under the version lock, the current version is pinned (an `Arc`: no
//!    file of a version still referenced is deleted, see `version/file_meta.rs`)
//!    together with the last sequence number, WAL number and next file
//!    number. The version is a consistent point in time: it holds exactly
//!    the writes of the WALs numbered below its WAL number, a prefix of the
//!    write history; writes and compactions that come later do not change it.
//! 4. Into `<target>.checkpoint-tmp`: each SST of the version is hard linked
//!    (SSTs are immutable, so the two databases may share them; a link
//!    refused, e.g. across file systems, falls back to a synced copy), then a
//!    fresh `MANIFEST` describing exactly the pinned version and a `CURRENT`
//!    naming it are written and synced. A read-only handle cannot flush: it
//!    copies the WALs its version still needs instead (as they are now in
//!    the directory).
//! 5. The temporary directory is synced and renamed to the target, and the
//!    target's parent synced. Any failure removes the temporary directory,
//!    so no half-made checkpoint is left under the target's name.

use super::*;

impl DbInner {
    fn checkpoint(&self, target: &Path) -> Result<()> {
        check_target(self.fs.as_ref(), target)?;
        let tmp = tmp_dir(target)?;
        if self.fs.exists(&tmp) {
            return Err(Error::InvalidArgument(format!(
                "{} exists (left by an interrupted checkpoint?): remove it first",
                tmp.display()
            )));
        }
        if !self.read_only {
            self.flush()?;
        }
        let pinned = {
            let vs = self.versions.lock();
            Pinned {
                versions: vs.versions().clone(),
                keyspaces: vs.keyspaces().clone(),
                log_number: vs.log_number,
                last_sequence: vs.last_sequence,
                next_file_number: vs.next_file_number,
                next_keyspace_id: vs.next_keyspace_id,
            }
        };
        crate::io::create_dir_all_durable(self.fs.as_ref(), &tmp)?;
        let built = self.build(&pinned, &tmp).and_then(|()| {
            self.fs.sync_dir(&tmp)?;
            self.fs.rename(&tmp, target)?;
            Ok(())
        });
        if let Err(e) = built {
            remove_tree(self.fs.as_ref(), &tmp);
            return Err(e);
        }
        let parent = parent_of(target);
        self.fs.sync_dir(&parent)?;
        Ok(())
    }

    /// Fills `tmp` with the files of `p` and a MANIFEST and CURRENT naming them.
    fn build(&self, p: &Pinned, tmp: &Path) -> Result<()> {
        let fs = self.fs.as_ref();
        for (_, f) in p.versions.values().flat_map(|v| v.files()) {
            let (from, to) = (
                filename::sst(&self.dir, f.number),
                filename::sst(tmp, f.number),
            );
            if fs.hard_link(&from, &to).is_err() {
                crate::io::copy_file(fs, &from, &to)?;
            }
        }
        // The new MANIFEST's number: one no file of the checkpoint has.
        let mut number = p.next_file_number;
        if self.read_only {
            for name in fs.list_dir(&self.dir)? {
                if let Some(filename::FileKind::Wal(n)) = filename::parse(&name) {
                    if n >= p.log_number {
                        crate::io::copy_file(fs, &self.dir.join(&name), &tmp.join(&name))?;
                        number = number.max(n + 1);
                    }
                }
            }
        }
        let head = VersionEdit {
            log_number: Some(p.log_number),
            next_file_number: Some(number + 1),
            last_sequence: Some(p.last_sequence),
            ttl_stamped: self.opts.ttl.is_some(),
            next_keyspace_id: (p.next_keyspace_id > 1).then_some(p.next_keyspace_id),
            ..VersionEdit::default()
        };
        let record = crate::version::snapshot_record(&p.versions, &p.keyspaces, head);
        let path = filename::manifest(tmp, number);
        let mut w = LogWriter::new(fs.create(&path)?, path);
        w.add_record(&record)?;
        w.sync()?;
        drop(w);
        crate::version::set_current(fs, tmp, number)
    }
}

/// What a checkpoint copies, taken together under the version lock.
struct Pinned {
    /// Every keyspace's version: keeps every file it names from deletion
    /// until the checkpoint is done.
    versions: BTreeMap<u32, Arc<Version>>,
    /// The keyspaces besides the default one.
    keyspaces: BTreeMap<u32, crate::version::KeyspaceRecord>,
    next_keyspace_id: u32,
    log_number: u64,
    last_sequence: SeqNo,
    next_file_number: u64,
}

/// Refuses a target that exists and is not an empty directory.
fn check_target(fs: &dyn FileSystem, target: &Path) -> Result<()> {
    if !fs.exists(target) {
        return Ok(());
    }
    if !fs.is_dir(target) {
        return Err(Error::InvalidArgument(format!(
            "checkpoint target {} exists and is not a directory",
            target.display()
        )));
    }
    if !fs.list_dir(target)?.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "checkpoint target {} is not empty",
            target.display()
        )));
    }
    Ok(())
}

/// `<target>.checkpoint-tmp`, beside the target (so the final rename stays
/// within one file system).
fn tmp_dir(target: &Path) -> Result<PathBuf> {
    let name = target.file_name().ok_or_else(|| {
        Error::InvalidArgument(format!(
            "checkpoint target {} has no file name",
            target.display()
        ))
    })?;
    let mut tmp = name.to_os_string();
    tmp.push(".checkpoint-tmp");
    Ok(target.with_file_name(tmp))
}

/// The directory holding `p` (`.` for a bare name).
fn parent_of(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Best-effort removal of a directory of files (a failed checkpoint's).
fn remove_tree(fs: &dyn FileSystem, dir: &Path) {
    if let Ok(names) = fs.list_dir(dir) {
        for n in names {
            let _ = fs.remove_file(&dir.join(n));
        }
    }
    let _ = fs.remove_dir(dir);
}

impl Db {
    /// Writes an openable copy of the database, as it is now, to the new
    /// directory `dir` (RocksDB's `Checkpoint::CreateCheckpoint`). SST files
    /// are hard linked where the file system allows (so a checkpoint on the
    /// same file system costs little space until the database compacts), and
    /// copied otherwise; the checkpoint gets its own `MANIFEST` and `CURRENT`.
    /// It opens as an independent database: writes to either never show in
    /// the other.
    ///
    /// It holds every write acknowledged before the call (the memtables are
    /// flushed first) and is a consistent point in time whatever writers and
    /// compactions do meanwhile. `dir` must not exist, or be an empty
    /// directory ([`Error::InvalidArgument`] naming it otherwise); it is built
    /// as `<dir>.checkpoint-tmp` and renamed into place once every file is
    /// synced, so a failure leaves no partial `dir`; an empty `dir` is
    /// refused before anything is written. A read-only handle
    /// copies the WALs its version needs as they are in the directory now
    /// (if a writer has the database open, prefer checkpointing through it).
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
    /// db.put("k", "v")?;
    /// let backups = tempfile::tempdir()?;
    /// let copy = backups.path().join("copy");
    /// db.checkpoint(&copy)?;
    /// db.put("k", "changed")?;
    /// let restored = sievedb::Db::open(&copy, sievedb::Options::default())?;
    /// assert_eq!(restored.get("k")?.as_deref(), Some(&b"v"[..]));
    /// # Ok(()) }
    /// ```
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<()> {
        filename::check_dir_arg(dir.as_ref(), "Db::checkpoint")?;
        self.inner.checkpoint(dir.as_ref())
    }
}
