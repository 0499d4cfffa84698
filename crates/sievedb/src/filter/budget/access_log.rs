//! The budget's access log: one lookup in [`ACCESS_SAMPLE`] per thread
//! records the files whose filters it probed in a per-thread log, which is
//! handed to the worker (or replayed in place) and fed to the allocator.

use std::cell::{Cell, RefCell};

use super::{FilterBudget, ResidentFilter, State};

/// One lookup in this many records its filter accesses (counted this many
/// times): the multi-queue's bookkeeping is then a quarter of its cost per
/// lookup, and the counts stay unbiased. Sparser samples cost the allocator
/// its aim: with 16, elastic's device-read gain over uniform in
/// `elastic-table1` fell from 1.14–1.17× (every lookup) to 1.02–1.06×; with 4
/// it is 1.11–1.14×, at 3% of a page-cache `readrandom`.
pub const ACCESS_SAMPLE: u32 = 4;
/// Log entries a thread gathers before it hands them to the worker. Each
/// hand-off may wake the worker (a futex wake in the lookup's thread): with
/// 64 entries, a hand-off every ~50 lookups of a page-cache `readmissing`,
/// the wakes made a budgeted lookup 0.37 µs against 0.31 with 1024 (0.27
/// unlimited: a run kept in the git history of BENCHMARKS.md). The allocator
/// then hears of accesses ~800 lookups late, well inside a file's lifetime.
pub const LOG_BATCH: usize = 1024;
/// The capacity a new log starts with: room for the lookup that fills it
/// past [`LOG_BATCH`], so a log is never reallocated (and copied) on its way
/// to the worker; it was, once per log, when it started at `LOG_BATCH`.
const LOG_CAPACITY: usize = 2 * LOG_BATCH;
/// Log entries past which a thread drops the oldest half of its log.
pub const LOG_LIMIT: usize = 1 << 14;
/// The log entry that ends one lookup (a clock tick).
pub(super) const TICK: u64 = u64::MAX;

/// A thread's sampling countdown and access logs, in one thread-local: a
/// sampled lookup takes its log and gives it back with no borrow flag or
/// search when the thread reads through one budget (the usual case).
struct ThreadLogs {
    /// Lookups this thread starts before the next one it samples.
    until_sample: Cell<u32>,
    /// The budget whose log `log` is (0: none yet; budget ids start at 1).
    owner: Cell<u64>,
    /// The access log of budget `owner`.
    log: Cell<Vec<u64>>,
    /// The logs of the other budgets this thread has read through.
    others: RefCell<Vec<(u64, Vec<u64>)>>,
}

thread_local! {
    static THREAD_LOGS: ThreadLogs = const {
        ThreadLogs {
            until_sample: Cell::new(0),
            owner: Cell::new(0),
            log: Cell::new(Vec::new()),
            others: RefCell::new(Vec::new()),
        }
    };
}

/// A log's accesses per file, for [`FilterBudget::feed`]: reused from
/// log to log, so replaying allocates nothing once warm.
///
/// Files are found by an open-addressed table (linear probing, a
/// multiplicative hash of the file number) rather than a general hash map:
/// counting is a few instructions per entry, and a log's 1,024 entries are
/// counted once per log. The table is at least twice the log's entries, so
/// probes stay short, and it is emptied slot by slot after each log.
#[derive(Default)]
pub(super) struct Runs {
    /// File numbers by slot; [`TICK`] marks an empty slot (never a file).
    keys: Vec<u64>,
    /// Each occupied slot's accesses so far.
    counts: Vec<u32>,
    /// One entry per file of the log, in the order of its first access.
    firsts: Vec<FirstAccess>,
    /// Lookups (ticks) in the log after the last file's first access.
    ticks_after: u64,
}

/// A file's accesses in a log, with the lookups the log ended before its
/// first one.
struct FirstAccess {
    /// Lookups ended between the previous file's first access and this one's.
    ticks_before: u64,
    /// The file.
    file: u64,
    /// Its accesses in the log.
    accesses: u32,
    /// Its slot in the table.
    slot: usize,
}

