//! `sievedb shell`: a line protocol over stdin/stdout, one answer per command.
//!
//! Commands (tokens separated by spaces or tabs, escaped as in [`crate::escape`]):
//!
//! | command                         | answer                                   |
//! |---------------------------------|------------------------------------------|
//! | `put K V`                       | `OK`                                     |
//! | `get K`                         | the value, or `(nil)`                    |
//! | `del K`                         | `OK`                                     |
//! | `batch put K V del K ...`       | `OK` (one atomic write batch)            |
//! | `scan FROM TO`                  | `K V` lines, then `END` (`-` = unbounded; FROM inclusive, TO exclusive) |
//! | `flush`                         | `OK`                                     |
//! | `compact`                       | `OK`                                     |
//! | `stats`                         | one JSON line                            |
//! | `keyspaces`                     | one name per line, then `END`            |
//! | `use NAME`                      | `OK`: keyspace NAME (which must exist) is in use |
//! | `create-keyspace NAME`          | `OK`: a new keyspace                     |
//! | `drop-keyspace NAME`            | `OK` (not the keyspace in use, nor `default`) |
//! | `begin [optimistic\|pessimistic] [snapshot\|serializable]` | `OK`: a transaction is open |
//! | `get-for-update K`              | the value, or `(nil)` (in a transaction) |
//! | `savepoint`                     | `OK`                                     |
//! | `rollback-to-savepoint`         | `OK`                                     |
//! | `commit`                        | `OK` once the transaction is durable     |
//! | `rollback`                      | `OK`                                     |
//! | `help`                          | one line per command (syntax, answer), then `END` |
//! | `quit` or `exit`                | `BYE`, and the shell ends                |
//!
//! `put`, `get`, `del`, `batch`, `scan` and `compact` act on the keyspace in
//! use, `default` until a `use`; `flush` and `stats` on the whole database.
//! Keyspace names are tokens too (escaped), and must be UTF-8.
//!
//! Between `begin` and `commit` or `rollback`, `put`, `get`, `del`,
//! `get-for-update` and `scan` are the transaction's (see [`txn`]): reads see
//! its own writes over the snapshot it began at, and nothing is written until
//! `commit`. `batch` and `drop-keyspace` are refused inside one, `use`
//! switches the keyspace of its next operations (one commit can span
//! keyspaces). A conflict, at commit or at a lock wait, answers `ERR` and
//! rolls the transaction back; `quit` or the end of input roll back an open
//! one.
//!
//! Empty lines are ignored. Anything wrong answers `ERR <message>` and the
//! shell goes on (a scan that fails midway ends with an `ERR` line instead of
//! `END`). Every answer is flushed, and a write is answered only after the
//! engine acknowledged it. End of input ends the shell, like `quit`.

use std::io::{self, BufRead, Write};
use std::ops::Bound;

use sievedb::{Db, Keyspace, Transaction, WriteBatch, WriteOptions};

use crate::escape;
use crate::keyspaces::DEFAULT_KEYSPACE;

mod request;
mod txn;

use request::{parse, tokenize, BatchOp, Request, COMMANDS};

/// Makes an error message fit on one answer line.
fn one_line(msg: &str) -> String {
    msg.replace(['\n', '\r'], " ")
}

/// Whether `db` has a keyspace named `name`.
fn has_keyspace(db: &Db, name: &str) -> bool {
    db.list_keyspaces().iter().any(|n| n == name)
}

/// A shell's state between commands.
struct Session<'a> {
    db: &'a Db,
    /// The keyspace in use, which `use` changes.
    ks: Keyspace,
    wo: WriteOptions,
    /// The transaction `begin` opened, until `commit` or `rollback`.
    tx: Option<Transaction>,
}

