//! The lock manager of pessimistic transactions (RocksDB's point lock
//! manager): one exclusive lock per (keyspace, key), held by one
//! transaction until it commits or rolls back. The table is striped by key
//! hash, each stripe a map under its own mutex with a condition variable
//! its waiters sleep on, so unrelated keys do not contend. A lock that is
//! held makes the requester wait, up to its timeout; before each wait the
//! wait-for graph ([`super::deadlock`]) is asked whether the wait would
//! close a cycle, and if so the requester fails at once.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::deadlock::{TxId, WaitFor};
use crate::error::{ConflictKind, Error, Result};

/// (keyspace id, key)
pub(crate) type LockKey = (u32, Vec<u8>);

/// Stripes of the lock table.
const STRIPES: usize = 64;

struct Stripe {
    held: Mutex<HashMap<LockKey, TxId>>,
    released: Condvar,
}

/// The locks of one database's pessimistic transactions.
pub(crate) struct LockManager {
    stripes: Vec<Stripe>,
    /// Randomly seeded: keys are user input.
    hasher: std::collections::hash_map::RandomState,
    waits: Mutex<WaitFor>,
    next_id: AtomicU64,
}

impl Default for LockManager {
    fn default() -> Self {
        LockManager {
            stripes: (0..STRIPES)
                .map(|_| Stripe {
                    held: Mutex::new(HashMap::new()),
                    released: Condvar::new(),
                })
                .collect(),
            hasher: std::collections::hash_map::RandomState::new(),
            waits: Mutex::new(WaitFor::default()),
            next_id: AtomicU64::new(1),
        }
    }
}

impl LockManager {
    /// A new transaction id.
    pub(crate) fn new_id(&self) -> TxId {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn stripe(&self, key: &LockKey) -> &Stripe {
        let h = self.hasher.hash_one(key);
        &self.stripes[(h % STRIPES as u64) as usize]
    }

    /// Takes the lock of `key` for `tx`, waiting up to `timeout` while another
    /// transaction holds it. `Ok(true)`: newly taken; `Ok(false)`: `tx`
    /// held it already. A wait that times out, or that `detect` finds would
    /// deadlock, is [`Error::Conflict`] ([`ConflictKind::LockTimeout`],
    /// [`ConflictKind::Deadlock`]).
    pub(crate) fn lock(
        &self,
        tx: TxId,
        key: &LockKey,
        timeout: Duration,
        detect: bool,
    ) -> Result<bool> {
        let stripe = self.stripe(key);
        let deadline = Instant::now() + timeout;
        let mut held = stripe.held.lock();
        loop {
            let holder = match held.get(key) {
                None => {
                    held.insert(key.clone(), tx);
                    self.waits.lock().done(tx);
                    return Ok(true);
                }
                Some(&h) if h == tx => return Ok(false),
                Some(&h) => h,
            };
            if detect {
                if let Some(cycle) = self.waits.lock().wait(tx, holder) {
                    return Err(Error::Conflict {
                        kind: ConflictKind::Deadlock,
                        detail: format!(
                            "waiting for the lock of key {} would deadlock (cycle of \
                             transactions {cycle:?})",
                            key.1.escape_ascii()
                        ),
                    });
                }
            }
            if stripe.released.wait_until(&mut held, deadline).timed_out()
                && held.get(key).is_some_and(|&h| h != tx)
            {
                self.waits.lock().done(tx);
                return Err(Error::Conflict {
                    kind: ConflictKind::LockTimeout,
                    detail: format!(
                        "the lock of key {} is held by another transaction; waited {:?}",
                        key.1.escape_ascii(),
                        timeout
                    ),
                });
            }
        }
    }

    /// Releases `tx`'s locks of `keys`.
    pub(crate) fn unlock<'a>(&self, tx: TxId, keys: impl IntoIterator<Item = &'a LockKey>) {
        for key in keys {
            let stripe = self.stripe(key);
            let mut held = stripe.held.lock();
            if held.get(key) == Some(&tx) {
                held.remove(key);
                stripe.released.notify_all();
            }
        }
        self.waits.lock().done(tx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn key(s: &str) -> LockKey {
        (0, s.as_bytes().to_vec())
    }

    #[test]
    fn a_held_lock_waits_then_times_out_and_is_handed_over() {
        let m = Arc::new(LockManager::default());
        let (a, b) = (m.new_id(), m.new_id());
        assert!(m.lock(a, &key("k"), Duration::ZERO, true).unwrap());
        assert!(!m.lock(a, &key("k"), Duration::ZERO, true).unwrap());
        let e = m
            .lock(b, &key("k"), Duration::from_millis(20), true)
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Conflict {
                    kind: ConflictKind::LockTimeout,
                    ..
                }
            ),
            "{e}"
        );
        let m2 = m.clone();
        let waiter =
            std::thread::spawn(move || m2.lock(b, &key("k"), Duration::from_secs(10), true));
        std::thread::sleep(Duration::from_millis(20));
        m.unlock(a, [&key("k")]);
        assert!(waiter.join().unwrap().unwrap());
    }

    #[test]
    fn the_transaction_closing_a_cycle_fails_at_once() {
        let m = Arc::new(LockManager::default());
        let (a, b) = (m.new_id(), m.new_id());
        m.lock(a, &key("x"), Duration::ZERO, true).unwrap();
        m.lock(b, &key("y"), Duration::ZERO, true).unwrap();
        let m2 = m.clone();
        // a waits for b's y ...
        let waiter =
            std::thread::spawn(move || m2.lock(a, &key("y"), Duration::from_secs(10), true));
        std::thread::sleep(Duration::from_millis(30));
        // ... so b waiting for a's x would never end.
        let t = Instant::now();
        let e = m
            .lock(b, &key("x"), Duration::from_secs(10), true)
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Conflict {
                    kind: ConflictKind::Deadlock,
                    ..
                }
            ),
            "{e}"
        );
        assert!(t.elapsed() < Duration::from_secs(5));
        m.unlock(b, [&key("y")]);
        assert!(waiter.join().unwrap().unwrap());
    }
}
