//! The Raft type configuration: what a log entry carries ([`Request`]) and
//! what applying it answers ([`Response`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One write of a log entry: a put, a delete or a compare-and-swap
/// transaction, applied atomically by the state machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// Set `key` to `value`.
    Put {
        /// The key.
        #[serde(with = "serde_bytes")]
        key: Vec<u8>,
        /// The value.
        #[serde(with = "serde_bytes")]
        value: Vec<u8>,
    },
    /// Remove `key` (absent keys included).
    Delete {
        /// The key.
        #[serde(with = "serde_bytes")]
        key: Vec<u8>,
    },
    /// etcd's `Txn`: if every compare holds, the success ops, else the
    /// failure ops, all evaluated and applied as one step.
    Txn(Txn),
    /// Client writes proposed together ([`crate::writes`]): applied in
    /// order, atomically, each transaction against the writes before it.
    Batch(Vec<Request>),
}

/// A compare-and-swap transaction (`POST /txn`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Txn {
    /// Conditions on the current values, all of which must hold.
    pub compare: Vec<Compare>,
    /// Applied when every compare holds.
    pub success: Vec<Op>,
    /// Applied otherwise.
    pub failure: Vec<Op>,
}

/// "`key`'s value equals `value`", with `None` meaning "`key` is absent".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compare {
    /// The key compared.
    #[serde(with = "serde_bytes")]
    pub key: Vec<u8>,
    /// The value it must have, or `None` for absent.
    #[serde(with = "serde_bytes")]
    pub value: Option<Vec<u8>>,
}

/// One operation of a transaction's branch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// Set a key.
    Put {
        /// The key.
        #[serde(with = "serde_bytes")]
        key: Vec<u8>,
        /// The value.
        #[serde(with = "serde_bytes")]
        value: Vec<u8>,
    },
    /// Remove a key.
    Delete {
        /// The key.
        #[serde(with = "serde_bytes")]
        key: Vec<u8>,
    },
}

/// What applying one entry answered: `succeeded` is whether a transaction's
/// compares held (always true for puts, deletes and Raft's own entries).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    /// Whether the compares held (for a [`Request::Batch`]: all of them).
    pub succeeded: bool,
    /// For a [`Request::Batch`]: `succeeded` of each of its requests, in
    /// order; empty otherwise.
    pub batch: Vec<bool>,
}

/// A snapshot's data: the directory of a `Db::checkpoint` of a node's
/// database (hard links, never loaded into memory). A node streams it file
/// by file to a follower that is behind the log it kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SnapshotDir {
    /// The checkpoint's directory.
    pub path: PathBuf,
}

openraft::declare_raft_types!(
    /// sievedb-server's Raft types: `u64` node ids, nodes named by address.
    pub TypeConfig:
        D = Request,
        R = Response,
        NodeId = u64,
        Node = openraft::BasicNode,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = SnapshotDir,
        AsyncRuntime = openraft::TokioRuntime,
);

/// A node id.
pub type NodeId = u64;
/// A Raft node of this server.
pub type Raft = openraft::Raft<TypeConfig>;
/// Storage errors as openraft reports them.
pub type StorageError = openraft::StorageError<NodeId>;
