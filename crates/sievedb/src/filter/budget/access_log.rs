//! The budget's access log: one lookup in [`ACCESS_SAMPLE`] per thread
//! records the files whose filters it probed in a per-thread log, which is
//! handed to the worker (or replayed in place) and fed to the allocator.

use std::cell::RefCell;

use super::{FilterBudget, State};

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
/// unlimited; BENCHMARKS.md). The allocator then hears of accesses ~800
/// lookups late, well inside a file's lifetime.
pub const LOG_BATCH: usize = 1024;
/// Log entries past which a thread drops the oldest half of its log.
pub const LOG_LIMIT: usize = 1 << 14;
/// The log entry that ends one lookup (a clock tick).
pub(super) const TICK: u64 = u64::MAX;

thread_local! {
    /// This thread's access log of each budget it has read through.
    static LOGS: RefCell<Vec<(u64, Vec<u64>)>> = const { RefCell::new(Vec::new()) };
    /// Lookups this thread starts before the next one it samples.
    static UNTIL_SAMPLE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl FilterBudget {
    /// Whether the lookup this thread starts records its filter accesses:
    /// under a budget, one in [`ACCESS_SAMPLE`].
    #[inline]
    pub fn sample_lookup(&self) -> bool {
        if !self.limited() {
            return false;
        }
        UNTIL_SAMPLE.with(|c| match c.get() {
            0 => {
                c.set(ACCESS_SAMPLE - 1);
                true
            }
            n => {
                c.set(n - 1);
                false
            }
        })
    }

    /// Notes that the sampled lookup in progress on this thread probed the
    /// filter of file `number`.
    #[inline]
    pub fn record(&self, number: u64) {
        self.with_log(|log| log.push(number));
    }

    /// Ends the sampled lookup in progress on this thread ([`ACCESS_SAMPLE`]
    /// ticks of the allocator's clock); a full log goes to the worker (or,
    /// without one, is replayed here if the allocator's lock is free).
    #[inline]
    pub fn end_lookup(&self) {
        let full = self.with_log(|log| {
            log.push(TICK);
            log.len() >= LOG_BATCH
        });
        if full {
            match self.worker.get() {
                Some(w) => {
                    w.send(
                        self.with_log(|log| std::mem::replace(log, Vec::with_capacity(LOG_BATCH))),
                    );
                }
                None => self.replay(),
            }
        }
    }

    /// The worker's turn: replays `events` (a lookup thread's log) and
    /// carries out the changes.
    pub(super) fn replay_log(&self, events: &[u64]) {
        let mut st = self.state.lock();
        self.drain_forgotten(&mut st);
        Self::feed(&mut st, events);
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
        Self::feed(&mut st, &events);
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
    /// access stands for [`ACCESS_SAMPLE`] of them.
    pub(super) fn feed(st: &mut State, events: &[u64]) {
        for e in events {
            if *e == TICK {
                st.alloc.tick(u64::from(ACCESS_SAMPLE));
            } else if st.files.contains_key(e) {
                st.alloc.record_accesses(*e, f64::from(ACCESS_SAMPLE));
            }
        }
    }

    pub(super) fn with_log<R>(&self, f: impl FnOnce(&mut Vec<u64>) -> R) -> R {
        LOGS.with(|logs| {
            let mut logs = logs.borrow_mut();
            let i = match logs.iter().position(|(id, _)| *id == self.id) {
                Some(i) => i,
                None => {
                    logs.push((self.id, Vec::with_capacity(LOG_BATCH)));
                    logs.len() - 1
                }
            };
            f(&mut logs[i].1)
        })
    }
}
