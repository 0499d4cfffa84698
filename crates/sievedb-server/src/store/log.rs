//! The Raft log on the `raft_log` keyspace, and the vote and pointers of
//! `raft_meta` ([`RaftLogStorage`]).
//!
//! Appends are group-committed: [`LogStore::append`] writes the entries
//! unsynced (readable at once, as openraft requires when it returns) and
//! hands the flush callback to the syncer thread, which syncs the WAL once
//! for every callback queued meanwhile (`Db::sync_wal`) and then fires them.
//! The vote is a synced write. Every write goes through the one WAL in call
//! order, so a sync covers every earlier write: log IO is serialized as
//! openraft requires.

use std::fmt::Debug;
use std::ops::{Bound, RangeBounds};
use std::sync::mpsc;
use std::sync::Arc;

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{Entry, ErrorSubject, ErrorVerb, LogId, OptionalSend, RaftLogReader, Vote};
use sievedb::WriteBatch;

use super::meta::{self, COMMITTED, LAST_PURGED, VOTE};
use super::{decode, encode, io_err, io_msg, log_key, Store};
use crate::types::{NodeId, StorageError, TypeConfig};

/// The log storage of one node (a cheap handle: clones share the database
/// and the syncer).
#[derive(Clone)]
pub struct LogStore {
    store: Arc<Store>,
    syncer: mpsc::Sender<LogFlushed<TypeConfig>>,
}

impl LogStore {
    /// The log of `store`, with its syncer thread (which stops when the last
    /// handle is dropped).
    pub fn new(store: Arc<Store>) -> std::io::Result<LogStore> {
        let (tx, rx) = mpsc::channel::<LogFlushed<TypeConfig>>();
        let s = store.clone();
        std::thread::Builder::new()
            .name("raft-log-sync".into())
            .spawn(move || sync_loop(&s, &rx))?;
        Ok(LogStore { store, syncer: tx })
    }
}

/// Waits for flush callbacks; syncs the WAL once per group of them.
fn sync_loop(store: &Store, rx: &mpsc::Receiver<LogFlushed<TypeConfig>>) {
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        group.extend(rx.try_iter());
        let r = store.db.sync_wal();
        for cb in group {
            cb.log_io_completed(match &r {
                Ok(()) => Ok(()),
                Err(e) => Err(std::io::Error::other(e.to_string())),
            });
        }
    }
}

/// `[start, end)` of a range of indexes (`end` `None`: unbounded).
fn bounds(range: &impl RangeBounds<u64>) -> (u64, Option<u64>) {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => None,
    };
    (start, end)
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry<TypeConfig>>, StorageError> {
        let (start, end) = bounds(&range);
        let read = |e: &sievedb::Error| io_err(ErrorSubject::Logs, ErrorVerb::Read, e);
        let iter = match end {
            Some(end) if end <= start => return Ok(Vec::new()),
            Some(end) => self.store.log.range(log_key(start)..log_key(end)),
            None => self.store.log.range(log_key(start)..),
        }
        .map_err(|e| read(&e))?;
        let mut out = Vec::new();
        for kv in iter {
            let (_, v) = kv.map_err(|e| read(&e))?;
            out.push(decode(&v).map_err(|e| io_err(ErrorSubject::Logs, ErrorVerb::Read, &e))?);
        }
        Ok(out)
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        let last_purged: Option<LogId<NodeId>> =
            meta::get(&self.store.meta, LAST_PURGED, ErrorSubject::Logs)?;
        let read = |e: &sievedb::Error| io_err(ErrorSubject::Logs, ErrorVerb::Read, e);
        let last = match self.store.log.iter().map_err(|e| read(&e))?.next_back() {
            Some(kv) => {
                let (_, v) = kv.map_err(|e| read(&e))?;
                let e: Entry<TypeConfig> =
                    decode(&v).map_err(|e| io_err(ErrorSubject::Logs, ErrorVerb::Read, &e))?;
                Some(e.log_id)
            }
            None => last_purged,
        };
        Ok(LogState {
            last_purged_log_id: last_purged,
            last_log_id: last,
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote<NodeId>) -> Result<(), StorageError> {
        meta::put(&self.store.meta, VOTE, vote, true, ErrorSubject::Vote)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote<NodeId>>, StorageError> {
        meta::get(&self.store.meta, VOTE, ErrorSubject::Vote)
    }

    async fn save_committed(
        &mut self,
        committed: Option<LogId<NodeId>>,
    ) -> Result<(), StorageError> {
        // Unsynced: the next log sync covers it. After a power loss a node may
        // restart with an older `committed`, never a newer one.
        meta::put(
            &self.store.meta,
            COMMITTED,
            &committed,
            false,
            ErrorSubject::Store,
        )
    }

    async fn read_committed(&mut self) -> Result<Option<LogId<NodeId>>, StorageError> {
        Ok(
            meta::get::<Option<LogId<NodeId>>>(&self.store.meta, COMMITTED, ErrorSubject::Store)?
                .flatten(),
        )
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut batch = WriteBatch::new();
        for e in entries {
            let bytes = encode(&e)
                .map_err(|err| io_err(ErrorSubject::Log(e.log_id), ErrorVerb::Write, &err))?;
            batch.put_cf(&self.store.log, log_key(e.log_id.index), bytes);
        }
        self.store
            .db
            .write(batch)
            .map_err(|e| io_err(ErrorSubject::Logs, ErrorVerb::Write, &e))?;
        self.syncer.send(callback).map_err(|_| {
            io_msg(
                ErrorSubject::Logs,
                ErrorVerb::Write,
                "the log syncer stopped",
            )
        })
    }

    async fn truncate(&mut self, log_id: LogId<NodeId>) -> Result<(), StorageError> {
        self.store
            .log
            .delete_range(log_key(log_id.index)..)
            .map_err(|e| io_err(ErrorSubject::Logs, ErrorVerb::Delete, &e))
    }

    async fn purge(&mut self, log_id: LogId<NodeId>) -> Result<(), StorageError> {
        // The pointer and the deletion in one batch: never a purged range
        // that `last_purged` does not name.
        let mut batch = WriteBatch::new();
        meta::put_in(
            &mut batch,
            &self.store.meta,
            LAST_PURGED,
            &log_id,
            ErrorSubject::Logs,
        )?;
        batch.delete_range_cf(&self.store.log, ..=log_key(log_id.index));
        self.store
            .db
            .write(batch)
            .map_err(|e| io_err(ErrorSubject::Logs, ErrorVerb::Delete, &e))
    }
}
