//! Typed single values in a keyspace: Raft's vote, committed and last purged
//! log id (`raft_meta`), the state machine's last applied log id and
//! membership (`sm_meta`). Each is one key holding a postcard value.

use openraft::{ErrorSubject, ErrorVerb};
use serde::de::DeserializeOwned;
use serde::Serialize;
use sievedb::{Keyspace, WriteBatch, WriteOptions};

use super::{decode, encode, io_err};
use crate::types::StorageError;

/// `raft_meta`: the last vote this node cast or saw, synced before openraft
/// acts on it.
pub const VOTE: &[u8] = b"vote";
/// `raft_meta`: the last committed log id this node learned.
pub const COMMITTED: &[u8] = b"committed";
/// `raft_meta`: the last log id purged from `raft_log` (entries up to it are
/// gone; a snapshot holds their effect).
pub const LAST_PURGED: &[u8] = b"last_purged";
/// `sm_meta`: the last log id applied to `sm`.
pub const LAST_APPLIED: &[u8] = b"last_applied";
/// `sm_meta`: the last membership applied.
pub const MEMBERSHIP: &[u8] = b"membership";
/// `sm_meta`: present while a snapshot is being installed (see
/// `store::snapshot`).
pub const INSTALLING: &[u8] = b"installing";

/// Reads `key` of `ks`, decoded.
pub fn get<T: DeserializeOwned>(
    ks: &Keyspace,
    key: &[u8],
    subject: ErrorSubject<u64>,
) -> Result<Option<T>, StorageError> {
    let Some(bytes) = ks
        .get(key)
        .map_err(|e| io_err(subject.clone(), ErrorVerb::Read, &e))?
    else {
        return Ok(None);
    };
    decode(&bytes)
        .map(Some)
        .map_err(|e| io_err(subject, ErrorVerb::Read, &e))
}

/// Writes `key` of `ks`; `sync`: durable before returning.
pub fn put<T: Serialize>(
    ks: &Keyspace,
    key: &[u8],
    value: &T,
    sync: bool,
    subject: ErrorSubject<u64>,
) -> Result<(), StorageError> {
    let bytes = encode(value).map_err(|e| io_err(subject.clone(), ErrorVerb::Write, &e))?;
    ks.put_with(key, bytes, &WriteOptions { sync })
        .map_err(|e| io_err(subject, ErrorVerb::Write, &e))
}

/// Adds a write of `key` of `ks` to `batch`.
pub fn put_in<T: Serialize>(
    batch: &mut WriteBatch,
    ks: &Keyspace,
    key: &[u8],
    value: &T,
    subject: ErrorSubject<u64>,
) -> Result<(), StorageError> {
    let bytes = encode(value).map_err(|e| io_err(subject, ErrorVerb::Write, &e))?;
    batch.put_cf(ks, key, bytes);
    Ok(())
}
