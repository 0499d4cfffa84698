//! openraft's storage traits on one sievedb database.
//!
//! A node's data directory holds:
//! - `data/`: the sievedb database, with four keyspaces:
//!   - `raft_log`: the log, key = the entry's index as 8 big-endian bytes
//!     (so key order is log order), value = the entry (postcard);
//!   - `raft_meta`: `vote`, `committed`, `last_purged` (postcard);
//!   - `sm`: the state machine's keys and values, as clients wrote them;
//!   - `sm_meta`: `last_applied` and `membership`, written in the same
//!     `WriteBatch` as the data they describe, and `installing` while a
//!     snapshot is being installed (see [`snapshot`]);
//! - `snapshots/<id>/`: the current snapshot, a checkpoint of `data/`, with
//!   its metadata in `snapshots/<id>.meta` (JSON);
//! - `incoming/<n>/`: a snapshot being received from the leader.
//!
//! [`LogStore`] and [`StateMachine`] share the database; each is a cheap
//! handle ([`Store`] behind an `Arc`).

pub mod log;
pub mod meta;
pub mod snapshot;
pub mod state_machine;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use openraft::{AnyError, ErrorSubject, ErrorVerb, StorageIOError};
use serde::de::DeserializeOwned;
use serde::Serialize;
use sievedb::{Db, Keyspace, Options};

use crate::types::{NodeId, StorageError};

pub use log::LogStore;
pub use state_machine::StateMachine;

/// The database of one node and its keyspaces.
pub struct Store {
    /// The node's data directory (`data/`, `snapshots/`, `incoming/`).
    pub dir: PathBuf,
    /// The sievedb database in `dir/data`.
    pub db: Db,
    /// The Raft log.
    pub log: Keyspace,
    /// Vote, committed, last purged.
    pub meta: Keyspace,
    /// The state machine's data.
    pub sm: Keyspace,
    /// Last applied log id and membership of the state machine.
    pub sm_meta: Keyspace,
    /// Dropped last, after the database has closed (fields drop in order):
    /// see [`Store::watch`].
    alive: Arc<()>,
}

/// Keyspace names.
pub const LOG: &str = "raft_log";
/// See [`LOG`].
pub const META: &str = "raft_meta";
/// See [`LOG`].
pub const SM: &str = "sm";
/// See [`LOG`].
pub const SM_META: &str = "sm_meta";

impl Store {
    /// Opens (or creates) the node's storage in `dir`.
    pub fn open(dir: &Path) -> sievedb::Result<Arc<Store>> {
        std::fs::create_dir_all(dir)?;
        let db = Db::open(dir.join("data"), Options::default())?;
        let log = db.keyspace(LOG)?;
        let meta = db.keyspace(META)?;
        let sm = db.keyspace(SM)?;
        let sm_meta = db.keyspace(SM_META)?;
        Ok(Arc::new(Store {
            dir: dir.to_path_buf(),
            db,
            log,
            meta,
            sm,
            sm_meta,
            alive: Arc::new(()),
        }))
    }

    /// A handle that has no strong count left once this `Store` has been
    /// dropped and its database closed (its lock released). The count of
    /// the `Arc<Store>` would not do: it is 0 before the database's drop,
    /// which syncs and joins its threads, even begins.
    pub fn watch(&self) -> std::sync::Weak<()> {
        Arc::downgrade(&self.alive)
    }

    /// `dir/snapshots`.
    pub fn snapshots_dir(&self) -> PathBuf {
        self.dir.join("snapshots")
    }

    /// `dir/incoming`.
    pub fn incoming_dir(&self) -> PathBuf {
        self.dir.join("incoming")
    }
}

/// The log key of `index`: big-endian, so that key order is index order.
pub fn log_key(index: u64) -> [u8; 8] {
    index.to_be_bytes()
}

/// The index of a log key.
pub fn log_index(key: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(key.try_into().ok()?))
}

/// Encodes a stored value.
pub fn encode<T: Serialize>(v: &T) -> Result<Vec<u8>, postcard::Error> {
    postcard::to_allocvec(v)
}

/// Decodes a stored value.
pub fn decode<T: DeserializeOwned>(b: &[u8]) -> Result<T, postcard::Error> {
    postcard::from_bytes(b)
}

/// A storage error of `subject` while doing `verb`, from any error.
pub fn io_err(
    subject: ErrorSubject<NodeId>,
    verb: ErrorVerb,
    e: &(impl std::error::Error + 'static),
) -> StorageError {
    StorageIOError::new(subject, verb, AnyError::new(e)).into()
}

/// A storage error from a message.
pub fn io_msg(
    subject: ErrorSubject<NodeId>,
    verb: ErrorVerb,
    msg: impl std::fmt::Display,
) -> StorageError {
    StorageIOError::new(subject, verb, AnyError::error(msg)).into()
}
