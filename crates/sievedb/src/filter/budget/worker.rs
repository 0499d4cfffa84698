//! The filter budget's worker: a thread that replays the lookups' access logs
//! into the allocator and carries out its unit loads and drops, so that a
//! lookup only appends to its thread's log and hands a full one over, never
//! waiting for the allocator's lock or a load.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Weak};

use super::FilterBudget;

/// Logs waiting for the worker at most. A log handed over while the queue is
/// full is dropped: the accesses are a sample, and a lookup never waits.
pub const QUEUE: usize = 16;

/// The handle of a budget's worker thread. The thread ends when the handle
/// is dropped (with the budget).
pub(super) struct Worker {
    tx: SyncSender<Vec<u64>>,
    /// Logs handed over.
    sent: AtomicU64,
    /// Logs the thread has replayed (or found the budget gone for).
    done: Arc<AtomicU64>,
}

impl Worker {
    /// Starts the worker of `budget` (held weakly: the budget owns the
    /// handle, and its drop ends the thread).
    pub(super) fn start(budget: Weak<FilterBudget>) -> std::io::Result<Worker> {
        let (tx, rx) = sync_channel::<Vec<u64>>(QUEUE);
        let done = Arc::new(AtomicU64::new(0));
        let replayed = done.clone();
        std::thread::Builder::new()
            .name("sievedb-filters".into())
            .spawn(move || {
                while let Ok(log) = rx.recv() {
                    if let Some(b) = budget.upgrade() {
                        b.replay_log(&log);
                    }
                    replayed.fetch_add(1, Ordering::Release);
                }
            })?;
        Ok(Worker {
            tx,
            sent: AtomicU64::new(0),
            done,
        })
    }

    /// Hands `log` to the thread; it is dropped if the queue is full.
    pub(super) fn send(&self, log: Vec<u64>) {
        if self.tx.try_send(log).is_ok() {
            self.sent.fetch_add(1, Ordering::Release);
        }
    }

    /// Waits until every log handed over before the call is replayed (at
    /// most [`QUEUE`] of them). Never called with the budget's lock held.
    pub(super) fn settle(&self) {
        let sent = self.sent.load(Ordering::Acquire);
        while self.done.load(Ordering::Acquire) < sent {
            std::thread::yield_now();
        }
    }
}
