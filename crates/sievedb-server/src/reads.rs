//! Linearizable reads, batched: one read-index round
//! (`Raft::ensure_linearizable`: the leader confirms its leadership with a
//! quorum, then waits until its state machine applied the commit index it
//! saw) serves every read that arrived before the round began, as etcd's
//! ReadIndex batches do.
//!
//! Correctness: a read may use a round only if the round started after the
//! read was invoked (else a write acknowledged between the round's start
//! and the read's invocation could be missed). A read joins the *waiting*
//! batch; a round takes the whole waiting batch when it starts, and reads
//! arriving during it wait for the next round. At most one round runs at a
//! time, so concurrent reads cost one quorum exchange per round, not one
//! each.

use std::sync::Arc;

use openraft::error::{CheckIsLeaderError, RaftError};
use openraft::BasicNode;
use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::types::{NodeId, Raft};

/// The error of a read-index round.
pub type ReadError = RaftError<NodeId, CheckIsLeaderError<NodeId, BasicNode>>;

type Waiter = oneshot::Sender<Result<(), ReadError>>;

/// Batches the read-index rounds of one node.
pub struct ReadBatcher {
    raft: Raft,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Reads invoked since the running round began (or since none ran).
    waiting: Vec<Waiter>,
    /// Whether a round is running.
    running: bool,
}

impl ReadBatcher {
    /// A batcher for `raft`.
    pub fn new(raft: Raft) -> Arc<ReadBatcher> {
        Arc::new(ReadBatcher {
            raft,
            state: Mutex::new(State::default()),
        })
    }

    /// Returns once this node's state machine may serve a read invoked now
    /// linearizably, or the round's error (not the leader, no quorum).
    pub async fn linearize(self: &Arc<Self>) -> Result<(), ReadError> {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut s = self.state.lock();
            s.waiting.push(tx);
            !std::mem::replace(&mut s.running, true)
        };
        if start {
            let me = self.clone();
            tokio::spawn(async move { me.rounds().await });
        }
        match rx.await {
            Ok(r) => r,
            Err(_) => Err(RaftError::Fatal(openraft::error::Fatal::Stopped)),
        }
    }

    /// Runs rounds while reads wait.
    async fn rounds(&self) {
        loop {
            let batch = {
                let mut s = self.state.lock();
                if s.waiting.is_empty() {
                    s.running = false;
                    return;
                }
                std::mem::take(&mut s.waiting)
            };
            let r = self.raft.ensure_linearizable().await.map(|_| ());
            for w in batch {
                let _ = w.send(r.clone());
            }
        }
    }
}
