//! The one-shot subcommands: `get`, `put`, `delete`, `scan`, `stats`,
//! `keyspaces`, `create-keyspace`, `drop-keyspace`, `repair` and `shell`
//! (`bulkload` is [`crate::bulkload`]).

use std::error::Error;
use std::io::{self, BufWriter, Write};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sievedb::{Db, LostTable, Options, RepairReport, SalvageMethod, Stats};

use crate::escape;
use crate::keyspaces::{
    existing_keyspace, format_keyspaces, keyspace_for_stats, keyspace_rows, KeyspaceRow,
    DEFAULT_KEYSPACE,
};
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

/// Checks that `dir` holds a database, with messages naming the path.
fn check_existing(dir: &Path) -> Result<(), Box<dyn Error>> {
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
    Ok(())
}

/// Opens an existing database read-write without ever creating one: the
/// directory and its `CURRENT` file must exist.
pub(crate) fn open_existing(dir: &Path) -> Result<Db, Box<dyn Error>> {
    check_existing(dir)?;
    let opts = Options {
        create_if_missing: false,
        ..Options::default()
    };
    let db = Db::open(dir, opts).map_err(|e| in_dir(dir, e))?;
    warn_dropped(&db);
    Ok(db)
}

/// Opens an existing database for reading only (`get`, `scan`, `stats`):
/// nothing in the directory is created or changed, so these work on a
/// read-only mount and on a database another process has open.
pub(crate) fn open_existing_read_only(dir: &Path) -> Result<Db, Box<dyn Error>> {
    check_existing(dir)?;
    let db = Db::open_read_only(dir, Options::default()).map_err(|e| in_dir(dir, e))?;
    warn_dropped(&db);
    Ok(db)
}

/// Tells the user on stderr when WAL recovery dropped more than a torn tail.
fn warn_dropped(db: &Db) {
    if let Some(d) = db
        .recovery_report()
        .dropped
        .as_ref()
        .filter(|d| !d.torn_tail)
    {
        eprintln!(
            "warning: {} is damaged at offset {} ({}): the database is shown as of the last \
             good write before it; {} bytes of that WAL and {} newer WAL(s) were not applied{}",
            d.path.display(),
            d.offset,
            d.detail,
            d.bytes,
            d.skipped_wals.len(),
            match &d.kept_in {
                Some(p) => format!(" (kept in {})", p.display()),
                None => String::new(),
            }
        );
    }
}

/// Checks that a database may be created in `dir`: it is missing, empty, or
/// already a database (`CURRENT`), or holds only sievedb's own files (the
/// leftovers of an interrupted creation or bulk load, which the engine
/// handles). Anything else is refused, so that a mistyped `--db` never plants
/// a database among someone's files.
pub(crate) fn check_creatable(dir: &Path) -> Result<(), Box<dyn Error>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(_) if !dir.is_dir() && dir.exists() => {
            return Err(Box::new(Message(format!(
                "{} is not a directory",
                dir.display()
            ))))
        }
        Err(e) => return Err(Box::new(Message(format!("{}: {e}", dir.display())))),
    };
    if dir.join("CURRENT").exists() {
        return Ok(());
    }
    for entry in entries {
        let entry = entry.map_err(|e| Message(format!("{}: {e}", dir.display())))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = name == "LOCK"
            || name == sievedb::bulk::MARKER
            || sievedb::io::filename::parse(&name).is_some();
        if !ours {
            return Err(Box::new(Message(format!(
                "{} is not a sievedb database (no CURRENT file) and is not empty (it holds {}): \
                 refusing to create a database there; use an empty or new directory",
                dir.display(),
                name
            ))));
        }
    }
    Ok(())
}

/// `e` with `dir` in its message, unless the message already names it.
pub(crate) fn in_dir(dir: &Path, e: impl std::fmt::Display) -> Message {
    let msg = e.to_string();
    let shown = dir.display().to_string();
    if msg.contains(&shown) {
        Message(msg)
    } else {
        Message(format!("{shown}: {msg}"))
    }
}

