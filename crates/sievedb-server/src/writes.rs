//! Client writes, batched: the writes that arrive while earlier ones are
//! being replicated share one Raft entry ([`Request::Batch`]), so that one
//! log append, one fsync per node and one replication round carry all of
//! them, as etcd's and TiKV's proposal batching do.
//!
//! A write joins the *waiting* batch. At most [`IN_FLIGHT`] entries are being
//! committed at a time; when one is done, the next takes every write that
//! waited meanwhile (up to [`MAX_BATCH_BYTES`]). With fewer writes in flight
//! than that, a write is proposed at once, alone: batching adds no latency
//! when there is nothing to batch.
//!
//! Correctness: each write of a batch takes effect when its entry is applied,
//! which is after the write was invoked and before it is answered, so a
//! history stays linearizable. The entry is applied atomically (one
//! `WriteBatch`, [`crate::store::StateMachine`]), its requests in order, each
//! transaction against the writes before it; each write gets its own answer.

use std::sync::Arc;

use openraft::error::{ClientWriteError, RaftError};
use openraft::BasicNode;
use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::types::{NodeId, Raft, Request};

/// The error of a proposal.
pub type WriteError = RaftError<NodeId, ClientWriteError<NodeId, BasicNode>>;

/// Entries being committed at most at a time (the others wait and batch).
/// Two keep the pipeline busy: one is replicated while the next gathers.
pub const IN_FLIGHT: usize = 2;

/// A batch stops growing at this many bytes of keys and values (a larger
/// single write still goes alone). With [`MAX_PAYLOAD_ENTRIES`] it bounds
/// what one replication RPC carries, and so what a leader holds to catch a
/// follower up from its log: about 16 MiB.
pub const MAX_BATCH_BYTES: usize = 256 << 10;

/// Entries one `AppendEntries` RPC carries at most (openraft's
/// `max_payload_entries`; its default, 300, times a batch of up to
/// [`MAX_BATCH_BYTES`] would make one catch-up RPC 75 MiB, held decoded and
/// encoded on both sides).
pub const MAX_PAYLOAD_ENTRIES: u64 = 64;

type Waiter = oneshot::Sender<Result<bool, WriteError>>;

/// Batches the proposals of one node.
pub struct WriteBatcher {
    raft: Raft,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Writes not yet proposed, in arrival order.
    waiting: Vec<(Request, Waiter)>,
    /// Proposing tasks running (at most [`IN_FLIGHT`]).
    running: usize,
}

impl WriteBatcher {
    /// A batcher for `raft`.
    pub fn new(raft: Raft) -> Arc<WriteBatcher> {
        Arc::new(WriteBatcher {
            raft,
            state: Mutex::new(State::default()),
        })
    }

    /// Commits `request` (in a batch with concurrent ones): whether its
    /// compares held, or the proposal's error (not the leader, Raft stopped).
    pub async fn write(self: &Arc<Self>, request: Request) -> Result<bool, WriteError> {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut s = self.state.lock();
            s.waiting.push((request, tx));
            let start = s.running < IN_FLIGHT;
            s.running += usize::from(start);
            start
        };
        if start {
            let me = self.clone();
            tokio::spawn(async move { me.propose_while_waiting().await });
        }
        match rx.await {
            Ok(r) => r,
            Err(_) => Err(RaftError::Fatal(openraft::error::Fatal::Stopped)),
        }
    }

    /// Proposes batches while writes wait.
    async fn propose_while_waiting(&self) {
        loop {
            let batch = {
                let mut s = self.state.lock();
                if s.waiting.is_empty() {
                    s.running -= 1;
                    return;
                }
                take_batch(&mut s.waiting)
            };
            let (requests, waiters): (Vec<Request>, Vec<Waiter>) = batch.into_iter().unzip();
            let n = requests.len();
            let entry = match <[Request; 1]>::try_from(requests) {
                Ok([one]) => one,
                Err(many) => Request::Batch(many),
            };
            match self.raft.client_write(entry).await {
                Ok(resp) => {
                    let results = if n == 1 {
                        vec![resp.data.succeeded]
                    } else {
                        resp.data.batch
                    };
                    for (w, ok) in waiters.into_iter().zip(results) {
                        let _ = w.send(Ok(ok));
                    }
                }
                Err(e) => {
                    for w in waiters {
                        let _ = w.send(Err(e.clone()));
                    }
                }
            }
        }
    }
}

/// The bytes a request adds to a batch.
fn size(r: &Request) -> usize {
    match r {
        Request::Put { key, value } => key.len() + value.len(),
        Request::Delete { key } => key.len(),
        Request::Txn(t) => {
            let ops = |ops: &[crate::types::Op]| -> usize {
                ops.iter()
                    .map(|o| match o {
                        crate::types::Op::Put { key, value } => key.len() + value.len(),
                        crate::types::Op::Delete { key } => key.len(),
                    })
                    .sum()
            };
            t.compare
                .iter()
                .map(|c| c.key.len() + c.value.as_ref().map_or(0, Vec::len))
                .sum::<usize>()
                + ops(&t.success)
                + ops(&t.failure)
        }
        Request::Batch(b) => b.iter().map(size).sum(),
    }
}

/// Takes the oldest waiting writes up to [`MAX_BATCH_BYTES`] (at least one).
fn take_batch(waiting: &mut Vec<(Request, Waiter)>) -> Vec<(Request, Waiter)> {
    let mut bytes = 0;
    let mut n = 0;
    for (r, _) in waiting.iter() {
        bytes += size(r);
        if n > 0 && bytes > MAX_BATCH_BYTES {
            break;
        }
        n += 1;
    }
    if n == waiting.len() {
        std::mem::take(waiting)
    } else {
        waiting.drain(..n).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(len: usize) -> (Request, Waiter) {
        (
            Request::Put {
                key: b"k".to_vec(),
                value: vec![0; len],
            },
            oneshot::channel().0,
        )
    }

    #[test]
    fn a_batch_takes_every_waiting_write_up_to_the_byte_cap() {
        let mut w: Vec<_> = (0..10).map(|_| put(100)).collect();
        assert_eq!(take_batch(&mut w).len(), 10);
        assert!(w.is_empty());

        let half = MAX_BATCH_BYTES / 2;
        let mut w: Vec<_> = (0..5).map(|_| put(half)).collect();
        // One fits: two are `MAX_BATCH_BYTES` + 2 bytes (a one-byte key each).
        assert_eq!(take_batch(&mut w).len(), 1);
        assert_eq!(w.len(), 4);

        // A write larger than the cap still goes, alone.
        let mut w = vec![put(2 * MAX_BATCH_BYTES), put(1)];
        assert_eq!(take_batch(&mut w).len(), 1);
        assert_eq!(take_batch(&mut w).len(), 1);
        assert!(w.is_empty());
    }
}