impl Runs {
    /// Counts the accesses of `events` per file and the lookups ended
    /// before each file's first access, in one pass.
    fn count(&mut self, events: &[u64]) {
        self.firsts.clear();
        let want = (2 * events.len()).next_power_of_two().max(64);
        if self.keys.len() < want {
            self.keys = vec![TICK; want];
            self.counts = vec![0; want];
        }
        let mask = self.keys.len() - 1;
        let shift = 64 - mask.count_ones();
        // Both tables as slices of `mask + 1` slots, indexed by `h & mask`:
        // the compiler then knows every index is in bounds.
        let keys = &mut self.keys[..=mask];
        let counts = &mut self.counts[..=mask];
        let mut ticks = 0;
        for &e in events {
            if e == TICK {
                ticks += 1;
                continue;
            }
            // Fibonacci hashing: the top bits of the product.
            let mut h = (e.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize;
            loop {
                h &= mask;
                let k = keys[h];
                if k == e {
                    counts[h] += 1;
                    break;
                }
                if k == TICK {
                    keys[h] = e;
                    counts[h] = 1;
                    self.firsts.push(FirstAccess {
                        ticks_before: std::mem::take(&mut ticks),
                        file: e,
                        accesses: 0,
                        slot: h,
                    });
                    break;
                }
                h += 1;
            }
        }
        self.ticks_after = ticks;
        for f in &mut self.firsts {
            f.accesses = self.counts[f.slot];
            self.keys[f.slot] = TICK;
        }
    }
}

impl FilterBudget {
    /// Starts a lookup on this thread. Under a budget, one lookup in
    /// [`ACCESS_SAMPLE`] records the files whose filters it probes: it gets
    /// this thread's access log (see `KeyProbe::access_log`) and pushes their
    /// numbers itself, with no thread-local access per file; the others get
    /// `None`.
    #[inline]
    pub fn sample_lookup(&self) -> Option<Vec<u64>> {
        if !self.limited() {
            return None;
        }
        THREAD_LOGS.with(|t| match t.until_sample.get() {
            0 => {
                t.until_sample.set(self.config.access_sample - 1);
                Some(self.log_of(t, std::mem::take))
            }
            n => {
                t.until_sample.set(n - 1);
                None
            }
        })
    }

    /// Ends the sampled lookup whose log [`sample_lookup`](Self::sample_lookup)
    /// handed out ([`ACCESS_SAMPLE`] ticks of the allocator's clock). A full
    /// log goes to the worker (or, without one, is replayed here if the
    /// allocator's lock is free); else it goes back to the thread.
    #[inline]
    pub fn end_lookup(&self, mut log: Vec<u64>) {
        log.push(TICK);
        let full = log.len() >= LOG_BATCH;
        if full {
            if let Some(w) = self.worker.get() {
                w.send(log);
                log = Vec::with_capacity(LOG_CAPACITY);
            }
        }
        self.with_log(|mine| {
            if mine.is_empty() {
                *mine = log; // the usual case: the log taken at the start
            } else {
                mine.extend_from_slice(&log); // a lookup nested in this one logged meanwhile
            }
        });
        if full && self.worker.get().is_none() {
            self.replay();
        }
    }

    /// The worker's turn: replays `events` (a lookup thread's log) and
    /// carries out the changes.
    pub(super) fn replay_log(&self, events: &[u64]) {
        let mut st = self.state.lock();
        self.drain_forgotten(&mut st);
        self.feed(&mut st, events);
        self.apply(&mut st);
    }

    /// Replays this thread's log if the allocator's lock is free.
    fn replay(&self) {
        let Some(mut st) = self.state.try_lock() else {
            self.with_log(|log| {
                if log.len() > LOG_LIMIT {
                    log.drain(..log.len() / 2);
                }
            });
            return;
        };
        let events = self.with_log(std::mem::take);
        self.drain_forgotten(&mut st);
        self.feed(&mut st, &events);
        self.apply(&mut st);
        // Give the buffer back, so the log does not reallocate.
        let mut events = events;
        events.clear();
        self.with_log(|log| {
            if log.is_empty() {
                *log = events;
            }
        });
    }