/// Opens the database, creating it when `dir` is missing or empty (see
/// [`check_creatable`]).
pub(crate) fn open_or_create(dir: &Path) -> Result<Db, Box<dyn Error>> {
    check_creatable(dir)?;
    Ok(Db::open(dir, Options::default()).map_err(|e| in_dir(dir, e))?)
}

/// The value of `put` and `remote put`: VALUE, or `--value-file PATH`.
#[derive(clap::Args, Debug)]
pub struct PutValue {
    /// Value (escaped); give it or --value-file, not both
    #[arg(value_parser = parse_escaped, required_unless_present = "value_file",
          conflicts_with = "value_file")]
    pub value: Option<Escaped>,
    /// Read the value from PATH, as raw bytes (not escaped); `-` reads stdin
    #[arg(long, value_name = "PATH")]
    pub value_file: Option<PathBuf>,
}

impl PutValue {
    /// The value's bytes (the file read, or stdin for `-`).
    pub fn read(&self) -> Result<Vec<u8>, Box<dyn Error>> {
        match (&self.value, &self.value_file) {
            (Some(v), None) => Ok(v.0.clone()),
            (None, Some(path)) => read_value_file(path),
            _ => Err(Box::new(Message(
                "give VALUE or --value-file PATH, not both".into(),
            ))),
        }
    }
}

/// The value of `put --value-file PATH` (`-` = stdin), raw bytes.
fn read_value_file(path: &Path) -> Result<Vec<u8>, Box<dyn Error>> {
    if path.as_os_str() == "-" {
        let mut v = Vec::new();
        io::Read::read_to_end(&mut io::stdin().lock(), &mut v)
            .map_err(|e| Message(format!("cannot read the value from stdin: {e}")))?;
        return Ok(v);
    }
    std::fs::read(path).map_err(|e| {
        Box::new(Message(format!(
            "cannot read value file {}: {e}",
            path.display()
        ))) as Box<dyn Error>
    })
}

/// `sievedb get`: prints the escaped value; a missing key prints `not found`
/// on stderr and exits with status 1.
pub fn get(dir: &Path, keyspace: Option<&str>, key: &Escaped) -> CmdResult {
    let db = open_existing_read_only(dir)?;
    let ks = existing_keyspace(&db, dir, keyspace)?;
    let value = ks.get(&key.0)?;
    drop(ks);
    db.close()?;
    print_found(value.as_deref())
}

/// What `get` prints: the value, escaped; or `not found` on stderr and exit
/// status 1.
pub fn print_found(value: Option<&[u8]>) -> CmdResult {
    match value {
        Some(v) => {
            let mut out = io::stdout().lock();
            writeln!(out, "{}", escape::encode(v))?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            eprintln!("not found");
            Ok(ExitCode::from(1))
        }
    }
}

/// `sievedb put`: sets KEY to VALUE (given, or read from `value_file`; `-`
/// = stdin) in `keyspace` (`None`: the default one), creating the database
/// if needed. A keyspace other than the default must exist (so must the
/// database, then).
pub fn put(dir: &Path, keyspace: Option<&str>, key: &Escaped, value: &PutValue) -> CmdResult {
    // The value is read before the database is touched, so a bad file
    // creates nothing.
    let value = value.read()?;
    let db = match keyspace {
        // Its keyspace must exist: a new database holds none but the default.
        Some(name) if name != DEFAULT_KEYSPACE => open_existing(dir)?,
        _ => open_or_create(dir)?,
    };
    let ks = existing_keyspace(&db, dir, keyspace)?;
    ks.put(&key.0, &value)?;
    drop(ks);
    db.close()?;
    Ok(ExitCode::SUCCESS)
}

/// `sievedb delete`: removes KEY from `keyspace` (`None`: the default one)
/// of an existing database.
pub fn delete(dir: &Path, keyspace: Option<&str>, key: &Escaped) -> CmdResult {
    let db = open_existing(dir)?;
    let ks = existing_keyspace(&db, dir, keyspace)?;
    ks.delete(&key.0)?;
    drop(ks);
    db.close()?;
    Ok(ExitCode::SUCCESS)
}

