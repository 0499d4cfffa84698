//! The wait-for graph of pessimistic transactions, for deadlock detection
//! (RocksDB's `deadlock_detect`): each waiting transaction waits for the one
//! holding the lock it wants. A transaction about to wait first follows the
//! chain from that holder; if it leads back to itself, waiting would never
//! end, and it fails at once instead (the victim is the transaction that
//! closes the cycle).

use std::collections::HashMap;

/// A transaction's id.
pub(crate) type TxId = u64;

/// How far a chain of waits is followed before giving up looking (a cycle
/// longer than this is broken by the lock timeout instead).
const MAX_DEPTH: usize = 64;

/// Who waits for whom.
#[derive(Default)]
pub(crate) struct WaitFor {
    edges: HashMap<TxId, TxId>,
}

impl WaitFor {
    /// Records that `waiter` waits for `holder`, unless that closes a cycle:
    /// then nothing is recorded and the cycle (waiter first) is returned.
    pub(crate) fn wait(&mut self, waiter: TxId, holder: TxId) -> Option<Vec<TxId>> {
        let mut chain = vec![waiter];
        let mut at = holder;
        for _ in 0..MAX_DEPTH {
            if at == waiter {
                self.edges.remove(&waiter);
                return Some(chain);
            }
            chain.push(at);
            match self.edges.get(&at) {
                Some(&next) => at = next,
                None => break,
            }
        }
        self.edges.insert(waiter, holder);
        None
    }

    /// `waiter` waits no more.
    pub(crate) fn done(&mut self, waiter: TxId) {
        self.edges.remove(&waiter);
    }

    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.edges.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_is_found_and_nothing_else() {
        let mut g = WaitFor::default();
        assert_eq!(g.wait(1, 2), None);
        assert_eq!(g.wait(2, 3), None);
        assert_eq!(g.wait(4, 3), None);
        assert_eq!(g.wait(3, 1), Some(vec![3, 1, 2]));
        assert_eq!(g.waiting(), 3, "the victim's wait is not recorded");
        g.done(1);
        assert_eq!(g.wait(3, 1), None);
        assert_eq!(g.wait(5, 5), Some(vec![5]));
    }
}
