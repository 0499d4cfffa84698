//! The one-shot subcommands: `get`, `put`, `delete`, `scan`, `stats` and `shell`.

use std::error::Error;
use std::io::{self, BufWriter, Write};
use std::ops::Bound;
use std::path::Path;
use std::process::ExitCode;

use sievedb::{Db, Options, Stats};

use crate::escape;
use crate::shell;

/// What a subcommand returns: the exit code, or an error for `main` to print.
pub type CmdResult = Result<ExitCode, Box<dyn Error>>;

/// A key or value given on the command line, already unescaped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Escaped(pub Vec<u8>);

/// clap value parser for [`Escaped`] arguments (`%XX` escapes, `""` = empty).
pub fn parse_escaped(s: &str) -> Result<Escaped, escape::EscapeError> {
    escape::decode(s.as_bytes()).map(Escaped)
}

/// A message-only error.
#[derive(Debug)]
pub struct Message(pub String);

impl std::fmt::Display for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for Message {}

/// Opens an existing database without ever creating one: the directory and
/// its `CURRENT` file must exist.
fn open_existing(dir: &Path) -> Result<Db, Box<dyn Error>> {
    if !dir.exists() {
        return Err(Box::new(Message(format!(
            "database directory {} does not exist",
            dir.display()
        ))));
    }
    if !dir.is_dir() {
        return Err(Box::new(Message(format!(
            "{} is not a directory",
            dir.display()
        ))));
    }
    if !dir.join("CURRENT").exists() {
        return Err(Box::new(Message(format!(
            "{} is not a sievedb database (no CURRENT file)",
            dir.display()
        ))));
    }
    let opts = Options {
        create_if_missing: false,
        ..Options::default()
    };
    Ok(Db::open(dir, opts)?)
}

/// Opens the database, creating it when missing.
fn open_or_create(dir: &Path) -> Result<Db, Box<dyn Error>> {
    Ok(Db::open(dir, Options::default())?)
}

/// `sievedb get`: prints the escaped value; a missing key prints `not found`
/// on stderr and exits with status 1.
pub fn get(dir: &Path, key: &Escaped) -> CmdResult {
    let db = open_existing(dir)?;
    let value = db.get(&key.0)?;
    db.close()?;
    match value {
        Some(v) => {
            let mut out = io::stdout().lock();
            writeln!(out, "{}", escape::encode(&v))?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            eprintln!("not found");
            Ok(ExitCode::from(1))
        }
    }
}

/// `sievedb put`: sets KEY to VALUE, creating the database if needed.
pub fn put(dir: &Path, key: &Escaped, value: &Escaped) -> CmdResult {
    let db = open_or_create(dir)?;
    db.put(&key.0, &value.0)?;
    db.close()?;
    Ok(ExitCode::SUCCESS)
}

/// `sievedb delete`: removes KEY from an existing database.
pub fn delete(dir: &Path, key: &Escaped) -> CmdResult {
    let db = open_existing(dir)?;
    db.delete(&key.0)?;
    db.close()?;
    Ok(ExitCode::SUCCESS)
}

/// `sievedb scan`: prints `K V` lines for keys in `[from, to)`, at most `limit` of them.
pub fn scan(
    dir: &Path,
    from: Option<&Escaped>,
    to: Option<&Escaped>,
    limit: Option<usize>,
) -> CmdResult {
    let db = open_existing(dir)?;
    let lo = from.map_or(Bound::Unbounded, |k| Bound::Included(k.0.clone()));
    let hi = to.map_or(Bound::Unbounded, |k| Bound::Excluded(k.0.clone()));
    let empty = matches!((&lo, &hi), (Bound::Included(l), Bound::Excluded(h)) if l >= h);
    let mut out = BufWriter::new(io::stdout().lock());
    if !empty {
        let limit = limit.unwrap_or(usize::MAX);
        for item in db.range((lo, hi))?.take(limit) {
            let (k, v) = item?;
            writeln!(out, "{} {}", escape::encode(&k), escape::encode(&v))?;
        }
    }
    out.flush()?;
    drop(out);
    db.close()?;
    Ok(ExitCode::SUCCESS)
}

