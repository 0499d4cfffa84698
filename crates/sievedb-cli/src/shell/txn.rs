//! The shell's transaction: what `begin` opens and the commands that go into
//! it until `commit` or `rollback`.
//!
//! Inside a transaction `put`, `del`, `get`, `get-for-update` and `scan` act
//! on it, in the keyspace in use at each command (one transaction can span
//! keyspaces); `batch` and `drop-keyspace` are refused (a transaction is
//! already atomic, and a keyspace it may have written must outlive it); the
//! rest (`use`, `flush`, `stats`, ...) act as outside. An error that retrying
//! the whole transaction can fix ([`sievedb::Error::is_conflict`]: a
//! conflict at commit, a lock wait that timed out, a deadlock) rolls it back
//! and says so; any other error leaves it open, except at `commit`, which
//! ends it either way.

use std::io::{self, Write};

use sievedb::{Db, Isolation, Transaction, TransactionOptions};

use super::request::{Request, TxnMode};
use super::{empty_range, one_line, scan, Session};
use crate::escape;

/// A transaction run as `mode` says (pessimistic ones wait for a lock at
/// most the engine's default timeout).
pub(super) fn begin(db: &Db, mode: TxnMode) -> Transaction {
    let isolation = if mode.serializable {
        Isolation::Serializable
    } else {
        Isolation::Snapshot
    };
    db.transaction_opt(
        &TransactionOptions::default()
            .pessimistic(mode.pessimistic)
            .isolation(isolation),
    )
}

/// The command word of a transaction command, for messages.
pub(super) fn command_name(req: &Request) -> &'static str {
    match req {
        Request::Begin(_) => "begin",
        Request::GetForUpdate(_) => "get-for-update",
        Request::Savepoint => "savepoint",
        Request::RollbackToSavepoint => "rollback-to-savepoint",
        Request::Commit => "commit",
        Request::Rollback => "rollback",
        Request::Batch(_) => "batch",
        Request::DropKeyspace(_) => "drop-keyspace",
        _ => "this command",
    }
}

/// Executes `req` in the open transaction, if there is one and `req` belongs
/// to it, writing its answer to `out`; otherwise hands `req` back.
pub(super) fn execute(
    s: &mut Session<'_>,
    req: Request,
    out: &mut impl Write,
) -> io::Result<Option<Request>> {
    if s.tx.is_none() {
        return Ok(Some(req));
    }
    if req == Request::Commit {
        // Ends the transaction, committed or not.
        let result = s.tx.take().map_or(Ok(()), |mut tx| tx.commit_opt(&s.wo));
        return match result {
            Ok(()) => writeln!(out, "OK"),
            Err(e) => writeln!(
                out,
                "ERR {} (the transaction is rolled back)",
                one_line(&e.to_string())
            ),
        }
        .map(|()| None);
    }
    let Some(tx) = s.tx.as_mut() else {
        return Ok(Some(req));
    };
    let ks = &s.ks;
    let answer: sievedb::Result<String> = match req {
        Request::Begin(_) | Request::Batch(_) | Request::DropKeyspace(_) => {
            let what = command_name(&req);
            return writeln!(
                out,
                "ERR {what} inside a transaction: `commit` or `rollback` it first"
            )
            .map(|()| None);
        }
        Request::Put(k, v) => tx.put_cf(ks, k, v).map(|()| "OK".to_string()),
        Request::Del(k) => tx.delete_cf(ks, k).map(|()| "OK".to_string()),
        Request::Get(k) => tx.get_cf(ks, k).map(value_answer),
        Request::GetForUpdate(k) => tx.get_for_update_cf(ks, k).map(value_answer),
        Request::Scan(lo, hi) if empty_range(&lo, &hi) => Ok("END".to_string()),
        Request::Scan(lo, hi) => {
            // Streams its own answer; a conflict cannot happen while reading.
            return scan(tx.range_cf(ks, (lo, hi)), out).map(|()| None);
        }
        Request::Savepoint => {
            tx.set_savepoint();
            Ok("OK".to_string())
        }
        Request::RollbackToSavepoint => tx.rollback_to_savepoint().map(|()| "OK".to_string()),
        Request::Rollback => {
            let result = tx.rollback();
            s.tx = None;
            result.map(|()| "OK".to_string())
        }
        other => return Ok(Some(other)),
    };
    match answer {
        Ok(line) => writeln!(out, "{line}")?,
        Err(e) if e.is_conflict() => {
            s.tx = None;
            writeln!(
                out,
                "ERR {} (the transaction is rolled back; `begin` again to retry)",
                one_line(&e.to_string())
            )?;
        }
        Err(e) => writeln!(out, "ERR {}", one_line(&e.to_string()))?,
    }
    Ok(None)
}

/// A read's answer: the value escaped, or `(nil)`.
fn value_answer(v: Option<Vec<u8>>) -> String {
    v.map_or_else(|| "(nil)".to_string(), |v| escape::encode_token(&v))
}
