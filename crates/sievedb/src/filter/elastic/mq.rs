//! ElasticBF's multi-queue (§3.3): queue `Q_n` holds the files with `n`
//! units enabled, each in least-recently-used order, and an access to a file
//! that could use one more unit looks for *expired* files to take it from.

use std::collections::BTreeMap;

use super::{Allocator, FileState, GAIN_THRESHOLD, LOAD_COST, MAX_UNITS};

/// How many files of one queue a file at 0 units looks at, from the LRU
/// side, for a unit it may take although they have not expired.
const RESCUE_LOOKS: usize = 8;

/// Queues `Q_0..=Q_64`, each mapping a recency stamp to a file id.
///
/// Invariant: under the elastic policies (the only ones that read the
/// queues; under the others they stay empty, saving a B-tree move per
/// target moved) every live file is in exactly one queue, the one of its
/// target unit count, filed under a stamp no later than its latest access's
/// (`FileState::stamp <= FileState::last`); stamps are unique. The order is
/// lazy: an access only sets the file's `last`, and a scan from the LRU side
/// re-files each stale file it meets under its `last`
/// ([`Allocator::lru_fresh`]). The first fresh file met is then the true
/// LRU: every other file's latest access is no earlier than its filed
/// stamp, which is no earlier than that file's. So a scan sees the order of
/// an eager queue, and an access costs no queue move (a hot file's many
/// accesses cost one re-filing, when a scan reaches it). Moving a file
/// between queues files it at its latest access, so a demoted file keeps its
/// recency rank.
#[derive(Debug)]
pub(super) struct MultiQueue {
    queues: Vec<BTreeMap<u64, u64>>,
}

impl MultiQueue {
    pub(super) fn new() -> Self {
        MultiQueue {
            queues: (0..=MAX_UNITS).map(|_| BTreeMap::new()).collect(),
        }
    }

    pub(super) fn insert(&mut self, q: u32, stamp: u64, id: u64) {
        self.queues[q as usize].insert(stamp, id);
    }

    pub(super) fn remove(&mut self, q: u32, stamp: u64) {
        self.queues[q as usize].remove(&stamp);
    }

    /// Files many entries `(queue, stamp, file)` at once: each queue's new
    /// entries are built into a map and appended, linear in the queue's
    /// size rather than a B-tree insert each.
    fn insert_all(&mut self, mut entries: Vec<(u32, u64, u64)>) {
        entries.sort_unstable();
        let mut rest = entries.as_slice();
        while let Some(&(q, _, _)) = rest.first() {
            let end = rest.iter().position(|e| e.0 != q).unwrap_or(rest.len());
            let (these, after) = rest.split_at(end);
            let mut built: BTreeMap<u64, u64> = these.iter().map(|&(_, s, id)| (s, id)).collect();
            self.queues[q as usize].append(&mut built);
            rest = after;
        }
    }

    /// Every filed entry: `(queue, stamp, file)`.
    #[cfg(test)]
    pub(super) fn filed(&self) -> impl Iterator<Item = (u32, u64, u64)> + '_ {
        self.queues
            .iter()
            .enumerate()
            .flat_map(|(q, m)| m.iter().map(move |(&s, &id)| (q as u32, s, id)))
    }

    /// The `k`-th file of `Q_q` in filed order (0: the first), stale or not.
    fn nth_filed(&self, q: u32, k: usize) -> Option<u64> {
        self.queues[q as usize].values().nth(k).copied()
    }

    /// The highest non-empty queue.
    pub(super) fn top(&self) -> u32 {
        (0..=MAX_UNITS)
            .rev()
            .find(|&q| !self.queues[q as usize].is_empty())
            .unwrap_or(0)
    }
}

impl Allocator {
    /// Files the live files of `ids` (in any order, repeats allowed) that
    /// are in no queue in the queue of their target, at their latest access
    /// (the end of a batch registration, see [`Allocator::add_files`]).
    /// A batch of a quarter of the files or more (an open) is found by a
    /// pass over the files rather than a search per file.
    pub(super) fn file_in_queues(&mut self, ids: &[u64]) {
        let mut entries = Vec::with_capacity(ids.len());
        let mut file = |id: u64, f: &mut FileState| {
            if !f.in_queue {
                f.stamp = f.last;
                f.in_queue = true;
                entries.push((f.target, f.stamp, id));
            }
        };
        if 4 * ids.len() >= self.files.len() {
            self.work += self.files.len() as u64;
            for (&id, f) in self.files.iter_mut() {
                file(id, f);
            }
        } else {
            self.work += ids.len() as u64;
            for &id in ids {
                if let Some(f) = self.files.get_mut(&id) {
                    file(id, f);
                }
            }
        }
        self.mq.insert_all(entries);
    }