    /// Replays logged events into the allocator: each sampled lookup and
    /// access stands for the sampling rate's number of them
    /// ([`ACCESS_SAMPLE`] by default). The accesses of one file
    /// in the log go to the allocator together, as one run at the place of
    /// the first of them ([`Allocator::record_access_run`]): its queues move
    /// once per file and log, not once per access (a log of 1,024 entries
    /// of a small tree names a few dozen files). Files get their chances at
    /// units in the order the log first names them, as one access at a time
    /// would; a file's recency and expiry are those of its first access in
    /// the log, earlier than its last by less than one log's lookups (a few
    /// hundred), where lifetimes are thousands. The clock advances once per
    /// file, by the lookups that ended before its first access, so the log
    /// is walked once, when it is counted.
    ///
    /// [`Allocator::record_access_run`]: crate::filter::elastic::Allocator::record_access_run
    pub(super) fn feed(&self, st: &mut State, events: &[u64]) {
        let per = self.config.access_sample;
        let mut runs = std::mem::take(&mut st.runs);
        runs.count(events);
        let per_tick = u64::from(per);
        let mut stale = Vec::new();
        for f in &runs.firsts {
            if f.ticks_before > 0 {
                st.alloc.tick(f.ticks_before * per_tick);
            }
            if let Some(t) = st.files.get(&f.file) {
                st.alloc
                    .record_access_run(f.file, f64::from(per), f.accesses);
                if let Some(rf) = t.live().filter(|rf| rf.index().stale()) {
                    stale.push(rf);
                }
            }
        }
        if runs.ticks_after > 0 {
            st.alloc.tick(runs.ticks_after * per_tick);
        }
        st.runs = runs;
        for rf in stale {
            self.rerank(&rf);
        }
    }

    /// Chooses the resident partitions of a partitioned filter again, the
    /// hottest now within the units it has (its bytes stay within them, so
    /// the allocator's plan holds). Under the lock, as every swap.
    fn rerank(&self, rf: &ResidentFilter) {
        let units = rf.resident();
        if units == 0 {
            return;
        }
        let number = rf.number();
        if let Ok(Some(f)) = rf.with_filter(|current| {
            self.loader
                .load_units(number, current, units)
                .map(|f| (f != *current).then_some(f))
        }) {
            rf.replace(f);
        }
    }

    /// Runs `f` on this thread's access log of this budget.
    pub(super) fn with_log<R>(&self, f: impl FnOnce(&mut Vec<u64>) -> R) -> R {
        THREAD_LOGS.with(|t| self.log_of(t, f))
    }

    /// Runs `f` on this budget's log in `t` (`f` must not reach the logs).
    #[inline]
    fn log_of<R>(&self, t: &ThreadLogs, f: impl FnOnce(&mut Vec<u64>) -> R) -> R {
        if t.owner.get() == 0 {
            t.owner.set(self.id);
        }
        if t.owner.get() == self.id {
            let mut log = t.log.take();
            let r = f(&mut log);
            t.log.set(log);
            return r;
        }
        let mut others = t.others.borrow_mut();
        let i = match others.iter().position(|(id, _)| *id == self.id) {
            Some(i) => i,
            None => {
                others.push((self.id, Vec::with_capacity(LOG_CAPACITY)));
                others.len() - 1
            }
        };
        f(&mut others[i].1)
    }
}

#[cfg(test)]
mod tests {
    use super::{Runs, TICK};
    use std::collections::BTreeMap;

    /// Counts logs of every size, from a few files to more files than the
    /// table had slots for the log before (it grows), with clashing hashes,
    /// against a map; the table is empty again after each log.
    #[test]
    fn runs_count_every_file_and_tick() {
        let mut runs = Runs::default();
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        for (len, files) in [(10, 3u64), (1_024, 60), (5_000, 4_000), (300, 1 << 40)] {
            let mut log = Vec::new();
            for _ in 0..len {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                // Multiples of 1 << 20 share their low bits: clashing hashes.
                log.push(if rng.is_multiple_of(5) {
                    TICK
                } else {
                    (rng % files) << 20
                });
            }
            runs.count(&log);
            let mut want: BTreeMap<u64, u32> = BTreeMap::new();
            let mut order = Vec::new();
            let mut ticks_before = Vec::new();
            let mut ticks = 0;
            for &e in &log {
                if e == TICK {
                    ticks += 1;
                } else {
                    let n = want.entry(e).or_insert(0);
                    if *n == 0 {
                        order.push(e);
                        ticks_before.push(std::mem::take(&mut ticks));
                    }
                    *n += 1;
                }
            }
            let got: Vec<(u64, u32, u64)> = runs
                .firsts
                .iter()
                .map(|f| (f.file, f.accesses, f.ticks_before))
                .collect();
            let expected: Vec<(u64, u32, u64)> = order
                .iter()
                .zip(&ticks_before)
                .map(|(&f, &t)| (f, want[&f], t))
                .collect();
            assert_eq!(got, expected, "log of {len} entries");
            assert_eq!(runs.ticks_after, ticks);
            assert!(runs.keys.iter().all(|&k| k == TICK), "table emptied");
        }
    }
}
