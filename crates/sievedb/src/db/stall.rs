//! Write stalls: slowing and stopping writers while the tree catches up.

use super::*;

impl DbInner {
    /// Makes sure the active memtable has room, stalling or switching as
    /// needed; returns the memtable to write into.
    pub(super) fn make_room(&self, wal: &mut WalState) -> Result<Arc<Memtable>> {
        let mut slowed = false;
        loop {
            let l0 = self.l0_runs.load(Ordering::Relaxed);
            if !slowed && l0 >= self.opts.level0_slowdown_trigger {
                std::thread::sleep(Duration::from_millis(1));
                slowed = true;
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
                self.bg_cv.notify_all();
                self.done_cv.wait_for(&mut bg, Duration::from_millis(100));
                continue;
            }
            drop(bg);
            self.switch_memtable(wal)?;
        }
    }
}