/// Executes one request, writing its whole answer to `out`.
fn execute(s: &mut Session<'_>, req: Request, out: &mut impl Write) -> io::Result<()> {
    let req = match txn::execute(s, req, out)? {
        Some(req) => req,
        None => return Ok(()),
    };
    let (db, ks, wo) = (s.db, &mut s.ks, &s.wo);
    let answer: Result<String, String> = match req {
        Request::Put(k, v) => ks
            .put_with(k, v, wo)
            .map(|()| "OK".to_string())
            .map_err(|e| e.to_string()),
        Request::Del(k) => ks
            .delete_with(k, wo)
            .map(|()| "OK".to_string())
            .map_err(|e| e.to_string()),
        Request::Batch(ops) => {
            let mut batch = WriteBatch::new();
            for op in ops {
                match op {
                    BatchOp::Put(k, v) => batch.put_cf(ks, k, v),
                    BatchOp::Del(k) => batch.delete_cf(ks, k),
                }
            }
            db.write_with(batch, wo)
                .map(|()| "OK".to_string())
                .map_err(|e| e.to_string())
        }
        Request::Get(k) => match ks.get(k) {
            Ok(Some(v)) => Ok(escape::encode_token(&v)),
            Ok(None) => Ok("(nil)".to_string()),
            Err(e) => Err(e.to_string()),
        },
        Request::Scan(lo, hi) if empty_range(&lo, &hi) => Ok("END".to_string()),
        Request::Scan(lo, hi) => return scan(ks.range((lo, hi)), out),
        Request::Flush => db
            .flush()
            .map(|()| "OK".to_string())
            .map_err(|e| e.to_string()),
        Request::Compact => ks
            .compact_range::<&[u8], _>(..)
            .map(|()| "OK".to_string())
            .map_err(|e| e.to_string()),
        Request::Stats => serde_json::to_string(&db.stats()).map_err(|e| e.to_string()),
        Request::Keyspaces => {
            for n in db.list_keyspaces() {
                writeln!(out, "{}", escape::encode_token(n.as_bytes()))?;
            }
            Ok("END".to_string())
        }
        Request::Use(name) if !has_keyspace(db, &name) => Err(format!(
            "no keyspace named {} (`keyspaces` lists them; `create-keyspace NAME` creates one)",
            escape::encode_token(name.as_bytes())
        )),
        Request::Use(name) => db
            .keyspace(&name)
            .map(|k| {
                *ks = k;
                "OK".to_string()
            })
            .map_err(|e| e.to_string()),
        Request::CreateKeyspace(name) if has_keyspace(db, &name) => Err(format!(
            "keyspace {} already exists",
            escape::encode_token(name.as_bytes())
        )),
        Request::CreateKeyspace(name) => db
            .keyspace(&name)
            .map(|_| "OK".to_string())
            .map_err(|e| e.to_string()),
        Request::DropKeyspace(name) if name == ks.name() && name != DEFAULT_KEYSPACE => {
            Err(format!(
                "keyspace {} is in use: `use default` first",
                escape::encode_token(name.as_bytes())
            ))
        }
        Request::DropKeyspace(name) => db
            .drop_keyspace(&name)
            .map(|()| "OK".to_string())
            .map_err(|e| e.to_string()),
        Request::Help => return help(out),
        Request::Quit => Ok("BYE".to_string()),
        Request::Begin(mode) => {
            s.tx = Some(txn::begin(db, mode));
            Ok("OK".to_string())
        }
        Request::GetForUpdate(_)
        | Request::Savepoint
        | Request::RollbackToSavepoint
        | Request::Commit
        | Request::Rollback => Err(format!(
            "{} needs a transaction: `begin` one first",
            txn::command_name(&req)
        )),
    };
    match answer {
        Ok(line) => writeln!(out, "{line}"),
        Err(msg) => writeln!(out, "ERR {}", one_line(&msg)),
    }
}

/// The answer to `help`: `SYNTAX  -> ANSWER` per command, then `END`.
fn help(out: &mut impl Write) -> io::Result<()> {
    let w = COMMANDS.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    for (syntax, answer) in COMMANDS {
        writeln!(out, "{syntax:<w$}  -> {answer}")?;
    }
    writeln!(out, "END")
}

/// Whether a scan range is empty (FROM at or after TO): answered without asking the engine.
fn empty_range(lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>) -> bool {
    match (lo, hi) {
        (Bound::Included(l), Bound::Excluded(h)) => l >= h,
        _ => false,
    }
}

/// Streams the `K V` lines of a scan followed by `END` (or `ERR` on failure).
fn scan<I>(iter: sievedb::Result<I>, out: &mut impl Write) -> io::Result<()>
where
    I: Iterator<Item = sievedb::Result<(Vec<u8>, Vec<u8>)>>,
{
    let iter = match iter {
        Ok(it) => it,
        Err(e) => return writeln!(out, "ERR {}", one_line(&e.to_string())),
    };
    for item in iter {
        match item {
            Ok((k, v)) => writeln!(
                out,
                "{} {}",
                escape::encode_token(&k),
                escape::encode_token(&v)
            )?,
            Err(e) => return writeln!(out, "ERR {}", one_line(&e.to_string())),
        }
    }
    writeln!(out, "END")
}

/// Runs the shell until `quit`/`exit` or end of input, starting in the
/// default keyspace. Only I/O errors on `input`/`out` end it early.
pub fn run(db: &Db, sync: bool, mut input: impl BufRead, mut out: impl Write) -> io::Result<()> {
    // Dropped on return (an open transaction rolled back), so the caller
    // can close the database.
    let mut s = Session {
        db,
        ks: db.default_keyspace(),
        wo: WriteOptions { sync },
        tx: None,
    };
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return out.flush();
        }
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        let tokens = tokenize(&line);
        if tokens.is_empty() {
            continue;
        }
        match parse(&tokens) {
            Ok(Request::Quit) => {
                execute(&mut s, Request::Quit, &mut out)?;
                return out.flush();
            }
            Ok(req) => execute(&mut s, req, &mut out)?,
            Err(msg) => writeln!(out, "ERR {}", one_line(&msg))?,
        }
        out.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use super::request::{parse, tokenize, Request};
    use super::*;

    fn parse_line(s: &str) -> Result<Request, String> {
        parse(&tokenize(s.as_bytes()))
    }

    #[test]
    fn help_lists_every_command_the_parser_knows() {
        let mut out = Vec::new();
        help(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().last(), Some("END"));
        for (syntax, _) in COMMANDS {
            assert!(text.contains(syntax), "{syntax}");
            // Every listed name is a command, not an unknown one.
            for name in syntax.split(" | ").map(|s| s.split(' ').next().unwrap()) {
                let e = parse_line(name).err().unwrap_or_default();
                assert!(!e.contains("unknown command"), "{name}: {e}");
            }
        }
        let e = parse_line("frobnicate").unwrap_err();
        assert!(e.contains("help") && e.contains("scan"), "{e}");
    }

    #[test]
    fn empty_ranges() {
        let inc = |s: &str| Bound::Included(s.as_bytes().to_vec());
        let exc = |s: &str| Bound::Excluded(s.as_bytes().to_vec());
        assert!(empty_range(&inc("b"), &exc("a")));
        assert!(empty_range(&inc("a"), &exc("a")));
        assert!(!empty_range(&inc("a"), &exc("b")));
        assert!(!empty_range(&Bound::Unbounded, &exc("")));
    }
}
