//! Flushes: frozen memtables into level-0 files.

use super::*;

impl DbInner {
    /// Freezes the active memtables and waits until every frozen memtable is
    /// written. Returns the background error, if one stops flushes (even
    /// when there is nothing to flush).
    pub(super) fn flush(&self) -> Result<()> {
        self.bg.lock().stopped()?;
        let target = {
            let mut wal = self.wal.lock();
            let trees = self.trees();
            if trees.iter().any(|t| !t.mem.read().mem.is_empty()) {
                self.switch_memtable(&mut wal)?;
            }
            self.newest_frozen()
        };
        let Some(target) = target else { return Ok(()) };
        self.wait_background(|_| self.oldest_frozen().is_none_or(|w| w > target))
    }

    /// The WAL number of the oldest frozen memtable of any keyspace.
    pub(super) fn oldest_frozen(&self) -> Option<u64> {
        let trees = self.trees();
        trees
            .iter()
            .filter_map(|t| t.frozen().first().map(|m| m.wal_number()))
            .min()
    }

    /// The WAL number of the newest frozen memtable of any keyspace.
    fn newest_frozen(&self) -> Option<u64> {
        let trees = self.trees();
        trees
            .iter()
            .filter_map(|t| t.frozen().last().map(|m| m.wal_number()))
            .max()
    }

    pub(super) fn flush_loop(&self) {
        loop {
            let started = {
                let mut bg = self.bg.lock();
                loop {
                    if bg.shutdown {
                        return;
                    }
                    if bg.error.is_some() {
                        // Flushes wait for the error to clear; this thread
                        // also retries clearing it when it is recoverable.
                        bg = self.auto_resume(bg);
                    } else if self.oldest_frozen().is_none() {
                        self.bg_cv.wait(&mut bg);
                    } else {
                        break bg.resumes;
                    }
                }
            };
            if let Err(e) = self.unless_panicked("flush", || self.flush_oldest()) {
                self.set_job_error(e, started);
            }
            let _bg = self.bg.lock();
            self.done_cv.notify_all();
            self.bg_cv.notify_all();
        }
    }

    /// Writes the oldest generation of frozen memtables (those of the
    /// oldest WAL still needed, one per keyspace that has one) to L0 SSTs,
    /// and logs them in one MANIFEST record with the WAL number after
    /// them: a WAL becomes obsolete only once every keyspace's memtable of
    /// it is in an SST (an atomic flush, as RocksDB's `atomic_flush`).
    pub(super) fn flush_oldest(&self) -> Result<()> {
        let _one_at_a_time = self.flush_lock.lock();
        let Some(generation) = self.oldest_frozen() else {
            return Ok(());
        };
        let trees = self.trees();
        let mut flushed: Vec<(Arc<Tree>, Arc<Memtable>)> = Vec::new();
        let mut edits = Vec::new();
        for t in &trees {
            let Some(imm) = t.frozen().first().cloned() else {
                continue;
            };
            if imm.wal_number() != generation {
                continue;
            }
            let mut edit = VersionEdit {
                keyspace: t.id,
                ..VersionEdit::default()
            };
            let written = self.write_level0(t, &imm);
            let outputs = match written {
                Ok(o) => o,
                Err(e) => {
                    // Nothing is logged: remove what the other keyspaces wrote.
                    let numbers = edits.iter().flat_map(|e: &VersionEdit| &e.added);
                    compaction::remove_files(
                        self.fs.as_ref(),
                        &self.dir,
                        numbers.map(|f| f.number).collect(),
                    );
                    return Err(e);
                }
            };
            edit.added = outputs;
            edits.push(edit);
            flushed.push((t.clone(), imm));
        }
        // The oldest WAL any keyspace still needs once these are flushed.
        #[expect(
            clippy::expect_used,
            reason = "the default keyspace is always live, so there is at least one tree"
        )]
        let next_log = trees
            .iter()
            .map(|t| {
                let mine = flushed.iter().find(|(f, _)| Arc::ptr_eq(f, t));
                t.oldest_wal(mine.map(|(_, m)| m))
            })
            .min()
            .expect("the default keyspace is live");
        if edits.is_empty() {
            // Its keyspace was dropped: only the WAL number moves.
            edits.push(VersionEdit::default());
        }
        edits[0].log_number = Some(next_log);
        edits[0].last_sequence = Some(self.last_seq.load(Ordering::Acquire));
        {
            let mut versions = self.versions.lock();
            versions.log_and_apply_all(edits)?;
            for (t, imm) in &flushed {
                // A keyspace dropped meanwhile has no version to install.
                if let Some(v) = versions.version_of(t.id) {
                    t.install(v, Some(imm));
                }
            }
        }
        self.save_hotness(false);
        bump(&self.counters.flushes, 1);
        self.remove_wals_before(next_log);
        Ok(())
    }

    /// Removes the WALs numbered below `next_log` (every memtable they
    /// logged is flushed), taken from the list of WALs this process
    /// started: a listing of the directory per flush read every SST's name.
    /// A WAL that cannot be removed stays listed and is tried again at the
    /// next flush; one left behind by a crash is removed at the next open.
    fn remove_wals_before(&self, next_log: u64) {
        let old: Vec<u64> = {
            let mut wals = self.wal_files.lock();
            let n = wals.partition_point(|&w| w < next_log);
            wals.drain(..n).collect()
        };
        let left: Vec<u64> = old
            .into_iter()
            .filter(|&w| {
                self.fs
                    .remove_file(&filename::wal(&self.dir, w))
                    .is_err_and(|e| e.kind() != std::io::ErrorKind::NotFound)
            })
            .collect();
        if !left.is_empty() {
            let mut wals = self.wal_files.lock();
            for w in left.into_iter().rev() {
                wals.push_front(w);
            }
        }
    }

    /// Writes frozen memtable `imm` of `tree` to synced L0 files (none when
    /// it holds nothing that survives).
    fn write_level0(
        &self,
        tree: &Tree,
        imm: &Arc<Memtable>,
    ) -> Result<Vec<crate::version::NewFile>> {
        if imm.is_empty() {
            return Ok(Vec::new());
        }
        let opts = tree.opts();
        let new_number = || self.versions.lock().new_file_number();
        let ctx = OutputCtx {
            fs: self.fs.as_ref(),
            dir: &self.dir,
            opts: &opts,
            level: 0,
            run: 0,
            split: false,
            smallest_snapshot: self.smallest_snapshot(),
            new_file_number: &new_number,
            // Flushes do not filter (as RocksDB by default).
            filter: None,
            keyspace: (tree.id, &tree.name),
            filter_family: self.tables.filter_budget().family_for(
                &opts.filter,
                0,
                imm.len() as u64,
                &[],
            ),
        };
        let mut it = imm.iter();
        let range_dels = compaction::RangeDels {
            tombstones: imm.range_dels(),
            is_bottom: &|_| false,
        };
        let mut outputs = compaction::write_outputs(&mut it, &ctx, &|_| false, range_dels)?;
        for f in &mut outputs {
            f.run = f.number;
            bump(&self.counters.flush_bytes_written, f.size);
        }
        compaction::sync_outputs(self.fs.as_ref(), &self.dir, &outputs)?;
        Ok(outputs)
    }

    pub(super) fn smallest_snapshot(&self) -> SeqNo {
        let last = self.last_seq.load(Ordering::Acquire);
        self.snapshots
            .lock()
            .keys()
            .next()
            .copied()
            .map_or(last, |s| s.min(last))
    }
}
