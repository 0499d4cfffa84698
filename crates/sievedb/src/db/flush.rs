//! Flushes: frozen memtables into level-0 files.

use super::*;

impl DbInner {
    /// Freezes the active memtable and waits until every frozen memtable is
    /// written. Returns the background error, if one stops flushes (even
    /// when there is nothing to flush).
    pub(super) fn flush(&self) -> Result<()> {
        self.bg.lock().stopped()?;
        let target = {
            let mut wal = self.wal.lock();
            if !self.tree.mem.read().mem.is_empty() {
                self.switch_memtable(&mut wal)?;
            }
            self.tree.frozen().last().map(|m| m.wal_number())
        };
        let Some(target) = target else { return Ok(()) };
        self.wait_background(|_| !self.tree.frozen().iter().any(|m| m.wal_number() <= target))
    }

    pub(super) fn flush_loop(&self) {
        loop {
            {
                let mut bg = self.bg.lock();
                loop {
                    if bg.shutdown {
                        return;
                    }
                    if bg.error.is_some() {
                        // Flushes wait for the error to clear; this thread
                        // also retries clearing it when it is recoverable.
                        bg = self.auto_resume(bg);
                    } else if self.tree.frozen().is_empty() {
                        self.bg_cv.wait(&mut bg);
                    } else {
                        break;
                    }
                }
            }
            if let Err(e) = self.unless_panicked("flush", || self.flush_oldest()) {
                self.set_bg_error(e);
            }
            let _bg = self.bg.lock();
            self.done_cv.notify_all();
            self.bg_cv.notify_all();
        }
    }

    /// Writes the oldest frozen memtable to an L0 SST.
    pub(super) fn flush_oldest(&self) -> Result<()> {
        let _one_at_a_time = self.tree.flush_lock.lock();
        let Some(imm) = self.tree.frozen().first().cloned() else {
            return Ok(());
        };
        let mut edit = VersionEdit::default();
        if !imm.is_empty() {
            let new_number = || self.versions.lock().new_file_number();
            let ctx = OutputCtx {
                fs: self.fs.as_ref(),
                dir: &self.dir,
                opts: &self.opts,
                level: 0,
                run: 0,
                split: false,
                smallest_snapshot: self.smallest_snapshot(),
                new_file_number: &new_number,
                // Flushes do not filter (as RocksDB by default).
                filter: None,
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
            edit.added = outputs;
        }
        let next_log = {
            let m = self.tree.mem.read();
            m.imm.get(1).map_or(m.mem.wal_number(), |n| n.wal_number())
        };
        edit.log_number = Some(next_log);
        edit.last_sequence = Some(self.last_seq.load(Ordering::Acquire));
        self.log_and_install(edit, Some(&imm))?;
        bump(&self.counters.flushes, 1);
        for name in self.fs.list_dir(&self.dir)? {
            if let Some(filename::FileKind::Wal(n)) = filename::parse(&name) {
                if n < next_log {
                    let _ = self.fs.remove_file(&self.dir.join(name));
                }
            }
        }
        Ok(())
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
