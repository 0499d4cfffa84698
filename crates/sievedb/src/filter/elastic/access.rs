//! The allocator's side of lookups: accesses counted per file, the logical
//! clock (Gets) and the decay of the counts, ElasticBF's lifeTime, and what
//! the counts are read back as (hotness, `E[Extra_IO]`, the snapshot the
//! `HOTNESS` file keeps).

use super::{Allocator, HALF_LIFE_LIFETIMES, MIN_DEFAULT_LIFETIME, RECOMPUTE_EVERY};

impl Allocator {
    /// Restores the logical clock (from a [`HotnessSnapshot`]) before files
    /// are added on open; the decay schedule restarts from it.
    ///
    /// [`HotnessSnapshot`]: super::hotness::HotnessSnapshot
    pub fn set_clock(&mut self, clock: u64) {
        self.clock = clock;
        self.decay_epoch = clock;
    }

    #[cfg(test)]
    /// One Get probed this file's filter: its count grows by one and it
    /// becomes the most recently used; under the elastic policies this is
    /// when it may take a unit (see ElasticBF §3.2–3.3). The clock does not
    /// move.
    pub fn record_access(&mut self, id: u64) {
        self.record_access_run(id, 1.0, 1);
    }

    /// `accesses` sampled accesses of one file replayed together (a log's
    /// accesses to one file, at the clock of the first), each standing for
    /// `weight` accesses: one update of the file's count and recency, and
    /// up to `accesses` chances for the elastic policies to give it one
    /// more unit. The same as that many single accesses of `weight` in a
    /// row, except that the count is complete before the first chance; the
    /// allocator's queues move once instead of `accesses` times.
    pub fn record_access_run(&mut self, id: u64, weight: f64, accesses: u32) {
        let lifetime = self.lifetime();
        self.work += 1;
        let Some(f) = self.files.get_mut(&id) else {
            return;
        };
        let weight = weight * f64::from(accesses);
        f.hot += weight;
        self.levels.heat(f.desc.level, weight);
        self.epoch += 1;
        self.short.set_hot(id, f.hot);
        f.expire = self.clock + lifetime;
        f.last = self.next_stamp;
        self.next_stamp += 1;
        self.extra_io += weight * f.fp(f.target);
        // A file holding all its units has none to gain (the usual case of
        // a hot file): no chance to take.
        let full = f.target >= f.units;
        self.total_hot += weight;
        self.since_recompute += u64::from(accesses);
        if self.since_recompute >= RECOMPUTE_EVERY {
            self.recompute();
        }
        if self.cfg.policy.is_elastic() && !full {
            for _ in 0..accesses {
                let before = self.files.get(&id).map(|f| f.target);
                self.elastic_grow(id);
                if self.files.get(&id).map(|f| f.target) == before {
                    break; // it did not pay now; the same count will not pay later
                }
            }
        }
    }

    /// The logical clock advanced by `gets` Gets; counts halve once per
    /// half-life passed.
    pub fn tick(&mut self, gets: u64) {
        self.clock = self.clock.saturating_add(gets);
        let half_life = self.half_life();
        if half_life == 0 {
            self.decay_epoch = self.clock;
            return;
        }
        let halvings = (self.clock - self.decay_epoch) / half_life;
        if halvings == 0 {
            return;
        }
        self.decay_epoch += halvings * half_life;
        let factor = 0.5f64.powi(halvings.min(2_000) as i32);
        self.visit_all();
        for f in self.files.values_mut() {
            f.hot *= factor;
        }
        self.levels.decay(factor);
        self.epoch += 1;
        let files = &self.files;
        self.short.rekey(|id| files.get(&id).map_or(0.0, |f| f.hot));
        self.trim_forget_order();
        self.recompute();
    }

    /// The current (decayed) access count of a file.
    pub fn hotness(&self, id: u64) -> Option<f64> {
        self.files.get(&id).map(|f| f.hot)
    }

    /// `E[Extra_IO] = Σ f_i·fp_i(n_i)` over live files (ElasticBF Eq. 1), at
    /// the target counts.
    pub fn expected_extra_io(&self) -> f64 {
        self.extra_io.max(0.0)
    }

    /// Gets so far.
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// `(file id, hotness)` of every live file, by id, for persistence.
    pub fn hotness_snapshot(&self) -> Vec<(u64, f64)> {
        self.files.iter().map(|(&id, f)| (id, f.hot)).collect()
    }

    /// ElasticBF's lifeTime in Gets.
    pub fn lifetime(&self) -> u64 {
        self.cfg
            .lifetime
            .unwrap_or_else(|| MIN_DEFAULT_LIFETIME.max(2 * self.files.len() as u64))
    }

    /// Gets per halving of the counts (0: never).
    pub fn half_life(&self) -> u64 {
        self.cfg
            .half_life
            .unwrap_or_else(|| HALF_LIFE_LIFETIMES.saturating_mul(self.lifetime()))
    }
}
