//! The write path: group commit into the WAL, then the memtable.

use super::conflicts::{CommitCheck, EarlierWrites};
use super::open::{create_wal, new_memtable};
use super::*;
use std::time::Instant;

/// Largest group a commit leader gathers.
const MAX_GROUP_BYTES: usize = 1 << 20;

/// How long a writer that finds the WAL lock taken, and nobody queued, keeps
/// trying it before it queues (see [`DbInner::commit_checked`]).
const FAST_PATH_SPIN: Duration = Duration::from_micros(8);

/// Spin-loop pauses between two tries of the WAL lock.
const SPIN_PAUSES: u32 = 8;

/// The error of a merge into keyspace `name`, which has no merge operator.
pub(crate) fn no_merge_operator(name: &str) -> Error {
    let where_ = match name {
        crate::keyspace::DEFAULT => "the database's `Options`",
        _ => "its `KeyspaceOptions`",
    };
    Error::InvalidArgument(format!(
        "keyspace {name:?} has no merge operator: set `merge_operator` in {where_} \
         to merge into it"
    ))
}

/// The result of the group's first batch (the caller's).
fn first_result(r: Result<Refusals>) -> Result<()> {
    member_result(&r, 0)
}

/// The result of batch `i` of a group whose write gave `r`.
fn member_result(r: &Result<Refusals>, i: usize) -> Result<()> {
    match r {
        Err(e) => Err(e.clone()),
        Ok(refused) => match refused.get(i) {
            Some(Some(e)) => Err(e.clone()),
            _ => Ok(()),
        },
    }
}

/// The commit checks of a group's batches, in order (`None`: a plain write).
pub(super) type Checks = Vec<Option<Box<dyn CommitCheck>>>;

/// Per batch of a group, the error of the commit check that kept it out of
/// the log; empty when no batch was refused.
type Refusals = Vec<Option<Error>>;

impl DbInner {
    pub(super) fn write(&self, batch: WriteBatch, sync: bool) -> Result<()> {
        self.commit_checked(batch, sync, None)
    }

    /// Refuses `batch` if it merges into a keyspace without a merge
    /// operator: every read of the key would fail until it is overwritten.
    /// A batch without merges is not decoded. A keyspace no longer live is
    /// left to the check under the WAL lock, which names it dropped.
    fn check_merge_operators(&self, batch: &mut WriteBatch) -> Result<()> {
        for id in batch.merge_keyspaces()? {
            let tree = match id {
                0 => Some(self.tree.clone()),
                id => self.trees.read().get(&id).cloned(),
            };
            if let Some(tree) = tree.filter(|t| t.opts().merge_operator.is_none()) {
                return Err(no_merge_operator(&tree.name));
            }
        }
        Ok(())
    }

