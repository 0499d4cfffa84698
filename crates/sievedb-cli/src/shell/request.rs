//! The shell's commands: tokens to [`Request`]s, and the list `help` prints.

use std::ops::Bound;

use crate::escape;

/// One parsed shell command.
#[derive(Debug, PartialEq)]
pub(super) enum Request {
    Put(Vec<u8>, Vec<u8>),
    Get(Vec<u8>),
    Del(Vec<u8>),
    Batch(Vec<BatchOp>),
    Scan(Bound<Vec<u8>>, Bound<Vec<u8>>),
    Flush,
    Compact,
    Stats,
    Keyspaces,
    Use(String),
    CreateKeyspace(String),
    DropKeyspace(String),
    Help,
    Quit,
    /// `begin [optimistic|pessimistic] [snapshot|serializable]`.
    Begin(TxnMode),
    GetForUpdate(Vec<u8>),
    Savepoint,
    RollbackToSavepoint,
    Commit,
    Rollback,
}

/// How `begin` runs a transaction.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct TxnMode {
    pub pessimistic: bool,
    pub serializable: bool,
}

/// Every command's syntax and answer: what `help` prints (one line each)
/// and what the error of an unknown command lists.
pub(super) const COMMANDS: [(&str, &str); 20] = [
    ("put KEY VALUE", "OK"),
    ("get KEY", "the value, or (nil)"),
    ("del KEY", "OK"),
    ("batch put K V del K ...", "OK (one atomic write batch)"),
    (
        "scan FROM TO",
        "`K V` lines, then END (FROM inclusive, TO exclusive, `-` = unbounded)",
    ),
    ("flush", "OK"),
    ("compact", "OK"),
    ("stats", "one JSON line (counters of this process only)"),
    ("keyspaces", "one name per line, then END"),
    (
        "use NAME",
        "OK: keyspace NAME (which must exist) is in use for put/get/del/batch/scan/compact",
    ),
    (
        "create-keyspace NAME",
        "OK: a new keyspace (`use` it to write there)",
    ),
    (
        "drop-keyspace NAME",
        "OK: the keyspace and its keys are gone (not the one in use, not default)",
    ),
    (
        "begin [optimistic|pessimistic] [snapshot|serializable]",
        "OK: put/get/del/scan go into a transaction until commit or rollback",
    ),
    (
        "get-for-update KEY",
        "the value, or (nil); in a transaction, which a commit by someone else since then fails",
    ),
    ("savepoint", "OK: rollback-to-savepoint returns here"),
    (
        "rollback-to-savepoint",
        "OK: the transaction's writes since its last savepoint are undone",
    ),
    (
        "commit",
        "OK once durable, or ERR (a conflict rolls the transaction back)",
    ),
    ("rollback", "OK: the transaction's writes are dropped"),
    ("help", "this list, then END"),
    (
        "quit | exit",
        "BYE, and the shell ends (so does end of input)",
    ),
];

/// One operation of a `batch` command.
#[derive(Debug, PartialEq)]
pub(super) enum BatchOp {
    Put(Vec<u8>, Vec<u8>),
    Del(Vec<u8>),
}

/// Splits a line into tokens separated by runs of spaces and tabs.
pub(super) fn tokenize(line: &[u8]) -> Vec<&[u8]> {
    line.split(|&b| b == b' ' || b == b'\t')
        .filter(|t| !t.is_empty())
        .collect()
}

fn arg(token: &[u8], what: &str) -> Result<Vec<u8>, String> {
    escape::decode(token).map_err(|e| format!("{what}: {e}"))
}

fn expect_args(cmd: &str, args: &[&[u8]], n: usize, usage: &str) -> Result<(), String> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!(
            "{cmd} takes {n} argument{} ({usage}), got {}",
            if n == 1 { "" } else { "s" },
            args.len()
        ))
    }
}

/// A keyspace name: an escaped token of UTF-8.
fn name(token: &[u8]) -> Result<String, String> {
    String::from_utf8(arg(token, "keyspace name")?)
        .map_err(|_| "keyspace name: not UTF-8".to_string())
}

fn bound(token: &[u8], what: &str) -> Result<Option<Vec<u8>>, String> {
    if token == b"-" {
        Ok(None)
    } else {
        arg(token, what).map(Some)
    }
}

