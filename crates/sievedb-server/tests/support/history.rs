//! A history of client operations on registers: each operation's
//! invocation and completion, stamped on one monotonic clock, and what it
//! came to.
//!
//! Values are `u64`s (written as decimal strings); `None` is "absent". An
//! operation's outcome is
//! - [`Outcome::Ok`] with what it returned,
//! - [`Outcome::Fail`]: it certainly did not take effect (the connection
//!   was refused, a 421 or 400), so the checker leaves it out,
//! - [`Outcome::Unknown`]: it may or may not have taken effect, at any time
//!   after its invocation (a timeout, a 503 for a write, a connection that
//!   broke after the request may have been sent).

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a client asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read the register.
    Get,
    /// Set it to a value.
    Put(u64),
    /// If it holds `expect` (`None`: absent), set it to `new`.
    Cas {
        /// The value compared.
        expect: Option<u64>,
        /// The value written if the compare held.
        new: u64,
    },
}

/// What an operation that finished returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ret {
    /// A get's value.
    Value(Option<u64>),
    /// A put's acknowledgement.
    Written,
    /// Whether a compare-and-swap's compare held.
    Swapped(bool),
}

/// What an operation came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Finished, with this answer.
    Ok(Ret),
    /// Certainly not applied.
    Fail,
    /// Perhaps applied, perhaps not.
    Unknown,
}

/// One recorded operation.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The client (thread) that ran it.
    pub client: usize,
    /// The register.
    pub key: usize,
    /// What was asked.
    pub op: Op,
    /// When it was invoked (since the history's start).
    pub invoke: Duration,
    /// When its answer came (since the history's start); `None` while
    /// running.
    pub complete: Option<Duration>,
    /// What it came to.
    pub outcome: Outcome,
}

/// A handle on an invoked operation, to complete it.
#[must_use = "complete the operation"]
pub struct Pending(usize);

/// A thread-safe recorder of operations.
pub struct History {
    start: Instant,
    entries: Mutex<Vec<Entry>>,
}

impl Default for History {
    fn default() -> Self {
        History::new()
    }
}

impl History {
    /// An empty history whose clock starts now.
    pub fn new() -> History {
        History {
            start: Instant::now(),
            entries: Mutex::new(Vec::new()),
        }
    }

    /// Time since the start.
    pub fn now(&self) -> Duration {
        self.start.elapsed()
    }

    /// The time of `at` on this history's clock.
    pub fn at(&self, at: Instant) -> Duration {
        at.saturating_duration_since(self.start)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records that `client` invokes `op` on `key`, stamped now: call it
    /// before sending the request.
    pub fn invoke(&self, client: usize, key: usize, op: Op) -> Pending {
        let mut e = self.lock();
        // Stamped under the lock: the stamps are in the order of the entries.
        let invoke = self.now();
        e.push(Entry {
            client,
            key,
            op,
            invoke,
            complete: None,
            outcome: Outcome::Unknown,
        });
        Pending(e.len() - 1)
    }

    /// Records what the operation came to, stamped now: call it once the
    /// answer (or the error) is in.
    pub fn complete(&self, p: Pending, outcome: Outcome) {
        let mut e = self.lock();
        let complete = self.now();
        let entry = &mut e[p.0];
        entry.complete = Some(complete);
        entry.outcome = outcome;
    }

    /// Records an operation invoked at `invoke` and answered at `complete`
    /// (for hand-made histories).
    pub fn push(&self, entry: Entry) {
        self.lock().push(entry);
    }

    /// A copy of the entries so far (running operations are `Unknown`).
    pub fn entries(&self) -> Vec<Entry> {
        self.lock().clone()
    }
}

/// Counts of a history's operations, by kind and outcome.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// Gets answered / failed / unknown.
    pub get: [usize; 3],
    /// Puts answered / failed / unknown.
    pub put: [usize; 3],
    /// Compare-and-swaps that swapped / did not / failed / unknown.
    pub cas: [usize; 4],
}

impl Counts {
    /// The counts of `entries`.
    pub fn of(entries: &[Entry]) -> Counts {
        let mut c = Counts::default();
        for e in entries {
            let i = match e.outcome {
                Outcome::Ok(_) => 0,
                Outcome::Fail => 1,
                Outcome::Unknown => 2,
            };
            match (e.op, e.outcome) {
                (Op::Get, _) => c.get[i] += 1,
                (Op::Put(_), _) => c.put[i] += 1,
                (Op::Cas { .. }, Outcome::Ok(Ret::Swapped(true))) => c.cas[0] += 1,
                (Op::Cas { .. }, _) => c.cas[i + 1] += 1,
            }
        }
        c
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "get ok/fail/unknown {}/{}/{}, put {}/{}/{}, cas swapped/not/fail/unknown {}/{}/{}/{}",
            self.get[0],
            self.get[1],
            self.get[2],
            self.put[0],
            self.put[1],
            self.put[2],
            self.cas[0],
            self.cas[1],
            self.cas[2],
            self.cas[3]
        )
    }
}
