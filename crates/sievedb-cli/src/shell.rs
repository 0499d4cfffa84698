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
//! | `help`                          | one line per command (syntax, answer), then `END` |
//! | `quit` or `exit`                | `BYE`, and the shell ends                |
//!
//! `put`, `get`, `del`, `batch`, `scan` and `compact` act on the keyspace in
//! use, `default` until a `use`; `flush` and `stats` on the whole database.
//! Keyspace names are tokens too (escaped), and must be UTF-8.
//!
//! Empty lines are ignored. Anything wrong answers `ERR <message>` and the
//! shell goes on (a scan that fails midway ends with an `ERR` line instead of
//! `END`). Every answer is flushed, and a write is answered only after the
//! engine acknowledged it. End of input ends the shell, like `quit`.

use std::io::{self, BufRead, Write};
use std::ops::Bound;

use sievedb::{Db, Keyspace, WriteBatch, WriteOptions};

use crate::escape;
use crate::keyspaces::DEFAULT_KEYSPACE;

/// One parsed shell command.
#[derive(Debug, PartialEq)]
enum Request {
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
}

/// Every command's syntax and answer: what `help` prints (one line each)
/// and what the error of an unknown command lists.
const COMMANDS: [(&str, &str); 14] = [
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
    ("help", "this list, then END"),
    (
        "quit | exit",
        "BYE, and the shell ends (so does end of input)",
    ),
];

/// One operation of a `batch` command.
#[derive(Debug, PartialEq)]
enum BatchOp {
    Put(Vec<u8>, Vec<u8>),
    Del(Vec<u8>),
}

/// Splits a line into tokens separated by runs of spaces and tabs.
fn tokenize(line: &[u8]) -> Vec<&[u8]> {
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
fn parse(tokens: &[&[u8]]) -> Result<Request, String> {
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

/// Makes an error message fit on one answer line.
fn one_line(msg: &str) -> String {
    msg.replace(['\n', '\r'], " ")
}

/// Whether `db` has a keyspace named `name`.
fn has_keyspace(db: &Db, name: &str) -> bool {
    db.list_keyspaces().iter().any(|n| n == name)
}

/// Executes one request on keyspace `ks` (the one in use, which `use`
/// changes), writing its whole answer to `out`.
fn execute(
    db: &Db,
    ks: &mut Keyspace,
    wo: &WriteOptions,
    req: Request,
    out: &mut impl Write,
) -> io::Result<()> {
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
        Request::Scan(lo, hi) => return scan(ks, lo, hi, out),
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
fn scan(
    ks: &Keyspace,
    lo: Bound<Vec<u8>>,
    hi: Bound<Vec<u8>>,
    out: &mut impl Write,
) -> io::Result<()> {
    if empty_range(&lo, &hi) {
        return writeln!(out, "END");
    }
    let iter = match ks.range((lo, hi)) {
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
    let wo = WriteOptions { sync };
    // Dropped on return, so the caller can close the database.
    let mut ks = db.default_keyspace();
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
                execute(db, &mut ks, &wo, Request::Quit, &mut out)?;
                return out.flush();
            }
            Ok(req) => execute(db, &mut ks, &wo, req, &mut out)?,
            Err(msg) => writeln!(out, "ERR {}", one_line(&msg))?,
        }
        out.flush()?;
    }
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
        ] {
            assert!(parse_line(bad).is_err(), "{bad}");
        }
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