/// `sievedb scan`: prints `K V` lines for keys of `keyspace` (`None`: the
/// default one) in `[from, to)`, at most `limit` of them.
pub fn scan(
    dir: &Path,
    keyspace: Option<&str>,
    from: Option<&Escaped>,
    to: Option<&Escaped>,
    limit: Option<usize>,
) -> CmdResult {
    let db = open_existing_read_only(dir)?;
    let ks = existing_keyspace(&db, dir, keyspace)?;
    let mut out = BufWriter::new(io::stdout().lock());
    if let Some(range) = key_range(from, to) {
        let limit = limit.unwrap_or(usize::MAX);
        for item in ks.range(range)?.take(limit) {
            let (k, v) = item?;
            writeln!(out, "{} {}", escape::encode(&k), escape::encode(&v))?;
        }
    }
    out.flush()?;
    drop(out);
    drop(ks);
    db.close()?;
    Ok(ExitCode::SUCCESS)
}

/// The bounds of a key range, as `Db::range` and `Db::compact_range` take them.
type KeyBounds = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// `[from, to)` as bounds (unbounded where not given), or `None` when it
/// holds no key (`from >= to`).
fn key_range(from: Option<&Escaped>, to: Option<&Escaped>) -> Option<KeyBounds> {
    match (from, to) {
        (Some(l), Some(h)) if l.0 >= h.0 => None,
        _ => Some((
            from.map_or(Bound::Unbounded, |k| Bound::Included(k.0.clone())),
            to.map_or(Bound::Unbounded, |k| Bound::Excluded(k.0.clone())),
        )),
    }
}

