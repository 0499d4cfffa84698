//! The budget's side of file hotness: compaction outputs inheriting their
//! inputs' hotness, and the hotness file loaded at open and saved as the
//! database runs (its format is [`hotness`]'s).

use std::path::Path;
use std::time::{Duration, Instant};

use super::{FileShape, FilterBudget};
use crate::error::Result;
use crate::filter::elastic::hotness;
use crate::io::FileSystem;

/// Least time between two saves of the hotness file while the database runs.
pub const HOTNESS_SAVE_INTERVAL: Duration = Duration::from_secs(1);

impl FilterBudget {
    /// Gives compaction outputs the hotness of their inputs, in proportion
    /// to the entries they take (see [`inherit`](fn@super::elastic::inherit)); they pick
    /// it up when they are registered.
    pub fn inherit(
        &self,
        inputs: &[(FileShape, &[u8], &[u8])],
        outputs: &[(FileShape, &[u8], &[u8])],
    ) {
        if !self.limited() || inputs.is_empty() || outputs.is_empty() {
            return;
        }
        let mut st = self.state.lock();
        let ins: Vec<_> = inputs
            .iter()
            .map(|&(s, lo, hi)| super::elastic::InheritInput {
                hotness: st.alloc.hotness(s.number).unwrap_or(0.0),
                entries: s.entries,
                smallest: lo,
                largest: hi,
            })
            .collect();
        let outs: Vec<_> = outputs
            .iter()
            .map(|&(s, lo, hi)| super::elastic::InheritOutput {
                entries: s.entries,
                smallest: lo,
                largest: hi,
            })
            .collect();
        for ((s, _, _), h) in outputs.iter().zip(super::elastic::inherit(&ins, &outs)) {
            st.pending.insert(s.number, h);
        }
    }

    /// Reads the hotness file of `dir` (see [`hotness`]) so that files
    /// registered later start with the access counts they had, and the
    /// clock where it was. Without a budget, or when the file is missing or
    /// damaged, nothing happens (the database starts cold). Call before the
    /// files are registered.
    pub fn load_hotness(&self, fs: &dyn FileSystem, dir: &Path) -> Result<()> {
        if !self.limited() {
            return Ok(());
        }
        if let Some(snap) = hotness::load(fs, dir)? {
            let mut st = self.state.lock();
            st.alloc.set_clock(snap.clock);
            st.pending.extend(snap.files);
        }
        Ok(())
    }

    /// After the files of a reopened database registered: lets the policy
    /// place units by the restored access counts at once (see
    /// [`Allocator::warm_start`](crate::filter::elastic::Allocator::warm_start)).
    pub fn warm_start(&self) {
        if !self.limited() {
            return;
        }
        let mut st = self.state.lock();
        st.alloc.warm_start();
        self.apply(&mut st);
    }

    /// Writes every registered file's hotness and the clock to the hotness
    /// file of `dir` (atomically replaced). Nothing without a budget. A save
    /// that is not `durable` (made while the database runs, after a flush or
    /// compaction) skips the fsyncs and is skipped itself when the last save
    /// was less than [`HOTNESS_SAVE_INTERVAL`] ago.
    pub fn save_hotness(&self, fs: &dyn FileSystem, dir: &Path, durable: bool) -> Result<()> {
        if !self.limited() || !self.config.policy.uses_counts() {
            return Ok(());
        }
        {
            let mut last = self.last_save.lock();
            let now = Instant::now();
            if !durable && last.is_some_and(|t| now.duration_since(t) < HOTNESS_SAVE_INTERVAL) {
                return Ok(());
            }
            *last = Some(now);
        }
        let snap = {
            let mut st = self.state.lock();
            self.drain_forgotten(&mut st);
            hotness::HotnessSnapshot {
                clock: st.alloc.clock(),
                files: st.alloc.hotness_snapshot(),
            }
        };
        hotness::save(fs, dir, &snap, durable)
    }
}