    /// Writes `batch` once `check` (a transaction's validation) passes under
    /// the WAL lock, through the group commit, so that many committing
    /// threads share fsyncs. A batch with nothing to write is only checked.
    pub(crate) fn commit_checked(
        &self,
        mut batch: WriteBatch,
        sync: bool,
        check: Option<Box<dyn CommitCheck>>,
    ) -> Result<()> {
        batch.validate()?;
        self.check_merge_operators(&mut batch)?;
        if batch.is_empty() {
            let Some(check) = check else { return Ok(()) };
            // Nothing to log: the check alone, ordered with every commit.
            let _wal = self.wal.lock();
            return check.check(self, &EarlierWrites::default());
        }
        if let Some(e) = self.write_error() {
            return Err(e);
        }
        // Fast path: nobody else is writing, so there is no group to form.
        // A writer that finds the WAL taken but nobody queued spins briefly
        // for it first (as RocksDB's adaptive wait): an unsynced write holds
        // it for about a microsecond, far less than the sleep and wake-up a
        // queued writer pays, so concurrent writers keep their cores busy.
        // Once someone is queued, or the holder stays longer (an fsync), it
        // joins the queue and the group commit shares the fsync.
        let mut spin_since = None;
        loop {
            if let Some(mut wal) = self.wal.try_lock() {
                if !self.queue.lock().is_empty() {
                    break;
                }
                let batches = std::slice::from_mut(&mut batch);
                let checks = if check.is_some() {
                    vec![check]
                } else {
                    Vec::new()
                };
                let r = self.write_batches_or_poison(&mut wal, batches, &checks, sync, &[]);
                return first_result(r);
            }
            let since = *spin_since.get_or_insert_with(Instant::now);
            if since.elapsed() > FAST_PATH_SPIN || !self.queue.lock().is_empty() {
                break;
            }
            for _ in 0..SPIN_PAUSES {
                std::hint::spin_loop();
            }
        }
        let slot = Arc::new(Slot {
            batch: Mutex::new(Some(batch)),
            check: Mutex::new(check),
            sync,
            result: Mutex::new(None),
        });
        let mut q = self.queue.lock();
        q.push_back(slot.clone());
        loop {
            if let Some(r) = slot.result.lock().take() {
                return r;
            }
            if Arc::ptr_eq(&q[0], &slot) {
                break;
            }
            self.queue_cv.wait(&mut q);
        }
        // This writer leads: gather a group from the front of the queue.
        let mut group = Vec::new();
        let mut bytes = 0usize;
        for s in q.iter() {
            let size = s.batch.lock().as_ref().map_or(0, WriteBatch::size_in_bytes);
            if !group.is_empty() && bytes + size > MAX_GROUP_BYTES {
                break;
            }
            bytes += size;
            group.push(s.clone());
        }
        drop(q);
        #[expect(
            clippy::expect_used,
            reason = "each slot of a group holds its batch until the group's leader takes it, once"
        )]
        let mut batches: Vec<WriteBatch> = group
            .iter()
            .map(|s| s.batch.lock().take().expect("batch present"))
            .collect();
        let mut checks: Checks = group.iter().map(|s| s.check.lock().take()).collect();
        if checks.iter().all(Option::is_none) {
            checks.clear();
        }
        let sync = group.iter().any(|s| s.sync);
        let result =
            self.write_batches_or_poison(&mut self.wal.lock(), &mut batches, &checks, sync, &group);
        self.complete_group(&group, &result);
        first_result(result)
    }

    /// Takes `group` (the front of the queue) off the queue and hands every
    /// member but the leader (the first) its result: the group's, or the
    /// error of its refused commit check.
    fn complete_group(&self, group: &[Arc<Slot>], result: &Result<Refusals>) {
        let mut q = self.queue.lock();
        for (i, s) in group.iter().enumerate() {
            #[expect(
                clippy::expect_used,
                reason = "every member of the group is still queued, in order"
            )]
            let front = q.pop_front().expect("group member queued");
            debug_assert!(Arc::ptr_eq(&front, s));
            if i > 0 {
                *s.result.lock() = Some(member_result(result, i));
            }
        }
        self.queue_cv.notify_all();
    }

    /// [`DbInner::write_batches`], but a panic in it (a bug, or a custom
    /// [`FileSystem`] that panics) cannot leave the WAL and the memtable out
    /// of step unnoticed, nor hang the writers queued behind: the database
    /// refuses writes from then on ([`Error::Poisoned`]), the other members of
    /// `group` get that error, and the panic goes on in this thread.
    fn write_batches_or_poison(
        &self,
        wal: &mut WalState,
        batches: &mut [WriteBatch],
        checks: &[Option<Box<dyn CommitCheck>>],
        sync: bool,
        group: &[Arc<Slot>],
    ) -> Result<Refusals> {
        let run = std::panic::AssertUnwindSafe(|| self.write_batches(wal, batches, checks, sync));
        match std::panic::catch_unwind(run) {
            Ok(r) => r,
            Err(panic) => {
                let e = self.set_bg_error(Error::Poisoned(
                    "a thread panicked while writing to the WAL and the memtable; reopen the \
                     database (every write acknowledged before is safe)"
                        .into(),
                ));
                if !group.is_empty() {
                    self.complete_group(group, &Err(e));
                }
                std::panic::resume_unwind(panic)
            }
        }
    }

    /// Runs the commit checks of a group in order (`checks` empty: none):
    /// each sees the writes of the batches ahead of it that are logged.
    fn check_group(
        &self,
        batches: &mut [WriteBatch],
        checks: &[Option<Box<dyn CommitCheck>>],
    ) -> Refusals {
        if checks.is_empty() {
            return Vec::new();
        }
        let last = checks.iter().rposition(Option::is_some).unwrap_or(0);
        let mut earlier = EarlierWrites::default();
        let mut refused: Refusals = Vec::with_capacity(batches.len());
        for (i, b) in batches.iter_mut().enumerate() {
            let verdict = checks
                .get(i)
                .and_then(|c| c.as_ref())
                .and_then(|c| c.check(self, &earlier).err());
            if verdict.is_none() && i < last {
                earlier.add(b);
            }
            refused.push(verdict);
        }
        if refused.iter().all(Option::is_none) {
            refused.clear();
        }
        refused
    }

    /// fsyncs the WAL, covering every write logged before (`Db::sync_wal`).
    /// A switched-out WAL was synced when it was switched
    /// ([`DbInner::switch_memtable`]), so syncing the current one suffices.
    pub(super) fn sync_wal(&self) -> Result<()> {
        let mut wal = self.wal.lock();
        if let Some(e) = self.write_error() {
            return Err(e);
        }
        wal.log.sync().map_err(|e| self.set_bg_error(e))
    }

    /// Logs `batches` as one WAL write (one fsync when `sync`) and applies them
    /// to the memtable, but those their commit check (`checks`) refuses. The
    /// caller holds the WAL lock, so writes never interleave.
    fn write_batches(
        &self,
        wal: &mut WalState,
        batches: &mut [WriteBatch],
        checks: &[Option<Box<dyn CommitCheck>>],
        sync: bool,
    ) -> Result<Refusals> {
        // A queued writer may lead a group after the error was set.
        if let Some(e) = self.write_error() {
            return Err(e);
        }
        let bytes = batches.iter().map(WriteBatch::size_in_bytes).sum();
        let mem = self.make_room(wal, bytes)?;
        let refused = self.check_group(batches, checks);
        let logs = |i: usize| refused.get(i).is_none_or(Option::is_none);
        if (0..batches.len()).all(|i| !logs(i)) {
            return Ok(refused);
        }
        // The other keyspaces' memtables, after any switch; a keyspace
        // dropped before the batch reached the WAL fails the batch, whole.
        let others = self.keyspace_memtables(batches)?;
        let first = self.last_seq.load(Ordering::Acquire) + 1;
        let mut seq = first;
        let marked = match wal.log.mark_sync() {
            Ok(n) => n,
            Err(e) => return Err(self.set_bg_error(e)),
        };
        for (i, b) in batches.iter_mut().enumerate() {
            if !logs(i) {
                continue;
            }
            let rec = b.encode(seq);
            if let Err(e) = wal.log.add_record(rec) {
                return Err(self.set_bg_error(e));
            }
            seq += b.len() as u64;
        }
        let logged = if sync {
            wal.log.sync()
        } else {
            wal.log.flush()
        };
        if let Err(e) = logged {
            return Err(self.set_bg_error(e));
        }
        let (mut puts, mut dels, mut merges, mut user_bytes, mut wal_bytes) = (0, 0, 0, 0, marked);
        let mut s = first;
        for (i, b) in batches.iter_mut().enumerate() {
            if !logs(i) {
                continue;
            }
            let rec = b.encode(s);
            wal_bytes += rec.len() as u64 + crate::wal::HEADER_LEN as u64;
            #[expect(
                clippy::expect_used,
                reason = "the batches were encoded by this process, and their keyspaces checked before logging"
            )]
            batch::for_each_entry(rec, |e| {
                match e.keyspace {
                    0 => mem.apply(s, &e),
                    ks => others
                        .iter()
                        .find(|(id, _)| *id == ks)
                        .expect("keyspace checked before logging")
                        .1
                        .apply(s, &e),
                }
                s += 1;
                user_bytes += (e.key.len() + e.value.len()) as u64;
                match e.kind {
                    batch::EntryKind::Put => puts += 1,
                    batch::EntryKind::Merge => merges += 1,
                    _ => dels += 1,
                }
            })
            .expect("batch encoded by this process");
        }
        self.last_seq.store(seq - 1, Ordering::Release);
        let c = &self.counters.writes;
        bump(&c.puts, puts);
        bump(&c.deletes, dels);
        bump(&c.merges, merges);
        bump(&c.user_bytes_written, user_bytes);
        bump(&c.wal_bytes_written, wal_bytes);
        Ok(refused)
    }

    /// The active memtable of each keyspace besides the default one that
    /// `batches` write to, or the error naming one that is not live (caller
    /// holds the WAL lock, so the set of keyspaces cannot change).
    fn keyspace_memtables(&self, batches: &[WriteBatch]) -> Result<Vec<(u32, Arc<Memtable>)>> {
        let mut out: Vec<(u32, Arc<Memtable>)> = Vec::new();
        if batches.iter().all(|b| b.keyspaces().is_empty()) {
            return Ok(out);
        }
        let me = self.owner_token();
        let trees = self.trees.read();
        for b in batches {
            if b.owner() != 0 && b.owner() != me {
                return Err(Error::InvalidArgument(
                    "a write batch names keyspaces of another database".into(),
                ));
            }
            for id in b.keyspaces() {
                if out.iter().any(|(x, _)| x == id) {
                    continue;
                }
                let Some(t) = trees.get(id) else {
                    return Err(Error::InvalidArgument(format!(
                        "a write batch names keyspace {id}, which was dropped"
                    )));
                };
                out.push((*id, t.mem.read().mem.clone()));
            }
        }
        Ok(out)
    }

    /// Freezes the active memtable and starts a new WAL (caller holds the WAL
    /// lock). A failure sets the background error, exactly as a failed WAL
    /// write does: retrying would leave orphan WALs behind and could trust a
    /// second fsync that Linux reports as successful after it dropped the
    /// dirty pages of the first.
    pub(super) fn switch_memtable(&self, wal: &mut WalState) -> Result<()> {
        self.switch_memtable_inner(wal, true)
    }

    /// [`DbInner::switch_memtable`]; `sync_old`: fsync the old WAL first (not
    /// when resuming after a failed write, whose WAL may end in a torn record).
    pub(super) fn switch_memtable_inner(&self, wal: &mut WalState, sync_old: bool) -> Result<()> {
        let number = self.versions.lock().new_file_number();
        let path = filename::wal(&self.dir, number);
        let created = (|| {
            let file = create_wal(self.fs.as_ref(), &self.opts, &path)?;
            self.fs.sync_dir(&self.dir)?;
            // Everything acknowledged is already in the old WAL; sync it so a
            // later synced write in the new WAL never survives a power loss
            // that older unsynced writes do not.
            if sync_old {
                wal.log.sync()?;
            }
            Ok(file)
        })();
        let file = match created {
            Ok(f) => f,
            Err(e) => {
                // Best effort: an empty orphan WAL would be harmless, but
                // leave none behind.
                let _ = self.fs.remove_file(&path);
                return Err(self.set_bg_error(e));
            }
        };
        wal.log = LogWriter::new(file, path);
        self.wal_files.lock().push_back(number);
        // Every keyspace moves to the new WAL together, so that a WAL is
        // obsolete once every memtable of its generation is flushed.
        let last_seq = self.last_seq.load(Ordering::Acquire);
        for t in self.trees() {
            t.switch(number, last_seq, || new_memtable(&t.opts(), number));
        }
        let _bg = self.bg.lock();
        self.bg_cv.notify_all();
        Ok(())
    }
}