/// `sievedb compact`: compacts the keys of `keyspace` (`None`: the default
/// one) in `[from, to)`, every key without bounds, down to its deepest
/// non-empty level (ldb's `compact`), and prints its files per level before
/// and after. A range that holds no key compacts nothing.
pub fn compact(
    dir: &Path,
    keyspace: Option<&str>,
    from: Option<&Escaped>,
    to: Option<&Escaped>,
) -> CmdResult {
    let db = open_existing(dir)?;
    let ks = existing_keyspace(&db, dir, keyspace)?;
    let before = ks.stats();
    if let Some(range) = key_range(from, to) {
        ks.compact_range(range)?;
    }
    let after = ks.stats();
    drop(ks);
    db.close()?;
    let mut out = io::stdout().lock();
    writeln!(out, "before: {}", level_shape(&before))?;
    writeln!(out, "after:  {}", level_shape(&after))?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The levels holding files (`L1 3 files 120034 bytes, ...`) and the bytes
/// in memtables, on one line.
fn level_shape(s: &Stats) -> String {
    let levels: Vec<String> = s
        .levels
        .iter()
        .filter(|l| l.files > 0)
        .map(|l| format!("L{} {} files {} bytes", l.level, l.files, l.bytes))
        .collect();
    let files = if levels.is_empty() {
        "no files".to_string()
    } else {
        levels.join(", ")
    };
    format!("{files}; memtables {} bytes", s.memtable_bytes)
}

/// `sievedb stats`: a per-level table and the counters, or one JSON line.
/// Without `keyspace`, the levels are every keyspace's together, and a table
/// (JSON: `keyspaces`) gives each keyspace's files and bytes; with it, the
/// levels are that keyspace's (JSON: `keyspace` names it). The counters are
/// the database's either way.
pub fn stats(dir: &Path, keyspace: Option<&str>, json: bool) -> CmdResult {
    let db = open_existing_read_only(dir)?;
    let mut out = io::stdout().lock();
    if let Some(name) = keyspace {
        let ks = keyspace_for_stats(&db, dir, name)?;
        let stats = ks.stats();
        drop(ks);
        db.close()?;
        if json {
            let name = serde_json::Value::from(name);
            writeln!(out, "{}", json_with(&stats, "keyspace", &name)?)?;
        } else {
            writeln!(out, "keyspace {name}\n")?;
            out.write_all(format_stats(&stats).as_bytes())?;
            writeln!(out, "\n{PER_PROCESS_NOTE}")?;
        }
    } else {
        let stats = db.stats();
        let rows = keyspace_rows(&db, dir);
        db.close()?;
        if json {
            let list = serde_json::Value::Array(rows.iter().map(KeyspaceRow::to_json).collect());
            writeln!(out, "{}", json_with(&stats, "keyspaces", &list)?)?;
        } else {
            out.write_all(format_stats(&stats).as_bytes())?;
            writeln!(out)?;
            out.write_all(format_keyspaces(&rows).as_bytes())?;
            writeln!(out, "\n{PER_PROCESS_NOTE}")?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The JSON object of `stats` with `key: value` added last (the fields of
/// [`Stats`] keep their order, which a `serde_json::Value` would sort).
fn json_with(
    stats: &Stats,
    key: &str,
    value: &serde_json::Value,
) -> Result<String, Box<dyn Error>> {
    let json = serde_json::to_string(stats)?;
    let Some(body) = json.strip_suffix('}') else {
        return Err(Box::new(Message(format!(
            "stats are not a JSON object: {json}"
        ))));
    };
    let sep = if body.ends_with('{') { "" } else { "," };
    Ok(format!(
        "{body}{sep}{}:{value}}}",
        serde_json::Value::from(key)
    ))
}

/// What `sievedb stats` says under its counters: they are not persistent.
pub const PER_PROCESS_NOTE: &str = "note: the operation counters are per process: they \
    started at zero when this command opened the database (the levels and last_sequence \
    are the database's); the shell's `stats` shows a session's counts";

/// `sievedb checkpoint`: writes an openable copy of the database in `dir`
/// to the new (or empty) directory `out` (see [`Db::checkpoint`]).
pub fn checkpoint(dir: &Path, out: &Path) -> CmdResult {
    let db = open_existing(dir)?;
    db.checkpoint(out)?;
    db.close()?;
    println!(
        "checkpoint of {} written to {}",
        dir.display(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `sievedb repair`: rebuilds the MANIFEST of a closed database and prints
/// the report (a table, or one JSON line).
pub fn repair(dir: &Path, json: bool) -> CmdResult {
    let report = Db::repair(dir, Options::default()).map_err(|e| in_dir(dir, e))?;
    let mut out = io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string(&report)?)?;
    } else {
        out.write_all(format_repair(&report).as_bytes())?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The human-readable form of a [`RepairReport`].
pub fn format_repair(r: &RepairReport) -> String {
    let mut s = String::new();
    let files: Vec<String> = r
        .output_files
        .iter()
        .map(|n| format!("{n:06}.sst"))
        .collect();
    let rows: [(&str, String); 15] = [
        ("tables read", r.tables_read.to_string()),
        ("tables damaged", r.tables_damaged.to_string()),
        ("tables missing", r.tables_missing.len().to_string()),
        ("entries salvaged", r.entries_salvaged.to_string()),
        ("entries lost", r.entries_lost.to_string()),
        ("WALs read", r.wals_read.to_string()),
        ("WALs already flushed", r.wals_stale.to_string()),
        ("WALs damaged", r.wals_damaged.to_string()),
        ("WAL entries", r.wal_entries.to_string()),
        ("entries read", r.entries_read.to_string()),
        ("entries kept", r.entries_kept.to_string()),
        (
            "output",
            format!(
                "{} files, {} bytes, level {}",
                files.len(),
                r.output_bytes,
                r.level
            ),
        ),
        ("MANIFEST", format!("MANIFEST-{:06}", r.manifest_number)),
        ("last sequence", r.last_sequence.to_string()),
        ("manifests replaced", r.manifests_replaced.to_string()),
    ];
    for (k, v) in rows {
        s.push_str(&format!("{k:<22}{v}\n"));
    }
    for t in &r.damaged_tables {
        s.push_str(&format!("{:<22}{}\n", "damaged table", describe_loss(t)));
    }
    for t in &r.tables_missing {
        s.push_str(&format!("{:<22}{}\n", "missing table", describe_loss(t)));
    }
    for p in &r.lost_files {
        s.push_str(&format!("{:<22}{}\n", "moved to lost/", p.display()));
    }
    s
}

/// One line on a table repair could not read in full: which, what it held,
/// what was salvaged and lost, and why.
fn describe_loss(t: &LostTable) -> String {
    let keyspace = match t.keyspace.as_str() {
        "" => "unknown",
        k => k,
    };
    let level = t.level.map_or("unknown".to_string(), |l| l.to_string());
    let held = match t.entries {
        Some(n) => format!("{n} entries, {} salvaged, {} lost", t.salvaged, t.lost),
        None => format!("entries unknown, {} salvaged", t.salvaged),
    };
    let keys = if t.smallest.is_empty() && t.largest.is_empty() {
        String::new()
    } else {
        format!(
            "; keys {} .. {}",
            escape::encode(&t.smallest),
            escape::encode(&t.largest)
        )
    };
    let blocks = match (t.method, t.blocks_lost) {
        (SalvageMethod::Nothing, _) => String::new(),
        (m, lost) => format!(
            "; {} data blocks read, {} lost, found {}",
            t.blocks_salvaged,
            lost.map_or("an unknown number".to_string(), |n| n.to_string()),
            match m {
                SalvageMethod::Index => "through its index",
                _ => "by a scan of the file",
            }
        ),
    };
    let range_dels = match t.range_dels_lost {
        0 => String::new(),
        n => format!("; {n} range tombstones lost"),
    };
    format!(
        "{:06}.sst (keyspace {keyspace}, level {level}): {held}{keys}{blocks}{range_dels} ({})",
        t.number, t.detail
    )
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
    let counters: [(&str, String); 23] = [
        ("gets", s.gets.to_string()),
        ("puts", s.puts.to_string()),
        ("deletes", s.deletes.to_string()),
        ("merges", s.merges.to_string()),
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
        ("table_meta_bytes", s.table_meta_bytes.to_string()),
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
    use crate::keyspaces::KeyspaceShape;

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

    #[test]
    fn keyspace_table_has_a_row_per_keyspace() {
        let rows = [
            KeyspaceRow {
                name: "default".into(),
                shape: Ok(KeyspaceShape {
                    files: 2,
                    bytes: 4096,
                    entries: 10,
                    memtable_bytes: 0,
                }),
            },
            KeyspaceRow {
                name: "sessions".into(),
                shape: Err("cannot open".into()),
            },
        ];
        let text = format_keyspaces(&rows);
        let lines: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(
            lines,
            [
                vec!["keyspace", "files", "bytes", "entries", "memtable_bytes"],
                vec!["default", "2", "4096", "10", "0"],
                vec!["sessions", "?", "?", "?", "?"],
                vec!["keyspace", "\"sessions\":", "cannot", "open"],
            ]
        );
        let json: Vec<String> = rows.iter().map(|r| r.to_json().to_string()).collect();
        assert_eq!(
            json,
            [
                r#"{"bytes":4096,"entries":10,"files":2,"memtable_bytes":0,"name":"default"}"#,
                r#"{"error":"cannot open","name":"sessions"}"#,
            ]
        );
    }

    #[test]
    fn keyspace_shape_sums_the_levels() {
        let mut s = Stats::default();
        for (level, files, bytes, entries) in [(0, 1, 100, 5), (1, 3, 900, 40)] {
            s.levels.push(sievedb::LevelStats {
                level,
                files,
                runs: 1,
                bytes,
                entries,
                ..Default::default()
            });
        }
        s.memtable_bytes = 7;
        assert_eq!(
            KeyspaceShape::of(&s),
            KeyspaceShape {
                files: 4,
                bytes: 1000,
                entries: 45,
                memtable_bytes: 7
            }
        );
    }

    #[test]
    fn json_with_adds_a_last_field() {
        let s = Stats::default();
        let plain: serde_json::Value = serde_json::to_value(&s).unwrap();
        let text = json_with(&s, "keyspace", &serde_json::json!("a\"b")).unwrap();
        assert!(text.ends_with(r#","keyspace":"a\"b"}"#), "{text}");
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["keyspace"], "a\"b");
        v.as_object_mut().unwrap().remove("keyspace");
        assert_eq!(v, plain);
        // The fields of Stats keep their order: `levels` first.
        assert!(text.starts_with(r#"{"levels":"#), "{text}");
    }
}
