//! The keyspace commands (`keyspaces`, `create-keyspace`, `drop-keyspace`),
//! the `--keyspace` lookups of the other commands and the keyspace table of
//! `stats`.

use std::error::Error;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use sievedb::{Db, Keyspace, KeyspaceOptions, Stats};

use crate::commands::{
    in_dir, open_existing, open_existing_read_only, open_or_create, CmdResult, Message,
};

/// The name of the keyspace `Db`'s own methods use.
pub const DEFAULT_KEYSPACE: &str = "default";

/// The error of a command given a keyspace `dir` does not hold, listing
/// those it does.
pub(crate) fn no_such_keyspace(dir: &Path, name: &str, names: &[String]) -> Message {
    Message(format!(
        "no keyspace named {name:?} in {} (its keyspaces: {}); \
         `sievedb create-keyspace --db {} {name}` creates one",
        dir.display(),
        names.join(", "),
        dir.display()
    ))
}

/// Keyspace `name` of `db` (`None`: the default keyspace). It must exist:
/// no command but `create-keyspace` creates one (as ldb's
/// `--column_family`), so a mistyped name is an error, not a new keyspace.
pub(crate) fn existing_keyspace(
    db: &Db,
    dir: &Path,
    name: Option<&str>,
) -> Result<Keyspace, Box<dyn Error>> {
    let Some(name) = name else {
        return Ok(db.default_keyspace());
    };
    let names = db.list_keyspaces();
    if !names.iter().any(|n| n == name) {
        return Err(Box::new(no_such_keyspace(dir, name, &names)));
    }
    Ok(db.keyspace(name).map_err(|e| in_dir(dir, e))?)
}

/// The TTL [`keyspace_for_stats`] opens a TTL keyspace with (any value does;
/// this one, about 136 years, overflows no time arithmetic).
const ANY_TTL: std::time::Duration = std::time::Duration::from_secs(u32::MAX as u64);

/// Keyspace `name` of `db`, opened for its statistics only. A keyspace
/// created with a TTL opens only with one, whose value the command line
/// does not know; the statistics do not depend on it, so such a keyspace is
/// opened with a TTL of any value ([`ANY_TTL`]). The handle must serve
/// nothing but [`Keyspace::stats`].
pub(crate) fn keyspace_for_stats(
    db: &Db,
    dir: &Path,
    name: &str,
) -> Result<Keyspace, Box<dyn Error>> {
    let names = db.list_keyspaces();
    if !names.iter().any(|n| n == name) {
        return Err(Box::new(no_such_keyspace(dir, name, &names)));
    }
    match db.keyspace(name) {
        Ok(ks) => Ok(ks),
        Err(first) if name != DEFAULT_KEYSPACE => db
            .keyspace_with(name, KeyspaceOptions::default().ttl(ANY_TTL))
            .map_err(|_| Box::new(in_dir(dir, first)) as Box<dyn Error>),
        Err(e) => Err(Box::new(in_dir(dir, e))),
    }
}

/// One keyspace's line in `sievedb stats`: its name and what its levels
/// and memtable hold, or why it could not be opened.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyspaceRow {
    pub name: String,
    pub shape: Result<KeyspaceShape, String>,
}

/// The sums over a keyspace's levels, and its memtable bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyspaceShape {
    pub files: u64,
    pub bytes: u64,
    pub entries: u64,
    pub memtable_bytes: u64,
}

impl KeyspaceShape {
    pub fn of(s: &Stats) -> Self {
        let sum = |f: fn(&sievedb::LevelStats) -> u64| s.levels.iter().map(f).sum();
        KeyspaceShape {
            files: sum(|l| l.files as u64),
            bytes: sum(|l| l.bytes),
            entries: sum(|l| l.entries),
            memtable_bytes: s.memtable_bytes,
        }
    }
}

impl KeyspaceRow {
    pub(crate) fn to_json(&self) -> serde_json::Value {
        match &self.shape {
            Ok(s) => serde_json::json!({
                "name": self.name,
                "files": s.files,
                "bytes": s.bytes,
                "entries": s.entries,
                "memtable_bytes": s.memtable_bytes,
            }),
            Err(e) => serde_json::json!({ "name": self.name, "error": e }),
        }
    }
}

/// Every keyspace of `db` with its shape, sorted by name.
pub(crate) fn keyspace_rows(db: &Db, dir: &Path) -> Vec<KeyspaceRow> {
    db.list_keyspaces()
        .into_iter()
        .map(|name| {
            let shape = keyspace_for_stats(db, dir, &name)
                .map(|ks| KeyspaceShape::of(&ks.stats()))
                .map_err(|e| e.to_string());
            KeyspaceRow { name, shape }
        })
        .collect()
}

/// The table of [`KeyspaceRow`]s `sievedb stats` prints under its counters;
/// a keyspace that could not be opened shows `?` and the reason below.
pub fn format_keyspaces(rows: &[KeyspaceRow]) -> String {
    let header = ["keyspace", "files", "bytes", "entries", "memtable_bytes"];
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| match &r.shape {
            Ok(s) => [
                r.name.clone(),
                s.files.to_string(),
                s.bytes.to_string(),
                s.entries.to_string(),
                s.memtable_bytes.to_string(),
            ],
            Err(_) => [
                r.name.clone(),
                "?".into(),
                "?".into(),
                "?".into(),
                "?".into(),
            ],
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].len())
                .chain(std::iter::once(header[i].len()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut t = String::new();
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header[..]).chain(cells.iter().map(|c| &c[..])) {
        let mut l = format!("{:<w$}", row[0], w = widths[0]);
        for (c, w) in row.iter().zip(&widths).skip(1) {
            l.push_str(&format!("  {c:>w$}"));
        }
        t.push_str(l.trim_end());
        t.push('\n');
    }
    for r in rows {
        if let Err(e) = &r.shape {
            t.push_str(&format!("keyspace {:?}: {e}\n", r.name));
        }
    }
    t
}

/// `sievedb keyspaces`: the names of the keyspaces, one per line (or one
/// JSON array), sorted; `default` is among them.
pub fn keyspaces(dir: &Path, json: bool) -> CmdResult {
    let db = open_existing_read_only(dir)?;
    let names = db.list_keyspaces();
    db.close()?;
    let mut out = io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string(&names)?)?;
    } else {
        for n in &names {
            writeln!(out, "{n}")?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `sievedb create-keyspace`: creates keyspace `name` with the database's
/// options, creating the database if `dir` is missing or empty; an existing
/// keyspace is an error (as ldb's `create_column_family`).
pub fn create_keyspace(dir: &Path, name: &str) -> CmdResult {
    let db = open_or_create(dir)?;
    if db.list_keyspaces().iter().any(|n| n == name) {
        return Err(Box::new(Message(format!(
            "keyspace {name:?} already exists in {}",
            dir.display()
        ))));
    }
    drop(db.keyspace(name).map_err(|e| in_dir(dir, e))?);
    db.close()?;
    Ok(ExitCode::SUCCESS)
}

/// `sievedb drop-keyspace`: drops keyspace `name` and its data (as ldb's
/// `drop_column_family`); the default keyspace cannot be dropped.
pub fn drop_keyspace(dir: &Path, name: &str) -> CmdResult {
    let db = open_existing(dir)?;
    let names = db.list_keyspaces();
    if !names.iter().any(|n| n == name) {
        return Err(Box::new(no_such_keyspace(dir, name, &names)));
    }
    db.drop_keyspace(name).map_err(|e| in_dir(dir, e))?;
    db.close()?;
    Ok(ExitCode::SUCCESS)
}
