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
//! | `help`                          | one line per command (syntax, answer), then `END` |
//! | `quit` or `exit`                | `BYE`, and the shell ends                |
//!
//! Empty lines are ignored. Anything wrong answers `ERR <message>` and the
//! shell goes on (a scan that fails midway ends with an `ERR` line instead of
//! `END`). Every answer is flushed, and a write is answered only after the
//! engine acknowledged it. End of input ends the shell, like `quit`.

use std::io::{self, BufRead, Write};
use std::ops::Bound;

use sievedb::{Db, WriteBatch, WriteOptions};

use crate::escape;

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
    Help,
    Quit,
}

/// Every command's syntax and answer: what `help` prints (one line each)
/// and what the error of an unknown command lists.
const COMMANDS: [(&str, &str); 10] = [
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

/// Executes one request, writing its whole answer to `out`.
fn execute(db: &Db, wo: &WriteOptions, req: Request, out: &mut impl Write) -> io::Result<()> {
    let answer: Result<String, String> = match req {
        Request::Put(k, v) => db
            .put_with(k, v, wo)
            .map(|()| "OK".to_string())
            .map_err(|e| e.to_string()),
        Request::Del(k) => db
            .delete_with(k, wo)
            .map(|()| "OK".to_string())
            .map_err(|e| e.to_string()),
        Request::Batch(ops) => {
            let mut batch = WriteBatch::new();
            for op in ops {
                match op {
                    BatchOp::Put(k, v) => batch.put(k, v),
                    BatchOp::Del(k) => batch.delete(k),
                }
            }
            db.write_with(batch, wo)
                .map(|()| "OK".to_string())
                .map_err(|e| e.to_string())
        }
        Request::Get(k) => match db.get(k) {
            Ok(Some(v)) => Ok(escape::encode_token(&v)),
            Ok(None) => Ok("(nil)".to_string()),
            Err(e) => Err(e.to_string()),
        },
        Request::Scan(lo, hi) => return scan(db, lo, hi, out),
        Request::Flush => db
            .flush()
            .map(|()| "OK".to_string())
            .map_err(|e| e.to_string()),
        Request::Compact => db
            .compact_range::<&[u8], _>(..)
            .map(|()| "OK".to_string())
            .map_err(|e| e.to_string()),
        Request::Stats => serde_json::to_string(&db.stats()).map_err(|e| e.to_string()),
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
fn scan(db: &Db, lo: Bound<Vec<u8>>, hi: Bound<Vec<u8>>, out: &mut impl Write) -> io::Result<()> {
    if empty_range(&lo, &hi) {
        return writeln!(out, "END");
    }
    let iter = match db.range((lo, hi)) {
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

/// Runs the shell until `quit`/`exit` or end of input. Only I/O errors on
/// `input`/`out` end it early.
pub fn run(db: &Db, sync: bool, mut input: impl BufRead, mut out: impl Write) -> io::Result<()> {
    let wo = WriteOptions { sync };
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
                execute(db, &wo, Request::Quit, &mut out)?;
                return out.flush();
            }
            Ok(req) => execute(db, &wo, req, &mut out)?,
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