/// `sievedb stats`: a per-level table and the counters, or one JSON line.
pub fn stats(dir: &Path, json: bool) -> CmdResult {
    let db = open_existing(dir)?;
    let stats = db.stats();
    db.close()?;
    let mut out = io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string(&stats)?)?;
    } else {
        out.write_all(format_stats(&stats).as_bytes())?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The human-readable form of [`Stats`].
pub fn format_stats(s: &Stats) -> String {
    let mut t = String::new();
    let header = ["level", "files", "runs", "bytes", "entries"];
    let rows: Vec<[String; 5]> = s
        .levels
        .iter()
        .map(|l| {
            [
                format!("L{}", l.level),
                l.files.to_string(),
                l.runs.to_string(),
                l.bytes.to_string(),
                l.entries.to_string(),
            ]
        })
        .collect();
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].len())
            .chain(std::iter::once(header[i].len()))
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let mut line = |cells: &[&str]| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i == 0 {
                l.push_str(&format!("{c:<w$}", w = widths[0]));
            } else {
                l.push_str(&format!("  {c:>w$}", w = widths[i]));
            }
        }
        t.push_str(l.trim_end());
        t.push('\n');
    };
    line(&header);
    for r in &rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        line(&cells);
    }
    t.push('\n');
    let counters: [(&str, String); 21] = [
        ("gets", s.gets.to_string()),
        ("puts", s.puts.to_string()),
        ("deletes", s.deletes.to_string()),
        ("memtable_hits", s.memtable_hits.to_string()),
        ("digests_computed", s.digests_computed.to_string()),
        ("filter_probes", s.filter_probes.to_string()),
        ("filter_negatives", s.filter_negatives.to_string()),
        (
            "filter_false_positives",
            s.filter_false_positives.to_string(),
        ),
        ("data_block_reads", s.data_block_reads.to_string()),
        ("block_cache_hits", s.block_cache_hits.to_string()),
        ("block_cache_misses", s.block_cache_misses.to_string()),
        ("bytes_written", s.bytes_written.to_string()),
        ("bytes_read", s.bytes_read.to_string()),
        ("user_bytes_written", s.user_bytes_written.to_string()),
        ("compactions", s.compactions.to_string()),
        ("flushes", s.flushes.to_string()),
        ("filter_memory_bytes", s.filter_memory_bytes.to_string()),
        ("block_cache_bytes", s.block_cache_bytes.to_string()),
        ("memtable_bytes", s.memtable_bytes.to_string()),
        (
            "write_amplification",
            format!("{:.3}", s.write_amplification),
        ),
        ("last_sequence", s.last_sequence.to_string()),
    ];
    let w = counters.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, value) in counters {
        t.push_str(&format!("{name:<w$}  {value}\n"));
    }
    t
}

/// `sievedb shell`: the line protocol of [`shell`] on stdin/stdout.
pub fn shell(dir: &Path, sync: bool) -> CmdResult {
    let db = open_or_create(dir)?;
    let stdin = io::stdin().lock();
    let stdout = BufWriter::new(io::stdout().lock());
    shell::run(&db, sync, stdin, stdout)?;
    db.close()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_table_has_a_row_per_level_and_counters() {
        let mut s = Stats::default();
        s.levels.push(sievedb::LevelStats {
            level: 0,
            files: 3,
            runs: 3,
            bytes: 123_456,
            entries: 1000,
            ..Default::default()
        });
        s.puts = 7;
        let text = format_stats(&s);
        let mut lines = text.lines();
        assert_eq!(
            lines
                .next()
                .map(|l| l.split_whitespace().collect::<Vec<_>>()),
            Some(vec!["level", "files", "runs", "bytes", "entries"])
        );
        assert_eq!(
            lines
                .next()
                .map(|l| l.split_whitespace().collect::<Vec<_>>()),
            Some(vec!["L0", "3", "3", "123456", "1000"])
        );
        assert!(text.lines().any(|l| l.split_whitespace().eq(["puts", "7"])));
    }
}