    /// The `k`-th least recently used file of `Q_q` (0: the LRU), re-filing
    /// the stale files met on the way (see [`MultiQueue`]'s lazy order).
    pub(super) fn lru_fresh(&mut self, q: u32, k: usize) -> Option<u64> {
        loop {
            let j = self.mq.nth_filed(q, k)?;
            let f = self.files.get_mut(&j)?;
            if f.stamp == f.last {
                return Some(j);
            }
            self.mq.remove(q, f.stamp);
            f.stamp = f.last;
            self.mq.insert(q, f.stamp, j);
        }
    }

    /// ElasticBF's adjustment after an access of file `id` (its count and
    /// recency already updated): one more unit for it if memory is free, or
    /// else taken from expired files found from `Q_m` down to `Q_1`, each
    /// queue from its LRU side, a file that has not expired ending the search
    /// in its queue. It happens only if `gain − cost > 1e-4·E` (and more than
    /// one load's worth); otherwise, or if the expired files cannot free
    /// enough, nothing changes. A file at 0 units may also take a unit from
    /// the least recently used files of `Q_2` and above that have not
    /// expired, if the exchange pays: a read file is never left without a
    /// filter only because nothing expired yet.
    pub(super) fn elastic_grow(&mut self, id: u64) {
        let Some(f) = self.files.get(&id) else { return };
        let n = f.target;
        if n >= f.units {
            return;
        }
        let need = f.desc.unit_bytes;
        let gain = f.hot * (f.fp(n) - f.fp(n + 1));
        let threshold =
            (GAIN_THRESHOLD * self.extra_io).max(self.cfg.load_cost.unwrap_or(LOAD_COST));
        if gain <= threshold {
            return; // costs are never negative, so no set of victims pays
        }
        let mut freed = self.budget.saturating_sub(self.used);
        if freed >= need {
            self.set_target(id, n + 1);
            return;
        }

        // Demote tentatively (so a file demoted from Q_q is met again in
        // Q_{q−1} at its recency rank, as in the paper), remembering how to
        // undo it if the exchange does not pay.
        let extra_io = self.extra_io;
        let mut victims: Vec<u64> = Vec::new();
        let mut cost = 0.0;
        'search: for q in (1..=self.mq.top()).rev() {
            while let Some(j) = self.lru_fresh(q, 0) {
                if j == id {
                    break; // the accessed file is its queue's MRU: nothing after it
                }
                let v = &self.files[&j];
                if self.clock <= v.expire {
                    break; // not expired: nothing more recent in this queue is
                }
                cost += v.hot * (v.fp(q - 1) - v.fp(q));
                freed += v.desc.unit_bytes;
                victims.push(j);
                self.set_target(j, q - 1);
                if gain - cost <= threshold {
                    break 'search; // cost only grows from here: give up early
                }
                if freed >= need {
                    break 'search;
                }
            }
        }
        // A read file with no unit at all is never left so because nothing
        // expired yet (at open every file's lifetime starts afresh): it may
        // take a unit from the least recently used files of the queues above
        // `Q_1`, expired or not, if the exchange still pays. No file is
        // taken to 0 units for it.
        if n == 0 && freed < need && gain - cost > threshold {
            'rescue: for q in (2..=self.mq.top()).rev() {
                let mut skipped = 0;
                while let Some(j) = self.lru_fresh(q, skipped) {
                    if j == id {
                        break;
                    }
                    let v = &self.files[&j];
                    let c = v.hot * (v.fp(q - 1) - v.fp(q));
                    if gain - cost - c <= threshold {
                        skipped += 1; // too costly; a later one may be cheaper,
                        if skipped >= RESCUE_LOOKS {
                            break; // but only a few are looked at per queue
                        }
                        continue;
                    }
                    cost += c;
                    freed += v.desc.unit_bytes;
                    victims.push(j);
                    self.set_target(j, q - 1);
                    if freed >= need {
                        break 'rescue;
                    }
                }
            }
        }
        if freed >= need && gain - cost > threshold {
            self.set_target(id, n + 1);
        } else {
            for &j in victims.iter().rev() {
                let t = self.files[&j].target;
                self.set_target(j, t + 1);
            }
            self.extra_io = extra_io; // undo exactly, without float drift
        }
    }
}
