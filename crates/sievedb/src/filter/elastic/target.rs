//! Moving a file's target: what the plan wants resident of it, and what a
//! move keeps consistent (the planned bytes, `E`, the multi-queue, the
//! pending changes, the shrink order).

use std::collections::BTreeMap;

use super::mq::MultiQueue;
use super::trim::TrimOrder;
use super::{Allocator, FileState, FilterPolicy};

impl Allocator {
    /// Sets a file's target, keeping `used`, `E`, its queue and the pending
    /// set consistent.
    pub(super) fn set_target(&mut self, id: u64, n: u32) {
        let (files, mut books) = self.split();
        if let Some(f) = files.get_mut(&id) {
            books.retarget(id, f, n);
        }
    }

    /// The file map and, borrowed apart from it, what a target move keeps
    /// consistent: a pass over the files can move targets in place.
    pub(super) fn split(&mut self) -> (&mut BTreeMap<u64, FileState>, Books<'_>) {
        let books = Books {
            used: &mut self.used,
            extra_io: &mut self.extra_io,
            mq: &mut self.mq,
            pending: &mut self.pending,
            moves: &mut self.moves,
            epoch: &mut self.epoch,
            trim: &mut self.trim,
            policy: self.cfg.policy,
        };
        (&mut self.files, books)
    }
}

/// What moving a file's target updates besides the file (see
/// [`Allocator::set_target`]), borrowed apart from the file map.
pub(super) struct Books<'a> {
    used: &'a mut u64,
    extra_io: &'a mut f64,
    mq: &'a mut MultiQueue,
    pending: &'a mut Vec<u64>,
    moves: &'a mut u64,
    epoch: &'a mut u64,
    trim: &'a mut TrimOrder,
    policy: FilterPolicy,
}

impl Books<'_> {
    /// Moves the target of file `id`, whose state is `f`, to `n` (capped at
    /// its units), keeping `used`, `E`, its queue, the pending set and the
    /// shrink order consistent.
    pub(super) fn retarget(&mut self, id: u64, f: &mut FileState, n: u32) {
        let n = n.min(f.units);
        if n == f.target {
            return;
        }
        let ub = f.desc.unit_bytes;
        *self.used = *self.used - f.target as u64 * ub + n as u64 * ub;
        *self.extra_io += f.hot * (f.fp(n) - f.fp(f.target));
        // Filed at its latest access in its new queue: a demoted file keeps
        // its recency rank. Only the elastic policies read the queues
        // (`elastic_grow`); the others keep none, and the files of a batch
        // being registered are filed at its end.
        if f.in_queue {
            self.mq.remove(f.target, f.stamp);
            self.mq.insert(n, f.last, id);
        }
        f.stamp = f.last;
        f.target = n;
        // Listed once, whatever its handed count: `take_changes` compares.
        if !f.queued {
            f.queued = true;
            self.pending.push(id);
        }
        *self.moves += 1;
        *self.epoch += 1;
        self.trim.refile(self.policy, id, f);
    }
}
