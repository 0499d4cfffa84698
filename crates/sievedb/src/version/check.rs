//! The check an open makes of the live files right after the MANIFEST is
//! recovered ([`VersionSet::check_live_files`]): every SST the live version
//! of any keyspace names must be in the directory with the size the MANIFEST
//! recorded for it (the format's invariant, `docs/format.md`, "Live files at
//! open"). Without it, a deleted or cut table would open and fail only the
//! reads that touch it, and a compaction taking it as input would stop
//! writes; the open is the moment to say so, and to point to repair.

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::io::filename;

use super::{FileMeta, VersionSet};

/// One live file that failed the check.
struct Bad<'a> {
    /// The keyspace's name.
    keyspace: &'a str,
    level: usize,
    file: &'a FileMeta,
    /// Its size on disk (`None`: missing).
    actual: Option<u64>,
}

impl VersionSet {
    /// Checks that every live SST of every keyspace exists (`names` is the
    /// directory listing the open took) and, when `check_sizes`, that its
    /// size is the one the MANIFEST recorded (one `file_size` per live
    /// file). The failing file of the lowest number is the error's
    /// [`Error::Corruption`] file; the message says what is wrong with it
    /// (missing, or its expected and actual sizes), its keyspace and level,
    /// how many other live files failed too, and what to do: repair the
    /// database, or (a size only) skip the size check to read what is left.
    pub fn check_live_files(&self, names: &[String], check_sizes: bool) -> Result<()> {
        let listed: HashSet<&str> = names.iter().map(String::as_str).collect();
        let mut bad: Vec<Bad<'_>> = Vec::new();
        for (&id, v) in self.versions() {
            let keyspace = match self.keyspaces().get(&id) {
                Some(k) => k.name.as_str(),
                None => crate::keyspace::DEFAULT,
            };
            for (level, f) in v.files() {
                let path = filename::sst(&self.dir, f.number);
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                let actual = if !listed.contains(name) {
                    None
                } else if !check_sizes {
                    continue;
                } else {
                    match self.fs.file_size(&path) {
                        Ok(size) if size == f.size => continue,
                        Ok(size) => Some(size),
                        // Deleted since the listing.
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                        Err(e) => return Err(Error::Io(e)),
                    }
                };
                bad.push(Bad {
                    keyspace,
                    level,
                    file: f,
                    actual,
                });
            }
        }
        // The lowest file number first, whatever its keyspace and level.
        bad.sort_by_key(|b| b.file.number);
        let Some(first) = bad.first() else {
            return Ok(());
        };
        let what = match first.actual {
            None => "is missing".to_string(),
            Some(actual) => format!(
                "is {actual} bytes but the MANIFEST records {} ({})",
                first.file.size,
                if actual < first.file.size {
                    "cut short"
                } else {
                    "longer"
                }
            ),
        };
        let others = match bad.len() - 1 {
            0 => String::new(),
            n => {
                let missing = bad[1..].iter().filter(|b| b.actual.is_none()).count();
                format!(
                    "; {n} more live SST(s) failed the check too ({missing} missing, {} of \
                     the wrong size)",
                    n - missing
                )
            }
        };
        let remedy = if bad.iter().any(|b| b.actual.is_none()) {
            "Db::repair (CLI: sievedb repair --db DIR) rebuilds the database from the files \
             that are there, and reports what was lost"
        } else {
            "Db::repair (CLI: sievedb repair --db DIR) rebuilds the database from the files \
             that are there, and reports what was lost; \
             Options::skip_checking_sst_file_sizes_on_db_open opens it as it is (reads that \
             touch the file then fail)"
        };
        Err(Error::corruption(
            filename::sst(&self.dir, first.file.number),
            format!(
                "live SST {} (keyspace {:?}, level {}, {} entries) {what}{others}. {remedy}",
                first.file.number, first.keyspace, first.level, first.file.entries
            ),
        ))
    }
}
