//! Write stalls: slowing and stopping writers while the tree catches up.

use super::*;

impl DbInner {
    /// Makes sure the active memtable has room, stalling or switching as
    /// needed; returns the memtable to write into. Slowdowns and stops are
    /// counted (one per write group) with the time they took.
    pub(super) fn make_room(&self, wal: &mut WalState) -> Result<Arc<Memtable>> {
        let mut slowed = false;
        let mut stopped: Option<std::time::Instant> = None;
        let r = self.make_room_inner(wal, &mut slowed, &mut stopped);
        if let Some(t) = stopped {
            bump(&self.counters.write_stops, 1);
            bump(&self.counters.write_stop_micros, micros(t));
        }
        r
    }

    fn make_room_inner(
        &self,
        wal: &mut WalState,
        slowed: &mut bool,
        stopped: &mut Option<std::time::Instant>,
    ) -> Result<Arc<Memtable>> {
        loop {
            let l0 = self.l0_runs.load(Ordering::Relaxed);
            if !*slowed && l0 >= self.opts.level0_slowdown_trigger {
                let t = std::time::Instant::now();
                std::thread::sleep(Duration::from_millis(1));
                bump(&self.counters.write_slowdowns, 1);
                bump(&self.counters.write_slowdown_micros, micros(t));
                *slowed = true;
                continue;
            }
            let (mem, imms) = {
                let m = self.mem.read();
                (m.mem.clone(), m.imm.len())
            };
            if mem.approximate_size() < self.opts.write_buffer_size {
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
                || self.l0_runs.load(Ordering::Relaxed) >= self.opts.level0_stop_trigger
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

/// Microseconds since `t`.
fn micros(t: std::time::Instant) -> u64 {
    u64::try_from(t.elapsed().as_micros()).unwrap_or(u64::MAX)
}
