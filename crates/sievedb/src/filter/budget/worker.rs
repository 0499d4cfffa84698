//! The filter budget's worker: a thread that replays the lookups' access logs
//! into the allocator and carries out its unit loads and drops, so that a
//! lookup only appends to its thread's log and hands a full one over, never
//! waiting for the allocator's lock or a load.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

use super::FilterBudget;

/// Logs waiting for the worker at most. A log handed over while the queue is
/// full is dropped: the accesses are a sample, and a lookup never waits.
pub const QUEUE: usize = 16;

/// The handle of a budget's worker thread. Dropping it (with the budget)
/// closes the queue and waits for the thread to end, so that no thread of a
/// dropped database lingers (the logs still queued are skipped: the budget
/// they were for is gone).
pub(super) struct Worker {
    /// The queue's sending end; `None` once the drop closed it.
    tx: Option<SyncSender<Vec<u64>>>,
    /// The thread, joined by the drop.
    thread: Option<JoinHandle<()>>,
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
        let thread = std::thread::Builder::new()
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
            tx: Some(tx),
            thread: Some(thread),
            sent: AtomicU64::new(0),
            done,
        })
    }

    /// Hands `log` to the thread; it is dropped if the queue is full.
    pub(super) fn send(&self, log: Vec<u64>) {
        if self.tx.as_ref().is_some_and(|tx| tx.try_send(log).is_ok()) {
            self.sent.fetch_add(1, Ordering::Release);
        }
    }

    /// Waits until every log handed over before the call is replayed (at
    /// most [`QUEUE`] of them), or the thread has ended (a replay that
    /// panicked leaves its logs unreplayed: waiting for them would never
    /// end). Never called with the budget's lock held.
    pub(super) fn settle(&self) {
        let sent = self.sent.load(Ordering::Acquire);
        while self.done.load(Ordering::Acquire) < sent {
            if self.thread.as_ref().is_none_or(JoinHandle::is_finished) {
                return;
            }
            std::thread::yield_now();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // With the sending end gone, the thread's `recv` fails once the
        // queue is empty, and its loop ends.
        self.tx = None;
        let Some(thread) = self.thread.take() else {
            return;
        };
        // The thread itself drops the budget when its replay held the last
        // reference: it cannot wait for itself, and it ends right after.
        if thread.thread().id() != std::thread::current().id() {
            // A panic in a replay was the thread's; the drop goes on.
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread that ended with logs handed over unreplayed (a replay
    /// panicked) does not keep `settle` waiting.
    #[test]
    fn settle_returns_once_the_thread_has_ended() {
        let (tx, rx) = sync_channel::<Vec<u64>>(QUEUE);
        drop(rx);
        let w = Worker {
            tx: Some(tx),
            thread: Some(std::thread::spawn(|| {})),
            sent: AtomicU64::new(3),
            done: Arc::new(AtomicU64::new(1)),
        };
        w.settle();
    }

    /// Dropping the handle ends the thread before the drop returns: the
    /// thread's own references to what it shares are gone by then.
    #[test]
    fn dropping_the_handle_joins_the_thread() {
        for _ in 0..20 {
            let w = Worker::start(Weak::new()).unwrap();
            for _ in 0..4 {
                w.send(vec![1, 2, 3]);
            }
            let done = w.done.clone();
            drop(w);
            assert_eq!(Arc::strong_count(&done), 1, "the thread still runs");
        }
    }
}
