//! Write stalls: slowing and stopping writers while the tree catches up.
//!
//! Slowdown (L0 at `level0_slowdown_trigger` runs or more): writers are paced
//! to `delayed_write_rate` bytes per second, RocksDB's delayed write rate. A
//! [`Throttle`] keeps a virtual clock: each write group advances it by the
//! time its bytes take at that rate, and the leader sleeps only once the clock
//! runs [`MIN_SLEEP`] ahead of real time, so the rate holds without a sleep
//! (and its timer slack) per small write. The pace is per byte, not per
//! group: writers queued behind a sleeping leader join its next group and
//! are charged for their bytes there, so concurrency neither escapes the
//! pace nor multiplies it. Before, each group slept 1 ms, which held one
//! writer to a few hundred KiB/s however far behind compaction was.
//!
//! Stop (too many frozen memtables, or L0 at `level0_stop_trigger`): writers
//! wait on `done_cv`, which every finished flush and compaction notifies; the
//! wait's timeout only bounds how long a missed wake-up could cost.

use super::*;

/// Real time the virtual clock must lead by before a writer sleeps.
const MIN_SLEEP: Duration = Duration::from_millis(1);

/// The slowdown's virtual clock (guarded by the WAL lock, with the writer).
#[derive(Default)]
pub(super) struct Throttle {
    /// When the bytes admitted so far have been paid for at the delayed
    /// rate; `None` outside a slowdown.
    paid_until: Option<std::time::Instant>,
}

impl Throttle {
    /// Charges `bytes` at `rate` bytes/s; returns how long to sleep now
    /// (zero until the charges run `MIN_SLEEP` ahead of real time).
    fn charge(&mut self, bytes: usize, rate: u64, now: std::time::Instant) -> Duration {
        let start = self.paid_until.map_or(now, |t| t.max(now));
        let cost = Duration::from_secs_f64(bytes as f64 / rate as f64);
        let until = start + cost;
        self.paid_until = Some(until);
        let ahead = until - now;
        if ahead >= MIN_SLEEP {
            ahead
        } else {
            Duration::ZERO
        }
    }

    /// Leaves the slowdown: the next one starts from real time.
    fn reset(&mut self) {
        self.paid_until = None;
    }
}

impl DbInner {
    /// Makes sure the active memtable has room for a group of `bytes`,
    /// slowing, stopping or switching as needed; returns the memtable to
    /// write into. Each slowdown sleep and each stop is counted with the time
    /// it took.
    pub(super) fn make_room(&self, wal: &mut WalState, bytes: usize) -> Result<Arc<Memtable>> {
        self.slow_down(wal, bytes);
        let mut stopped: Option<std::time::Instant> = None;
        let r = self.make_room_inner(wal, &mut stopped);
        if let Some(t) = stopped {
            bump(&self.counters.write_stops, 1);
            bump(&self.counters.write_stop_micros, micros(t));
        }
        r
    }

    /// Paces the group while L0 is at the slowdown trigger (see the module docs).
    fn slow_down(&self, wal: &mut WalState, bytes: usize) {
        if self.l0_runs() < self.opts.level0_slowdown_trigger {
            wal.throttle.reset();
            return;
        }
        let now = std::time::Instant::now();
        let wait = wal
            .throttle
            .charge(bytes, self.opts.delayed_write_rate, now);
        if !wait.is_zero() {
            std::thread::sleep(wait);
            bump(&self.counters.write_slowdowns, 1);
            bump(&self.counters.write_slowdown_micros, micros(now));
        }
    }

    fn make_room_inner(
        &self,
        wal: &mut WalState,
        stopped: &mut Option<std::time::Instant>,
    ) -> Result<Arc<Memtable>> {
        loop {
            let (mem, mut imms) = {
                let m = self.tree.mem.read();
                (m.mem.clone(), m.imm.len())
            };
            let mut full = mem.approximate_size() >= self.opts.write_buffer_size;
            if self.multi.load(Ordering::Acquire) {
                for t in self.trees.read().values().filter(|t| t.id != 0) {
                    let m = t.mem.read();
                    imms = imms.max(m.imm.len());
                    full |= m.mem.approximate_size() >= t.write_buffer_size.load(Ordering::Relaxed);
                }
            }
            if !full {
                return Ok(mem);
            }
            let mut bg = self.bg.lock();
            if let Some(e) = &bg.error {
                return Err(Error::ReadOnly(e.to_string()));
            }
            if bg.shutdown {
                return Err(Error::Closed);
            }
            if imms >= self.opts.max_immutable_memtables
                || self.l0_runs() >= self.opts.level0_stop_trigger
            {
                stopped.get_or_insert_with(std::time::Instant::now);
                self.bg_cv.notify_all();
                self.done_cv.wait_for(&mut bg, Duration::from_millis(100));
                continue;
            }
            drop(bg);
            self.switch_memtable(wal)?;
        }
    }
}

impl DbInner {
    /// The most runs in level 0 of any keyspace (what the stall triggers
    /// compare: a keyspace behind on compaction slows every writer, as the
    /// WAL and the memtable switch are shared).
    fn l0_runs(&self) -> usize {
        let default = self.tree.l0_runs.load(Ordering::Relaxed);
        if !self.multi.load(Ordering::Acquire) {
            return default;
        }
        let others = self
            .trees
            .read()
            .values()
            .map(|t| t.l0_runs.load(Ordering::Relaxed))
            .max();
        default.max(others.unwrap_or(0))
    }
}

/// Microseconds since `t`.
fn micros(t: std::time::Instant) -> u64 {
    u64::try_from(t.elapsed().as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_throttle_holds_the_rate_and_sleeps_at_least_min_sleep() {
        let mut t = Throttle::default();
        let now = std::time::Instant::now();
        // 1 MB/s: 100 writes of 100 B are 10 ms; no single one sleeps.
        let mut slept = Duration::ZERO;
        let mut sleeps = 0;
        for _ in 0..100 {
            let w = t.charge(100, 1_000_000, now);
            if !w.is_zero() {
                assert!(w >= MIN_SLEEP);
                sleeps += 1;
                slept = w;
            }
        }
        // Real time stood still: the last sleep covers everything charged.
        assert_eq!(slept, Duration::from_millis(10));
        assert!(sleeps > 1, "{sleeps}");
        // Time that passed pays for earlier charges; a reset forgets them.
        let later = now + Duration::from_millis(20);
        assert!(t.charge(100, 1_000_000, later).is_zero());
        t.reset();
        assert!(t.charge(100, 1_000_000, now).is_zero());
    }
}