/// Parses the tokens of a non-empty line.
pub(super) fn parse(tokens: &[&[u8]]) -> Result<Request, String> {
    let (cmd, args) = match tokens.split_first() {
        Some((c, a)) => (String::from_utf8_lossy(c).to_ascii_lowercase(), a),
        None => return Err("empty command".to_string()),
    };
    match cmd.as_str() {
        "put" => {
            expect_args(&cmd, args, 2, "put KEY VALUE")?;
            Ok(Request::Put(arg(args[0], "key")?, arg(args[1], "value")?))
        }
        "get" => {
            expect_args(&cmd, args, 1, "get KEY")?;
            Ok(Request::Get(arg(args[0], "key")?))
        }
        "del" | "delete" => {
            expect_args(&cmd, args, 1, "del KEY")?;
            Ok(Request::Del(arg(args[0], "key")?))
        }
        "batch" => parse_batch(args).map(Request::Batch),
        "scan" => {
            expect_args(&cmd, args, 2, "scan FROM TO, `-` for unbounded")?;
            let lo = bound(args[0], "from")?.map_or(Bound::Unbounded, Bound::Included);
            let hi = bound(args[1], "to")?.map_or(Bound::Unbounded, Bound::Excluded);
            Ok(Request::Scan(lo, hi))
        }
        "flush" => expect_args(&cmd, args, 0, "flush").map(|()| Request::Flush),
        "compact" => expect_args(&cmd, args, 0, "compact").map(|()| Request::Compact),
        "stats" => expect_args(&cmd, args, 0, "stats").map(|()| Request::Stats),
        "keyspaces" => expect_args(&cmd, args, 0, "keyspaces").map(|()| Request::Keyspaces),
        "use" => {
            expect_args(&cmd, args, 1, "use NAME")?;
            Ok(Request::Use(name(args[0])?))
        }
        "create-keyspace" => {
            expect_args(&cmd, args, 1, "create-keyspace NAME")?;
            Ok(Request::CreateKeyspace(name(args[0])?))
        }
        "drop-keyspace" => {
            expect_args(&cmd, args, 1, "drop-keyspace NAME")?;
            Ok(Request::DropKeyspace(name(args[0])?))
        }
        "begin" => parse_begin(args).map(Request::Begin),
        "get-for-update" => {
            expect_args(&cmd, args, 1, "get-for-update KEY")?;
            Ok(Request::GetForUpdate(arg(args[0], "key")?))
        }
        "savepoint" => expect_args(&cmd, args, 0, "savepoint").map(|()| Request::Savepoint),
        "rollback-to-savepoint" => expect_args(&cmd, args, 0, "rollback-to-savepoint")
            .map(|()| Request::RollbackToSavepoint),
        "commit" => expect_args(&cmd, args, 0, "commit").map(|()| Request::Commit),
        "rollback" => expect_args(&cmd, args, 0, "rollback").map(|()| Request::Rollback),
        "help" => expect_args(&cmd, args, 0, "help").map(|()| Request::Help),
        "quit" | "exit" => expect_args(&cmd, args, 0, "quit").map(|()| Request::Quit),
        _ => {
            let names: Vec<&str> = COMMANDS
                .iter()
                .filter_map(|(syntax, _)| syntax.split(' ').next())
                .collect();
            Err(format!(
                "unknown command `{}` (expected {}; `help` lists their syntax)",
                escape::encode(tokens[0]),
                names.join(", ")
            ))
        }
    }
}

/// The mode words of `begin`, each at most once, in any order.
fn parse_begin(args: &[&[u8]]) -> Result<TxnMode, String> {
    let mut mode = TxnMode::default();
    let (mut locking, mut isolation) = (false, false);
    for word in args {
        let w = String::from_utf8_lossy(word).to_ascii_lowercase();
        let (seen, set) = match w.as_str() {
            "optimistic" | "pessimistic" => (&mut locking, &mut mode.pessimistic),
            "snapshot" | "serializable" => (&mut isolation, &mut mode.serializable),
            _ => {
                return Err(format!(
                "begin: unknown mode `{}` (begin [optimistic|pessimistic] [snapshot|serializable])",
                escape::encode(word)
            ))
            }
        };
        if std::mem::replace(seen, true) {
            return Err(format!(
                "begin: `{w}` contradicts or repeats an earlier word"
            ));
        }
        *set = matches!(w.as_str(), "pessimistic" | "serializable");
    }
    Ok(mode)
}

