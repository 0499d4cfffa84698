//! The state machine on the `sm` and `sm_meta` keyspaces
//! ([`RaftStateMachine`]).
//!
//! [`StateMachine::apply`] turns a whole run of committed entries into ONE
//! `WriteBatch`: the data they write, the last applied log id and the last
//! membership, atomic across the keyspaces. A crash therefore never leaves
//! an entry applied twice or half: after a restart `last_applied` names
//! exactly the entries whose data is there, and openraft applies the rest
//! again. The batch is written unsynced: the log it comes from is durable,
//! and a power loss that drops it drops `last_applied` with it.

use std::collections::BTreeMap;
use std::sync::Arc;

use openraft::storage::RaftStateMachine;
use openraft::{
    Entry, EntryPayload, ErrorSubject, ErrorVerb, LogId, OptionalSend, RaftSnapshotBuilder,
    Snapshot, SnapshotMeta, StoredMembership,
};
use sievedb::WriteBatch;

use super::meta::{self, LAST_APPLIED, MEMBERSHIP};
use super::{io_err, io_msg, snapshot, Store};
use crate::types::{NodeId, Op, Request, Response, SnapshotDir, StorageError, Txn, TypeConfig};

/// The state machine of one node (a cheap handle on the shared database).
#[derive(Clone)]
pub struct StateMachine {
    store: Arc<Store>,
}

impl StateMachine {
    /// The state machine of `store`.
    pub fn new(store: Arc<Store>) -> StateMachine {
        StateMachine { store }
    }
}

/// The writes of one `apply` call not yet in the database: a transaction
/// later in the run compares against them.
struct Pending<'a> {
    store: &'a Store,
    batch: WriteBatch,
    overlay: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
}

impl Pending<'_> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, sievedb::Error> {
        match self.overlay.get(key) {
            Some(v) => Ok(v.clone()),
            None => self.store.sm.get(key),
        }
    }

    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.batch.put_cf(&self.store.sm, &key, &value);
        self.overlay.insert(key, Some(value));
    }

    fn delete(&mut self, key: Vec<u8>) {
        self.batch.delete_cf(&self.store.sm, &key);
        self.overlay.insert(key, None);
    }

    fn ops(&mut self, ops: Vec<Op>) {
        for op in ops {
            match op {
                Op::Put { key, value } => self.put(key, value),
                Op::Delete { key } => self.delete(key),
            }
        }
    }

    /// Applies one client request: whether its compares held (for a batch,
    /// each request's answer goes to `batch`).
    fn request(&mut self, r: Request, batch: &mut Vec<bool>) -> Result<bool, sievedb::Error> {
        Ok(match r {
            Request::Put { key, value } => {
                self.put(key, value);
                true
            }
            Request::Delete { key } => {
                self.delete(key);
                true
            }
            Request::Txn(t) => self.txn(t)?,
            Request::Batch(rs) => {
                let mut all = true;
                for r in rs {
                    // A batch inside a batch is never proposed; it would
                    // answer for its requests as one.
                    let ok = self.request(r, &mut Vec::new())?;
                    batch.push(ok);
                    all &= ok;
                }
                all
            }
        })
    }

    fn txn(&mut self, t: Txn) -> Result<bool, sievedb::Error> {
        let mut holds = true;
        for c in &t.compare {
            if self.get(&c.key)? != c.value {
                holds = false;
                break;
            }
        }
        self.ops(if holds { t.success } else { t.failure });
        Ok(holds)
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = SnapshotBuilder;

    async fn applied_state(
        &mut self,
    ) -> Result<
        (
            Option<LogId<NodeId>>,
            StoredMembership<NodeId, openraft::BasicNode>,
        ),
        StorageError,
    > {
        let applied = meta::get(
            &self.store.sm_meta,
            LAST_APPLIED,
            ErrorSubject::StateMachine,
        )?;
        let membership = meta::get(&self.store.sm_meta, MEMBERSHIP, ErrorSubject::StateMachine)?;
        Ok((applied, membership.unwrap_or_default()))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<Response>, StorageError>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let store = &*self.store;
        let mut p = Pending {
            store,
            batch: WriteBatch::new(),
            overlay: BTreeMap::new(),
        };
        let mut out = Vec::new();
        let mut last = None;
        let mut membership = None;
        for e in entries {
            last = Some(e.log_id);
            let mut batch = Vec::new();
            let succeeded = match e.payload {
                EntryPayload::Blank => true,
                EntryPayload::Membership(m) => {
                    membership = Some(StoredMembership::new(Some(e.log_id), m));
                    true
                }
                EntryPayload::Normal(r) => p
                    .request(r, &mut batch)
                    .map_err(|err| io_err(ErrorSubject::Apply(e.log_id), ErrorVerb::Read, &err))?,
            };
            out.push(Response { succeeded, batch });
        }
        let Some(last) = last else { return Ok(out) };
        let mut batch = p.batch;
        meta::put_in(
            &mut batch,
            &store.sm_meta,
            LAST_APPLIED,
            &last,
            ErrorSubject::Apply(last),
        )?;
        if let Some(m) = &membership {
            meta::put_in(
                &mut batch,
                &store.sm_meta,
                MEMBERSHIP,
                m,
                ErrorSubject::Apply(last),
            )?;
        }
        store
            .db
            .write(batch)
            .map_err(|e| io_err(ErrorSubject::Apply(last), ErrorVerb::Write, &e))?;
        Ok(out)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        SnapshotBuilder {
            store: self.store.clone(),
        }
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<SnapshotDir>, StorageError> {
        // Snapshots arrive whole through the server's own transfer
        // (`network::snapshot`), which fills in the directory.
        Ok(Box::default())
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta<NodeId, openraft::BasicNode>,
        snapshot: Box<SnapshotDir>,
    ) -> Result<(), StorageError> {
        let store = self.store.clone();
        let meta = meta.clone();
        blocking(move || snapshot::install(&store, &meta, &snapshot.path)).await
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot<TypeConfig>>, StorageError> {
        let store = self.store.clone();
        blocking(move || snapshot::current(&store)).await
    }
}

/// Builds snapshots: checkpoints of the database.
pub struct SnapshotBuilder {
    store: Arc<Store>,
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError> {
        let store = self.store.clone();
        blocking(move || snapshot::build(&store)).await
    }
}

/// Runs blocking storage work (checkpoints, copies) off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StorageError> + Send + 'static,
) -> Result<T, StorageError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        io_msg(
            ErrorSubject::Snapshot(None),
            ErrorVerb::Write,
            format!("storage task failed: {e}"),
        )
    })?
}
