//! Commit-time validation ([`Validation`]): the check a transaction's commit
//! runs under the WAL lock (`db/conflicts.rs` answers it from the memtables,
//! never from an SST). It fails the commit when another commit wrote, after
//! the transaction's snapshot:
//! - a key it writes or read with `get_for_update` (every transaction:
//!   first committer wins, no lost update; for a pessimistic one, whose
//!   locks keep other transactions out, only a plain write can);
//! - under serializable isolation, a key it read or a key in a range it
//!   scanned (no write skew, no phantom).

use std::sync::Arc;

use crate::db::conflicts::{CommitCheck, EarlierWrites, Written};
use crate::db::DbInner;
use crate::error::{ConflictKind, Error, Result};
use crate::key::SeqNo;
use crate::keyspace::Tree;

/// A range of user keys: start (inclusive) and end (exclusive; `None`
/// unbounded).
pub(super) type KeyRange = (Vec<u8>, Option<Vec<u8>>);

/// What a commit checks (see the module docs).
pub(super) struct Validation {
    /// The transaction's snapshot.
    pub(super) seq: SeqNo,
    /// Keys a later write of conflicts with (written, or read for update).
    pub(super) writes: Vec<(Arc<Tree>, Vec<u8>)>,
    /// Serializable: keys read.
    pub(super) reads: Vec<(Arc<Tree>, Vec<u8>)>,
    /// Serializable: ranges scanned.
    pub(super) ranges: Vec<(Arc<Tree>, KeyRange)>,
}

impl Validation {
    /// Whether there is nothing to check.
    pub(super) fn is_empty(&self) -> bool {
        self.writes.is_empty() && self.reads.is_empty() && self.ranges.is_empty()
    }
}

impl CommitCheck for Validation {
    fn check(&self, db: &DbInner, earlier: &EarlierWrites) -> Result<()> {
        for (tree, key) in &self.writes {
            let w = db.written_after(tree, key, self.seq, earlier);
            verdict(
                w,
                ConflictKind::Write,
                tree,
                || key.escape_ascii().to_string(),
                self.seq,
            )?;
        }
        for (tree, key) in &self.reads {
            let w = db.written_after(tree, key, self.seq, earlier);
            verdict(
                w,
                ConflictKind::Read,
                tree,
                || key.escape_ascii().to_string(),
                self.seq,
            )?;
        }
        for (tree, (start, end)) in &self.ranges {
            let w = db.range_written_after(tree, start, end.as_deref(), self.seq, earlier);
            let what = || match end {
                Some(e) => format!("in [{}, {})", start.escape_ascii(), e.escape_ascii()),
                None => format!("from {} on", start.escape_ascii()),
            };
            verdict(w, ConflictKind::Read, tree, what, self.seq)?;
        }
        Ok(())
    }
}

/// The error a check's answer `w` about `what` (a key or a range of keyspace
/// `tree`) calls for, if any.
fn verdict(
    w: Written,
    kind: ConflictKind,
    tree: &Tree,
    what: impl FnOnce() -> String,
    seq: SeqNo,
) -> Result<()> {
    let detail = match w {
        Written::No => return Ok(()),
        Written::Yes(0) => format!(
            "a key {} of keyspace {:?} was written by a commit just before this one, after \
             this transaction's snapshot (sequence {seq})",
            what(),
            tree.name
        ),
        Written::Yes(at) => format!(
            "a key {} of keyspace {:?} was written at sequence {at}, after this transaction's \
             snapshot (sequence {seq})",
            what(),
            tree.name
        ),
        Written::Unknown => {
            return Err(Error::Conflict {
                kind: ConflictKind::TooOld,
                detail: format!(
                    "keyspace {:?} flushed writes newer than this transaction's snapshot \
                     (sequence {seq}) out of its memtables, so they cannot be checked",
                    tree.name
                ),
            })
        }
    };
    Err(Error::Conflict { kind, detail })
}