fn parse_batch(mut args: &[&[u8]]) -> Result<Vec<BatchOp>, String> {
    let mut ops = Vec::new();
    while let Some((op, rest)) = args.split_first() {
        let n = ops.len() + 1;
        match String::from_utf8_lossy(op).to_ascii_lowercase().as_str() {
            "put" => {
                let [k, v, ..] = rest else {
                    return Err(format!("batch operation {n}: put needs KEY VALUE"));
                };
                ops.push(BatchOp::Put(
                    arg(k, &format!("batch operation {n}: key"))?,
                    arg(v, &format!("batch operation {n}: value"))?,
                ));
                args = &rest[2..];
            }
            "del" | "delete" => {
                let [k, ..] = rest else {
                    return Err(format!("batch operation {n}: del needs KEY"));
                };
                ops.push(BatchOp::Del(arg(k, &format!("batch operation {n}: key"))?));
                args = &rest[1..];
            }
            _ => {
                return Err(format!(
                    "batch operation {n}: expected put or del, got `{}`",
                    escape::encode(op)
                ))
            }
        }
    }
    if ops.is_empty() {
        return Err("batch needs at least one operation (batch put K V del K ...)".to_string());
    }
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_line(s: &str) -> Result<Request, String> {
        parse(&tokenize(s.as_bytes()))
    }

    #[test]
    fn tokenizes_on_runs_of_blanks() {
        assert_eq!(
            tokenize(b"  put \t a\t\tb  "),
            vec![&b"put"[..], b"a", b"b"]
        );
        assert!(tokenize(b" \t ").is_empty());
    }

    #[test]
    fn parses_commands() {
        assert_eq!(
            parse_line("put a%00 \"\""),
            Ok(Request::Put(b"a\0".to_vec(), Vec::new()))
        );
        assert_eq!(parse_line("GET k"), Ok(Request::Get(b"k".to_vec())));
        assert_eq!(parse_line("del k"), Ok(Request::Del(b"k".to_vec())));
        assert_eq!(
            parse_line("scan - b"),
            Ok(Request::Scan(
                Bound::Unbounded,
                Bound::Excluded(b"b".to_vec())
            ))
        );
        assert_eq!(
            parse_line("scan %2D -"),
            Ok(Request::Scan(
                Bound::Included(b"-".to_vec()),
                Bound::Unbounded
            ))
        );
        assert_eq!(
            parse_line("batch put a 1 del b put c \"\""),
            Ok(Request::Batch(vec![
                BatchOp::Put(b"a".to_vec(), b"1".to_vec()),
                BatchOp::Del(b"b".to_vec()),
                BatchOp::Put(b"c".to_vec(), Vec::new()),
            ]))
        );
        assert_eq!(parse_line("flush"), Ok(Request::Flush));
        assert_eq!(parse_line("compact"), Ok(Request::Compact));
        assert_eq!(parse_line("stats"), Ok(Request::Stats));
        assert_eq!(parse_line("HELP"), Ok(Request::Help));
        assert_eq!(parse_line("quit"), Ok(Request::Quit));
        assert_eq!(parse_line("exit"), Ok(Request::Quit));
        assert_eq!(parse_line("keyspaces"), Ok(Request::Keyspaces));
        assert_eq!(parse_line("USE users"), Ok(Request::Use("users".into())));
        assert_eq!(
            parse_line("create-keyspace a%20b"),
            Ok(Request::CreateKeyspace("a b".into()))
        );
        assert_eq!(
            parse_line("drop-keyspace %C3%A9t%C3%A9"),
            Ok(Request::DropKeyspace("\u{e9}t\u{e9}".into()))
        );
        assert_eq!(parse_line("begin"), Ok(Request::Begin(TxnMode::default())));
        assert_eq!(
            parse_line("BEGIN serializable Pessimistic"),
            Ok(Request::Begin(TxnMode {
                pessimistic: true,
                serializable: true
            }))
        );
        assert_eq!(
            parse_line("begin optimistic snapshot"),
            Ok(Request::Begin(TxnMode::default()))
        );
        assert_eq!(
            parse_line("get-for-update k"),
            Ok(Request::GetForUpdate(b"k".to_vec()))
        );
        assert_eq!(parse_line("savepoint"), Ok(Request::Savepoint));
        assert_eq!(
            parse_line("rollback-to-savepoint"),
            Ok(Request::RollbackToSavepoint)
        );
        assert_eq!(parse_line("commit"), Ok(Request::Commit));
        assert_eq!(parse_line("rollback"), Ok(Request::Rollback));
    }

    #[test]
    fn rejects_bad_commands() {
        for bad in [
            "frobnicate",
            "put a",
            "put a b c",
            "get",
            "get a b",
            "del",
            "scan a",
            "scan a b c",
            "flush now",
            "help me",
            "quit now",
            "batch",
            "batch put a",
            "batch del",
            "batch put a 1 get a",
            "put %G1 v",
            "put k %4",
            "get a\"b",
            "keyspaces now",
            "use",
            "use a b",
            "use a%FF",
            "use %G1",
            "create-keyspace",
            "create-keyspace a b",
            "drop-keyspace",
            "begin now",
            "begin optimistic pessimistic",
            "begin snapshot snapshot",
            "get-for-update",
            "commit now",
            "rollback all",
            "savepoint a",
        ] {
            assert!(parse_line(bad).is_err(), "{bad}");
        }
    }
}
